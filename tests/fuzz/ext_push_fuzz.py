#!/usr/bin/env python3
"""Differential fuzzing of queen.push's and queen.pop_fused's two paths with random batch arguments.

Feeds the same random calls of queen.push (random keys, counts, transaction ids, trace ids,
producers, payloads, NULL and mismatched arrays, dedup windows and maxSize changes) and of
queen.pop_fused (random groups, batch and partition-count arrays with NULLs, zeros and
mismatched lengths, auto-ack, expired and released leases, tombstones) to a database on the
stock path and to one with queen_ext installed (the C paths, queen_ext.push and
queen_ext.pop_fused), and fails when their answers, errors or stored rows differ.

    ext_push_fuzz.py --host DIR --port N --stock DB --ext DB [--seconds S] [--seed N]

Both databases must hold the broker's schema; the second must have queen_ext. Every round
writes one SQL file of calls, runs it in both databases with psql, and compares what they
recorded and stored (timestamps are compared only as present or absent). Exit status 1 on
the first difference, with the seed and the calls that produced it.
"""
import argparse
import random
import subprocess
import sys
import tempfile
import time

RECORDER = r"""
CREATE TABLE IF NOT EXISTS fz_pushed (round int, step int, item int, status text, partition_id bigint,
                                      msg_offset bigint, has_created_at boolean);
CREATE TABLE IF NOT EXISTS fz_refused (round int, step int, sqlstate text, message text);
CREATE OR REPLACE FUNCTION fz_step(r int, s int, queues text[], parts text[], counts int[],
                                   txids text[], traces uuid[], producers text[], payloads text[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fz_pushed
    SELECT r, s, p.item, p.status, p.partition_id, p.msg_offset, p.created_at IS NOT NULL
      FROM queen.push(queues, parts, counts, txids, traces, producers, payloads) p;
EXCEPTION WHEN OTHERS THEN
    INSERT INTO fz_refused VALUES (r, s, SQLSTATE, SQLERRM);
END $$;
CREATE TABLE IF NOT EXISTS fz_popped (round int, step int, request int, partition_id bigint, leased boolean,
                                      span_start bigint, span_end bigint, seg_first bigint, segments bigint,
                                      skip_offsets bigint[], leases_expired int, redelivered bigint,
                                      lease_dead_letters int, expired_dead_letters bigint);
CREATE OR REPLACE FUNCTION fz_pop(r int, s int, queue text, grp text, batches int[], parts int[], auto_ack boolean)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fz_popped
    SELECT r, s, f.request, f.partition_id, f.lease_id IS NOT NULL, f.span_start, f.span_end, min(f.seg_first),
           count(f.seg_body), f.skip_offsets, f.leases_expired, f.redelivered, f.lease_dead_letters,
           f.expired_dead_letters
      FROM queen.pop_fused(queue, grp, batches, parts, auto_ack, true, NULL) f
     GROUP BY 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14;
EXCEPTION WHEN OTHERS THEN
    INSERT INTO fz_refused VALUES (r, s, SQLSTATE, SQLERRM);
END $$;
"""

# What both databases must agree on after a round.
STATE = r"""
SELECT 'answer', f.round, f.step, f.item, f.status, q.name, p.name, f.msg_offset, f.has_created_at
  FROM fz_pushed f LEFT JOIN queen.log_partitions p ON p.id = f.partition_id
  LEFT JOIN queen.queues q ON q.id = p.queue_id ORDER BY 2, 3, 4;
SELECT 'refused', round, step, sqlstate, message FROM fz_refused ORDER BY 2, 3;
SELECT 'message', m.queue, m.partition, m."offset", m.transaction_id, m.trace_id, m.producer_sub,
       m.payload_text FROM queen.messages m ORDER BY 2, 3, 4;
SELECT 'segment', q.name, p.name, s.first_offset, s.last_offset
  FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id
  JOIN queen.queues q ON q.id = p.queue_id ORDER BY 2, 3, 4;
SELECT 'dedup', q.name, p.name, d.transaction_id, d.msg_offset
  FROM queen.log_dedup d JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = p.queue_id ORDER BY 2, 3, 4;
SELECT 'partition', q.name, p.name FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
 ORDER BY 2, 3;
SELECT 'popped', f.round, f.step, f.request, q.name, p.name, f.leased, f.span_start, f.span_end, f.seg_first,
       f.segments, f.skip_offsets, f.leases_expired, f.redelivered, f.lease_dead_letters, f.expired_dead_letters
  FROM fz_popped f LEFT JOIN queen.log_partitions p ON p.id = f.partition_id
  LEFT JOIN queen.queues q ON q.id = p.queue_id ORDER BY 2, 3, 4, 5, 6;
SELECT 'cursor', q.name, p.name, lc.consumer_group, lc.committed, lc.lease_start, lc.lease_end, lc.lease_id IS NOT NULL,
       lc.lease_expires_at > now(), lc.delivered_to, lc.attempts, lc.attempts_offset, lc.lease_counted
  FROM queen.log_consumers lc JOIN queen.log_partitions p ON p.id = lc.partition_id
  JOIN queen.queues q ON q.id = p.queue_id
 WHERE lc.version = (SELECT max(l2.version) FROM queen.log_consumers l2
                      WHERE l2.partition_id = lc.partition_id AND l2.consumer_group = lc.consumer_group)
 ORDER BY 2, 3, 4;
SELECT 'dead letter', q.name, p.name, d.consumer_group, d.msg_offset
  FROM queen.dead_letters d JOIN queen.log_partitions p ON p.id = d.partition_id
  JOIN queen.queues q ON q.id = p.queue_id ORDER BY 2, 3, 4, 5;
"""


