#include "store/shards_store.hpp"

#include "db/sync_connection.hpp"

#include <stdexcept>

namespace queen::store {

namespace {

db::pg_result read(const std::string& conninfo, const char* sql, const std::string& what) {
    try {
        db::sync_connection conn(conninfo);
        return conn.exec(sql, what);
    } catch (const db::pg_error& e) {
        throw std::runtime_error(what + ": " + e.what());
    }
}

}  // namespace

std::vector<std::string> read_shard_databases(const std::string& proxy_conninfo) {
    auto res = read(proxy_conninfo,
                    "SELECT conninfo FROM queen.shard_databases() GROUP BY conninfo ORDER BY min(logical_shard)",
                    "reading the shard databases");
    std::vector<std::string> out;
    for (int r = 0; r < res.rows(); ++r) out.emplace_back(res.text(r, 0));
    return out;
}

std::vector<shard_status_row> read_shard_status(const std::string& proxy_conninfo) {
    auto res = read(proxy_conninfo,
                    "SELECT database, port, partitions, messages, bytes FROM queen.shard_status() "
                    "ORDER BY port, database",
                    "reading the shards' status");
    std::vector<shard_status_row> out;
    for (int r = 0; r < res.rows(); ++r) {
        shard_status_row row;
        row.database = std::string(res.text(r, 0));
        row.port = std::stoi(std::string(res.text(r, 1)));
        row.partitions = std::stoll(std::string(res.text(r, 2)));
        row.messages = std::stoll(std::string(res.text(r, 3)));
        row.bytes = std::stoll(std::string(res.text(r, 4)));
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace queen::store
