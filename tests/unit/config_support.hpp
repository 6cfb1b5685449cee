#pragma once
// Helpers of the configuration tests: what from_map says of an environment.
#include "config/config.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace queen::test {

// The std::invalid_argument text from_map throws for env, "(accepted)" when it does not.
inline std::string error_of(const std::map<std::string, std::string>& env) {
    try {
        config::from_map(env);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "(accepted)";
}

inline bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace queen::test
