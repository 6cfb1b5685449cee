// The --help text of queen_bench.
#include "options.hpp"

namespace queen::bench {

// Every option with its default and meaning; kept in step with parse_options.
std::string usage_text() {
    return R"(queen_bench: load generator for the queen broker (push, pop, ack over HTTP/1.1)

Usage: queen_bench [options]
  --url URL              broker base URL (default http://127.0.0.1:6632)
  --header NAME:VALUE    a header sent with every request, e.g. X-Tenant:bench (repeatable)
  --mode push|consume|both|pipeline|stream
                         push: produce only; consume: pop+ack an existing backlog of
                         --messages messages; both: produce and consume concurrently (default);
                         pipeline: produce into <queue>-s0 and forward stage by stage (below);
                         stream: a streaming query, map -> tumbling count -> sink (below)
  --messages N           messages to push / consume (default 100000)
  --partitions P         partitions p0..p{P-1} the producers spread over (default 100)
  --connections C        keep-alive HTTP connections (default 16); in `both` and `pipeline`
                         mode split half producers, half consumers
  --producers N          producer connections (overrides the split)
  --consumers N          consumer connections (overrides the split); in pipeline mode the
                         stage workers, split evenly over the stages (worker i: stage i % S)
  --push-batch B         items per push request (default 100)
  --pop-batch B          batch per pop request (default 100)
  --pop-partitions K     `partitions` parameter of the queue-wide pop (default 1)
  --payload-bytes N      size of each message's JSON payload (default 200)
  --queue NAME           queue name (default: a fresh unique name per run)
  --consumer-group NAME  consume as this group (default: queue mode)
  --groups G             fan-out: the consumers are split evenly over G consumer groups
                         <queue>-g0..<queue>-g{G-1} (consumer i: group i % G; needs
                         consumers >= G), each group must receive every message exactly once
                         and in order (verified per group); consume throughput counts
                         deliveries (N x G). Groups start from the beginning
                         (subscriptionMode=all). Default 0: queue mode or --consumer-group
  --rate R               offered push rate in messages/s over all producers (default 0: as fast
                         as possible). Each producer sends a --push-batch batch every
                         push-batch x producers / R seconds on a fixed schedule from the
                         start (producers staggered evenly); a producer more than one batch
                         behind its schedule moves the schedule (a "slip") instead of
                         bursting, so at most one batch is sent late back-to-back
  --stages S             pipeline mode: stages (queues <queue>-s0..s{S-1}, default 4). The
                         producers push into s0 (partition p{seq % P}); the workers of stage
                         k < S-1 pop s{k} (queue mode) and, per popped batch, send ONE
                         POST /api/v1/transaction that pushes every message (same payload,
                         same partition, transactionId <original>-s{k+1}) into s{k+1} and acks
                         the popped messages; the last stage pops s{S-1} and acks with
                         /api/v1/ack/batch. A transaction answering success:false is counted,
                         its lease released (ack status retry) and the span popped again.
                         Verified at the last stage: every message once, in order
  --inject-tx-failures K pipeline mode: every K-th forward transaction of each worker carries
                         an extra ack the broker cannot resolve, so it is rolled back
                         (tests the retry path; default 0: off)
  --stream-keys K        stream mode: producers push {"key":"k<j>","ts":<event ms>,…} into --queue
                         (key j = (seq / P) % K, default 4); workers register the query <queue>,
                         pop as the group streams.<queue> and, per source partition of a pop,
                         read the state of the batch's keys (state/get with keys), count per
                         (key, window), and send ONE POST /streams/v1/cycle: the windows that
                         closed pushed to <queue>-sink and removed from state, the rest upserted,
                         the batch's last message acked. Verified: every message committed once
                         and in order, emitted counts + state = messages counted, the source lag
                         0, no failed cycle (bench/stream_stage.hpp)
  --window-ms MS         stream mode: the tumbling window (default 1000)
  --lateness-ms MS       stream mode: a window closes once its end is at or before the batch's
                         max event time minus MS (default 500)
  --wait                 long-poll pops (wait=true)
  --wait-timeout-ms MS   long-poll timeout (default 2000)
  --idle-sleep-ms MS     pause after an empty pop without --wait (default 10)
  --auto-ack             pop with autoAck=true, no ack requests (not in pipeline mode)
  --explicit-ack         ack each message with POST /api/v1/ack/batch (default)
  --dedup                client-chosen transactionIds (always on; accepted for clarity)
  --max-seconds S        overall time limit; on expiry report and exit 3 (default 600; in
                         duration mode --duration-seconds + --drain-seconds)
  --duration-seconds N   duration mode (--mode both or stream, not with --groups): the producers push
                         for N seconds instead of a fixed count; --messages becomes the most
                         messages they may send (default 50000000). No producer starts a batch
                         after N s; batches in flight finish, with their retries. The consumers
                         then drain what remains: the run ends when every message sent has been
                         acked, so the verification covers all of them (none missing or
                         duplicated, FIFO per partition). Every --interval-seconds one record:
                         messages pushed (answered) and consumed (first deliveries acked) in the
                         interval and per second, the backlog and the load average; a JSON line
                         {"type":"interval",...} on stdout with --json (else a text line), also
                         appended to --json-out. The result repeats them under "duration", with
                         the median / min / max consume rate of the full intervals and the drain
                         time after the deadline
  --interval-seconds S   duration mode: length of an interval (default 60; the last one is
                         shorter when N is not a multiple of S)
  --drain-seconds D      duration mode: time the consumers get after the deadline (default 300);
                         when it runs out the run stops at the time limit (exit 3)
  --stall-seconds S      stop (report, exit 3) when the consumers (and pipeline stages) make
                         no progress for S seconds, e.g. a partition that is never handed
                         out (default 60; 0 waits for --max-seconds)
  --request-timeout S    per-request timeout (default 60, plus the long-poll timeout)
  --threads N            client I/O threads (default 1)
  --label TEXT           free text copied into the report
  --json                 print the result as one JSON object instead of the table
  --json-out FILE        also append the JSON result (one line) to FILE
  --quiet                no progress lines on stderr
Exit status: 0 all good; 1 messages lost, duplicated or out of order, or request errors;
2 bad options or broker unreachable; 3 time limit reached or consumption stalled.
)";
}

}  // namespace queen::bench
