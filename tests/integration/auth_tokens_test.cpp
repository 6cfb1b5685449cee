// Tokens end to end: every admitted algorithm from a PEM key and from a JWKS file; the
// refusals (tampered, expired, not yet valid, wrong issuer or audience, alg none, an
// algorithm or key type not admitted) with 401 and nothing stored; JWKS rotation by SIGHUP
// and at a URL; and the settings a broker refuses to start with.
#include "auth_support.hpp"
#include "tls_support.hpp"

#include <gtest/gtest.h>

namespace queen::test {
namespace {

using nlohmann::json;
using namespace auth_support;

struct keys {
    jwt::pkey rsa = jwt::generate("RSA");
    jwt::pkey p256 = jwt::generate("P-256");
    jwt::pkey p384 = jwt::generate("P-384");
    jwt::pkey ed25519 = jwt::generate("Ed25519");
};

const keys& test_keys() {
    static const keys k;
    return k;
}

struct signer {
    std::string alg;
    jwt::pkey key;
    std::string kid;
};

std::vector<signer> asymmetric_signers() {
    const auto& k = test_keys();
    return {{"RS256", k.rsa, "rsa"},   {"RS384", k.rsa, "rsa"},   {"RS512", k.rsa, "rsa"},
            {"ES256", k.p256, "p256"}, {"ES384", k.p384, "p384"}, {"EdDSA", k.ed25519, "ed"}};
}

std::string all_keys_jwks() {
    const auto& k = test_keys();
    return jwt::jwks_of({jwt::public_jwk(k.rsa, "rsa"), jwt::public_jwk(k.p256, "p256"),
                         jwt::public_jwk(k.p384, "p384"), jwt::public_jwk(k.ed25519, "ed")});
}

// POST /api/v1/push of one message with `token`; the reply.
http_reply push_with(http_client& c, const std::string& queue, const std::string& token) {
    return send(c, "POST", "/api/v1/push", token, push_body(queue));
}

void expect_refused(http_client& c, const std::string& token, const std::string& message, const std::string& what) {
    const auto q = unique_name("auth-refused");
    auto r = push_with(c, q, token);
    EXPECT_EQ(r.status, 401) << what << ": " << r.body;
    EXPECT_EQ(error_of(r), message) << what;
    EXPECT_EQ(stored_messages(q), 0) << what;
}

void expect_accepted(http_client& c, const std::string& token, const std::string& what) {
    const auto q = unique_name("auth-accepted");
    auto r = push_with(c, q, token);
    EXPECT_EQ(r.status, 201) << what << ": " << r.body;
    EXPECT_EQ(stored_messages(q), 1) << what;
}

std::filesystem::path temp_file(const std::string& text) {
    char tmpl[] = "/tmp/queen-jwks-file-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    ::close(fd);
    write_file(tmpl, text);
    return tmpl;
}

TEST(AuthTokens, EveryAlgorithmFromAPemKey) {
    const auto& k = test_keys();
    for (const auto& [kind, key] : std::vector<std::pair<std::string, jwt::pkey>>{
             {"RSA", k.rsa}, {"P-256", k.p256}, {"P-384", k.p384}, {"Ed25519", k.ed25519}}) {
        broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                                {"JWT_ALGORITHM", "auto"},
                                                {"JWT_PUBLIC_KEY", jwt::public_pem(key)}});
        auto c = client_of(b);
        for (const auto& s : asymmetric_signers()) {
            const auto token = jwt::token(s.alg, jwt::claims("pem-" + s.alg, "read-write"), s.key, "", s.kid);
            if (s.key == key) expect_accepted(c, token, s.alg + " with the " + kind + " PEM");
            else
                EXPECT_EQ(push_with(c, unique_name("auth-other"), token).status, 401) << s.alg << " vs " << kind;
        }
    }
}

TEST(AuthTokens, EveryAlgorithmFromAJwksFileAndHmacFromTheSecret) {
    const auto file = temp_file(all_keys_jwks());
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "auto"},
                                            {"JWT_SECRET", secret},
                                            {"JWT_JWKS_FILE", file.string()}});
    auto c = client_of(b);
    for (const auto& s : asymmetric_signers())
        expect_accepted(c, jwt::token(s.alg, jwt::claims("jwks-" + s.alg, "read-write"), s.key, "", s.kid), s.alg);
    for (const std::string alg : {"HS256", "HS384", "HS512"})
        expect_accepted(c, jwt::token(alg, jwt::claims("hs", "read-write"), nullptr, secret), alg);
    // A kid of another kind's key, and a kid nobody published.
    expect_refused(c, jwt::token("ES256", jwt::claims("x", "read-write"), test_keys().p256, "", "rsa"),
                   "Token uses ES256, expected an algorithm of a configured key", "ES256 naming the RSA key");
    expect_refused(c, jwt::token("RS256", jwt::claims("x", "read-write"), test_keys().rsa, "", "gone"),
                   "Unknown key ID: gone", "unknown kid");
    std::filesystem::remove(file);
}

