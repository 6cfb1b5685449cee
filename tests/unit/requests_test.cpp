// Request parsing and validation, without a database.
#include "api/shared/requests.hpp"

#include <gtest/gtest.h>

namespace queen::api {
namespace {

using nlohmann::json;

const limits lim{.max_payload_depth = 64};  // a test value; the broker reads the database's

int status_of_failure(const std::function<void()>& f) {
    try {
        f();
    } catch (const api_error& e) {
        return static_cast<int>(status_of(e.code()));
    }
    return 0;
}

TEST(JsonBody, MalformedJsonIs400) {
    EXPECT_EQ(status_of_failure([] { parse_json_body("{bad", lim); }), 400);
    EXPECT_EQ(status_of_failure([] { parse_json_body("", lim); }), 400);
    // Found by push_body_fuzz: an overflowing number is a 400, not an internal error.
    EXPECT_EQ(status_of_failure([] { parse_json_body(R"({"items":[{"queue":"q","payload":99999.99999e999}]})", lim); }), 400);
    EXPECT_EQ(parse_json_body(R"({"a":1})", lim).value["a"], 1);
}

TEST(AckParsing, SingleAndBatch) {
    auto a = parse_ack(json::parse(R"({"transactionId":"t","partitionId":"5","status":"success","consumerGroup":null,
        "error":null,"leaseId":null})"), lim);
    EXPECT_EQ(a.status, ack_status::completed);
    EXPECT_EQ(a.consumer_group, queue_mode_group);
    EXPECT_FALSE(a.error);
    auto id_only = parse_ack(json::parse(R"({"id":"t2","partitionId":"5","status":"failed","error":"x"})"), lim);
    EXPECT_EQ(id_only.transaction_id, "t2");
    EXPECT_EQ(id_only.status, ack_status::failed);
    EXPECT_EQ(*id_only.error, "x");
    auto batch = parse_ack_batch(json::parse(R"({"consumerGroup":"g","acknowledgments":[
        {"transactionId":"a","partitionId":"1"},{"transactionId":"b","partitionId":"1","status":"dlq","offset":3}]})"), lim);
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].consumer_group, "g");
    EXPECT_EQ(batch[1].status, ack_status::dlq);
    EXPECT_EQ(*batch[1].offset, 3);
}

TEST(AckParsing, RejectsWhatIsReallyWrong) {
    const char* bad[] = {R"({"partitionId":"1"})", R"({"transactionId":"t"})", R"({"transactionId":"t","partitionId":"1","status":"done"})",
                         R"({"transactionId":"t","partitionId":"1","offset":-1})", R"({"transactionId":1,"partitionId":"1"})"};
    for (const char* b : bad) EXPECT_EQ(status_of_failure([&] { parse_ack(json::parse(b), lim); }), 400) << b;
    EXPECT_EQ(status_of_failure([] { parse_ack_batch(json::parse(R"({"acknowledgments":5})"), lim); }), 400);
    EXPECT_EQ(status_of_failure([] { parse_ack_batch(json::parse(R"({})"), lim); }), 400);
}

