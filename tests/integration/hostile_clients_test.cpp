// Hostile clients through a real broker (docs/security.md, "Hostile clients"): what any client
// can send without a credential must not cost the broker memory, descriptors or CPU it cannot
// bound, and must change nothing.
//
// - AuthBeforeBody: with auth on, a request is refused from its header, before any byte of
//   its body is read: no "100 Continue", Connection: close, and 8 clients sending 60 MB each
//   without a token leave the broker's memory where it was.
// - JsonValues / ParseBudget: a body is refused past QUEEN_MAX_JSON_VALUES (413) before a DOM
//   is built, and while the documents being parsed fill QUEEN_JSON_PARSE_BUDGET_BYTES another
//   body is answered 503 with Retry-After.
// - DescriptorExhaustion: out of descriptors, the accept loop backs off and logs once a
//   second instead of spinning, and serves again once descriptors free up.
// - Origins: a request from a web page of a foreign origin is refused (403) on every route
//   and changes nothing; same-origin pages and clients without Origin are unaffected.
#include "auth_support.hpp"
#include "raw_connection.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace auth = auth_support;

std::string push_header(unsigned short port, std::size_t content_length, const std::string& extra = "") {
    return "POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(content_length) + "\r\n" + extra +
           "\r\n";
}

std::map<std::string, std::string> auth_env() {
    return {{"JWT_ENABLED", "true"}, {"JWT_ALGORITHM", "HS256"}, {"JWT_SECRET", auth::secret}};
}

}  // namespace

TEST(HostileClients, AuthBeforeBodyRefusesFromTheHeaderWithoutHundredContinue) {
    broker_process b(cluster().conninfo(), auth_env());
    const std::size_t sixty_mb = 60u << 20;
    {
        // The client asks whether to send its body: it is told no, never "100 Continue".
        raw_connection c(b.port());
        ASSERT_TRUE(c.send_all(push_header(b.port(), sixty_mb, "Expect: 100-continue\r\n")));
        const std::string answer = c.receive();
        EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << answer.substr(0, 300);
        EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer.substr(0, 300);
        EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer.substr(0, 300);
        EXPECT_NE(answer.find("Authentication required"), std::string::npos) << answer.substr(0, 300);
    }
    {
        // A client that sends its body at once gets the refusal after its header, and the
        // connection ends instead of taking the rest.
        raw_connection c(b.port());
        ASSERT_TRUE(c.send_all(push_header(b.port(), sixty_mb) + std::string(64 * 1024, ' ')));
        const std::string answer = c.receive(3000ms, true);
        EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << answer.substr(0, 300);
        EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer.substr(0, 300);
        bool closed = false;
        for (std::size_t sent = 0; sent < sixty_mb && !closed; sent += 1u << 20)
            closed = !c.send_all(std::string(1u << 20, ' '));
        EXPECT_TRUE(closed) << "the broker read a whole 60 MB body it had refused";
    }
    // A bodiless request refused keeps its connection; an admitted one is served as before.
    http_client c = client_of(b);
    EXPECT_EQ(auth::send(c, "GET", "/api/v1/resources/queues", "").status, 401);
    const auto q = unique_name("auth-before-body");
    const auto token = jwt::token("HS256", jwt::claims("producer-7", "read-write"), nullptr, auth::secret);
    auto pushed = auth::send(c, "POST", "/api/v1/push", token, auth::push_body(q));
    ASSERT_EQ(pushed.status, 201) << pushed.body;
    auto popped = auth::send(c, "GET", "/api/v1/pop/queue/" + q, token);
    ASSERT_EQ(popped.status, 200) << popped.body;
    EXPECT_EQ(popped.json()["messages"][0]["producerSub"], "producer-7");
}

