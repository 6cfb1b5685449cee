// The queen broker: reads its configuration, starts (or connects to) PostgreSQL, applies the
// schema, and serves the HTTP API (HTTPS with QUEEN_TLS_CERT/KEY; SIGHUP reloads them) until
// SIGINT/SIGTERM (broker/app/run.cpp). Exit status: 2 for a configuration error, 1 for any
// other failure.
#include "app/run.hpp"
#include "log/log.hpp"

#include <stdexcept>

int main() {
    using namespace queen;
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
