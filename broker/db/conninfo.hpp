#pragma once
// The connection string each kind of broker connection uses: the operator's conninfo (URL or
// key=value, possibly multi-host) with the broker's hardening added where the operator left a
// parameter unset (docs/deployment.md, "Database connections").
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

namespace queen::db {

struct connection_settings {
    // TCP keepalives and user timeout: a dead server or a cut network is noticed in seconds.
    std::chrono::seconds keepalives_idle{5};
    std::chrono::seconds keepalives_interval{2};
    int keepalives_count = 3;
    std::chrono::milliseconds tcp_user_timeout{5000};    // 0: leave the kernel's
    std::string sslmode;                                 // empty: leave it to the conninfo and libpq
    std::chrono::milliseconds statement_timeout{30000};  // request connections only; 0: none
    // QUEEN_TENANT_MAX_QUEUES, read by queen.check_tenant_queue_limit() from the setting
    // queen.tenant_max_queues; request connections only; 0: not set.
    std::uint64_t tenant_max_queues = 0;
};

// What a connection is for: only request connections get the statement timeout (the
// listener only waits, and housekeeping and migrations may legitimately run long).
enum class connection_role { requests, listener, maintenance };

// Reads a libpq environment variable (PGSSLMODE, PGOPTIONS, ...); nullptr when unset.
using env_lookup = std::function<const char*(const char*)>;

// `conninfo` as key=value text with, where neither it nor libpq's environment variable sets
// them: keepalives=1 and their idle/interval/count, tcp_user_timeout, sslmode (when the
// settings name one), target_session_attrs=read-write, and, for request connections,
// options=-c statement_timeout=N (appended to the operator's options unless they set it) and,
// when set, -c queen.tenant_max_queues=N.
// Throws std::invalid_argument when the conninfo does not parse.
std::string hardened_conninfo(const std::string& conninfo, const connection_settings& settings, connection_role role,
                              const env_lookup& env = &std::getenv);

// `conninfo` (a URL or key=value text) as key=value text with exactly the parameters it
// gives: what PL/Proxy's cluster configuration needs (it appends parameters to the string).
// Throws std::invalid_argument when the conninfo does not parse.
std::string keyword_conninfo(const std::string& conninfo);

// `text` (a connection string, or a message that quotes some) with every password replaced
// by `***`: the value of a `password` keyword (key=value, or a URL's query parameter) and the
// password of a URL's user information (`postgresql://user:secret@host`). What may be shown.
std::string redact_passwords(std::string_view text);

// Whether `conninfo` (a URL or key=value text) names a password.
bool carries_password(std::string_view conninfo);

// The libpq sslmode values; true when `mode` is one of them.
bool valid_sslmode(const std::string& mode);

}  // namespace queen::db
