// HTTPS (docs/security.md, "TLS"): with QUEEN_TLS_CERT and QUEEN_TLS_KEY the broker serves
// HTTPS only, to curl trusting a root the test made; TLS 1.1 and plain HTTP get no answer;
// with QUEEN_TLS_CLIENT_CA a client without a certificate of that root is refused; SIGHUP
// serves replaced files to new connections while an open long-poll still gets its message;
// bad files refuse the start, and on SIGHUP keep the certificate in use.
#include "http/tls_context.hpp"
#include "test_env.hpp"
#include "tls_support.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <signal.h>

#include <future>
#include <thread>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A root "ca" and the server certificate "server" (CN=queen-server-1) it signed.
struct server_pki : tls::pki {
    server_pki() {
        make_ca("ca");
        make_leaf("server", "queen-server-1", "0x1001", "serverAuth", "ca");
    }
};

std::map<std::string, std::string> tls_env(const tls::pki& p) {
    return {{"QUEEN_TLS_CERT", p.crt("server").string()}, {"QUEEN_TLS_KEY", p.key("server").string()}};
}

// The URL of `target` on b, quoted for the shell.
std::string https(const broker_process& b, const std::string& target) {
    return "'https://127.0.0.1:" + std::to_string(b.port()) + target + "'";
}

// curl options that trust the test root.
std::string trusting(const tls::pki& p) {
    return "--cacert " + p.crt("ca").string() + " ";
}

// POSTs one message with `payload` to `queue` over HTTPS; the curl reply.
tls::curl_reply push_over_https(const tls::pki& p, const broker_process& b, const std::string& queue,
                                const json& payload) {
    const auto body = p.file(queue + ".json");
    std::ofstream(body) << json{{"items", json::array({json{{"queue", queue}, {"payload", payload}}})}}.dump();
    return tls::curl(trusting(p) + "-H 'Content-Type: application/json' --data-binary @" + body.string() + " " +
                     https(b, "/api/v1/push"));
}

// queen_http_requests_in_flight as the broker reports it over HTTPS (this scrape included).
double requests_in_flight(const tls::pki& p, const broker_process& b) {
    auto r = tls::curl(trusting(p) + https(b, "/metrics/prometheus"));
    const std::string name = "\nqueen_http_requests_in_flight ";
    const auto at = r.body.find(name);
    return at == std::string::npos ? 0 : std::atof(r.body.c_str() + at + name.size());
}

TEST(Tls, PushThenPopOverHttpsDeliversThePayload) {
    server_pki p;
    broker_process b(cluster().conninfo(), tls_env(p));
    EXPECT_NE(b.log().find("listening on https://127.0.0.1:"), std::string::npos) << b.log();
    const auto q = unique_name("tls-pushpop");
    auto pushed = push_over_https(p, b, q, json{{"secret", "over tls"}});
    ASSERT_EQ(pushed.exit, 0);
    ASSERT_EQ(pushed.status, 201) << pushed.body;
    auto popped = tls::curl(trusting(p) + https(b, "/api/v1/pop/queue/" + url_encode(q)));
    ASSERT_EQ(popped.status, 200) << popped.body;
    auto messages = json::parse(popped.body)["messages"];
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0]["data"], json({{"secret", "over tls"}}));
    EXPECT_NE(tls::served_subject(b.port()).find("CN = queen-server-1"), std::string::npos);
}

