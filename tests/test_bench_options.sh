#!/bin/sh
# bench_predict and bench_floor: -h teaches (what is timed, ranges, examples)
# on stdout with exit 0; a bad value, an unknown option or kernel, a missing
# value or file, or a stray argument is an error naming the option and what
# was expected (exit 2), before any work. Usage: test_bench_options.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_bench_options.sh PAIRSIGHT}
. tests/clitest.sh
B=$(dirname "$CLI")
for b in bench_predict bench_floor; do
    [ -x "$B/$b" ] || { echo "no $B/$b"; exit 1; }
    expect 0 "$B/$b" -h
    has "$T/out" "examples:"
    has "$T/out" "(default"
done
bad() { # bad PROGRAM ARGS... -- MESSAGE
    prog=$1; shift
    args=""
    while [ "$1" != "--" ]; do args="$args $1"; shift; done
    shift
    # shellcheck disable=SC2086
    expect 2 "$B/$prog" $args
    has "$T/err" "$1"
    [ -s "$T/out" ] && fail "$prog$args printed on stdout: $(cat "$T/out")"
}
bad bench_predict -t 0 -- "-t: bad value '0': expected an integer in 1..100000"
bad bench_predict -t abc -- "-t: bad value 'abc'"
bad bench_predict -t 5x -- "-t: bad value '5x'"
bad bench_predict -d 99 -- "-d: bad value '99': expected an integer in 1..20"
bad bench_predict -r -1 -- "-r: bad value '-1'"
bad bench_predict -m 2 -- "-m: bad value '2': expected a fraction in [0, 1)"
bad bench_predict -c -5 -- "-c: bad value '-5'"
bad bench_predict -k foo -- "-k: unknown kernel 'foo'"
bad bench_predict -k avx2,,qs -- "-k: unknown kernel ''"
bad bench_predict -x -- "unknown option -x"
bad bench_predict -t -- "-t needs a value"
bad bench_predict junk -- "unexpected argument 'junk'"
bad bench_predict -l "$T/none.json" -- "none.json: cannot read"
bad bench_floor -t 0 -- "-t: bad value '0': expected an integer in 1..100000"
bad bench_floor -r abc -- "-r: bad value 'abc'"
bad bench_floor -x -- "unknown option -x"
bad bench_floor -r -- "-r needs a value"
bad bench_floor 5 -- "unexpected argument '5'"
finish test_bench_options