TEST(HostileClients, AuthBeforeBodyKeepsEightSixtyMegabyteUploadsOutOfMemory) {
    broker_process b(cluster().conninfo(), auth_env());
    const auto q = unique_name("no-token-flood");
    const std::size_t sixty_mb = 60u << 20;
    std::this_thread::sleep_for(500ms);  // start-up settled
    const long idle = rss_kib(b.pid());
    std::atomic<int> refused{0};
    const long peak = peak_rss_kib_during(b.pid(), [&] {
        std::vector<std::thread> senders;
        for (int i = 0; i < 8; ++i)
            senders.emplace_back([&] {
                raw_connection c(b.port());
                const std::string chunk(1u << 20, ' ');
                if (!c.send_all(push_header(b.port(), sixty_mb))) return;
                for (std::size_t sent = 0; sent < sixty_mb; sent += chunk.size())
                    if (!c.send_all(chunk)) break;
                if (c.receive(2000ms, true).rfind("HTTP/1.1 401", 0) == 0) ++refused;
            });
        for (auto& t : senders) t.join();
    });
    const long grown_mib = (peak - idle) / 1024;
    std::printf("no-token flood: idle %ld KiB, peak %ld KiB (+%ld MiB), %d of 8 answers read as 401\n", idle, peak,
                grown_mib, refused.load());
    EXPECT_LT(grown_mib, 64) << "8 refused 60 MB bodies grew the broker by " << grown_mib << " MiB";
    EXPECT_EQ(auth::stored_messages(q), 0);
    http_client c = client_of(b);
    EXPECT_EQ(c.get("/health").status, 200);
}

TEST(HostileClients, JsonValuesPastTheCapAre413BeforeADocumentIsBuilt) {
    broker_process b(cluster().conninfo());
    std::this_thread::sleep_for(500ms);
    const long idle = rss_kib(b.pid());
    const auto q = unique_name("json-values");
    // 6 million empty arrays in one payload (18 MiB): 530 MB of DOM before the cap.
    std::string arrays = "[";
    arrays.reserve(6'000'000 * 3 + 2);
    for (int i = 0; i < 6'000'000; ++i) arrays += i ? ",[]" : "[]";
    arrays += "]";
    const std::string body = R"({"items":[{"queue":")" + q + R"(","payload":)" + arrays + "}]}";
    http_reply r;
    const long peak = peak_rss_kib_during(b.pid(), [&] {
        http_client c = client_of(b);
        r = c.post("/api/v1/push", body);
    });
    EXPECT_EQ(r.status, 413) << r.body.substr(0, 300);
    EXPECT_NE(auth::error_of(r).find("more than 1000000 JSON values"), std::string::npos) << r.body.substr(0, 300);
    const long grown_mib = (peak - idle) / 1024;
    std::printf("6M empty arrays (%zu MiB body): +%ld MiB peak\n", body.size() >> 20, grown_mib);
    // The body itself is held while it is read and scanned; no document is built.
    EXPECT_LT(grown_mib, static_cast<long>(body.size() >> 20) * 3 + 32);
    EXPECT_EQ(auth::stored_messages(q), 0);

    // Below the cap the same shape is parsed and stored as sent.
    http_client c = client_of(b);
    std::string few = "[";
    for (int i = 0; i < 1000; ++i) few += i ? ",[]" : "[]";
    few += "]";
    auto ok = c.post("/api/v1/push", R"({"items":[{"queue":")" + q + R"(","payload":)" + few + "}]}");
    ASSERT_EQ(ok.status, 201) << ok.body;
    auto popped = pop(c, q);
    ASSERT_EQ(popped.status, 200);
    EXPECT_EQ(popped.json()["messages"][0]["data"].size(), 1000u);
}