TEST(Tls, UntrustingPlainHttpAndTls11ClientsGetNoAnswer) {
    server_pki p;
    broker_process b(cluster().conninfo(), tls_env(p));
    auto untrusting = tls::curl(https(b, "/health"));
    EXPECT_EQ(untrusting.exit, 60) << "curl could not verify the test root";
    auto plain = tls::curl("http://127.0.0.1:" + std::to_string(b.port()) + "/health");
    EXPECT_NE(plain.exit, 0);
    EXPECT_EQ(plain.status, 0) << plain.body;
    auto tls11 = tls::curl(trusting(p) + "--tlsv1.1 --tls-max 1.1 " + https(b, "/health"));
    EXPECT_NE(tls11.exit, 0);
    EXPECT_EQ(tls11.status, 0);
    auto tls12 = tls::curl(trusting(p) + "--tlsv1.2 --tls-max 1.2 " + https(b, "/health"));
    EXPECT_EQ(tls12.status, 200) << "TLS 1.2 is accepted";
    // The server's own refusal: this client offers TLS 1.1 with every cipher allowed.
    const std::string s_client = "openssl s_client -connect 127.0.0.1:" + std::to_string(b.port()) +
                                 " -cipher 'DEFAULT:@SECLEVEL=0' </dev/null 2>&1";
    auto old = run_shell(s_client + " -tls1_1");
    EXPECT_NE(old.status, 0) << old.out;
    auto current = run_shell(s_client + " -tls1_2");
    EXPECT_EQ(current.status, 0) << current.out;
    EXPECT_NE(current.out.find("TLSv1.2"), std::string::npos) << current.out;
}

TEST(Tls, MutualTlsRefusesAClientWithoutACertificateOfTheClientRoot) {
    server_pki p;
    p.make_leaf("client", "queen-client", "0x3003", "clientAuth", "ca");
    p.make_ca("other");
    p.make_leaf("stranger", "queen-stranger", "0x4004", "clientAuth", "other");
    auto env = tls_env(p);
    env["QUEEN_TLS_CLIENT_CA"] = p.crt("ca").string();
    broker_process b(cluster().conninfo(), env);
    auto anonymous = tls::curl(trusting(p) + https(b, "/health"));
    EXPECT_NE(anonymous.exit, 0);
    EXPECT_EQ(anonymous.status, 0) << anonymous.body;
    auto stranger = tls::curl(trusting(p) + "--cert " + p.crt("stranger").string() + " --key " +
                              p.key("stranger").string() + " " + https(b, "/health"));
    EXPECT_NE(stranger.exit, 0);
    EXPECT_EQ(stranger.status, 0) << stranger.body;
    auto known = tls::curl(trusting(p) + "--cert " + p.crt("client").string() + " --key " + p.key("client").string() +
                           " " + https(b, "/health"));
    EXPECT_EQ(known.exit, 0);
    EXPECT_EQ(known.status, 200) << known.body;
}

TEST(Tls, SighupServesReplacedFilesToNewConnectionsAndKeepsOpenOnes) {
    server_pki p;
    broker_process b(cluster().conninfo(), tls_env(p));
    ASSERT_NE(tls::served_subject(b.port()).find("CN = queen-server-1"), std::string::npos);
    const auto q = unique_name("tls-reload");
    auto parked = std::async(std::launch::async, [&] {
        return tls::curl(trusting(p) + https(b, "/api/v1/pop/queue/" + url_encode(q) + "?wait=true&timeout=30000"));
    });
    ASSERT_TRUE(eventually([&] { return requests_in_flight(p, b) >= 2; })) << "the pop parked";

    p.make_leaf("next", "queen-server-2", "0x2002", "serverAuth", "ca");
    std::filesystem::rename(p.crt("next"), p.crt("server"));
    std::filesystem::rename(p.key("next"), p.key("server"));
    ::kill(b.pid(), SIGHUP);
    ASSERT_TRUE(eventually([&] { return b.log().find("TLS certificate reloaded") != std::string::npos; })) << b.log();
    EXPECT_NE(b.log().find("subject=CN=queen-server-2, serial=2002"), std::string::npos) << b.log();
    EXPECT_NE(tls::served_subject(b.port()).find("CN = queen-server-2"), std::string::npos);

    auto pushed = push_over_https(p, b, q, json{{"after", "reload"}});
    ASSERT_EQ(pushed.status, 201) << pushed.body;
    ASSERT_EQ(parked.wait_for(20s), std::future_status::ready);
    auto woken = parked.get();
    ASSERT_EQ(woken.status, 200) << "the connection opened before the reload still answers: " << woken.body;
    auto messages = json::parse(woken.body)["messages"];
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0]["data"], json({{"after", "reload"}}));

    // A broken file keeps the certificate in use.
    std::ofstream(p.crt("server")) << "not a certificate\n";
    ::kill(b.pid(), SIGHUP);
    EXPECT_TRUE(eventually([&] { return b.log().find("stays in use") != std::string::npos; })) << b.log();
    EXPECT_NE(tls::served_subject(b.port()).find("CN = queen-server-2"), std::string::npos);
    EXPECT_EQ(tls::curl(trusting(p) + https(b, "/health")).status, 200);
}

