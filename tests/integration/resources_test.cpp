// The operator's listings through the real broker (docs/operator-routes.md):
// GET /api/v1/resources/queues (snapshot counts of a known backlog, filters, paging, 400s),
// /resources/queues/:queue (each partition counted live, totals, 404), /resources/namespaces
// and /resources/tasks, POST /api/v1/stats/refresh (now; skipped while another session
// refreshes), and the background refresh on QUEEN_STATS_INTERVAL_MS.
#include "test_env.hpp"

#include <libpq-fe.h>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;


// A refresh that ran (the broker's own background refresh may hold the lock for a moment).
json refresh_now(http_client& c) {
    json body;
    EXPECT_TRUE(eventually([&] {
        auto r = c.post("/api/v1/stats/refresh", std::string("{}"));
        EXPECT_EQ(r.status, 200) << r.body;
        body = r.json();
        return !body.value("skipped", false);
    })) << body.dump();
    return body;
}

// A queue in its own namespace and task with a known state:
//   p1: 5 messages; queue mode leased m1..m2 and acknowledged m1 (1 completed, 1 processing, 3 pending);
//   p2: 3 messages, untouched (3 pending);
//   p3: 1 message, dead-lettered by a failed ack (retryLimit 0): consumed, 1 dead letter;
//   Default: empty.
// Totals: 9 messages, pending 6, processing 1, completed 2, one dead letter.
class Resources : public ::testing::Test {
protected:
    void SetUp() override {
        queue = unique_name("res");
        ns = unique_name("ns");
        task = unique_name("task");
        auto r = c.post("/api/v1/configure", json{{"queue", queue}, {"namespace", ns}, {"task", task},
                                                   {"options", {{"retryLimit", 0}, {"retryDelay", 0}}}});
        ASSERT_EQ(r.status, 200) << r.body;
        push_payloads(c, queue, "p1", {json(1), json(2), json(3), json(4), json(5)});
        push_payloads(c, queue, "p2", {json(1), json(2), json(3)});
        push_payloads(c, queue, "p3", {json("doomed")});
        auto leased = pop(c, queue, "batch=2", "p1");
        ASSERT_EQ(leased.status, 200) << leased.body;
        ASSERT_EQ(leased.json()["messages"].size(), 2u);
        ASSERT_EQ(ack(c, leased.json()["messages"][0])["success"], true);
        auto doomed = pop(c, queue, "batch=1", "p3");
        ASSERT_EQ(doomed.status, 200) << doomed.body;
        ASSERT_EQ(ack(c, doomed.json()["messages"][0], "failed")["dlq"], true);
    }

    http_client c = client();
    std::string queue, ns, task;
};

TEST_F(Resources, TheQueueListShowsTheKnownBacklogFromTheSnapshot) {
    auto refreshed = refresh_now(c);
    EXPECT_EQ(refreshed["success"], true);
    EXPECT_GE(refreshed["partitions"].get<int>(), 4) << refreshed.dump();
    EXPECT_TRUE(refreshed["refreshedAt"].is_string());
    EXPECT_TRUE(refreshed["durationMs"].is_number_integer());

    auto body = get_ok(c, "/api/v1/resources/queues?namespace=" + url_encode(ns));
    ASSERT_EQ(body["queues"].size(), 1u) << body.dump();
    const auto& q = body["queues"][0];
    EXPECT_EQ(q["name"], queue);
    EXPECT_EQ(q["namespace"], ns);
    EXPECT_EQ(q["task"], task);
    EXPECT_TRUE(q["id"].is_string());
    EXPECT_TRUE(q["createdAt"].is_string());
    EXPECT_EQ(q["partitions"], 4);
    EXPECT_EQ(q["messages"]["total"], 9);
    EXPECT_EQ(q["messages"]["processing"], 1);
    EXPECT_EQ(q["messages"]["pending"], 6) << "pending excludes what is processing, as on every other route";
    EXPECT_EQ(body["total"], 1);
    EXPECT_GE(body["statsAge"].get<int>(), 0);

    // Three more messages show in the next snapshot.
    push_payloads(c, queue, "p2", {json(4), json(5), json(6)});
    refresh_now(c);
    body = get_ok(c, "/api/v1/resources/queues?task=" + url_encode(task));
    ASSERT_EQ(body["queues"].size(), 1u) << body.dump();
    EXPECT_EQ(body["queues"][0]["messages"]["total"], 12);
    EXPECT_EQ(body["queues"][0]["messages"]["pending"], 9);
}