TEST(HostileClients, ParseBudgetAnswers503WhileItIsFullAndNothingIsStored) {
    broker_process b(cluster().conninfo(), {{"QUEEN_JSON_PARSE_BUDGET_BYTES", "1048576"}});
    http_client c = client_of(b);
    const auto slow_q = unique_name("budget-held");
    const auto q = unique_name("budget-refused");
    ASSERT_EQ(c.post("/api/v1/push", auth::push_body(slow_q)).status, 201);  // its partition exists
    // Another session holds the partition's row: a push to it waits inside its handler,
    // holding its parsed document (1.2 MB of payload: more than the whole budget, so it is
    // parsed only because nothing else is).
    PGconn* holder = PQconnectdb(cluster().conninfo().c_str());
    ASSERT_EQ(PQstatus(holder), CONNECTION_OK);
    auto exec = [&](const std::string& sql) { PQclear(PQexec(holder, sql.c_str())); };
    exec("BEGIN");
    exec("SELECT 1 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = " +
         quote(slow_q) + " FOR UPDATE");
    const std::string big = json{{"items", {{{"queue", slow_q}, {"payload", std::string(1'200'000, 'x')}}}}}.dump();
    auto held = std::async(std::launch::async, [&] {
        http_client d = client_of(b);
        return d.post("/api/v1/push", big);
    });
    const bool waiting = eventually(
        [&] {
            return sql_int(cluster(), "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query "
                                      "LIKE '%queen.push%'") > 0;
        },
        20s);
    EXPECT_TRUE(waiting) << "the big push never waited on the held row";
    auto refused = c.post("/api/v1/push", auth::push_body(q));
    EXPECT_EQ(refused.status, 503) << refused.body;
    EXPECT_EQ(refused.headers["retry-after"], "1");
    EXPECT_NE(auth::error_of(refused).find("memory budget"), std::string::npos) << refused.body;
    EXPECT_EQ(auth::stored_messages(q), 0);
    exec("COMMIT");
    PQfinish(holder);
    EXPECT_EQ(held.get().status, 201);
    EXPECT_EQ(c.post("/api/v1/push", auth::push_body(q)).status, 201);  // the budget is free again
    EXPECT_EQ(auth::stored_messages(q), 1);
}

TEST(HostileClients, DescriptorExhaustionBacksOffInsteadOfSpinning) {
    broker_process b(cluster().conninfo());
    EXPECT_NE(b.log().find("open files limit"), std::string::npos) << b.log();
    // The common soft limit, reached: 64 descriptors, and 80 idle clients.
    rlimit low{64, 64};
    ASSERT_EQ(::prlimit(b.pid(), RLIMIT_NOFILE, &low, nullptr), 0);
    {
        std::vector<std::unique_ptr<raw_connection>> idle;
        for (int i = 0; i < 80; ++i) idle.push_back(std::make_unique<raw_connection>(b.port()));
        std::this_thread::sleep_for(3s);
        const std::string log = b.log();
        std::size_t lines = 0;
        for (auto at = log.find("accept failed"); at != std::string::npos; at = log.find("accept failed", at + 1))
            ++lines;
        EXPECT_GE(lines, 1u) << "the limit was never reached";
        EXPECT_LE(lines, 8u) << "more than one line a second in 3 s:\n" << log.substr(log.size() - std::min<std::size_t>(log.size(), 2000));
        EXPECT_NE(log.find("Too many open files"), std::string::npos);
    }
    // The idle clients are gone: the broker serves again.
    EXPECT_TRUE(eventually([&] {
        try {
            http_client c = client_of(b);
            return c.get("/health").status == 200;
        } catch (...) {
            return false;
        }
    }));
}

TEST(HostileClients, ForeignOriginsAreRefusedOnEveryRouteAndChangeNothing) {
    const unsigned short port = broker().port();
    const std::string own = "http://127.0.0.1:" + std::to_string(port);
    http_client c = client();
    const auto q = unique_name("cors");
    ASSERT_EQ(c.post("/api/v1/configure", json{{"queue", q}}).status, 200);
    const std::map<std::string, std::string> evil{{"Origin", "http://evil.example"}};
    for (const auto& [method, target, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"POST", "/api/v1/push", auth::push_body(q)},
             {"GET", "/api/v1/pop/queue/" + q, ""},
             {"DELETE", "/api/v1/resources/queues/" + q, ""},
             {"POST", "/api/v1/system/maintenance", R"({"enabled":true})"},
             {"DELETE", "/api/v1/dlq?queue=" + q, ""},
             {"GET", "/api/v1/resources/queues", ""},
             {"OPTIONS", "/api/v1/push", ""},
             {"GET", "/api/v1/nope", ""}}) {
        auto r = c.request(method, target, body, evil);
        EXPECT_EQ(r.status, 403) << method << " " << target << ": " << r.body;
        EXPECT_NE(auth::error_of(r).find("http://evil.example"), std::string::npos) << r.body;
        EXPECT_FALSE(r.has_header("access-control-allow-origin")) << method << " " << target;
    }
    // A "simple" cross-origin POST a browser sends without a preflight (text/plain).
    const std::string body = auth::push_body(q);
    const std::string answer = c.raw("POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                     "\r\nOrigin: null\r\nContent-Type: text/plain\r\nContent-Length: " +
                                     std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer.substr(0, 300);
    EXPECT_EQ(auth::stored_messages(q), 0);
    EXPECT_FALSE(get_ok(c, "/api/v1/system/maintenance").value("maintenanceMode", true));
    EXPECT_EQ(c.get("/api/v1/resources/queues/" + q).status, 200);  // not deleted

    // The dashboard (its own origin), and clients that send no Origin, are served.
    auto same = c.request("POST", "/api/v1/push", body, {{"Origin", own}, {"Host", "127.0.0.1:" + std::to_string(port)}});
    EXPECT_EQ(same.status, 201) << same.body;
    auto plain = c.post("/api/v1/push", body);
    EXPECT_EQ(plain.status, 201) << plain.body;
    EXPECT_FALSE(plain.has_header("access-control-allow-origin"));
    EXPECT_EQ(auth::stored_messages(q), 2);
}

