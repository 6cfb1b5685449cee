#include "api/group_answers.hpp"

#include "core/message_id.hpp"
#include "render/json_writer.hpp"

#include <algorithm>
#include <optional>
#include <set>

namespace queen::api {

namespace {

std::int64_t cursor_lag(const store::group_cursor& r) {
    return r.last_offset > r.committed ? r.last_offset - r.committed : 0;
}

// Totals over the cursors of rows [begin, end).
struct totals {
    std::int64_t partitions = 0;
    std::int64_t lag = 0;
    std::int64_t leased = 0;
    std::set<std::string> leases;
    std::int64_t max_time_lag = 0;
    std::optional<std::int64_t> last_claimed_at;

    totals(const std::vector<store::group_cursor>& rows, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) add(rows[i]);
    }
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

void write_partition(render::json_writer& out, const store::group_cursor& r) {
    out.begin_object()
        .field("partition", r.partition)
        .field("partitionId", std::to_string(r.partition_id))
        .field("committedOffset", r.committed)
        .field("lastOffset", r.last_offset)
        .field("lag", cursor_lag(r))
        .field("leaseId", r.lease_id)
        .field("leaseEnd", r.lease_end)
        .field("leaseExpiresAt", core::iso_time(r.lease_expires_at))
        .field("attempts", r.attempts)
        .field("retryAt", core::iso_time(r.retry_at))
        .field("lastClaimedAt", core::iso_time(r.last_claimed_at))
        .field("oldestPendingAt", core::iso_time(r.pending_since))
        .end_object();
}

// One queue of a group, rows [begin, end); detail: with its partitions, else their count.
void write_queue(render::json_writer& out, const std::vector<store::group_cursor>& rows, std::size_t begin,
                 std::size_t end, bool detail) {
    const totals q(rows, begin, end);
    out.begin_object()
        .field("queueName", rows[begin].queue)
        .field("subscriptionTimestamp", core::iso_time(rows[begin].subscription_at));
    if (!detail) out.field("partitionCount", q.partitions);
    out.field("lag", q.lag)
        .field("members", q.leases.size())
        .field("leasedPartitions", q.leased)
        .field("maxTimeLag", q.max_time_lag)
        .field("state", q.state());
    if (detail) {
        out.key("partitions").begin_array();
        for (std::size_t i = begin; i < end; ++i)
            if (rows[i].has_cursor) write_partition(out, rows[i]);
        out.end_array();
    }
    out.end_object();
}

// One group from its rows [begin, end) (ordered by queue, partition).
void write_group(render::json_writer& out, const std::vector<store::group_cursor>& rows, std::size_t begin,
                 std::size_t end, bool detail) {
    const totals all(rows, begin, end);
    out.begin_object()
        .field("name", rows[begin].group)
        .field("state", all.state())
        .field("totalLag", all.lag)
        .field("members", all.leases.size())
        .field("leasedPartitions", all.leased)
        .field("partitionCount", all.partitions)
        .field("maxTimeLag", all.max_time_lag)
        .field("lastClaimedAt", core::iso_time(all.last_claimed_at))
        .key("queues")
        .begin_array();
    for (std::size_t i = begin; i < end;) {
        std::size_t j = i;
        while (j < end && rows[j].queue == rows[i].queue) ++j;
        write_queue(out, rows, i, j, detail);
        i = j;
    }
    out.end_array().end_object();
}

}  // namespace

std::string render_group_list(const std::vector<store::group_cursor>& rows) {
    render::json_writer out;
    out.begin_array();
    for (std::size_t i = 0; i < rows.size();) {
        std::size_t j = i;
        while (j < rows.size() && rows[j].group == rows[i].group) ++j;
        write_group(out, rows, i, j, false);
        i = j;
    }
    return out.end_array().take();
}

std::string render_group_detail(const std::vector<store::group_cursor>& rows) {
    render::json_writer out;
    write_group(out, rows, 0, rows.size(), true);
    return out.take();
}

}  // namespace queen::api
