#pragma once
// Why a request was not admitted: a value, turned into a status and the contract's text in
// one place (api/route_guard.cpp).
#include <string>

namespace queen::auth {

enum class failure_kind {
    missing_token,       // 401 Authentication required
    malformed,           // 401 malformed token
    algorithm_refused,   // 401 Token uses <alg>, expected <alg>
    bad_signature,       // 401 Invalid token signature
    expired,             // 401 Token has expired
    not_yet_valid,       // 401 Token is not yet valid (nbf, or iat in the future)
    wrong_issuer,        // 401 Invalid token issuer
    wrong_audience,      // 401 Invalid token audience
    unknown_kid,         // 401 Unknown key ID: <kid>
    insufficient_level,  // 403 Insufficient permissions
    jwks_unavailable,    // 503 JWKS unavailable
};

struct auth_failure {
    failure_kind kind;
    std::string detail;  // unknown_kid: the kid; algorithm_refused: the message's two names

    // The text the client sees (docs/security.md, "Tokens").
    std::string message() const;
};

}  // namespace queen::auth
