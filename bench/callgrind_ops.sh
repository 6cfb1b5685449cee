#!/usr/bin/env bash
# callgrind_ops.sh SOURCE_TREE MODE: instructions (callgrind Ir) one call of queen.push, queen.pop
# and queen.ack costs inside a PostgreSQL 15 backend, driven by pgbench (one client).
#   MODE: stock (PL/pgSQL only) or ext (CREATE EXTENSION queen_ext before the schema).
#   Env: CGOPS_CALLS (default 2000) calls per measured run, CGOPS_WARMUP (default 100) calls per
#   warm-up run, CGOPS_DIR (default: a new /tmp/cgops-MODE-XXXXXX) work directory,
#   CGOPS_PROTOCOL (default simple) pgbench's query mode: simple (the values in the text),
#   extended (unnamed statements with parameters, as the broker sends them with
#   QUEEN_DB_PREPARED_STATEMENTS=false) or prepared (as the broker sends them by default).
# Setup (normal server): a fresh cluster, SOURCE_TREE's schema (scripts/lib/pg_suite.sh
# write_schema), queue q with partitions p0..p99 for pushes; queue w (leaseTime 3600) with 200
# one-message segments in each of p0..p99 (transaction id pJ-OFFSET), groups g and c0..cK each
# with offset 1 of every partition popped and acked; VACUUM ANALYZE. Then the postmaster runs
# under callgrind and each operation is run twice, WARMUP and CALLS transactions, each run in
# its own backend; Ir per call = (Ir(CALLS run) - Ir(WARMUP run)) / (CALLS - WARMUP).
#   push:    one message into q, partition random(0,99).
#   pop:     queen.pop(w, pJ, cK, batch 1, 1 partition, autoAck off): one (group, partition)
#            pair per call, never leased before, so every pop leases one message.
#   ack:     queen.ack(cK, [pid], [pJ-2], offset NULL, lease NULL, completed) of what the pop
#            runs leased (by transaction id, in the live lease).
#   pop+ack: one script: pop on w, pJ (random), group g, then ack of that message with the
#            popped partition id, its transaction id and lease id; each its own transaction
#            (simple protocol only).
# Results: the table on stdout and in CGOPS_DIR/results.txt (each run's total Ir too).
set -euo pipefail

