#include "config/config.hpp"

#include "config/cors_origins.hpp"
#include "config/env_reader.hpp"
#include "db/conninfo.hpp"
#include "domain/tenant_scope.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace queen::config {
namespace {

std::optional<std::string> get(const std::map<std::string, std::string>& env, const char* key) {
    auto it = env.find(key);
    if (it == env.end() || it->second.empty()) return std::nullopt;
    return it->second;
}

// Quotes a libpq conninfo value.
std::string quote(const std::string& v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

// Queen's defaults for the PG_* it does not find (Queen's server/ENV_VARIABLES.md); no default
// password: libpq's PGPASSWORD or ~/.pgpass apply instead.
struct pg_variable {
    const char* keyword;
    const char* name;
    const char* queen_default;
};
constexpr pg_variable pg_variables[] = {
    {"host", "PG_HOST", "localhost"},     {"port", "PG_PORT", "5432"},     {"user", "PG_USER", "postgres"},
    {"password", "PG_PASSWORD", nullptr}, {"dbname", "PG_DB", "postgres"},
};

// The external database: QUEEN_DATABASE_URL, else the PG_* variables, else none (embedded).
void read_database(env_reader& r, broker_config& c) {
    if (auto url = r.text("database", {"QUEEN_DATABASE_URL"})) {
        c.conninfo = *url;
        c.embedded = false;
        return;
    }
    std::string ci, set_by;
    for (const auto& v : pg_variables) {
        if (get(r.env(), v.name)) set_by += std::string(set_by.empty() ? "" : ", ") + v.name;
    }
    if (set_by.empty()) return;
    if (auto port = get(r.env(), "PG_PORT")) parse_number("PG_PORT", *port, 1, 65535);
    for (const auto& v : pg_variables) {
        auto value = get(r.env(), v.name);
        if (!value && v.queen_default) value = v.queen_default;
        if (value) ci += fmt::format("{}{}={}", ci.empty() ? "" : " ", v.keyword, quote(*value));
    }
    c.conninfo = ci;
    c.embedded = false;
    r.note("database", set_by);
}

// Refuses a connection string libpq cannot parse, naming the variables it came from.
void check_database(const broker_config& c) {
    if (c.embedded) return;
    try {
        (void)db::hardened_conninfo(c.conninfo, db::connection_settings{}, db::connection_role::maintenance);
    } catch (const std::invalid_argument& e) {
        auto it = c.sources.find("database");
        throw std::invalid_argument((it == c.sources.end() ? std::string("database") : it->second) + ": " + e.what());
    }
}

// The housekeeping sweep: QUEEN_HOUSEKEEPING_INTERVAL_MS, else the smaller of Queen's
// RETENTION_INTERVAL and EVICTION_INTERVAL (each at Queen's default when unset).
void read_housekeeping_interval(env_reader& r, broker_config& c) {
    constexpr long long lo = 50, hi = 86400000;
    if (auto v = r.number("housekeeping_interval_ms", {"QUEEN_HOUSEKEEPING_INTERVAL_MS"}, lo, hi)) {
        c.housekeeping_interval = std::chrono::milliseconds(*v);
        return;
    }
    auto retention = first_set(r.env(), {"RETENTION_INTERVAL"});
    auto eviction = first_set(r.env(), {"EVICTION_INTERVAL"});
    if (!retention && !eviction) return;
    const long long ret = retention ? parse_number("RETENTION_INTERVAL", retention->value, lo, hi) : 300000;
    const long long evi = eviction ? parse_number("EVICTION_INTERVAL", eviction->value, lo, hi) : 60000;
    c.housekeeping_interval = std::chrono::milliseconds(std::min(ret, evi));
    const bool ret_wins = ret < evi;
    std::string source;
    if (retention && eviction)
        source = ret_wins ? "RETENTION_INTERVAL" : "EVICTION_INTERVAL";
    else if (retention)
        source = ret_wins ? "RETENTION_INTERVAL" : "EVICTION_INTERVAL's Queen default, < RETENTION_INTERVAL";
    else
        source = ret_wins ? "RETENTION_INTERVAL's Queen default, < EVICTION_INTERVAL" : "EVICTION_INTERVAL";
    r.note("housekeeping_interval_ms", source);
}

// What a new consumer group starts from when its first pop names no subscriptionMode.
void read_subscription_mode(env_reader& r, broker_config& c) {
    auto v = first_set(r.env(), {"QUEEN_DEFAULT_SUBSCRIPTION_MODE", "DEFAULT_SUBSCRIPTION_MODE"});
    if (!v) return;
    if (v->value == "all")
        c.new_groups_from_beginning = true;
    else if (v->value == "new" || v->value == "new-only")
        c.new_groups_from_beginning = false;
    else
        throw std::invalid_argument(v->name + " must be all, new or new-only (or empty for all), not '" + v->value +
                                    "'");
    r.note("default_subscription_mode", v->name);
}

// sslmode toward PostgreSQL: QUEEN_DB_SSLMODE (a libpq sslmode), else PG_USE_SSL=true as
// "require"; either only where the conninfo itself names no sslmode.
void read_sslmode(env_reader& r, broker_config& c) {
    if (auto v = r.text("db_sslmode", {"QUEEN_DB_SSLMODE"})) {
        if (!db::valid_sslmode(*v))
            throw std::invalid_argument(
                "QUEEN_DB_SSLMODE must be disable, allow, prefer, require, verify-ca or "
                "verify-full, not '" +
                *v + "'");
        c.db_sslmode = *v;
        return;
    }
    if (auto ssl = r.boolean("db_sslmode", {"PG_USE_SSL"}); ssl && *ssl) c.db_sslmode = "require";
}

// The HTTPS listener's files: a certificate and its key together, or neither; a client CA only
// with both.
void read_tls(env_reader& r, broker_config& c) {
    if (auto v = r.text("tls_cert", {"QUEEN_TLS_CERT"})) c.tls_cert_file = *v;
    if (auto v = r.text("tls_key", {"QUEEN_TLS_KEY"})) c.tls_key_file = *v;
    if (auto v = r.text("tls_client_ca", {"QUEEN_TLS_CLIENT_CA"})) c.tls_client_ca_file = *v;
    if (!c.tls_cert_file.empty() && c.tls_key_file.empty())
        throw std::invalid_argument(
            "QUEEN_TLS_CERT is set but QUEEN_TLS_KEY is not: HTTPS needs both the "
            "certificate and its private key");
    if (c.tls_cert_file.empty() && !c.tls_key_file.empty())
        throw std::invalid_argument(
            "QUEEN_TLS_KEY is set but QUEEN_TLS_CERT is not: HTTPS needs both the "
            "certificate and its private key");
    if (c.tls_cert_file.empty() && !c.tls_client_ca_file.empty())
        throw std::invalid_argument(
            "QUEEN_TLS_CLIENT_CA needs QUEEN_TLS_CERT and QUEEN_TLS_KEY: client "
            "certificates are only asked for over HTTPS");
}

// Tenancy: the header (an HTTP field name) turns it on; the claim needs the header and auth;
// the default tenant must be a valid tenant name.
void read_tenancy(env_reader& r, broker_config& c) {
    if (auto v = r.text("tenancy_header", {"QUEEN_TENANCY_HEADER"})) {
        static const std::regex field_name(R"([!#$%&'*+.^_`|~0-9A-Za-z-]+)");
        if (!std::regex_match(*v, field_name))
            throw std::invalid_argument("QUEEN_TENANCY_HEADER must be an HTTP header name, got '" + *v + "'");
        c.tenancy_header = *v;
    }
    if (auto v = r.text("tenancy_claim", {"QUEEN_TENANCY_CLAIM"})) {
        if (c.tenancy_header.empty())
            throw std::invalid_argument("QUEEN_TENANCY_CLAIM needs QUEEN_TENANCY_HEADER: the header turns tenancy on");
        if (!c.auth.enabled)
            throw std::invalid_argument("QUEEN_TENANCY_CLAIM needs JWT_ENABLED: the claim is read from the token");
        c.auth.tenant_claim = *v;
    }
    if (auto v = r.text("tenancy_default", {"QUEEN_TENANCY_DEFAULT"})) {
        if (auto problem = domain::tenant_name_problem(*v); !problem.empty())
            throw std::invalid_argument("QUEEN_TENANCY_DEFAULT " + problem);
        c.tenancy_default = *v;
    }
}

// Queen's settings with no counterpart here, and what to do instead.
struct unread_setting {
    const char* name;
    const char* instead;
};
constexpr unread_setting unread_settings[] = {
    {"PG_SSL_REJECT_UNAUTHORIZED", "set QUEEN_DB_SSLMODE=verify-full and sslrootcert in QUEEN_DATABASE_URL"},
    {"NUM_WORKERS", "set QUEEN_THREADS"},
    {"DB_IDLE_TIMEOUT", "pool connections stay open"},
    {"DB_CONNECTION_TIMEOUT", "connection attempts are bounded by QUEEN_DB_TCP_USER_TIMEOUT_MS"},
    {"DB_LOCK_TIMEOUT", "lock waits count against QUEEN_DB_STATEMENT_TIMEOUT_MS"},
    {"RETENTION_BATCH_SIZE", "housekeeping has no batch size"},
    {"EVICTION_BATCH_SIZE", "housekeeping has no batch size"},
    {"FILE_BUFFER_FLUSH_MS", "the spool drains continuously"},
    {"FILE_BUFFER_MAX_BATCH", "the spool drains in its own batches"},
    {"FILE_BUFFER_EVENTS_PER_FILE", "the spool is one file"},
};

void note_unread_settings(const std::map<std::string, std::string>& env, broker_config& c) {
    for (const auto& u : unread_settings)
        if (get(env, u.name))
            c.warnings.push_back(fmt::format("{} is a Queen setting this broker does not read: {}", u.name, u.instead));
    if (get(env, "FILE_BUFFER_DIR") && !get(env, "QUEEN_SPOOL_DIR"))
        c.warnings.push_back("FILE_BUFFER_DIR holds this broker's spool; buffer files Queen left there are not read");
}

}  // namespace

std::string default_spool_dir(const std::map<std::string, std::string>& env) {
    if (::geteuid() == 0) return "/var/lib/queen/spool";
    if (auto xdg = get(env, "XDG_DATA_HOME"); xdg && xdg->front() == '/') return *xdg + "/queen/spool";
    std::string home;
    if (auto h = get(env, "HOME"))
        home = *h;
    else if (struct passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir)
        home = pw->pw_dir;
    else
        throw std::invalid_argument("cannot choose a spool directory (HOME is not set): set QUEEN_SPOOL_DIR");
    return home + "/.local/share/queen/spool";
}

broker_config from_map(const std::map<std::string, std::string>& env) {
    broker_config c;
    env_reader r(env, c.sources);
    using ms = std::chrono::milliseconds;
    if (auto v = r.text("host", {"HOST"})) c.host = *v;
    if (auto v = r.number("port", {"PORT"}, 0, 65535)) c.port = static_cast<unsigned short>(*v);
    if (auto v = r.number("threads", {"QUEEN_THREADS"}, 1, 256)) c.threads = static_cast<std::size_t>(*v);

    read_database(r, c);
    check_database(c);
    if (auto v = r.number("pool_size", {"QUEEN_DB_POOL_SIZE", "DB_POOL_SIZE"}, 1, 1000))
        c.pool_size = static_cast<std::size_t>(*v);
    if (auto v = r.boolean("db_prepared_statements", {"QUEEN_DB_PREPARED_STATEMENTS"})) c.db_prepared_statements = *v;
    if (auto v =
            r.number("db_statement_timeout_ms", {"QUEEN_DB_STATEMENT_TIMEOUT_MS", "DB_STATEMENT_TIMEOUT"}, 0, 86400000))
        c.db_statement_timeout = ms(*v);
    read_sslmode(r, c);
    if (auto v = r.number("db_keepalives_idle_s", {"QUEEN_DB_KEEPALIVES_IDLE_S"}, 1, 86400))
        c.db_keepalives_idle = std::chrono::seconds(*v);
    if (auto v = r.number("db_keepalives_interval_s", {"QUEEN_DB_KEEPALIVES_INTERVAL_S"}, 1, 3600))
        c.db_keepalives_interval = std::chrono::seconds(*v);
    if (auto v = r.number("db_keepalives_count", {"QUEEN_DB_KEEPALIVES_COUNT"}, 1, 100))
        c.db_keepalives_count = static_cast<int>(*v);
    if (auto v = r.number("db_tcp_user_timeout_ms", {"QUEEN_DB_TCP_USER_TIMEOUT_MS"}, 0, 3600000))
        c.db_tcp_user_timeout = ms(*v);
    if (auto v = r.number("db_startup_wait_ms", {"QUEEN_DB_STARTUP_WAIT_MS"}, 0, 3600000)) c.db_startup_wait = ms(*v);
    if (auto v = r.boolean("apply_schema", {"QUEEN_APPLY_SCHEMA"})) c.apply_schema = *v;
    if (auto v = r.text("extension", {"QUEEN_EXTENSION"})) {
        if (*v == "auto")
            c.extension = extension_policy::auto_detect;
        else if (*v == "require" || *v == "on")
            c.extension = extension_policy::require;
        else if (*v == "off")
            c.extension = extension_policy::off;
        else
            throw std::invalid_argument("QUEEN_EXTENSION must be auto, require (or on) or off, not '" + *v + "'");
    }
    if (auto v = r.text("embedded_data_dir", {"QUEEN_DATA_DIR"})) c.embedded_data_dir = *v;

    if (auto v = r.number("max_body_bytes", {"QUEEN_MAX_BODY_BYTES"}, 1024, 1LL << 30))
        c.max_body_bytes = static_cast<std::size_t>(*v);
    if (auto v = r.number("max_push_items", {"QUEEN_MAX_PUSH_ITEMS"}, 1, 1000000))
        c.max_push_items = static_cast<std::size_t>(*v);
    if (auto v = r.number("max_pop_batch", {"QUEEN_MAX_POP_BATCH"}, 1, 1000000))
        c.max_pop_batch = static_cast<std::size_t>(*v);
    if (auto v = r.number("max_json_values", {"QUEEN_MAX_JSON_VALUES"}, 1000, 1LL << 32))
        c.max_json_values = static_cast<std::size_t>(*v);
    if (auto v = r.text("cors_origins", {"QUEEN_CORS_ORIGINS"})) c.cors_origins = parse_cors_origins(*v);
    if (auto v = r.text("allowed_hosts", {"QUEEN_ALLOWED_HOSTS"})) c.allowed_hosts = parse_allowed_hosts(*v);
    if (auto v = r.number("push_fusion_wait_us", {"QUEEN_PUSH_FUSION_WAIT_US"}, 0, 1000000))
        c.push_fusion_wait = std::chrono::microseconds(*v);
    if (auto v = r.number("push_fusion_max_items", {"QUEEN_PUSH_FUSION_MAX_ITEMS"}, 1, 1000000))
        c.push_fusion_max_items = static_cast<std::size_t>(*v);
    if (auto v = r.number("push_fusion_max_inflight", {"QUEEN_PUSH_FUSION_MAX_INFLIGHT"}, 1, 1024))
        c.push_fusion_max_inflight = static_cast<std::size_t>(*v);
    if (auto v = r.number("ack_fusion_wait_us", {"QUEEN_ACK_FUSION_WAIT_US"}, 0, 1000000))
        c.ack_fusion_wait = std::chrono::microseconds(*v);
    if (auto v = r.number("ack_fusion_max_inflight", {"QUEEN_ACK_FUSION_MAX_INFLIGHT"}, 1, 1024))
        c.ack_fusion_max_inflight = static_cast<std::size_t>(*v);
    if (auto v = r.number("pop_fusion_max_requests", {"QUEEN_POP_FUSION_MAX_REQUESTS"}, 1, 1024))
        c.pop_fusion_max_requests = static_cast<std::size_t>(*v);
    if (auto v = r.number("pop_fusion_wait_us", {"QUEEN_POP_FUSION_WAIT_US"}, 0, 1000000))
        c.pop_fusion_wait = std::chrono::microseconds(*v);
    if (auto v = r.number("longpoll_recheck_ms", {"QUEEN_LONGPOLL_RECHECK_MS"}, 10, 60000)) c.longpoll_recheck = ms(*v);
    read_subscription_mode(r, c);

    read_housekeeping_interval(r, c);
    if (auto v = r.number("claim_floor_interval_ms", {"QUEEN_CLAIM_FLOOR_INTERVAL_MS"}, 50, 86400000))
        c.claim_floor_interval = ms(*v);
    if (auto v = r.number("metrics_flush_ms", {"QUEEN_METRICS_FLUSH_MS"}, 100, 3600000))
        c.metrics_flush_interval = ms(*v);
    if (auto v =
            r.number("metrics_retention_days", {"QUEEN_METRICS_RETENTION_DAYS", "METRICS_RETENTION_DAYS"}, 1, 3650))
        c.metrics_retention_days = static_cast<int>(*v);
    if (auto v = r.number("metrics_max_queues", {"QUEEN_METRICS_MAX_QUEUES"}, 1, 1000000))
        c.metrics_max_queues = static_cast<std::size_t>(*v);
    if (auto v = r.number("stats_interval_ms", {"QUEEN_STATS_INTERVAL_MS"}, 100, 86400000)) c.stats_interval = ms(*v);
    if (auto v = r.number("group_idle_s", {"QUEEN_GROUP_IDLE_SECONDS"}, 0, 1LL << 31))
        c.group_idle = std::chrono::seconds(*v);
    if (auto v = r.number("partition_idle_s", {"QUEEN_PARTITION_IDLE_SECONDS"}, 1, 1LL << 31)) {
        c.partition_idle = std::chrono::seconds(*v);
    } else if (auto d = r.number("partition_idle_s", {"PARTITION_CLEANUP_DAYS"}, 1, (1LL << 31) / 86400)) {
        c.partition_idle = std::chrono::seconds(*d * 86400);
    }

    if (auto v = r.text("spool_dir", {"QUEEN_SPOOL_DIR", "FILE_BUFFER_DIR"}))
        c.spool_dir = *v;
    else
        c.spool_dir = default_spool_dir(env);
    if (auto v = r.number("spool_max_bytes", {"QUEEN_SPOOL_MAX_BYTES"}, 0, 1LL << 50))
        c.spool_max_bytes = static_cast<std::uint64_t>(*v);
    if (auto v = r.number("maintenance_refresh_ms", {"QUEEN_MAINTENANCE_REFRESH_MS"}, 50, 60000))
        c.maintenance_refresh = ms(*v);

    if (auto v = r.text("encryption_key", {"QUEEN_ENCRYPTION_KEY"})) {
        bool hex = v->size() == 64 && v->find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
        if (!hex) throw std::invalid_argument("QUEEN_ENCRYPTION_KEY must be 64 hexadecimal characters (32 bytes)");
        c.encryption_key = *v;
    }

    c.abuse = read_abuse_limits(r);

    read_tls(r, c);
    note_unread_settings(env, c);
    c.auth = auth_from_map(env);
    read_tenancy(r, c);
    c.per_tenant = read_tenant_limits(r, !c.tenancy_header.empty());
    if (c.threads == 0) c.threads = std::max(2u, std::thread::hardware_concurrency());
    if (c.pool_size == 0) c.pool_size = std::max<std::size_t>(4, 2 * std::thread::hardware_concurrency());
    if (c.push_fusion_max_inflight == 0) c.push_fusion_max_inflight = std::max<std::size_t>(1, c.pool_size / 2);
    return c;
}

broker_config from_environment() {
    std::map<std::string, std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return from_map(env);
}

std::string redact_conninfo(const std::string& conninfo) {
    static const std::regex kv_password(R"((password\s*=\s*)('([^'\\]|\\.)*'|\S+))", std::regex::icase);
    static const std::regex url_password(R"((://[^:/@]+:)[^@]*@)");
    std::string out = std::regex_replace(conninfo, kv_password, "$1***");
    return std::regex_replace(out, url_password, "$1***@");
}

const char* policy_name(extension_policy policy) {
    switch (policy) {
        case extension_policy::require:
            return "require";
        case extension_policy::off:
            return "off";
        case extension_policy::auto_detect:
            break;
    }
    return "auto";
}

std::string describe(const broker_config& c) {
    const std::pair<const char*, std::string> values[] = {
        {"host", c.host},
        {"port", std::to_string(c.port)},
        {"threads", std::to_string(c.threads)},
        {"database", c.embedded ? std::string("embedded") : redact_conninfo(c.conninfo)},
        {"pool_size", std::to_string(c.pool_size)},
        {"db_prepared_statements", c.db_prepared_statements ? "true" : "false"},
        {"db_statement_timeout_ms", std::to_string(c.db_statement_timeout.count())},
        {"db_sslmode", c.db_sslmode.empty() ? std::string("(the connection string's)") : c.db_sslmode},
        {"db_keepalives_idle_s", std::to_string(c.db_keepalives_idle.count())},
        {"db_keepalives_interval_s", std::to_string(c.db_keepalives_interval.count())},
        {"db_keepalives_count", std::to_string(c.db_keepalives_count)},
        {"db_tcp_user_timeout_ms", std::to_string(c.db_tcp_user_timeout.count())},
        {"db_startup_wait_ms", std::to_string(c.db_startup_wait.count())},
        {"apply_schema", c.apply_schema ? "true" : "false"},
        {"extension", policy_name(c.extension)},
        {"max_body_bytes", std::to_string(c.max_body_bytes)},
        {"max_push_items", std::to_string(c.max_push_items)},
        {"max_pop_batch", std::to_string(c.max_pop_batch)},
        {"max_json_values", std::to_string(c.max_json_values)},
        {"json_parse_budget_bytes", std::to_string(c.abuse.json_parse_budget_bytes)},
        {"cors_origins", c.cors_origins.empty() ? std::string("none (same origin only)")
                                                : fmt::format("{}", fmt::join(c.cors_origins, ","))},
        {"allowed_hosts", c.allowed_hosts.empty() ? std::string("IP literals and localhost")
                                                  : fmt::format("{}", fmt::join(c.allowed_hosts, ","))},
        {"push_fusion_wait_us", std::to_string(c.push_fusion_wait.count())},
        {"push_fusion_max_inflight", std::to_string(c.push_fusion_max_inflight)},
        {"ack_fusion_wait_us", std::to_string(c.ack_fusion_wait.count())},
        {"ack_fusion_max_inflight", std::to_string(c.ack_fusion_max_inflight)},
        {"pop_fusion_max_requests", std::to_string(c.pop_fusion_max_requests)},
        {"pop_fusion_wait_us", std::to_string(c.pop_fusion_wait.count())},
        {"longpoll_recheck_ms", std::to_string(c.longpoll_recheck.count())},
        {"default_subscription_mode", c.new_groups_from_beginning ? "all" : "new"},
        {"housekeeping_interval_ms", std::to_string(c.housekeeping_interval.count())},
        {"claim_floor_interval_ms", std::to_string(c.claim_floor_interval.count())},
        {"stats_interval_ms", std::to_string(c.stats_interval.count())},
        {"metrics_flush_ms", std::to_string(c.metrics_flush_interval.count())},
        {"metrics_retention_days", std::to_string(c.metrics_retention_days)},
        {"metrics_max_queues", std::to_string(c.metrics_max_queues)},
        {"group_idle_s", std::to_string(c.group_idle.count())},
        {"partition_idle_s", std::to_string(c.partition_idle.count())},
        {"spool_dir", c.spool_dir},
        {"spool_max_bytes", std::to_string(c.spool_max_bytes)},
        {"maintenance_refresh_ms", std::to_string(c.maintenance_refresh.count())},
        {"max_connections_per_client", std::to_string(c.abuse.max_connections_per_client)},
        {"max_longpolls_per_client", std::to_string(c.abuse.max_longpolls_per_client)},
        {"max_header_bytes", std::to_string(c.abuse.max_header_bytes)},
        {"max_header_count", std::to_string(c.abuse.max_header_count)},
        {"rate_limit_per_second", fmt::format("{}", c.abuse.rate_per_second)},
        {"rate_limit_burst", fmt::format("{}", c.abuse.rate_burst)},
        {"encryption_key", c.encryption_key.empty() ? std::string("none") : std::string("***")},
        {"tls_cert", c.tls_cert_file.empty() ? std::string("none (plain HTTP)") : c.tls_cert_file},
        {"tls_key", c.tls_key_file.empty() ? std::string("none") : c.tls_key_file},
        {"tls_client_ca", c.tls_client_ca_file.empty() ? std::string("none") : c.tls_client_ca_file},
        {"tenancy_header", c.tenancy_header.empty() ? std::string("none (tenancy off)") : c.tenancy_header},
        {"tenancy_claim", c.auth.tenant_claim.empty() ? std::string("none") : c.auth.tenant_claim},
        {"tenancy_default", c.tenancy_default},
        {"tenant_rate_limit_per_second", fmt::format("{}", c.per_tenant.rate_per_second)},
        {"tenant_rate_limit_burst", fmt::format("{}", c.per_tenant.rate_burst)},
        {"tenant_max_longpolls", std::to_string(c.per_tenant.max_longpolls)},
        {"tenant_max_queues", std::to_string(c.per_tenant.max_queues)},
        {"tenant_max_bytes", std::to_string(c.per_tenant.max_bytes)},
    };
    std::string out = "config:";
    for (const auto& [label, value] : values) {
        out += fmt::format(" {}={}", label, value);
        if (auto it = c.sources.find(label); it != c.sources.end()) out += " (" + it->second + ")";
    }
    return out;
}

}  // namespace queen::config
