#pragma once
// A consumer connection: pops from the queue-wide route (GET /api/v1/pop/queue/:queue with
// batch=--pop-batch) of its role's queue, as its role's group, records every delivery in its
// stream's ledger, and acks each popped message with one POST /api/v1/ack/batch
// (transactionId + partitionId + leaseId, status completed) unless --auto-ack. Stops once its
// stream is complete; the consumer completing the last stream stops the run.
#include "http_client.hpp"
#include "options.hpp"
#include "roles.hpp"
#include "run_control.hpp"
#include "stats.hpp"
#include "streams.hpp"

#include <boost/asio/awaitable.hpp>

#include <string>

namespace queen::bench {

// "/api/v1/pop/queue/<queue>?batch=…[&wait…][&consumerGroup…][&autoAck…][&partitions…]".
std::string pop_target(const options& o, const std::string& queue, const std::string& group, bool auto_ack);

// Pops and settles until the role's stream has every expected message or the run stops.
boost::asio::awaitable<void> run_consumer(const options& opts, consumer_role role, http_client& client,
                                          stream_set& streams, run_control& control, consumer_stats& stats);

}  // namespace queen::bench
