// Consumer-group administration through the real broker (docs/consumer-groups.md;
// docs/consumer-groups.md): listing and detail shapes, seek to the end / to a time stamp
// (backwards = replay) / one partition, delete with and without metadata, subscription
// rewrite — each checked by what the next pops deliver, and the refused calls (400, 404)
// checked to change nothing.
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
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

// The database's current time as the API prints it.
std::string db_now_iso() {
    return cluster().run_sql("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                             "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
}

// A time stamp strictly between two pushes.
std::string instant_between() {
    std::this_thread::sleep_for(20ms);
    std::string t = db_now_iso();
    std::this_thread::sleep_for(20ms);
    return t;
}

std::string group_query(const std::string& group, const std::string& extra = "") {
    std::string q = "batch=10&consumerGroup=" + url_encode(group);
    if (!extra.empty()) q += "&" + extra;
    return q;
}

// Acks every message of a pop body (completed), as existing clients do.
void ack_body(http_client& c, const json& body, const std::string& group) {
    json acks = json::array();
    for (const auto& m : body["messages"])
        acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                        {"leaseId", m["leaseId"]}, {"status", "completed"}, {"error", nullptr}});
    auto a = c.post("/api/v1/ack/batch", json{{"consumerGroup", group}, {"acknowledgments", acks}});
    if (a.status != 200) throw std::runtime_error("ack answered " + std::to_string(a.status) + " " + a.body);
    for (const auto& x : a.json())
        if (x["success"] != true) throw std::runtime_error("ack failed: " + x.dump());
}

// Pops and acks until a pop answers 204; the payloads in delivery order.
std::vector<std::string> drain(http_client& c, const std::string& queue, const std::string& group,
                               const std::string& extra = "") {
    std::vector<std::string> out;
    for (int guard = 0; guard < 100; ++guard) {
        auto r = pop(c, queue, group_query(group, extra));
        if (r.status == 204) return out;
        if (r.status != 200) throw std::runtime_error("pop answered " + std::to_string(r.status) + " " + r.body);
        json body = r.json();
        for (const auto& m : body["messages"]) out.push_back(m["data"].get<std::string>());
        ack_body(c, body, group);
    }
    throw std::runtime_error("drain did not finish");
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}
using names = std::vector<std::string>;

// The group's cursors on a queue: "partition=committed[/leased]" in partition-name order.
std::string cursors(const std::string& queue, const std::string& group) {
    auto rows = data_rows(
        "SELECT p.name || '=' || c.committed || CASE WHEN c.lease_id IS NOT NULL THEN '/leased' "
        "ELSE '' END || CASE WHEN c.attempts > 0 THEN '/attempts' ELSE '' END || CASE WHEN c.retry_at IS NOT NULL "
        "THEN '/retry' ELSE '' END FROM queen.log_consumers c JOIN queen.log_partitions p "
        "ON p.id = c.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " +
        quote(queue) + " AND c.consumer_group = " + quote(group));
    std::sort(rows.begin(), rows.end());  // partition names here are plain ASCII: byte order is name order
    std::string out;
    for (const auto& row : rows) out += (out.empty() ? "" : ",") + row;
    return out;
}

std::string subscription_of(const std::string& queue, const std::string& group) {
    return data_value("SELECT coalesce(to_char(subscription_at AT TIME ZONE 'UTC', "
                             "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), 'beginning') FROM queen.consumer_groups "
                             "WHERE queue_name = " + quote(queue) + " AND consumer_group = " + quote(group));
}

