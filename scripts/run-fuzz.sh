#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang (ASan + UBSan) and runs each for
# SECONDS (default 60) from a copy of its committed seed corpus plus the generated seeds of
# tests/fuzz/make_seeds.py (deep nesting, long strings, many items, huge numbers). Inputs
# may be up to MAX_LEN bytes (default 1 MiB), so that a mutation can nest 500,000 deep.
# Then tests/fuzz/ext_push_fuzz.py feeds random batch arguments to queen.push and queen.pop_fused on the stock path
# and on queen_ext's C path for SECONDS, in a throw-away PostgreSQL 15 (needs queen_ext
# installed: make ext-install), and fails when the paths differ.
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

for c in "$ROOT"/codec/*.c; do
  "$CC" -std=c11 "${FLAGS[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -I"$ROOT/codec" -c "$c" -o "$OUT/$(basename "$c" .c).o"
done
common=("$ROOT/broker/segment/segment_codec.cpp" "$OUT"/queen_segment.o "$OUT"/queen_segment_zstd.o)
build() {
  local name=$1; shift
  "$CXX" -std=c++20 -DBOOST_BEAST_USE_STD_STRING_VIEW -include ostream "${FLAGS[@]}" "${INCLUDES[@]}" "$ROOT/tests/fuzz/$name.cpp" "$@" "${common[@]}" \
    -lzstd -lfmt -o "$OUT/$name"
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
for target in push_body_fuzz:push segment_decode_fuzz:segment pop_answer_fuzz:segment jwt_token_fuzz:token http_header_fuzz:header; do
  name=${target%%:*}
  seeds=${target##*:}
  corpus="$OUT/corpus-$seeds"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp "$ROOT/tests/fuzz/corpus/$seeds"/* "$OUT/generated-seeds/$seeds"/* "$corpus/"
  echo "run-fuzz: $name for ${SECONDS_EACH}s"
  if ! "$OUT/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len="$MAX_LEN" -print_final_stats=1 \
      -artifact_prefix="$OUT/$name-" "$corpus" > "$OUT/$name.log" 2>&1; then
    echo "run-fuzz: $name FAILED" >&2
    tail -n 60 "$OUT/$name.log" >&2
    status=1
    failed=$((failed + 1))
  else
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
