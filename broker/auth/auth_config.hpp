#pragma once
// The JWT settings (docs/security.md, "Settings"), with Queen's names and defaults;
// config/auth_env.hpp reads them from the environment.
#include <chrono>
#include <string>
#include <vector>

namespace queen::auth {

struct auth_config {
    bool enabled = false;                 // JWT_ENABLED
    std::string algorithm = "HS256";      // JWT_ALGORITHM: a JWS name or "auto"
    std::string secret;                   // JWT_SECRET (HS*), secret
    std::string public_key_pem;           // JWT_PUBLIC_KEY (RS*, ES*, EdDSA); wins over JWKS
    std::string jwks_file;                // JWT_JWKS_FILE, reloaded on SIGHUP
    std::string jwks_url;                 // JWT_JWKS_URL, http:// only
    std::string issuer;                   // JWT_ISSUER: checked when set
    std::string audience;                 // JWT_AUDIENCE: checked when set
    std::chrono::seconds clock_skew{30};  // JWT_CLOCK_SKEW, for exp/nbf/iat
    std::vector<std::string> skip_paths{"/health", "/metrics/prometheus", "/metrics", "/"};  // JWT_SKIP_PATHS
    std::chrono::seconds jwks_refresh_interval{3600};  // JWT_JWKS_REFRESH_INTERVAL
    std::chrono::milliseconds jwks_timeout{5000};      // JWT_JWKS_TIMEOUT_MS
    std::string roles_claim = "role";                  // JWT_ROLES_CLAIM: one role (a string)
    std::string roles_array_claim = "roles";           // JWT_ROLES_ARRAY_CLAIM: an array of roles
    std::string role_admin = "admin";                  // JWT_ROLE_ADMIN
    std::string role_read_write = "read-write";        // JWT_ROLE_READ_WRITE
    std::string role_read_only = "read-only";          // JWT_ROLE_READ_ONLY
    std::string tenant_claim;                          // QUEEN_TENANCY_CLAIM: names the tenant (empty: none)
};

}  // namespace queen::auth
