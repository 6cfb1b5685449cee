// Consumer groups (API.md, "Consumer groups"; shapes and decisions in docs/consumer-groups.md):
// listing and detail (queen.group_cursors), delete (queen.delete_group), seek
// (queen.seek_group) and subscription rewrite (queen.set_group_subscription).
#include "api/group_requests.hpp"
#include "api/routes.hpp"
#include "core/message_id.hpp"
#include "db/pg_binary.hpp"
#include "http/responses.hpp"
#include "segment/segment_codec.hpp"

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

// One row of queen.group_cursors.
struct cursor_row {
    std::string group;
    std::string queue;
    std::optional<std::int64_t> subscription_at;
    bool has_cursor = false;
    std::int64_t partition_id = 0;
    std::string partition;
    std::int64_t committed = 0;
    std::int64_t last_offset = 0;
    std::optional<std::string> lease_id;
    std::optional<std::int64_t> lease_end;
    std::optional<std::int64_t> lease_expires_at;
    std::int64_t attempts = 0;
    std::optional<std::int64_t> retry_at;
    std::optional<std::int64_t> last_claimed_at;
    std::optional<std::int64_t> pending_since;
    std::int64_t pending_seconds = 0;
    std::int64_t lag() const { return last_offset > committed ? last_offset - committed : 0; }
};

std::optional<std::int64_t> opt_time(const db::pg_result& res, int row, int col) {
    if (res.is_null(row, col)) return std::nullopt;
    return db::timestamp_us(res, row, col);
}

// Reads queen.group_cursors(group) (group nullopt: every group).
asio::awaitable<std::vector<cursor_row>> read_cursors(app::broker_context& ctx, const std::optional<std::string>& group) {
    std::vector<db::pg_param> params{group ? db::pg_param::text(*group) : db::pg_param::null()};
    auto res = co_await ctx.pool.exec(
        "SELECT consumer_group, queue_name, subscription_at, partition_id, partition_name, committed, last_offset, "
        "lease_id, lease_end, lease_expires_at, attempts, retry_at, last_claimed_at, pending_since, "
        "coalesce(floor(extract(epoch FROM now() - pending_since)), 0)::bigint "
        "FROM queen.group_cursors($1)",
        params, db::result_format::binary);
    std::vector<cursor_row> rows;
    rows.reserve(static_cast<std::size_t>(res.rows()));
    for (int i = 0; i < res.rows(); ++i) {
        cursor_row r;
        r.group = std::string(res.text(i, 0));
        r.queue = std::string(res.text(i, 1));
        r.subscription_at = opt_time(res, i, 2);
        r.has_cursor = !res.is_null(i, 3);
        if (r.has_cursor) {
            r.partition_id = res.int64(i, 3);
            r.partition = std::string(res.text(i, 4));
            r.committed = res.int64(i, 5);
            r.last_offset = res.int64(i, 6);
            if (!res.is_null(i, 7)) r.lease_id = segment::uuid_to_string(db::uuid_bytes(res, i, 7));
            if (!res.is_null(i, 8)) r.lease_end = res.int64(i, 8);
            r.lease_expires_at = opt_time(res, i, 9);
            r.attempts = res.int64(i, 10);
            r.retry_at = opt_time(res, i, 11);
            r.last_claimed_at = opt_time(res, i, 12);
            r.pending_since = opt_time(res, i, 13);
            r.pending_seconds = res.int64(i, 14);
        }
        rows.push_back(std::move(r));
    }
    co_return rows;
}

// Totals over a set of cursors.
struct totals {
    std::int64_t partitions = 0;
    std::int64_t lag = 0;
    std::int64_t leased = 0;
    std::set<std::string> leases;
    std::int64_t max_time_lag = 0;
    std::optional<std::int64_t> last_claimed_at;

