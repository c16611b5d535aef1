#!/usr/bin/env bash
# Run the fault suite at full size and write docs/reliability.md from its results.
# Takes about ten minutes. Extra arguments go to pytest (e.g. -k sqlite).
# The document is written even when a run breaks an invariant (its row shows
# how); the exit status is then pytest's.
set -uo pipefail
cd "$(dirname "$0")/.."
rows=$(mktemp /tmp/venturi-faults-XXXX.jsonl)
trap 'rm -f "$rows"' EXIT
VENTURI_FAULTS_SIZE=full VENTURI_FAULTS_REPORT="$rows" \
  .venv/bin/python -m pytest -p no:cacheprovider -q -m faults tests/faults "$@"
status=$?
.venv/bin/python -m tests.faults.report "$rows" > docs/reliability.md.new \
  && mv docs/reliability.md.new docs/reliability.md \
  && echo "wrote docs/reliability.md"
exit "$status"
