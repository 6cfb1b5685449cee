#pragma once
// A producer connection: pushes its share of the messages in batches, one request at a time,
// spreading them over the partitions p0..p{P-1} (message seq goes to partition seq % P).
//
// Payload of each message (padded to --payload-bytes):
//   {"producer":<id>,"seq":<seq>,"sentUs":<wall-clock µs when the request was built>,"pad":"xx…"}
// transactionId is "<run tag>-<seq>", so a retried request is deduplicated by the broker.
// With --rate the batches are sent on a fixed schedule (send_schedule.hpp) from `start`,
// producer i offset by i/producers of its interval, so the producers together offer the rate.
#include "http_client.hpp"
#include "options.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>

namespace queen::bench {

struct producer_plan {
    std::uint32_t id = 0;
    std::uint64_t first_seq = 0;  // this producer sends seqs [first_seq, first_seq + count)
    std::uint64_t count = 0;
};

// Splits `messages` over `producers` contiguous seq ranges.
producer_plan plan_producer(std::uint32_t id, std::uint64_t messages, std::uint64_t producers);

// Pushes the plan's messages into `queue`; returns when all are accepted or the run stops.
boost::asio::awaitable<void> run_producer(const options& opts, producer_plan plan, std::string queue,
                                          std::string run_tag, steady::time_point start, http_client& client,
                                          run_control& control, producer_stats& stats);

}  // namespace queen::bench
