#pragma once
// The one consumer thread: PgQ's batch loop (next_batch, get_batch_events, finish_batch, one
// transaction per iteration) until every expected event was received.
#include "options.hpp"
#include "run_state.hpp"
#include "tally.hpp"

#include <cstdint>
#include <optional>

namespace pgq_bench {

struct consumer_stats {
    std::uint64_t batches = 0;        // finished batches
    std::uint64_t empty_batches = 0;  // of which held no event (ticks of an idle queue)
    std::uint64_t empty_polls = 0;    // next_batch answered NULL (no new tick yet)
    std::uint64_t events = 0;         // events received in finished batches
    std::optional<steady::time_point> first_call;    // first next_batch sent
    std::optional<steady::time_point> last_finish;   // last batch's COMMIT answered
    std::optional<steady::time_point> complete_at;   // COMMIT of the batch completing [0, N)
};

// Connects, waits at the start gate, then consumes until `book` is complete or the run stops;
// an SQL error stops the run (stop_reason::fatal). Never throws.
void run_consumer(const options& o, run_state& state, tally& book, consumer_stats& st);

}  // namespace pgq_bench
