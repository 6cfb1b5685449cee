// Consumer groups (API.md, "Consumer groups"; shapes and decisions in docs/consumer-groups.md):
// listing and detail (queen.group_cursors), delete (queen.delete_group), seek
// (queen.seek_group) and subscription rewrite (queen.set_group_subscription).
#include "api/group_requests.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "http/responses.hpp"
#include "store/groups_store.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace queen::api {

namespace asio = boost::asio;
using ojson = nlohmann::ordered_json;

namespace {

http::response json_ok(const ojson& body) {
    return http::json_text(http::bhttp::status::ok, body.dump(-1, ' ', false, ojson::error_handler_t::replace));
}

api_error not_found(std::string message) { return api_error(error_code::not_found, std::move(message)); }

ojson iso_or_null(const std::optional<std::int64_t>& us) { return us ? ojson(core::iso_time(*us)) : ojson(); }

std::int64_t cursor_lag(const store::group_cursor& r) {
    return r.last_offset > r.committed ? r.last_offset - r.committed : 0;
}

// Totals over a set of cursors.
struct totals {
    std::int64_t partitions = 0;
    std::int64_t lag = 0;
    std::int64_t leased = 0;
    std::set<std::string> leases;
    std::int64_t max_time_lag = 0;
    std::optional<std::int64_t> last_claimed_at;

