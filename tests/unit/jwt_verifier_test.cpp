// The JWT verifier without a broker: every algorithm from PEM and JWKS, the admission rules,
// the time and audience claims, the roles, and the settings a broker refuses to start with.
#include "../support/jwt_test_keys.hpp"

#include "auth/authenticator.hpp"
#include "auth/base64url.hpp"
#include "auth/jws_token.hpp"
#include "auth/token_verifier.hpp"
#include "auth/auth_config.hpp"
#include "config/auth_env.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using namespace queen;
namespace jwt = queen::test::jwt;
using nlohmann::json;

const std::string secret = "a-test-secret-of-more-than-32-bytes!!";

auth::auth_config settings(const std::string& alg) {
    auth::auth_config c;
    c.enabled = true;
    c.algorithm = alg;
    return c;
}

auth::verification verify(const auth::token_verifier& v, const std::string& token,
                          const auth::key_set* jwks = nullptr) {
    return v.verify(token, jwks, std::chrono::system_clock::now());
}

// The failure's message, or "ok" for an admitted token.
std::string verdict(const auth::verification& v) {
    if (const auto* f = std::get_if<auth::auth_failure>(&v)) return f->message();
    return "ok";
}

std::string tampered(const std::string& token) {
    // Replace the claims with others, keeping header and signature.
    const auto first = token.find('.');
    const auto second = token.find('.', first + 1);
    return token.substr(0, first + 1) + jwt::b64url(jwt::claims("mallory", "admin").dump()) + token.substr(second);
}

struct asymmetric_case {
    std::string alg;
    std::string kind;
};

const std::vector<asymmetric_case> asymmetric{{"RS256", "RSA"},  {"RS384", "RSA"}, {"RS512", "RSA"},
                                              {"ES256", "P-256"}, {"ES384", "P-384"}, {"EdDSA", "Ed25519"}};

TEST(Base64url, DecodesUnpaddedAndRefusesOtherAlphabets) {
    EXPECT_EQ(auth::base64url_decode(""), std::string());
    EXPECT_EQ(auth::base64url_decode("Zg"), std::string("f"));
    EXPECT_EQ(auth::base64url_decode("Zm8"), std::string("fo"));
    EXPECT_EQ(auth::base64url_decode("Zm9v"), std::string("foo"));
    EXPECT_EQ(auth::base64url_decode("-_8"), std::string("\xfb\xff"));
    EXPECT_FALSE(auth::base64url_decode("Zg=="));  // padding is not base64url in a JWS
    EXPECT_FALSE(auth::base64url_decode("+/8"));
    EXPECT_FALSE(auth::base64url_decode("Zm9vY"));  // no byte string has this length
    EXPECT_FALSE(auth::base64url_decode("Zm 9v"));
}

TEST(AuthorizationHeader, BearerPrefixIsCaseInsensitiveAndOptional) {
    EXPECT_EQ(auth::token_of_header("Bearer abc.def.ghi"), "abc.def.ghi");
    EXPECT_EQ(auth::token_of_header("bearer abc"), "abc");
    EXPECT_EQ(auth::token_of_header("BEARER   abc  "), "abc");
    EXPECT_EQ(auth::token_of_header("abc.def.ghi"), "abc.def.ghi");
    EXPECT_EQ(auth::token_of_header(""), "");
    EXPECT_EQ(auth::token_of_header("Bearer "), "");
    EXPECT_EQ(auth::token_of_header("bearer"), "");
    EXPECT_EQ(auth::token_of_header("Bearerabc"), "Bearerabc");
}

TEST(JwtVerifier, HmacAlgorithmsVerifyWithTheSecret) {
    for (const std::string alg : {"HS256", "HS384", "HS512"}) {
        auto cfg = settings(alg);
        cfg.secret = secret;
        auth::token_verifier v(cfg);
        const auto token = jwt::token(alg, jwt::claims("alice", "read-only"), nullptr, secret);
        auto result = verify(v, token);
        ASSERT_EQ(verdict(result), "ok") << alg;
        EXPECT_EQ(std::get<auth::principal>(result).subject, "alice");
        EXPECT_EQ(verdict(verify(v, tampered(token))), "Invalid token signature") << alg;
        EXPECT_EQ(verdict(verify(v, jwt::token(alg, jwt::claims("a", ""), nullptr, secret + "x"))),
                  "Invalid token signature");
    }
}