TEST(AuthTokens, RefusedTokensAre401AndStoreNothing) {
    const auto& k = test_keys();
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "RS256"},
                                            {"JWT_PUBLIC_KEY", jwt::public_pem(k.rsa)},
                                            {"JWT_ISSUER", "https://idp.test"},
                                            {"JWT_AUDIENCE", "queen"}});
    auto c = client_of(b);
    auto claims = [](json extra = json::object()) {
        json base = jwt::claims("client-1", "read-write");
        base["iss"] = "https://idp.test";
        base["aud"] = json::array({"other", "queen"});
        base.update(extra);
        return base;
    };
    const auto good = jwt::token("RS256", claims(), k.rsa);
    expect_accepted(c, good, "a valid token");
    for (const std::string& header : {"bearer " + good, "BEARER " + good, good}) {
        const auto q = unique_name("auth-header");
        auto r = c.request("POST", "/api/v1/push", push_body(q), {{"Authorization", header}});
        EXPECT_EQ(r.status, 201) << header.substr(0, 10) << ": " << r.body;
    }
    const auto dot = good.rfind('.');
    std::string flipped = good;
    flipped[dot + 5] = flipped[dot + 5] == 'A' ? 'B' : 'A';
    expect_refused(c, flipped, "Invalid token signature", "tampered signature");
    const auto first = good.find('.');
    expect_refused(c, good.substr(0, first + 1) + jwt::b64url(claims({{"role", "admin"}}).dump()) + good.substr(dot),
                   "Invalid token signature", "tampered claims");
    expect_refused(c, jwt::token("RS256", claims({{"exp", jwt::now_s() - 120}}), k.rsa), "Token has expired",
                   "expired");
    expect_refused(c, jwt::token("RS256", claims({{"nbf", jwt::now_s() + 600}}), k.rsa), "Token is not yet valid",
                   "not yet valid");
    expect_refused(c, jwt::token("RS256", claims({{"iat", jwt::now_s() + 600}}), k.rsa), "Token is not yet valid",
                   "issued in the future");
    expect_refused(c, jwt::token("RS256", claims({{"iss", "https://evil.test"}}), k.rsa), "Invalid token issuer",
                   "wrong issuer");
    expect_refused(c, jwt::token("RS256", claims({{"aud", "other"}}), k.rsa), "Invalid token audience",
                   "wrong audience");
    const std::string none = jwt::b64url(R"({"alg":"none","typ":"JWT"})") + "." + jwt::b64url(claims().dump()) + ".";
    expect_refused(c, none, "Token uses none, expected RS256", "alg none");
    expect_refused(c, jwt::token("RS512", claims(), k.rsa), "Token uses RS512, expected RS256", "another alg");
    expect_refused(c, jwt::token("HS256", claims(), nullptr, jwt::public_pem(k.rsa)), "Token uses HS256, expected RS256",
                   "HMAC keyed with the public key");
    expect_refused(c, jwt::token("ES256", claims(), k.p256), "Token uses ES256, expected RS256", "key of another type");
    expect_refused(c, "not-a-token", "malformed token", "garbage");
}

TEST(AuthTokens, SighupReloadsTheJwksFile) {
    const auto& k = test_keys();
    const auto file = temp_file(jwt::jwks_of({jwt::public_jwk(k.p256, "old")}));
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "ES256"},
                                            {"JWT_JWKS_FILE", file.string()}});
    auto c = client_of(b);
    const auto old_token = jwt::token("ES256", jwt::claims("a", "read-write"), k.p256, "", "old");
    const auto new_key = jwt::generate("P-256");
    const auto new_token = jwt::token("ES256", jwt::claims("a", "read-write"), new_key, "", "new");
    expect_accepted(c, old_token, "the old key");
    expect_refused(c, new_token, "Unknown key ID: new", "the new key before the reload");
    write_file(file, jwt::jwks_of({jwt::public_jwk(new_key, "new")}));
    ::kill(b.pid(), SIGHUP);
    EXPECT_TRUE(eventually([&] { return push_with(c, unique_name("auth-hup"), new_token).status == 201; }));
    expect_refused(c, old_token, "Unknown key ID: old", "the retired key after the reload");
    // A broken file keeps the keys loaded before.
    write_file(file, "{not json");
    ::kill(b.pid(), SIGHUP);
    EXPECT_TRUE(eventually([&] { return b.log().find("the keys loaded before stay in use") != std::string::npos; }));
    expect_accepted(c, new_token, "the new key after a failed reload");
    std::filesystem::remove(file);
}

