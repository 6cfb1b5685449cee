#!/usr/bin/env bash
# Installs the PgQ peer's Debian packages when they are missing: postgresql-15-pgq3 (the pgq
# extension) and pgqd (the ticker daemon). Idempotent; needs root (or sudo) only to install.
set -euo pipefail

packages=(postgresql-15-pgq3 pgqd)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "pgq peer: ${packages[*]} already installed"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "pgq peer: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
# The pgqd package ships a system service; the driver runs its own pgqd, so a service started
# by the package install (where an init system runs it) is not needed here and is left alone.
command -v pgqd >/dev/null || { echo "pgq peer: pgqd not on PATH after install" >&2; exit 1; }
echo "pgq peer: installed ${missing[*]}"