TEST(JwtVerifier, EveryAsymmetricAlgorithmVerifiesFromPemAndFromJwks) {
    for (const auto& c : asymmetric) {
        const auto key = jwt::generate(c.kind);
        const auto token = jwt::token(c.alg, jwt::claims("bob", "admin"), key, "", "k1");
        auto pem_cfg = settings(c.alg);
        pem_cfg.public_key_pem = jwt::public_pem(key);
        auth::token_verifier from_pem(pem_cfg);
        EXPECT_EQ(verdict(verify(from_pem, token)), "ok") << c.alg;
        EXPECT_EQ(verdict(verify(from_pem, tampered(token))), "Invalid token signature") << c.alg;
        // Signed by another key of the same kind.
        const auto other = jwt::token(c.alg, jwt::claims("bob", "admin"), jwt::generate(c.kind), "", "k1");
        EXPECT_EQ(verdict(verify(from_pem, other)), "Invalid token signature") << c.alg;

        auto jwks_cfg = settings(c.alg);
        jwks_cfg.jwks_file = "/unused";  // the set is handed in
        auth::token_verifier from_jwks(jwks_cfg);
        const auto set = auth::key_set::parse(jwt::jwks_of({jwt::public_jwk(key, "k1")}));
        EXPECT_EQ(verdict(verify(from_jwks, token, &set)), "ok") << c.alg;
        EXPECT_EQ(verdict(verify(from_jwks, tampered(token), &set)), "Invalid token signature") << c.alg;
        // Without a kid, every key of the right kind is tried.
        EXPECT_EQ(verdict(verify(from_jwks, jwt::token(c.alg, jwt::claims("bob", ""), key), &set)), "ok") << c.alg;
        EXPECT_EQ(verdict(verify(from_jwks, jwt::token(c.alg, jwt::claims("bob", ""), key, "", "k2"), &set)),
                  "Unknown key ID: k2");
    }
}

TEST(JwtVerifier, AFixedAlgorithmAdmitsExactlyThatOne) {
    const auto rsa = jwt::generate("RSA");
    auto cfg = settings("RS256");
    cfg.public_key_pem = jwt::public_pem(rsa);
    auth::token_verifier v(cfg);
    EXPECT_EQ(verdict(verify(v, jwt::token("RS384", jwt::claims("a", ""), rsa))), "Token uses RS384, expected RS256");
    // The classic confusion: an HMAC whose secret is the public key's PEM.
    EXPECT_EQ(verdict(verify(v, jwt::token("HS256", jwt::claims("a", ""), nullptr, cfg.public_key_pem))),
              "Token uses HS256, expected RS256");
    const std::string none = jwt::b64url(R"({"alg":"none"})") + "." + jwt::b64url(jwt::claims("a", "").dump()) + ".";
    EXPECT_EQ(verdict(verify(v, none)), "Token uses none, expected RS256");
}

TEST(JwtVerifier, AutoAdmitsOnlyTheKindsOfConfiguredKeys) {
    const auto rsa = jwt::generate("RSA");
    auto cfg = settings("auto");
    cfg.secret = secret;
    cfg.public_key_pem = jwt::public_pem(rsa);
    auth::token_verifier v(cfg);
    EXPECT_EQ(verdict(verify(v, jwt::token("HS512", jwt::claims("a", ""), nullptr, secret))), "ok");
    EXPECT_EQ(verdict(verify(v, jwt::token("RS512", jwt::claims("a", ""), rsa))), "ok");
    EXPECT_EQ(verdict(verify(v, jwt::token("ES256", jwt::claims("a", ""), jwt::generate("P-256")))),
              "Token uses ES256, expected an algorithm of a configured key");
    EXPECT_EQ(verdict(verify(v, jwt::token("HS256", jwt::claims("a", ""), nullptr, cfg.public_key_pem))),
              "Invalid token signature");
    const std::string none = jwt::b64url(R"({"alg":"none"})") + "." + jwt::b64url(jwt::claims("a", "").dump()) + ".";
    EXPECT_EQ(verdict(verify(v, none)), "Token uses none, expected an algorithm of a configured key");

    auto no_secret = settings("auto");
    no_secret.public_key_pem = cfg.public_key_pem;
    auth::token_verifier pem_only(no_secret);
    EXPECT_EQ(verdict(verify(pem_only, jwt::token("HS256", jwt::claims("a", ""), nullptr, ""))),
              "Token uses HS256, expected an algorithm of a configured key");
}