// The context itself, independent of the system's OpenSSL defaults (which may refuse old
// protocols on their own): TLS 1.2 minimum, client certificates required only with a client CA.
TEST(Tls, ContextSetsTls12MinimumAndRequiresClientCertificatesWithAClientCa) {
    server_pki p;
    auto server_only = http::make_tls_context({p.crt("server").string(), p.key("server").string(), ""});
    EXPECT_EQ(SSL_CTX_get_min_proto_version(server_only->native_handle()), TLS1_2_VERSION);
    EXPECT_EQ(SSL_CTX_get_verify_mode(server_only->native_handle()), SSL_VERIFY_NONE);
    EXPECT_NE(http::describe_certificate(*server_only).find("subject=CN=queen-server-1, serial=1001, notAfter="),
              std::string::npos);
    auto mutual = http::make_tls_context({p.crt("server").string(), p.key("server").string(), p.crt("ca").string()});
    EXPECT_EQ(SSL_CTX_get_min_proto_version(mutual->native_handle()), TLS1_2_VERSION);
    EXPECT_EQ(SSL_CTX_get_verify_mode(mutual->native_handle()), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
}

// The start-up log of a broker that was expected to refuse to start ("" when it started).
std::string refusal_of(const std::map<std::string, std::string>& env) {
    try {
        broker_process b(cluster().conninfo(), env);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

TEST(Tls, UnusableFilesRefuseTheStartNamingTheSetting) {
    server_pki p;
    p.make_leaf("other", "queen-other", "0x5005", "serverAuth", "ca");
    std::ofstream(p.file("garbage.pem")) << "not a certificate\n";
    const auto crt = p.crt("server").string(), key = p.key("server").string();

    auto no_key = refusal_of({{"QUEEN_TLS_CERT", crt}});
    EXPECT_NE(no_key.find("QUEEN_TLS_KEY is not"), std::string::npos) << no_key;
    auto missing = refusal_of({{"QUEEN_TLS_CERT", p.file("absent.crt").string()}, {"QUEEN_TLS_KEY", key}});
    EXPECT_NE(missing.find("cannot be read"), std::string::npos) << missing;
    auto garbage = refusal_of({{"QUEEN_TLS_CERT", p.file("garbage.pem").string()}, {"QUEEN_TLS_KEY", key}});
    EXPECT_NE(garbage.find("holds no usable PEM certificate chain"), std::string::npos) << garbage;
    auto mismatch = refusal_of({{"QUEEN_TLS_CERT", crt}, {"QUEEN_TLS_KEY", p.key("other").string()}});
    EXPECT_NE(mismatch.find("QUEEN_TLS_KEY '" + p.key("other").string() + "'"), std::string::npos) << mismatch;
    auto bad_ca = refusal_of(
        {{"QUEEN_TLS_CERT", crt}, {"QUEEN_TLS_KEY", key}, {"QUEEN_TLS_CLIENT_CA", p.file("garbage.pem").string()}});
    EXPECT_NE(bad_ca.find("QUEEN_TLS_CLIENT_CA"), std::string::npos) << bad_ca;
}

}  // namespace
}  // namespace queen::test