class ConsumerGroups : public ::testing::Test {
protected:
    http_reply seek(const std::string& group, const std::string& queue, const std::string& body) {
        return c.request("POST", "/api/v1/consumer-groups/" + url_encode(group) + "/queues/" + url_encode(queue) +
                                     "/seek", body, {{"Content-Type", "application/json"}});
    }
    http_reply seek_partition(const std::string& group, const std::string& queue, const std::string& partition) {
        return c.post("/api/v1/consumer-groups/" + url_encode(group) + "/queues/" + url_encode(queue) +
                          "/partitions/" + url_encode(partition) + "/seek",
                      std::string());
    }
    http_reply del(const std::string& group, const std::string& queue = "", const std::string& query = "") {
        std::string target = "/api/v1/consumer-groups/" + url_encode(group);
        if (!queue.empty()) target += "/queues/" + url_encode(queue);
        if (!query.empty()) target += "?" + query;
        return c.del(target);
    }
    http_reply subscription(const std::string& group, const std::string& body) {
        return c.request("POST", "/api/v1/consumer-groups/" + url_encode(group) + "/subscription", body,
                         {{"Content-Type", "application/json"}});
    }
    json detail(const std::string& group) {
        auto r = c.get("/api/v1/consumer-groups/" + url_encode(group));
        EXPECT_EQ(r.status, 200) << r.body;
        return r.status == 200 ? r.json() : json::object();
    }
    // A stats snapshot now (the listing reads it); retried while the broker's own refresh runs.
    void refresh() {
        for (int i = 0; i < 100; ++i) {
            auto r = c.post("/api/v1/stats/refresh", std::string("{}"));
            ASSERT_EQ(r.status, 200) << r.body;
            if (!r.json().value("skipped", false)) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        FAIL() << "the stats refresh stayed busy";
    }
    // The listing's entry of a (group, queue) after a refresh (null when absent).
    json listed(const std::string& group, const std::string& queue) {
        refresh();
        auto r = c.get("/api/v1/consumer-groups");
        EXPECT_EQ(r.status, 200) << r.body;
        for (const auto& g : r.json())
            if (g["name"] == group && g["queueName"] == queue) return g;
        return json();
    }

    http_client c = client();
};

// ---------------------------------------------------------------- listing and detail

TEST_F(ConsumerGroups, ListingHasOneEntryPerGroupAndQueueFromTheSnapshot) {
    const std::string q = unique_name("cg-list"), q2 = unique_name("cg-list2");
    const std::string active = unique_name("cg-active"), idle = unique_name("cg-idle"),
                      lagging = unique_name("cg-lagging");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1", "b2"});
    push_payloads(c, q2, "", {"z1"});
    EXPECT_EQ(drain(c, q, idle).size(), 5u);
    EXPECT_EQ(drain(c, q2, idle).size(), 1u);
    auto held = pop(c, q, "batch=2&consumerGroup=" + active, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    auto one = pop(c, q, "batch=1&consumerGroup=" + lagging, "P2");
    ASSERT_EQ(one.status, 200) << one.body;
    ack_body(c, one.json(), lagging);

    // Never committed anything: Dead, whatever its lease.
    json a = listed(active, q);
    ASSERT_FALSE(a.is_null());
    EXPECT_EQ(a["topics"], json::array({q}));
    EXPECT_EQ(a["members"], 1) << "consumed from P1 only, though it has a cursor on P1 and P2";
    EXPECT_EQ(a["partitionsWithLag"], 2);
    EXPECT_EQ(a["totalLag"], 5);
    EXPECT_TRUE(a["maxTimeLag"].is_number_integer());
    EXPECT_LT(a["maxTimeLag"].get<int>(), 300);
    EXPECT_EQ(a["state"], "Dead");
    EXPECT_EQ(a["subscriptionMode"], "all");
    EXPECT_TRUE(a["subscriptionTimestamp"].is_null());
    EXPECT_TRUE(is_iso_us(a["subscriptionCreatedAt"])) << a.dump();

    // Caught up on both queues: one entry each, Stable.
    json i = listed(idle, q);
    ASSERT_FALSE(i.is_null());
    EXPECT_EQ(i["state"], "Stable");
    EXPECT_EQ(i["totalLag"], 0);
    EXPECT_EQ(i["partitionsWithLag"], 0);
    EXPECT_EQ(i["maxTimeLag"], 0);
    EXPECT_EQ(i["members"], 2) << "drained both partitions";
    json i2 = listed(idle, q2);
    ASSERT_FALSE(i2.is_null());
    EXPECT_EQ(i2["members"], 1);

    json l = listed(lagging, q);
    ASSERT_FALSE(l.is_null());
    EXPECT_EQ(l["state"], "Stable");
    EXPECT_EQ(l["totalLag"], 4);
    EXPECT_EQ(l["partitionsWithLag"], 2);

    // Its oldest waiting message ten minutes old: Lagging, and maxTimeLag says by how much.
    data_run("UPDATE queen.log_consumers c SET ready_at = now() - interval '10 minutes' FROM queen.queues q "
                      "WHERE q.id = c.queue_id AND q.name = " + quote(q) + " AND c.consumer_group = " + quote(lagging) +
                      " AND c.ready_at IS NOT NULL");
    l = listed(lagging, q);
    EXPECT_EQ(l["state"], "Lagging");
    EXPECT_GE(l["maxTimeLag"].get<int>(), 600);

    // Queue mode is listed under its reserved name, with no subscription mode.
    EXPECT_EQ(pop(c, q, "batch=1").status, 200);
    json qm = listed("__QUEUE_MODE__", q);
    ASSERT_FALSE(qm.is_null());
    EXPECT_TRUE(qm["subscriptionMode"].is_null());

    // A group subscribed from now.
    const std::string fresh = unique_name("cg-new");
    EXPECT_EQ(pop(c, q2, "consumerGroup=" + fresh + "&subscriptionMode=new").status, 204);
    json f = listed(fresh, q2);
    EXPECT_EQ(f["subscriptionMode"], "new");
    EXPECT_TRUE(is_iso_us(f["subscriptionTimestamp"]));

    // Sorted by group, then queue.
    auto all = c.get("/api/v1/consumer-groups").json();
    for (std::size_t k = 1; k < all.size(); ++k) {
        const auto prev = std::make_pair(all[k - 1]["name"].get<std::string>(), all[k - 1]["queueName"].get<std::string>());
        const auto cur = std::make_pair(all[k]["name"].get<std::string>(), all[k]["queueName"].get<std::string>());
        EXPECT_LT(prev, cur);
    }
}

TEST_F(ConsumerGroups, DetailIsKeyedByQueueAndAnUnknownGroupIsEmpty) {
    const std::string q = unique_name("cg-detail"), g = unique_name("cg-detail-group");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1", "b2"});
    auto held = pop(c, q, "batch=2&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    const std::string lease = held.json()["leaseId"];

    json d = detail(g);
    ASSERT_EQ(d.size(), 1u) << d.dump();
    const json& parts = d[q]["partitions"];
    // P1 only: the group has a cursor on P2 too but has consumed nothing there (as Queen lists it).
    ASSERT_EQ(parts.size(), 1u) << d.dump();
    EXPECT_EQ(parts[0]["partition"], "P1");
    EXPECT_EQ(parts[0]["workerId"], lease);
    EXPECT_EQ(parts[0]["leaseActive"], true);
    EXPECT_EQ(parts[0]["totalConsumed"], 0);
    EXPECT_EQ(parts[0]["offsetLag"], 3);
    EXPECT_TRUE(parts[0]["timeLagSeconds"].is_number_integer());
    EXPECT_TRUE(parts[0]["lastConsumedAt"].is_null()) << "nothing committed yet";
    EXPECT_EQ(parts[0]["partitionId"], held.json()["partitionId"]);
    EXPECT_EQ(parts[0]["committedOffset"], 0);
    EXPECT_EQ(parts[0]["lastOffset"], 3);
    EXPECT_EQ(parts[0]["leaseId"], lease);
    EXPECT_EQ(parts[0]["leaseEnd"], 2);
    EXPECT_TRUE(is_iso_us(parts[0]["leaseExpiresAt"]));
    EXPECT_EQ(parts[0]["attempts"], 0);
    EXPECT_TRUE(parts[0]["retryAt"].is_null());
    EXPECT_TRUE(is_iso_us(parts[0]["oldestPendingAt"]));

    // Once it consumes from P2 too, P2 is listed.
    auto p2 = pop(c, q, "batch=1&consumerGroup=" + g, "P2");
    ASSERT_EQ(p2.status, 200) << p2.body;
    d = detail(g);
    ASSERT_EQ(d[q]["partitions"].size(), 2u) << d.dump();
    EXPECT_EQ(d[q]["partitions"][1]["partition"], "P2");
    EXPECT_EQ(d[q]["partitions"][1]["leaseActive"], true);
    EXPECT_EQ(d[q]["partitions"][1]["offsetLag"], 2);
    EXPECT_TRUE(is_iso_us(d[q]["partitions"][1]["lastClaimedAt"])) << d.dump();

    // An acknowledgement moves the cursor: lastConsumedAt and totalConsumed follow.
    ack_body(c, held.json(), g);
    d = detail(g);
    EXPECT_EQ(d[q]["partitions"][0]["totalConsumed"], 2);
    EXPECT_EQ(d[q]["partitions"][0]["offsetLag"], 1);
    EXPECT_TRUE(is_iso_us(d[q]["partitions"][0]["lastConsumedAt"])) << d.dump();
    EXPECT_EQ(d[q]["partitions"][0]["leaseActive"], false);

    auto missing = c.get("/api/v1/consumer-groups/" + url_encode(unique_name("cg-nobody")));
    EXPECT_EQ(missing.status, 200);
    EXPECT_EQ(missing.json(), json::object());
    EXPECT_EQ(c.get("/api/v1/consumer-groups/" + url_encode(g) + "/queues/" + url_encode(q)).status, 405);
}

TEST_F(ConsumerGroups, LaggingListsCursorsWhoseOldestWaitingMessageIsOlderThanTheBound) {
    const std::string q = unique_name("cg-lag"), g = unique_name("cg-lag-group");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1"});
    push_payloads(c, q, "P3", {"c1"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    auto p3 = pop(c, q, "batch=10&consumerGroup=" + g, "P3");
    ASSERT_EQ(p3.status, 200) << p3.body;
    ack_body(c, p3.json(), g);
    // P1 two hours behind, P2 ninety minutes; P3 caught up.
    const std::string where = " FROM queen.log_partitions p WHERE p.id = c.partition_id AND c.consumer_group = " +
                              quote(g) + " AND p.name = ";
    data_run("UPDATE queen.log_consumers c SET ready_at = now() - interval '2 hours'" + where + "'P1'");
    data_run("UPDATE queen.log_consumers c SET ready_at = now() - interval '90 minutes'" + where + "'P2'");

    auto mine = [&](const json& rows) {
        json out = json::array();
        for (const auto& r : rows)
            if (r["consumer_group"] == g) out.push_back(r);
        return out;
    };
    auto r = c.get("/api/v1/consumer-groups/lagging");  // default: an hour
    ASSERT_EQ(r.status, 200) << r.body;
    json rows = mine(r.json());
    ASSERT_EQ(rows.size(), 2u) << r.body;
    EXPECT_EQ(rows[0]["partition_name"], "P1") << "largest lag first";
    EXPECT_EQ(rows[0]["queue_name"], q);
    EXPECT_EQ(rows[0]["partition_id"], held.json()["partitionId"]);
    EXPECT_EQ(rows[0]["worker_id"], held.json()["leaseId"]);
    EXPECT_EQ(rows[0]["offset_lag"], 3);
    EXPECT_GE(rows[0]["time_lag_seconds"].get<int>(), 7200);
    EXPECT_LT(rows[0]["time_lag_seconds"].get<int>(), 7300);
    EXPECT_DOUBLE_EQ(rows[0]["lag_hours"].get<double>(),
                     std::round(rows[0]["time_lag_seconds"].get<double>() / 36.0) / 100.0);
    EXPECT_TRUE(is_iso_us(rows[0]["oldest_unconsumed_at"]));
    EXPECT_TRUE(rows[0].contains("last_consumed_at"));
    EXPECT_EQ(rows[1]["partition_name"], "P2");
    EXPECT_EQ(rows[1]["worker_id"], nullptr);

    EXPECT_EQ(mine(c.get("/api/v1/consumer-groups/lagging?minLagSeconds=6000").json()).size(), 1u);
    EXPECT_EQ(mine(c.get("/api/v1/consumer-groups/lagging?minLagSeconds=0").json()).size(), 2u)
        << "a caught-up cursor is never lagging";
    for (const char* bad : {"abc", "-1", "1.5"}) {
        auto b = c.get(std::string("/api/v1/consumer-groups/lagging?minLagSeconds=") + bad);
        EXPECT_EQ(b.status, 400) << bad;
        EXPECT_NE(b.json()["error"].get<std::string>().find("minLagSeconds"), std::string::npos) << b.body;
    }
}

// ---------------------------------------------------------------- seek

TEST_F(ConsumerGroups, SeekToEndDeliversNothingOldAndReleasesTheLease) {
    const std::string q = unique_name("cg-seek-end"), g = unique_name("cg-g"), other = unique_name("cg-other");
    push_payloads(c, q, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q, "P2", {"b1", "b2"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    const json msg = held.json()["messages"][0];

    auto r = seek(g, q, R"({"toEnd":true})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"queueName", q}, {"seekToEnd", true},
                              {"targetTimestamp", nullptr}, {"partitionsUpdated", 2}}));
    EXPECT_EQ(cursors(q, g), "P1=3,P2=2");
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);
    // The released lease: it cannot be extended; an ack of a message now below the cursor
    // is the ack rules' noop.
    auto ext = c.post("/api/v1/lease/" + msg["leaseId"].get<std::string>() + "/extend", std::string("{}"));
    EXPECT_EQ(ext.json()[0]["error"], "Lease not found");
    json late = ack(c, msg, "completed", g);
    EXPECT_EQ(late["success"], true);
    EXPECT_EQ(late["noop"], true);

    push_payloads(c, q, "P2", {"b3"});
    EXPECT_EQ(drain(c, q, g), names{"b3"});
    EXPECT_EQ(sorted(drain(c, q, other)), (names{"a1", "a2", "a3", "b1", "b2", "b3"}));  // other groups unaffected
}

TEST_F(ConsumerGroups, SeekToTimestampReplaysFromThere) {
    const std::string q = unique_name("cg-seek-time"), g = unique_name("cg-g");
    auto first = c.post("/api/v1/push", json{{"items", json::array({{{"queue", q}, {"partition", "P1"}, {"payload", "a1"}},
                                                                    {{"queue", q}, {"partition", "P1"}, {"payload", "a2"}},
                                                                    {{"queue", q}, {"partition", "P2"}, {"payload", "x1"}}})}});
    ASSERT_EQ(first.status, 201) << first.body;
    const std::string t = instant_between();
    push_payloads(c, q, "P1", {"a3"});
    push_payloads(c, q, "P2", {"x2"});
    EXPECT_EQ(sorted(drain(c, q, g)), (names{"a1", "a2", "a3", "x1", "x2"}));
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);

    // Backwards to t: everything after t again.
    auto r = seek(g, q, json{{"timestamp", t}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"queueName", q}, {"seekToEnd", false},
                              {"targetTimestamp", t}, {"partitionsUpdated", 2}}));
    EXPECT_EQ(cursors(q, g), "P1=2,P2=1");
    EXPECT_EQ(sorted(drain(c, q, g)), (names{"a3", "x2"}));

    // Before everything: a full replay, in order per partition.
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    auto all = drain(c, q, g);
    EXPECT_EQ(sorted(all), (names{"a1", "a2", "a3", "x1", "x2"}));
    std::vector<std::string> p1;
    for (const auto& s : all)
        if (s[0] == 'a') p1.push_back(s);
    EXPECT_EQ(p1, (names{"a1", "a2", "a3"}));

    // Exactly the createdAt of the first push: its messages count as at-or-before. (Over shards
    // a push's partitions on two shard databases get each database's time: the later one.)
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    auto r1 = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(r1.status, 200) << r1.body;
    auto r2 = pop(c, q, "batch=1&consumerGroup=" + g, "P2");
    ASSERT_EQ(r2.status, 200) << r2.body;
    const std::string created = std::max(r1.json()["messages"][0]["createdAt"].get<std::string>(),
                                         r2.json()["messages"][0]["createdAt"].get<std::string>());
    ASSERT_EQ(seek(g, q, json{{"timestamp", created}}.dump()).status, 200);
    EXPECT_EQ(cursors(q, g), "P1=2,P2=1");
    EXPECT_EQ(sorted(drain(c, q, g)), (names{"a3", "x2"}));

    // A time stamp with an offset means the same instant.
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T02:00:00+02:00"})").status, 200);
    EXPECT_EQ(cursors(q, g), "P1=0,P2=0");
}

