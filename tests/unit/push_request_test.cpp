// The push and transaction body parsers: envelope rules, and payloads kept as the bytes sent.
#include "api/shared/push_request.hpp"
#include "api/shared/transaction_request.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace queen::api {
namespace {

const limits lim{.max_payload_depth = 64};  // a test value; the broker reads the database's

// The status and text of what f throws (0 and "" when it returns).
std::pair<int, std::string> failure_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        return {static_cast<int>(status_of(e.code())), e.what()};
    }
    return {0, ""};
}

TEST(PushParsing, DefaultsAndGeneratedTransactionIds) {
    auto items = parse_push(R"({"items":[{"queue":"q","payload":{"a":[1,2]}},
        {"queue":"q","partition":null,"transactionId":null,"traceId":null,"payload":null}]})", lim).items;
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].partition, "Default");
    EXPECT_EQ(items[0].payload, R"({"a":[1,2]})");
    EXPECT_EQ(items[1].payload, "null");
    EXPECT_EQ(items[0].transaction_id.size(), 36u);
    EXPECT_NE(items[0].transaction_id, items[1].transaction_id);
    EXPECT_EQ(items[0].transaction_id[14], '7') << "a UUIDv7";
    EXPECT_FALSE(items[1].trace_id.has_value());
}

TEST(PushParsing, MissingPayloadIsNull) {
    auto items = parse_push(R"({"items":[{"queue":"q"}]})", lim).items;
    EXPECT_EQ(items[0].payload, "null");
}

TEST(PushParsing, PayloadsAreTheBytesSent) {
    const std::string payloads[] = {
        R"({"id": 9007199254740993, "x": 1.10})",
        R"([ 1 , 2.50e+3 , -0 , 1E-400 , 123456789012345678901234567890 ])",
        R"("caf\u00e9 \ud83d\ude00 \"quoted\" caf)" "\xC3\xA9" R"(")",
        "{\n  \"pretty\": [\n    true,\n    null\n  ]\n}",
        R"({"dup":1,"dup":2})",
        "1.0",
        "false",
    };
    for (const auto& p : payloads) {
        auto items = parse_push("{\"items\" : [ {\"payload\" :  " + p + " \n, \"queue\":\"q\"} ] }", lim).items;
        ASSERT_EQ(items.size(), 1u);
        EXPECT_EQ(items[0].payload, p);
    }
}

TEST(PushParsing, KeysAreReadUnescapedAndTheLastDuplicateCounts) {
    auto items = parse_push(
        R"({"items":[1],"it\u0065ms":[{"queue":"a","qu\u0065ue":"b","partition":"p","partition":null,"payload":1,"payload":[2]}]})",
        lim).items;
    ASSERT_EQ(items.size(), 1u);
    EXPECT_EQ(items[0].queue, "b");
    EXPECT_EQ(items[0].partition, "Default");
    EXPECT_EQ(items[0].payload, "[2]");
    // Unknown keys are ignored, whatever they hold.
    items = parse_push(R"({"x":{"items":5},"items":[{"queue":"q","other":[{"payload":1}]}],"y":1e300})", lim).items;
    EXPECT_EQ(items.at(0).payload, "null");
}

