#!/bin/sh
# Atomic writes refuse to follow symbolic links (issue 30 item 1): a link
# planted at OUT.lock or at OUT.tmp.PID leaves its target untouched, for
# every command that writes through them (train, calibrate, import, model
# export, collect export, collect merge), and OUT never becomes a link. A
# second writer of one --out names the first writer's pid, never "pid 0".
# Usage: sh tests/test_out_symlinks.sh PAIRSIGHT
set -u
CLI=${1:?usage: test_out_symlinks.sh PAIRSIGHT}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
. tests/clitest.sh

expect 0 "$CLI" simulate --gpu a100 --experiments 30 --runs 1 --threads 1 --seed 3 --out "$T/c" -q
expect 0 "$CLI" simulate --gpu a100 --models resnet50,bert-base --min-len 20 --max-len 40 --experiments 40 \
    --runs 1 --threads 1 --seed 6 --out "$T/long" -q
expect 0 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$T/m.psm" \
    --threads 1 --depths 3 --etas 0.3 --rounds 4 -q
expect 0 "$CLI" collect coexec --backend fake --hp resnet50:2 --lp bert-base:2 --tpcs 8,20 --runs 1 \
    --experiments 4 --db "$T/a.db" -q
expect 0 "$CLI" collect profile --backend fake --batch 2 --tpcs 8,20 --model resnet50 --db "$T/a.db" -q
cp "$T/a.db" "$T/b.db"

victim() { printf 'precious\n' >"$T/victim"; }
untouched() { # $1: what wrote
    [ "$(cat "$T/victim")" = precious ] || fail "$1: the link's target was written: $(head -c 80 "$T/victim")"
}
# The commands, each writing $1 ($2 names it); run_cmd.sh holds them for
# the shell that execs one.
cat >"$T/run_cmd.sh" <<'END'
run_cmd() {
    case $2 in
    train) $X "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$1" --threads 1 --depths 3 \
        --etas 0.3 --rounds 4 -q ;;
    calibrate) $X "$CLI" calibrate --model "$T/m.psm" --ops "$T/long/ops.csv" --coexec "$T/long/coexec.csv" --out "$1" -q ;;
    import) $X "$CLI" import torch-trace tests/data/torch_trace.json --model x --tpcs 54 --out "$1" -q ;;
    export) $X "$CLI" collect export --db "$T/a.db" --ops "$1" --coexec "" -q ;;
    merge) $X "$CLI" collect merge "$T/b.db" --db "$1" -q ;;
    esac
}
exec_cmd() { X=exec run_cmd "$OUT" "$CMD"; }
END
X=
. "$T/run_cmd.sh"

for cmd in train calibrate import export merge; do
    out=$T/out_$cmd
    [ $cmd = merge ] && cp "$T/a.db" "$out"
    # A link at OUT.lock: refused (the lock cannot be taken), target intact.
    victim
    ln -sf "$T/victim" "$out.lock"
    run_cmd "$out" $cmd >"$T/out" 2>"$T/err" && fail "$cmd: ran with a link at its lock file"
    has "$T/err" "is a symbolic link"
    untouched "$cmd (OUT.lock)"
    rm -f "$out.lock"
    [ $cmd = merge ] && continue # merge writes the database in place
    # A link at OUT.tmp.PID, PID the writer's own (the shell that plants it
    # execs the command): the temporary file takes another name, the
    # output is a plain file.
    victim
    OUT=$out CMD=$cmd CLI=$CLI T=$T sh -c 'ln -s "$T/victim" "$OUT.tmp.$$" && . "$T/run_cmd.sh" && exec_cmd' \
        >"$T/out" 2>"$T/err" || fail "$cmd: exit $? with a link at OUT.tmp.PID: $(cat "$T/err")"
    untouched "$cmd (OUT.tmp.PID)"
    [ -L "$out" ] && fail "$cmd: the output became a symbolic link"
    [ -f "$out" ] || fail "$cmd: no output"
    rm -f "$out".tmp.*
done

# model export writes a folder of files, each through its own lock.
victim
mkdir -p "$T/x"
ln -sf "$T/victim" "$T/x/hp.ubj.lock"
expect 1 "$CLI" model export "$T/m.psm" --out "$T/x"
untouched "model export"

# A second writer of one --out names the first's pid, also while the first
# has taken the lock and not yet written its pid (that moment, stretched
# here by a holder that writes its pid 0.4 s late, gave "pid 0").
out=$T/race.psm
(
    exec 9>>"$out.lock"
    flock 9
    sleep 0.4
    echo 4242 >"$out.lock"
    sleep 1.5
) &
holder=$!
sleep 0.2
expect 1 "$CLI" train --ops "$T/c/ops.csv" --coexec "$T/c/coexec.csv" --out "$out" --threads 1 --rounds 2 -q
has "$T/err" "is being written by pid 4242"
wait $holder
finish test_out_symlinks
