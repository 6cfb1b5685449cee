#include "api/admin/group_answers.hpp"

#include "domain/message_id.hpp"
#include "render/json_writer.hpp"

#include <cmath>

namespace queen::api {

namespace {

std::int64_t cursor_lag(const store::group_cursor& r) {
    return r.last_offset > r.committed ? r.last_offset - r.committed : 0;
}

// Lagging: its oldest waiting message is older than lagging_after_seconds; Stable: some cursor
// has committed (or was seeded past) a message; Dead: neither.
const char* state_of(const store::group_summary& g) {
    if (g.max_time_lag > lagging_after_seconds) return "Lagging";
    return g.committed > 0 ? "Stable" : "Dead";
}

void write_partition(render::json_writer& out, const store::group_cursor& r) {
    out.begin_object()
        .field("partition", r.partition)
        .field("workerId", r.lease_id)
        .field("lastConsumedAt", domain::iso_time(r.committed_at))
        .field("totalConsumed", r.committed)
        .field("offsetLag", cursor_lag(r))
        .field("timeLagSeconds", r.pending_since ? r.pending_seconds : 0)
        .field("leaseActive", r.lease_id.has_value())
        .field("partitionId", std::to_string(r.partition_id))
        .field("committedOffset", r.committed)
        .field("lastOffset", r.last_offset)
        .field("leaseId", r.lease_id)
        .field("leaseEnd", r.lease_end)
        .field("leaseExpiresAt", domain::iso_time(r.lease_expires_at))
        .field("attempts", r.attempts)
        .field("retryAt", domain::iso_time(r.retry_at))
        .field("lastClaimedAt", domain::iso_time(r.last_claimed_at))
        .field("oldestPendingAt", domain::iso_time(r.pending_since))
        .end_object();
}

}  // namespace

std::string render_group_list(const std::vector<store::group_summary>& rows) {
    render::json_writer out;
    out.begin_array();
    for (const auto& g : rows) {
        out.begin_object()
            .field("name", g.group)
            .key("topics")
            .begin_array()
            .value(g.queue)
            .end_array()
            .field("queueName", g.queue)
            .field("members", g.members)
            .field("partitionsWithLag", g.partitions_with_lag)
            .field("totalLag", g.lag)
            .field("maxTimeLag", g.max_time_lag)
            .field("state", state_of(g))
            .field("subscriptionMode", g.subscription_mode)
            .field("subscriptionTimestamp", domain::iso_time(g.subscription_at))
            .field("subscriptionCreatedAt", domain::iso_time(g.registered_at))
            .field("lagMessages", g.lag)
            .field("lagSeconds", g.max_time_lag)
            .end_object();
    }
    return out.end_array().take();
}

std::string render_group_detail(const std::vector<store::group_cursor>& rows) {
    render::json_writer out;
    out.begin_object();
    for (std::size_t i = 0; i < rows.size();) {
        std::size_t j = i;
        while (j < rows.size() && rows[j].queue == rows[i].queue) ++j;
        bool any = false;
        // The partitions the group has consumed from, as Queen lists them (docs/consumer-groups.md).
        for (std::size_t k = i; k < j; ++k) any = any || (rows[k].has_cursor && rows[k].consumed);
        if (any) {
            out.dynamic_key(rows[i].queue).begin_object().key("partitions").begin_array();
            for (std::size_t k = i; k < j; ++k)
                if (rows[k].has_cursor && rows[k].consumed) write_partition(out, rows[k]);
            out.end_array().end_object();
        }
        i = j;
    }
    return out.end_object().take();
}

std::string render_lagging(const std::vector<store::lagging_cursor>& rows) {
    render::json_writer out;
    out.begin_array();
    for (const auto& c : rows) {
        out.begin_object()
            .field("consumer_group", c.group)
            .field("queue_name", c.queue)
            .field("partition_name", c.partition)
            .field("partition_id", std::to_string(c.partition_id))
            .field("worker_id", c.lease_id)
            .field("offset_lag", c.offset_lag)
            .field("time_lag_seconds", c.time_lag_seconds)
            .field("lag_hours", std::round(static_cast<double>(c.time_lag_seconds) / 36.0) / 100.0)
            .field("oldest_unconsumed_at", domain::iso_time(c.oldest_unconsumed_at))
            .field("last_consumed_at", domain::iso_time(c.last_consumed_at))
            .end_object();
    }
    return out.end_array().take();
}

}  // namespace queen::api
