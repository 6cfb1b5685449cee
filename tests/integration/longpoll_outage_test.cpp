// A long-poll whose claim is in flight when the database goes away (docs/http-api.md, "Pop"):
// the claim is held deterministically on a table lock another session takes, the database is
// then shut down under it, and the poll must stay parked through the outage and deliver what is
// pushed once the database is back, never answer 204 before its deadline.
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <future>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(LongPollOutage, AClaimInFlightWhenTheDatabaseGoesAwayStaysParked) {
    test_cluster db;
    broker_process b(db.conninfo());
    http_client c = client_of(b);
    const std::string q = unique_name("claim-in-flight");
    configure_queue(c, q);

    PGconn* holder = PQconnectdb(db.conninfo().c_str());
    ASSERT_EQ(PQstatus(holder), CONNECTION_OK);
    PQclear(PQexec(holder, "BEGIN"));
    PQclear(PQexec(holder, "LOCK TABLE queen.queues IN ACCESS EXCLUSIVE MODE"));
    auto polled = std::async(std::launch::async, [&] {
        http_client d = client_of(b);
        return pop(d, q, "wait=true&timeout=30000");
    });
    const bool claiming = eventually(
        [&] {
            return db.run_sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE "
                              "'%queen.pop%'") != "0";
        },
        20s);
    ASSERT_TRUE(claiming) << "the poll's claim never reached the database";
    db.stop();  // the claim's backend is terminated while it waits
    PQfinish(holder);
    EXPECT_NE(polled.wait_for(500ms), std::future_status::ready)
        << "the poll answered during the outage: " << polled.get().status;
    db.start();
    EXPECT_TRUE(eventually([&] { return c.get("/health").status == 200; }, 20s));
    push_payloads(c, q, "", {json{{"after", "outage"}}});
    const http_reply r = polled.get();
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["messages"][0]["data"], (json{{"after", "outage"}}));
}

}  // namespace
}  // namespace queen::test
