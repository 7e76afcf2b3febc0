# The harness of the CLI test scripts, sourced after CLI is set:
#   CLI=${1:?usage: test_x.sh PAIRSIGHT}
#   . tests/clitest.sh
# T is a temporary folder removed at exit; fail counts a failure and goes on;
# expect CODE CMD... runs CMD with stdout in $T/out and stderr in $T/err and
# checks its exit status; has FILE TEXT checks that FILE holds TEXT; finish
# NAME ends the script, with exit 1 when anything failed.
T=$(mktemp -d /tmp/ps_cli_test.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() {
    want=$1; shift
    "$@" >"$T/out" 2>"$T/err"; got=$?
    [ "$got" -eq "$want" ] || fail "exit $got, expected $want: $* ($(cat "$T/err"))"
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(cat "$1")"; }
finish() {
    [ "$fails" -eq 0 ] || { echo "$1: $fails failures"; exit 1; }
    echo "$1: ok"
}
