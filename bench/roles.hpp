#pragma once
// Who does what: queue and group names of the fan-out and pipeline modes, and which consumer
// connection serves which consumer group or pipeline stage.
#include "options.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace queen::bench {

// "<queue>-g<g>": the name of fan-out group g.
std::string group_name(const options& o, std::size_t g);

// "<queue>-s<k>": the queue of pipeline stage k.
std::string stage_queue(const options& o, std::size_t k);

// The queue the producers push into (stage 0's queue in pipeline mode, else --queue).
std::string producer_queue(const options& o);

// Consumption streams that are verified separately: G with --groups, else 1.
std::size_t stream_count(const options& o);

// What a plain consumer (pop + ack, recorded in a ledger) does.
struct consumer_role {
    std::string queue;
    std::string group;       // empty: queue mode
    std::size_t stream = 0;  // ledger index: the fan-out group, else 0
};

// Role of consumer connection i outside pipeline mode: group i % G with --groups.
consumer_role consumer_role_of(const options& o, std::size_t i);

// Pipeline: the stage served by worker i (i % S, so every stage gets at least one worker).
std::size_t worker_stage(const options& o, std::size_t i);

// Pipeline: the consumer role of a last-stage worker (pops <queue>-s{S-1}, queue mode).
consumer_role final_stage_role(const options& o);

// Pipeline: workers per stage, index = stage.
std::vector<std::size_t> workers_per_stage(const options& o);

// "3/3/3/3": workers per stage as text.
std::string workers_per_stage_text(const options& o);

}  // namespace queen::bench
