#pragma once
// Store layer (see store/queues_store.hpp): claiming spans for pops, and giving them back.
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace queen::store {

struct pop_claim {
    std::string queue;
    std::optional<std::string> partition;  // nullopt: any partition of the queue
    std::string consumer_group;            // __QUEUE_MODE__ for queue mode
    std::int64_t batch = 1;
    std::int64_t partitions = 1;
    bool auto_ack = false;
    bool subscribe_all = true;  // a new group starts from the beginning
    std::optional<std::int64_t> subscription_at_us;
};

// One segment overlapping a claimed span, in partition then offset order.
struct claimed_segment {
    std::int64_t partition_id = 0;
    std::string partition_name;
    std::optional<std::string> lease_id;  // canonical UUID text; absent with autoAck
    std::int64_t span_start = 0;          // the span is (span_start, span_end]
    std::int64_t span_end = 0;
    std::int64_t first_offset = 0;           // of the segment's first frame
    std::string_view body;                   // the segment's bytes, held by claimed_spans::result
    std::vector<std::int64_t> skip_offsets;  // tombstoned offsets of the span, ascending: not delivered
};

// What a claim did besides handing out spans (queen.pop's counts row), for the metrics.
struct claim_counts {
    std::int64_t leases_expired = 0;        // expired leases taken over
    std::int64_t redelivered = 0;           // offsets handed out again
    std::int64_t lease_dead_letters = 0;    // dead-lettered, reason lease_expired
    std::int64_t expired_dead_letters = 0;  // dead-lettered, reason expired (maxWaitTimeSeconds)
};

// What a claim returns: the segments, whose bytes stay in the database's answer (no copy on
// the pop path); moving this keeps them valid.
struct claimed_spans {
    db::pg_result result;
    std::vector<claimed_segment> segments;
    claim_counts counts;
};

// queen.pop: leases up to claim.partitions spans for the group and returns their segments;
// none when nothing can be handed out.
boost::asio::awaitable<claimed_spans> claim_spans(db::pg_pool& pool, const pop_claim& claim);

// One queue-wide pop of a fused claim: what it asks for besides the shape the call shares.
struct fused_pop {
    std::int64_t batch = 1;
    std::int64_t partitions = 1;
};

// queen.pop_fused: the queue-wide claims of `requests` (queue, group, auto_ack and subscription
// taken from `shape`; its partition must be nullopt) in one call; per request, in order, what
// claim_spans would have returned for it alone. The answers share one database result.
boost::asio::awaitable<std::vector<claimed_spans>> claim_spans_fused(db::pg_pool& pool, const pop_claim& shape,
                                                                     const std::vector<fused_pop>& requests);

// queen.release_lease: gives the lease back at once (a pop whose answer was not written).
boost::asio::awaitable<void> release_lease(db::pg_pool& pool, const std::string& lease_id,
                                           const std::string& consumer_group);

}  // namespace queen::store
