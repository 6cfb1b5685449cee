#include "store/dead_letters_store.hpp"

#include "db/pg_array.hpp"
#include "db/pg_binary.hpp"
#include "domain/message_id.hpp"
#include "segment/segment_codec.hpp"

namespace queen::store {

namespace asio = boost::asio;
using db::pg_param;

namespace {

// The filter as the six leading SQL arguments ($1..$6). The parameters point into the
// filter and into this object's strings: keep both alive (and this object unmoved) while
// they are used.
struct filter_args {
    filter_args(const filter_args&) = delete;
    filter_args& operator=(const filter_args&) = delete;
    explicit filter_args(const dead_letter_filter& f) {
        if (f.from_us) from = domain::iso_time(*f.from_us);
        if (f.to_us) to = domain::iso_time(*f.to_us);
        auto opt = [](const std::optional<std::string>& v) { return v ? pg_param::text(*v) : pg_param::null(); };
        params.push_back(opt(f.queue));
        params.push_back(opt(f.consumer_group));
        params.push_back(opt(f.partition));
        params.push_back(f.from_us ? pg_param::text(from) : pg_param::null());
        params.push_back(f.to_us ? pg_param::text(to) : pg_param::null());
        params.push_back(opt(f.message_id));
    }
    std::string from, to;
    std::vector<pg_param> params;
};

// The tenant scope as the trailing named argument of a call whose other arguments are in
// `params`: appends it and returns ", p_scope => $N".
std::string scope_argument(std::vector<pg_param>& params, const dead_letter_filter& f) {
    params.push_back(f.scope ? pg_param::text(*f.scope) : pg_param::null());
    return ", p_scope => $" + std::to_string(params.size()) + "::text";
}

constexpr const char* filter_sql = "$1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz, $6::uuid";

std::optional<std::int64_t> opt_int64(const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    return res.int64(row, col);
}

std::vector<std::uint8_t> byte_copy(const db::pg_result& res, int row, int col) {
    const auto bytes = res.bytes(row, col);
    return {bytes.begin(), bytes.end()};
}

// Columns 1.. of the listing (column 0 is the total).
dead_letter listed_at(const db::pg_result& res, int row) {
    dead_letter l;
    l.dead_letter_id = res.int64(row, 1);
    l.queue = db::opt_text(res, row, 2);
    l.partition = db::opt_text(res, row, 3);
    l.partition_id = res.int64(row, 4);
    l.msg_offset = res.int64(row, 5);
    l.consumer_group = db::opt_text(res, row, 6);
    l.transaction_id = db::opt_text(res, row, 7);
    if (!res.is_null(row, 8)) l.trace_id = segment::uuid_to_string(db::uuid_bytes(res, row, 8));
    l.producer_sub = db::opt_text(res, row, 9);
    l.payload = db::opt_text(res, row, 10);
    if (!res.is_null(row, 11)) l.segment = byte_copy(res, row, 11);
    l.segment_first_offset = opt_int64(res, row, 12);
    l.error_message = db::opt_text(res, row, 13);
    l.attempts = res.int64(row, 14);
    l.reason = db::opt_text(res, row, 15);
    l.created_at_us = db::opt_timestamp_us(res, row, 16);
    l.failed_at_us = db::opt_timestamp_us(res, row, 17);
    return l;
}

requeued_dead_letter requeued_at(const db::pg_result& res, int row) {
    requeued_dead_letter r;
    r.dead_letter_id = res.int64(row, 0);
    const std::string_view status = res.text(row, 1);
    r.status = status == "skipped"    ? requeue_status::skipped
               : status == "requeued" ? requeue_status::requeued
                                      : requeue_status::merged;
    if (r.status != requeue_status::requeued) return r;
    r.queue = db::opt_text(res, row, 2);
    r.partition = db::opt_text(res, row, 3);
    r.partition_id = res.int64(row, 4);
    r.msg_offset = res.int64(row, 5);
    r.previous_id = segment::uuid_to_string(db::uuid_bytes(res, row, 6));
    r.transaction_id = db::opt_text(res, row, 7);
    r.consumer_group = db::opt_text(res, row, 8);
    return r;
}

}  // namespace

asio::awaitable<dead_letter_page> list_dead_letters(db::pg_pool& pool, const dead_letter_filter& filter,
                                                    std::int64_t limit, std::int64_t offset) {
    const filter_args args(filter);
    const std::string limit_text = std::to_string(limit), offset_text = std::to_string(offset);
    std::vector<pg_param> params = args.params;
    params.push_back(pg_param::text(limit_text));
    params.push_back(pg_param::text(offset_text));
    const std::string scope = scope_argument(params, filter);
    const std::string sql =
        std::string(
            "SELECT c.total, l.dead_letter_id, l.queue, l.partition, l.partition_id, l.msg_offset, l.consumer_group, "
            "l.transaction_id, l.trace_id, l.producer_sub, l.payload, l.segment, l.segment_first_offset, "
            "l.error_message, l.attempts, l.reason, l.created_at, l.failed_at "
            "FROM queen.count_dead_letters(") +
        filter_sql + scope +
        ") AS c(total) "
        "LEFT JOIN LATERAL queen.list_dead_letters(" +
        filter_sql + ", $7::integer, $8::integer" + scope + ") l ON true";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    dead_letter_page page;
    page.total = res.rows() > 0 ? res.int64(0, 0) : 0;
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 1)) continue;  // an empty page: only the total
        page.letters.push_back(listed_at(res, row));
    }
    co_return page;
}

