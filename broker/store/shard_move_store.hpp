#pragma once
// Store layer (see store/queues_store.hpp): the calls of `queen shards move` on the proxies and
// on the shard databases (sql/procedures/88_shard_moves.sql, sql/shards/00_cluster.sql). Each
// runs on a connection the caller holds, so a move keeps its transactions; failures are
// db::pg_error values.
#include "db/sync_connection.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// queen.shard_databases() on a proxy: the connection string of each logical shard's database,
// indexed by logical shard.
std::vector<std::string> read_shard_mapping(db::sync_connection& proxy);

// queen.repoint_shard: the proxy sends the logical shard's calls to `conninfo` from now on.
void repoint_shard(db::sync_connection& proxy, int shard, const std::string& conninfo);

// queen.wait_for_earlier_calls: waits until the proxy's transactions begun before it ended, at
// most `timeout`; how many were still running.
int wait_for_earlier_calls(db::sync_connection& proxy, std::chrono::seconds timeout);

// The record on a proxy of a move under way (queen.record_shard_move, shard_move_under_way,
// forget_shard_move).
struct move_record {
    std::string source, target;
};
void record_move(db::sync_connection& proxy, int shard, const move_record& move);
std::optional<move_record> read_move(db::sync_connection& proxy, int shard);
void forget_move(db::sync_connection& proxy, int shard);

// The logical shards a shard database hosts and fences; nullopt when it is not a shard.
struct shard_hosting {
    int logical_shards = 0;
    std::vector<int> hosted;
};
std::optional<shard_hosting> read_shard_hosting(db::sync_connection& shard);

// queen.shard_partition_count: partitions of the logical shard held by this database.
std::int64_t count_shard_partitions(db::sync_connection& shard, int logical_shard);

// queen.fence_shard under a short lock_timeout: throws pg_error 55P03 when the tables were busy
// (the caller tries again).
void fence_shard(db::sync_connection& source, int logical_shard);
// queen.unfence_shard under a short lock_timeout (55P03 as above).
void unfence_shard(db::sync_connection& source, int logical_shard);

// queen.shard_tables(): the tables a move copies, in import order.
std::vector<std::string> read_move_tables(db::sync_connection& shard);

// A page of queen.shard_export: row literals and the position after the last of them.
struct export_page {
    std::vector<std::string> rows;
    std::string last_tid;  // empty: the table had no (more) rows
};
export_page export_rows(db::sync_connection& source, int logical_shard, const std::string& table,
                        const std::string& after_tid, int limit);

// queen.shard_import of one page, in the caller's transaction; the rows inserted.
std::int64_t import_rows(db::sync_connection& target, const std::string& table, const std::vector<std::string>& rows);

// queen.shard_adopt: the target hosts the logical shard (ids, claim floors, lease ids).
void adopt_shard(db::sync_connection& target, int logical_shard);

// queen.shard_release: the database deletes the logical shard's rows and stops hosting it;
// the partitions deleted.
std::int64_t release_shard(db::sync_connection& database, int logical_shard);

// queen.become_shard with an explicit hosted list (a move's target that hosts nothing yet).
void become_shard(db::sync_connection& shard, int logical_shards, const std::vector<int>& hosted);

// Transaction control on a move's connection.
void begin(db::sync_connection& c, bool repeatable_read);
void commit(db::sync_connection& c);
void rollback(db::sync_connection& c) noexcept;

}  // namespace queen::store
