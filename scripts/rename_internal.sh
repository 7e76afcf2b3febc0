#!/bin/sh
# Gives the library's internal cross-file names a prefix of their own, psi_
# (pairsight internal), so that a reader tells the API (ps_, declared in
# include/pairsight.h) from the internals at a glance, as SQLite does with
# sqlite3_ and sqlite3Xxx. Every identifier that starts with ps_ in the C
# sources and is not declared in include/pairsight.h is renamed, in src/,
# tests/, bench/ and fuzz/ alike.
#   scripts/rename_internal.sh --list   print the names it would rename
#   scripts/rename_internal.sh          rename them in the working tree
# Run it once, on a tree where no other branch is in flight (every line that
# names an internal changes), then build and run scripts/test.sh.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files 'src/*.c' 'src/*.h' 'src/*.cpp' 'src/*.cu' 'tests/*.c' 'tests/*.h' 'bench/*.c' 'fuzz/*.c')
public=$(grep -oE '\bps_[A-Za-z0-9_]+' include/pairsight.h | sort -u)
# shellcheck disable=SC2086
# Names a macro makes by pasting (prefix##_new with prefix ps_ops) keep their
# spelling: the pasted part is not a name sed can see.
# shellcheck disable=SC2086
pasted=$(grep -ohE '##_[A-Za-z0-9_]+' $files | sed 's/^##_//' | sort -u)
keep=$(for p in $public; do for s in $pasted; do echo "${p}_$s"; done; done)
# shellcheck disable=SC2086
names=$(grep -ohE '\bps_[A-Za-z0-9_]+' $files | sort -u | grep -vxF "$public" | grep -vxF "$keep" || true)
if [ "${1:-}" = "--list" ]; then
    printf '%s\n' "$names"
    exit 0
fi
[ -n "$names" ] || { echo "rename_internal.sh: no internal ps_ names left"; exit 0; }
script=$(printf '%s\n' "$names" | sed 's/^ps_\(.*\)$/s\/\\bps_\1\\b\/psi_\1\/g/')
# shellcheck disable=SC2086
printf '%s\n' "$script" | sed -i -f - $files
echo "rename_internal.sh: renamed $(printf '%s\n' "$names" | wc -l) names in $(echo $files | wc -w) files" >&2
