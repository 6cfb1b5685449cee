#pragma once
// Store layer (see store/queues_store.hpp): acknowledgements.
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <utility>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// One ack of a queen.ack call: by offset when known, else by transaction id.
struct ack_request {
    std::int64_t partition_id = 0;
    std::string transaction_id;
    std::optional<std::int64_t> offset;
    std::optional<std::string> lease_id;  // a UUID, or absent: the live lease
    std::string status;                   // completed, failed, retry or dlq
    std::optional<std::string> error;
};

struct ack_outcome {
    std::size_t item = 0;  // 1-based position in the call's requests
    bool success = false;
    std::optional<std::int64_t> offset;
    bool noop = false;
    bool dlq = false;
    bool lease_released = false;
    std::optional<std::string> error;
    std::optional<std::string> queue_name;
};

// queen.ack: applies the acks of one consumer group together (docs/http-api.md, the ack algorithm).
// `scope` is the tenant scope (queen.scoped_partition_ids): a partition outside it is answered
// as unknown. Throws db::pg_error with SQLSTATE QNDEC when an ack by transaction id falls in a
// segment SQL cannot decode.
boost::asio::awaitable<std::vector<ack_outcome>> apply_acks(db::pg_pool& pool, const std::string& group,
                                                            const std::vector<ack_request>& acks,
                                                            const std::optional<std::string>& scope);

// queen.ack_fused: the acks of several requests of one group in one call. Per request, in
// order: its outcomes (item = position in the request) when it was applied, exactly as
// apply_acks alone would have applied it; nullopt when it was left untouched (a cursor it names
// was busy, or an earlier request names the same partition) and must be applied on its own.
// Every request is of the same tenant `scope`.
boost::asio::awaitable<std::vector<std::optional<std::vector<ack_outcome>>>> apply_fused_acks(
    db::pg_pool& pool, const std::string& group, const std::vector<const std::vector<ack_request>*>& requests,
    const std::optional<std::string>& scope);

struct live_span_segment {
    std::int64_t partition_id = 0;
    std::string consumer_group;
    std::int64_t committed = 0;  // the span is (committed, lease_end]
    std::int64_t lease_end = 0;
    std::int64_t first_offset = 0;
    std::string body;  // the segment's bytes
};

// queen.live_span_segments: the undecodable-in-SQL segments overlapping each pair's live span.
boost::asio::awaitable<std::vector<live_span_segment>> live_span_segments(
    db::pg_pool& pool, const std::vector<std::pair<std::int64_t, std::string>>& partition_groups);

}  // namespace queen::store
