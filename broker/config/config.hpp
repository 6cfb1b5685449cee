#pragma once
// Broker configuration, read once from the environment.
#include "config/abuse_limits.hpp"
#include "config/auth_env.hpp"
#include "config/limits.hpp"
#include "config/tenant_limits.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace queen::config {

// QUEEN_EXTENSION: what this broker demands of the database's codec path. The path itself is
// the database's (is queen_ext installed?); a broker only checks it at start.
enum class extension_policy {
    auto_detect,  // "auto" (default): use whatever the database has
    require,      // "require" or "on": refuse to start without queen_ext
    off,          // "off": refuse to start with queen_ext (the stock path is wanted)
};

struct broker_config {
    std::string host = "0.0.0.0";
    unsigned short port = 6632;
    std::size_t threads = 0;  // 0: hardware concurrency
    // Database: empty conninfo means "start the embedded PostgreSQL".
    std::string conninfo;
    bool embedded = true;
    std::string embedded_data_dir;  // QUEEN_DATA_DIR
    std::size_t pool_size = 0;      // 0: derived from the cores
    // Statements with parameters run prepared, once per connection (QUEEN_DB_PREPARED_STATEMENTS;
    // off behind a pooler that shares server connections between transactions).
    bool db_prepared_statements = true;
    // Hardening of every database connection (docs/deployment.md): TCP keepalives and user
    // timeout, the sslmode to ask for (empty: the conninfo's or libpq's), and the statement
    // timeout of request connections (0: none).
    std::chrono::seconds db_keepalives_idle{5};
    std::chrono::seconds db_keepalives_interval{2};
    int db_keepalives_count = 3;
    std::chrono::milliseconds db_tcp_user_timeout{5000};
    std::string db_sslmode;
    std::chrono::milliseconds db_statement_timeout{30000};
    std::chrono::milliseconds db_startup_wait{30000};  // how long start-up waits for PostgreSQL
    bool apply_schema = true;
    extension_policy extension = extension_policy::auto_detect;  // QUEEN_EXTENSION
    // Limits (docs/http-api.md, "Conventions"); the defaults of the request limits are config::limits'.
    std::size_t max_body_bytes = 64u << 20;
    std::size_t max_push_items = limits{}.max_push_items;
    std::size_t max_pop_batch = limits{}.max_pop_batch;
    std::size_t max_name_bytes = limits{}.max_name_bytes;
    std::size_t max_json_values = limits{}.max_json_values;
    // Timeouts.
    std::chrono::seconds read_timeout{60};
    std::chrono::seconds idle_timeout{75};
    // Push fusion: how long a push waits for neighbours, and batch bounds.
    std::chrono::microseconds push_fusion_wait{500};
    std::size_t push_fusion_max_items = 20000;
    std::size_t push_fusion_max_inflight = 0;  // fused transactions at once; 0: half the pool
    // Ack fusion: how long an ack waits for neighbours of its group (0: no fusion), and the
    // fused calls at once.
    std::chrono::microseconds ack_fusion_wait{500};
    std::size_t ack_fusion_max_inflight = 1;
    // Pop fusion: queue-wide pops of one queue and group in one call (1: none), and how long the
    // first pop of an idle (queue, group) waits for others.
    std::size_t pop_fusion_max_requests = 64;
    std::chrono::microseconds pop_fusion_wait{0};
    // Long-poll: a parked pop re-checks at least this often (leases expire, delays pass).
    std::chrono::milliseconds longpoll_recheck{1000};
    // Housekeeping (one elected broker): how often, and when groups/partitions count as idle.
    std::chrono::milliseconds housekeeping_interval{60000};
    std::chrono::milliseconds claim_floor_interval{1000};     // raise of the claim floors (53_claim_floor.sql)
    std::chrono::milliseconds stats_interval{10000};          // refresh of the stats snapshot (68_stats.sql)
    std::chrono::milliseconds metrics_flush_interval{60000};  // activity counters to the database
    int metrics_retention_days = 7;                           // activity rows kept (93_activity_metrics.sql)
    std::size_t metrics_max_queues = 1000;                    // queue labels before "__other__" (docs/metrics.md)
    // A pop naming no subscriptionMode registers a new group from the beginning ("all") or
    // from now ("new"); DEFAULT_SUBSCRIPTION_MODE.
    bool new_groups_from_beginning = true;
    std::chrono::seconds group_idle{0};  // 0: consumer groups never expire
    std::chrono::seconds partition_idle{30 * 86400};
    // Spool and maintenance (docs/maintenance-and-spool.md): where this broker's spool file
    // lives (a disk that survives restarts), its size limit (0: none), and how often the
    // maintenance flags are re-read from the database.
    std::string encryption_key;                           // QUEEN_ENCRYPTION_KEY (64 hex chars), secret
    std::string spool_dir;                                // QUEEN_SPOOL_DIR
    std::uint64_t spool_max_bytes = 1ull << 30;           // QUEEN_SPOOL_MAX_BYTES
    std::chrono::milliseconds maintenance_refresh{1000};  // QUEEN_MAINTENANCE_REFRESH_MS
    auth::auth_config auth;                               // JWT_* (config/auth_env.hpp)
    // Tenancy (docs/tenancy.md): the header naming a request's tenant (empty: tenancy off),
    // the tenant that owns the queues stored without one. The token claim naming the tenant
    // (QUEEN_TENANCY_CLAIM) is auth.tenant_claim.
    std::string tenancy_header;               // QUEEN_TENANCY_HEADER
    std::string tenancy_default = "default";  // QUEEN_TENANCY_DEFAULT
    tenant_limits per_tenant;                 // per-tenant limits (config/tenant_limits.hpp)
    abuse_limits abuse;                       // per-client limits (config/abuse_limits.hpp)
    // Origins whose pages may call the broker from a browser (QUEEN_CORS_ORIGINS,
    // config/cors_origins.hpp): none by default, {"*"} for any.
    std::vector<std::string> cors_origins;
    // Host names a browser request may address while auth is off, besides IP literals and
    // localhost (QUEEN_ALLOWED_HOSTS, config/cors_origins.hpp): none by default, {"*"} for any.
    std::vector<std::string> allowed_hosts;
    // HTTPS (docs/security.md, "TLS"): PEM files; both cert and key set, or neither (plain HTTP).
    std::string tls_cert_file;       // QUEEN_TLS_CERT: the chain, leaf first
    std::string tls_key_file;        // QUEEN_TLS_KEY
    std::string tls_client_ca_file;  // QUEEN_TLS_CLIENT_CA: set, client certificates are required
    // Which environment variable set each value describe() prints (by its label there);
    // values left at their default have no entry.
    std::map<std::string, std::string> sources;
    // Queen settings found in the environment that this broker does not read, one line each
    // with what to use instead (docs/deployment.md); logged at start.
    std::vector<std::string> warnings;
};

// The default QUEEN_SPOOL_DIR: /var/lib/queen/spool as root, else
// $XDG_DATA_HOME/queen/spool or ~/.local/share/queen/spool (from the given environment).
std::string default_spool_dir(const std::map<std::string, std::string>& env);

// "auto", "require" or "off": the QUEEN_EXTENSION spelling of a policy.
const char* policy_name(extension_policy policy);

// Reads the environment; throws std::invalid_argument naming the bad variable. Where a
// QUEEN_* name and a Queen deployment's name (README, "Settings") are both set, QUEEN_* wins.
broker_config from_environment();

// Reads from an explicit map (tests).
broker_config from_map(const std::map<std::string, std::string>& env);

// The configuration as label=value pairs, each followed by the variable that set it, e.g.
// "pool_size=12 (DB_POOL_SIZE)"; secrets redacted.
std::string describe(const broker_config& config);

// conninfo with any password replaced by "***".
std::string redact_conninfo(const std::string& conninfo);

}  // namespace queen::config
