#!/bin/sh
# Every symbol that libpairsight.a exports is pairsight's own by its name:
# ps_ for the API (include/pairsight.h), psi_ for the internals (README.md,
# "Using it"), so that none collides with a user's symbol. Prints each
# offender with the object that defines it; scripts/rename_internal.sh gives
# them psi_. Usage: test_symbols.sh PAIRSIGHT (the library is beside it).
set -u
CLI=${1:?usage: test_symbols.sh PAIRSIGHT}
LIB=${PS_BUILD_DIR:-$(dirname "$CLI")}/libpairsight.a
command -v nm >/dev/null || { echo "skip: no nm"; exit 77; }
[ -f "$LIB" ] || { echo "FAIL: no $LIB"; exit 1; }
# nm -A: "lib.a:object.o:ADDRESS TYPE NAME" for each defined global
# (__odr_asan.*: the markers of ASan's one-definition-rule check).
bad=$(nm -A -g --defined-only "$LIB" | awk 'NF == 3 && $3 !~ /^psi?_/ && $3 !~ /^__odr_asan/ { split($1, f, ":"); print $3 "  (" f[2] ")" }' |
    sort -u)
if [ -n "$bad" ]; then
    printf '%s\n' "$bad"
    echo "test_symbols: $(printf '%s\n' "$bad" | wc -l) exported symbols of $LIB lack ps_ or psi_" \
        "(scripts/rename_internal.sh gives them psi_)"
    exit 1
fi
echo "test_symbols: ok ($(nm -g --defined-only "$LIB" | awk 'NF == 3' | wc -l) exported symbols, all ps_ or psi_)"