TEST_F(ConsumerGroups, SeekBackwardsUnderALiveLeaseReleasesIt) {
    const std::string q = unique_name("cg-seek-lease"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"m1", "m2", "m3"});
    auto held = pop(c, q, group_query(g));
    ASSERT_EQ(held.status, 200) << held.body;
    const json msgs = held.json()["messages"];
    ASSERT_EQ(msgs.size(), 3u);
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    EXPECT_EQ(cursors(q, g), "Default=0");
    json late = ack(c, msgs[1], "completed", g);
    EXPECT_EQ(late["success"], false);
    EXPECT_EQ(late["error"], "unresolvable");
    EXPECT_EQ(cursors(q, g), "Default=0");
    EXPECT_EQ(drain(c, q, g), (names{"m1", "m2", "m3"}));
}

TEST_F(ConsumerGroups, SeekResetsAttemptsAndRetryDelay) {
    const std::string q = unique_name("cg-seek-retry"), g = unique_name("cg-g");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}, {"options", {{"retryDelay", 600000}}}}).status, 200);
    push_payloads(c, q, "", {"m1", "m2"});
    auto held = pop(c, q, group_query(g));
    ASSERT_EQ(held.status, 200) << held.body;
    json nack = ack(c, held.json()["messages"][0], "failed", g);
    EXPECT_EQ(nack["success"], true) << nack.dump();
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);  // retry delay
    EXPECT_EQ(cursors(q, g), "Default=0/attempts/retry");
    json part = detail(g)[q]["partitions"][0];
    EXPECT_EQ(part["attempts"], 1);
    EXPECT_TRUE(is_iso_us(part["retryAt"]));

    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    EXPECT_EQ(cursors(q, g), "Default=0");
    part = detail(g)[q]["partitions"][0];
    EXPECT_EQ(part["attempts"], 0);
    EXPECT_TRUE(part["retryAt"].is_null());
    EXPECT_EQ(drain(c, q, g), (names{"m1", "m2"}));
}

