#pragma once
// Store layer (see store/queues_store.hpp): dead letters (docs/dead-letters.md).
#include "db/pg_pool.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace queen::store {

// Which dead letters an operation covers; an absent value is no condition, the given ones
// combine with AND.
struct dead_letter_filter {
    std::optional<std::string> queue;
    std::optional<std::string> consumer_group;
    std::optional<std::string> partition;   // partition name
    std::optional<std::int64_t> from_us;    // failedAt >= from (Unix µs)
    std::optional<std::int64_t> to_us;      // failedAt <= to
    std::optional<std::string> message_id;  // canonical message id
    std::optional<std::string> scope;       // the tenant scope (sql/procedures/21_tenancy.sql)
};

// One dead letter as listed. The frame's fields are set by SQL where it could decode the
// segment copy; otherwise payload is nullopt and segment holds the copy to decode.
struct dead_letter {
    std::int64_t dead_letter_id = 0;
    std::optional<std::string> queue;
    std::optional<std::string> partition;
    std::int64_t partition_id = 0;
    std::int64_t msg_offset = 0;
    std::optional<std::string> consumer_group;
    std::optional<std::string> transaction_id;
    std::optional<std::string> trace_id;
    std::optional<std::string> producer_sub;
    std::optional<std::string> payload;
    std::optional<std::vector<std::uint8_t>> segment;
    std::optional<std::int64_t> segment_first_offset;
    std::optional<std::string> error_message;
    std::int64_t attempts = 0;
    std::optional<std::string> reason;
    std::optional<std::int64_t> created_at_us;
    std::optional<std::int64_t> failed_at_us;
};

struct dead_letter_page {
    std::int64_t total = 0;  // every match, not only this page
    std::vector<dead_letter> letters;
};

// queen.count_dead_letters joined with queen.list_dead_letters: the total and one page,
// newest failure first.
boost::asio::awaitable<dead_letter_page> list_dead_letters(db::pg_pool& pool, const dead_letter_filter& filter,
                                                           std::int64_t limit, std::int64_t offset);

// queen.count_dead_letters: how many dead letters match.
boost::asio::awaitable<std::int64_t> count_dead_letters(db::pg_pool& pool, const dead_letter_filter& filter);

// A segment copy that SQL could not decode.
struct dead_letter_segment {
    std::int64_t dead_letter_id = 0;
    std::int64_t msg_offset = 0;
    std::optional<std::int64_t> segment_first_offset;
    std::vector<std::uint8_t> segment;
};

// queen.dead_letter_segments: the copies to decode before a requeue, oldest failure first.
boost::asio::awaitable<std::vector<dead_letter_segment>> dead_letter_segments(db::pg_pool& pool,
                                                                              const dead_letter_filter& filter,
                                                                              std::int64_t limit);

// A frame the broker decoded from a dead letter's segment copy.
struct decoded_dead_letter {
    std::int64_t dead_letter_id = 0;
    std::string transaction_id;
    std::optional<std::string> trace_id;
    std::optional<std::string> producer_sub;
    std::string payload;
};

// requeued: pushed back as a new message; merged: removed, folded into a requeued one;
// skipped: stays a dead letter (payload not decodable or partition gone).
enum class requeue_status { requeued, merged, skipped };

// One dead letter the requeue covered; the message fields are set when requeued.
struct requeued_dead_letter {
    std::int64_t dead_letter_id = 0;
    requeue_status status = requeue_status::skipped;
    std::optional<std::string> queue;
    std::optional<std::string> partition;
    std::int64_t partition_id = 0;
    std::int64_t msg_offset = 0;  // of the new message
    std::string previous_id;      // the dead letter's message id
    std::optional<std::string> transaction_id;
    std::optional<std::string> consumer_group;
};

// queen.requeue_dead_letter_set: pushes the matching dead letters (at most limit) back, in
// one statement, using the broker's decodings; one element per dead letter.
boost::asio::awaitable<std::vector<requeued_dead_letter>> requeue_dead_letter_set(
    db::pg_pool& pool, const dead_letter_filter& filter, bool all, std::int64_t limit,
    const std::vector<decoded_dead_letter>& decoded);

// queen.purge_dead_letters: deletes the matching dead letters (every one with all); how many.
boost::asio::awaitable<std::int64_t> purge_dead_letters(db::pg_pool& pool, const dead_letter_filter& filter, bool all);

}  // namespace queen::store
