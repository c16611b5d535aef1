#!/usr/bin/env bash
# Set up a virtual environment and run the whole test suite: lint, types,
# generated-code check, and pytest (SQLite always; PostgreSQL on 127.0.0.1:5432).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]' -e ./generator

# PostgreSQL for the postgres-marked tests: start the local cluster if it is down.
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
fi

# Chromium for the dashboard's browser tests (tests/dashboard/test_browser.py), from the
# distribution's packages; Playwright drives it and never downloads a browser of its own.
# Without it the browser tests skip, except in CI (CI=true), where they fail.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; fi
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium; } \
    >/dev/null 2>&1 || echo "scripts/test.sh: could not install chromium; the browser tests need /usr/bin/chromium" >&2
fi

echo "== ruff"
.venv/bin/ruff check runtime generator tests examples scripts bench
echo "== ruff on generated code (the markers that tell users' linters to skip it, ignored)"
.venv/bin/ruff check --ignore-noqa examples tests/generator/golden
echo "== mypy --strict (runtime, generator, examples, tests, bench)"
.venv/bin/mypy
echo "== pyright, strict mode (runtime, examples)"
# No check of PyPI for a newer pyright on every run.
export PYRIGHT_PYTHON_IGNORE_WARNINGS=1
.venv/bin/pyright
echo "== mypy --strict and pyright strict mode (golden outputs of the generator)"
.venv/bin/python scripts/typecheck_golden.py
echo "== sync twins (scripts/async_to_sync.py --check)"
.venv/bin/python scripts/async_to_sync.py --check
echo "== venturi-gen --check (bundled examples, the benchmark's task)"
.venv/bin/venturi-gen --check
echo "== pytest"
# On every core (pytest-xdist), a worker process more than there are cores: the tests spend
# part of their time waiting (sleeps, the databases), and on two cores three workers beat
# two. At most 8, for the shared server's connections; VENTURI_TEST_WORKERS chooses. Tests
# are dealt one at a time to whichever worker is free, the slow ones first
# (tests/conftest.py), so that no worker is left with a queue of long tests at the end.
# Arguments given to this script come after and win: `bash scripts/test.sh tests/unit` runs
# that directory on the workers, `bash scripts/test.sh -n 0 ...` in this process.
WORKERS=${VENTURI_TEST_WORKERS:-$(.venv/bin/python -c 'import os; print(min((os.cpu_count() or 1) + 1, 8))')}
.venv/bin/python -m pytest -n "$WORKERS" --maxschedchunk 1 "$@"
