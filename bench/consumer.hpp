#pragma once
// A consumer connection: pops from the queue-wide route (GET /api/v1/pop/queue/:queue with
// batch=--pop-batch), records every delivery in the ledger, and acks each popped message with
// one POST /api/v1/ack/batch (transactionId + partitionId + leaseId, status completed) unless
// --auto-ack. Stops once the consumers together settled every expected message.
#include "http_client.hpp"
#include "ledger.hpp"
#include "options.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <boost/asio/awaitable.hpp>

namespace queen::bench {

boost::asio::awaitable<void> run_consumer(const options& opts, http_client& client, ledger& book,
                                          run_control& control, consumer_stats& stats);

}  // namespace queen::bench
