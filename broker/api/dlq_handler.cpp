// Dead-letter routes (docs/dead-letters.md): GET /api/v1/dlq (listing), POST
// /api/v1/dlq/requeue, DELETE /api/v1/dlq (purge). The SQL is in
// sql/procedures/75_dead_letter_admin.sql; this file parses, decodes the segment copies
// that plain SQL cannot decode (zstd), and renders JSON.
#include "api/dlq_requests.hpp"
#include "api/json_text.hpp"
#include "api/payload_encryption.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "db/pg_array.hpp"
#include "db/pg_binary.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "segment/segment_codec.hpp"

#include <set>

namespace queen::api {

namespace asio = boost::asio;

namespace {

// The filter as the six leading SQL arguments ($1..$6). The parameters point into the
// filter and into this object's strings: keep both alive (and this object unmoved) while
// they are used.
struct filter_args {
    filter_args(const filter_args&) = delete;
    filter_args& operator=(const filter_args&) = delete;
    explicit filter_args(const dlq_filter& f) {
        if (f.from_us) from = core::iso_time(*f.from_us);
        if (f.to_us) to = core::iso_time(*f.to_us);
        auto opt = [](const std::optional<std::string>& v) { return v ? db::pg_param::text(*v) : db::pg_param::null(); };
        params.push_back(opt(f.queue));
        params.push_back(opt(f.consumer_group));
        params.push_back(opt(f.partition));
        params.push_back(f.from_us ? db::pg_param::text(from) : db::pg_param::null());
        params.push_back(f.to_us ? db::pg_param::text(to) : db::pg_param::null());
        params.push_back(opt(f.message_id));
    }
    std::string from, to;
    std::vector<db::pg_param> params;
};

constexpr const char* filter_sql = "$1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz, $6::uuid";

// One frame decoded by the broker from a dead letter's segment copy.
struct decoded_frame {
    std::string transaction_id;
    std::optional<std::string> trace_id;
    std::optional<std::string> producer_sub;
    std::string payload;
};

// Decodes the frame at msg_offset from a segment copy; nullopt (and a log line) when the
// frame cannot be located or the copy is corrupt.
std::optional<decoded_frame> decode_copy(std::span<const std::uint8_t> bytes, std::int64_t msg_offset,
                                         std::optional<std::int64_t> first_offset, std::int64_t dead_letter_id) {
    try {
        auto seg = segment::decoded_segment::decode(bytes);
        const auto& frames = seg.frames();
        std::optional<std::size_t> index;
        if (first_offset && msg_offset >= *first_offset &&
            static_cast<std::uint64_t>(msg_offset - *first_offset) < frames.size())
            index = static_cast<std::size_t>(msg_offset - *first_offset);
        else if (!first_offset && frames.size() == 1)
            index = 0;
        if (!index) {
            log::warn("dead letter {}: cannot locate offset {} in its segment copy", dead_letter_id, msg_offset);
            return std::nullopt;
        }
        const auto& f = frames[*index];
        decoded_frame out;
        out.transaction_id = std::string(f.transaction_id);
        if (f.trace_id) out.trace_id = segment::uuid_to_string(*f.trace_id);
        if (f.producer_sub) out.producer_sub = std::string(*f.producer_sub);
        out.payload = std::string(f.payload);
        return out;
    } catch (const segment::segment_error& e) {
        log::warn("dead letter {}: its segment copy cannot be decoded: {}", dead_letter_id, e.what());
        return std::nullopt;
    }
}

void append_opt_string(std::string& out, const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) out += "null";
    else append_json_string(out, res.text(row, col));
}

void append_opt_time(std::string& out, const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) out += "null";
    else out += "\"" + core::iso_time(db::timestamp_us(res, row, col)) + "\"";
}

}  // namespace

