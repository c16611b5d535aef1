#!/usr/bin/env bash
# The quick start: set up a virtual environment, generate the bundled examples' code,
# then enqueue FetchBookmark tasks, run a worker on a fresh SQLite file until idle and
# print each job's outcome, note, attachment and journal. Needs only Python 3.11+.
# Extra arguments go to the demo program (e.g. --database sqlite:///demo.sqlite3).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv ($("$PYTHON" --version))"
  "$PYTHON" -m venv .venv
fi
# Install once per version of the two pyproject.toml files (editable: code changes need none).
stamp=.venv/.venturi-demo-installed
want=$(cat pyproject.toml generator/pyproject.toml | cksum)
if [ ! -x .venv/bin/venturi-gen ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "== installing venturi and venturi-gen into .venv: pip install -e '.[gen]' -e ./generator"
  if ! .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[gen]' -e ./generator \
      >.venv/pip-install.log 2>&1; then
    cat .venv/pip-install.log >&2
    exit 1
  fi
  echo "$want" >"$stamp"
fi

echo "== venturi-gen: generate typed code from examples/*/tasks.venturi.yaml"
.venv/bin/venturi-gen

echo "== python -m examples.bookmarks.demo"
echo
exec .venv/bin/python -m examples.bookmarks.demo "$@"