TEST_F(ConsumerGroups, RefusedSeeksAre400Or404AndChangeNothing) {
    const std::string q = unique_name("cg-seek-bad"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"m1", "m2", "m3"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g);
    ASSERT_EQ(held.status, 200) << held.body;
    const std::string before = cursors(q, g);
    ASSERT_EQ(before, "Default=0/leased");
    for (const std::string body :
         {"", "{}", "null", R"({"toEnd":false})", R"({"toEnd":null,"timestamp":null})", R"({"toEnd":"yes"})",
          R"({"toEnd":1})", R"({"timestamp":"yesterday"})", R"({"timestamp":5})", R"({"timestamp":"2026-02-30T00:00:00Z"})",
          R"({"timestamp":"2026-01-01T25:00:00Z"})", R"({"toEnd":true,"timestamp":"2026-01-01T00:00:00Z"})",
          "{bad json", "[1]"}) {
        auto r = seek(g, q, body);
        EXPECT_EQ(r.status, 400) << "body '" << body << "': " << r.body;
        EXPECT_TRUE(r.json()["error"].is_string()) << r.body;
    }
    auto no_queue = seek(g, unique_name("cg-no-queue"), R"({"toEnd":true})");
    EXPECT_EQ(no_queue.status, 404);
    EXPECT_EQ(no_queue.json(), json::parse(R"({"error":"Queue not found"})"));
    auto no_group = seek(unique_name("cg-nobody"), q, R"({"toEnd":true})");
    EXPECT_EQ(no_group.status, 404);
    EXPECT_EQ(no_group.json(), json::parse(R"({"error":"Consumer group not found"})"));
    auto no_partition = seek_partition(g, q, "Nope");
    EXPECT_EQ(no_partition.status, 404);
    EXPECT_EQ(no_partition.json(), json::parse(R"({"error":"Partition not found"})"));
    auto nobody = seek_partition(unique_name("cg-nobody"), q, "Default");
    EXPECT_EQ(nobody.status, 200) << nobody.body;
    EXPECT_EQ(nobody.json()["updated"], false);
    EXPECT_EQ(nobody.json()["cursorMovedTo"], nullptr);

    EXPECT_EQ(cursors(q, g), before);
    // The lease survived every refused call: the consumer's ack still commits.
    json a = ack(c, held.json()["messages"][0], "completed", g);
    EXPECT_EQ(a["success"], true) << a.dump();
    EXPECT_EQ(drain(c, q, g), (names{"m2", "m3"}));
}

