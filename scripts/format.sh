#!/bin/sh
# clang-format with the project's .clang-format (which matches the code as it
# is: 4 spaces, functions' braces on their own line, 120 columns).
#   scripts/format.sh FILE...        format the files in place
#   scripts/format.sh --check [BASE] fail when a line changed since BASE is not
#                                    formatted (default BASE: the merge base
#                                    with main, or HEAD~1 on main itself); CI
#                                    runs this: new and changed code is held
#                                    to the style without reformatting history
#   scripts/format.sh --check --all  fail when any C file is not formatted
#                                    (prints how many lines would change)
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed (scripts/setup.sh)" >&2; exit 1; }
files() { git ls-files 'src/*.c' 'src/*.h' 'src/*.cpp' 'src/*.cu' 'include/*.h' 'tests/*.c' 'tests/*.h' \
    'bench/*.c' 'fuzz/*.c'; }
if [ "${1:-}" != "--check" ]; then
    [ $# -gt 0 ] || { echo "usage: scripts/format.sh FILE... | --check [BASE | --all]" >&2; exit 2; }
    exec clang-format -i "$@"
fi
if [ "${2:-}" = "--all" ]; then
    bad=0
    for f in $(files); do
        n=$(clang-format "$f" | diff "$f" - | grep -c '^<' || true)
        [ "$n" -eq 0 ] || { echo "$f: $n lines"; bad=$((bad + n)); }
    done
    [ "$bad" -eq 0 ] || { echo "format.sh: $bad lines are not formatted" >&2; exit 1; }
    exit 0
fi
base=${2:-}
if [ -z "$base" ]; then
    base=$(git merge-base HEAD main 2>/dev/null || true)
    [ -n "$base" ] && [ "$base" != "$(git rev-parse HEAD)" ] || base=$(git rev-parse -q --verify HEAD~1 || true)
    [ -n "$base" ] || { echo "format.sh: no earlier commit to compare with; nothing to check"; exit 0; }
fi
# git clang-format looks only at the lines changed since base (and the
# working tree); --diff prints what it would change.
out=$(git clang-format --diff --extensions c,h,cpp,cu "$base" -- $(files) 2>&1 || true)
case $out in
"" | *"no modified files to format"* | *"clang-format did not modify any files"*)
    echo "format.sh: lines changed since $(git rev-parse --short "$base") are formatted"
    exit 0 ;;
esac
printf '%s\n' "$out"
echo "format.sh: the lines above, changed since $(git rev-parse --short "$base"), are not formatted:" \
    "run scripts/format.sh on the files (or git clang-format $base)" >&2
exit 1
