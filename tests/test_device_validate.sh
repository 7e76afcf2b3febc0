#!/bin/sh
# scripts/device_run.sh (the prepared command of a GPU machine) as a dry run
# on the fake backend, as on the GPU machine: from the device bundle
# (scripts/device_bundle.sh) in a chroot holding only glibc, a few tools and
# the bundle (tests/bundle_chroot.sh), so that a library missing from the
# bundle fails it; where chroot is not permitted, from the bundle without it
# (said on stdout). Its step 3, scripts/device_validate.sh end to end: 5 TPC
# counts forming 5 splits, both profiles with counters, 100 x 10
# co-executions, the fixed cost, export and check, the twin's and a
# PairSight model's predictions scored in the table; at most 8 files.
P=${1:?usage: test_device_validate.sh PAIRSIGHT}
T=$(mktemp -d /tmp/ps_test_validate.XXXXXX)
trap 'rm -rf "$T"' EXIT
. tests/bundle_chroot.sh
BUILD=${PS_BUILD_DIR:-$(dirname "$P")}
bundle_host_only "$BUILD"
ARGS="--backend fake --quick --no-torch"
bundle_chroot "$T/root" "$BUILD" > "$T/chroot.log"
case $? in
0)
    # shellcheck disable=SC2086
    bundle_run "$T/root" /bin/sh /src/scripts/device_run.sh --bundle /b --out /tmp/o $ARGS > "$T/run.log" 2>&1 ||
        { cat "$T/run.log" "$T/root/tmp/o/log.txt"; echo "FAIL: device_run.sh in the bundle's chroot"; exit 1; }
    mv "$T/root/tmp/o" "$T/o"
    echo "ran through the device bundle in a chroot" ;;
77)
    cat "$T/chroot.log"
    echo "without a chroot: the device bundle on this system"
    # (its size is test_device_bundle's to check: a sanitized build's is larger)
    sh scripts/device_bundle.sh --no-build --build "$BUILD" --out "$T/b" --max-mib 1024 $BUNDLE_HOST_ONLY \
        > "$T/b.log" 2>&1 ||
        { cat "$T/b.log"; echo "FAIL: device_bundle.sh"; exit 1; }
    # shellcheck disable=SC2086
    sh scripts/device_run.sh --bundle "$T/b" --out "$T/o" $ARGS > "$T/run.log" 2>&1 ||
        { cat "$T/run.log" "$T/o/log.txt"; echo "FAIL: device_run.sh"; exit 1; } ;;
*) cat "$T/chroot.log"; echo "FAIL: making the bundle's chroot"; exit 1 ;;
esac
rm -rf "$T/root"
cp "$T/o/log.txt" "$T/log"
mkdir "$T/v"
tar -C "$T/v" -xzf "$T/o/campaign.tar.gz" || { echo "FAIL: campaign.tar.gz"; exit 1; }
fail() { cat "$T/log"; echo "FAIL: $1"; exit 1; }
grep -q "^TPC counts: 7,14,27,40,47$" "$T/log" || fail "TPC choice"
grep -q "^splits: 7/47,14/40,27/27,40/14,47/7$" "$T/log" || fail "splits"
grep -q "coexec.csv: coexec, 1000 rows, 2 (model, batch) groups" "$T/log" || fail "100 x 10 rows"
grep -q "1755 op rows, 351 counter rows, 1000 coexec rows" "$T/log" || fail "status"
grep -q "^100 experiments, 1000 runs; measured delta: HP 1\.[0-9]*, LP 1\.[0-9]*" "$T/log" || fail "table head"
for p in no-interference twin-h200 pairsight-sim-h200; do
    grep -Eq "^$p +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ " "$T/log" || fail "table row $p"
done
grep -Eq "^ *pairsight-sim-h200 .* 0\.[5-9][0-9]* +0\.[5-9][0-9]*$" "$T/log" || fail "pairsight correlation"
grep -Eq "^ 27/27 +6\.[0-9]+ +[56]\.[0-9]+$" "$T/v/fixed_cost.txt" || fail "fixed cost"
for f in ops.csv coexec.csv twin.csv pairsight.csv table.json fixed_cost.json info.json; do
    [ -s "$T/v/$f" ] || fail "no $f in campaign.tar.gz"
done
n=$(ls "$T/o" | wc -l)
[ "$n" -le 8 ] || fail "$n files under OUT, at most 8 come back"
for f in log.txt summary.txt info.json smoke.tar.gz campaign.tar.gz table.txt; do
    [ -s "$T/o/$f" ] || fail "device_run wrote no $f"
done
grep -q "^smoke exit 0" "$T/o/summary.txt" || fail "smoke step: $(cat "$T/o/summary.txt")"
grep -q "^validate exit 0" "$T/o/summary.txt" || fail "validate step: $(cat "$T/o/summary.txt")"
tar -tzf "$T/o/smoke.tar.gz" | grep -q "coexec.csv" || fail "smoke.tar.gz lacks coexec.csv"
echo ok
