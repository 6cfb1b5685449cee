#pragma once
// Stream mode's run (--mode stream; the workers are in stream_stage.hpp): registers the query,
// reads the state already stored (every lane of the source queue, state/get without keys),
// runs producers and stream workers as the other modes run theirs (fixed --messages, or
// --duration-seconds with intervals and a drain), then reads the state again and checks:
//   - every source message committed exactly once, in offset order per partition (the
//     messages of committed cycles, in the ledger), and the source's lag for the group
//     streams.<query> is 0 (GET /api/v1/resources/streams);
//   - the counts balance: messages the committed cycles counted = counts emitted to the sink
//     + state counts after - state counts before;
//   - no cycle failed, no sink push answered duplicate, no popped payload was malformed.
// Reports cycles/s, messages/s, the latencies of pops, state/get, cycles and of a message
// from its push to its cycle, and the load generator's CPU per committed message; as a table,
// or one JSON object with --json (also appended to --json-out).
#include "options.hpp"

namespace queen::bench {

// Runs stream mode; the exit status as queen_bench's (0 ok, 1 failed checks, 2 setup, 3 time).
int run_stream(const options& o);

}  // namespace queen::bench
