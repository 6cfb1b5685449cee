#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan) and runs each for
# SECONDS (default 60; FUZZ_JOBS of them at once, default one per core) from a copy of its
# committed seed corpus plus the generated seeds of tests/fuzz/make_seeds.py (deep nesting, long
# strings, many items, huge numbers). Inputs may be up to MAX_LEN bytes (default 1 MiB), so that
# a mutation can nest 500,000 deep. Then tests/fuzz/ext_push_fuzz.py feeds random batch arguments
# to queen.push and queen.pop_fused on the stock path and on queen_ext's C path for SECONDS, in a
# throw-away PostgreSQL 15 (needs queen_ext installed: make ext-install), and fails when the paths
# differ.
#   bash scripts/run-fuzz.sh BUILD_DIR [SECONDS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${1:?usage: $0 BUILD_DIR [SECONDS]}"
SECONDS_EACH="${2:-60}"
MAX_LEN="${MAX_LEN:-1048576}"
OUT="$BUILD_DIR/fuzz"
mkdir -p "$OUT"
CXX="${FUZZ_CXX:-clang++-14}"
CC="${FUZZ_CC:-clang-14}"
FLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
INCLUDES=(-I"$ROOT/broker" -I"$ROOT/codec")

# Each source is compiled once into OUT/obj (through ccache when it is installed, keyed as the
# CMake build's are: paths relative to the tree, so a second clean clone compiles nothing),
# then each harness is linked from its objects.
COMPILE_FLAGS=("${FLAGS[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}")
LAUNCHER=()
if command -v ccache >/dev/null; then LAUNCHER=(env CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=true ccache); fi
mkdir -p "$OUT/obj"
# object SRC: compiles SRC (a path under ROOT) unless done in this run; prints its object.
object() {
  local src=$1 rel obj
  rel=${src#"$ROOT"/}
  obj="$OUT/obj/${rel//\//_}.o"
  if [[ ! -f $obj.done ]]; then
    case $src in
      *.c) "${LAUNCHER[@]}" "$CC" -std=c11 "${COMPILE_FLAGS[@]}" -I"$ROOT/codec" -c "$src" -o "$obj" >&2 ;;
      *) "${LAUNCHER[@]}" "$CXX" -std=c++20 -DBOOST_BEAST_USE_STD_STRING_VIEW -include ostream "${COMPILE_FLAGS[@]}" \
           "${INCLUDES[@]}" -c "$src" -o "$obj" >&2 ;;
    esac
    touch "$obj.done"
  fi
  echo "$obj"
}
rm -f "$OUT"/obj/*.done
common=("$ROOT/broker/segment/segment_codec.cpp" "$ROOT"/codec/*.c)
# build NAME [SOURCE|-lLIB]...: links the harness tests/fuzz/NAME.cpp with the sources.
build() {
  local name=$1 arg objects=() libs=()
  shift
  for arg in "$ROOT/tests/fuzz/$name.cpp" "$@" "${common[@]}"; do
    if [[ $arg == -l* ]]; then libs+=("$arg"); else objects+=("$(object "$arg")"); fi
  done
  "$CXX" "${FLAGS[@]}" "${objects[@]}" "${libs[@]}" -lzstd -lfmt -o "$OUT/$name"
}
build push_body_fuzz "$ROOT/broker/api/shared/requests.cpp" "$ROOT/broker/api/shared/validate.cpp" "$ROOT/broker/api/shared/json_guard.cpp" "$ROOT/broker/api/shared/api_error.cpp" \
  "$ROOT/broker/api/shared/json_body.cpp" "$ROOT/broker/api/shared/push_request.cpp" "$ROOT/broker/api/shared/transaction_request.cpp" \
  "$ROOT/broker/api/streams/stream_requests.cpp" "$ROOT/broker/domain/message_id.cpp" "$ROOT/broker/util/utf8.cpp" "$ROOT/broker/util/memory_budget.cpp" -lsimdjson
build segment_decode_fuzz
build pop_answer_fuzz "$ROOT/broker/api/delivery/pop_answer.cpp" "$ROOT/broker/render/json_writer.cpp" "$ROOT/broker/api/shared/json_guard.cpp" "$ROOT/broker/util/memory_budget.cpp" \
  "$ROOT/broker/api/shared/api_error.cpp" "$ROOT/broker/domain/message_id.cpp" "$ROOT/broker/util/utf8.cpp"
build jwt_token_fuzz "$ROOT/broker/auth/jws_token.cpp" "$ROOT/broker/auth/base64url.cpp" "$ROOT/broker/auth/key_set.cpp" \
  "$ROOT/broker/auth/verification_key.cpp" "$ROOT/broker/auth/token_verifier.cpp" "$ROOT/broker/auth/auth_failure.cpp" \
  "$ROOT/broker/auth/jwt_algorithm.cpp" "$ROOT/broker/util/utf8.cpp" -lcrypto
build http_header_fuzz "$ROOT/broker/http/header_limits.cpp" "$ROOT/broker/http/url.cpp"
rm -rf "$OUT/generated-seeds"
python3 "$ROOT/tests/fuzz/make_seeds.py" "$OUT/generated-seeds"

status=0
passed=0
failed=0
# The harnesses run FUZZ_JOBS at a time (default: the cores), each on one core for SECONDS;
# their results are reported in order once all have ended.
JOBS="${FUZZ_JOBS:-$(nproc)}"
# run_one NAME SEEDS: runs one harness from its corpus; its exit status in OUT/NAME.status.
run_one() {
  local name=$1 seeds=$2 corpus="$OUT/corpus-$2"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp "$ROOT/tests/fuzz/corpus/$seeds"/* "$OUT/generated-seeds/$seeds"/* "$corpus/"
  "$OUT/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len="$MAX_LEN" -print_final_stats=1 \
    -artifact_prefix="$OUT/$name-" "$corpus" > "$OUT/$name.log" 2>&1
  echo $? > "$OUT/$name.status"
}
rm -f "$OUT"/*.status
targets=(push_body_fuzz:push segment_decode_fuzz:segment pop_answer_fuzz:segment jwt_token_fuzz:token http_header_fuzz:header)
running=0
for target in "${targets[@]}"; do
  if ((running >= JOBS)); then
    wait -n || true
    running=$((running - 1))
  fi
  echo "run-fuzz: ${target%%:*} for ${SECONDS_EACH}s"
  run_one "${target%%:*}" "${target##*:}" &
  running=$((running + 1))
done
wait || true
for target in "${targets[@]}"; do
  name=${target%%:*}
  if [[ $(cat "$OUT/$name.status" 2>/dev/null) != 0 ]]; then
    echo "run-fuzz: $name FAILED" >&2
    tail -n 60 "$OUT/$name.log" >&2
    status=1
    failed=$((failed + 1))
  else
    echo "run-fuzz: $name"
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$OUT/$name.log" || true
    passed=$((passed + 1))
  fi
done
# The differential fuzz of the push's two paths, in a cluster of its own.
# shellcheck source=scripts/lib/pg_suite.sh
source "$ROOT/scripts/lib/pg_suite.sh"
PGWORK="$(mktemp -d /tmp/queen-fuzz-pg.XXXXXX)"
cleanup_cluster() {
  stop_temp_cluster "$PGWORK"
  rm -rf "$PGWORK"
}
trap cleanup_cluster EXIT
write_schema "$ROOT" "$PGWORK/schema.sql"
[[ $(id -u) -eq 0 ]] && chown -R postgres: "$PGWORK"
# A cluster with the schema in fuzz_stock and fuzz_ext, and queen_ext in fuzz_ext.
start_fuzz_cluster() {
  local psql=("$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGWORK" -U postgres) db
  start_temp_cluster "$PGWORK" || return 1
  for db in fuzz_stock fuzz_ext; do
    "${psql[@]}" -d postgres -c "CREATE DATABASE $db" || return 1
    PGOPTIONS="-c client_min_messages=warning" "${psql[@]}" -d "$db" -f "$PGWORK/schema.sql" >/dev/null || return 1
  done
  "${psql[@]}" -d fuzz_ext -c "CREATE EXTENSION queen_ext"
}
echo "run-fuzz: ext_push_fuzz for ${SECONDS_EACH}s"
if start_fuzz_cluster > "$OUT/ext_push_fuzz.log" 2>&1 &&
   python3 "$ROOT/tests/fuzz/ext_push_fuzz.py" --host "$PGWORK" --stock fuzz_stock --ext fuzz_ext \
     --seconds "$SECONDS_EACH" >> "$OUT/ext_push_fuzz.log" 2>&1; then
  cat "$OUT/ext_push_fuzz.log"
  passed=$((passed + 1))
else
  echo "run-fuzz: ext_push_fuzz FAILED (queen_ext must be installed: make ext-install)" >&2
  tail -n 60 "$OUT/ext_push_fuzz.log" >&2 2>/dev/null || true
  status=1
  failed=$((failed + 1))
fi

echo "run-fuzz: $passed passed, $failed failed"
exit $status
