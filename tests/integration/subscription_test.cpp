// Consumer groups and subscriptions (docs/http-api.md, pop): every group gets every message, queue
// mode is independent of the groups, a new group starts from the beginning / from now /
// from a time stamp recorded by its FIRST pop, partitions created later are included from
// their first message, queue mode ignores the subscription parameters, and autoAck commits
// inside the pop.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace queen::test;
using nlohmann::json;
using namespace std::chrono_literals;

// What one consumer saw: payloads in delivery order, and per partition the offsets in order.
struct consumed {
    std::vector<std::string> payloads;
    std::map<std::string, std::vector<long long>> offsets;  // partition -> offsets
    int pops = 0;
};

// Pops (with `query`, batch=10) and acks everything until a pop answers 204.
consumed drain(http_client& c, const std::string& queue, const std::string& query, const std::string& group = "") {
    consumed out;
    for (int guard = 0; guard < 100; ++guard) {
        std::string q = "batch=10";
        if (!group.empty()) q += "&consumerGroup=" + url_encode(group);
        if (!query.empty()) q += "&" + query;
        auto r = pop(c, queue, q);
        if (r.status == 204) return out;
        if (r.status != 200) throw std::runtime_error("pop answered " + std::to_string(r.status) + " " + r.body);
        ++out.pops;
        auto body = r.json();
        json acks = json::array();
        for (const auto& m : body["messages"]) {
            out.payloads.push_back(m["data"].is_string() ? m["data"].get<std::string>() : m["data"].dump());
            out.offsets[m["partition"].get<std::string>()].push_back(m["offset"].get<long long>());
            if (!group.empty() && m["consumerGroup"] != group)
                throw std::runtime_error("message of the wrong group: " + m.dump());
            acks.push_back(json{{"transactionId", m["transactionId"]}, {"partitionId", m["partitionId"]},
                                {"leaseId", m["leaseId"]}, {"status", "completed"}, {"error", nullptr}});
        }
        if (body["leaseId"] != "") {
            auto a = c.post("/api/v1/ack/batch",
                            json{{"consumerGroup", group.empty() ? json() : json(group)}, {"acknowledgments", acks}});
            if (a.status != 200) throw std::runtime_error("ack answered " + std::to_string(a.status) + " " + a.body);
            for (const auto& x : a.json())
                if (x["success"] != true) throw std::runtime_error("ack failed: " + x.dump());
        }
    }
    throw std::runtime_error("drain did not finish");
}

std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
}

// The database's current time as an ISO-8601 UTC time stamp with microseconds.
std::string db_now_iso() {
    return cluster().run_sql("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                             "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')");
}

// committed offsets of a group on a queue, "partition=committed" in partition-name order.
std::string cursors(const std::string& queue, const std::string& group) {
    auto rows = data_rows("SELECT p.name || '=' || c.committed "
                          "FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id "
                          "JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " + quote(queue) +
                          " AND c.consumer_group = " + quote(group));
    std::sort(rows.begin(), rows.end());
    std::string out;
    for (const auto& r : rows) out += (out.empty() ? "" : ",") + r;
    return out;
}

}  // namespace

