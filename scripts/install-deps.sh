#!/usr/bin/env bash
# Installs, from Debian's package registry, every package the build, the tests and
# `make run` need. Idempotent: it only calls apt-get when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git
  libboost-dev libboost-system-dev
  libpq-dev postgresql-15 postgresql-server-dev-15 postgresql-client-15
  libzstd-dev zstd nlohmann-json3-dev libfmt-dev libssl-dev
  libgtest-dev googletest
  clang libclang-rt-14-dev
  curl ca-certificates jq
  prometheus-cpp-dev prometheus
)

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
