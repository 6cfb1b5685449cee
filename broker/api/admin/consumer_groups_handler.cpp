// Consumer groups (docs/consumer-groups.md, with the answers Queen's tools read;
// decisions in docs/consumer-groups.md): listing (queen.list_group_summaries, from the stats
// snapshot), lagging cursors (queen.lagging_cursors), detail (queen.group_cursors), delete
// (queen.delete_group), seek (queen.seek_group) and subscription rewrite
// (queen.set_group_subscription).
#include "api/admin/group_answers.hpp"
#include "api/admin/handlers.hpp"
#include "api/shared/group_requests.hpp"
#include "api/shared/tenant_names.hpp"
#include "domain/message_id.hpp"
#include "http/responses.hpp"
#include "render/json_writer.hpp"
#include "store/groups_store.hpp"

namespace queen::api {

namespace asio = boost::asio;

namespace {

http::response json_ok(render::json_writer& out) {
    return http::json_text(http::bhttp::status::ok, out.take());
}

api_error not_found(std::string message) {
    return api_error(error_code::not_found, std::move(message));
}

const std::string& path_group(const http::request_context& rc, const limits& lim) {
    const std::string& group = rc.path_params.at(0);
    check_group_name(group, lim);
    return group;
}

struct delete_outcome {
    std::int64_t deleted_partitions = 0;
    bool metadata_deleted = false;
};

// `queue` is a stored key; nullopt: every queue of the tenant `scope`.
asio::awaitable<delete_outcome> delete_group(broker_context& ctx, const std::string& group,
                                             const std::optional<std::string>& queue, bool delete_metadata,
                                             const std::optional<std::string>& scope) {
    const auto rows = co_await store::delete_group(ctx.pool, group, queue, delete_metadata, scope);
    delete_outcome out;
    std::vector<std::string> queues;
    for (const auto& row : rows) {
        queues.push_back(row.queue);
        out.deleted_partitions += row.deleted_partitions;
        out.metadata_deleted = out.metadata_deleted || row.metadata_deleted;
    }
    // Cursors restarted from their start may be claimable: wake parked pops.
    if (!queues.empty()) ctx.notifier.queues_changed(queues);
    co_return out;
}

asio::awaitable<http::response> answer_delete(broker_context& ctx, http::request_context& rc,
                                              std::optional<std::string> queue) {
    const std::string& group = path_group(rc, ctx.limits);
    if (queue) check_name("queue", *queue, ctx.limits);
    // Absent means true, as in Queen.
    const std::string* flag = rc.query_value("deleteMetadata");
    const bool delete_metadata = !flag || flag->empty() || query_bool(*flag);
    std::optional<std::string> key;
    if (queue) key = queue_key(rc.tenant, *queue, "queue");
    auto outcome = co_await delete_group(ctx, group, key, delete_metadata, rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("consumerGroup", group)
        .field("deletedPartitions", outcome.deleted_partitions)
        .field("metadataDeleted", outcome.metadata_deleted);
    if (queue) out.field("queueName", *queue);
    out.end_object();
    co_return json_ok(out);
}

// `queue` is a stored key.
asio::awaitable<store::seek_outcome> seek(broker_context& ctx, const std::string& group, const std::string& queue,
                                          const std::optional<std::string>& partition, const seek_request& r) {
    const store::group_seek target{group, queue, partition, r.to_end, r.timestamp_us};
    auto res = co_await store::seek_group(ctx.pool, target);
    if (res.status == store::seek_status::queue_not_found) throw not_found("Queue not found");
    if (res.status == store::seek_status::partition_not_found) throw not_found("Partition not found");
    if (res.status == store::seek_status::group_not_found) throw not_found("Consumer group not found");
    // A backwards seek or a released lease makes partitions claimable: wake parked pops.
    std::vector<std::string> queues{queue};
    ctx.notifier.queues_changed(queues);
    co_return res;
}

}  // namespace

// GET /api/v1/consumer-groups
asio::awaitable<http::response> handle_list_groups(broker_context& ctx, http::request_context& rc) {
    const auto rows = co_await store::group_summaries(ctx.pool, rc.tenant.sql_scope());
    co_return http::json_text(http::bhttp::status::ok, render_group_list(rows));
}

// GET /api/v1/consumer-groups/lagging?minLagSeconds=3600
asio::awaitable<http::response> handle_lagging_groups(broker_context& ctx, http::request_context& rc) {
    const std::int64_t min_seconds = query_int(rc.query, "minLagSeconds", 3600, 0, 2147483647);
    const auto rows = co_await store::lagging_cursors(ctx.pool, min_seconds, rc.tenant.sql_scope());
    co_return http::json_text(http::bhttp::status::ok, render_lagging(rows));
}

// GET /api/v1/consumer-groups/:group ({} when the group has no cursor)
asio::awaitable<http::response> handle_get_group(broker_context& ctx, http::request_context& rc) {
    const std::optional<std::string> group = path_group(rc, ctx.limits);
    auto rows = co_await store::group_cursors(ctx.pool, group, rc.tenant.sql_scope());
    co_return http::json_text(http::bhttp::status::ok, render_group_detail(rows));
}

// DELETE /api/v1/consumer-groups/:group?deleteMetadata=
asio::awaitable<http::response> handle_delete_group(broker_context& ctx, http::request_context& rc) {
    co_return co_await answer_delete(ctx, rc, std::nullopt);
}

// DELETE /api/v1/consumer-groups/:group/queues/:queue?deleteMetadata=
asio::awaitable<http::response> handle_delete_group_queue(broker_context& ctx, http::request_context& rc) {
    std::optional<std::string> queue = rc.path_params.at(1);
    co_return co_await answer_delete(ctx, rc, std::move(queue));
}

// POST /api/v1/consumer-groups/:group/queues/:queue/seek {toEnd:true} | {timestamp:ISO}
asio::awaitable<http::response> handle_seek_group(broker_context& ctx, http::request_context& rc) {
    const std::string& group = path_group(rc, ctx.limits);
    const std::string& queue = rc.path_params.at(1);
    check_name("queue", queue, ctx.limits);
    const seek_request r = parse_seek(rc.req.body(), ctx.limits);
    const std::optional<std::string> all_partitions;
    auto outcome = co_await seek(ctx, group, queue_key(rc.tenant, queue, "queue"), all_partitions, r);
    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("consumerGroup", group)
        .field("queueName", queue)
        .field("seekToEnd", r.to_end)
        .field("targetTimestamp", domain::iso_time(r.timestamp_us))
        .field("partitionsUpdated", outcome.partitions_updated)
        .end_object();
    co_return json_ok(out);
}

// POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek (to its end)
asio::awaitable<http::response> handle_seek_group_partition(broker_context& ctx, http::request_context& rc) {
    const std::string& group = path_group(rc, ctx.limits);
    const std::string& queue = rc.path_params.at(1);
    const std::optional<std::string> partition = rc.path_params.at(2);
    check_name("queue", queue, ctx.limits);
    check_name("partition", *partition, ctx.limits);
    // A group without a cursor there is not an error here: nothing is updated.
    const store::group_seek target{group, queue_key(rc.tenant, queue, "queue"), partition, true, std::nullopt};
    auto outcome = co_await store::seek_group(ctx.pool, target);
    if (outcome.status == store::seek_status::queue_not_found ||
        outcome.status == store::seek_status::partition_not_found)
        throw not_found("Partition not found");
    if (outcome.status == store::seek_status::ok) {
        std::vector<std::string> queues{target.queue};
        ctx.notifier.queues_changed(queues);  // a released lease makes the partition claimable
    }
    const bool updated = outcome.partitions_updated > 0 && outcome.newest_at.has_value();
    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("consumerGroup", group)
        .field("queueName", queue)
        .field("partitionName", *partition)
        .field("updated", updated)
        .field("cursorMovedTo", domain::iso_time(outcome.newest_at))
        .field("partition", *partition)
        .field("seekToEnd", true)
        .field("targetTimestamp", nullptr)
        .field("partitionsUpdated", outcome.partitions_updated)
        .end_object();
    co_return json_ok(out);
}

// POST /api/v1/consumer-groups/:group/subscription {subscriptionTimestamp}
asio::awaitable<http::response> handle_set_group_subscription(broker_context& ctx, http::request_context& rc) {
    const std::string& group = path_group(rc, ctx.limits);
    const std::int64_t at = parse_subscription(rc.req.body(), ctx.limits);
    const auto res = co_await store::set_group_subscription(ctx.pool, group, at, rc.tenant.sql_scope());
    render::json_writer out;
    out.begin_object()
        .field("success", true)
        .field("consumerGroup", group)
        .field("newTimestamp", domain::iso_time(res.subscription_at))
        .field("rowsUpdated", res.queues_updated)
        .end_object();
    co_return json_ok(out);
}

}  // namespace queen::api