    void add(const cursor_row& r) {
        if (!r.has_cursor) return;
        ++partitions;
        lag += r.lag();
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

ojson partition_json(const cursor_row& r) {
    return ojson{{"partition", r.partition},
                 {"partitionId", std::to_string(r.partition_id)},
                 {"committedOffset", r.committed},
                 {"lastOffset", r.last_offset},
                 {"lag", r.lag()},
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
ojson group_json(const std::vector<cursor_row>& rows, std::size_t begin, std::size_t end, bool detail) {
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

const std::string& path_group(const http::request_context& rc) {
    const std::string& group = rc.path_params.at(0);
    check_group_name(group);
    return group;
}

struct delete_outcome {
    std::int64_t deleted_partitions = 0;
    bool metadata_deleted = false;
};

asio::awaitable<delete_outcome> delete_group(app::broker_context& ctx, const std::string& group,
                                             const std::optional<std::string>& queue, bool delete_metadata) {
    std::vector<db::pg_param> params{db::pg_param::text(group),
                                     queue ? db::pg_param::text(*queue) : db::pg_param::null(),
                                     db::pg_param::text(delete_metadata ? "true" : "false")};
    auto res = co_await ctx.pool.exec(
        "SELECT queue_name, deleted_partitions, metadata_deleted FROM queen.delete_group($1, $2, $3::boolean)",
        params, db::result_format::binary);
    delete_outcome out;
    std::vector<std::string> queues;
    for (int i = 0; i < res.rows(); ++i) {
        queues.emplace_back(res.text(i, 0));
        out.deleted_partitions += res.int64(i, 1);
        out.metadata_deleted = out.metadata_deleted || res.boolean(i, 2);
    }
    // Cursors restarted from their start may be claimable: wake parked pops.
    if (!queues.empty()) ctx.notifier.queues_changed(queues);
    co_return out;
}

asio::awaitable<http::response> answer_delete(app::broker_context& ctx, http::request_context& rc,
                                              std::optional<std::string> queue) {
    const std::string& group = path_group(rc);
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

struct seek_outcome {
    std::int64_t partitions_updated = 0;
};

asio::awaitable<seek_outcome> seek(app::broker_context& ctx, const std::string& group, const std::string& queue,
                                   const std::optional<std::string>& partition, const seek_request& r) {
    const std::string at = r.timestamp_us ? core::iso_time(*r.timestamp_us) : std::string();
    std::vector<db::pg_param> params{db::pg_param::text(queue), db::pg_param::text(group),
                                     partition ? db::pg_param::text(*partition) : db::pg_param::null(),
                                     db::pg_param::text(r.to_end ? "true" : "false"),
                                     r.timestamp_us ? db::pg_param::text(at) : db::pg_param::null()};
    auto res = co_await ctx.pool.exec(
        "SELECT status, partitions_updated FROM queen.seek_group($1, $2, $3, $4::boolean, $5::timestamptz)", params,
        db::result_format::binary);
    const std::string status(res.text(0, 0));
    if (status == "queue_not_found") throw not_found("Queue not found");
    if (status == "partition_not_found") throw not_found("Partition not found");
    if (status == "group_not_found") throw not_found("Consumer group not found");
    if (status != "ok") throw std::runtime_error("queen.seek_group answered an unknown status: " + status);
    // A backwards seek or a released lease makes partitions claimable: wake parked pops.
    std::vector<std::string> queues{queue};
    ctx.notifier.queues_changed(queues);
    co_return seek_outcome{res.int64(0, 1)};
}

}  // namespace

// GET /api/v1/consumer-groups
asio::awaitable<http::response> handle_list_groups(app::broker_context& ctx, http::request_context&) {
    const std::optional<std::string> every;
    auto rows = co_await read_cursors(ctx, every);
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
    const std::optional<std::string> group = path_group(rc);
    auto rows = co_await read_cursors(ctx, group);
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
    const std::string& group = path_group(rc);
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
    const std::string& group = path_group(rc);
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
    const std::string& group = path_group(rc);
    const std::int64_t at = parse_subscription(rc.req.body(), ctx.limits);
    const std::string at_text = core::iso_time(at);
    std::vector<db::pg_param> params{db::pg_param::text(group), db::pg_param::text(at_text)};
    auto res = co_await ctx.pool.exec(
        "SELECT queues_updated, subscription_at FROM queen.set_group_subscription($1, $2::timestamptz)", params,
        db::result_format::binary);
    const std::int64_t updated = res.int64(0, 0);
    if (updated == 0) throw not_found("Consumer group not found");
    ojson out{{"success", true},
              {"consumerGroup", group},
              {"subscriptionTimestamp", core::iso_time(db::timestamp_us(res, 0, 1))},
              {"queuesUpdated", updated}};
    co_return json_ok(out);
}

}  // namespace queen::api
