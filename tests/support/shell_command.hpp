#pragma once
// Running a shell command from a test and reading what it printed: one helper for every test
// that asks a tool (ss, promtool, curl, openssl) about the broker.
#include <string>

namespace queen::test {

struct shell_result {
    int status = -1;  // the exit status; -1 when the command did not exit normally
    std::string out;  // its standard output
};

// Runs `command` with sh -c and waits for it; its exit status and its whole standard output.
// Throws std::runtime_error when the command cannot be started.
shell_result run_shell(const std::string& command);

}  // namespace queen::test
