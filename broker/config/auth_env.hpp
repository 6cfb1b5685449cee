#pragma once
// Reads the JWT settings (auth/auth_config.hpp) from the environment map; docs/security.md
// describes each variable.
#include "auth/auth_config.hpp"

#include <map>
#include <string>

namespace queen::config {

// Reads the JWT_* variables; throws std::invalid_argument naming a bad variable. Whether the
// configured keys suffice for the algorithm is checked when the keys are loaded
// (auth::authenticator), so that a broker that could not verify a token refuses to start.
auth::auth_config auth_from_map(const std::map<std::string, std::string>& env);

// One line describing the settings, secrets and keys left out.
std::string describe(const auth::auth_config& config);

}  // namespace queen::config