TEST(JwtVerifier, AKeyOfTheWrongTypeNeverVerifies) {
    const auto rsa = jwt::generate("RSA");
    const auto ec = jwt::generate("P-256");
    const auto set = auth::key_set::parse(jwt::jwks_of({jwt::public_jwk(rsa, "rsa"), jwt::public_jwk(ec, "ec")}));
    auto fixed = settings("ES256");
    fixed.jwks_file = "/unused";
    auth::token_verifier es256(fixed);
    // ES256 names the RSA key's kid: that key cannot verify ES256.
    EXPECT_EQ(verdict(verify(es256, jwt::token("ES256", jwt::claims("a", ""), ec, "", "rsa"), &set)),
              "Invalid token signature");
    EXPECT_EQ(verdict(verify(es256, jwt::token("ES256", jwt::claims("a", ""), ec, "", "ec"), &set)), "ok");
    auto any = settings("auto");
    any.jwks_file = "/unused";
    auth::token_verifier automatic(any);
    EXPECT_EQ(verdict(verify(automatic, jwt::token("ES256", jwt::claims("a", ""), ec, "", "rsa"), &set)),
              "Token uses ES256, expected an algorithm of a configured key");
    // A P-384 key does not verify ES256; a JWK pinned to another alg is left out.
    const auto p384 = jwt::generate("P-384");
    const auto pinned = auth::key_set::parse(
        jwt::jwks_of({jwt::public_jwk(p384, "p384"), jwt::public_jwk(rsa, "pinned", "RS512")}));
    EXPECT_EQ(verdict(verify(automatic, jwt::token("ES256", jwt::claims("a", ""), p384, "", "p384"), &pinned)),
              "Token uses ES256, expected an algorithm of a configured key");
    EXPECT_EQ(verdict(verify(automatic, jwt::token("RS256", jwt::claims("a", ""), rsa, "", "pinned"), &pinned)),
              "Token uses RS256, expected an algorithm of a configured key");
    EXPECT_EQ(verdict(verify(automatic, jwt::token("RS512", jwt::claims("a", ""), rsa, "", "pinned"), &pinned)), "ok");
}

TEST(JwtVerifier, TimeClaimsHonourTheClockSkew) {
    auto cfg = settings("HS256");
    cfg.secret = secret;
    auth::token_verifier v(cfg);  // skew 30 s
    auto at = [&](const char* claim, long long offset) {
        json c{{"sub", "a"}};
        c[claim] = jwt::now_s() + offset;
        return verdict(verify(v, jwt::token("HS256", c, nullptr, secret)));
    };
    EXPECT_EQ(at("exp", -100), "Token has expired");
    EXPECT_EQ(at("exp", -10), "ok");
    EXPECT_EQ(at("nbf", 100), "Token is not yet valid");
    EXPECT_EQ(at("nbf", 10), "ok");
    EXPECT_EQ(at("iat", 100), "Token is not yet valid");
    EXPECT_EQ(at("iat", -100000), "ok");
    EXPECT_EQ(verdict(verify(v, jwt::token("HS256", json{{"sub", "a"}}, nullptr, secret))), "ok");  // no exp
    EXPECT_EQ(verdict(verify(v, jwt::token("HS256", json{{"exp", "soon"}}, nullptr, secret))), "malformed token");
}

TEST(JwtVerifier, IssuerAndAudienceAreCheckedWhenSet) {
    auto cfg = settings("HS256");
    cfg.secret = secret;
    cfg.issuer = "https://idp.example";
    cfg.audience = "queen";
    auth::token_verifier v(cfg);
    auto with = [&](json extra) {
        json c = jwt::claims("a", "");
        c.update(extra);
        return verdict(verify(v, jwt::token("HS256", c, nullptr, secret)));
    };
    EXPECT_EQ(with({{"iss", "https://idp.example"}, {"aud", "queen"}}), "ok");
    EXPECT_EQ(with({{"iss", "https://idp.example"}, {"aud", json::array({"other", "queen"})}}), "ok");
    EXPECT_EQ(with({{"iss", "https://evil.example"}, {"aud", "queen"}}), "Invalid token issuer");
    EXPECT_EQ(with({{"aud", "queen"}}), "Invalid token issuer");
    EXPECT_EQ(with({{"iss", "https://idp.example"}, {"aud", "other"}}), "Invalid token audience");
    EXPECT_EQ(with({{"iss", "https://idp.example"}, {"aud", json::array({"other"})}}), "Invalid token audience");
    EXPECT_EQ(with({{"iss", "https://idp.example"}}), "Invalid token audience");
}

