// POST /api/v1/lease/:leaseId/extend through the real broker (docs/http-api.md; docs/consumer-groups.md):
// an extended lease outlives its leaseTime (no redelivery, the ack still succeeds), the body's
// defaults and tolerance, 400 for a bad `seconds` with nothing changed, a lease is never
// shortened, every partition of a multi-partition pop is extended, and the failure answers
// "Lease not found" / "Lease already expired".
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

bool is_iso_us(const json& v) {
    static const std::regex re(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$)");
    return v.is_string() && std::regex_match(v.get<std::string>(), re);
}

class LeaseExtend : public ::testing::Test {
protected:
    void configure(int lease_time) {
        queue = unique_name("lease");
        auto r = c.post("/api/v1/configure", json{{"queue", queue}, {"options", {{"leaseTime", lease_time}}}});
        ASSERT_EQ(r.status, 200) << r.body;
    }
    // Pops up to `batch` messages (queue mode unless a group is given) and returns the body.
    json pop_body(const std::string& query = "batch=10") {
        auto r = pop(c, queue, query);
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? r.json() : json::object();
    }
    http_reply extend(const std::string& lease, const std::string& body) {
        return c.request("POST", "/api/v1/lease/" + url_encode(lease) + "/extend", body,
                         {{"Content-Type", "application/json"}});
    }
    // The lease's expiry as the API prints it ("" when no cursor carries the id).
    std::string expiry_of(const std::string& lease) {
        return data_value("SELECT to_char(min(lease_expires_at) AT TIME ZONE 'UTC', "
                          "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM queen.log_consumers WHERE lease_id = " +
                          quote(lease) + "::uuid");
    }
    // Whether some cursor carries the lease and every one expires later than now + seconds.
    bool expires_after(const std::string& lease, int seconds) {
        const std::string held = "FROM queen.log_consumers WHERE lease_id = " + quote(lease) + "::uuid";
        return data_sum("SELECT count(*) " + held) > 0 &&
               data_sum("SELECT count(*) " + held + " AND lease_expires_at <= now() + interval '" +
                        std::to_string(seconds) + " seconds'") == 0;
    }

    http_client c = client();
    std::string queue;
};

TEST_F(LeaseExtend, ExtendedLeaseIsNotRedeliveredAfterItsLeaseTime) {
    configure(1);
    push_payloads(c, queue, "", {"m1", "m2"});
    json body = pop_body("batch=2");
    const std::string lease = body["leaseId"];
    ASSERT_FALSE(lease.empty());

    auto r = extend(lease, R"({"seconds":30})");
    ASSERT_EQ(r.status, 200) << r.body;
    json answer = r.json();
    ASSERT_TRUE(answer.is_array());
    ASSERT_EQ(answer.size(), 1u);
    EXPECT_EQ(answer[0]["leaseId"], lease);
    EXPECT_EQ(answer[0]["success"], true);
    EXPECT_TRUE(answer[0]["error"].is_null());
    EXPECT_TRUE(is_iso_us(answer[0]["expiresAt"])) << answer.dump();
    EXPECT_EQ(answer[0]["expiresAt"], expiry_of(lease));
    EXPECT_TRUE(expires_after(lease, 25));

    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(pop(c, queue, "batch=2").status, 204);  // the original lease time has passed
    json acks = json::array();
    for (const auto& m : body["messages"])
        acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                        {"leaseId", m["leaseId"]}, {"status", "completed"}});
    auto a = c.post("/api/v1/ack/batch", json{{"acknowledgments", acks}});
    ASSERT_EQ(a.status, 200) << a.body;
    for (const auto& x : a.json()) EXPECT_EQ(x["success"], true) << a.body;
    EXPECT_EQ(pop(c, queue, "batch=2").status, 204);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.dead_letters d JOIN queen.queues q ON q.id = d.queue_id "
                       "WHERE q.name = " + quote(queue)),
              0);
}