TEST(PushParsing, RejectsWhatIsReallyWrong) {
    const std::pair<const char*, const char*> bad[] = {
        {R"([])", "request body must be a JSON object with an items array"},
        {R"({})", "items is required and must be an array"},
        {R"({"items":null})", "items is required and must be an array"},
        {R"({"items":{}})", "items must be an array, got object"},
        {R"({"items":"x"})", "items must be an array, got string"},
        {R"({"items":[1]})", "items[0] must be an object"},
        {R"({"items":[{}]})", "items[0].queue is required"},
        {R"({"items":[{"queue":1}]})", "items[0].queue must be a string"},
        {R"({"items":[{"queue":""}]})", "items[0].queue must not be empty"},
        {R"({"items":[{"queue":"q","partition":""}]})", "items[0].partition must not be empty"},
        {R"({"items":[{"queue":"q","partition":7}]})", "items[0].partition must be a string"},
        {R"({"items":[{"queue":"q","transactionId":5}]})", "items[0].transactionId must be a string"},
        {R"({"items":[{"queue":"q","transactionId":""}]})", "items[0].transactionId must not be empty"},
        {R"({"items":[{"queue":"q"},{"queue":"q","traceId":"nope"}]})", "items[1].traceId must be a UUID"},
        {R"({"items":[{"queue":"q","traceId":12}]})", "items[0].traceId must be a string"},
        {R"({"items":[{"queue":"q","payload":[1,]}]})", "malformed JSON at byte 37"},
        {R"({"items":[{"queue":"q","payload":01}]})", "malformed JSON at byte 35"},
        {R"({"items":[{"queue":"q"}]} x)", "malformed JSON at byte 27"},
        {"", "request body is empty; a JSON object is required"},
    };
    for (const auto& [body, why] : bad) EXPECT_EQ(failure_of([&] { parse_push(body, lim); }), std::make_pair(400, std::string(why))) << body;
    const std::string long_name(256, 'x');
    EXPECT_EQ(failure_of([&] { parse_push(R"({"items":[{"queue":")" + long_name + "\"}]}", lim); }).first, 400);
    limits small{2, 10, 255, 64};
    EXPECT_EQ(failure_of([&] { parse_push(R"({"items":[{"queue":"a"},{"queue":"a"},{"queue":"a"}]})", small); }),
              std::make_pair(413, std::string("a push may carry at most 2 items, got 3")));
}

TEST(PushParsing, AByteOrderMarkIsSkippedAsBefore) {
    auto items = parse_push("\xEF\xBB\xBF{\"items\":[{\"queue\":\"q\",\"payload\":{}}]}", lim).items;
    EXPECT_EQ(items.at(0).payload, "{}");
}

TEST(TransactionParsing, PushPayloadsAreTheBytesSentAndAcksAreRead) {
    auto tx = parse_transaction(R"({"requiredLeases":["0190e7a4-0000-7000-8000-000000000001"],"operations":[
        {"items":[{"queue":"q","payload":{"id": 9007199254740993, "x": 1.10}}],"type":"push"},
        {"type":"ack","transactionId":"t","partitionId":"5","status":"failed","error":"e"}]})",
                                lim);
    ASSERT_EQ(tx.operations.size(), 2u);
    ASSERT_EQ(tx.operations[0].type, transaction_op::kind::push);
    EXPECT_EQ(tx.operations[0].items.at(0).payload, R"({"id": 9007199254740993, "x": 1.10})");
    ASSERT_EQ(tx.operations[1].type, transaction_op::kind::ack);
    EXPECT_EQ(tx.operations[1].ack.transaction_id, "t");
    EXPECT_EQ(tx.operations[1].ack.status, ack_status::failed);
    EXPECT_EQ(tx.required_leases, std::vector<std::string>{"0190e7a4-0000-7000-8000-000000000001"});
}

TEST(TransactionParsing, ErrorsNameTheOperation) {
    const std::pair<const char*, const char*> bad[] = {
        {R"([])", "request body must be a JSON object with an operations array"},
        {R"({"operations":[]})", "operations must be a non-empty array"},
        {R"({"operations":{}})", "operations must be a non-empty array"},
        {R"({"operations":[1]})", "operations[0] must be an object"},
        {R"({"operations":[{"type":"pull"}]})", "operations[0].type must be \"push\" or \"ack\""},
        {R"({"operations":[{"type":"push"}]})", "operations[0].items is required and must be an array"},
        {R"({"operations":[{"type":"push","items":[{"queue":"q"}]},{"type":"push","items":[{"queue":7}]}]})",
         "operations[1].items[0].queue must be a string"},
        {R"({"operations":[{"type":"ack","partitionId":"1"}]})", "operations[0].transactionId is required"},
        {R"({"operations":[{"type":"ack","transactionId":"t","partitionId":"1"}],"requiredLeases":["x"]})",
         "requiredLeases[0] must be a lease id (UUID)"},
    };
    for (const auto& [body, why] : bad)
        EXPECT_EQ(failure_of([&] { parse_transaction(body, lim); }), std::make_pair(400, std::string(why))) << body;
}

}  // namespace
}  // namespace queen::api