TEST(JwtVerifier, RolesGiveTheHighestConfiguredLevel) {
    auto cfg = settings("HS256");
    cfg.secret = secret;
    cfg.roles_claim = "queen_role";
    cfg.roles_array_claim = "groups";
    cfg.role_admin = "ops";
    auth::token_verifier v(cfg);
    auto level_of = [&](json c) { return std::get<auth::principal>(verify(v, jwt::token("HS256", c, nullptr, secret))); };
    EXPECT_FALSE(level_of({{"sub", "a"}, {"role", "admin"}}).level);  // not the configured claim
    EXPECT_EQ(level_of({{"queen_role", "read-only"}}).level, auth::access_level::read_only);
    EXPECT_EQ(level_of({{"groups", {"x", "read-write", "read-only"}}}).level, auth::access_level::read_write);
    EXPECT_EQ(level_of({{"queen_role", "read-only"}, {"groups", {"ops"}}}).level, auth::access_level::admin);
    EXPECT_FALSE(level_of({{"queen_role", "admin"}}).level);  // admin is called "ops" here
    const auto p = level_of({{"groups", {"read-write"}}});
    EXPECT_TRUE(p.may(auth::access_level::read_only));
    EXPECT_TRUE(p.may(auth::access_level::read_write));
    EXPECT_FALSE(p.may(auth::access_level::admin));
    EXPECT_FALSE(p.subject);
}

TEST(JwtVerifier, MalformedTokensAreRefusedAsSuch) {
    auto cfg = settings("HS256");
    cfg.secret = secret;
    auth::token_verifier v(cfg);
    EXPECT_EQ(verdict(verify(v, "")), "Authentication required");
    const auto good = jwt::token("HS256", jwt::claims("a", ""), nullptr, secret);
    for (const std::string& bad : {std::string("abc"), std::string("a.b"), good + ".x", std::string("!!.e30.e30"),
                                  jwt::b64url("[1]") + ".e30.", jwt::b64url(R"({"typ":"JWT"})") + ".e30.",
                                  jwt::b64url(std::string(40, '[')) + ".e30.", std::string(20000, 'a')})
        EXPECT_EQ(verdict(verify(v, bad)), "malformed token") << bad.substr(0, 40);
    const std::string crit_header = jwt::b64url(R"({"alg":"HS256","crit":["exp"]})");
    EXPECT_EQ(verdict(verify(v, crit_header + ".e30.sig")), "malformed token");
    // A signed payload that is not an object.
    const std::string input = jwt::b64url(R"({"alg":"HS256"})") + "." + jwt::b64url("[]");
    EXPECT_EQ(verdict(verify(v, input + "." + jwt::b64url(jwt::sign("HS256", input, nullptr, secret)))),
              "malformed token");
}

TEST(JwtVerifier, JwksNotLoadedYetIsUnavailable) {
    auto cfg = settings("RS256");
    cfg.jwks_url = "http://127.0.0.1:1/jwks";
    auth::token_verifier v(cfg);
    EXPECT_EQ(verdict(verify(v, jwt::token("RS256", jwt::claims("a", ""), jwt::generate("RSA"), "", "k"))),
              "JWKS unavailable");
}

