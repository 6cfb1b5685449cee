#include "store/messages_store.hpp"

#include "db/pg_binary.hpp"
#include "domain/message_id.hpp"
#include "segment/segment_codec.hpp"

#include <set>

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

std::optional<std::int64_t> opt_int64(const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    return res.int64(row, col);
}

std::optional<std::string> opt_uuid(const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    return segment::uuid_to_string(db::uuid_bytes(res, row, col));
}

std::optional<std::vector<std::uint8_t>> opt_bytes(const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    const auto b = res.bytes(row, col);
    return std::vector<std::uint8_t>(b.begin(), b.end());
}

// Five columns from col on: transaction_id, trace_id, producer_sub, seg_first, seg_body.
message_frame frame_at(const db::pg_result& res, int row, int col) {
    return message_frame{db::opt_text(res, row, col), opt_uuid(res, row, col + 1), db::opt_text(res, row, col + 2),
                         opt_int64(res, row, col + 3), opt_bytes(res, row, col + 4)};
}

pg_param opt_param(const std::optional<std::string>& v) {
    return v ? pg_param::text(*v) : pg_param::null();
}

}  // namespace

asio::awaitable<message_page> browse_messages(db::pg_pool& pool, const browse_filter& f) {
    const std::string from = f.from_us ? domain::iso_time(*f.from_us) : std::string("-infinity");
    const std::string to = f.to_us ? domain::iso_time(*f.to_us) : std::string("infinity");
    const std::string limit = std::to_string(f.limit), offset = std::to_string(f.offset);
    std::vector<pg_param> params{opt_param(f.queue),     opt_param(f.partition), opt_param(f.namespace_name),
                                 opt_param(f.task),      opt_param(f.status),    opt_param(f.consumer_group),
                                 pg_param::text(from),   pg_param::text(to),     pg_param::text(limit),
                                 pg_param::text(offset), opt_param(f.scope)};
    auto res = co_await pool.exec(
        "SELECT partition_id, msg_offset, queue, partition, namespace, task, queue_priority, created_at, status, "
        "queue_status, consumed_by, total_groups, lease_expires_at, transaction_id, trace_id, producer_sub, "
        "seg_first, seg_body "
        "FROM queen.browse_messages($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $9::int, $10::int, $11)",
        params, db::result_format::binary);
    message_page out;
    std::set<std::int64_t> partitions;
    for (int row = 0; row < res.rows(); ++row) {
        browsed_message m;
        m.partition_id = res.int64(row, 0);
        m.offset = res.int64(row, 1);
        m.queue = std::string(res.text(row, 2));
        m.partition = std::string(res.text(row, 3));
        m.namespace_name = db::opt_text(res, row, 4);
        m.task = db::opt_text(res, row, 5);
        m.queue_priority = res.int64(row, 6);
        m.created_at_us = db::timestamp_us(res, row, 7);
        m.status = std::string(res.text(row, 8));
        m.queue_status = std::string(res.text(row, 9));
        m.consumed_by = res.int64(row, 10);
        m.total_groups = res.int64(row, 11);
        m.lease_expires_at_us = db::opt_timestamp_us(res, row, 12);
        m.frame = frame_at(res, row, 13);
        partitions.insert(m.partition_id);
        out.messages.push_back(std::move(m));
    }
    if (partitions.empty()) co_return out;
    std::string ids = "{";
    for (auto id : partitions) ids += (ids.size() > 1 ? "," : "") + std::to_string(id);
    ids += "}";
    std::vector<pg_param> mode_params{pg_param::text(ids)};
    auto mode = co_await pool.exec("SELECT has_queue_mode, bus_groups_count FROM queen.browse_mode($1::bigint[])",
                                   mode_params, db::result_format::binary);
    out.mode.has_queue_mode = mode.boolean(0, 0);
    out.mode.bus_groups = mode.int64(0, 1);
    co_return out;
}

asio::awaitable<std::optional<message_detail>> read_message(db::pg_pool& pool, std::int64_t partition_id,
                                                            const std::string& transaction_id,
                                                            const std::optional<std::string>& scope) {
    const std::string pid = std::to_string(partition_id);
    std::vector<pg_param> params{pg_param::text(pid), pg_param::text(transaction_id), opt_param(scope)};
    auto res = co_await pool.exec(
        "SELECT msg_offset, queue, partition, namespace, task, created_at, transaction_id, trace_id, producer_sub, "
        "seg_first, seg_body, payload, status, lease_expires_at, deleted_at, error_message, retry_count, "
        "lease_time, retry_limit, retry_delay, ttl, priority "
        "FROM queen.message_detail(queen.scoped_partition_id($1::bigint, $3), $2)",
        params, db::result_format::binary);
    if (res.rows() == 0) co_return std::nullopt;
    message_detail d;
    d.partition_id = partition_id;
    d.offset = res.int64(0, 0);
    d.queue = std::string(res.text(0, 1));
    d.partition = std::string(res.text(0, 2));
    d.namespace_name = db::opt_text(res, 0, 3);
    d.task = db::opt_text(res, 0, 4);
    d.created_at_us = db::timestamp_us(res, 0, 5);
    d.frame = frame_at(res, 0, 6);
    d.payload = db::opt_text(res, 0, 11);
    d.status = std::string(res.text(0, 12));
    d.lease_expires_at_us = db::opt_timestamp_us(res, 0, 13);
    d.deleted_at_us = db::opt_timestamp_us(res, 0, 14);
    d.error_message = db::opt_text(res, 0, 15);
    d.retry_count = opt_int64(res, 0, 16);
    d.lease_time = res.int64(0, 17);
    d.retry_limit = res.int64(0, 18);
    d.retry_delay = res.int64(0, 19);
    d.ttl = res.int64(0, 20);
    d.priority = res.int64(0, 21);

    const std::string off = std::to_string(d.offset);
    std::vector<pg_param> group_params{pg_param::text(pid), pg_param::text(off)};
    auto groups = co_await pool.exec(
        "SELECT consumer_group, consumed, lease_expires_at FROM queen.message_consumer_groups($1::bigint, $2::bigint)",
        group_params, db::result_format::binary);
    for (int row = 0; row < groups.rows(); ++row)
        d.groups.push_back(message_group{std::string(groups.text(row, 0)), groups.boolean(row, 1),
                                         db::opt_timestamp_us(groups, row, 2)});
    co_return d;
}

asio::awaitable<std::optional<deleted_message>> delete_message(db::pg_pool& pool, std::int64_t partition_id,
                                                               const std::string& transaction_id,
                                                               const std::optional<std::string>& deleted_by,
                                                               const std::optional<std::string>& scope) {
    const std::string pid = std::to_string(partition_id);
    std::vector<pg_param> params{pg_param::text(pid), pg_param::text(transaction_id), opt_param(deleted_by),
                                 opt_param(scope)};
    auto res = co_await pool.exec(
        "SELECT msg_offset, already_deleted, queue_name "
        "FROM queen.delete_message(queen.scoped_partition_id($1::bigint, $4), $2, $3)",
        params, db::result_format::binary);
    if (res.rows() == 0) co_return std::nullopt;
    co_return deleted_message{res.int64(0, 0), res.boolean(0, 1), std::string(res.text(0, 2))};
}

}  // namespace queen::store