TEST_F(ConsumerGroups, PartitionSeekMovesOnlyThatPartitionToItsEnd) {
    const std::string q = unique_name("cg-seek-part"), g = unique_name("cg-g");
    push_payloads(c, q, "P1", {"a1", "a2"});
    push_payloads(c, q, "P2", {"b1"});
    auto held = pop(c, q, "batch=1&consumerGroup=" + g, "P1");
    ASSERT_EQ(held.status, 200) << held.body;
    auto r = seek_partition(g, q, "P1");
    ASSERT_EQ(r.status, 200) << r.body;
    const json moved = r.json();
    EXPECT_EQ(moved["success"], true);
    EXPECT_EQ(moved["consumerGroup"], g);
    EXPECT_EQ(moved["queueName"], q);
    EXPECT_EQ(moved["partitionName"], "P1");
    EXPECT_EQ(moved["updated"], true);
    EXPECT_TRUE(is_iso_us(moved["cursorMovedTo"])) << moved.dump();
    EXPECT_EQ(moved["partitionsUpdated"], 1);
    EXPECT_EQ(cursors(q, g), "P1=2,P2=0");
    // An empty partition: nothing to move to.
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}}).status, 200);
    auto empty = seek_partition(g, q, "Default");
    ASSERT_EQ(empty.status, 200) << empty.body;
    EXPECT_EQ(empty.json()["updated"], false);
    EXPECT_EQ(empty.json()["cursorMovedTo"], nullptr);
    EXPECT_EQ(drain(c, q, g), names{"b1"});
    push_payloads(c, q, "P1", {"a3"});
    EXPECT_EQ(drain(c, q, g), names{"a3"});
}