TEST_F(LeaseExtend, EmptyBodiesNullAndUnknownKeysMeanSixtySeconds) {
    configure(1);
    push_payloads(c, queue, "", {"m1"});
    const std::string lease = pop_body()["leaseId"];
    for (const std::string body : {"", "{}", "null", R"({"seconds":null})", R"({"other":true})", " \n"}) {
        data_run("UPDATE queen.log_consumers SET lease_expires_at = now() + interval '1 second' "
                 "WHERE lease_id = " + quote(lease) + "::uuid");
        auto r = extend(lease, body);
        ASSERT_EQ(r.status, 200) << "body '" << body << "': " << r.body;
        EXPECT_EQ(r.json()[0]["success"], true) << r.body;
        EXPECT_TRUE(expires_after(lease, 55)) << body;
        EXPECT_FALSE(expires_after(lease, 65)) << body;
    }
    // An integral float is an integer.
    auto r = extend(lease, R"({"seconds":120.0})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_TRUE(expires_after(lease, 110));
}

TEST_F(LeaseExtend, NeverShortensALease) {
    configure(5);
    push_payloads(c, queue, "", {"m1"});
    const std::string lease = pop_body()["leaseId"];
    auto first = extend(lease, R"({"seconds":300})");
    ASSERT_EQ(first.status, 200) << first.body;
    auto second = extend(lease, R"({"seconds":5})");
    ASSERT_EQ(second.status, 200) << second.body;
    EXPECT_EQ(second.json()[0]["success"], true);
    EXPECT_EQ(second.json()[0]["expiresAt"], first.json()[0]["expiresAt"]);
    EXPECT_TRUE(expires_after(lease, 250));
}

TEST_F(LeaseExtend, BadSecondsAre400AndChangeNothing) {
    configure(30);
    push_payloads(c, queue, "", {"m1"});
    const std::string lease = pop_body()["leaseId"];
    const std::string before = expiry_of(lease);
    for (const std::string body : {R"({"seconds":0})", R"({"seconds":-5})", R"({"seconds":"30"})",
                                   R"({"seconds":1.5})", R"({"seconds":true})", R"({"seconds":[30]})",
                                   R"({"seconds":1000000000000})", R"({"seconds":18446744073709551615})", "[1]",
                                   "\"x\"", "{bad json"}) {
        auto r = extend(lease, body);
        EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
        EXPECT_TRUE(r.json()["error"].is_string()) << r.body;
    }
    EXPECT_EQ(expiry_of(lease), before);
}

TEST_F(LeaseExtend, UnknownMalformedExpiredAndReleasedLeases) {
    configure(1);
    const std::string unknown = "0b6f4a6e-8a8e-4c39-9f3e-2f6c6a3b9d11";
    for (const std::string& id : {unknown, std::string("not-a-lease")}) {
        auto r = extend(id, "{}");
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.json(), json::parse(R"([{"leaseId":")" + id +
                                        R"(","success":false,"expiresAt":null,"error":"Lease not found"}])"));
    }

    push_payloads(c, queue, "", {"m1", "m2"});
    json first = pop_body("batch=1");
    const std::string lease = first["leaseId"];
    std::this_thread::sleep_for(1300ms);
    auto expired = extend(lease, "{}");
    ASSERT_EQ(expired.status, 200) << expired.body;
    EXPECT_EQ(expired.json(), json::parse(R"([{"leaseId":")" + lease +
                                          R"(","success":false,"expiresAt":null,"error":"Lease already expired"}])"));
    // Nothing was revived: the span is claimable again, and the next pop takes it over.
    json second = pop_body("batch=1");
    EXPECT_EQ(second["messages"][0]["data"], "m1");
    EXPECT_EQ(extend(lease, "{}").json()[0]["error"], "Lease not found");

    // A lease acked to its end is released: not found.
    const std::string lease2 = second["leaseId"];
    ack(c, second["messages"][0]);
    EXPECT_EQ(extend(lease2, "{}").json()[0]["error"], "Lease not found");
}

TEST_F(LeaseExtend, EveryPartitionOfAMultiPartitionGroupPopIsExtended) {
    configure(2);
    push_payloads(c, queue, "P1", {"a"});
    push_payloads(c, queue, "P2", {"b"});
    auto r = pop(c, queue, "batch=10&partitions=2&consumerGroup=lease-group");
    ASSERT_EQ(r.status, 200) << r.body;
    json body = r.json();
    ASSERT_EQ(body["partitionsClaimed"], 2);
    const std::string lease = body["leaseId"];
    auto e = extend(lease, R"({"seconds":120})");
    ASSERT_EQ(e.status, 200) << e.body;
    EXPECT_EQ(e.json()[0]["success"], true);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.log_consumers WHERE lease_id = " + quote(lease) +
                       "::uuid AND consumer_group = 'lease-group' AND lease_expires_at > now() + "
                       "interval '100 seconds'"),
              2);
    std::this_thread::sleep_for(2500ms);
    EXPECT_EQ(pop(c, queue, "batch=10&partitions=2&consumerGroup=lease-group").status, 204);
    // Queue mode never held that lease: it is unaffected.
    EXPECT_EQ(pop(c, queue, "batch=10&partitions=2").status, 200);
}

}  // namespace
}  // namespace queen::test
