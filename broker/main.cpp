// The queen broker: reads its configuration, starts (or connects to) PostgreSQL, applies the
// schema, and serves the HTTP API (HTTPS with QUEEN_TLS_CERT/KEY; SIGHUP reloads them) until
// SIGINT/SIGTERM (broker/app/run.cpp). Exit status: 2 for a configuration error, 1 for any
// other failure. `queen shards …` runs the shard commands instead (app/shards_command.hpp).
#include "app/run.hpp"
#include "app/shards_command.hpp"
#include "log/log.hpp"

#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace queen;
    if (argc > 1 && std::string(argv[1]) == "shards") return app::shards_command({argv + 2, argv + argc});
    try {
        return app::run();
    } catch (const std::invalid_argument& e) {
        log::error("configuration error: {}", e.what());
        return 2;
    } catch (const std::exception& e) {
        log::error("fatal: {}", e.what());
        return 1;
    }
}
