#!/usr/bin/env bash
# The dashboard's browser suite: a throwaway PostgreSQL and a broker of BUILD_DIR on loopback
# ports, then suite.mjs drives Debian's chromium (headless, through puppeteer-core, which
# never downloads a browser) through every view, auth_suite.mjs drives it against a second
# broker with JWT_ENABLED=true, and tenancy_suite.mjs against three brokers with tenancy on (a
# tenant header without authentication, a tenant header with it, and a token claim), and suite.mjs
# again against a broker on a shard proxy over four shard databases. Screenshots and logs go to
# BUILD_DIR/test-logs/browser. Prints one "ok"/"not ok" line per test, each suite's own count
# as "browser-<suite>: …", and, last, the one line "browser: N passed, N failed" for all suites
# (scripts/run-tests.sh reads it).
#   bash tests/browser/run.sh BUILD_DIR
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BUILD_DIR="$(mkdir -p "${1:?usage: $0 BUILD_DIR}" && cd "$1" && pwd)"
LOGS="$BUILD_DIR/test-logs/browser"
PG_BINDIR="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
rm -rf "$LOGS"
mkdir -p "$LOGS"

for f in "$BUILD_DIR/queen" "$PG_BINDIR/initdb" "$PG_BINDIR/pg_ctl" "$CHROMIUM"; do
  if [[ ! -x "$f" ]]; then
    echo "browser: $f not found (make build; bash scripts/install-deps.sh test)" >&2
    exit 2
  fi
done

# PostgreSQL refuses to run as root: as root its commands run as `postgres`.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

