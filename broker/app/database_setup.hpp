#pragma once
// The database a broker serves from, made ready before anything else starts: the embedded
// server started (or adopted) or the configured one reached, the schema applied or checked
// and held to QUEEN_EXTENSION, and the maintenance flags as the database holds them.
#include "config/config.hpp"
#include "embedded/embedded_postgres.hpp"
#include "maintenance/maintenance_flags.hpp"
#include "schema/migrator.hpp"

#include <optional>
#include <string>
#include <vector>

namespace queen::app {

class database_setup {
public:
    // Blocks until the database is ready; throws std::exception naming what failed, or
    // startup_interrupted (app/startup_signals.hpp) after the step a signal arrived in.
    explicit database_setup(const config::broker_config& cfg);

    const std::string& maintenance_conninfo() const noexcept { return maintenance_conninfo_; }  // schema, boot reads
    const std::string& request_conninfo() const noexcept { return request_conninfo_; }          // the pool
    // Behind a shard proxy (docs/scaling.md): every shard database, where brokers LISTEN and
    // elect housekeeping; otherwise the one database. Never empty.
    const std::vector<std::string>& listener_conninfos() const noexcept { return listener_conninfos_; }
    const std::vector<std::string>& housekeeping_conninfos() const noexcept { return housekeeping_conninfos_; }
    const schema::migration_report& schema() const noexcept { return schema_; }
    const maintenance::flags_snapshot& initial_flags() const noexcept { return initial_flags_; }

private:
    std::optional<embedded::embedded_postgres> embedded_;  // stopped when the broker ends
    std::string maintenance_conninfo_, request_conninfo_, listener_conninfo_;
    std::vector<std::string> listener_conninfos_, housekeeping_conninfos_;
    schema::migration_report schema_;
    maintenance::flags_snapshot initial_flags_;
};

}  // namespace queen::app