    void add(const store::group_cursor& r) {
        if (!r.has_cursor) return;
        ++partitions;
        lag += cursor_lag(r);
        if (r.lease_id) {
            ++leased;
            leases.insert(*r.lease_id);
        }
        if (r.pending_since) max_time_lag = std::max(max_time_lag, r.pending_seconds);
        if (r.last_claimed_at && (!last_claimed_at || *r.last_claimed_at > *last_claimed_at))
            last_claimed_at = r.last_claimed_at;
    }
    // active: a lease is in flight; lagging: none is, and messages wait; idle: caught up.
    const char* state() const { return leased > 0 ? "active" : lag > 0 ? "lagging" : "idle"; }
};

ojson partition_json(const store::group_cursor& r) {
    return ojson{{"partition", r.partition},
                 {"partitionId", std::to_string(r.partition_id)},
                 {"committedOffset", r.committed},
                 {"lastOffset", r.last_offset},
                 {"lag", cursor_lag(r)},
                 {"leaseId", r.lease_id ? ojson(*r.lease_id) : ojson()},
                 {"leaseEnd", r.lease_end ? ojson(*r.lease_end) : ojson()},
                 {"leaseExpiresAt", iso_or_null(r.lease_expires_at)},
                 {"attempts", r.attempts},
                 {"retryAt", iso_or_null(r.retry_at)},
                 {"lastClaimedAt", iso_or_null(r.last_claimed_at)},
                 {"oldestPendingAt", iso_or_null(r.pending_since)}};
}

// Builds one group's JSON from its rows [begin, end) (ordered by queue, partition).
// detail: per-partition arrays; otherwise per-queue counts only.
ojson group_json(const std::vector<store::group_cursor>& rows, std::size_t begin, std::size_t end, bool detail) {
    totals all;
    ojson queues = ojson::array();
    for (std::size_t i = begin; i < end;) {
        std::size_t j = i;
        totals q;
        ojson parts = ojson::array();
        while (j < end && rows[j].queue == rows[i].queue) {
            q.add(rows[j]);
            all.add(rows[j]);
            if (detail && rows[j].has_cursor) parts.push_back(partition_json(rows[j]));
            ++j;
        }
        ojson qj{{"queueName", rows[i].queue}, {"subscriptionTimestamp", iso_or_null(rows[i].subscription_at)}};
        if (!detail) qj["partitionCount"] = q.partitions;
        qj["lag"] = q.lag;
        qj["members"] = q.leases.size();
        qj["leasedPartitions"] = q.leased;
        qj["maxTimeLag"] = q.max_time_lag;
        qj["state"] = q.state();
        if (detail) qj["partitions"] = std::move(parts);
        queues.push_back(std::move(qj));
        i = j;
    }
    return ojson{{"name", rows[begin].group},
                 {"state", all.state()},
                 {"totalLag", all.lag},
                 {"members", all.leases.size()},
                 {"leasedPartitions", all.leased},
                 {"partitionCount", all.partitions},
                 {"maxTimeLag", all.max_time_lag},
                 {"lastClaimedAt", iso_or_null(all.last_claimed_at)},
                 {"queues", std::move(queues)}};
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

asio::awaitable<delete_outcome> delete_group(app::broker_context& ctx, const std::string& group,
                                             const std::optional<std::string>& queue, bool delete_metadata) {
    const auto rows = co_await store::delete_group(ctx.pool, group, queue, delete_metadata);
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

asio::awaitable<http::response> answer_delete(app::broker_context& ctx, http::request_context& rc,
                                              std::optional<std::string> queue) {
    const std::string& group = path_group(rc, ctx.limits);
    if (queue) check_name("queue", *queue, ctx.limits);
    const std::string* flag = rc.query_value("deleteMetadata");
    const bool delete_metadata = flag && query_bool(*flag);
    auto outcome = co_await delete_group(ctx, group, queue, delete_metadata);
    ojson out{{"success", true},
              {"consumerGroup", group},
              {"deletedPartitions", outcome.deleted_partitions},
              {"metadataDeleted", outcome.metadata_deleted}};
    if (queue) out["queueName"] = *queue;
    co_return json_ok(out);
}

asio::awaitable<store::seek_outcome> seek(app::broker_context& ctx, const std::string& group,
                                          const std::string& queue, const std::optional<std::string>& partition,
                                          const seek_request& r) {
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
asio::awaitable<http::response> handle_list_groups(app::broker_context& ctx, http::request_context&) {
    const std::optional<std::string> every;
    auto rows = co_await store::group_cursors(ctx.pool, every);
    ojson out = ojson::array();
    for (std::size_t i = 0; i < rows.size();) {
        std::size_t j = i;
        while (j < rows.size() && rows[j].group == rows[i].group) ++j;
        out.push_back(group_json(rows, i, j, false));
        i = j;
    }
    co_return json_ok(out);
}

// GET /api/v1/consumer-groups/:group
asio::awaitable<http::response> handle_get_group(app::broker_context& ctx, http::request_context& rc) {
    const std::optional<std::string> group = path_group(rc, ctx.limits);
    auto rows = co_await store::group_cursors(ctx.pool, group);
    if (rows.empty()) throw not_found("Consumer group not found");
    co_return json_ok(group_json(rows, 0, rows.size(), true));
}

// DELETE /api/v1/consumer-groups/:group?deleteMetadata=
asio::awaitable<http::response> handle_delete_group(app::broker_context& ctx, http::request_context& rc) {
    co_return co_await answer_delete(ctx, rc, std::nullopt);
}

// DELETE /api/v1/consumer-groups/:group/queues/:queue?deleteMetadata=
asio::awaitable<http::response> handle_delete_group_queue(app::broker_context& ctx, http::request_context& rc) {
    std::optional<std::string> queue = rc.path_params.at(1);
    co_return co_await answer_delete(ctx, rc, std::move(queue));
}

// POST /api/v1/consumer-groups/:group/queues/:queue/seek {toEnd:true} | {timestamp:ISO}
asio::awaitable<http::response> handle_seek_group(app::broker_context& ctx, http::request_context& rc) {
    const std::string& group = path_group(rc, ctx.limits);
    const std::string& queue = rc.path_params.at(1);
    check_name("queue", queue, ctx.limits);
    const seek_request r = parse_seek(rc.req.body(), ctx.limits);
    const std::optional<std::string> all_partitions;
    auto outcome = co_await seek(ctx, group, queue, all_partitions, r);
    ojson out{{"success", true},
              {"consumerGroup", group},
              {"queueName", queue},
              {"seekToEnd", r.to_end},
              {"targetTimestamp", iso_or_null(r.timestamp_us)},
              {"partitionsUpdated", outcome.partitions_updated}};
    co_return json_ok(out);
}

// POST /api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek (to its end)
asio::awaitable<http::response> handle_seek_group_partition(app::broker_context& ctx, http::request_context& rc) {
    const std::string& group = path_group(rc, ctx.limits);
    const std::string& queue = rc.path_params.at(1);
    const std::optional<std::string> partition = rc.path_params.at(2);
    check_name("queue", queue, ctx.limits);
    check_name("partition", *partition, ctx.limits);
    seek_request r;
    r.to_end = true;
    auto outcome = co_await seek(ctx, group, queue, partition, r);
    ojson out{{"success", true},
              {"consumerGroup", group},
              {"queueName", queue},
              {"partition", *partition},
              {"seekToEnd", true},
              {"targetTimestamp", nullptr},
              {"partitionsUpdated", outcome.partitions_updated}};
    co_return json_ok(out);
}

// POST /api/v1/consumer-groups/:group/subscription {subscriptionTimestamp}
asio::awaitable<http::response> handle_set_group_subscription(app::broker_context& ctx, http::request_context& rc) {
    const std::string& group = path_group(rc, ctx.limits);
    const std::int64_t at = parse_subscription(rc.req.body(), ctx.limits);
    const auto res = co_await store::set_group_subscription(ctx.pool, group, at);
    const std::int64_t updated = res.queues_updated;
    if (updated == 0) throw not_found("Consumer group not found");
    ojson out{{"success", true},
              {"consumerGroup", group},
              {"subscriptionTimestamp", core::iso_time(res.subscription_at)},
              {"queuesUpdated", updated}};
    co_return json_ok(out);
}

}  // namespace queen::api
