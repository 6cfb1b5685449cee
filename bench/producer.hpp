#pragma once
// A producer connection: pushes its share of the messages in batches, one request at a time,
// spreading them over the partitions p0..p{P-1} (message seq goes to partition seq % P).
//
// Payload of each message (padded to --payload-bytes):
//   {"producer":<id>,"seq":<seq>,"sentUs":<wall-clock µs when the request was built>,"pad":"xx…"}
// transactionId is "<run tag>-<seq>", so a retried request is deduplicated by the broker.
// With --rate the batches are sent on a fixed schedule (send_schedule.hpp) from `start`,
// producer i offset by i/producers of its interval, so the producers together offer the rate.
// Its seqs come from a producer_feed (producer_feed.hpp): a fixed share, or duration mode.
#include "http_client.hpp"
#include "options.hpp"
#include "producer_feed.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <string>

namespace queen::bench {

// Pushes the feed's messages into `queue`; returns when all are accepted or the run stops.
boost::asio::awaitable<void> run_producer(const options& opts, producer_feed feed, std::string queue,
                                          std::string run_tag, steady::time_point start, http_client& client,
                                          run_control& control, producer_stats& stats);

}  // namespace queen::bench
