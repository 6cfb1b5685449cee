// HTTP framing and browser requests from hostile clients, through a real broker
// (docs/security.md, "Hostile clients" and "Browsers and CORS"):
//
// - BodiesOnRoutesThatTakeNone: a request with a body to a route that reads none (every GET,
//   HEAD and DELETE route, the public ones included) is answered 400 with Connection: close and
//   never "100 Continue"; 16 clients each sending such a 60 MB body leave the broker's memory
//   within 16 x (header limit + 64 KiB) + 8 MiB of idle.
// - DnsRebinding: with auth off, a browser request that addresses the broker by a foreign name
//   is refused 403 and changes nothing; the broker's own names and requests without browser
//   headers are served.
// - TransferEncoding: a request framed by a coding other than a final chunked, or by chunked in
//   HTTP/1.0, is answered 400 and its connection closed before a pipelined request is read.
#include "auth_support.hpp"
#include "raw_connection.hpp"
#include "test_env.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace auth = auth_support;

std::map<std::string, std::string> auth_env() {
    return {{"JWT_ENABLED", "true"}, {"JWT_ALGORITHM", "HS256"}, {"JWT_SECRET", auth::secret}};
}

// A request line and header for `target` that announces a body of `length` bytes.
std::string with_body_header(const std::string& method, const std::string& target, unsigned short port,
                             std::size_t length, const std::string& extra = "") {
    return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
           "\r\nContent-Length: " + std::to_string(length) + "\r\n" + extra + "\r\n";
}

// A text/plain push (a "simple" request a browser sends without a preflight) with these extra
// header lines, on its own connection; the broker's raw answer.
std::string browser_push(unsigned short port, const std::string& queue, const std::string& host,
                         const std::string& extra) {
    const std::string body = auth::push_body(queue);
    raw_connection c(port);
    c.send_all("POST /api/v1/push HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: text/plain\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n" + extra + "Connection: close\r\n\r\n" + body);
    return c.receive();
}

}  // namespace

TEST(HostileHttp, BodiesOnRoutesThatTakeNoneAreRefusedUnreadWithoutHundredContinue) {
    broker_process b(cluster().conninfo(), auth_env());
    const std::string q = unique_name("no-body-routes");
    for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
             {"GET", "/health"},
             {"GET", "/api/v1/openapi.json"},
             {"GET", "/assets/app.js"},
             {"GET", "/"},
             {"GET", "/queues/some-dashboard-route"},
             {"GET", "/metrics"},
             {"HEAD", "/health"},
             {"DELETE", "/api/v1/resources/queues/" + q}}) {
        SCOPED_TRACE(method + " " + target);
        raw_connection c(b.port());
        ASSERT_TRUE(c.send_all(with_body_header(method, target, b.port(), 60u << 20, "Expect: 100-continue\r\n")));
        const std::string answer = c.receive();
        EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer.substr(0, 300);
        EXPECT_EQ(answer.find("100 Continue"), std::string::npos) << answer.substr(0, 300);
        EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer.substr(0, 300);
        if (method != "HEAD") {
            EXPECT_NE(answer.find("takes no request body"), std::string::npos) << answer;
        }
    }
    // Without a body the same routes answer as before, on a kept-alive connection.
    http_client c = client_of(b);
    EXPECT_EQ(c.get("/health").status, 200);
    EXPECT_EQ(c.get("/api/v1/openapi.json").status, 200);
    EXPECT_EQ(c.request("DELETE", "/api/v1/resources/queues/" + q, "").status, 401);
    // A route that reads a body still gets "100 Continue" once it has admitted the request.
    const auto token = jwt::token("HS256", jwt::claims("producer", "read-write"), nullptr, auth::secret);
    const std::string body = auth::push_body(q);
    raw_connection pusher(b.port());
    ASSERT_TRUE(pusher.send_all(with_body_header("POST", "/api/v1/push", b.port(), body.size(),
                                                 "Authorization: Bearer " + token +
                                                     "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n")));
    EXPECT_EQ(pusher.receive(3000ms, true).rfind("HTTP/1.1 100 Continue", 0), 0u);
    ASSERT_TRUE(pusher.send_all(body));
    EXPECT_NE(pusher.receive(1000ms).find("201 Created"), std::string::npos);
    EXPECT_EQ(auth::stored_messages(q), 1);
}

TEST(HostileHttp, SixteenSixtyMegabyteBodiesToHealthStayOutOfMemory) {
    broker_process b(cluster().conninfo(), auth_env());
    std::this_thread::sleep_for(500ms);  // start-up settled
    const long idle = rss_kib(b.pid());
    const std::size_t sixty_mb = (60u << 20) - 1;
    std::atomic<int> refused{0};
    const long peak = peak_rss_kib_during(b.pid(), [&] {
        std::vector<std::thread> senders;
        for (int i = 0; i < 16; ++i)
            senders.emplace_back([&] {
                raw_connection c(b.port());
                const std::string chunk(1u << 20, ' ');
                if (!c.send_all(with_body_header("GET", "/health", b.port(), sixty_mb))) return;
                for (std::size_t sent = 0; sent < sixty_mb; sent += chunk.size())
                    if (!c.send_all(chunk)) break;
                if (c.receive(2000ms, true).rfind("HTTP/1.1 400", 0) == 0) ++refused;
            });
        for (auto& t : senders) t.join();
    });
    const long bound_kib = 16 * (64 + 64) + 8 * 1024;  // 16 x (header limit + one 64 KiB read) + 8 MiB
    std::printf("16 bodies to /health: idle %ld KiB, peak %ld KiB (+%ld KiB, bound +%ld KiB), %d answers read as 400\n",
                idle, peak, peak - idle, bound_kib, refused.load());
    EXPECT_LE(peak - idle, bound_kib);
    http_client c = client_of(b);
    EXPECT_EQ(c.get("/health").status, 200);
}

