// Encryption at rest for queues with encryptionEnabled: invisible to HTTP clients, no
// plaintext in the stored bytes, shown as encrypted (not garbage) by SQL introspection.
#include "test_env.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;

const std::string key(64, '7');
const std::string marker = "plaintext-marker-8c1f";

std::string body_contains_marker(const std::string& queue) {
    return data_value(
        "SELECT bool_or(position(convert_to('" + marker + "', 'UTF8') in s.body) > 0) FROM queen.log_segments s "
        "JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id "
        "WHERE q.name = '" + queue + "'");
}

TEST(Encryption, EncryptedQueueStoresNoPlaintextAndDeliversTheOriginal) {
    broker_process b(cluster().conninfo(), {{"QUEEN_ENCRYPTION_KEY", key}});
    auto c = client_of(b);
    auto secret = unique_name("secret"), plain = unique_name("plain");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", secret}, {"options", {{"encryptionEnabled", true}}}}).status, 200);
    const json payload{{"note", marker}, {"n", 42}};
    push_payloads(c, secret, "", {payload});
    push_payloads(c, plain, "", {payload});
    EXPECT_EQ(body_contains_marker(secret), "f") << "no plaintext in the stored segment";
    EXPECT_EQ(body_contains_marker(plain), "t") << "the check itself can see plaintext";
    // SQL introspection shows the payload as an encrypted object, not as garbage.
    EXPECT_EQ(data_value("SELECT payload ? '$queenEncrypted' FROM queen.messages WHERE queue = '" + secret + "'"), "t");
    // HTTP clients never see it.
    auto m = pop(c, secret).json()["messages"][0];
    EXPECT_EQ(m["data"], payload);
    // Dead letters keep it encrypted at rest and show it decrypted.
    auto a = c.post("/api/v1/ack", json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                        {"status", "dlq"}, {"error", "boom"}});
    ASSERT_EQ(a.json()["success"], true) << a.body;
    EXPECT_EQ(data_value("SELECT position('" + marker + "' in payload) FROM queen.dead_letters d JOIN queen.queues q "
                         "ON q.id = d.queue_id WHERE q.name = '" + secret + "'"),
              "0");
    auto dlq = c.get("/api/v1/dlq?queue=" + secret).json();
    ASSERT_EQ(dlq["messages"].size(), 1u);
    EXPECT_EQ(dlq["messages"][0]["data"], payload);
}

TEST(Encryption, TransactionsAndOtherBrokersWithTheKeyDecrypt) {
    broker_process a(cluster().conninfo(), {{"QUEEN_ENCRYPTION_KEY", key}});
    broker_process b(cluster().conninfo(), {{"QUEEN_ENCRYPTION_KEY", key}});
    auto ca = client_of(a), cb = client_of(b);
    auto q = unique_name("secret-tx");
    ASSERT_EQ(ca.post("/api/v1/configure", json{{"queue", q}, {"options", {{"encryptionEnabled", true}}}}).status, 200);
    json tx{{"operations", json::array({{{"type", "push"}, {"items", {{{"queue", q}, {"payload", marker}}}}}})}};
    ASSERT_EQ(ca.post("/api/v1/transaction", tx).json()["success"], true);
    EXPECT_EQ(body_contains_marker(q), "f");
    EXPECT_EQ(pop(cb, q).json()["messages"][0]["data"], marker);
}

TEST(Encryption, WithoutAKeyPushesToAnEncryptedQueueAreRefusedAndNothingIsStored) {
    auto c = client();  // the default broker has no key
    auto q = unique_name("secret-nokey");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"encryptionEnabled", true}}}}).status, 200);
    auto r = c.post("/api/v1/push", json{{"items", {{{"queue", q}, {"payload", marker}}}}});
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.json()["error"].get<std::string>().find("QUEEN_ENCRYPTION_KEY"), std::string::npos) << r.body;
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.messages WHERE queue = '" + q + "'"), 0);
}

TEST(Encryption, AMalformedKeyStopsTheBrokerAtStart) {
    try {
        broker_process b(cluster().conninfo(), {{"QUEEN_ENCRYPTION_KEY", "not-hex"}});
        FAIL() << "started with a malformed key";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("QUEEN_ENCRYPTION_KEY must be 64 hexadecimal"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace queen::test