TEST(JwtVerifier, SettingsThatCannotVerifyRefuseToStart) {
    auto refused = [](auth::auth_config c) {
        try {
            auth::token_verifier v(c);
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("started");
    };
    EXPECT_EQ(refused(settings("HS256")), "JWT_ALGORITHM=HS256 needs JWT_SECRET");
    EXPECT_EQ(refused(settings("EdDSA")), "JWT_ALGORITHM=EdDSA needs JWT_PUBLIC_KEY, JWT_JWKS_FILE or JWT_JWKS_URL");
    EXPECT_NE(refused(settings("auto")).find("needs at least one key"), std::string::npos);
    auto wrong = settings("RS256");
    wrong.public_key_pem = jwt::public_pem(jwt::generate("P-256"));
    EXPECT_EQ(refused(wrong), "JWT_ALGORITHM=RS256 needs an RSA key, but JWT_PUBLIC_KEY is an EC P-256 key");
    auto garbage = settings("RS256");
    garbage.public_key_pem = "not a key";
    EXPECT_NE(refused(garbage).find("not a PEM public key"), std::string::npos);
    auto small = settings("RS256");
    small.public_key_pem =
        jwt::public_pem(jwt::pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(1024)), jwt::pkey_free{}));
    EXPECT_NE(refused(small).find("at least 2048 bits"), std::string::npos);
    auto ok = settings("HS256");
    ok.secret = secret;
    EXPECT_EQ(refused(ok), "started");
}

TEST(AuthConfig, DefaultsAndParsing) {
    const auto d = config::auth_from_map({});
    EXPECT_FALSE(d.enabled);
    EXPECT_EQ(d.algorithm, "HS256");
    EXPECT_EQ(d.clock_skew.count(), 30);
    EXPECT_EQ(d.skip_paths, (std::vector<std::string>{"/health", "/metrics/prometheus", "/metrics", "/"}));
    EXPECT_EQ(d.jwks_refresh_interval.count(), 3600);
    EXPECT_EQ(d.jwks_timeout.count(), 5000);
    EXPECT_EQ(d.roles_claim, "role");
    EXPECT_EQ(d.roles_array_claim, "roles");
    EXPECT_EQ(d.role_admin, "admin");
    EXPECT_EQ(d.role_read_write, "read-write");
    EXPECT_EQ(d.role_read_only, "read-only");
    const auto c = config::auth_from_map(
        {{"JWT_ENABLED", "true"}, {"JWT_ALGORITHM", "auto"}, {"JWT_SKIP_PATHS", " /health , /public/ ,"},
         {"JWT_CLOCK_SKEW", "5"}, {"JWT_JWKS_TIMEOUT_MS", "250"}});
    EXPECT_TRUE(c.enabled);
    EXPECT_EQ(c.skip_paths, (std::vector<std::string>{"/health", "/public/"}));
    EXPECT_EQ(c.clock_skew.count(), 5);
    EXPECT_EQ(c.jwks_timeout.count(), 250);
    EXPECT_TRUE(config::auth_from_map({{"JWT_SKIP_PATHS", ""}}).skip_paths.empty());
    EXPECT_THROW(config::auth_from_map({{"JWT_ALGORITHM", "none"}}), std::invalid_argument);
    EXPECT_THROW(config::auth_from_map({{"JWT_ALGORITHM", "hs256"}}), std::invalid_argument);
    EXPECT_THROW(config::auth_from_map({{"JWT_ENABLED", "maybe"}}), std::invalid_argument);
    EXPECT_THROW(config::auth_from_map({{"JWT_JWKS_FILE", "/a"}, {"JWT_JWKS_URL", "http://b/"}}),
                 std::invalid_argument);
    EXPECT_THROW(config::auth_from_map({{"JWT_JWKS_URL", "ftp://b/"}}), std::invalid_argument);
    EXPECT_EQ(config::auth_from_map({{"JWT_JWKS_URL", "https://idp.example/jwks"}}).jwks_url,
              "https://idp.example/jwks");
}

TEST(AuthSkipPaths, ExactOrPrefixEndingInSlashButNotTheRoot) {
    boost::asio::io_context ioc;
    auto cfg = config::auth_from_map({{"JWT_SKIP_PATHS", "/health,/,/public/"}});
    auth::authenticator a(ioc.get_executor(), cfg);
    EXPECT_TRUE(a.skips("/health"));
    EXPECT_FALSE(a.skips("/health/x"));
    EXPECT_FALSE(a.skips("/healthz"));
    EXPECT_TRUE(a.skips("/"));
    EXPECT_FALSE(a.skips("/api/v1/push"));  // "/" is exact only
    EXPECT_TRUE(a.skips("/public/a/b"));
    EXPECT_TRUE(a.skips("/public/"));
    EXPECT_FALSE(a.skips("/public"));
}

}  // namespace
