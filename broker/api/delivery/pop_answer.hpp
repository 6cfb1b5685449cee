#pragma once
// The message objects of a pop answer (docs/http-api.md, pop). A stored payload is embedded as the
// bytes it was stored with: it is never parsed on the way out, so its depth costs nothing.
#include "render/json_writer.hpp"
#include "segment/segment_codec.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace queen::api {

// What a pop answer's messages share besides their frames.
struct pop_message_scope {
    std::int64_t partition_id = 0;
    std::string_view partition;
    std::string_view lease_id;  // "" with autoAck
    std::string_view consumer_group;
};

// About how long a pop answer over `stored_bytes` of segments gets: a message's envelope is
// about the size of a small stored frame. Reserved up front, so the answer is not copied as
// it grows.
constexpr std::size_t expected_pop_answer_bytes(std::size_t stored_bytes) {
    return 512 + 2 * stored_bytes;
}

// Writes {id, transactionId, traceId, data, createdAt, offset, partitionId, partition,
// leaseId, consumerGroup, producerSub} for the frame at `offset`; `data` is the payload to
// deliver (the stored one, or its opened form for an encrypted queue), copied verbatim.
void write_pop_message(render::json_writer& out, const pop_message_scope& scope, std::int64_t offset,
                       const segment::frame_view& frame, std::string_view data);

}  // namespace queen::api