// ---------------------------------------------------------------- delete

TEST_F(ConsumerGroups, DeleteOnOneQueueRestartsItFromTheBeginning) {
    const std::string q1 = unique_name("cg-del-q1"), q2 = unique_name("cg-del-q2"), g = unique_name("cg-g");
    push_payloads(c, q1, "P1", {"a1", "a2", "a3"});
    push_payloads(c, q1, "P2", {"b1"});
    push_payloads(c, q2, "", {"z1"});
    EXPECT_EQ(drain(c, q1, g).size(), 4u);
    EXPECT_EQ(drain(c, q2, g).size(), 1u);

    auto r = del(g, q1, "deleteMetadata=false");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 2},
                              {"metadataDeleted", false}, {"queueName", q1}}));
    EXPECT_EQ(cursors(q1, g), "P1=0,P2=0");
    EXPECT_EQ(sorted(drain(c, q1, g)), (names{"a1", "a2", "a3", "b1"}));
    EXPECT_EQ(pop(c, q2, group_query(g)).status, 204);  // the other queue is untouched
}

TEST_F(ConsumerGroups, DeleteKeepsTheRecordedStartUnlessMetadataIsDeleted) {
    const std::string q = unique_name("cg-del-start"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"old1", "old2"});
    EXPECT_EQ(pop(c, q, group_query(g, "subscriptionFrom=now")).status, 204);  // records the start
    const std::string start = subscription_of(q, g);
    push_payloads(c, q, "", {"new1", "new2"});
    EXPECT_EQ(drain(c, q, g), (names{"new1", "new2"}));

    // With deleteMetadata=false: the start stays; the group consumes again from it.
    auto r = del(g, "", "deleteMetadata=false");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 1},
                              {"metadataDeleted", false}}));
    EXPECT_EQ(subscription_of(q, g), start);
    EXPECT_EQ(drain(c, q, g), (names{"new1", "new2"}));

    // Without the parameter (as with true): the group is forgotten; its next pop records a new start.
    r = del(g);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 1},
                              {"metadataDeleted", true}}));
    EXPECT_EQ(detail(g), json::object());
    EXPECT_EQ(cursors(q, g), "");
    EXPECT_EQ(pop(c, q, group_query(g, "subscriptionMode=new")).status, 204);
    push_payloads(c, q, "", {"new3"});
    EXPECT_EQ(drain(c, q, g, "subscriptionMode=new"), names{"new3"});

    // And with deleteMetadata=1 once more, a group starting from the beginning gets everything.
    r = del(g, q, "deleteMetadata=1");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["metadataDeleted"], true);
    EXPECT_EQ(drain(c, q, g), (names{"old1", "old2", "new1", "new2", "new3"}));
}

TEST_F(ConsumerGroups, DeleteEverywhereReleasesLeasesAndReplaysEveryQueue) {
    const std::string q1 = unique_name("cg-del-all1"), q2 = unique_name("cg-del-all2"), g = unique_name("cg-g");
    push_payloads(c, q1, "P1", {"a1", "a2"});
    push_payloads(c, q1, "P2", {"b1"});
    push_payloads(c, q2, "", {"z1", "z2"});
    EXPECT_EQ(drain(c, q1, g).size(), 3u);
    auto held = pop(c, q2, group_query(g));
    ASSERT_EQ(held.status, 200) << held.body;
    const json msgs = held.json()["messages"];

    auto r = del(g, "", "deleteMetadata=true");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["deletedPartitions"], 3);
    EXPECT_EQ(r.json()["metadataDeleted"], true);
    // The lease went with the cursor: the late ack is unresolvable and changes nothing.
    json late = ack(c, msgs[0], "completed", g);
    EXPECT_EQ(late["success"], false);
    EXPECT_EQ(late["error"], "unresolvable");
    auto ext = c.post("/api/v1/lease/" + msgs[0]["leaseId"].get<std::string>() + "/extend", std::string("{}"));
    EXPECT_EQ(ext.json()[0]["error"], "Lease not found");
    EXPECT_EQ(sorted(drain(c, q1, g)), (names{"a1", "a2", "b1"}));
    EXPECT_EQ(drain(c, q2, g), (names{"z1", "z2"}));
}

