#!/bin/sh
# Regenerates every published table of README.md and docs/evaluation.md from
# one evaluation's JSON and its replays, so that no figure is typed by hand.
# Usage: scripts/results.sh [EVAL.json]   copy EVAL.json (default out/eval.json,
#                                         from scripts/run.sh) to docs/results/eval.json
#                                         and rewrite the tables from it
#        scripts/results.sh --check       fail when the committed tables differ
#                                         from docs/results/eval.json (CI)
set -eu
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[ -x "$py" ] || py=python3
ref=docs/results/eval.json
docs="README.md docs/evaluation.md docs/planner.md"
if [ "${1:-}" = "--check" ]; then
    # shellcheck disable=SC2086
    exec "$py" scripts/results.py --check "$ref" $docs
fi
src=${1:-out/eval.json}
[ -f "$src" ] || { echo "results: $src: no such file (run scripts/run.sh first)" >&2; exit 1; }
mkdir -p docs/results
[ "$src" = "$ref" ] || cp "$src" "$ref"
# The replays of the same run (scripts/run.sh writes them beside eval.json).
if [ -d "$(dirname "$src")/replay" ]; then
    "$py" scripts/results.py --collect-replay "$(dirname "$src")/replay" docs/results/replay.json
fi
# The bounds' coverage on held-out campaigns (scripts/coverage_heldout.sh).
if [ -d "$(dirname "$src")/heldout" ]; then
    "$py" scripts/results.py --collect-coverage "$(dirname "$src")/heldout" docs/results/coverage.json
fi
# KACE's V100 co-location figures, where the run had ../shared/data.
if [ -f "$(dirname "$src")/colocate/kace-v100.json" ]; then
    cp "$(dirname "$src")/colocate/kace-v100.json" docs/results/colocate-kace-v100.json
fi
# shellcheck disable=SC2086
"$py" scripts/results.py "$ref" $docs
