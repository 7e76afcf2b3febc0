#!/bin/sh
# Writes the worked example at the top of include/pairsight.h (from its
# "#include <pairsight.h>" line to "End of example.") as a C file, so that the
# build compiles it exactly as the header shows it.
# Usage: scripts/header_example.sh include/pairsight.h OUT.c
set -eu
awk '/^ \*     #include <pairsight.h>/ { on = 1 }
     /^ \* End of example\./ { on = 0 }
     on { if (!sub(/^ \*     /, "")) sub(/^ \*/, ""); print }' "$1" >"$2.tmp"
[ -s "$2.tmp" ] || { echo "header_example.sh: no example found in $1" >&2; rm -f "$2.tmp"; exit 1; }
mv "$2.tmp" "$2"
