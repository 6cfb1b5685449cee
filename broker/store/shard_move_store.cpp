#include "store/shard_move_store.hpp"

#include "db/pg_array.hpp"

#include <string_view>

namespace queen::store {

namespace {

// An int[] literal of the result's text form ("{1,5,9}") as numbers.
std::vector<int> int_list(std::string_view text) {
    std::vector<int> out;
    int value = 0;
    bool in_number = false;
    for (char c : text) {
        if (c >= '0' && c <= '9') {
            value = value * 10 + (c - '0');
            in_number = true;
        } else if (in_number) {
            out.push_back(value);
            value = 0;
            in_number = false;
        }
    }
    return out;
}

std::string int_array(const std::vector<int>& items) {
    db::pg_array_builder b;
    for (int i : items) b.add(static_cast<std::int64_t>(i));
    return b.finish();
}

// The lock_timeout a fence or unfence waits before giving way to traffic (the caller retries).
constexpr const char* short_lock_wait = "SET lock_timeout = '200ms'";

}  // namespace

std::vector<std::string> read_shard_mapping(db::sync_connection& proxy) {
    auto res = proxy.exec("SELECT logical_shard, conninfo FROM queen.shard_databases() ORDER BY logical_shard",
                          "reading the proxy's logical shards");
    std::vector<std::string> out;
    for (int r = 0; r < res.rows(); ++r) out.emplace_back(res.text(r, 1));
    return out;
}

void repoint_shard(db::sync_connection& proxy, int shard, const std::string& conninfo) {
    proxy.exec("SELECT queen.repoint_shard($1::integer, $2)", "repointing the logical shard",
               {std::to_string(shard), conninfo});
}

int wait_for_earlier_calls(db::sync_connection& proxy, std::chrono::seconds timeout) {
    auto res = proxy.exec("SELECT queen.wait_for_earlier_calls(make_interval(secs => $1::integer))",
                          "waiting for the proxy's earlier calls", {std::to_string(timeout.count())});
    return static_cast<int>(res.int64(0, 0));
}

void record_move(db::sync_connection& proxy, int shard, const move_record& move) {
    proxy.exec("SELECT queen.record_shard_move($1::integer, $2, $3)", "recording the move",
               {std::to_string(shard), move.source, move.target});
}

std::optional<move_record> read_move(db::sync_connection& proxy, int shard) {
    auto res = proxy.exec("SELECT source, target FROM queen.shard_move_under_way($1::integer)",
                          "reading a move under way", {std::to_string(shard)});
    if (res.rows() == 0) return std::nullopt;
    return move_record{std::string(res.text(0, 0)), std::string(res.text(0, 1))};
}

void forget_move(db::sync_connection& proxy, int shard) {
    proxy.exec("SELECT queen.forget_shard_move($1::integer)", "ending the move", {std::to_string(shard)});
}

std::optional<shard_hosting> read_shard_hosting(db::sync_connection& shard) {
    auto res = shard.exec("SELECT logical_shards, hosted FROM queen.shard_hosting()", "reading the shard's identity");
    if (res.rows() == 0) return std::nullopt;
    shard_hosting out;
    out.logical_shards = static_cast<int>(res.int64(0, 0));
    out.hosted = int_list(res.text(0, 1));
    return out;
}

std::int64_t count_shard_partitions(db::sync_connection& shard, int logical_shard) {
    auto res = shard.exec("SELECT queen.shard_partition_count($1::integer)", "counting the shard's partitions",
                          {std::to_string(logical_shard)});
    return res.int64(0, 0);
}

void fence_shard(db::sync_connection& source, int logical_shard) {
    begin(source, false);
    try {
        source.exec(short_lock_wait, "setting lock_timeout");
        source.exec("SELECT queen.fence_shard($1::integer)", "fencing the logical shard",
                    {std::to_string(logical_shard)});
        commit(source);
    } catch (...) {
        rollback(source);
        throw;
    }
}

void unfence_shard(db::sync_connection& source, int logical_shard) {
    begin(source, false);
    try {
        source.exec(short_lock_wait, "setting lock_timeout");
        source.exec("SELECT queen.unfence_shard($1::integer)", "lifting the fence", {std::to_string(logical_shard)});
        commit(source);
    } catch (...) {
        rollback(source);
        throw;
    }
}

std::vector<std::string> read_move_tables(db::sync_connection& shard) {
    auto res = shard.exec("SELECT table_name FROM queen.shard_tables() ORDER BY ord", "reading the tables to copy");
    std::vector<std::string> out;
    for (int r = 0; r < res.rows(); ++r) out.emplace_back(res.text(r, 0));
    return out;
}

export_page export_rows(db::sync_connection& source, int logical_shard, const std::string& table,
                        const std::string& after_tid, int limit) {
    auto res = source.exec(
        "SELECT row_tid, row_text FROM queen.shard_export($1::integer, $2, NULLIF($3, '')::tid, "
        "$4::integer)",
        "reading the shard's " + table, {std::to_string(logical_shard), table, after_tid, std::to_string(limit)});
    export_page page;
    page.rows.reserve(static_cast<std::size_t>(res.rows()));
    for (int r = 0; r < res.rows(); ++r) page.rows.emplace_back(res.text(r, 1));
    if (res.rows() > 0) page.last_tid = std::string(res.text(res.rows() - 1, 0));
    return page;
}

std::int64_t import_rows(db::sync_connection& target, const std::string& table, const std::vector<std::string>& rows) {
    db::pg_array_builder b;
    for (const auto& r : rows) b.add(r);
    auto res =
        target.exec("SELECT queen.shard_import($1, $2::text[])", "copying the shard's " + table, {table, b.finish()});
    return res.int64(0, 0);
}

void adopt_shard(db::sync_connection& target, int logical_shard) {
    target.exec("SELECT queen.shard_adopt($1::integer)", "hosting the logical shard", {std::to_string(logical_shard)});
}

std::int64_t release_shard(db::sync_connection& database, int logical_shard) {
    auto res = database.exec("SELECT queen.shard_release($1::integer)", "deleting the logical shard's rows",
                             {std::to_string(logical_shard)});
    return res.int64(0, 0);
}

void become_shard(db::sync_connection& shard, int logical_shards, const std::vector<int>& hosted) {
    shard.exec("SELECT queen.become_shard($1::integer, $2::integer[])", "making the database a shard",
               {std::to_string(logical_shards), int_array(hosted)});
}

void begin(db::sync_connection& c, bool repeatable_read) {
    c.exec(repeatable_read ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN", "BEGIN");
}

void commit(db::sync_connection& c) {
    c.exec("COMMIT", "COMMIT");
}

void rollback(db::sync_connection& c) noexcept {
    c.exec_ignoring_failure("ROLLBACK");
}

}  // namespace queen::store