TEST(Subscription, TwoGroupsEachGetEveryMessageAndQueueModeIsIndependent) {
    const std::string q = unique_name("sub-two-groups");
    auto c = client();
    push_payloads(c, q, "P1", {"P1-1", "P1-2", "P1-3"});
    push_payloads(c, q, "P2", {"P2-1", "P2-2", "P2-3"});
    const std::vector<std::string> all{"P1-1", "P1-2", "P1-3", "P2-1", "P2-2", "P2-3"};

    // Queue mode consumes everything first; the groups still get everything afterwards.
    auto queue_mode = drain(c, q, "");
    EXPECT_EQ(sorted(queue_mode.payloads), all);
    EXPECT_EQ(pop(c, q).status, 204);

    auto g1 = drain(c, q, "", "g1");
    auto g2 = drain(c, q, "", "g2");
    EXPECT_EQ(sorted(g1.payloads), all);
    EXPECT_EQ(sorted(g2.payloads), all);
    for (const auto* seen : {&queue_mode, &g1, &g2}) {
        EXPECT_EQ(seen->offsets.at("P1"), (std::vector<long long>{1, 2, 3}));
        EXPECT_EQ(seen->offsets.at("P2"), (std::vector<long long>{1, 2, 3}));
    }
    EXPECT_EQ(cursors(q, "g1"), "P1=3,P2=3");
    EXPECT_EQ(cursors(q, "g2"), "P1=3,P2=3");
    EXPECT_EQ(cursors(q, "__QUEUE_MODE__"), "P1=3,P2=3");

    // A new message reaches each of them exactly once.
    push_payloads(c, q, "P2", {"P2-4"});
    EXPECT_EQ(drain(c, q, "", "g2").payloads, std::vector<std::string>{"P2-4"});
    EXPECT_EQ(drain(c, q, "").payloads, std::vector<std::string>{"P2-4"});
    EXPECT_EQ(drain(c, q, "", "g1").payloads, std::vector<std::string>{"P2-4"});
    EXPECT_EQ(pop(c, q, "consumerGroup=g1").status, 204);
    EXPECT_EQ(pop(c, q, "consumerGroup=g2").status, 204);

    // Each message is stored once, whatever the number of groups.
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.messages WHERE queue = " + quote(q)), 7);
}

TEST(Subscription, GroupLeaseDoesNotBlockOtherGroups) {
    const std::string q = unique_name("sub-leases");
    auto c = client();
    push_payloads(c, q, "", {"m1", "m2"});
    auto a = pop(c, q, "consumerGroup=ga&batch=1");
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.json()["messages"][0]["data"], "m1");
    // ga holds the only partition; gb and queue mode are unaffected.
    EXPECT_EQ(pop(c, q, "consumerGroup=ga").status, 204);
    auto b = pop(c, q, "consumerGroup=gb&batch=2");
    ASSERT_EQ(b.status, 200) << b.body;
    EXPECT_EQ(b.json()["messages"].size(), 2u);
    auto m = pop(c, q, "batch=2");
    ASSERT_EQ(m.status, 200) << m.body;
    EXPECT_EQ(m.json()["messages"][0]["data"], "m1");
    EXPECT_EQ(m.json()["consumerGroup"], "__QUEUE_MODE__");
}

TEST(Subscription, ModeAllGetsTheBacklog) {
    const std::string q = unique_name("sub-all");
    auto c = client();
    push_payloads(c, q, "", {"b1", "b2", "b3"});
    for (const std::string query : {"subscriptionMode=all", "", "subscriptionMode=from_beginning"}) {
        const std::string group = unique_name("all-group");
        auto seen = drain(c, q, query, group);
        EXPECT_EQ(seen.payloads, (std::vector<std::string>{"b1", "b2", "b3"})) << query;
        EXPECT_EQ(data_value("SELECT coalesce(subscription_at::text, 'beginning') FROM queen.consumer_groups "
                                    "WHERE queue_name = " + quote(q) + " AND consumer_group = " + quote(group)),
                  "beginning")
            << query;
    }
}

class SubscriptionNewGroup : public ::testing::TestWithParam<std::string> {};

