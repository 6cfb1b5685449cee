#include "app/database_setup.hpp"

#include "app/startup_signals.hpp"
#include "db/conninfo.hpp"
#include "log/log.hpp"

#include <stdexcept>
#include "schema/codec_path.hpp"
#include "schema/shard_proxy_installer.hpp"
#include "store/shards_store.hpp"

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

// Behind a shard proxy the shards' schemas are only checked (`queen shards init` applies
// them and regenerates the proxy's functions to match); the first shard's codec path is held
// to QUEEN_EXTENSION.
schema::migration_report check_shard_schemas(const config::broker_config& cfg, const std::vector<std::string>& shards) {
    schema::migration_report first;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        auto report = schema::check(shards[i], cfg.db_startup_wait);
        if (i == 0) first = report;
    }
    log::info("sharded: {} shard databases behind the proxy, schema version {}; payloads may nest {} levels",
              shards.size(), first.database_version, first.max_payload_depth);
    auto codec = schema::detect_codec_path(shards.front());
    log::info("{}", schema::describe(codec));
    schema::enforce(cfg.extension, codec);
    return first;
}

}  // namespace

database_setup::database_setup(const config::broker_config& cfg) {
    const std::string database = start_database(cfg, embedded_);
    // From here an interrupted start-up unwinds through embedded_, which stops the server.
    startup_signals::check();
    const auto hardening = connection_settings_of(cfg);
    maintenance_conninfo_ = db::hardened_conninfo(database, hardening, db::connection_role::maintenance);
    request_conninfo_ = db::hardened_conninfo(database, hardening, db::connection_role::requests);
    listener_conninfo_ = db::hardened_conninfo(database, hardening, db::connection_role::listener);
    if (!cfg.embedded && schema::is_shard_proxy(maintenance_conninfo_, cfg.db_startup_wait)) {
        for (const auto& shard : store::read_shard_databases(maintenance_conninfo_)) {
            housekeeping_conninfos_.push_back(
                db::hardened_conninfo(shard, hardening, db::connection_role::maintenance));
            listener_conninfos_.push_back(db::hardened_conninfo(shard, hardening, db::connection_role::listener));
        }
        if (listener_conninfos_.empty()) throw std::runtime_error("the shard proxy has no shard databases");
        schema_ = check_shard_schemas(cfg, housekeeping_conninfos_);
    } else {
        schema_ = prepare_schema(cfg, maintenance_conninfo_);
        housekeeping_conninfos_.push_back(maintenance_conninfo_);
        listener_conninfos_.push_back(listener_conninfo_);
    }
    startup_signals::check();
    // A spool left non-empty by an earlier run is recovered against this database's identity.
    initial_flags_ = maintenance::maintenance_flags::load(maintenance_conninfo_);
    startup_signals::check();
}

}  // namespace queen::app
