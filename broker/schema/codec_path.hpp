#pragma once
// The database's codec path (docs/architecture.md, the codec layer): with the queen_ext extension
// installed, the SQL codec layer packs zstd segments and decodes in C; without it, plain SQL
// over raw segments. The path belongs to the database; a broker reports it and checks it
// against its QUEEN_EXTENSION policy at start.
#include "config/config.hpp"

#include <optional>
#include <string>

namespace queen::schema {

struct codec_path {
    std::optional<std::string> extension_version;  // queen_ext's version, when installed

    bool accelerated() const noexcept { return extension_version.has_value(); }
    // "queen_ext" or "sql".
    std::string name() const { return accelerated() ? "queen_ext" : "sql"; }
    // Codec of the segments new pushes write: "zstd" or "raw".
    std::string segment_codec() const { return accelerated() ? "zstd" : "raw"; }
};

// Asks the database (queen.codec_extension()); throws std::runtime_error when it cannot.
codec_path detect_codec_path(const std::string& conninfo);

// One line for the start-up log.
std::string describe(const codec_path& path);

// Throws std::runtime_error with a clear message when the path contradicts the policy.
void enforce(config::extension_policy policy, const codec_path& path);

}  // namespace queen::schema
