#!/bin/sh
# Gives the library's internal cross-file names a prefix of their own, psi_
# (pairsight internal), so that a reader tells the API (ps_, declared in
# include/pairsight.h) from the internals at a glance, as SQLite does with
# sqlite3_ and sqlite3Xxx. Every identifier that starts with ps_ in the C
# sources and is not declared in include/pairsight.h is renamed, in src/,
# tests/, bench/ and fuzz/ alike. Then every symbol that the built
# libpairsight.a exports without the ps_ or psi_ prefix (calib_fit, cl_*,
# queries_load, shard_open, sim_*, ...; nm of BUILD/libpairsight.a, default
# build/) gains psi_ in front, in those files and in docs/*.md, so that no
# internal can collide with a user's symbol (tests/test_symbols.sh checks it).
#   scripts/rename_internal.sh --list [BUILD]   print the names it would rename
#   scripts/rename_internal.sh [BUILD]          rename them in the working tree
# Run it once, on a tree where no other branch is in flight (every line that
# names an internal changes), after a build of that tree, then build again and
# run scripts/test.sh.
set -eu
cd "$(dirname "$0")/.."
files=$(git ls-files 'src/*.c' 'src/*.h' 'src/*.cpp' 'src/*.cu' 'tests/*.c' 'tests/*.h' 'bench/*.c' 'fuzz/*.c')
public=$(cat include/pairsight*.h | grep -oE '\bps_[A-Za-z0-9_]+' | sort -u)
# shellcheck disable=SC2086
# Names a macro makes by pasting (prefix##_new with prefix ps_ops) keep their
# spelling: the pasted part is not a name sed can see.
# shellcheck disable=SC2086
pasted=$(grep -ohE '##_[A-Za-z0-9_]+' $files | sed 's/^##_//' | sort -u)
keep=$(for p in $public; do for s in $pasted; do echo "${p}_$s"; done; done)
# shellcheck disable=SC2086
names=$(grep -ohE '\bps_[A-Za-z0-9_]+' $files | sort -u | grep -vxF "$public" | grep -vxF "$keep" || true)
list=0
if [ "${1:-}" = "--list" ]; then
    list=1
    shift
fi
build=${1:-build}
lib=$build/libpairsight.a
[ -f "$lib" ] || { echo "rename_internal.sh: no $lib: build first (or name the build folder)" >&2; exit 2; }
# The library's exported symbols without ps_ or psi_ (nm -g: global; defined).
bare=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | grep -v '^psi\?_' |
    sort -u || true)
# Only ps_ names that the library exports are renamed: the others are words
# in strings and comments (temporary-file prefixes, "ps_table_builder_*").
exported=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u)
names=$(printf '%s\n' "$names" | grep -xF "$exported" || true)
if [ "$list" = 1 ]; then
    [ -z "$names" ] || printf '%s\n' "$names"
    [ -z "$bare" ] || printf '%s\n' "$bare"
    exit 0
fi
if [ -n "$names" ]; then
    script=$(printf '%s\n' "$names" | sed 's/^ps_\(.*\)$/s\/\\bps_\1\\b\/psi_\1\/g/')
    # shellcheck disable=SC2086
    printf '%s\n' "$script" | sed -i -f - $files
    echo "rename_internal.sh: renamed $(printf '%s\n' "$names" | wc -l) ps_ names in $(echo $files | wc -w) files" >&2
fi
if [ -n "$bare" ]; then
    docs=$(git ls-files 'docs/*.md')
    # A name whose psi_ form is taken already becomes psi_NAME_impl instead.
    # shellcheck disable=SC2086
    taken=$(grep -ohE '\bpsi_[A-Za-z0-9_]+' $files | sort -u)
    script=$(printf '%s\n' "$bare" | while IFS= read -r b; do
        to=psi_$b
        printf '%s\n' "$taken" | grep -qxF "$to" && to=${to}_impl
        printf 's/\\b%s\\b/%s/g\n' "$b" "$to"
    done)
    # shellcheck disable=SC2086
    printf '%s\n' "$script" | sed -i -f - $files $docs
    echo "rename_internal.sh: gave psi_ to $(printf '%s\n' "$bare" | wc -l) exported names" >&2
fi
[ -n "$names$bare" ] || echo "rename_internal.sh: no internal names left to rename"
