#include "db/conninfo.hpp"

#include <libpq-fe.h>

#include <fmt/core.h>

#include <utility>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace queen::db {
namespace {

using options_ptr = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

// A libpq conninfo value in single quotes (backslash and quote escaped).
std::string quoted(std::string_view v) {
    std::string out = "'";
    for (char c : v) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

// The parsed conninfo: every keyword libpq knows, with the operator's value where given.
struct parsed_conninfo {
    std::vector<std::pair<std::string, std::string>> given;    // in libpq's keyword order
    std::vector<std::pair<std::string, std::string>> envvars;  // keyword -> libpq's variable

    const std::string* value(std::string_view keyword) const {
        for (const auto& [k, v] : given)
            if (k == keyword) return &v;
        return nullptr;
    }
    // The operator's value, or that of libpq's environment variable for the keyword.
    std::optional<std::string> effective(std::string_view keyword, const env_lookup& env) const {
        if (const auto* v = value(keyword)) return *v;
        for (const auto& [k, var] : envvars) {
            if (k != keyword) continue;
            const char* e = env(var.c_str());
            if (e && *e) return std::string(e);
        }
        return std::nullopt;
    }
    void set(const std::string& keyword, std::string v) {
        for (auto& [k, old] : given)
            if (k == keyword) {
                old = std::move(v);
                return;
            }
        given.emplace_back(keyword, std::move(v));
    }
};

parsed_conninfo parse(const std::string& conninfo) {
    char* err = nullptr;
    options_ptr opts(PQconninfoParse(conninfo.c_str(), &err), &PQconninfoFree);
    if (!opts) {
        // libpq's message names the offending keyword; the conninfo itself (it may hold a
        // password) is not repeated.
        std::string why = err ? err : "out of memory";
        if (err) PQfreemem(err);
        while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
        throw std::invalid_argument("the database connection string does not parse: " + why);
    }
    parsed_conninfo out;
    for (PQconninfoOption* o = opts.get(); o->keyword; ++o) {
        if (o->val) out.given.emplace_back(o->keyword, o->val);
        if (o->envvar) out.envvars.emplace_back(o->keyword, o->envvar);
    }
    return out;
}

// The parameters given, as key=value text in libpq's keyword order.
std::string rendered(const parsed_conninfo& p) {
    std::string out;
    for (const auto& [k, v] : p.given) {
        if (!out.empty()) out += ' ';
        out += k + "=" + quoted(v);
    }
    return out;
}

}  // namespace

bool valid_sslmode(const std::string& mode) {
    for (const char* m : {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})
        if (mode == m) return true;
    return false;
}

std::string hardened_conninfo(const std::string& conninfo, const connection_settings& s, connection_role role,
                              const env_lookup& env) {
    parsed_conninfo p = parse(conninfo);
    auto add = [&](const char* keyword, std::string v) {
        if (!p.effective(keyword, env)) p.set(keyword, std::move(v));
    };
    add("keepalives", "1");
    add("keepalives_idle", std::to_string(s.keepalives_idle.count()));
    add("keepalives_interval", std::to_string(s.keepalives_interval.count()));
    add("keepalives_count", std::to_string(s.keepalives_count));
    if (s.tcp_user_timeout.count() > 0) add("tcp_user_timeout", std::to_string(s.tcp_user_timeout.count()));
    if (!s.sslmode.empty()) add("sslmode", s.sslmode);
    // The broker writes: a standby (or a primary demoted after a failover) is passed over.
    add("target_session_attrs", "read-write");
    if (role == connection_role::requests) {
        // The operator's options (or PGOPTIONS, which an explicit options would override)
        // are kept; a statement_timeout of theirs wins.
        std::string options = p.effective("options", env).value_or("");
        const std::string given = options;
        auto append = [&](const std::string& option) {
            if (!options.empty()) options += ' ';
            options += option;
        };
        if (s.statement_timeout.count() > 0 && options.find("statement_timeout") == std::string::npos)
            append(fmt::format("-c statement_timeout={}", s.statement_timeout.count()));
        if (s.tenant_max_queues > 0) append(fmt::format("-c queen.tenant_max_queues={}", s.tenant_max_queues));
        if (options != given) p.set("options", options);
    }
    return rendered(p);
}

std::string keyword_conninfo(const std::string& conninfo) {
    return rendered(parse(conninfo));
}

}  // namespace queen::db
