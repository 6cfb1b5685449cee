#pragma once
// What `queen` was asked to do by its arguments: nothing (serve the broker), `shards …`,
// `--help` or `--version`; anything else is a usage error, and none of the others starts
// anything.
#include <string>
#include <vector>

namespace queen::app {

enum class command_kind { serve, shards, help, version, usage_error };

struct command {
    command_kind kind = command_kind::serve;
    std::vector<std::string> rest;  // the arguments after `shards`
    std::string problem;            // usage_error: what is wrong, for stderr
};

// Reads argv[1..]; never throws.
command parse_command_line(const std::vector<std::string>& args);

// The text `queen --help` prints.
std::string usage_text();

// The text `queen --version` prints: the versions built into this binary.
std::string version_text();

}  // namespace queen::app