TEST_F(Resources, TheQueueDetailCountsEveryPartitionNow) {
    auto body = get_ok(c, "/api/v1/resources/queues/" + url_encode(queue));
    EXPECT_EQ(body["name"], queue);
    EXPECT_EQ(body["namespace"], ns);
    EXPECT_EQ(body["task"], task);
    ASSERT_EQ(body["partitions"].size(), 4u) << body.dump();
    std::vector<std::string> names;
    for (const auto& p : body["partitions"]) names.push_back(p["name"]);
    EXPECT_EQ(names, (std::vector<std::string>{"Default", "p1", "p2", "p3"}));

    const auto& def = body["partitions"][0];
    EXPECT_EQ(def["stats"], (json{{"total", 0}, {"pending", 0}, {"processing", 0}, {"completed", 0}, {"failed", 0},
                                  {"deadLetter", 0}}));
    EXPECT_TRUE(def["oldestMessage"].is_null());
    EXPECT_TRUE(def["newestMessage"].is_null());

    const auto& p1 = body["partitions"][1];
    EXPECT_EQ(p1["stats"], (json{{"total", 5}, {"pending", 3}, {"processing", 1}, {"completed", 1}, {"failed", 0},
                                 {"deadLetter", 0}}));
    EXPECT_TRUE(p1["oldestMessage"].is_string());
    EXPECT_TRUE(p1["newestMessage"].is_string());
    EXPECT_TRUE(p1["id"].is_string());

    const auto& p2 = body["partitions"][2];
    EXPECT_EQ(p2["stats"]["pending"], 3);
    EXPECT_EQ(p2["stats"]["total"], 3);

    const auto& p3 = body["partitions"][3];
    EXPECT_EQ(p3["stats"], (json{{"total", 1}, {"pending", 0}, {"processing", 0}, {"completed", 1}, {"failed", 0},
                                 {"deadLetter", 1}}));
    EXPECT_TRUE(p3["oldestMessage"].is_null()) << "every group has committed it";

    EXPECT_EQ(body["totals"], (json{{"total", 9}, {"pending", 6}, {"processing", 1}, {"completed", 2}, {"failed", 0},
                                    {"deadLetter", 1}}));

    // The partition id is the one pops return.
    auto more = pop(c, queue, "batch=1", "p2");
    ASSERT_EQ(more.status, 200);
    EXPECT_EQ(more.json()["messages"][0]["partitionId"], p2["id"]);
}

TEST_F(Resources, AnUnknownOrDeletedQueueIsNotFound) {
    auto r = c.get("/api/v1/resources/queues/" + url_encode(unique_name("nope")));
    EXPECT_EQ(r.status, 404);
    EXPECT_EQ(r.json(), (json{{"error", "Queue not found"}}));
    ASSERT_EQ(c.del("/api/v1/resources/queues/" + url_encode(queue)).status, 200);
    EXPECT_EQ(c.get("/api/v1/resources/queues/" + url_encode(queue)).status, 404);
    refresh_now(c);
    EXPECT_EQ(get_ok(c, "/api/v1/resources/queues?namespace=" + url_encode(ns))["queues"], json::array());
}

TEST_F(Resources, NamespacesAndTasksSumTheirQueues) {
    // A second queue in the same namespace, another task.
    const auto other = unique_name("res");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", other}, {"namespace", ns}}).status, 200);
    push_payloads(c, other, "x", {json(1), json(2)});
    refresh_now(c);

    auto spaces = get_ok(c, "/api/v1/resources/namespaces")["namespaces"];
    json mine;
    for (const auto& n : spaces)
        if (n["namespace"] == ns) mine = n;
    ASSERT_FALSE(mine.is_null()) << spaces.dump();
    EXPECT_EQ(mine["queues"], 2);
    EXPECT_EQ(mine["partitions"], 6);
    EXPECT_EQ(mine["messages"], (json{{"total", 11}, {"pending", 8}}));
    for (std::size_t i = 1; i < spaces.size(); ++i)
        EXPECT_LT(spaces[i - 1]["namespace"].get<std::string>(), spaces[i]["namespace"].get<std::string>());

    auto tasks = get_ok(c, "/api/v1/resources/tasks")["tasks"];
    json t;
    for (const auto& x : tasks)
        if (x["task"] == task) t = x;
    ASSERT_FALSE(t.is_null()) << tasks.dump();
    EXPECT_EQ(t["queues"], 1);
    EXPECT_EQ(t["messages"], (json{{"total", 9}, {"pending", 6}}));
    for (const auto& x : tasks) EXPECT_NE(x["task"], "") << "queues without a task are not listed";
}

