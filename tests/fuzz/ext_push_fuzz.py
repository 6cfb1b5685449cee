#!/usr/bin/env python3
"""Differential fuzzing of queen.push's two paths with random batch arguments.

Feeds the same random calls of queen.push (random keys, counts, transaction ids, trace ids,
producers, payloads, NULL and mismatched arrays, dedup windows and maxSize changes) to a
database on the stock path and to one with queen_ext installed (the C path, queen_ext.push),
and fails when their answers, errors or stored rows differ.

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
                lines.append(gen.setting() if r < 0.05 else gen.expire() if r < 0.08 else gen.call(rnd, step))
            calls += sum(1 for l in lines if l.startswith("SELECT fz_step"))
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