TEST_P(SubscriptionNewGroup, GetsOnlyMessagesPushedAfterItsFirstPop) {
    const std::string query = GetParam();
    const std::string q = unique_name("sub-new");
    const std::string group = "late";
    auto c = client();
    push_payloads(c, q, "", {"old-1", "old-2"});
    push_payloads(c, q, "Other", {"old-3"});

    // First pop: nothing after its start yet, so 204 — and the start is recorded anyway.
    EXPECT_EQ(pop(c, q, "batch=10&consumerGroup=" + group + "&" + query).status, 204);
    EXPECT_EQ(data_value("SELECT subscription_at IS NOT NULL FROM queen.consumer_groups WHERE queue_name = " +
                                quote(q) + " AND consumer_group = " + quote(group)),
              "t");
    EXPECT_EQ(cursors(q, group), "Default=2,Other=1");

    push_payloads(c, q, "", {"new-1", "new-2"});
    push_payloads(c, q, "Other", {"new-3"});
    auto seen = drain(c, q, query, group);
    EXPECT_EQ(sorted(seen.payloads), (std::vector<std::string>{"new-1", "new-2", "new-3"}));
    EXPECT_EQ(seen.offsets["Default"], (std::vector<long long>{3, 4}));
    EXPECT_EQ(seen.offsets["Other"], (std::vector<long long>{2}));

    // The start belongs to the first pop: asking for "all" later does not rewind the group.
    EXPECT_EQ(pop(c, q, "batch=10&consumerGroup=" + group + "&subscriptionMode=all").status, 204);
    push_payloads(c, q, "", {"new-4"});
    EXPECT_EQ(drain(c, q, "subscriptionMode=all", group).payloads, std::vector<std::string>{"new-4"});

    // Queue mode and other groups still see the whole history.
    EXPECT_EQ(drain(c, q, "").payloads.size(), 7u);
    EXPECT_EQ(drain(c, q, "", "everything").payloads.size(), 7u);
}

INSTANTIATE_TEST_SUITE_P(Subscription, SubscriptionNewGroup,
                         ::testing::Values("subscriptionMode=new", "subscriptionMode=new-only", "subscriptionFrom=now",
                                           "subscriptionMode=all&subscriptionFrom=now"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name;
                             for (char ch : info.param)
                                 name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                             return name;
                         });

TEST(Subscription, NewGroupWhoseFirstPopPrecedesTheQueueGetsEverythingPushedAfter) {
    const std::string q = unique_name("sub-new-before-queue");
    auto c = client();
    EXPECT_EQ(pop(c, q, "consumerGroup=early&subscriptionMode=new").status, 204);
    EXPECT_EQ(data_sum("SELECT count(*) FROM queen.queues WHERE name = " + quote(q)), 0);
    push_payloads(c, q, "", {"x1", "x2"});
    push_payloads(c, q, "P9", {"x3"});
    auto seen = drain(c, q, "subscriptionMode=new", "early");
    EXPECT_EQ(sorted(seen.payloads), (std::vector<std::string>{"x1", "x2", "x3"}));
}

TEST(Subscription, NewGroupOnAnEmptyExistingQueueGetsLaterMessages) {
    const std::string q = unique_name("sub-new-empty");
    auto c = client();
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}}).status, 200);
    EXPECT_EQ(pop(c, q, "consumerGroup=g&subscriptionFrom=now").status, 204);
    push_payloads(c, q, "", {"e1", "e2"});
    EXPECT_EQ(drain(c, q, "subscriptionFrom=now", "g").payloads, (std::vector<std::string>{"e1", "e2"}));
}

TEST(Subscription, FromTimestampGetsOnlyLaterMessages) {
    const std::string q = unique_name("sub-from-ts");
    auto c = client();
    const std::string before_all = db_now_iso();
    std::this_thread::sleep_for(20ms);
    push_payloads(c, q, "P1", {"A1", "A2"});
    push_payloads(c, q, "P2", {"A3"});
    std::this_thread::sleep_for(20ms);
    const std::string between = db_now_iso();
    std::this_thread::sleep_for(20ms);
    push_payloads(c, q, "P1", {"B1"});
    push_payloads(c, q, "P2", {"B2", "B3"});

    // The time stamp picks the later messages on every partition.
    auto later = drain(c, q, "subscriptionFrom=" + url_encode(between), "ts-between");
    EXPECT_EQ(sorted(later.payloads), (std::vector<std::string>{"B1", "B2", "B3"}));
    EXPECT_EQ(later.offsets["P1"], (std::vector<long long>{3}));
    EXPECT_EQ(later.offsets["P2"], (std::vector<long long>{2, 3}));
    EXPECT_EQ(cursors(q, "ts-between"), "P1=3,P2=3");

    // subscriptionFrom wins over subscriptionMode, either way.
    auto with_all = drain(c, q, "subscriptionMode=all&subscriptionFrom=" + url_encode(between), "ts-all");
    EXPECT_EQ(sorted(with_all.payloads), (std::vector<std::string>{"B1", "B2", "B3"}));
    auto with_new = drain(c, q, "subscriptionMode=new&subscriptionFrom=" + url_encode(before_all), "ts-new");
    EXPECT_EQ(sorted(with_new.payloads), (std::vector<std::string>{"A1", "A2", "A3", "B1", "B2", "B3"}));

    // The start was recorded as that time, not as the pop's own time.
    EXPECT_EQ(data_value("SELECT subscription_at = " + quote(between) + "::timestamptz "
                                "FROM queen.consumer_groups WHERE queue_name = " + quote(q) +
                                " AND consumer_group = 'ts-between'"),
              "t");
}

