#include "store/groups_store.hpp"

#include "db/pg_binary.hpp"
#include "domain/message_id.hpp"
#include "segment/segment_codec.hpp"

#include <stdexcept>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

group_cursor cursor_at(const db::pg_result& res, int i) {
    group_cursor r;
    r.group = std::string(res.text(i, 0));
    r.queue = std::string(res.text(i, 1));
    r.subscription_at = db::opt_timestamp_us(res, i, 2);
    r.has_cursor = !res.is_null(i, 3);
    if (r.has_cursor) {
        r.partition_id = res.int64(i, 3);
        r.partition = std::string(res.text(i, 4));
        r.committed = res.int64(i, 5);
        r.last_offset = res.int64(i, 6);
        if (!res.is_null(i, 7)) r.lease_id = segment::uuid_to_string(db::uuid_bytes(res, i, 7));
        if (!res.is_null(i, 8)) r.lease_end = res.int64(i, 8);
        r.lease_expires_at = db::opt_timestamp_us(res, i, 9);
        r.attempts = res.int64(i, 10);
        r.retry_at = db::opt_timestamp_us(res, i, 11);
        r.last_claimed_at = db::opt_timestamp_us(res, i, 12);
        r.pending_since = db::opt_timestamp_us(res, i, 13);
        r.pending_seconds = res.int64(i, 14);
        r.committed_at = db::opt_timestamp_us(res, i, 15);
        r.consumed = res.boolean(i, 16);
    }
    return r;
}

seek_status parse_seek_status(const std::string& status) {
    if (status == "ok") return seek_status::ok;
    if (status == "queue_not_found") return seek_status::queue_not_found;
    if (status == "partition_not_found") return seek_status::partition_not_found;
    if (status == "group_not_found") return seek_status::group_not_found;
    throw std::runtime_error("queen.seek_group answered an unknown status: " + status);
}

}  // namespace

asio::awaitable<std::vector<group_cursor>> group_cursors(db::pg_pool& pool, const std::optional<std::string>& group,
                                                         const std::optional<std::string>& scope) {
    std::vector<pg_param> params{group ? pg_param::text(*group) : pg_param::null(),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT consumer_group, queue_name, subscription_at, partition_id, partition_name, committed, last_offset, "
        "lease_id, lease_end, lease_expires_at, attempts, retry_at, last_claimed_at, pending_since, "
        "coalesce(floor(extract(epoch FROM now() - pending_since)), 0)::bigint, committed_at, consumed "
        "FROM queen.group_cursors($1, $2)",
        params, db::result_format::binary);
    std::vector<group_cursor> rows;
    rows.reserve(static_cast<std::size_t>(res.rows()));
    for (int i = 0; i < res.rows(); ++i) rows.push_back(cursor_at(res, i));
    co_return rows;
}

asio::awaitable<std::vector<group_summary>> group_summaries(db::pg_pool& pool,
                                                            const std::optional<std::string>& scope) {
    std::vector<pg_param> params{scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT consumer_group, queue_name, members, partitions_with_lag, lag, oldest_waiting_at, max_time_lag, "
        "committed, subscription_mode, subscription_at, registered_at FROM queen.list_group_summaries($1)",
        params, db::result_format::binary);
    std::vector<group_summary> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int i = 0; i < res.rows(); ++i) {
        group_summary g;
        g.group = std::string(res.text(i, 0));
        g.queue = std::string(res.text(i, 1));
        g.members = res.int64(i, 2);
        g.partitions_with_lag = res.int64(i, 3);
        g.lag = res.int64(i, 4);
        g.oldest_waiting_at = db::opt_timestamp_us(res, i, 5);
        g.max_time_lag = res.int64(i, 6);
        g.committed = res.int64(i, 7);
        if (!res.is_null(i, 8)) g.subscription_mode = std::string(res.text(i, 8));
        g.subscription_at = db::opt_timestamp_us(res, i, 9);
        g.registered_at = db::timestamp_us(res, i, 10);
        out.push_back(std::move(g));
    }
    co_return out;
}

