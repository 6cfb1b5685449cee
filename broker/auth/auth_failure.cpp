#include "auth/auth_failure.hpp"

namespace queen::auth {

std::string auth_failure::message() const {
    switch (kind) {
        case failure_kind::missing_token:
            return "Authentication required";
        case failure_kind::malformed:
            return "malformed token";
        case failure_kind::algorithm_refused:
            return "Token uses " + detail;
        case failure_kind::bad_signature:
            return "Invalid token signature";
        case failure_kind::expired:
            return "Token has expired";
        case failure_kind::not_yet_valid:
            return "Token is not yet valid";
        case failure_kind::wrong_issuer:
            return "Invalid token issuer";
        case failure_kind::wrong_audience:
            return "Invalid token audience";
        case failure_kind::unknown_kid:
            return "Unknown key ID: " + detail;
        case failure_kind::insufficient_level:
            return "Insufficient permissions";
        case failure_kind::jwks_unavailable:
            return "JWKS unavailable";
    }
    return "Authentication required";
}

}  // namespace queen::auth
