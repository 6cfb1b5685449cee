#include "app/database_setup.hpp"

#include "db/conninfo.hpp"
#include "log/log.hpp"
#include "schema/codec_path.hpp"

namespace queen::app {

namespace {

// The hardening every connection gets (docs/deployment.md); sslmode only toward an external
// server (the embedded one is reached over its Unix socket).
db::connection_settings connection_settings_of(const config::broker_config& cfg) {
    db::connection_settings s;
    s.keepalives_idle = cfg.db_keepalives_idle;
    s.keepalives_interval = cfg.db_keepalives_interval;
    s.keepalives_count = cfg.db_keepalives_count;
    s.tcp_user_timeout = cfg.db_tcp_user_timeout;
    if (!cfg.embedded) s.sslmode = cfg.db_sslmode;
    s.statement_timeout = cfg.db_statement_timeout;
    s.tenant_max_queues = cfg.per_tenant.max_queues;
    return s;
}

// The configured database, or the embedded server started (or adopted) here.
std::string start_database(const config::broker_config& cfg, std::optional<embedded::embedded_postgres>& embedded) {
    if (!cfg.embedded) return cfg.conninfo;
    embedded::embedded_options opts;
    if (!cfg.embedded_data_dir.empty()) opts.data_dir = cfg.embedded_data_dir;
    embedded.emplace(opts);
    log::info("embedded PostgreSQL ready; inspect it with: {}", embedded->psql_command());
    return embedded->conninfo();
}

// Applies (or only checks) the schema and holds the database's codec path to QUEEN_EXTENSION.
schema::migration_report prepare_schema(const config::broker_config& cfg, const std::string& conninfo) {
    auto report =
        cfg.apply_schema ? schema::apply(conninfo, cfg.db_startup_wait) : schema::check(conninfo, cfg.db_startup_wait);
    log::info("schema version {} ({} migrations applied now, procedures {}); payloads may nest {} levels",
              report.database_version, report.applied, report.procedures_applied ? "applied" : "unchanged",
              report.max_payload_depth);
    auto codec = schema::detect_codec_path(conninfo);
    log::info("{}", schema::describe(codec));
    schema::enforce(cfg.extension, codec);
    return report;
}

}  // namespace

database_setup::database_setup(const config::broker_config& cfg) {
    const std::string database = start_database(cfg, embedded_);
    const auto hardening = connection_settings_of(cfg);
    maintenance_conninfo_ = db::hardened_conninfo(database, hardening, db::connection_role::maintenance);
    request_conninfo_ = db::hardened_conninfo(database, hardening, db::connection_role::requests);
    listener_conninfo_ = db::hardened_conninfo(database, hardening, db::connection_role::listener);
    schema_ = prepare_schema(cfg, maintenance_conninfo_);
    // A spool left non-empty by an earlier run is recovered against this database's identity.
    initial_flags_ = maintenance::maintenance_flags::load(maintenance_conninfo_);
}

}  // namespace queen::app