asio::awaitable<std::vector<lagging_cursor>> lagging_cursors(db::pg_pool& pool, std::int64_t min_seconds,
                                                             const std::optional<std::string>& scope) {
    const std::string seconds = std::to_string(min_seconds);
    std::vector<pg_param> params{pg_param::text(seconds), scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT consumer_group, queue_name, partition_name, partition_id, lease_id, offset_lag, time_lag_seconds, "
        "oldest_unconsumed_at, last_consumed_at FROM queen.lagging_cursors($1::int, $2)",
        params, db::result_format::binary);
    std::vector<lagging_cursor> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int i = 0; i < res.rows(); ++i) {
        lagging_cursor c;
        c.group = std::string(res.text(i, 0));
        c.queue = std::string(res.text(i, 1));
        c.partition = std::string(res.text(i, 2));
        c.partition_id = res.int64(i, 3);
        if (!res.is_null(i, 4)) c.lease_id = segment::uuid_to_string(db::uuid_bytes(res, i, 4));
        c.offset_lag = res.int64(i, 5);
        c.time_lag_seconds = res.int64(i, 6);
        c.oldest_unconsumed_at = db::timestamp_us(res, i, 7);
        c.last_consumed_at = db::opt_timestamp_us(res, i, 8);
        out.push_back(std::move(c));
    }
    co_return out;
}

asio::awaitable<std::vector<group_queue_deletion>> delete_group(db::pg_pool& pool, const std::string& group,
                                                                const std::optional<std::string>& queue,
                                                                bool delete_metadata,
                                                                const std::optional<std::string>& scope) {
    std::vector<pg_param> params{pg_param::text(group), queue ? pg_param::text(*queue) : pg_param::null(),
                                 pg_param::text(delete_metadata ? "true" : "false"),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT queue_name, deleted_partitions, metadata_deleted FROM queen.delete_group($1, $2, $3::boolean, $4)",
        params, db::result_format::binary);
    std::vector<group_queue_deletion> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int i = 0; i < res.rows(); ++i)
        out.push_back(group_queue_deletion{std::string(res.text(i, 0)), res.int64(i, 1), res.boolean(i, 2)});
    co_return out;
}

asio::awaitable<seek_outcome> seek_group(db::pg_pool& pool, const group_seek& seek) {
    const std::string at = seek.timestamp_us ? domain::iso_time(*seek.timestamp_us) : std::string();
    std::vector<pg_param> params{pg_param::text(seek.queue), pg_param::text(seek.group),
                                 seek.partition ? pg_param::text(*seek.partition) : pg_param::null(),
                                 pg_param::text(seek.to_end ? "true" : "false"),
                                 seek.timestamp_us ? pg_param::text(at) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT status, partitions_updated, newest_at FROM queen.seek_group($1, $2, $3, $4::boolean, $5::timestamptz)",
        params, db::result_format::binary);
    const seek_status status = parse_seek_status(std::string(res.text(0, 0)));
    if (status != seek_status::ok) co_return seek_outcome{status, 0, std::nullopt};
    co_return seek_outcome{status, res.int64(0, 1), db::opt_timestamp_us(res, 0, 2)};
}

asio::awaitable<subscription_update> set_group_subscription(db::pg_pool& pool, const std::string& group,
                                                            std::int64_t at_us,
                                                            const std::optional<std::string>& scope) {
    const std::string at_text = domain::iso_time(at_us);
    std::vector<pg_param> params{pg_param::text(group), pg_param::text(at_text),
                                 scope ? pg_param::text(*scope) : pg_param::null()};
    auto res = co_await pool.exec(
        "SELECT queues_updated, subscription_at FROM queen.set_group_subscription($1, $2::timestamptz, $3)", params,
        db::result_format::binary);
    co_return subscription_update{res.int64(0, 0), db::timestamp_us(res, 0, 1)};
}

}  // namespace queen::store
