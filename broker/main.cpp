// The queen broker: reads its configuration, starts (or connects to) PostgreSQL, applies the
// schema, and serves the HTTP API (HTTPS with QUEEN_TLS_CERT/KEY; SIGHUP reloads them) until
// SIGINT/SIGTERM (broker/app/run.cpp). `queen shards …` runs the shard commands instead
// (app/shards_command.hpp); `--help` and `--version` print and exit (app/command_line.hpp).
// Exit status: 0 after a stop by signal (during start-up too), 2 for a usage or configuration
// error, 1 for any other failure.
#include "app/command_line.hpp"
#include "app/run.hpp"
#include "app/shards_command.hpp"
#include "app/startup_signals.hpp"
#include "log/log.hpp"

#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace queen;
    // A closed log pipe (`queen | head`) fails the write, not the broker.
    std::signal(SIGPIPE, SIG_IGN);
    const app::command cmd = app::parse_command_line({argv + 1, argv + argc});
    switch (cmd.kind) {
        case app::command_kind::shards:
            return app::shards_command(cmd.rest);
        case app::command_kind::help:
            std::fputs(app::usage_text().c_str(), stdout);
            return 0;
        case app::command_kind::version:
            std::fputs(app::version_text().c_str(), stdout);
            return 0;
        case app::command_kind::usage_error:
            std::fprintf(stderr, "queen: %s\n%s", cmd.problem.c_str(), app::usage_text().c_str());
            return 2;
        case app::command_kind::serve:
            break;
    }
    try {
        return app::run();
    } catch (const app::startup_interrupted& e) {
        log::info("{}: stopped before serving", e.what());
        return 0;
    } catch (const std::invalid_argument& e) {
        log::error("configuration error: {}", e.what());
        return 2;
    } catch (const std::exception& e) {
        log::error("fatal: {}", e.what());
        return 1;
    }
}
