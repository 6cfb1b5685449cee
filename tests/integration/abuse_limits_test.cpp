// The abuse limits (config/abuse_limits.hpp, docs/security.md "Abuse limits"), each through a
// real broker: open connections and parked long-polls per client address (429), header size
// and field count (431), and the request rate per token subject (429 with Retry-After). A
// refused request changes nothing.
#include "auth_support.hpp"

#include <gtest/gtest.h>

#include <future>
#include <sstream>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace auth_support;
using namespace std::chrono_literals;

TEST(AbuseLimits, AClientAddressHoldsAtMostItsConnections) {
    broker_process b(cluster().conninfo(), {{"QUEEN_MAX_CONNECTIONS_PER_CLIENT", "2"}});
    auto first = client_of(b);
    auto second = client_of(b);
    ASSERT_EQ(first.get("/health").status, 200);
    // The start-up check's connection may not be gone yet: a refused request closes second's
    // connection and the next one opens another.
    ASSERT_TRUE(eventually([&] { return second.get("/health").status == 200; }));

    const auto q = unique_name("abuse-conn");
    auto third = client_of(b);
    auto refused = third.post("/api/v1/push", push_body(q));
    EXPECT_EQ(refused.status, 429) << refused.body;
    EXPECT_EQ(refused.headers["retry-after"], "1");
    EXPECT_EQ(refused.headers["connection"], "close");
    EXPECT_NE(error_of(refused).find("too many open connections"), std::string::npos) << refused.body;
    EXPECT_EQ(stored_messages(q), 0);

    // Both kept-alive connections still work; once one closes, a new one is admitted.
    EXPECT_EQ(first.get("/health").status, 200);
    first.close();
    ASSERT_TRUE(eventually([&] { return client_of(b).post("/api/v1/push", push_body(q)).status == 201; }));
    EXPECT_EQ(stored_messages(q), 1);
    EXPECT_EQ(second.get("/health").status, 200);
}

TEST(AbuseLimits, AClientAddressParksAtMostItsLongPolls) {
    broker_process b(cluster().conninfo(), {{"QUEEN_MAX_LONGPOLLS_PER_CLIENT", "1"}});
    const auto q = unique_name("abuse-poll");
    auto setup = client_of(b);
    // The queue exists, empty, so the long-poll parks.
    ASSERT_EQ(setup.post("/api/v1/configure", json{{"queue", q}}).status, 200);

    auto parked = std::async(std::launch::async, [&] {
        auto c = client_of(b);
        return pop(c, q, "wait=true&timeout=30000&autoAck=true");
    });
    auto other = client_of(b);
    // Parked: the scrape sees two requests in flight, itself and the long-poll.
    ASSERT_TRUE(eventually([&] {
        return other.get("/metrics/prometheus").body.find("queen_http_requests_in_flight 2") != std::string::npos;
    }));
    auto refused = pop(other, q, "wait=true&timeout=100");
    EXPECT_EQ(refused.status, 429) << refused.body;
    EXPECT_EQ(refused.headers["retry-after"], "1");
    EXPECT_NE(error_of(refused).find("too many parked long-polls"), std::string::npos) << refused.body;
    // A pop that does not wait is not limited.
    EXPECT_EQ(pop(other, q, "wait=false").status, 204);

    push_payloads(setup, q, "", {json{{"n", 7}}});
    auto delivered = parked.get();
    ASSERT_EQ(delivered.status, 200) << delivered.body;
    EXPECT_EQ(delivered.json()["messages"][0]["data"], json({{"n", 7}}));

    // The answered long-poll gave its slot back.
    push_payloads(setup, q, "", {json{{"n", 8}}});
    auto next = pop(other, q, "wait=true&timeout=5000");
    ASSERT_EQ(next.status, 200) << next.body;
    EXPECT_EQ(next.json()["messages"][0]["data"], json({{"n", 8}}));
}

