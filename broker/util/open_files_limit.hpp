#pragma once
// The process's limit on open descriptors. Every connection holds one, and the common soft
// limit of 1,024 is reached by about a thousand idle clients, so the broker starts by raising
// its soft limit to the hard one (which only the operator can raise).
#include <string>

namespace queen::util {

// Raises RLIMIT_NOFILE's soft limit to its hard limit; returns the line to log saying what it
// is now (and what it was, when raised, or why it could not be).
std::string raise_open_files_limit();

}  // namespace queen::util
