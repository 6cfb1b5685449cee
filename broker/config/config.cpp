#include "config/config.hpp"

#include <fmt/core.h>

#include <pwd.h>
#include <unistd.h>

#include <charconv>
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

long long parse_number(const std::string& key, const std::string& value, long long min, long long max) {
    long long out = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc{} || ptr != value.data() + value.size() || out < min || out > max) {
        throw std::invalid_argument(fmt::format("{} must be an integer in [{}, {}], got '{}'", key, min, max, value));
    }
    return out;
}

bool parse_bool(const std::string& key, const std::string& value) {
    if (value == "1" || value == "true" || value == "on" || value == "yes") return true;
    if (value == "0" || value == "false" || value == "off" || value == "no") return false;
    throw std::invalid_argument(fmt::format("{} must be true/false/1/0, got '{}'", key, value));
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

}  // namespace

std::string default_spool_dir(const std::map<std::string, std::string>& env) {
    if (::geteuid() == 0) return "/var/lib/queen/spool";
    if (auto xdg = get(env, "XDG_DATA_HOME"); xdg && xdg->front() == '/') return *xdg + "/queen/spool";
    std::string home;
    if (auto h = get(env, "HOME")) home = *h;
    else if (struct passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) home = pw->pw_dir;
    else throw std::invalid_argument("cannot choose a spool directory (HOME is not set): set QUEEN_SPOOL_DIR");
    return home + "/.local/share/queen/spool";
}

broker_config from_map(const std::map<std::string, std::string>& env) {
    broker_config c;
    if (auto v = get(env, "HOST")) c.host = *v;
    if (auto v = get(env, "PORT")) c.port = static_cast<unsigned short>(parse_number("PORT", *v, 0, 65535));
    if (auto v = get(env, "QUEEN_THREADS")) c.threads = static_cast<std::size_t>(parse_number("QUEEN_THREADS", *v, 1, 256));
    if (auto v = get(env, "DB_POOL_SIZE")) c.pool_size = static_cast<std::size_t>(parse_number("DB_POOL_SIZE", *v, 1, 1000));
    if (auto v = get(env, "QUEEN_APPLY_SCHEMA")) c.apply_schema = parse_bool("QUEEN_APPLY_SCHEMA", *v);
    if (auto v = get(env, "QUEEN_EXTENSION")) {
        if (*v == "auto") c.extension = extension_policy::auto_detect;
        else if (*v == "require" || *v == "on") c.extension = extension_policy::require;
        else if (*v == "off") c.extension = extension_policy::off;
        else throw std::invalid_argument("QUEEN_EXTENSION must be auto, require (or on) or off, not '" + *v + "'");
    }
    if (auto v = get(env, "QUEEN_DATA_DIR")) c.embedded_data_dir = *v;
    if (auto v = get(env, "QUEEN_MAX_BODY_BYTES"))
        c.max_body_bytes = static_cast<std::size_t>(parse_number("QUEEN_MAX_BODY_BYTES", *v, 1024, 1LL << 30));
    if (auto v = get(env, "QUEEN_MAX_PUSH_ITEMS"))
        c.max_push_items = static_cast<std::size_t>(parse_number("QUEEN_MAX_PUSH_ITEMS", *v, 1, 1000000));
    if (auto v = get(env, "QUEEN_MAX_POP_BATCH"))
        c.max_pop_batch = static_cast<std::size_t>(parse_number("QUEEN_MAX_POP_BATCH", *v, 1, 1000000));
    if (auto v = get(env, "QUEEN_PUSH_FUSION_WAIT_US"))
        c.push_fusion_wait = std::chrono::microseconds(parse_number("QUEEN_PUSH_FUSION_WAIT_US", *v, 0, 1000000));
    if (auto v = get(env, "QUEEN_PUSH_FUSION_MAX_ITEMS"))
        c.push_fusion_max_items = static_cast<std::size_t>(parse_number("QUEEN_PUSH_FUSION_MAX_ITEMS", *v, 1, 1000000));
    if (auto v = get(env, "QUEEN_PUSH_FUSION_MAX_INFLIGHT"))
        c.push_fusion_max_inflight =
            static_cast<std::size_t>(parse_number("QUEEN_PUSH_FUSION_MAX_INFLIGHT", *v, 1, 1024));
    if (auto v = get(env, "QUEEN_LONGPOLL_RECHECK_MS"))
        c.longpoll_recheck = std::chrono::milliseconds(parse_number("QUEEN_LONGPOLL_RECHECK_MS", *v, 10, 60000));

    if (auto v = get(env, "QUEEN_HOUSEKEEPING_INTERVAL_MS"))
        c.housekeeping_interval =
            std::chrono::milliseconds(parse_number("QUEEN_HOUSEKEEPING_INTERVAL_MS", *v, 50, 86400000));
    if (auto v = get(env, "QUEEN_CLAIM_FLOOR_INTERVAL_MS"))
        c.claim_floor_interval =
            std::chrono::milliseconds(parse_number("QUEEN_CLAIM_FLOOR_INTERVAL_MS", *v, 50, 86400000));
    if (auto v = get(env, "QUEEN_METRICS_FLUSH_MS"))
        c.metrics_flush_interval =
            std::chrono::milliseconds(parse_number("QUEEN_METRICS_FLUSH_MS", *v, 100, 3600000));
    if (auto v = get(env, "QUEEN_METRICS_RETENTION_DAYS"))
        c.metrics_retention_days = static_cast<int>(parse_number("QUEEN_METRICS_RETENTION_DAYS", *v, 1, 3650));
    if (auto v = get(env, "QUEEN_METRICS_MAX_QUEUES"))
        c.metrics_max_queues = static_cast<std::size_t>(parse_number("QUEEN_METRICS_MAX_QUEUES", *v, 1, 1000000));
    if (auto v = get(env, "QUEEN_STATS_INTERVAL_MS"))
        c.stats_interval = std::chrono::milliseconds(parse_number("QUEEN_STATS_INTERVAL_MS", *v, 100, 86400000));
    if (auto v = get(env, "QUEEN_GROUP_IDLE_SECONDS"))
        c.group_idle = std::chrono::seconds(parse_number("QUEEN_GROUP_IDLE_SECONDS", *v, 0, 1LL << 31));
    if (auto v = get(env, "QUEEN_PARTITION_IDLE_SECONDS"))
        c.partition_idle = std::chrono::seconds(parse_number("QUEEN_PARTITION_IDLE_SECONDS", *v, 1, 1LL << 31));

    if (auto v = get(env, "QUEEN_SPOOL_DIR")) c.spool_dir = *v;
    else c.spool_dir = default_spool_dir(env);
    if (auto v = get(env, "QUEEN_SPOOL_MAX_BYTES"))
        c.spool_max_bytes = static_cast<std::uint64_t>(parse_number("QUEEN_SPOOL_MAX_BYTES", *v, 0, 1LL << 50));
    if (auto v = get(env, "QUEEN_MAINTENANCE_REFRESH_MS"))
        c.maintenance_refresh =
            std::chrono::milliseconds(parse_number("QUEEN_MAINTENANCE_REFRESH_MS", *v, 50, 60000));

    if (auto v = get(env, "QUEEN_ENCRYPTION_KEY")) {
        bool hex = v->size() == 64 && v->find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
        if (!hex) throw std::invalid_argument("QUEEN_ENCRYPTION_KEY must be 64 hexadecimal characters (32 bytes)");
        c.encryption_key = *v;
    }

    if (auto url = get(env, "QUEEN_DATABASE_URL")) {
        c.conninfo = *url;
        c.embedded = false;
    } else if (get(env, "PG_HOST") || get(env, "PG_PORT") || get(env, "PG_USER") || get(env, "PG_PASSWORD") ||
               get(env, "PG_DB")) {
        std::string ci;
        auto add = [&](const char* key, const char* env_key) {
            if (auto v = get(env, env_key)) ci += fmt::format("{}={} ", key, quote(*v));
        };
        add("host", "PG_HOST");
        add("port", "PG_PORT");
        add("user", "PG_USER");
        add("password", "PG_PASSWORD");
        add("dbname", "PG_DB");
        if (auto v = get(env, "PG_PORT")) parse_number("PG_PORT", *v, 1, 65535);
        c.conninfo = ci;
        c.embedded = false;
    }
    c.auth = auth_from_map(env);
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
    case extension_policy::require: return "require";
    case extension_policy::off: return "off";
    case extension_policy::auto_detect: break;
    }
    return "auto";
}

