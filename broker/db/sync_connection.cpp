#include "db/sync_connection.hpp"

#include "log/log.hpp"

#include <stdexcept>
#include <thread>

namespace queen::db {

namespace {

constexpr const char* cannot_connect = "08001";  // sqlclient_unable_to_establish_sqlconnection

std::string message_of(PGconn* conn) {
    return conn ? PQerrorMessage(conn) : "out of memory";
}

}  // namespace

sync_connection::sync_connection(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str()), &PQfinish) {
    if (!conn_ || PQstatus(conn_.get()) != CONNECTION_OK)
        throw pg_error(pg_error_kind::connection_lost, cannot_connect,
                       "cannot connect to PostgreSQL: " + message_of(conn_.get()));
}

sync_connection sync_connection::connect_with_retry(const std::string& conninfo, std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        try {
            return sync_connection(conninfo);
        } catch (const pg_error& e) {
            if (std::chrono::steady_clock::now() > deadline) throw;
            log::warn("waiting for PostgreSQL: {}", e.what());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
}

pg_result sync_connection::exec(const std::string& sql, const std::string& what,
                                const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    // Without parameters, the simple protocol: a migration or procedure file is many statements.
    pg_result res(values.empty() ? PQexec(conn_.get(), sql.c_str())
                                 : PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                                                values.data(), nullptr, nullptr, 0));
    const auto status = PQresultStatus(res.get());
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return res;
    const char* state = res.get() ? PQresultErrorField(res.get(), PG_DIAG_SQLSTATE) : nullptr;
    const std::string sqlstate = state ? state : "";
    throw pg_error(classify_sqlstate(sqlstate), sqlstate, what + " failed: " + message_of(conn_.get()));
}

void sync_connection::exec_ignoring_failure(const std::string& sql) noexcept {
    PQclear(PQexec(conn_.get(), sql.c_str()));
}

std::string sync_connection::quote_identifier(const std::string& name) {
    char* quoted = PQescapeIdentifier(conn_.get(), name.c_str(), name.size());
    if (!quoted) throw std::invalid_argument("not a usable identifier: " + name);
    std::string out(quoted);
    PQfreemem(quoted);
    return out;
}

}  // namespace queen::db
