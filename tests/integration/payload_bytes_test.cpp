// Payloads are kept as the bytes the client sent (docs/json-input.md): a push, a transaction
// and an encrypted queue give them back byte for byte from pops and the message lookup.
#include "test_env.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

// Bytes no JSON re-serializer keeps: an integer past 2^53 (a snowflake id), a trailing zero,
// white space, escapes, an integer past 64 bits and a number below the smallest double.
const std::vector<std::string> payloads = {
    R"({"id": 9007199254740993, "x": 1.10})",
    "[ 123456789012345678901234567890 , 1e-400 , -0 , 2.50E+3 ]",
    "{\n  \"caf\\u00e9\": \"\\ud83d\\ude00\",\n  \"dup\": 1, \"dup\": 2\n}",
    "\"text\"",
};

std::string push_body(const std::string& q) {
    std::string body = R"({"items": [)";
    for (std::size_t i = 0; i < payloads.size(); ++i)
        body += (i ? "," : "") + std::string(R"({"queue": ")") + q + R"(", "payload": )" + payloads[i] + " }";
    return body + "]}";
}

// The raw text of each message's "data" in a pop answer, in order.
std::vector<std::string> data_texts(const std::string& answer) {
    std::vector<std::string> out;
    for (std::size_t at = answer.find("\"data\":"); at != std::string::npos; at = answer.find("\"data\":", at + 1)) {
        const std::size_t from = at + 7;
        for (const auto& p : payloads)
            if (answer.compare(from, p.size(), p) == 0) out.push_back(p);
    }
    return out;
}

TEST(PayloadBytes, PushedPayloadsPopBackExactlyAsSent) {
    auto c = client();
    const auto q = unique_name("bytes");
    auto pushed = c.post("/api/v1/push", push_body(q));
    ASSERT_EQ(pushed.status, 201) << pushed.body;
    auto popped = pop(c, q, "batch=10");
    ASSERT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(data_texts(popped.body), payloads) << popped.body;
    // A client's parser reads the snowflake id exactly, not as the double 9007199254740992.
    EXPECT_EQ(popped.json()["messages"][0]["data"]["id"].get<std::uint64_t>(), 9007199254740993u);
    // The message lookup gives the same bytes.
    const json first = pushed.json()[0];
    auto looked_up = c.get("/api/v1/messages/" + first["partition_id"].get<std::string>() + "/" +
                           first["transaction_id"].get<std::string>());
    ASSERT_EQ(looked_up.status, 200) << looked_up.body;
    EXPECT_NE(looked_up.body.find(std::string("\"payload\":") + payloads[0]), std::string::npos) << looked_up.body;
    // SQL readers see the payload as jsonb: the value, not the bytes.
    EXPECT_EQ(cluster().run_sql("SELECT payload->>'id' FROM queen.messages WHERE queue = " + quote(q) +
                                " AND \"offset\" = 1"),
              "9007199254740993");
}

TEST(PayloadBytes, TransactionAndEncryptedPushesKeepTheBytesToo) {
    broker_process b(cluster().conninfo(), {{"QUEEN_ENCRYPTION_KEY", std::string(64, 'a')}});
    auto c = client_of(b);
    const auto q = unique_name("bytes-tx");
    const auto sealed = unique_name("bytes-sealed");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", sealed}, {"options", {{"encryptionEnabled", true}}}}).status,
              200);
    auto tx = c.post("/api/v1/transaction", R"({"operations": [{"type": "push", "items": [{"queue": ")" + q +
                                                R"(", "payload": )" + payloads[0] + "}]}]}");
    ASSERT_EQ(tx.status, 200) << tx.body;
    auto popped = pop(c, q, "batch=10");
    ASSERT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(data_texts(popped.body), std::vector<std::string>{payloads[0]}) << popped.body;
    ASSERT_EQ(c.post("/api/v1/push", push_body(sealed)).status, 201);
    popped = pop(c, sealed, "batch=10");
    ASSERT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(data_texts(popped.body), payloads) << popped.body;
}

}  // namespace
}  // namespace queen::test