TEST(HostileClients, ListedOriginsGetCorsHeaders) {
    broker_process listed(cluster().conninfo(), {{"QUEEN_CORS_ORIGINS", "https://app.example, http://localhost:3000"}});
    http_client c = client_of(listed);
    const auto q = unique_name("cors-listed");
    auto preflight = c.request("OPTIONS", "/api/v1/push", "",
                               {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}});
    EXPECT_EQ(preflight.status, 204);
    EXPECT_EQ(preflight.headers["access-control-allow-origin"], "https://app.example");
    EXPECT_EQ(preflight.headers["vary"], "Origin");
    EXPECT_NE(preflight.headers["access-control-allow-methods"].find("DELETE"), std::string::npos);
    auto pushed = c.request("POST", "/api/v1/push", auth::push_body(q), {{"Origin", "http://localhost:3000"}});
    EXPECT_EQ(pushed.status, 201) << pushed.body;
    EXPECT_EQ(pushed.headers["access-control-allow-origin"], "http://localhost:3000");
    EXPECT_EQ(c.request("POST", "/api/v1/push", auth::push_body(q), {{"Origin", "https://evil.example"}}).status, 403);
    EXPECT_EQ(auth::stored_messages(q), 1);

    broker_process any(cluster().conninfo(), {{"QUEEN_CORS_ORIGINS", "*"}});
    http_client d = client_of(any);
    auto r = d.request("GET", "/health", "", {{"Origin", "https://anywhere.example"}});
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers["access-control-allow-origin"], "*");

    EXPECT_THROW(broker_process(cluster().conninfo(), {{"QUEEN_CORS_ORIGINS", "ftp://files.example"}}),
                 std::runtime_error);
}

}  // namespace queen::test

namespace queen::test {

// /api/v1/analytics/postgres-stats is read-only, but the statements it shows carry the
// literals of whoever sent them: another application's text is shown to admin only.
TEST(HostileClients, PostgresStatsShowOtherApplicationsStatementsToAdminOnly) {
    broker_process b(cluster().conninfo(), auth_env());
    http_client c = client_of(b);
    PGconn* other = PQconnectdb((cluster().conninfo() + " application_name=payroll").c_str());
    ASSERT_EQ(PQstatus(other), CONNECTION_OK);
    ASSERT_EQ(PQsendQuery(other, "SELECT pg_sleep(4), 'salary-of-alice-42'"), 1);
    const auto reader = jwt::token("HS256", jwt::claims("viewer", "read-only"), nullptr, auth::secret);
    const auto admin = jwt::token("HS256", jwt::claims("root", "admin"), nullptr, auth::secret);
    auto shown_to = [&](const std::string& token) {
        auto r = auth::send(c, "GET", "/api/v1/analytics/postgres-stats", token);
        EXPECT_EQ(r.status, 200) << r.body.substr(0, 300);
        return r.status == 200 && r.json()["activeQueries"].dump().find("salary-of-alice-42") != std::string::npos;
    };
    EXPECT_TRUE(eventually([&] { return shown_to(admin); }, 3s)) << "admin sees every application's statements";
    EXPECT_FALSE(shown_to(reader)) << "read-only sees only the broker's own statements";
    while (PGresult* res = PQgetResult(other)) PQclear(res);
    PQfinish(other);
}

}  // namespace queen::test
