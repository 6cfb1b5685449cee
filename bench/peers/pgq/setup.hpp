#pragma once
// Queue setup: the pgq extension, the queue, its ticker configuration and the one consumer.
#include "options.hpp"
#include "pg.hpp"

namespace pgq_bench {

struct setup_result {
    bool queue_created = false;       // pgq.create_queue made it now
    bool consumer_registered = false; // pgq.register_consumer registered it now
};

struct setup_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Guarantees on return: the extension exists, the queue exists with ticker_max_lag and
// ticker_max_count as in `o`, and `o.consumer` is registered on it. Every step is idempotent
// (an existing queue keeps its events, a registered consumer keeps its position).
setup_result set_up_queue(connection& db, const options& o);

// For consume runs: throws setup_error (saying what to run first) unless the extension, the
// queue and the consumer's registration already exist; then (re)applies the ticker settings.
void check_queue_ready(connection& db, const options& o);

}  // namespace pgq_bench