WORK="$(mktemp -d /tmp/queen-browser.XXXXXX)"
declare -A BROKER_PID=()  # each started broker's pid, by name (start_broker)
PG_STARTED=""
cleanup() {
  for pid in "${BROKER_PID[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [[ -n $PG_STARTED ]]; then as_pg "$PG_BINDIR/pg_ctl" stop -D "$WORK/data" -m fast -w >/dev/null 2>&1 || true; fi
  cp "$WORK/postgres.log" "$LOGS/" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
if [[ $(id -u) -eq 0 ]]; then chown postgres: "$WORK"; fi

PG_PORT="$(free_port)"
as_pg "$PG_BINDIR/initdb" -D "$WORK/data" -U postgres --auth=trust -E UTF8 --no-locale >"$LOGS/initdb.log" 2>&1
as_pg "$PG_BINDIR/pg_ctl" start -D "$WORK/data" -l "$WORK/postgres.log" -w -t 60 \
  -o "-p $PG_PORT -k $WORK -c listen_addresses=127.0.0.1" >/dev/null
PG_STARTED=1

# start_broker NAME DATABASE [VAR=value…]: a broker of BUILD_DIR on a free loopback port over
# DATABASE, with the suite's settings and those variables; its port goes to NAME_PORT (NAME in
# capitals), its log to LOGS/NAME-broker.log.
start_broker() {
  local name=$1 db=$2 port
  port="$(free_port)"
  env HOST=127.0.0.1 PORT="$port" QUEEN_DATABASE_URL="host=127.0.0.1 port=$PG_PORT dbname=$db user=postgres" \
    QUEEN_SPOOL_DIR="$WORK/spool-$name" QUEEN_STATS_INTERVAL_MS=500 QUEEN_METRICS_FLUSH_MS=1000 "${@:3}" \
    "$BUILD_DIR/queen" >"$LOGS/$name-broker.log" 2>&1 &
  BROKER_PID[$name]=$!
  printf -v "${name^^}_PORT" %s "$port"
}

# wait_healthy NAME: waits until the broker start_broker named so answers /health.
wait_healthy() {
  local port_var="${1^^}_PORT"
  for _ in $(seq 1 300); do
    if curl -fs "http://127.0.0.1:${!port_var}/health" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "${BROKER_PID[$1]}" 2>/dev/null; then
      echo "browser: the broker exited; see $LOGS/$1-broker.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}

start_broker main postgres
wait_healthy main

# puppeteer-core from the lock file; it has no browser download of its own.
if [[ ! -d "$HERE/node_modules/puppeteer-core" || "$HERE/package-lock.json" -nt "$HERE/node_modules/.package-lock.json" ]]; then
  (cd "$HERE" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >"$LOGS/npm.log" 2>&1) || {
    cat "$LOGS/npm.log" >&2
    exit 1
  }
fi

# Shows a suite's output with its own count relabelled "browser-<suite>:", so that the last
# line is the only "browser: N passed" one; the file keeps the output as printed.
show() { sed -u "s/^browser: /browser-$1: /"; }

status=0
QUEEN_URL="http://127.0.0.1:$MAIN_PORT" CHROMIUM="$CHROMIUM" SCREENSHOTS="$LOGS" node "$HERE/suite.mjs" \
  | tee "$LOGS/suite.out" | show main || status=1
# Then the same database behind a broker that checks tokens (started only now, so that the
# first suite sees one broker).
JWT_SECRET="browser-suite-secret-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
start_broker auth postgres JWT_ENABLED=true JWT_SECRET="$JWT_SECRET"
wait_healthy auth

QUEEN_URL="http://127.0.0.1:$AUTH_PORT" JWT_SECRET="$JWT_SECRET" CHROMIUM="$CHROMIUM" SCREENSHOTS="$LOGS" \
  node "$HERE/auth_suite.mjs" | tee "$LOGS/auth_suite.out" || status=1
# Then three brokers with tenancy on, on the same database: two name the tenant by the X-Tenant
# header alone (authentication off, and on), one also by the token claim `tenant`.
start_broker tenant postgres QUEEN_TENANCY_HEADER=X-Tenant
start_broker tenant_auth postgres JWT_ENABLED=true JWT_SECRET="$JWT_SECRET" QUEEN_TENANCY_HEADER=X-Tenant
start_broker claim postgres JWT_ENABLED=true JWT_SECRET="$JWT_SECRET" QUEEN_TENANCY_HEADER=X-Tenant \
  QUEEN_TENANCY_CLAIM=tenant
wait_healthy tenant
wait_healthy tenant_auth
wait_healthy claim

HEADER_URL="http://127.0.0.1:$TENANT_PORT" HEADER_AUTH_URL="http://127.0.0.1:$TENANT_AUTH_PORT" CLAIM_URL="http://127.0.0.1:$CLAIM_PORT" JWT_SECRET="$JWT_SECRET" \
  CHROMIUM="$CHROMIUM" SCREENSHOTS="$LOGS" node "$HERE/tenancy_suite.mjs" | tee "$LOGS/tenancy_suite.out" || status=1

# Then the main suite again against a broker on a shard proxy (docs/scaling.md): four shard
# databases and the proxy database on the same server, made by `queen shards init`.
for db in shard0 shard1 shard2 shard3 proxy; do
  as_pg psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE $db" >/dev/null
done
"$BUILD_DIR/queen" shards init --proxy "host=127.0.0.1 port=$PG_PORT dbname=proxy user=postgres" \
  --shard "host=127.0.0.1 port=$PG_PORT dbname=shard0 user=postgres" \
  --shard "host=127.0.0.1 port=$PG_PORT dbname=shard1 user=postgres" \
  --shard "host=127.0.0.1 port=$PG_PORT dbname=shard2 user=postgres" \
  --shard "host=127.0.0.1 port=$PG_PORT dbname=shard3 user=postgres" >"$LOGS/shards-init.log" 2>&1
start_broker sharded proxy
wait_healthy sharded
mkdir -p "$LOGS/sharded"
QUEEN_URL="http://127.0.0.1:$SHARDED_PORT" CHROMIUM="$CHROMIUM" SCREENSHOTS="$LOGS/sharded" \
  node "$HERE/suite.mjs" | tee "$LOGS/sharded_suite.out" | show sharded || status=1

# Every suite's count in the one line run-tests.sh reads.
count() { grep -Eo "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -n 1 | grep -Eo "[0-9]+ $3" | grep -Eo "[0-9]+" || echo 0; }
total() {
  echo $(( $(count browser "$LOGS/suite.out" "$1") + $(count browser-auth "$LOGS/auth_suite.out" "$1") \
    + $(count browser-tenancy "$LOGS/tenancy_suite.out" "$1") + $(count browser "$LOGS/sharded_suite.out" "$1") ))
}
echo "browser: $(total passed) passed, $(total failed) failed"
exit $status