usage() { echo "usage: $0 SOURCE_TREE stock|ext" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
SRC=$(cd "$1" && pwd)
MODE=$2
PROTOCOL=${CGOPS_PROTOCOL:-simple}
[[ $PROTOCOL == simple || $PROTOCOL == extended || $PROTOCOL == prepared ]] || usage
[[ $MODE == stock || $MODE == ext ]] || usage
CALLS=${CGOPS_CALLS:-2000}
WARMUP=${CGOPS_WARMUP:-100}
((CALLS > WARMUP && WARMUP >= 10)) || { echo "callgrind_ops: need CGOPS_CALLS > CGOPS_WARMUP >= 10" >&2; exit 2; }

BIN=$(pg_config --bindir)
for t in "$BIN/initdb" "$BIN/pg_ctl" "$BIN/postgres" "$(command -v valgrind || true)" \
  "$(command -v pgbench || true)" "$(command -v psql || true)"; do
  [[ -n "$t" && -x "$t" ]] || { echo "callgrind_ops: missing tool ($t): need postgresql-15, valgrind, pgbench, psql" >&2; exit 2; }
done
if [[ $MODE == ext && ! -e "$(pg_config --pkglibdir)/queen_ext.so" ]]; then
  echo "callgrind_ops: queen_ext.so not in $(pg_config --pkglibdir): install it (make -f Makefile.pgxs install)" >&2
  exit 2
fi
# shellcheck source=/dev/null
source "$SRC/scripts/lib/pg_suite.sh"  # write_schema

W=${CGOPS_DIR:-$(mktemp -d "/tmp/cgops-$MODE-XXXXXX")}
mkdir -p "$W/cg"
chown -R postgres: "$W"
DB=cgops
GROUPS_C=$(((WARMUP + CALLS + 99) / 100))  # groups c0..c(GROUPS_C-1): one pop per (group, partition)
SEED=1
PGOPTS=(-c listen_addresses= -c "unix_socket_directories=$W" -c port=5432 -c fsync=off
  -c autovacuum=off -c huge_pages=off -c checkpoint_timeout=1d -c max_wal_size=20GB
  -c log_connections=on -c "log_line_prefix=%p %a ")
PSQL=(psql -h "$W" -U postgres -X -q -v ON_ERROR_STOP=1)
pg() { runuser -u postgres -- "$@"; }
started=
cleanup() {
  if [[ -n $started && -f "$W/data/postmaster.pid" ]]; then
    pg "$BIN/pg_ctl" -D "$W/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
say() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
t0=$(date +%s)

say "work dir $W; $SRC ($(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')), $MODE, calls $WARMUP and $CALLS"
pg "$BIN/initdb" -D "$W/data" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$W/initdb.log"
pg "$BIN/pg_ctl" -D "$W/data" -l "$W/postgres-setup.log" -w -t 120 -o "$(printf "%q " "${PGOPTS[@]}")" start >/dev/null
started=1
"${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB"
if [[ $MODE == ext ]]; then "${PSQL[@]}" -d $DB -c "CREATE EXTENSION queen_ext"; fi
write_schema "$SRC" "$W/schema.sql"
"${PSQL[@]}" -d $DB -f "$W/schema.sql" >"$W/schema.log" 2>&1 || { tail -5 "$W/schema.log" >&2; exit 1; }

say "setup: queues, 20000 messages, $((GROUPS_C + 1)) groups"
"${PSQL[@]}" -d $DB >"$W/setup.log" <<SQL
-- q: the push queue, its 100 partitions created.
SELECT count(*) FROM queen.push(array_fill('q'::text, ARRAY[100]), ARRAY(SELECT 'p' || j FROM generate_series(0, 99) j),
    array_fill(1, ARRAY[100]), ARRAY(SELECT 'init-' || j FROM generate_series(0, 99) j),
    array_fill(NULL::uuid, ARRAY[100]), array_fill(NULL::text, ARRAY[100]), array_fill('{"a":1}'::text, ARRAY[100]));
-- w: offset k of pJ is transaction id pJ-k; partitions created in order p0..p99 (ids p0 + J),
-- then 199 calls, each one message into every partition.
SELECT queue_id FROM queen.configure('w', NULL, NULL, '{"leaseTime": 3600}');
DO \$\$
BEGIN
    FOR j IN 0..99 LOOP
        PERFORM queen.push(ARRAY['w'], ARRAY['p' || j], ARRAY[1], ARRAY['p' || j || '-1'],
            ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['{"a":1}']);
        COMMIT;
    END LOOP;
    FOR k IN 2..200 LOOP
        PERFORM queen.push(array_fill('w'::text, ARRAY[100]), ARRAY(SELECT 'p' || j FROM generate_series(0, 99) j),
            array_fill(1, ARRAY[100]), ARRAY(SELECT 'p' || j || '-' || k FROM generate_series(0, 99) j),
            array_fill(NULL::uuid, ARRAY[100]), array_fill(NULL::text, ARRAY[100]), array_fill('{"a":1}'::text, ARRAY[100]));
        COMMIT;
    END LOOP;
END
\$\$;
DO \$\$
DECLARE
    n bigint;
BEGIN
    SELECT count(*) INTO n FROM queen.log_dedup d JOIN queen.log_partitions p ON p.id = d.partition_id
      JOIN queen.queues qu ON qu.id = p.queue_id
     WHERE qu.name = 'w' AND d.transaction_id = p.name || '-' || d.msg_offset;
    IF n <> 20000 THEN RAISE EXCEPTION 'setup: % of 20000 messages at their expected offsets', n; END IF;
    SELECT count(*) INTO n FROM queen.log_partitions p JOIN queen.queues qu ON qu.id = p.queue_id
     WHERE qu.name = 'w' AND p.name ~ '^p[0-9]+$'
       AND p.id = (SELECT min(p2.id) FROM queen.log_partitions p2 WHERE p2.queue_id = p.queue_id AND p2.name = 'p0')
                  + substr(p.name, 2)::int;
    IF n <> 100 THEN RAISE EXCEPTION 'setup: partition ids of w are not p0 + J'; END IF;
END
\$\$;
-- Groups g and c0..: each registered and with offset 1 of every partition popped and acked.
DO \$\$
DECLARE
    grp text;
    r record;
    a record;
BEGIN
    FOREACH grp IN ARRAY ARRAY['g'] || ARRAY(SELECT 'c' || k FROM generate_series(0, $GROUPS_C - 1) k) LOOP
        FOR j IN 0..99 LOOP
            SELECT * INTO STRICT r FROM queen.pop('w', 'p' || j, grp, 1, 1, false, true, NULL) WHERE seg_body IS NOT NULL;
            COMMIT;
            SELECT * INTO STRICT a FROM queen.ack(grp, ARRAY[r.partition_id], ARRAY['p' || j || '-' || r.span_end],
                ARRAY[NULL]::bigint[], ARRAY[r.lease_id], ARRAY['completed'], ARRAY[NULL]::text[]);
            IF r.span_end <> 1 OR NOT a.success OR a.noop THEN
                RAISE EXCEPTION 'setup: group % partition p%: pop to % , ack %', grp, j, r.span_end, a;
            END IF;
            COMMIT;
        END LOOP;
    END LOOP;
END
\$\$;
VACUUM ANALYZE;
SQL
BASE=$("${PSQL[@]}" -d $DB -At -c "SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                                   WHERE q.name = 'w' AND p.name = 'p0'")
pg "$BIN/pg_ctl" -D "$W/data" -m fast -w -t 120 stop >/dev/null

cat >"$W/push.sql" <<'EOF'
\set j random(0, 99)
SELECT * FROM queen.push(ARRAY['q'], ARRAY['p' || :j], ARRAY[1], ARRAY[gen_random_uuid()::text], ARRAY[NULL]::uuid[], ARRAY[NULL]::text[], ARRAY['{"a":1}']);
EOF
cat >"$W/pop.sql" <<'EOF'
\set g :i / 100
\set j :i % 100
SELECT partition_id AS pid, span_end AS off FROM queen.pop('w', 'p' || :j, 'c' || :g, 1, 1, false, true, NULL) WHERE seg_body IS NOT NULL AND span_end = 2 \gset
\set i :i + 1
EOF
cat >"$W/ack.sql" <<'EOF'
\set g :i / 100
\set j :i % 100
\set pid :base + :j
SELECT success FROM queen.ack('c' || :g, ARRAY[:pid]::bigint[], ARRAY['p' || :j || '-2'], ARRAY[NULL]::bigint[], ARRAY[NULL]::uuid[], ARRAY['completed'], ARRAY[NULL]::text[]) WHERE success AND NOT noop AND msg_offset = 2 \gset
\set i :i + 1
EOF
cat >"$W/popack.sql" <<'EOF'
\set j random(0, 99)
SELECT partition_id AS pid, span_end AS off, lease_id AS lease FROM queen.pop('w', 'p' || :j, 'g', 1, 1, false, true, NULL) WHERE seg_body IS NOT NULL \gset
SELECT success FROM queen.ack('g', ARRAY[:pid]::bigint[], ARRAY['p' || :j || '-' || :off], ARRAY[NULL]::bigint[], ARRAY[':lease']::uuid[], ARRAY['completed'], ARRAY[NULL]::text[]) WHERE success AND NOT noop \gset
EOF

say "postmaster under callgrind"
LOG="$W/postgres-callgrind.log"
pg valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$W/cg/cg.%p" \
  "$BIN/postgres" -D "$W/data" "${PGOPTS[@]}" >"$LOG" 2>&1 &
for _ in $(seq 300); do
  pg_isready -q -h "$W" -U postgres -d $DB && break
  sleep 1
done
pg_isready -q -h "$W" -U postgres -d $DB || { echo "callgrind_ops: server under callgrind did not start" >&2; exit 1; }
# The first connection after a start rebuilds the relcache init file: not in a measured run.
"${PSQL[@]}" -d $DB -c "SELECT 1" >/dev/null

# run OP CALLS [pgbench args]: one pgbench run of CALLS transactions of OP.sql; prints its Ir.
run() {
  local op=$1 n=$2 app="cgops-$1-$2" pids p ir best=0 bestpid="" s
  shift 2
  s=$(date +%s)
  if ! PGAPPNAME=$app pgbench -h "$W" -U postgres -n -c 1 -t "$n" -M "$PROTOCOL" --random-seed=$SEED "$@" -f "$W/$op.sql" $DB \
    >"$W/$app.pgbench.log" 2>&1 || ! grep -q "^number of transactions actually processed: $n/$n" "$W/$app.pgbench.log"; then
    echo "callgrind_ops: pgbench $op $n failed:" >&2
    tail -5 "$W/$app.pgbench.log" >&2
    exit 1
  fi
  pids=$(sed -n "s/^\([0-9]*\) .*connection authorized: .*application_name=$app\$/\1/p" "$LOG")
  for p in $pids; do  # callgrind writes a backend's file when it exits
    while kill -0 "$p" 2>/dev/null; do sleep 0.5; done
    ir=$(sed -n 's/^summary: //p' "$W/cg/cg.$p")
    if ((ir > best)); then best=$ir; bestpid=$p; fi
  done
  [[ -n $bestpid ]] || { echo "callgrind_ops: no callgrind file for $app" >&2; exit 1; }
  printf '%s\t%s\t%s\t%s\t%s\n' "$op" "$n" "$best" "$bestpid" "$(($(date +%s) - s))" >>"$W/runs.tsv"
  say "$op x$n: Ir $best (backend $bestpid, $(($(date +%s) - s)) s)"
}

printf 'op\tcalls\tIr\tbackend\tseconds\n' >"$W/runs.tsv"
run push "$WARMUP"
run push "$CALLS"
run pop "$WARMUP" -D i=0
run pop "$CALLS" -D i="$WARMUP"
run ack "$WARMUP" -D i=0 -D base="$BASE"
run ack "$CALLS" -D i="$WARMUP" -D base="$BASE"
# pop+ack hands the lease to the ack inside a quoted literal, which only the simple
# protocol substitutes.
if [[ $PROTOCOL == simple ]]; then
  run popack "$WARMUP"
  run popack "$CALLS"
fi
pg "$BIN/pg_ctl" -D "$W/data" -m fast -w -t 600 stop >/dev/null
started=
wait

{
  echo "# $SRC ($(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?')), mode $MODE, protocol $PROTOCOL, Ir per call = (Ir($CALLS calls) - Ir($WARMUP calls)) / $((CALLS - WARMUP))"
  printf '%-8s %-6s %14s\n' operation mode "Ir/call"
  ops="push pop ack"
  [[ $PROTOCOL == simple ]] && ops="$ops popack"
  for op in $ops; do
    awk -F'\t' -v op="$op" -v a="$WARMUP" -v b="$CALLS" -v mode="$MODE" '
      $1 == op && $2 == a { ia = $3 } $1 == op && $2 == b { ib = $3 }
      END { printf "%-8s %-6s %14.0f\n", (op == "popack" ? "pop+ack" : op), mode, (ib - ia) / (b - a) }' "$W/runs.tsv"
  done
  echo "# runs (total Ir of the pgbench backend):"
  sed 's/^/#   /' "$W/runs.tsv"
  echo "# wall time $(($(date +%s) - t0)) s"
} | tee "$W/results.txt"
