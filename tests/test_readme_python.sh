#!/bin/sh
# The README's Python block (section "3. Python") runs as written after the
# CLI block's camp/ and model.psm, also when a q.csv of 100 queries from the
# "Using it" block lies in the folder (issue 42: explain met it), and a
# failed call prints the code's name, not its number. Debian's python3;
# exit 77 without it. Usage: sh tests/test_readme_python.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_readme_python.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: $PY is absent"; exit 77; }
LIB=$(cd "$(dirname "$CLI")" && pwd)/libpairsight.so.0
ROOT=$(pwd)
sed -n '/^### 3. Python$/,/^### /p' README.md | sed -n '/^```python$/,/^```$/p' | sed '1d;$d' >"$T/block.py"
[ -s "$T/block.py" ] || { fail "no python block under README's '### 3. Python'"; finish test_readme_python; }
cd "$T" || exit 1
expect 0 "$CLI" simulate --gpu a100 --experiments 60 --runs 1 --seed 3 --out camp -q
expect 0 "$CLI" train --ops camp/ops.csv --coexec camp/coexec.csv --out model.psm --depths 4 --etas 0.3 --rounds 20 -q
cut -d, -f2-12 camp/coexec.csv | head -n 101 >q.csv # the "Using it" block's 100 queries
# A sanitized library loads into the uninstrumented interpreter only with the
# sanitizer runtimes preloaded (as test_python.sh); Python's leaks are not ours.
PRE=
[ "${PS_SANITIZED:-0}" = 1 ] && PRE="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
expect 0 env LD_PRELOAD="$PRE" ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" PYTHONPATH="$ROOT/python" \
    PAIRSIGHT_LIBRARY="$LIB" "$PY" block.py
[ "$(wc -l <"$T/out")" -eq 3 ] || fail "the block printed $(wc -l <"$T/out") lines, expected 3: $(cat "$T/out")"
tail -n 1 "$T/out" | grep -q '^[a-z][a-z /-]* - .*nosuch' || fail "the error line names no code: $(tail -n 1 "$T/out")"
tail -n 1 "$T/out" | grep -q '^-' && fail "the error line starts with a number: $(tail -n 1 "$T/out")"
cd "$ROOT" || exit 1
finish test_readme_python