asio::awaitable<std::int64_t> count_dead_letters(db::pg_pool& pool, const dead_letter_filter& filter) {
    const filter_args args(filter);
    std::vector<pg_param> params = args.params;
    const std::string scope = scope_argument(params, filter);
    const std::string sql = std::string("SELECT queen.count_dead_letters(") + filter_sql + scope + ")";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    co_return res.int64(0, 0);
}

asio::awaitable<std::vector<dead_letter_segment>> dead_letter_segments(db::pg_pool& pool,
                                                                       const dead_letter_filter& filter,
                                                                       std::int64_t limit) {
    const filter_args args(filter);
    const std::string limit_text = std::to_string(limit);
    std::vector<pg_param> params = args.params;
    params.push_back(pg_param::text(limit_text));
    const std::string scope = scope_argument(params, filter);
    const std::string sql =
        std::string(
            "SELECT dead_letter_id, msg_offset, segment_first_offset, segment FROM queen.dead_letter_segments(") +
        filter_sql + ", $7::integer" + scope + ")";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    std::vector<dead_letter_segment> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row)
        out.push_back(
            dead_letter_segment{res.int64(row, 0), res.int64(row, 1), opt_int64(res, row, 2), byte_copy(res, row, 3)});
    co_return out;
}

asio::awaitable<std::vector<requeued_dead_letter>> requeue_dead_letter_set(
    db::pg_pool& pool, const dead_letter_filter& filter, bool all, std::int64_t limit,
    const std::vector<decoded_dead_letter>& decoded) {
    db::pg_array_builder ids, txids, traces, producers, payloads;
    for (const auto& d : decoded) {
        ids.add(d.dead_letter_id);
        txids.add(d.transaction_id);
        traces.add_optional(d.trace_id);
        producers.add_optional(d.producer_sub);
        payloads.add(d.payload);
    }
    const std::string a_ids = ids.finish(), a_txids = txids.finish(), a_traces = traces.finish(),
                      a_producers = producers.finish(), a_payloads = payloads.finish();
    const filter_args args(filter);
    const std::string limit_text = std::to_string(limit);
    std::vector<pg_param> params = args.params;
    params.push_back(pg_param::text(all ? "true" : "false"));
    params.push_back(pg_param::text(limit_text));
    params.push_back(pg_param::text(a_ids));
    params.push_back(pg_param::text(a_txids));
    params.push_back(pg_param::text(a_traces));
    params.push_back(pg_param::text(a_producers));
    params.push_back(pg_param::text(a_payloads));
    const std::string scope = scope_argument(params, filter);
    const std::string sql =
        std::string(
            "SELECT dead_letter_id, status, queue_name, partition_name, partition_id, msg_offset, previous_id, "
            "transaction_id, consumer_group FROM queen.requeue_dead_letter_set(") +
        filter_sql + ", $7::boolean, $8::integer, $9::bigint[], $10::text[], $11::uuid[], $12::text[], $13::text[]" +
        scope + ")";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    std::vector<requeued_dead_letter> out;
    out.reserve(static_cast<std::size_t>(res.rows()));
    for (int row = 0; row < res.rows(); ++row) out.push_back(requeued_at(res, row));
    co_return out;
}

asio::awaitable<std::int64_t> purge_dead_letters(db::pg_pool& pool, const dead_letter_filter& filter, bool all) {
    const filter_args args(filter);
    std::vector<pg_param> params = args.params;
    params.push_back(pg_param::text(all ? "true" : "false"));
    const std::string scope = scope_argument(params, filter);
    const std::string sql =
        std::string("SELECT queen.purge_dead_letters(") + filter_sql + ", $7::boolean" + scope + ")";
    auto res = co_await pool.exec(sql, params, db::result_format::binary);
    co_return res.int64(0, 0);
}

}  // namespace queen::store
