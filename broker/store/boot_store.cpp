#include "store/boot_store.hpp"

#include <libpq-fe.h>

#include <memory>
#include <stdexcept>

namespace queen::store {

namespace {

using conn_ptr = std::unique_ptr<PGconn, decltype(&PQfinish)>;
using result_ptr = std::unique_ptr<PGresult, decltype(&PQclear)>;

conn_ptr connect(const std::string& conninfo, const std::string& what) {
    conn_ptr conn(PQconnectdb(conninfo.c_str()), &PQfinish);
    if (!conn || PQstatus(conn.get()) != CONNECTION_OK)
        throw std::runtime_error(what + ": cannot connect to PostgreSQL: " +
                                 (conn ? PQerrorMessage(conn.get()) : "out of memory"));
    return conn;
}

// Runs a statement that answers exactly one row.
result_ptr one_row(PGconn* conn, const char* sql, const std::string& what) {
    result_ptr res(PQexec(conn, sql), &PQclear);
    if (PQresultStatus(res.get()) != PGRES_TUPLES_OK || PQntuples(res.get()) != 1)
        throw std::runtime_error(what + ": " + PQerrorMessage(conn));
    return res;
}

}  // namespace

std::optional<std::string> read_codec_extension(const std::string& conninfo) {
    const std::string what = "codec path";
    auto conn = connect(conninfo, what);
    auto res = one_row(conn.get(), "SELECT queen.codec_extension()", what);
    if (PQgetisnull(res.get(), 0, 0)) return std::nullopt;
    return std::string(PQgetvalue(res.get(), 0, 0));
}

maintenance_state read_maintenance_at_boot(const std::string& conninfo) {
    const std::string what = "reading the maintenance flags";
    auto conn = connect(conninfo, what);
    auto exists = one_row(conn.get(), "SELECT to_regprocedure('queen.get_maintenance()') IS NOT NULL", what);
    maintenance_state out;
    if (std::string_view(PQgetvalue(exists.get(), 0, 0)) != "t") return out;
    auto res = one_row(conn.get(),
                       "SELECT push_maintenance, pop_maintenance, coalesce(database_id::text, '') "
                       "FROM queen.get_maintenance()",
                       what);
    out.push = std::string_view(PQgetvalue(res.get(), 0, 0)) == "t";
    out.pop = std::string_view(PQgetvalue(res.get(), 0, 1)) == "t";
    out.database_id = PQgetvalue(res.get(), 0, 2);
    return out;
}

}  // namespace queen::store
