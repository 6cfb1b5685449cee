// Dead-letter routes (docs/dead-letters.md): GET /api/v1/dlq (listing), POST
// /api/v1/dlq/requeue, DELETE /api/v1/dlq (purge). The SQL is in
// sql/procedures/75_dead_letter_admin.sql, called through store/dead_letters_store; this
// file parses, decodes the segment copies that plain SQL cannot decode (zstd), and renders JSON.
#include "api/admin/dlq_requests.hpp"
#include "api/admin/handlers.hpp"
#include "api/shared/paging_answer.hpp"
#include "api/shared/payload_encryption.hpp"
#include "api/shared/tenant_names.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "segment/segment_reader.hpp"
#include "store/dead_letters_store.hpp"

#include <set>

namespace queen::api {

namespace asio = boost::asio;

namespace {

// The filter in the caller's tenant: its queue as a stored key, its scope.
store::dead_letter_filter store_filter(const dlq_filter& f, const domain::tenant_scope& tenant) {
    std::optional<std::string> queue;
    if (f.queue) queue = queue_key(tenant, *f.queue, "queue");
    return store::dead_letter_filter{queue,   f.consumer_group, f.partition,       f.from_us,
                                     f.to_us, f.message_id,     tenant.sql_scope()};
}

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
        // A copy without a first offset holds the dead letter's message alone.
        const segment::segment_reader reader(bytes, first_offset.value_or(msg_offset));
        const segment::frame_view* frame = first_offset || reader.frame_count() == 1 ? reader.at(msg_offset) : nullptr;
        if (!frame) {
            log::warn("dead letter {}: cannot locate offset {} in its segment copy", dead_letter_id, msg_offset);
            return std::nullopt;
        }
        const auto& f = *frame;
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

// One element of the listing's "messages". Fields the broker decoded from the segment copy
// take precedence over the columns plain SQL could fill.
void write_dead_letter(render::json_writer& out, const broker_context& ctx, const store::dead_letter& l,
                       const domain::tenant_scope& tenant) {
    std::optional<decoded_frame> frame;
    if (!l.payload && l.segment)
        frame = decode_copy(*l.segment, l.msg_offset, l.segment_first_offset, l.dead_letter_id);
    out.begin_object().field("id", domain::message_id(l.partition_id, l.msg_offset));
    if (frame)
        out.field("transactionId", frame->transaction_id).field("traceId", frame->trace_id);
    else
        out.field("transactionId", l.transaction_id).field("traceId", l.trace_id);
    out.field("partitionId", std::to_string(l.partition_id))
        .field("queue", local_name(l.queue, tenant))
        .field("partition", l.partition)
        .field("consumerGroup", l.consumer_group)
        .field("offset", l.msg_offset)
        .field("errorMessage", l.error_message)
        .field("retryCount", l.attempts)
        .field("reason", l.reason)
        .field("producerSub", frame ? frame->producer_sub : l.producer_sub);
    const std::string_view queue_name = l.queue ? std::string_view(*l.queue) : std::string_view();
    if (frame)
        out.raw_field("data", deliverable_payload(ctx, frame->payload, queue_name));
    else if (l.payload)
        out.raw_field("data", deliverable_payload(ctx, *l.payload, queue_name));
    else
        out.field("data", nullptr);
    out.field("createdAt", domain::iso_time(l.created_at_us))
        .field("failedAt", domain::iso_time(l.failed_at_us))
        .end_object();
}

// One element of the requeue answer's "messages".
void write_requeued(render::json_writer& out, const store::requeued_dead_letter& row,
                    const domain::tenant_scope& tenant) {
    out.begin_object()
        .field("id", domain::message_id(row.partition_id, row.msg_offset))
        .field("previousId", row.previous_id)
        .field("transactionId", row.transaction_id)
        .field("queue", local_name(row.queue, tenant))
        .field("partition", row.partition)
        .field("partitionId", std::to_string(row.partition_id))
        .field("offset", row.msg_offset)
        .field("consumerGroup", row.consumer_group)
        .end_object();
}

}  // namespace

// GET /api/v1/dlq?queue=&consumerGroup=&partition=&from=&to=&id=&limit=100&offset=0
asio::awaitable<http::response> handle_dlq_list(broker_context& ctx, http::request_context& rc) {
    const auto filter = parse_dlq_filter(rc.query, ctx.limits);
    const auto page = parse_dlq_page(rc.query);
    const auto matching = store_filter(filter, rc.tenant);
    const auto listed = co_await store::list_dead_letters(ctx.pool, matching, page.limit, page.offset);
    render::json_writer out;
    out.begin_object().key("messages").begin_array();
    for (const auto& l : listed.letters) write_dead_letter(out, ctx, l, rc.tenant);
    out.end_array();
    write_paging(out, listed.total, page.limit, page.offset);
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// POST /api/v1/dlq/requeue (filter in the query string or the JSON body)
asio::awaitable<http::response> handle_dlq_requeue(broker_context& ctx, http::request_context& rc) {
    const auto req = parse_dlq_requeue(rc.query, rc.req.body(), ctx.limits);
    const auto filter = store_filter(req.filter, rc.tenant);

    // 1. Segment copies that plain SQL could not decode: the broker decodes them.
    const auto segs = co_await store::dead_letter_segments(ctx.pool, filter, req.limit);
    std::vector<store::decoded_dead_letter> decoded;
    for (const auto& seg : segs) {
        auto frame = decode_copy(seg.segment, seg.msg_offset, seg.segment_first_offset, seg.dead_letter_id);
        if (!frame) continue;  // stays a dead letter; reported as skipped
        decoded.push_back(store::decoded_dead_letter{seg.dead_letter_id, std::move(frame->transaction_id),
                                                     std::move(frame->trace_id), std::move(frame->producer_sub),
                                                     std::move(frame->payload)});
    }

    // 2. Requeue, in one transaction (one statement).
    const auto rows = co_await store::requeue_dead_letter_set(ctx.pool, filter, req.filter.all, req.limit, decoded);

    std::int64_t requeued = 0, removed = 0, skipped = 0;
    std::set<std::string> queues;
    render::json_writer messages;
    messages.begin_array();
    for (const auto& row : rows) {
        if (row.status == store::requeue_status::skipped) {
            ++skipped;
            log::warn("requeue: dead letter {} skipped (payload not decodable or partition gone)", row.dead_letter_id);
            continue;
        }
        ++removed;
        if (row.status != store::requeue_status::requeued) continue;
        ++requeued;
        if (row.queue) queues.insert(*row.queue);
        write_requeued(messages, row, rc.tenant);
    }
    messages.end_array();
    // Requeued messages are claimable at once: wake parked pops.
    if (!queues.empty()) ctx.notifier.queues_changed({queues.begin(), queues.end()});

    // What still matches (more than `limit` matched, or skipped rows).
    const std::int64_t remaining = co_await store::count_dead_letters(ctx.pool, filter);

    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("requeued", requeued)
        .field("removed", removed)
        .field("skipped", skipped)
        .field("remaining", remaining)
        .raw_field("messages", messages.take())
        .end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// DELETE /api/v1/dlq?queue=&consumerGroup=&partition=&from=&to=&id=&all=
asio::awaitable<http::response> handle_dlq_purge(broker_context& ctx, http::request_context& rc) {
    const auto filter = parse_dlq_purge(rc.query, ctx.limits);
    const auto matching = store_filter(filter, rc.tenant);
    const std::int64_t purged = co_await store::purge_dead_letters(ctx.pool, matching, filter.all);
    render::json_writer out;
    out.begin_object().field("success", true).field("purged", purged).end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