def lit(v):
    """A SQL literal of a Python value (None, str, int)."""
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + v.replace("'", "''") + "'"


def arr(values, typ):
    """A SQL array literal, or NULL for None."""
    if values is None:
        return "NULL::%s[]" % typ
    return "ARRAY[%s]::%s[]" % (", ".join(lit(v) for v in values), typ)


class Gen:
    """Random push calls over a small pool of names, so that keys and ids collide often."""

    def __init__(self, rng):
        self.r = rng

    def pick(self, choices):
        return self.r.choice(choices)

    def name(self, kind):
        r = self.r.random()
        if r < 0.9:
            return "%s%d" % (kind, self.r.randrange(3 if kind == "q" else 5))
        if r < 0.95:
            return kind + "-ünï"
        return kind + "-" + "x" * self.r.randrange(1, 40)

    def txid(self):
        r = self.r.random()
        if r < 0.85:
            return "t%d" % self.r.randrange(12)
        if r < 0.9:
            return None
        if r < 0.93:
            return ""
        if r < 0.96:
            return "é" * 128  # 256 bytes in UTF-8
        return "t-" + "y" * self.r.randrange(1, 250)

    def producer(self):
        return "p" * 1025 if self.r.random() < 0.05 else self.pick([None, "", "prod", "ünï"])

    def trace(self):
        if self.r.random() < 0.7:
            return None
        return "00000000-0000-0000-0000-%012d" % self.r.randrange(3)

    def payload(self):
        if self.r.random() < 0.03:
            return self.pick([None, '"' + "z" * self.r.randrange(0, 3000) + '"'])
        return self.pick(['{"a":1}', '"\\u0000 and \\\\"', "[1,2]", "null", "3", '{"é":"✓"}', "true", "{}"])

    def call(self, rnd, step):
        nkeys = self.r.randrange(0, 6)
        queues = [self.name("q") for _ in range(nkeys)]
        parts = [self.name("p") for _ in range(nkeys)]
        counts = [self.r.randrange(0, 6) for _ in range(nkeys)]
        if nkeys and self.r.random() < 0.03:
            counts[self.r.randrange(nkeys)] = self.pick([-1, None])
        n = sum(c for c in counts if c is not None and c > 0)
        if self.r.random() < 0.03:
            n += self.pick([-1, 1])
        n = max(n, 0)
        txids = [self.txid() if self.r.random() < 0.05 else "t%d" % self.r.randrange(12) for _ in range(n)]
        traces = [self.trace() for _ in range(n)]
        producers = [self.producer() if self.r.random() < 0.1 else None for _ in range(n)]
        payloads = [self.payload() for _ in range(n)]
        arrays = [queues, parts, counts, txids, traces, producers, payloads]
        if self.r.random() < 0.03:
            arrays[self.r.randrange(7)] = None
        if self.r.random() < 0.03:
            k = self.r.randrange(7)
            if arrays[k] is not None:
                arrays[k] = arrays[k] + arrays[k][:1] if arrays[k] else [None]
        types = ["text", "text", "integer", "text", "uuid", "text", "text"]
        return "SELECT fz_step(%d, %d, %s);" % (rnd, step, ", ".join(arr(a, t) for a, t in zip(arrays, types)))

    def setting(self):
        q = "q%d" % self.r.randrange(3)
        if self.r.random() < 0.5:
            return "UPDATE queen.queues SET dedup_window_seconds = %d WHERE name = %s;" % (
                self.pick([0, 3600]), lit(q))
        return "UPDATE queen.queues SET max_size = %d WHERE name = %s;" % (self.pick([0, 0, 0, 0, 40, 500]), lit(q))

    def counts(self):
        """A batch or partition-count array: mostly valid, sometimes NULL, 0 or -1 inside."""
        n = self.r.randrange(1, 4) if self.r.random() < 0.95 else 0
        return [self.pick([None, 0, -1]) if self.r.random() < 0.02 else self.r.randrange(1, 9) for _ in range(n)]

    def pop(self, rnd, step):
        batches = self.counts()
        parts = self.counts()
        if self.r.random() < 0.9:
            parts = (parts + [1] * len(batches))[:len(batches)]
        return "SELECT fz_pop(%d, %d, %s, %s, %s, %s, %s);" % (
            rnd, step, lit(self.name("q")), lit(self.pick(["g0", "g1", "__QUEUE_MODE__"])),
            arr(batches, "integer"), arr(parts, "integer"), self.pick(["true", "false", "false"]))

    def disturb(self):
        """Something queen.pop_stepwise handles: expired or released leases, a tombstone."""
        r = self.r.random()
        if r < 0.4:
            return "UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second' WHERE lease_id IS NOT NULL;"
        if r < 0.7:
            return ("SELECT count(queen.release_lease(lease_id, consumer_group)) FROM queen.log_consumers "
                    "WHERE lease_id IS NOT NULL AND consumer_group = %s;" % lit(self.pick(["g0", "g1", "__QUEUE_MODE__"])))
        return ("INSERT INTO queen.message_tombstones (partition_id, msg_offset) "
                "SELECT p.id, %d FROM queen.log_partitions p WHERE p.name = %s ON CONFLICT DO NOTHING;"
                % (self.r.randrange(1, 12), lit(self.name("p"))))

    def expire(self):
        return ("UPDATE queen.log_dedup SET created_at = created_at - interval '2 days' "
                "WHERE transaction_id = %s;" % lit("t%d" % self.r.randrange(12)))


