#!/usr/bin/env bash
# The side-by-side benchmark, one command (docs/benchmarks.md):
#   bash bench/run.sh [--reps 3] [--only pg|sqlite|pg-process ...] [--server own] ...
# The peers (pgqueuer with asyncpg and psycopg, procrastinate, huey) go into a virtual
# environment of the benchmark's own, outside the project and its dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS_VENV=${VENTURI_BENCH_PEERS_VENV:-/tmp/venturi-bench-peers}
if [ ! -x "$PEERS_VENV/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$PEERS_VENV"
fi
"$PEERS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  'pgqueuer==1.6.0' 'asyncpg==0.32.0' 'psycopg[binary]==3.3.9' 'procrastinate==3.10.0' \
  'huey==3.5.4'
if [ ! -x .venv/bin/python ]; then
  echo "bench: no .venv here; run 'bash scripts/test.sh' once to create it" >&2
  exit 2
fi
VENTURI_BENCH_PEERS_PYTHON="$PEERS_VENV/bin/python" exec .venv/bin/python -m bench "$@"
