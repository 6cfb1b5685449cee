#!/usr/bin/env bash
# Installs the pg-boss peer (pinned in package.json / package-lock.json) into
# bench/peers/pgboss/node_modules. Idempotent: runs `npm ci` only when
# node_modules is missing or does not match package-lock.json.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

if ! command -v node >/dev/null 2>&1; then
    echo "install.sh: node is not installed; pg-boss 10.4.2 needs Node.js >= 20" >&2
    exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is not installed (it normally ships with Node.js)" >&2
    exit 1
fi
node_version="$(node --version)"            # e.g. v20.20.2
node_major="${node_version#v}"
node_major="${node_major%%.*}"
if ! [[ "$node_major" =~ ^[0-9]+$ ]] || (( node_major < 20 )); then
    echo "install.sh: Node.js $node_version found; pg-boss 10.4.2 needs Node.js >= 20" >&2
    exit 1
fi

stamp="node_modules/.bench-install-stamp"
want="$(sha256sum package-lock.json | cut -d' ' -f1) node-$node_major"
installed_version="$(node -p 'require("./node_modules/pg-boss/package.json").version' 2>/dev/null || true)"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && "$installed_version" == "10.4.2" ]]; then
    echo "install.sh: pg-boss $installed_version already installed in $here/node_modules"
    exit 0
fi

echo "install.sh: npm ci in $here"
npm ci --no-audit --no-fund
echo "$want" > "$stamp"
echo "install.sh: installed pg-boss $(node -p 'require("./node_modules/pg-boss/package.json").version')"