TEST(AuthTokens, JwksUrlIsFetchedAtStartAndAgainForAnUnknownKid) {
    const auto& k = test_keys();
    jwks_server server;
    server.publish(jwt::jwks_of({jwt::public_jwk(k.ed25519, "k1")}));
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "auto"},
                                            {"JWT_JWKS_URL", server.url()}});
    auto c = client_of(b);
    const auto k1 = jwt::token("EdDSA", jwt::claims("u", "read-write"), k.ed25519, "", "k1");
    expect_accepted(c, k1, "the published key");
    // Rotation: k2 replaces k1 at the URL; a token with k2 makes the broker fetch again.
    const auto k2_key = jwt::generate("Ed25519");
    server.publish(jwt::jwks_of({jwt::public_jwk(k2_key, "k2")}));
    expect_accepted(c, jwt::token("EdDSA", jwt::claims("u", "read-write"), k2_key, "", "k2"), "the rotated key");
    expect_refused(c, k1, "Unknown key ID: k1", "the retired key");
    expect_refused(c, jwt::token("EdDSA", jwt::claims("u", "read-write"), k2_key, "", "k3"), "Unknown key ID: k3",
                   "a kid nobody published");
}

// An https:// JWKS URL: the server's certificate must chain to a trusted root (here the test's
// CA, through SSL_CERT_FILE, OpenSSL's default store) and name the URL's host.
TEST(AuthTokens, JwksUrlOverHttpsIsTrustedOnlyWithAVerifiedCertificate) {
    const auto& k = test_keys();
    tls::pki pki;
    pki.make_ca("ca");
    pki.make_leaf("idp", "idp", "7", "serverAuth", "ca");
    pki.make_ca("other");
    jwks_server server(pki.crt("idp").string(), pki.key("idp").string());
    server.publish(jwt::jwks_of({jwt::public_jwk(k.ed25519, "k1")}));
    const auto token = jwt::token("EdDSA", jwt::claims("u", "read-write"), k.ed25519, "", "k1");
    const std::map<std::string, std::string> auth{
        {"JWT_ENABLED", "true"}, {"JWT_ALGORITHM", "auto"}, {"JWT_JWKS_URL", server.url()}};
    ASSERT_EQ(server.url().rfind("https://", 0), 0u);

    auto trusting_env = auth;
    trusting_env["SSL_CERT_FILE"] = pki.crt("ca").string();
    broker_process trusting(cluster().conninfo(), trusting_env);
    auto c = client_of(trusting);
    expect_accepted(c, token, "keys fetched over verified HTTPS");

    // A certificate from a root the broker does not trust: no keys, so tokens answer 503.
    auto untrusting_env = auth;
    untrusting_env["SSL_CERT_FILE"] = pki.crt("other").string();
    broker_process untrusting(cluster().conninfo(), untrusting_env);
    auto u = client_of(untrusting);
    const auto q = unique_name("auth-jwks-untrusted");
    auto r = send(u, "POST", "/api/v1/push", token, push_body(q));
    EXPECT_EQ(r.status, 503) << r.body;
    EXPECT_EQ(error_of(r), "JWKS unavailable");
    EXPECT_EQ(stored_messages(q), 0);
    EXPECT_NE(untrusting.log().find("certificate verify failed"), std::string::npos) << untrusting.log();
}

