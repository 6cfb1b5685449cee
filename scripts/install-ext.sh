#!/usr/bin/env bash
# Builds the queen_ext extension (Makefile.pgxs) and installs it into PostgreSQL's
# directories (pg_config --pkglibdir / --sharedir), which needs root; sudo is used otherwise.
# Installing the files changes no database: CREATE EXTENSION queen_ext does, per database.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
make -s -f Makefile.pgxs
if [[ $(id -u) -eq 0 ]]; then
  make -s -f Makefile.pgxs install
else
  sudo make -s -f Makefile.pgxs install
fi
