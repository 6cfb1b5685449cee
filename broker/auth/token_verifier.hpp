#pragma once
// Verifies one JWT against the configured keys and claims: the algorithm the broker admits
// (never "none", never one whose key kind differs), the signature, exp/nbf/iat with the clock
// skew, iss and aud when configured; then reads the subject and the access level. Pure: the
// JWKS is handed in, so fetching and reloading stay in auth::authenticator.
#include "auth/access_level.hpp"
#include "auth/auth_config.hpp"
#include "auth/auth_failure.hpp"
#include "auth/key_set.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <variant>

namespace queen::auth {

// Who a verified token speaks for.
struct principal {
    std::optional<std::string> subject;  // "sub", when it is a string
    std::optional<access_level> level;   // the highest level its roles grant; none: no role
    std::optional<std::string> tenant;   // the tenant claim (auth_config::tenant_claim), when it is a string
    bool tenant_claimed = false;         // the token carries the tenant claim, of whatever type
    bool may(access_level needed) const noexcept { return level && *level >= needed; }
};

using verification = std::variant<principal, auth_failure>;

class token_verifier {
public:
    // Loads JWT_SECRET and JWT_PUBLIC_KEY; throws std::invalid_argument when the settings
    // cannot verify any token of the configured algorithm (a fixed HS* without a secret, a
    // fixed RS*/ES*/EdDSA without a PEM or JWKS, a PEM of the wrong kind, auto with no key).
    explicit token_verifier(const auth::auth_config& cfg);

    // The verdict on `token` at `now`; `jwks` is the current JWKS (nullptr: configured but
    // not loaded yet, or not configured).
    verification verify(std::string_view token, const key_set* jwks, std::chrono::system_clock::time_point now) const;

    bool uses_jwks() const noexcept { return uses_jwks_; }
    // For a fixed RS*/ES*/EdDSA algorithm with JWKS: the key kind the set must hold.
    std::optional<key_kind> required_jwks_kind() const;

private:
    // The keys that may verify a token of alg with kid, or the failure that stops it.
    std::variant<std::vector<const verification_key*>, auth_failure> keys_for(jwt_algorithm alg,
                                                                              const std::optional<std::string>& kid,
                                                                              const key_set* jwks) const;
    std::optional<auth_failure> check_claims(const nlohmann::json& claims,
                                             std::chrono::system_clock::time_point now) const;
    principal principal_of(const nlohmann::json& claims) const;
    auth_failure refused(std::string_view alg) const;

    auth::auth_config cfg_;
    std::optional<jwt_algorithm> fixed_;  // nullopt: JWT_ALGORITHM=auto
    std::optional<verification_key> pem_;
    bool uses_jwks_ = false;
};

}  // namespace queen::auth
