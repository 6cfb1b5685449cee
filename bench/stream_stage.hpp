#pragma once
// Stream mode (--mode stream): the client side of a streaming query, as Queen's streaming SDK
// runs one (docs/streams.md, "The protocol a client follows"): map -> tumbling count -> sink.
//
// Producers push {"key":"k<j>","ts":<event ms>,"producer":i,"seq":s,"sentUs":us} into the
// source queue (--queue), message seq into partition p{seq % P} with key k{(seq / P) % K}
// (K = --stream-keys) and ts the wall clock when the batch was built. Workers pop the source
// as the consumer group streams.<query> (--pop-batch, the queue-wide route, partitions=1 as the
// SDK pops) and, per source partition of the answer (a lane batch):
//   1. POST /streams/v1/state/get with `keys`: the keys the batch touches. The state of a key
//      is one row, its open windows: {"windows":[[windowStart, count], ...]};
//   2. add one per message to (key, window of --window-ms); every window whose end is at or
//      before the batch's max event time minus --lateness-ms has closed: it is emitted as one
//      sink push {"key","windowStart","windowEnd","count"} into <queue>-sink (same partition
//      name, no transactionId: the broker derives one) and leaves the state; a key left
//      without windows is deleted, the others are upserted;
//   3. one POST /streams/v1/cycle with those state ops and sink pushes and the ack of the
//      batch's last message (its transactionId and leaseId, release_lease true).
// A cycle answering success:false changed nothing: it is counted with its error, the lease is
// released (ack/batch status retry on the batch's first message) and the span popped again.
// Transport errors, 5xx and 429 resend the same request.
#include "http_client.hpp"
#include "ledger.hpp"
#include "options.hpp"
#include "pop_answer.hpp"
#include "producer_feed.hpp"
#include "run_control.hpp"
#include "stats.hpp"

#include <utility>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace queen::bench {

// The names of a stream run and its registered query.
struct stream_setup {
    std::string query;        // the query's name: --queue
    std::string source;       // the source queue: --queue
    std::string sink;         // <queue>-sink
    std::string group;        // streams.<query>
    std::string config_hash;  // names the computation and its settings
    std::string query_id;     // from POST /streams/v1/queries
};

stream_setup make_stream_setup(const options& o);

// One stream worker's counters and records (no sharing during the run; merged at the end).
struct stream_stats {
    latency_recorder pop, pop_empty;                       // pops with messages / 204
    latency_recorder state_get;                            // state/get requests answered 200
    latency_recorder cycle;                                // cycles answered (success or not)
    latency_recorder e2e;                                  // producer's send -> its cycle committed, per message
    std::uint64_t pops = 0, empty_pops = 0, messages = 0;  // messages popped (redeliveries too)
    std::uint64_t failed_requests = 0, retries = 0, bytes_received = 0;
    std::uint64_t malformed = 0;     // popped payloads without key and ts (not counted)
    std::uint64_t lane_batches = 0;  // one per source partition of a pop: one state/get and one cycle
    std::uint64_t state_gets = 0, state_rows_read = 0;
    std::uint64_t cycles = 0;         // answered success:true
    std::uint64_t failed_cycles = 0;  // answered success:false (nothing applied)
    std::uint64_t resent_cycles = 0;  // sent again after a transport error, 5xx or 429
    std::uint64_t lost_answers = 0;   // a resent cycle that then failed: the first may have committed
    std::uint64_t lease_releases = 0, release_failures = 0;
    std::uint64_t upserts = 0, deletes = 0;  // state ops of committed cycles
    std::uint64_t windows_emitted = 0;       // sink pushes of committed cycles
    std::uint64_t counts_emitted = 0;        // the sum of their counts
    std::uint64_t counted = 0;               // messages committed cycles added to state
    std::uint64_t committed = 0;             // messages acked by committed cycles
    std::uint64_t sink_queued = 0, sink_duplicates = 0, sink_other = 0;
    std::map<std::string, std::uint64_t> failures;  // error of a failed cycle -> count
    time_span span;                                 // first pop sent .. last cycle committed
    std::vector<delivery> deliveries;               // the messages of committed cycles
    void merge(stream_stats&& o);
};

// Pushes the feed's messages into the source queue; returns when all are accepted or the run stops.
boost::asio::awaitable<void> run_stream_producer(const options& opts, producer_feed feed, std::string queue,
                                                 std::string run_tag, http_client& client, run_control& control,
                                                 producer_stats& stats);

// Pops and cycles until `book` has every expected message committed or the run stops; the
// worker committing the last one stops the run.
boost::asio::awaitable<void> run_stream_worker(const options& opts, const stream_setup& setup, http_client& client,
                                               ledger& book, run_control& control, stream_stats& stats);

// ---- the computation, without I/O

// The open windows of one key: window start -> count.
using key_windows = std::map<std::int64_t, std::uint64_t>;

// One message of a lane batch as the count reads it.
struct stream_event {
    std::string key;
    std::int64_t ts = 0;
};

// Reads key and ts of a popped payload (JSON text); false when it has neither.
bool read_stream_event(const std::string& data, stream_event& out);

// The state/get answer {success, rows:[{key, value:{windows:[[start, count]...]}}]} into
// `state`; false when it is not one. `rows` is set to the rows read.
bool read_state_rows(const std::string& body, std::map<std::string, key_windows>& state, std::uint64_t& rows);

// The state ops and sink pushes of one lane batch, and what they do.
struct lane_plan {
    std::string state_ops;   // JSON array
    std::string push_items;  // JSON array
    std::uint64_t upserts = 0, deletes = 0, windows = 0, counts = 0, counted = 0;
};

// Adds `events` to `state` (the stored windows of the keys they touch, changed in place), then
// plans the cycle: windows ending at or before max ts - lateness are pushed to `sink` on
// `partition` and leave the state; keys left empty are deleted, the others upserted.
lane_plan plan_lane(const options& o, const std::string& sink, const std::string& partition,
                    std::map<std::string, key_windows>& state, const std::vector<stream_event>& events);

// {"windows":[[start,count],...]}: the stored value of a key.
std::string windows_value(const key_windows& w);

}  // namespace queen::bench
