#!/usr/bin/env bash
# Measure pgqueuer 1.6 (asyncpg) on this machine, for the same-sitting ratios
# that issue 4's PostgreSQL bar is stated in. pgqueuer is no dependency of
# venturi: it goes into a throwaway virtual environment outside the project.
# Run on a quiet machine, right before or after
#   .venv/bin/python -m pytest -m benchmark -s tests/benchmarks/test_postgres_bench.py
set -euo pipefail
cd "$(dirname "$0")/.."

PEERS_VENV=${PEERS_VENV:-/tmp/venturi-peers-venv}
if [ ! -x "$PEERS_VENV/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$PEERS_VENV"
fi
"$PEERS_VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  'pgqueuer==1.6.0' 'asyncpg==0.32.0'
"$PEERS_VENV/bin/python" tests/benchmarks/peers/pgqueuer_drain.py