TEST_F(ConsumerGroups, DeletingAnUnknownGroupIsAnIdempotentSuccess) {
    const std::string g = unique_name("cg-nobody");
    for (int i = 0; i < 2; ++i) {
        auto r = del(g, "", "deleteMetadata=true");
        ASSERT_EQ(r.status, 200) << r.body;
        EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"deletedPartitions", 0},
                                  {"metadataDeleted", false}}));
    }
    EXPECT_EQ(del(g, "no-such-queue").status, 200);
}

// ---------------------------------------------------------------- subscription

TEST_F(ConsumerGroups, SubscriptionRewriteIsUsedWhenTheGroupRestarts) {
    const std::string q = unique_name("cg-sub"), q2 = unique_name("cg-sub2"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"a1", "a2"});
    push_payloads(c, q2, "", {"y1"});
    const std::string t = instant_between();
    push_payloads(c, q, "", {"b1", "b2"});
    push_payloads(c, q2, "", {"y2"});
    EXPECT_EQ(drain(c, q, g).size(), 4u);
    EXPECT_EQ(drain(c, q2, g).size(), 2u);

    auto r = subscription(g, json{{"subscriptionTimestamp", t}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"consumerGroup", g}, {"newTimestamp", t}, {"rowsUpdated", 2}}));
    EXPECT_EQ(subscription_of(q, g), t);
    EXPECT_EQ(subscription_of(q2, g), t);
    EXPECT_EQ(listed(g, q)["subscriptionTimestamp"], t);
    EXPECT_EQ(pop(c, q, group_query(g)).status, 204);  // cursors do not move

    ASSERT_EQ(del(g, q, "deleteMetadata=false").status, 200);
    EXPECT_EQ(drain(c, q, g), (names{"b1", "b2"}));
    ASSERT_EQ(del(g, q2, "deleteMetadata=false").status, 200);
    EXPECT_EQ(drain(c, q2, g), (names{"y2"}));

    // A start in the future is taken as now.
    r = subscription(g, R"({"subscriptionTimestamp":"2999-01-01T00:00:00Z"})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_LT(r.json()["newTimestamp"].get<std::string>(), "2999");
    EXPECT_GE(r.json()["newTimestamp"].get<std::string>(), t);
}

TEST_F(ConsumerGroups, RefusedSubscriptionRewritesAre400AndChangeNothing) {
    const std::string q = unique_name("cg-sub-bad"), g = unique_name("cg-g");
    push_payloads(c, q, "", {"m1"});
    EXPECT_EQ(drain(c, q, g).size(), 1u);
    const std::string before = subscription_of(q, g);
    ASSERT_EQ(before, "beginning");
    for (const std::string body : {"", "{}", R"({"subscriptionTimestamp":null})", R"({"subscriptionTimestamp":"soon"})",
                                   R"({"subscriptionTimestamp":123})", R"({"subscriptionTimestamp":true})",
                                   R"({"subscriptionTimestamp":"2026-13-01T00:00:00Z"})", "{bad", "[]"}) {
        auto r = subscription(g, body);
        EXPECT_EQ(r.status, 400) << "body '" << body << "': " << r.body;
        EXPECT_TRUE(r.json()["error"].is_string()) << r.body;
    }
    EXPECT_EQ(subscription(g, "{}").json(), json::parse(R"({"error":"Missing subscriptionTimestamp in request body"})"));
    // An unknown group: nothing to rewrite, which is not an error.
    const std::string nobody = unique_name("cg-nobody");
    auto unknown = subscription(nobody, R"({"subscriptionTimestamp":"2026-01-01T00:00:00Z"})");
    EXPECT_EQ(unknown.status, 200) << unknown.body;
    EXPECT_EQ(unknown.json()["rowsUpdated"], 0);
    EXPECT_EQ(unknown.json()["consumerGroup"], nobody);
    EXPECT_EQ(subscription_of(q, g), before);
}

// ---------------------------------------------------------------- concurrency