TEST_F(Resources, TheListPagesAndRefusesBadValues) {
    const auto second = unique_name("res");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", second}, {"namespace", ns}}).status, 200);
    auto page = get_ok(c, "/api/v1/resources/queues?namespace=" + url_encode(ns) + "&limit=1");
    ASSERT_EQ(page["queues"].size(), 1u);
    EXPECT_EQ(page["queues"][0]["name"], second) << "newest queue first";
    EXPECT_EQ(page["total"], 2);
    page = get_ok(c, "/api/v1/resources/queues?namespace=" + url_encode(ns) + "&limit=1&offset=1");
    ASSERT_EQ(page["queues"].size(), 1u);
    EXPECT_EQ(page["queues"][0]["name"], queue);
    EXPECT_EQ(get_ok(c, "/api/v1/resources/queues?limit=10000")["queues"].is_array(), true);

    for (const char* bad : {"limit=abc", "limit=-1", "limit=10001", "offset=-3", "offset=x"}) {
        auto r = c.get(std::string("/api/v1/resources/queues?") + bad);
        EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
        const std::string key = std::string(bad).substr(0, std::string(bad).find('='));
        EXPECT_NE(r.json()["error"].get<std::string>().find(key), std::string::npos) << r.body;
    }
}

TEST(ResourcesRefresh, IsSkippedWhileAnotherSessionRefreshes) {
    auto c = client();
    std::unique_ptr<PGconn, decltype(&PQfinish)> holder(PQconnectdb(cluster().conninfo().c_str()), &PQfinish);
    ASSERT_EQ(PQstatus(holder.get()), CONNECTION_OK);
    auto run = [&](const char* sql) {
        std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(holder.get(), sql), &PQclear);
        ASSERT_EQ(PQresultStatus(r.get()), PGRES_TUPLES_OK) << PQerrorMessage(holder.get());
    };
    // Wait out the broker's own background refresh, then hold the lock as a refresh would.
    ASSERT_TRUE(eventually([&] {
        std::unique_ptr<PGresult, decltype(&PQclear)> r(
            PQexec(holder.get(), "SELECT pg_try_advisory_lock(queen.stats_lock_key())"), &PQclear);
        return std::string(PQgetvalue(r.get(), 0, 0)) == "t";
    }));
    auto r = c.post("/api/v1/stats/refresh", std::string("{}"));
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json(), (json{{"success", true}, {"skipped", true}, {"reason", "another_instance_running"}}));
    run("SELECT pg_advisory_unlock(queen.stats_lock_key())");
    EXPECT_EQ(refresh_now(c)["success"], true);
}

TEST(ResourcesRefresh, TheBrokerRefreshesTheSnapshotOnItsInterval) {
    test_cluster db;
    broker_process b(db.conninfo(), {{"QUEEN_STATS_INTERVAL_MS", "200"}});
    auto c = client_of(b);
    const auto q = unique_name("bg");
    push_payloads(c, q, "a", {json(1), json(2), json(3), json(4)});
    // No refresh call: the snapshot catches up by itself.
    ASSERT_TRUE(eventually([&] {
        auto body = get_ok(c, "/api/v1/resources/queues");
        return body["queues"].size() == 1 && body["queues"][0]["messages"]["total"] == 4 &&
               body["statsAge"].get<int>() >= 0;
    }));
    // Old snapshots are dropped as new ones come: at most this one and the one before.
    ASSERT_TRUE(eventually([&] { return std::stoi(db.run_sql("SELECT max(id) FROM queen.stats_snapshots")) > 3; }));
    EXPECT_LE(std::stoi(db.run_sql("SELECT count(*) FROM queen.stats_snapshots")), 3);
}

}  // namespace
}  // namespace queen::test