def psql(args, db, sql_file):
    cmd = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", args.host, "-p", str(args.port),
           "-U", args.user, "-d", db, "-f", sql_file]
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          env={"PGOPTIONS": "-c client_min_messages=warning", "PATH": "/usr/bin:/bin"}).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=5432)
    ap.add_argument("--user", default="postgres")
    ap.add_argument("--stock", required=True)
    ap.add_argument("--ext", required=True)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    gen = Gen(rng)
    deadline = time.monotonic() + args.seconds
    calls = 0
    with tempfile.TemporaryDirectory(prefix="ext-push-fuzz-") as tmp:
        setup = tmp + "/setup.sql"
        with open(setup, "w") as f:
            f.write(RECORDER)
        state = tmp + "/state.sql"
        with open(state, "w") as f:
            f.write(STATE)
        for db in (args.stock, args.ext):
            psql(args, db, setup)
        rnd = 0
        while time.monotonic() < deadline:
            rnd += 1
            lines = []
            for step in range(20):
                r = rng.random()
                lines.append(gen.setting() if r < 0.05 else gen.expire() if r < 0.08 else
                             gen.disturb() if r < 0.095 else gen.pop(rnd, step) if r < 0.4 else gen.call(rnd, step))
            calls += sum(1 for l in lines if l.startswith(("SELECT fz_step", "SELECT fz_pop")))
            batch = tmp + "/round.sql"
            with open(batch, "w") as f:
                f.write("\n".join(lines) + "\n")
            for db in (args.stock, args.ext):
                psql(args, db, batch)
            a, b = psql(args, args.stock, state), psql(args, args.ext, state)
            if a != b:
                la, lb = a.splitlines(), b.splitlines()
                diff = [("stock: " + x, "ext:   " + y) for x, y in zip(la, lb) if x != y][:10]
                print("ext_push_fuzz: the paths differ after round %d (seed %d)" % (rnd, seed), file=sys.stderr)
                for x, y in diff:
                    print(x + "\n" + y, file=sys.stderr)
                if len(la) != len(lb):
                    print("rows: stock %d, ext %d" % (len(la), len(lb)), file=sys.stderr)
                print("calls of the round:\n" + "\n".join(lines), file=sys.stderr)
                return 1
    print("ext_push_fuzz: %d calls in %d rounds, both paths agree (seed %d)" % (calls, rnd, seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
