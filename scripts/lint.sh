#!/usr/bin/env bash
# The broker's lint (broker/ only; codec/, tests/ and bench/ are not held to it):
#   bash scripts/lint.sh format           clang-format in check mode with .clang-format: lists
#                                         every file that is not formatted (fix: `fix`)
#   bash scripts/lint.sh fix              rewrites those files in place
#   bash scripts/lint.sh tidy BUILD_DIR   clang-tidy with .clang-tidy over every broker .cpp,
#                                         using BUILD_DIR/compile_commands.json
# Exit status 1 when a file is not formatted or a check fires.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
mapfile -t SOURCES < <(git ls-files 'broker/*.cpp' 'broker/*.hpp' | sort)
case "${1:-}" in
  format)
    unformatted=()
    for f in "${SOURCES[@]}"; do
      clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || unformatted+=("$f")
    done
    if ((${#unformatted[@]})); then
      printf 'not formatted: %s\n' "${unformatted[@]}"
      echo "lint: ${#unformatted[@]} of ${#SOURCES[@]} files are not formatted; run: bash scripts/lint.sh fix"
      exit 1
    fi
    echo "lint: ${#SOURCES[@]} files formatted per .clang-format"
    ;;
  fix)
    clang-format -i "${SOURCES[@]}"
    ;;
  tidy)
    BUILD_DIR="${2:?usage: $0 tidy BUILD_DIR}"
    [[ -f $BUILD_DIR/compile_commands.json ]] || { echo "lint: no $BUILD_DIR/compile_commands.json; build first" >&2; exit 2; }
    mapfile -t UNITS < <(printf '%s\n' "${SOURCES[@]}" | grep '\.cpp$')
    # clang 14 does not see Boost 1.74's coroutine support on its own, and knows not every GCC
    # warning option of the compile commands.
    run-clang-tidy -quiet -p "$BUILD_DIR" -j "$(nproc)" -extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT \
      -extra-arg=-DBOOST_ASIO_HAS_STD_COROUTINE -extra-arg=-Wno-unknown-warning-option "${UNITS[@]/#/$ROOT/}" > "$BUILD_DIR/clang-tidy.log" 2>&1 || {
      grep -E 'warning:|error:' "$BUILD_DIR/clang-tidy.log" | sort -u | head -50
      echo "lint: clang-tidy found problems (all of them in $BUILD_DIR/clang-tidy.log)"
      exit 1
    }
    echo "lint: clang-tidy clean over ${#UNITS[@]} files"
    ;;
  *)
    echo "usage: $0 format|fix|tidy BUILD_DIR" >&2
    exit 2
    ;;
esac
