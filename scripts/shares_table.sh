#!/bin/sh
# Reruns the measured quality of `colocate shares` on KACE's V100 split pairs
# (leave one pair out; docs/colocate.md, "Measured on KACE's split pairs") and
# rewrites docs/results/shares-kace-v100.json and the table in docs/colocate.md.
# Usage: scripts/shares_table.sh [PAIRSIGHT]     (default build/pairsight)
#        scripts/shares_table.sh --check         the table is the JSON's (no data needed)
# Skips (exit 0, says so) where ../shared/data/kace-v100 is absent.
set -eu
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[ -x "$py" ] || py=python3
json=docs/results/shares-kace-v100.json
if [ "${1:-}" = "--check" ]; then
    exec "$py" scripts/shares_eval.py --check "$json" docs/colocate.md
fi
cli=${1:-build/pairsight}
data=../shared/data/kace-v100
if [ ! -f "$data/colocations_splits.csv" ]; then
    echo "shares_table: skipped: $data/colocations_splits.csv absent"
    exit 0
fi
mkdir -p docs/results
"$py" scripts/shares_eval.py "$cli" "$data" "$json" --doc docs/colocate.md