TEST(AuthTokens, JwksUrlIsRefreshedOnItsInterval) {
    const auto& k = test_keys();
    jwks_server server;
    server.publish(jwt::jwks_of({jwt::public_jwk(k.rsa, "r1")}));
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "RS256"},
                                            {"JWT_JWKS_URL", server.url()},
                                            {"JWT_JWKS_REFRESH_INTERVAL", "1"}});
    auto c = client_of(b);
    const auto r1 = jwt::token("RS256", jwt::claims("u", "read-write"), k.rsa, "", "r1");
    expect_accepted(c, r1, "the published key");
    // Revoked at the URL: the periodic refresh alone drops it (no unknown kid is involved).
    server.publish(jwt::jwks_of({}));
    EXPECT_TRUE(eventually([&] { return push_with(c, unique_name("auth-refresh"), r1).status == 401; }));
    EXPECT_EQ(error_of(push_with(c, unique_name("auth-refresh"), r1)), "Unknown key ID: r1");
}

TEST(AuthTokens, AnUnreachableJwksUrlAnswers503AndStoresNothing) {
    jwks_server server;
    const std::string url = server.url();
    server.stop();
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "RS256"},
                                            {"JWT_JWKS_URL", url},
                                            {"JWT_JWKS_TIMEOUT_MS", "500"}});
    auto c = client_of(b);
    const auto q = unique_name("auth-jwks-down");
    auto r = push_with(c, q, jwt::token("RS256", jwt::claims("u", "read-write"), test_keys().rsa, "", "r1"));
    EXPECT_EQ(r.status, 503) << r.body;
    EXPECT_EQ(error_of(r), "JWKS unavailable");
    EXPECT_EQ(stored_messages(q), 0);
}

TEST(AuthTokens, SettingsThatCannotVerifyRefuseToStart) {
    auto refusal = [](std::map<std::string, std::string> env) {
        env["JWT_ENABLED"] = "true";
        try {
            broker_process b(cluster().conninfo(), env);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        return std::string("started");
    };
    EXPECT_NE(refusal({{"JWT_ALGORITHM", "HS256"}}).find("JWT_ALGORITHM=HS256 needs JWT_SECRET"), std::string::npos);
    EXPECT_NE(refusal({{"JWT_ALGORITHM", "PS256"}, {"JWT_SECRET", secret}}).find("JWT_ALGORITHM must be auto or one of"),
              std::string::npos);
    EXPECT_NE(refusal({{"JWT_ALGORITHM", "RS256"}}).find("needs JWT_PUBLIC_KEY, JWT_JWKS_FILE or JWT_JWKS_URL"),
              std::string::npos);
    EXPECT_NE(refusal({{"JWT_ALGORITHM", "EdDSA"}, {"JWT_PUBLIC_KEY", jwt::public_pem(test_keys().rsa)}})
                  .find("needs an Ed25519 key, but JWT_PUBLIC_KEY is an RSA key"),
              std::string::npos);
    EXPECT_NE(refusal({{"JWT_ALGORITHM", "auto"}}).find("needs at least one key"), std::string::npos);
}

// Text the client chose reaches neither the database nor an answer unfit for it: a sub holding
// NUL (which PostgreSQL text cannot store) is a malformed token, and an unknown kid is echoed
// as valid UTF-8, cut on a character boundary, its control characters escaped.
TEST(AuthTokens, HostileSubAndKidTextIsRefusedOrEchoedSafely) {
    const auto& k = test_keys();
    {
        broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"}, {"JWT_SECRET", secret}});
        auto c = client_of(b);
        expect_refused(c, jwt::token("HS256", jwt::claims(std::string("a\0b", 3), "read-write"), nullptr, secret),
                       "malformed token", "a sub with U+0000");
        expect_accepted(c, jwt::token("HS256", jwt::claims("a b", "read-write"), nullptr, secret), "a plain sub");
    }
    const auto file = temp_file(all_keys_jwks());
    broker_process b(cluster().conninfo(), {{"JWT_ENABLED", "true"},
                                            {"JWT_ALGORITHM", "auto"},
                                            {"JWT_JWKS_FILE", file.string()}});
    auto c = client_of(b);
    const std::string long_kid = std::string(127, 'k') + "\xc3\xa9";  // 129 bytes, the last character 2 long
    expect_refused(c, jwt::token("RS256", jwt::claims("x", "read-write"), k.rsa, "", long_kid),
                   "Unknown key ID: " + std::string(127, 'k') + "\xe2\x80\xa6", "a kid cut inside a character");
    expect_refused(c, jwt::token("RS256", jwt::claims("x", "read-write"), k.rsa, "", "a\x01" "b"),
                   "Unknown key ID: a\\x01b", "a kid with a control character");
    std::filesystem::remove(file);
}

}  // namespace
}  // namespace queen::test