std::string describe(const broker_config& c) {
    return fmt::format(
        "config: HOST={} PORT={} threads={} database={} DB_POOL_SIZE={} QUEEN_APPLY_SCHEMA={} QUEEN_EXTENSION={} "
        "max_body_bytes={} max_push_items={} max_pop_batch={} push_fusion_wait_us={} push_fusion_max_inflight={} longpoll_recheck_ms={} housekeeping_interval_ms={} claim_floor_interval_ms={} stats_interval_ms={} metrics_flush_ms={} metrics_retention_days={} metrics_max_queues={} group_idle_s={} partition_idle_s={} "
        "QUEEN_SPOOL_DIR={} spool_max_bytes={} maintenance_refresh_ms={}",
        c.host, c.port, c.threads, c.embedded ? std::string("embedded") : redact_conninfo(c.conninfo), c.pool_size,
        c.apply_schema, policy_name(c.extension), c.max_body_bytes, c.max_push_items, c.max_pop_batch, c.push_fusion_wait.count(), c.push_fusion_max_inflight,
        c.longpoll_recheck.count(), c.housekeeping_interval.count(), c.claim_floor_interval.count(), c.stats_interval.count(), c.metrics_flush_interval.count(), c.metrics_retention_days, c.metrics_max_queues, c.group_idle.count(), c.partition_idle.count(),
        c.spool_dir, c.spool_max_bytes, c.maintenance_refresh.count());
}

}  // namespace queen::config
