#include "store/boot_store.hpp"

#include "db/sync_connection.hpp"

#include <stdexcept>

namespace queen::store {

namespace {

// A connection for one boot read; a failure names what was being read.
db::sync_connection connect(const std::string& conninfo, const std::string& what) {
    try {
        return db::sync_connection(conninfo);
    } catch (const db::pg_error& e) {
        throw std::runtime_error(what + ": " + e.what());
    }
}

// Runs a statement that answers exactly one row.
db::pg_result one_row(db::sync_connection& conn, const char* sql, const std::string& what) {
    auto res = conn.exec(sql, what);
    if (res.rows() != 1) throw std::runtime_error(what + ": expected one row, got " + std::to_string(res.rows()));
    return res;
}

}  // namespace

std::optional<std::string> read_codec_extension(const std::string& conninfo) {
    const std::string what = "codec path";
    auto conn = connect(conninfo, what);
    auto res = one_row(conn, "SELECT queen.codec_extension()", what);
    if (res.is_null(0, 0)) return std::nullopt;
    return std::string(res.text(0, 0));
}

maintenance_state read_maintenance_at_boot(const std::string& conninfo) {
    const std::string what = "reading the maintenance flags";
    auto conn = connect(conninfo, what);
    auto exists = one_row(conn, "SELECT to_regprocedure('queen.get_maintenance()') IS NOT NULL", what);
    maintenance_state out;
    if (exists.text(0, 0) != "t") return out;
    auto res = one_row(conn,
                       "SELECT push_maintenance, pop_maintenance, coalesce(database_id::text, '') "
                       "FROM queen.get_maintenance()",
                       what);
    out.push = res.text(0, 0) == "t";
    out.pop = res.text(0, 1) == "t";
    out.database_id = std::string(res.text(0, 2));
    return out;
}

}  // namespace queen::store
