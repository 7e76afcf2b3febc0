#!/bin/sh
# scripts/stages.py, the guard of the stage order (docs/ARCHITECTURE.md): the
# tree's sources pass; a planted backward include, a file of one stage that
# includes a sibling stage, a public-only front end (serve, cli) that
# includes an internal header, a backward call and a cross-file cycle in object files
# each fail with a line naming the file. Usage: test_stages.sh PAIRSIGHT
set -u
# shellcheck disable=SC2034 # the harness passes the CLI; this test needs only python3 and cc
CLI=${1:?usage: test_stages.sh PAIRSIGHT}
. tests/clitest.sh
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
S=scripts/stages.py

expect 0 python3 $S --no-objects
has "$T/out" "0 backward includes"

# The tree's sources in a copy, then one planted include at a time.
plant() { # plant FILE LINE: a copy of src/ where FILE also includes LINE
    rm -rf "$T/tree" && mkdir -p "$T/tree" && cp -R src "$T/tree/src"
    mkdir -p "$(dirname "$T/tree/$1")"
    printf '%s\n' "$2" >>"$T/tree/$1"
}
plant src/profile/csv.c '#include "decision/decision.h"'
expect 1 python3 $S --root "$T/tree" --no-objects
has "$T/out" 'backward include: src/profile/csv.c:'
has "$T/out" 'decision comes after profile'
plant src/simulate/derive.c '#include "collect/store.h"'
expect 1 python3 $S --root "$T/tree" --no-objects
has "$T/out" 'simulate and collect are one stage'
plant src/serve/serve.c '#include "profile/tables.h"'
expect 1 python3 $S --root "$T/tree" --no-objects
has "$T/out" 'serve uses the public headers only'
plant src/serve/serve.c '#include "pairsight.h"'
expect 0 python3 $S --root "$T/tree" --no-objects
# The CLI too: a converted command that reaches an internal header fails
# (files still in PENDING are held to the stage order alone).
plant src/cli/cmd_model.c '#include "profile/tables.h"'
expect 1 python3 $S --root "$T/tree" --no-objects
has "$T/out" 'backward include: src/cli/cmd_model.c:'
has "$T/out" 'cli uses the public headers only'
plant src/cli/cmd_model.c '#include "pairsight_eval.h"'
expect 0 python3 $S --root "$T/tree" --no-objects

# Objects: profile/a.c and profile/b.c call each other; profile/c.c calls
# model/d.c. CMake's layout: build/CMakeFiles/T.dir/src/F/x.c.o.
command -v cc >/dev/null || { echo "skip: no C compiler for the object checks"; finish test_stages; }
R=$T/objs
mkdir -p "$R/src/profile" "$R/src/model" "$R/build/CMakeFiles/t.dir/src/profile" "$R/build/CMakeFiles/t.dir/src/model"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$R/src/profile/a.c"
printf 'int a(int);\nint b(int x) { return x ? a(x - 1) : 1; }\n' >"$R/src/profile/b.c"
printf 'int d(void);\nint c(void) { return d(); }\n' >"$R/src/profile/c.c"
printf 'int d(void) { return 4; }\n' >"$R/src/model/d.c"
for f in profile/a profile/b profile/c model/d; do
    cc -c -o "$R/build/CMakeFiles/t.dir/src/$f.c.o" "$R/src/$f.c" || fail "cc $f.c"
done
expect 1 python3 $S --root "$R"
has "$T/out" 'cycle: src/profile/a.c <-> src/profile/b.c'
has "$T/out" 'src/profile/a.c -> src/profile/b.c (b)'
has "$T/out" 'backward call: src/profile/c.c calls src/model/d.c (d; model comes after profile)'
# Without objects the check says so rather than passing.
expect 2 python3 $S --root "$R" --build "$T/none"
has "$T/err" 'no object files'
finish test_stages
