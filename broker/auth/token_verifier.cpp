#include "auth/token_verifier.hpp"

#include "auth/jws_token.hpp"
#include "util/utf8.hpp"

#include <fmt/core.h>
#include <openssl/err.h>

#include <cmath>
#include <stdexcept>

namespace queen::auth {

namespace {

// Longest kid echoed in "Unknown key ID: <kid>".
constexpr std::size_t max_echoed_kid = 128;

auth_failure fail(failure_kind kind, std::string detail = {}) {
    return auth_failure{kind, std::move(detail)};
}

// A NumericDate claim: nullopt when absent; a failure when present but not a finite number.
std::variant<std::optional<double>, auth_failure> numeric_date(const nlohmann::json& claims, const char* name) {
    auto it = claims.find(name);
    if (it == claims.end()) return std::optional<double>{};
    if (!it->is_number()) return fail(failure_kind::malformed);
    const double v = it->get<double>();
    if (!std::isfinite(v)) return fail(failure_kind::malformed);
    return std::optional<double>{v};
}

bool holds_string(const nlohmann::json& claims, const std::string& name, const std::string& wanted) {
    auto it = claims.find(name);
    return it != claims.end() && it->is_string() && it->get_ref<const std::string&>() == wanted;
}

}  // namespace

token_verifier::token_verifier(const auth::auth_config& cfg) : cfg_(cfg) {
    if (cfg.algorithm != "auto") {
        fixed_ = algorithm_from_name(cfg.algorithm);
        if (!fixed_)
            throw std::invalid_argument(
                fmt::format("JWT_ALGORITHM must be auto or one of {}, not '{}'", algorithm_names(), cfg.algorithm));
    }
    if (!cfg.public_key_pem.empty()) pem_ = verification_key::from_pem(cfg.public_key_pem);
    uses_jwks_ = !pem_ && (!cfg.jwks_file.empty() || !cfg.jwks_url.empty());
    ERR_clear_error();
    if (fixed_) {
        const key_kind kind = key_kind_of(*fixed_);
        if (kind == key_kind::hmac_secret && cfg.secret.empty())
            throw std::invalid_argument(fmt::format("JWT_ALGORITHM={} needs JWT_SECRET", cfg.algorithm));
        if (kind != key_kind::hmac_secret) {
            if (!pem_ && !uses_jwks_)
                throw std::invalid_argument(
                    fmt::format("JWT_ALGORITHM={} needs JWT_PUBLIC_KEY, JWT_JWKS_FILE or JWT_JWKS_URL", cfg.algorithm));
            if (pem_ && pem_->kind() != kind)
                throw std::invalid_argument(fmt::format("JWT_ALGORITHM={} needs {}, but JWT_PUBLIC_KEY is {}",
                                                        cfg.algorithm, describe(kind), describe(pem_->kind())));
        }
    } else if (cfg.secret.empty() && !pem_ && !uses_jwks_) {
        throw std::invalid_argument(
            "JWT_ALGORITHM=auto needs at least one key: JWT_SECRET, JWT_PUBLIC_KEY, JWT_JWKS_FILE or JWT_JWKS_URL");
    }
}

std::optional<key_kind> token_verifier::required_jwks_kind() const {
    if (!fixed_ || !uses_jwks_ || key_kind_of(*fixed_) == key_kind::hmac_secret) return std::nullopt;
    return key_kind_of(*fixed_);
}

auth_failure token_verifier::refused(std::string_view alg) const {
    if (fixed_) return fail(failure_kind::algorithm_refused, fmt::format("{}, expected {}", alg, name_of(*fixed_)));
    return fail(failure_kind::algorithm_refused, fmt::format("{}, expected an algorithm of a configured key", alg));
}

std::variant<std::vector<const verification_key*>, auth_failure> token_verifier::keys_for(
    jwt_algorithm alg, const std::optional<std::string>& kid, const key_set* jwks) const {
    const key_kind kind = key_kind_of(alg);
    if (kind == key_kind::hmac_secret) return std::vector<const verification_key*>{};  // the secret
    if (pem_) {
        if (pem_->kind() != kind) return refused(name_of(alg));
        return std::vector<const verification_key*>{&*pem_};
    }
    if (!uses_jwks_) return refused(name_of(alg));
    if (!jwks) return fail(failure_kind::jwks_unavailable);
    if (kid && !jwks->has_kid(*kid)) return fail(failure_kind::unknown_kid, util::printable_echo(*kid, max_echoed_kid));
    auto keys = jwks->candidates(alg, kid);
    if (keys.empty()) {
        // A fixed algorithm is admitted; the key named cannot verify it.
        if (fixed_) return fail(failure_kind::bad_signature);
        return refused(name_of(alg));
    }
    return keys;
}

verification token_verifier::verify(std::string_view token, const key_set* jwks,
                                    std::chrono::system_clock::time_point now) const {
    if (token.empty()) return fail(failure_kind::missing_token);
    auto parts = split_token(token);
    if (!parts) return fail(failure_kind::malformed);
    auto alg_field = parts->header.find("alg");
    if (alg_field == parts->header.end() || !alg_field->is_string()) return fail(failure_kind::malformed);
    const std::string& alg_name = alg_field->get_ref<const std::string&>();
    // Extensions this broker does not implement must not be ignored (RFC 7515 section 4.1.11).
    if (parts->header.contains("crit")) return fail(failure_kind::malformed);
    auto alg = algorithm_from_name(alg_name);
    if (fixed_ && alg != fixed_) return refused(alg_name);
    if (!alg) return refused(alg_name);
    if (key_kind_of(*alg) == key_kind::hmac_secret && cfg_.secret.empty()) return refused(alg_name);

    std::optional<std::string> kid;
    if (auto k = parts->header.find("kid"); k != parts->header.end()) {
        if (!k->is_string()) return fail(failure_kind::malformed);
        kid = k->get<std::string>();
    }
    auto keys = keys_for(*alg, kid, jwks);
    if (auto* failure = std::get_if<auth_failure>(&keys)) return *failure;
    bool valid = false;
    if (key_kind_of(*alg) == key_kind::hmac_secret) {
        valid = hmac_verifies(*alg, cfg_.secret, parts->signing_input, parts->signature);
    } else {
        for (const auto* key : std::get<std::vector<const verification_key*>>(keys))
            if (key->verifies(*alg, parts->signing_input, parts->signature)) valid = true;
    }
    ERR_clear_error();  // a refused signature leaves OpenSSL's error queue non-empty
    if (!valid) return fail(failure_kind::bad_signature);

    auto claims = decode_json_part(parts->payload_b64);
    if (!claims) return fail(failure_kind::malformed);
    if (auto failure = check_claims(*claims, now)) return *failure;
    return principal_of(*claims);
}

std::optional<auth_failure> token_verifier::check_claims(const nlohmann::json& claims,
                                                         std::chrono::system_clock::time_point now) const {
    const double t = std::chrono::duration<double>(now.time_since_epoch()).count();
    const double skew = static_cast<double>(cfg_.clock_skew.count());
    auto exp = numeric_date(claims, "exp");
    auto nbf = numeric_date(claims, "nbf");
    auto iat = numeric_date(claims, "iat");
    for (auto* v : {&exp, &nbf, &iat})
        if (auto* failure = std::get_if<auth_failure>(v)) return *failure;
    if (auto e = std::get<std::optional<double>>(exp); e && t > *e + skew) return fail(failure_kind::expired);
    if (auto n = std::get<std::optional<double>>(nbf); n && t + skew < *n) return fail(failure_kind::not_yet_valid);
    if (auto i = std::get<std::optional<double>>(iat); i && t + skew < *i) return fail(failure_kind::not_yet_valid);
    // sub becomes producerSub, stored as text, which cannot hold NUL.
    if (auto sub = claims.find("sub");
        sub != claims.end() && sub->is_string() && sub->get_ref<const std::string&>().find('\0') != std::string::npos)
        return fail(failure_kind::malformed);
    if (!cfg_.issuer.empty() && !holds_string(claims, "iss", cfg_.issuer)) return fail(failure_kind::wrong_issuer);
    if (!cfg_.audience.empty()) {
        bool ok = holds_string(claims, "aud", cfg_.audience);
        if (auto aud = claims.find("aud"); !ok && aud != claims.end() && aud->is_array())
            for (const auto& a : *aud)
                if (a.is_string() && a.get_ref<const std::string&>() == cfg_.audience) ok = true;
        if (!ok) return fail(failure_kind::wrong_audience);
    }
    return std::nullopt;
}

principal token_verifier::principal_of(const nlohmann::json& claims) const {
    principal p;
    if (auto sub = claims.find("sub"); sub != claims.end() && sub->is_string()) p.subject = sub->get<std::string>();
    if (!cfg_.tenant_claim.empty())
        if (auto t = claims.find(cfg_.tenant_claim); t != claims.end()) {
            p.tenant_claimed = true;
            if (t->is_string()) p.tenant = t->get<std::string>();
        }
    auto grant = [&](const std::string& role) {
        std::optional<access_level> level;
        if (role == cfg_.role_admin)
            level = access_level::admin;
        else if (role == cfg_.role_read_write)
            level = access_level::read_write;
        else if (role == cfg_.role_read_only)
            level = access_level::read_only;
        if (level && (!p.level || *level > *p.level)) p.level = level;
    };
    if (auto role = claims.find(cfg_.roles_claim); role != claims.end() && role->is_string())
        grant(role->get<std::string>());
    if (auto roles = claims.find(cfg_.roles_array_claim); roles != claims.end() && roles->is_array())
        for (const auto& r : *roles)
            if (r.is_string()) grant(r.get<std::string>());
    return p;
}

}  // namespace queen::auth