// Consumers, a producer and every administrative call at once: lock order (queue rows, then
// cursor rows by partition id) must hold — no deadlock, no 5xx — and after the storm a final
// seek to the beginning still replays every message once per partition in order.
TEST_F(ConsumerGroups, AdministrationUnderLoadNeverFailsOrDeadlocks) {
    const std::string q = unique_name("cg-storm"), g = unique_name("cg-g");
    const std::vector<std::string> parts{"P1", "P2", "P3", "P4", "P5", "P6"};
    for (const auto& p : parts) push_payloads(c, q, p, {p + "-0"});
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0}, pops{0}, admin_calls{0};
    std::mutex failure_mutex;
    std::string first_failure;
    auto fail = [&](const std::string& what) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (failures++ == 0) first_failure = what;
    };

    auto consumer = [&] {
        http_client cc = client();
        while (!stop) {
            auto r = pop(cc, q, "batch=5&partitions=2&consumerGroup=" + g);
            if (r.status == 204) continue;
            if (r.status != 200) {
                fail("pop " + std::to_string(r.status) + " " + r.body);
                continue;
            }
            ++pops;
            json body = r.json();
            json acks = json::array();
            for (const auto& m : body["messages"])
                acks.push_back({{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                {"leaseId", m["leaseId"]}, {"status", "completed"}});
            auto e = cc.post("/api/v1/lease/" + body["leaseId"].get<std::string>() + "/extend", std::string("{}"));
            if (e.status != 200) fail("extend " + std::to_string(e.status) + " " + e.body);
            auto a = cc.post("/api/v1/ack/batch", json{{"consumerGroup", g}, {"acknowledgments", acks}});
            if (a.status != 200) fail("ack " + std::to_string(a.status) + " " + a.body);
        }
    };
    auto producer = [&] {
        http_client pc = client();
        int i = 0;
        while (!stop) {
            const std::string p = parts[static_cast<std::size_t>(i % 6)];
            auto r = pc.post("/api/v1/push", json{{"items", json::array({{{"queue", q}, {"partition", p},
                                                                          {"payload", p + "-" + std::to_string(++i)}}})}});
            if (r.status != 201) fail("push " + std::to_string(r.status) + " " + r.body);
        }
    };
    auto admin = [&] {
        http_client ac = client();
        const std::string base = "/api/v1/consumer-groups/" + url_encode(g);
        int i = 0;
        while (!stop) {
            http_reply r;
            switch (i++ % 8) {
                case 0: r = ac.post(base + "/queues/" + url_encode(q) + "/seek", std::string(R"({"toEnd":true})")); break;
                case 1:
                    r = ac.post(base + "/queues/" + url_encode(q) + "/seek",
                                std::string(R"({"timestamp":"2000-01-01T00:00:00Z"})"));
                    break;
                case 2: r = ac.del(base + "/queues/" + url_encode(q)); break;
                case 3: r = ac.post(base + "/queues/" + url_encode(q) + "/partitions/P3/seek", std::string()); break;
                case 4: r = ac.del(base); break;
                case 5: r = ac.get(base); break;
                case 6: r = ac.get("/api/v1/consumer-groups"); break;
                case 7: r = ac.del(base + "?deleteMetadata=true"); break;
            }
            ++admin_calls;
            // 404: the group may be forgotten for a moment (deleteMetadata) until the next pop.
            if (r.status != 200 && r.status != 404) fail("admin " + std::to_string(r.status) + " " + r.body);
        }
    };
    std::vector<std::thread> threads;
    threads.emplace_back(consumer);
    threads.emplace_back(consumer);
    threads.emplace_back(producer);
    threads.emplace_back(admin);
    std::this_thread::sleep_for(3s);
    stop = true;
    for (auto& t : threads) t.join();
    RecordProperty("pops", pops.load());
    RecordProperty("admin_calls", admin_calls.load());
    EXPECT_EQ(failures.load(), 0) << first_failure;
    EXPECT_GT(pops.load(), 0);
    EXPECT_GT(admin_calls.load(), 8);
    EXPECT_EQ(broker().log().find("deadlock"), std::string::npos);

    // Whatever happened, a seek to the beginning replays every partition completely, in order.
    // A pop (re)registers the group whatever it answers: 204 when the last admin call was a
    // seek to the end or the consumers had caught up on P1, 200 otherwise.
    const int registering = pop(c, q, "batch=1&consumerGroup=" + g, "P1").status;
    ASSERT_TRUE(registering == 200 || registering == 204) << registering;
    ASSERT_EQ(seek(g, q, R"({"timestamp":"2000-01-01T00:00:00Z"})").status, 200);
    const long long total = data_sum(
        "SELECT sum(queen.partition_last_offset(p.id)) FROM queen.log_partitions p JOIN queen.queues qu ON qu.id = p.queue_id "
        "WHERE qu.name = " + quote(q));
    std::map<std::string, long long> last;
    long long seen = 0;
    for (int guard = 0; guard < 10000; ++guard) {
        auto r = pop(c, q, "batch=100&consumerGroup=" + g);
        if (r.status == 204) break;
        ASSERT_EQ(r.status, 200) << r.body;
        json body = r.json();
        for (const auto& m : body["messages"]) {
            const std::string part = m["partition"];
            const long long off = m["offset"];
            EXPECT_EQ(off, last[part] + 1) << part;
            last[part] = off;
            ++seen;
        }
        ack_body(c, body, g);
    }
    RecordProperty("replayed", static_cast<int>(seen));
    EXPECT_EQ(seen, total);
}

}  // namespace
}  // namespace queen::test
