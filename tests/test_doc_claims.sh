#!/bin/sh
# The statements of README.md and `pairsight --help` about names and stages
# hold (tests/test_doc_returns.c checks the header's return codes):
#  - the shared library exports only ps_ functions (nm -D);
#  - where the README says internal names use psi_, every other global
#    symbol of libpairsight.a does (true once issue 25's renaming lands; the
#    README says only what holds today);
#  - --help's data's way names every stage folder of src/, and only folders
#    that exist.
set -eu
CLI=${1:-build/pairsight}
B=$(dirname "$CLI")
fail() { echo "test_doc_claims: $*" >&2; exit 1; }
command -v nm >/dev/null || { echo "skip: nm (binutils) is needed"; exit 77; }

bad=$(nm -D --defined-only "$B/libpairsight.so.0" | awk '$2 ~ /^[TDBRW]$/ && $3 !~ /^ps_/ {print $3}' | head -5)
[ -z "$bad" ] || fail "libpairsight.so.0 exports non-ps_ symbols: $bad"
grep -q 'exports only' README.md || fail "README no longer says what the shared library exports"

if grep -q 'internal cross-file names with `psi_`\|internal names use `psi_`' README.md; then
    bad=$(nm -g --defined-only "$B/libpairsight.a" 2>/dev/null |
        awk '$2 ~ /^[TDBR]$/ && $3 !~ /^psi?_/ {print $3}' | sort -u | head -5)
    [ -z "$bad" ] || fail "README says internal names use psi_, but libpairsight.a has: $bad"
fi

help=$("$CLI" --help | sed -n "/^The data's way/,/^\$/p" | tr '\n' ' ')
for d in src/*/; do
    d=${d%/}
    case $d in src/cli | src/common) continue ;; esac
    case $d in src/profile | src/features | src/model)
        # The stages named by their folder's own name.
        echo "$help" | grep -q "${d#src/}" || fail "--help's data's way does not name ${d#src/}" ;;
    *) echo "$help" | grep -q "$d" || fail "--help's data's way does not name $d" ;;
    esac
done
for d in $(echo "$help" | grep -o 'src/[a-z]*'); do
    [ -d "$d" ] || fail "--help names $d, which does not exist"
done
echo "ok: doc claims"