TEST(PopParsing, DefaultsTolerancesAndLimits) {
    auto p = parse_pop("q", std::nullopt, {}, lim);
    EXPECT_EQ(p.batch, 1);
    EXPECT_EQ(p.timeout_ms, 30000);
    EXPECT_FALSE(p.wait);
    EXPECT_TRUE(p.subscribe_all);
    EXPECT_EQ(p.consumer_group, queue_mode_group);
    auto g = parse_pop("q", std::string("p"), {{"consumerGroup", "g"}, {"subscriptionMode", "from_beginning"}, {"wait", "1"}}, lim);
    EXPECT_TRUE(g.subscribe_all);
    EXPECT_TRUE(g.wait);
    auto n = parse_pop("q", std::nullopt, {{"consumerGroup", "g"}, {"subscriptionMode", "new-only"}}, lim);
    EXPECT_FALSE(n.subscribe_all);
    EXPECT_FALSE(n.subscription_at);
    auto t = parse_pop("q", std::nullopt, {{"consumerGroup", "g"}, {"subscriptionMode", "all"},
                                           {"subscriptionFrom", "2026-01-02T03:04:05.5Z"}}, lim);
    EXPECT_FALSE(t.subscribe_all) << "subscriptionFrom wins over subscriptionMode";
    EXPECT_EQ(*t.subscription_at, 1767323045500000);
    auto qm = parse_pop("q", std::nullopt, {{"subscriptionMode", "new"}}, lim);
    EXPECT_TRUE(qm.subscribe_all) << "queue mode ignores subscription parameters";
    for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"batch", "-1"}, {"batch", "0"}, {"batch", "x"}, {"batch", "10001"}, {"partitions", "0"}, {"timeout", "-5"}})
        EXPECT_EQ(status_of_failure([&] { parse_pop("q", std::nullopt, {{k, v}}, lim); }), 400) << k << "=" << v;
    EXPECT_EQ(status_of_failure([] { parse_pop("q", std::nullopt, {{"consumerGroup", "g"}, {"subscriptionFrom", "yesterday"}}, lim); }), 400);
}

TEST(PopParsing, TheBrokersDefaultSubscriptionModeAppliesOnlyWhenThePopNamesNone) {
    const bool from_now = false;
    EXPECT_FALSE(parse_pop("q", std::nullopt, {{"consumerGroup", "g"}}, lim, from_now).subscribe_all);
    EXPECT_FALSE(parse_pop("q", std::nullopt, {{"consumerGroup", "g"}, {"subscriptionMode", ""}}, lim, from_now).subscribe_all);
    EXPECT_TRUE(parse_pop("q", std::nullopt, {{"consumerGroup", "g"}, {"subscriptionMode", "all"}}, lim, from_now).subscribe_all);
    EXPECT_TRUE(parse_pop("q", std::nullopt, {{"consumerGroup", "g"}, {"subscriptionMode", "from_beginning"}}, lim, from_now)
                    .subscribe_all)
        << "an unknown mode named in the pop means all";
    EXPECT_TRUE(parse_pop("q", std::nullopt, {}, lim, from_now).subscribe_all) << "queue mode has no subscription";
    EXPECT_TRUE(parse_pop("q", std::nullopt, {{"consumerGroup", "g"}}, lim, true).subscribe_all);
}

TEST(ConfigureParsing, TypesRangesAndTolerances) {
    auto r = parse_configure(json::parse(R"({"queue":"","namespace":null,"task":null,"options":{"leaseTime":10,
        "retentionEnabled":true,"retryLimit":null,"unknownOption":"ignored"}})"), lim);
    EXPECT_EQ(r.queue, "");
    EXPECT_EQ(r.options["leaseTime"], 10);
    EXPECT_EQ(r.options["retentionEnabled"], true);
    EXPECT_FALSE(r.options.contains("retryLimit"));
    EXPECT_FALSE(r.options.contains("unknownOption"));
    const char* bad[] = {R"({})", R"({"queue":5})", R"({"queue":"q","options":[]})",
                         R"({"queue":"q","options":{"leaseTime":"x"}})", R"({"queue":"q","options":{"leaseTime":0}})",
                         R"({"queue":"q","options":{"retryLimit":-1}})", R"({"queue":"q","options":{"retentionEnabled":1}})",
                         R"({"queue":"q","options":{"leaseTime":1.5}})"};
    for (const char* b : bad) EXPECT_EQ(status_of_failure([&] { parse_configure(json::parse(b), lim); }), 400) << b;
}

TEST(QueryBool, OnlyTrueAndOne) {
    EXPECT_TRUE(query_bool("true"));
    EXPECT_TRUE(query_bool("1"));
    EXPECT_FALSE(query_bool("TRUE"));
    EXPECT_FALSE(query_bool("yes"));
    EXPECT_FALSE(query_bool(""));
}

}  // namespace
}  // namespace queen::api
