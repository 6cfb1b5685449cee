// The message browser (docs/operator-routes.md, "Browsing"): GET /api/v1/messages, GET and
// DELETE /api/v1/messages/:partitionId/:transactionId, GET
// /api/v1/status/queues/:queue/messages. Statuses come from SQL (sql/procedures/73_browse.sql);
// a delete is a tombstone (44_tombstones.sql). This file parses, calls store/messages_store,
// decodes the segments the database could not (zstd without queen_ext), and renders.
#include "api/admin/handlers.hpp"
#include "api/admin/messages_requests.hpp"
#include "api/admin/trace_requests.hpp"
#include "api/shared/payload_encryption.hpp"
#include "api/shared/tenant_names.hpp"
#include "crypto/payload_cipher.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "log/log.hpp"
#include "metrics/prometheus_metrics.hpp"
#include "render/json_writer.hpp"
#include "segment/segment_reader.hpp"
#include "store/messages_store.hpp"
#include "util/wall_clock.hpp"

#include <chrono>

namespace queen::api {

namespace asio = boost::asio;

namespace {

std::string_view or_empty(const std::optional<std::string>& v) {
    return v ? std::string_view(*v) : std::string_view();
}

// A message's frame fields as rendered.
struct frame_fields {
    std::optional<std::string> transaction_id;
    std::optional<std::string> trace_id;
    std::optional<std::string> producer_sub;
    std::optional<std::string> payload;  // as stored
};

// Decodes the segments the database handed over undecoded; a page carries each such segment
// once, on its first message, and its other messages follow it, so the last one is kept.
class fallback_decoder {
public:
    // The fields of the message at offset: SQL's where it decoded them, else from the segment.
    frame_fields fields(const store::message_frame& f, std::int64_t partition_id, std::int64_t offset,
                        std::optional<std::string> payload = std::nullopt) {
        if (f.transaction_id) return {f.transaction_id, f.trace_id, f.producer_sub, std::move(payload)};
        if (f.segment && f.segment_first_offset) {
            segment_.reset();
            try {
                segment_.emplace(std::span<const std::uint8_t>(*f.segment), *f.segment_first_offset);
                partition_ = partition_id;
            } catch (const segment::segment_error& e) {
                log::warn("partition {}: a segment at offset {} cannot be decoded: {}", partition_id,
                          *f.segment_first_offset, e.what());
            }
        }
        const segment::frame_view* frame = segment_ && partition_ == partition_id ? segment_->at(offset) : nullptr;
        if (!frame) return {};
        const auto& fr = *frame;
        frame_fields out;
        out.transaction_id = std::string(fr.transaction_id);
        if (fr.trace_id) out.trace_id = segment::uuid_to_string(*fr.trace_id);
        if (fr.producer_sub) out.producer_sub = std::string(*fr.producer_sub);
        out.payload = std::string(fr.payload);
        return out;
    }

private:
    std::optional<segment::segment_reader> segment_;
    std::int64_t partition_ = 0;
};

std::string_view mode_type(bool queue_mode, std::int64_t bus_groups) {
    if (queue_mode) return bus_groups > 0 ? "hybrid" : "queue";
    return bus_groups > 0 ? "bus" : "none";
}

std::string queue_path(std::string_view queue, const std::string& partition) {
    return std::string(queue) + "/" + partition;
}

// The path's message: its partition id (404 when it is not one) and transaction id.
std::int64_t path_partition(const http::request_context& rc) {
    const auto pid = parse_partition_id(rc.path_params.at(0));
    if (!pid) throw api_error(error_code::not_found, "Message not found");
    return *pid;
}

}  // namespace

// GET /api/v1/messages?queue=&partition=&ns=&task=&status=&consumerGroup=&from=&to=&limit=200&offset=0
asio::awaitable<http::response> handle_browse_messages(broker_context& ctx, http::request_context& rc) {
    const auto req = parse_message_browse(rc.query, ctx.limits, util::wall_clock_us());
    std::optional<std::string> queue;
    if (req.queue) queue = queue_key(rc.tenant, *req.queue, "queue");
    const store::browse_filter filter{queue,      req.partition,      req.namespace_name,   req.task,
                                      req.status, req.consumer_group, req.from_us,          req.to_us,
                                      req.limit,  req.offset,         rc.tenant.sql_scope()};
    const auto page = co_await store::browse_messages(ctx.pool, filter);
    fallback_decoder decoder;
    render::json_writer out;
    out.begin_object().key("messages").begin_array();
    for (const auto& m : page.messages) {
        const auto f = decoder.fields(m.frame, m.partition_id, m.offset);
        out.begin_object()
            .field("id", domain::message_id(m.partition_id, m.offset))
            .field("transactionId", f.transaction_id)
            .field("partitionId", std::to_string(m.partition_id))
            .field("offset", m.offset)
            .field("queuePath", queue_path(rc.tenant.local(m.queue), m.partition))
            .field("queue", rc.tenant.local(m.queue))
            .field("partition", m.partition)
            .field("namespace", or_empty(m.namespace_name))
            .field("task", or_empty(m.task))
            .field("status", m.status)
            .field("queueStatus", m.queue_status)
            .key("busStatus")
            .begin_object()
            .field("consumedBy", m.consumed_by)
            .field("totalGroups", m.total_groups)
            .end_object()
            .field("traceId", f.trace_id)
            .field("producerSub", f.producer_sub)
            .field("queuePriority", m.queue_priority)
            .field("createdAt", domain::iso_time(m.created_at_us))
            .field("leaseExpiresAt", domain::iso_time(m.lease_expires_at_us))
            .end_object();
    }
    out.end_array()
        .key("mode")
        .begin_object()
        .field("hasQueueMode", page.mode.has_queue_mode)
        .field("busGroupsCount", page.mode.bus_groups)
        .field("type", mode_type(page.mode.has_queue_mode, page.mode.bus_groups))
        .end_object()
        .end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /api/v1/messages/:partitionId/:transactionId
asio::awaitable<http::response> handle_get_message(broker_context& ctx, http::request_context& rc) {
    const auto pid = path_partition(rc);
    const std::string& txid = rc.path_params.at(1);
    const auto d = co_await store::read_message(ctx.pool, pid, txid, rc.tenant.sql_scope());
    if (!d) throw api_error(error_code::not_found, "Message not found");
    fallback_decoder decoder;
    auto f = decoder.fields(d->frame, pid, d->offset, d->payload);
    if (d->deleted_at_us) f.payload.reset();
    bool has_queue_mode = false;
    std::int64_t bus_groups = 0, consumed_by = 0;
    for (const auto& g : d->groups) {
        if (g.name == queue_mode_group) {
            has_queue_mode = true;
            continue;
        }
        ++bus_groups;
        if (g.consumed) ++consumed_by;
    }
    render::json_writer out;
    out.begin_object()
        .field("id", domain::message_id(pid, d->offset))
        .field("transactionId", f.transaction_id ? *f.transaction_id : txid)
        .field("partitionId", std::to_string(pid))
        .field("offset", d->offset)
        .field("queuePath", queue_path(rc.tenant.local(d->queue), d->partition))
        .field("queue", rc.tenant.local(d->queue))
        .field("partition", d->partition)
        .field("namespace", or_empty(d->namespace_name))
        .field("task", or_empty(d->task))
        .field("status", d->status);
    if (f.payload)
        out.raw_field("payload", deliverable_payload(ctx, *f.payload, d->queue));
    else
        out.field("payload", nullptr);
    out.field("isEncrypted", f.payload && crypto::payload_cipher::is_sealed(*f.payload))
        .field("traceId", f.trace_id)
        .field("producerSub", f.producer_sub)
        .field("createdAt", domain::iso_time(d->created_at_us))
        .field("errorMessage", d->error_message)
        .field("retryCount", d->retry_count)
        .field("leaseExpiresAt", domain::iso_time(d->lease_expires_at_us));
    if (d->deleted_at_us) out.field("deletedAt", domain::iso_time(*d->deleted_at_us));
    out.key("queueConfig")
        .begin_object()
        .field("leaseTime", d->lease_time)
        .field("retryLimit", d->retry_limit)
        .field("retryDelay", d->retry_delay)
        .field("ttl", d->ttl)
        .field("priority", d->priority)
        .end_object()
        .key("mode")
        .begin_object()
        .field("hasQueueMode", has_queue_mode)
        .field("busGroupsCount", bus_groups)
        .field("consumedByGroups", consumed_by)
        .field("type", mode_type(has_queue_mode, bus_groups))
        .end_object()
        .key("consumerGroups")
        .begin_array();
    for (const auto& g : d->groups)
        out.begin_object()
            .field("name", g.name)
            .field("consumed", g.consumed)
            .field("leaseExpiresAt", domain::iso_time(g.lease_expires_at_us))
            .end_object();
    out.end_array().end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// DELETE /api/v1/messages/:partitionId/:transactionId: a tombstone (docs/delivery-guarantees.md).
asio::awaitable<http::response> handle_delete_message(broker_context& ctx, http::request_context& rc) {
    const auto pid = path_partition(rc);
    const std::string& txid = rc.path_params.at(1);
    // deleted_by stays NULL until authentication gives callers a subject.
    const auto d = co_await store::delete_message(ctx.pool, pid, txid, std::nullopt, rc.tenant.sql_scope());
    if (!d) throw api_error(error_code::not_found, "Message not found");
    if (!d->already_deleted) ctx.prometheus.deleted(d->queue);
    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("partitionId", std::to_string(pid))
        .field("transactionId", txid)
        .field("offset", d->offset);
    if (d->already_deleted)
        out.field("alreadyDeleted", true).field("message", "Message already deleted");
    else
        out.field("message", "Message deleted successfully");
    out.end_object();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

// GET /api/v1/status/queues/:queue/messages?limit=50&offset=0: newest first, no time window,
// status = queueStatus.
asio::awaitable<http::response> handle_queue_messages(broker_context& ctx, http::request_context& rc) {
    const std::string& queue = rc.path_params.at(0);
    check_name("queue", queue, ctx.limits);
    const auto req = parse_queue_messages(rc.query);
    store::browse_filter filter;
    filter.queue = queue_key(rc.tenant, queue, "queue");
    filter.scope = rc.tenant.sql_scope();
    filter.limit = req.limit;
    filter.offset = req.offset;
    const auto page = co_await store::browse_messages(ctx.pool, filter);
    fallback_decoder decoder;
    render::json_writer out;
    out.begin_array();
    for (const auto& m : page.messages) {
        const auto f = decoder.fields(m.frame, m.partition_id, m.offset);
        out.begin_object()
            .field("id", domain::message_id(m.partition_id, m.offset))
            .field("transactionId", f.transaction_id)
            .field("partitionId", std::to_string(m.partition_id))
            .field("queuePath", queue_path(rc.tenant.local(m.queue), m.partition))
            .field("queue", rc.tenant.local(m.queue))
            .field("partition", m.partition)
            .field("status", m.queue_status)
            .field("createdAt", domain::iso_time(m.created_at_us))
            .end_object();
    }
    out.end_array();
    co_return http::json_text(http::bhttp::status::ok, out.take());
}

}  // namespace queen::api
