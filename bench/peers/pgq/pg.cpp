#include "pg.hpp"

#include <fmt/core.h>

#include <cstring>
#include <vector>

namespace pgq_bench {

namespace {

// The error text of `conn` without its trailing newline.
std::string conn_message(PGconn* conn) {
    std::string m = conn ? PQerrorMessage(conn) : "out of memory";
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    return m;
}

// "'value'" with backslashes and single quotes escaped, as conninfo strings want.
std::string quote_conninfo_value(const char* v) {
    std::string out = "'";
    for (const char* p = v; *p; ++p) {
        if (*p == '\\' || *p == '\'') out += '\\';
        out += *p;
    }
    out += '\'';
    return out;
}

std::vector<const char*> param_values(std::initializer_list<const std::string*> params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto* p : params) values.push_back(p ? p->c_str() : nullptr);
    return values;
}

// Server notices: NOTICE and below (e.g. "extension already exists") are dropped; warnings
// and above go to stderr.
extern "C" void on_notice(void*, const PGresult* r) {
    const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (severity && (std::strcmp(severity, "NOTICE") == 0 || std::strcmp(severity, "DEBUG") == 0 ||
                     std::strcmp(severity, "LOG") == 0 || std::strcmp(severity, "INFO") == 0))
        return;
    fmt::print(stderr, "pgq_bench: server: {}", PQresultErrorMessage(r));
}

}  // namespace

connection::connection(const std::string& conninfo, const std::string& app_name) {
    // The first dbname is expanded as a full conninfo; the fallback name never overrides it.
    const char* keys[] = {"dbname", "fallback_application_name", nullptr};
    const char* values[] = {conninfo.c_str(), app_name.c_str(), nullptr};
    conn_.reset(PQconnectdbParams(keys, values, 1));
    if (!conn_ || PQstatus(conn_.get()) != CONNECTION_OK)
        throw pg_error(fmt::format("cannot connect to the database ({}): {}", conninfo.empty() ? "libpq defaults" : conninfo,
                                   conn_message(conn_.get())));
    PQsetNoticeReceiver(conn_.get(), on_notice, nullptr);
}

result_ptr connection::check(PGresult* raw, const std::string& what) {
    result_ptr r(raw);
    const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
    std::string msg = r ? PQresultErrorMessage(r.get()) : conn_message(conn_.get());
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (msg.empty()) msg = conn_message(conn_.get());
    throw pg_error(fmt::format("{} failed: {}", what, msg));
}

result_ptr connection::exec(const std::string& sql) { return check(PQexec(conn_.get(), sql.c_str()), sql); }

result_ptr connection::exec(const std::string& sql, std::initializer_list<const std::string*> params) {
    auto values = param_values(params);
    return check(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                              nullptr, nullptr, 0),
                 sql);
}

void connection::prepare(const std::string& name, const std::string& sql, int n_params) {
    check(PQprepare(conn_.get(), name.c_str(), sql.c_str(), n_params, nullptr), "PREPARE " + sql);
}

result_ptr connection::exec_prepared(const std::string& name, std::initializer_list<const std::string*> params) {
    auto values = param_values(params);
    return check(PQexecPrepared(conn_.get(), name.c_str(), static_cast<int>(values.size()), values.data(), nullptr,
                                nullptr, 0),
                 "EXECUTE " + name);
}

std::optional<std::string> single_value(const PGresult* r) {
    if (!r || PQntuples(r) < 1 || PQnfields(r) < 1 || PQgetisnull(r, 0, 0)) return std::nullopt;
    return std::string(PQgetvalue(r, 0, 0), static_cast<std::size_t>(PQgetlength(r, 0, 0)));
}

std::string conninfo_without_dbname(const std::string& conninfo) {
    char* err = nullptr;
    conninfo_ptr opts(PQconninfoParse(conninfo.c_str(), &err));
    if (!opts) {
        std::string msg = err ? err : "out of memory";
        PQfreemem(err);
        throw pg_error(fmt::format("cannot parse conninfo '{}': {}", conninfo, msg));
    }
    std::string out;
    for (const PQconninfoOption* o = opts.get(); o->keyword; ++o) {
        if (!o->val || std::strcmp(o->keyword, "dbname") == 0) continue;
        if (!out.empty()) out += ' ';
        out += fmt::format("{}={}", o->keyword, quote_conninfo_value(o->val));
    }
    return out;
}

}  // namespace pgq_bench