TEST(Subscription, FromTimestampInTheFutureMeansNow) {
    const std::string q = unique_name("sub-future");
    auto c = client();
    push_payloads(c, q, "", {"before"});
    const std::string future = "2999-01-01T00:00:00.000000Z";
    EXPECT_EQ(pop(c, q, "consumerGroup=fut&subscriptionFrom=" + url_encode(future)).status, 204);
    push_payloads(c, q, "", {"after-1", "after-2"});
    EXPECT_EQ(drain(c, q, "subscriptionFrom=" + url_encode(future), "fut").payloads,
              (std::vector<std::string>{"after-1", "after-2"}));
}

TEST(Subscription, PartitionsCreatedAfterTheFirstPopAreIncludedFromTheirFirstMessage) {
    const std::string q = unique_name("sub-new-partitions");
    auto c = client();
    push_payloads(c, q, "P1", {"old-1", "old-2"});
    const std::string between = db_now_iso();
    std::this_thread::sleep_for(20ms);

    // Three groups register while only P1 exists.
    EXPECT_EQ(pop(c, q, "consumerGroup=gnew&subscriptionMode=new").status, 204);
    EXPECT_EQ(pop(c, q, "consumerGroup=gts&subscriptionFrom=" + url_encode(between)).status, 204);
    auto first_all = pop(c, q, "consumerGroup=gall&batch=10");
    ASSERT_EQ(first_all.status, 200) << first_all.body;
    const json first_all_body = first_all.json();
    for (const auto& m : first_all_body["messages"]) ack(c, m, "completed", "gall");

    // Then P2 and P3 appear (P2 with three messages in one push), and P1 gets one more.
    push_payloads(c, q, "P2", {"p2-1", "p2-2", "p2-3"});
    push_payloads(c, q, "P3", {"p3-1"});
    push_payloads(c, q, "P1", {"new-1"});
    for (const std::string group : {"gnew", "gts", "gall"}) {
        SCOPED_TRACE(group);
        EXPECT_EQ(cursors(q, group), "P1=2,P2=0,P3=0");
        auto seen = drain(c, q, "", group);
        EXPECT_EQ(sorted(seen.payloads), (std::vector<std::string>{"new-1", "p2-1", "p2-2", "p2-3", "p3-1"}));
        EXPECT_EQ(seen.offsets["P2"], (std::vector<long long>{1, 2, 3}));
        EXPECT_EQ(seen.offsets["P3"], (std::vector<long long>{1}));
        EXPECT_EQ(seen.offsets["P1"], (std::vector<long long>{3}));
        EXPECT_EQ(cursors(q, group), "P1=3,P2=3,P3=1");
    }
}

