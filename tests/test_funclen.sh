#!/bin/sh
# scripts/funclen.py, the function-length rule CI holds src/ to: it lists a
# function over --warn lines, fails on one over --max, and is not fooled by an
# initializer that opens a brace at column 0.
# Usage: sh tests/test_funclen.sh PAIRSIGHT
set -u
. tests/clitest.sh
py=/usr/bin/python3
[ -x "$py" ] || py=python3
# A C file with functions of the given body lengths (lines between the braces).
mk() {
    out=$1; shift
    : >"$out"
    for n in "$@"; do
        printf 'static int f%s(int x)\n{\n' "$n" >>"$out"
        i=0
        while [ "$i" -lt "$n" ]; do echo "    x++;" >>"$out"; i=$((i + 1)); done
        printf '    return x;\n}\n\n' >>"$out" # with the braces and return: n + 3 lines
    done
}
mk "$T/ok.c" 10 78 97
expect 0 "$py" scripts/funclen.py "$T/ok.c"
has "$T/out" " 100 $T/ok.c:99 f97"
has "$T/out" "  81 $T/ok.c:16 f78"
has "$T/out" "funclen: 2 functions over 80 lines, 0 over 100"
grep -q " f10" "$T/out" && fail "a 13-line function listed: $(cat "$T/out")"
mk "$T/long.c" 98
expect 1 "$py" scripts/funclen.py "$T/ok.c" "$T/long.c"
has "$T/out" " 101 $T/long.c:1 f98  (over 100)"
has "$T/out" "funclen: 3 functions over 80 lines, 1 over 100"
expect 0 "$py" scripts/funclen.py --max 101 "$T/long.c"
expect 1 "$py" scripts/funclen.py --warn 10 --max 20 "$T/ok.c"
has "$T/out" "funclen: 3 functions over 10 lines, 2 over 20"
# A folder is walked; a long initializer is not a function.
mkdir "$T/d"
{
    echo "static const int table[] ="
    echo "{"
    i=0
    while [ "$i" -lt 150 ]; do echo "    $i,"; i=$((i + 1)); done
    echo "};"
} >"$T/d/table.c"
cp "$T/long.c" "$T/d/x.h"
expect 1 "$py" scripts/funclen.py "$T/d"
has "$T/out" "funclen: 1 functions over 80 lines, 1 over 100"
grep -q table "$T/out" && fail "an initializer counted as a function: $(cat "$T/out")"
expect 2 "$py" scripts/funclen.py --warn x
expect 2 "$py" scripts/funclen.py "$T/none.c"
finish test_funclen