TEST(HostileHttp, DnsRebindingIsRefusedWhileAuthIsOff) {
    broker_process b(cluster().conninfo(), {{"QUEEN_ALLOWED_HOSTS", "broker.test"}});
    const std::string port = std::to_string(b.port());
    const std::string q = unique_name("rebinding");
    // A page of evil.example whose name now resolves to the broker.
    std::string answer =
        browser_push(b.port(), q, "evil.example:" + port, "Origin: http://evil.example:" + port + "\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer.substr(0, 300);
    EXPECT_NE(answer.find("the host evil.example:" + port + " is not a name of this broker"), std::string::npos)
        << answer;
    // A navigation or a no-cors fetch carries Sec-Fetch-Site without Origin.
    answer = browser_push(b.port(), q, "evil.example:" + port, "Sec-Fetch-Site: cross-site\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer.substr(0, 300);
    // The listener is plain HTTP: an https origin is not the broker's own.
    answer = browser_push(b.port(), q, "127.0.0.1:" + port, "Origin: https://127.0.0.1:" + port + "\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 403", 0), 0u) << answer.substr(0, 300);
    EXPECT_EQ(auth::stored_messages(q), 0) << "a refused browser request stored a message";

    // The broker's own names: IP literals, localhost, QUEEN_ALLOWED_HOSTS.
    for (const std::string& host : {"127.0.0.1:" + port, "localhost:" + port, "broker.test:" + port, "[::1]:" + port}) {
        answer = browser_push(b.port(), q, host, "Origin: http://" + host + "\r\nSec-Fetch-Site: same-origin\r\n");
        EXPECT_EQ(answer.rfind("HTTP/1.1 201", 0), 0u) << host << ": " << answer.substr(0, 300);
    }
    // Clients without browser headers (curl, SDKs, a load balancer's DNS name) are unaffected.
    answer = browser_push(b.port(), q, "queen.internal.example:" + port, "");
    EXPECT_EQ(answer.rfind("HTTP/1.1 201", 0), 0u) << answer.substr(0, 300);
    EXPECT_EQ(auth::stored_messages(q), 5);

    // With auth on, a token is what admits a request: the Host rule does not apply.
    broker_process secured(cluster().conninfo(), auth_env());
    const auto token = jwt::token("HS256", jwt::claims("producer", "read-write"), nullptr, auth::secret);
    const std::string secured_port = std::to_string(secured.port());
    answer = browser_push(secured.port(), q, "queen.example:" + secured_port,
                          "Origin: http://queen.example:" + secured_port + "\r\nAuthorization: Bearer " + token + "\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 201", 0), 0u) << answer.substr(0, 300);
    EXPECT_EQ(auth::stored_messages(q), 6);

    EXPECT_THROW(broker_process(cluster().conninfo(), {{"QUEEN_ALLOWED_HOSTS", "broker.test:6632"}}),
                 std::runtime_error);
}

TEST(HostileHttp, TransferEncodingOtherThanAFinalChunkedIsRefusedAndTheConnectionClosed) {
    const unsigned short port = broker().port();
    const std::string q = unique_name("framing");
    const std::string body = auth::push_body(q);
    const std::string next = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    auto framed = [&](const std::string& version, const std::string& fields) {
        raw_connection c(port);
        c.send_all("POST /api/v1/push " + version + "\r\nHost: 127.0.0.1:" + std::to_string(port) +
                   "\r\nContent-Type: application/json\r\n" + fields + "\r\n" + body + next);
        return c.receive();
    };
    for (const auto& [version, fields, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"HTTP/1.1", "Transfer-Encoding: gzip\r\nContent-Length: " + std::to_string(body.size()) + "\r\n",
              "both Transfer-Encoding and Content-Length"},
             {"HTTP/1.1", "Transfer-Encoding: identity\r\n", "Transfer-Encoding identity is not supported"},
             {"HTTP/1.1", "Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding gzip is not supported"},
             {"HTTP/1.1", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding"},
             {"HTTP/1.0", "Transfer-Encoding: chunked\r\n", "not allowed in an HTTP/1.0 request"}}) {
        SCOPED_TRACE(version + " " + fields);
        const std::string answer = framed(version, fields);
        EXPECT_NE(answer.find(" 400 "), std::string::npos) << answer.substr(0, 300);
        EXPECT_NE(answer.find(why), std::string::npos) << answer.substr(0, 300);
        EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer.substr(0, 300);
        EXPECT_EQ(answer.find("HTTP/1.1 200"), std::string::npos) << "the pipelined request was served:\n" << answer;
    }
    EXPECT_EQ(auth::stored_messages(q), 0);
    // A chunked body in HTTP/1.1 is read as before.
    std::string chunked = "POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", body.size());
    chunked += size + body + "\r\n0\r\n\r\n";
    raw_connection c(port);
    c.send_all(chunked);
    EXPECT_EQ(c.receive().rfind("HTTP/1.1 201", 0), 0u);
    EXPECT_EQ(auth::stored_messages(q), 1);
}

}  // namespace queen::test
