#!/usr/bin/env bash
# Installs, from Debian's package registry, what is missing of one of two lists:
#   bash scripts/install-deps.sh run    what building and running the broker needs (`make run`)
#   bash scripts/install-deps.sh test   that plus what the test suites need (`make test`)
# Idempotent: it only calls apt-get when something is missing. Node and npm (for the
# dashboard's build and the browser suite) come with the machine image and are not
# installed from Debian here.
set -euo pipefail

# Building the broker and running it (with its embedded PostgreSQL), PL/Proxy for the proxy
# database of a sharded deployment (`queen shards init`, docs/scaling.md) and pg_auto_failover
# for failover (docs/deployment.md).
RUN_PACKAGES=(
  build-essential cmake pkg-config git
  libboost-dev libboost-system-dev
  libpq-dev postgresql-15 postgresql-server-dev-15 postgresql-client-15 postgresql-15-plproxy
  postgresql-15-auto-failover pg-auto-failover-cli
  libzstd-dev zstd nlohmann-json3-dev libsimdjson-dev libfmt-dev libssl-dev
  prometheus-cpp-dev
  curl ca-certificates
)

# The test, fuzz, browser, lint and benchmark targets on top of that: GoogleTest, clang for
# libFuzzer, clang-format and clang-tidy for the lint, jq for the benchmark scripts, chromium
# for the dashboard's browser suite, prometheus for promtool, openssl (the command) for the certificates of the SSL and TLS
# tests (the TLS tests also call curl, installed above), iproute2 for ss (the keepalive test
# reads the sockets' timers), ccache so that a second build of the same sources compiles
# nothing (CMakeLists.txt, docs/testing.md).
TEST_PACKAGES=(
  libgtest-dev googletest
  clang libclang-rt-14-dev clang-format clang-tidy
  jq
  chromium
  prometheus
  openssl iproute2
  ccache
)

case "${1:-test}" in
  run) PACKAGES=("${RUN_PACKAGES[@]}") ;;
  test) PACKAGES=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