TEST(AbuseLimits, AHeaderOverItsSizeOrFieldCountIsRefused431) {
    broker_process b(cluster().conninfo(), {{"QUEEN_MAX_HEADER_BYTES", "2048"}, {"QUEEN_MAX_HEADER_COUNT", "10"}});
    const auto q = unique_name("abuse-header");
    auto c = client_of(b);

    auto big = c.request("POST", "/api/v1/push", push_body(q), {{"X-Padding", std::string(3000, 'a')}});
    EXPECT_EQ(big.status, 431) << big.body;
    EXPECT_EQ(error_of(big), "request header exceeds the limit of 2048 bytes");

    std::map<std::string, std::string> many;
    for (int i = 0; i < 12; ++i) many["X-Field-" + std::to_string(i)] = "v";
    auto counted = c.request("POST", "/api/v1/push", push_body(q), many);
    EXPECT_EQ(counted.status, 431) << counted.body;
    EXPECT_NE(error_of(counted).find("more than the limit of 10"), std::string::npos) << counted.body;
    EXPECT_EQ(stored_messages(q), 0);
    // Both are counted, as answered by the session itself.
    const auto scrape = c.get("/metrics/prometheus").body;
    std::istringstream lines(scrape);
    std::string refused_line;
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("queen_http_requests_total{", 0) == 0 && line.find("route=\"refused\"") != std::string::npos &&
            line.find("status=\"431\"") != std::string::npos)
            refused_line = line;
    EXPECT_EQ(refused_line.substr(refused_line.rfind(' ') + 1), "2") << scrape;

    // Within both limits (Host, Content-Type, Content-Length and a few more).
    std::map<std::string, std::string> few{{"X-A", std::string(1000, 'a')}, {"X-B", "b"}};
    auto fine = c.request("POST", "/api/v1/push", push_body(q), few);
    EXPECT_EQ(fine.status, 201) << fine.body;
    EXPECT_EQ(stored_messages(q), 1);
}

TEST(AbuseLimits, EachTokenSubjectHasItsOwnRequestRate) {
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_SECRET", secret},
                                            {"QUEEN_RATE_LIMIT_PER_SECOND", "1"},
                                            {"QUEEN_RATE_LIMIT_BURST", "3"}});
    auto c = client_of(b);
    const auto alice = jwt::token("HS256", jwt::claims("alice", "read-write"), nullptr, secret);
    const auto bob = jwt::token("HS256", jwt::claims("bob", "read-write"), nullptr, secret);
    const auto q = unique_name("abuse-rate");

    // alice sends 10 pushes at once: her burst of 3 passes, plus at most one a second.
    const auto started = std::chrono::steady_clock::now();
    int admitted = 0;
    http_reply refused;
    for (int i = 0; i < 10; ++i) {
        auto r = send(c, "POST", "/api/v1/push", alice, push_body(q));
        if (r.status == 201) ++admitted;
        else refused = r;
    }
    const auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_GE(admitted, 3);
    EXPECT_LE(admitted, 3 + static_cast<int>(elapsed) + 1);
    ASSERT_EQ(refused.status, 429) << refused.body;
    ASSERT_TRUE(refused.has_header("retry-after"));
    EXPECT_GE(std::stoi(refused.headers["retry-after"]), 1);
    EXPECT_NE(error_of(refused).find("rate limit"), std::string::npos) << refused.body;
    // Refused pushes stored nothing.
    EXPECT_EQ(stored_messages(q), admitted);

    // bob has his own bucket, and public routes are not counted.
    EXPECT_EQ(send(c, "POST", "/api/v1/push", bob, push_body(q)).status, 201);
    EXPECT_EQ(c.get("/health").status, 200);
    EXPECT_EQ(stored_messages(q), admitted + 1);

    // alice is admitted again once her bucket refilled.
    std::this_thread::sleep_for(std::chrono::seconds(std::stoi(refused.headers["retry-after"])));
    EXPECT_EQ(send(c, "POST", "/api/v1/push", alice, push_body(q)).status, 201);
}

}  // namespace
}  // namespace queen::test