TEST(Subscription, QueueModeIgnoresSubscriptionParameters) {
    auto c = client();
    for (const std::string query :
         {"subscriptionMode=new", "subscriptionMode=new-only", "subscriptionFrom=now",
          "subscriptionFrom=2999-01-01T00%3A00%3A00Z", "subscriptionFrom=garbage",
          "consumerGroup=__QUEUE_MODE__&subscriptionMode=new", "consumerGroup=&subscriptionFrom=now",
          "consumerGroup=null&subscriptionMode=new"}) {
        SCOPED_TRACE(query);
        const std::string q = unique_name("sub-queue-mode");
        push_payloads(c, q, "", {"q1", "q2", "q3"});
        auto r = pop(c, q, "batch=10&" + query);
        ASSERT_EQ(r.status, 200) << r.body;
        auto body = r.json();
        EXPECT_EQ(body["consumerGroup"], "__QUEUE_MODE__");
        ASSERT_EQ(body["messages"].size(), 3u);
        EXPECT_EQ(body["messages"][0]["data"], "q1");
        EXPECT_EQ(body["messages"][2]["data"], "q3");
        EXPECT_EQ(data_sum("SELECT count(*) FROM queen.consumer_groups WHERE queue_name = " + quote(q) +
                           " AND consumer_group <> '__QUEUE_MODE__'"),
                  0);
    }
}

TEST(Subscription, AutoAckCommitsInsideThePop) {
    const std::string q = unique_name("sub-autoack");
    auto c = client();
    push_payloads(c, q, "", {"m1", "m2", "m3", "m4", "m5"});

    auto r = pop(c, q, "batch=2&autoAck=true");
    ASSERT_EQ(r.status, 200) << r.body;
    auto body = r.json();
    EXPECT_EQ(body["leaseId"], "");
    ASSERT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["data"], "m1");
    EXPECT_EQ(body["messages"][1]["data"], "m2");
    for (const auto& m : body["messages"]) EXPECT_EQ(m["leaseId"], "");
    EXPECT_EQ(data_value("SELECT format('%s/%s', c.committed, c.lease_id IS NULL) FROM queen.log_consumers c "
                                "JOIN queen.queues q ON q.id = c.queue_id WHERE q.name = " + quote(q) +
                                " AND c.consumer_group = '__QUEUE_MODE__'"),
              "2/t");
    const json first = body["messages"][0];

    // Nothing is leased: the next pop gets the following messages at once.
    r = pop(c, q, "batch=2&autoAck=true");
    ASSERT_EQ(r.status, 200) << r.body;
    body = r.json();
    ASSERT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["data"], "m3");
    EXPECT_EQ(body["messages"][1]["data"], "m4");
    EXPECT_EQ(cursors(q, "__QUEUE_MODE__"), "Default=4");

    // A normal pop leases the rest.
    r = pop(c, q, "batch=10");
    ASSERT_EQ(r.status, 200) << r.body;
    body = r.json();
    ASSERT_EQ(body["messages"].size(), 1u);
    EXPECT_EQ(body["messages"][0]["data"], "m5");
    EXPECT_NE(body["leaseId"], "");
    EXPECT_EQ(cursors(q, "__QUEUE_MODE__"), "Default=4");

    // An ack of an auto-acked message is a no-op success and moves nothing.
    auto a = c.post("/api/v1/ack", json{{"transactionId", first["transactionId"]},
                                        {"partitionId", first["partitionId"]},
                                        {"status", "completed"}});
    ASSERT_EQ(a.status, 200) << a.body;
    EXPECT_EQ(a.json()["success"], true) << a.body;
    EXPECT_EQ(a.json()["noop"], true) << a.body;
    EXPECT_EQ(cursors(q, "__QUEUE_MODE__"), "Default=4");

    // With a consumer group: the group's cursor moves, queue mode's does not.
    r = pop(c, q, "batch=10&autoAck=true&consumerGroup=auto");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["leaseId"], "");
    EXPECT_EQ(r.json()["messages"].size(), 5u);
    EXPECT_EQ(cursors(q, "auto"), "Default=5");
    EXPECT_EQ(cursors(q, "__QUEUE_MODE__"), "Default=4");
    EXPECT_EQ(pop(c, q, "autoAck=true&consumerGroup=auto").status, 204);
}