// GET /api/v1/dlq?queue=&consumerGroup=&partition=&from=&to=&id=&limit=100&offset=0
asio::awaitable<http::response> handle_dlq_list(app::broker_context& ctx, http::request_context& rc) {
    const auto filter = parse_dlq_filter(rc.query, ctx.limits);
    const auto page = parse_dlq_page(rc.query);
    const filter_args args(filter);
    const std::string limit = std::to_string(page.limit), offset = std::to_string(page.offset);
    std::vector<db::pg_param> params = args.params;
    params.push_back(db::pg_param::text(limit));
    params.push_back(db::pg_param::text(offset));
    const std::string sql = std::string(
        "SELECT c.total, l.dead_letter_id, l.queue, l.partition, l.partition_id, l.msg_offset, l.consumer_group, "
        "l.transaction_id, l.trace_id, l.producer_sub, l.payload, l.segment, l.segment_first_offset, "
        "l.error_message, l.attempts, l.reason, l.created_at, l.failed_at "
        "FROM queen.count_dead_letters(") + filter_sql + ") AS c(total) "
        "LEFT JOIN LATERAL queen.list_dead_letters(" + filter_sql + ", $7::integer, $8::integer) l ON true";
    auto res = co_await ctx.pool.exec(sql, params, db::result_format::binary);

    std::int64_t total = res.rows() > 0 ? res.int64(0, 0) : 0;
    std::string out = "{\"messages\":[";
    bool first = true;
    for (int row = 0; row < res.rows(); ++row) {
        if (res.is_null(row, 1)) continue;  // an empty page: only the total
        const std::int64_t dl_id = res.int64(row, 1);
        const std::int64_t pid = res.int64(row, 4);
        const std::int64_t off = res.int64(row, 5);
        std::optional<decoded_frame> frame;
        if (res.is_null(row, 10) && !res.is_null(row, 11)) {
            std::optional<std::int64_t> seg_first;
            if (!res.is_null(row, 12)) seg_first = res.int64(row, 12);
            frame = decode_copy(res.bytes(row, 11), off, seg_first, dl_id);
        }
        if (!first) out += ',';
        first = false;
        out += "{\"id\":\"" + core::message_id(pid, off) + "\",\"transactionId\":";
        if (frame) append_json_string(out, frame->transaction_id);
        else append_opt_string(out, res, row, 7);
        out += ",\"traceId\":";
        if (frame) {
            if (frame->trace_id) append_json_string(out, *frame->trace_id);
            else out += "null";
        } else if (res.is_null(row, 8)) {
            out += "null";
        } else {
            append_json_string(out, segment::uuid_to_string(db::uuid_bytes(res, row, 8)));
        }
        out += ",\"partitionId\":\"" + std::to_string(pid) + "\",\"queue\":";
        append_opt_string(out, res, row, 2);
        out += ",\"partition\":";
        append_opt_string(out, res, row, 3);
        out += ",\"consumerGroup\":";
        append_opt_string(out, res, row, 6);
        out += ",\"offset\":" + std::to_string(off);
        out += ",\"errorMessage\":";
        append_opt_string(out, res, row, 13);
        out += ",\"retryCount\":" + std::to_string(res.int64(row, 14));
        out += ",\"reason\":";
        append_opt_string(out, res, row, 15);
        out += ",\"producerSub\":";
        if (frame) {
            if (frame->producer_sub) append_json_string(out, *frame->producer_sub);
            else out += "null";
        } else {
            append_opt_string(out, res, row, 9);
        }
        out += ",\"data\":";
        const std::string_view queue_name = res.is_null(row, 2) ? std::string_view() : res.text(row, 2);
        if (frame) out += deliverable_payload(ctx, frame->payload, queue_name);
        else if (!res.is_null(row, 10)) out += deliverable_payload(ctx, res.text(row, 10), queue_name);
        else out += "null";
        out += ",\"createdAt\":";
        append_opt_time(out, res, row, 16);
        out += ",\"failedAt\":";
        append_opt_time(out, res, row, 17);
        out += '}';
    }
    out += "],\"total\":" + std::to_string(total);
    out += ",\"pagination\":{\"limit\":" + limit + ",\"offset\":" + offset + "}}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

// POST /api/v1/dlq/requeue (filter in the query string or the JSON body)
asio::awaitable<http::response> handle_dlq_requeue(app::broker_context& ctx, http::request_context& rc) {
    const auto req = parse_dlq_requeue(rc.query, rc.req.body(), ctx.limits);
    const filter_args args(req.filter);
    const std::string limit = std::to_string(req.limit);

    // 1. Segment copies that plain SQL could not decode: the broker decodes them.
    std::vector<db::pg_param> seg_params = args.params;
    seg_params.push_back(db::pg_param::text(limit));
    const std::string seg_sql = std::string(
        "SELECT dead_letter_id, msg_offset, segment_first_offset, segment FROM queen.dead_letter_segments(") +
        filter_sql + ", $7::integer)";
    auto segs = co_await ctx.pool.exec(seg_sql, seg_params, db::result_format::binary);
    db::pg_array_builder ids, txids, traces, producers, payloads;
    for (int row = 0; row < segs.rows(); ++row) {
        const std::int64_t dl_id = segs.int64(row, 0);
        std::optional<std::int64_t> seg_first;
        if (!segs.is_null(row, 2)) seg_first = segs.int64(row, 2);
        auto frame = decode_copy(segs.bytes(row, 3), segs.int64(row, 1), seg_first, dl_id);
        if (!frame) continue;  // stays a dead letter; reported as skipped
        ids.add(dl_id);
        txids.add(frame->transaction_id);
        if (frame->trace_id) traces.add(*frame->trace_id);
        else traces.add_null();
        if (frame->producer_sub) producers.add(*frame->producer_sub);
        else producers.add_null();
        payloads.add(frame->payload);
    }
    const std::string a_ids = ids.finish(), a_txids = txids.finish(), a_traces = traces.finish(),
                      a_producers = producers.finish(), a_payloads = payloads.finish();

    // 2. Requeue, in one transaction (one statement).
    std::vector<db::pg_param> params = args.params;
    params.push_back(db::pg_param::text(req.filter.all ? "true" : "false"));
    params.push_back(db::pg_param::text(limit));
    params.push_back(db::pg_param::text(a_ids));
    params.push_back(db::pg_param::text(a_txids));
    params.push_back(db::pg_param::text(a_traces));
    params.push_back(db::pg_param::text(a_producers));
    params.push_back(db::pg_param::text(a_payloads));
    const std::string sql = std::string(
        "SELECT dead_letter_id, status, queue_name, partition_name, partition_id, msg_offset, previous_id, "
        "transaction_id, consumer_group FROM queen.requeue_dead_letter_set(") + filter_sql +
        ", $7::boolean, $8::integer, $9::bigint[], $10::text[], $11::uuid[], $12::text[], $13::text[])";
    auto res = co_await ctx.pool.exec(sql, params, db::result_format::binary);

    std::int64_t requeued = 0, removed = 0, skipped = 0;
    std::set<std::string> queues;
    std::string messages = "[";
    for (int row = 0; row < res.rows(); ++row) {
        const std::string_view status = res.text(row, 1);
        if (status == "skipped") {
            ++skipped;
            log::warn("requeue: dead letter {} skipped (payload not decodable or partition gone)", res.int64(row, 0));
            continue;
        }
        ++removed;
        if (status != "requeued") continue;
        ++requeued;
        const std::int64_t pid = res.int64(row, 4), off = res.int64(row, 5);
        if (!res.is_null(row, 2)) queues.insert(std::string(res.text(row, 2)));
        if (requeued > 1) messages += ',';
        messages += "{\"id\":\"" + core::message_id(pid, off) + "\",\"previousId\":";
        append_json_string(messages, segment::uuid_to_string(db::uuid_bytes(res, row, 6)));
        messages += ",\"transactionId\":";
        append_opt_string(messages, res, row, 7);
        messages += ",\"queue\":";
        append_opt_string(messages, res, row, 2);
        messages += ",\"partition\":";
        append_opt_string(messages, res, row, 3);
        messages += ",\"partitionId\":\"" + std::to_string(pid) + "\",\"offset\":" + std::to_string(off);
        messages += ",\"consumerGroup\":";
        append_opt_string(messages, res, row, 8);
        messages += '}';
    }
    messages += ']';
    // Requeued messages are claimable at once: wake parked pops.
    if (!queues.empty()) ctx.notifier.queues_changed({queues.begin(), queues.end()});

    // What still matches (more than `limit` matched, or skipped rows).
    std::vector<db::pg_param> count_params = args.params;
    const std::string count_sql = std::string("SELECT queen.count_dead_letters(") + filter_sql + ")";
    auto remaining = co_await ctx.pool.exec(count_sql, count_params, db::result_format::binary);

    std::string out = "{\"success\":true,\"requeued\":" + std::to_string(requeued) +
                      ",\"removed\":" + std::to_string(removed) + ",\"skipped\":" + std::to_string(skipped) +
                      ",\"remaining\":" + std::to_string(remaining.int64(0, 0)) + ",\"messages\":" + messages + "}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

// DELETE /api/v1/dlq?queue=&consumerGroup=&partition=&from=&to=&id=&all=
asio::awaitable<http::response> handle_dlq_purge(app::broker_context& ctx, http::request_context& rc) {
    const auto filter = parse_dlq_purge(rc.query, ctx.limits);
    const filter_args args(filter);
    std::vector<db::pg_param> params = args.params;
    params.push_back(db::pg_param::text(filter.all ? "true" : "false"));
    const std::string sql = std::string("SELECT queen.purge_dead_letters(") + filter_sql + ", $7::boolean)";
    auto res = co_await ctx.pool.exec(sql, params, db::result_format::binary);
    std::string out = "{\"success\":true,\"purged\":" + std::to_string(res.int64(0, 0)) + "}";
    co_return http::json_text(http::bhttp::status::ok, std::move(out));
}

}  // namespace queen::api
