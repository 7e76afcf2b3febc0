#!/bin/sh
# python -m pairsight.profile_tpcs with the CUDA calls stubbed (green
# contexts and MPS children), importing a real trace at each TPC count with
# the CLI. Needs Debian's python3 only (no torch, no GPU).
# Usage: sh tests/test_profile_tpcs.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_profile_tpcs.sh PAIRSIGHT}
. tests/clitest.sh
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "skip: $PY is needed"; exit 77; }
"$PY" tests/profile_tpcs_check.py "$CLI" "$T" >"$T/check" 2>&1 || fail "profile_tpcs_check.py: $(cat "$T/check")"
has "$T/check" "profile_tpcs_check: ok"
finish test_profile_tpcs
