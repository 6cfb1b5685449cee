#include "store/resources_store.hpp"

#include "db/pg_binary.hpp"

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

// Five count columns from col on: total, pending, processing, completed, dead_letter.
message_counts counts_at(const db::pg_result& res, int row, int col) {
    return message_counts{res.int64(row, col), res.int64(row, col + 1), res.int64(row, col + 2),
                          res.int64(row, col + 3), res.int64(row, col + 4)};
}

}  // namespace

asio::awaitable<queue_listing> list_queues(db::pg_pool& pool, const std::optional<std::string>& namespace_name,
                                           const std::optional<std::string>& task, std::int64_t limit,
                                           std::int64_t offset, const std::optional<std::string>& scope) {
    const std::string limit_text = std::to_string(limit), offset_text = std::to_string(offset);
    std::vector<pg_param> params{namespace_name ? pg_param::text(*namespace_name) : pg_param::null(),
                                 task ? pg_param::text(*task) : pg_param::null(), pg_param::text(limit_text),
                                 pg_param::text(offset_text), scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT a.age, l.id, l.name, l.namespace, l.task, l.created_at, l.partitions, l.total, l.pending, "
        "l.processing, l.completed, l.dead_letter, l.total_count "
        "FROM (SELECT queen.stats_age() AS age) a "
        "LEFT JOIN queen.list_queues($1::text, $2::text, $3::int, $4::int, $5::text) l ON true",
        params, db::result_format::binary);
    queue_listing out;
    for (int row = 0; row < res.rows(); ++row) {
        out.stats_age = static_cast<int>(res.int64(row, 0));
        if (res.is_null(row, 1)) continue;  // no queue on this page: only the age
        listed_queue q;
        q.id = res.int64(row, 1);
        q.name = std::string(res.text(row, 2));
        q.namespace_name = db::opt_text(res, row, 3);
        q.task = db::opt_text(res, row, 4);
        q.created_at_us = db::timestamp_us(res, row, 5);
        q.partitions = res.int64(row, 6);
        q.counts = counts_at(res, row, 7);
        out.total = res.int64(row, 12);
        out.queues.push_back(std::move(q));
    }
    co_return out;
}

asio::awaitable<std::optional<queue_detail>> read_queue_detail(db::pg_pool& pool, const std::string& queue) {
    std::vector<pg_param> params{pg_param::text(queue)};
    auto res = co_await pool.exec(
        "SELECT queue_id, queue_name, namespace, task, queue_created_at, partition_id, partition_name, created_at, "
        "total, pending, processing, completed, dead_letter, newest_at, oldest_waiting_at "
        "FROM queen.queue_detail($1)",
        params, db::result_format::binary);
    if (res.rows() == 0) co_return std::nullopt;
    queue_detail out;
    out.id = res.int64(0, 0);
    out.name = std::string(res.text(0, 1));
    out.namespace_name = db::opt_text(res, 0, 2);
    out.task = db::opt_text(res, 0, 3);
    out.created_at_us = db::timestamp_us(res, 0, 4);
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 5)) continue;  // a queue without partitions
        partition_detail p;
        p.id = res.int64(row, 5);
        p.name = std::string(res.text(row, 6));
        p.created_at_us = db::timestamp_us(res, row, 7);
        p.counts = counts_at(res, row, 8);
        p.newest_at_us = db::opt_timestamp_us(res, row, 13);
        p.oldest_waiting_at_us = db::opt_timestamp_us(res, row, 14);
        out.partitions.push_back(std::move(p));
    }
    co_return out;
}

asio::awaitable<std::vector<grouping>> list_groupings(db::pg_pool& pool, grouping_kind kind,
                                                      const std::optional<std::string>& scope) {
    std::vector<pg_param> params{pg_param::text(kind == grouping_kind::task ? "task" : "namespace"),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec("SELECT name, queues, partitions, total, pending FROM queen.list_groupings($1, $2)",
                                  params, db::result_format::binary);
    std::vector<grouping> out;
    for (int row = 0; row < res.rows(); ++row)
        out.push_back(grouping{std::string(res.text(row, 0)), res.int64(row, 1), res.int64(row, 2), res.int64(row, 3),
                               res.int64(row, 4)});
    co_return out;
}

asio::awaitable<stats_refresh> refresh_stats(db::pg_pool& pool, bool count_bytes) {
    auto conn = co_await pool.acquire();
    co_return co_await refresh_stats(conn, count_bytes);
}

asio::awaitable<stats_refresh> refresh_stats(db::pooled_connection& conn, bool count_bytes) {
    std::vector<pg_param> params{pg_param::text(count_bytes ? "true" : "false")};
    auto res =
        co_await conn.exec("CALL queen.refresh_stats(p_count_bytes => $1::boolean)", params, db::result_format::binary);
    stats_refresh out;
    out.skipped = res.boolean(0, 0);
    if (out.skipped) co_return out;
    out.snapshot_id = res.int64(0, 1);
    out.partitions = res.int64(0, 2);
    out.queues = res.int64(0, 3);
    out.taken_at_us = db::timestamp_us(res, 0, 4);
    out.duration_ms = res.int64(0, 5);
    co_return out;
}

}  // namespace queen::store
