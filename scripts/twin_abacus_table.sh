#!/bin/sh
# The A100 twin against Abacus's real co-runs (issue 28 section 4,
# docs/simulator.md "The twin against Abacus's A100"): import the artefact,
# capture the seven models' operator lists, simulate every dedicated
# experiment before and after calibrating on the 2-way files (launch and
# sharing; then launch, sharing and the kernels' FLOP rate), and print the
# markdown tables. With --doc, rewrites the block between the twin-abacus
# markers of docs/simulator.md instead of printing.
# Usage: scripts/twin_abacus_table.sh [--repo DIR] [--out DIR] [--pairsight BIN] [--fit-every N] [--doc]
#        scripts/twin_abacus_table.sh --from CAL.json CALF.json [--doc]
#          (CAL: `pairsight overlap twin --calibrate --json`, CALF: the same with --fit-flops)
# The repository: --repo, else $PS_ABACUS_REPO (no default). The
# operator lists need /usr/bin/python3 with torch and torchvision.
set -e
repo=${PS_ABACUS_REPO:-}
out=out/twin_abacus ps=build/pairsight doc= from= every=40
while [ $# -gt 0 ]; do
    case $1 in
    --repo) repo=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pairsight) ps=$2; shift 2 ;;
    --fit-every) every=$2; shift 2 ;;
    --doc) doc=1; shift ;;
    --from) from="$2 $3"; shift 3 ;;
    *) echo "usage: $0 [--repo DIR] [--out DIR] [--pairsight BIN] [--fit-every N] [--doc]" >&2; exit 2 ;;
    esac
done
if [ -z "$from" ]; then
    [ -n "$repo" ] || { echo "twin_abacus_table: no Abacus repository: pass --repo DIR or set PS_ABACUS_REPO" >&2; exit 2; }
    [ -d "$repo" ] || { echo "twin_abacus_table: no Abacus repository at $repo" >&2; exit 1; }
    mkdir -p "$out"
    "$ps" import abacus "$repo" --out "$out/overlap.csv"
    [ -d "$out/oplists" ] || PAIRSIGHT_LIBRARY=/nonexistent /usr/bin/python3 tools/abacus_oplists.py --out "$out/oplists"
    for fit in "" --fit-flops; do
        "$ps" overlap twin --overlap "$out/overlap.csv" --oplists "$out/oplists" --calibrate $fit \
            --fit-every "$every" --json > "$out/cal$fit.json"
    done
    from="$out/cal.json $out/cal--fit-flops.json"
fi
[ -n "$doc" ] && doc=docs/simulator.md
/usr/bin/python3 - $from "$every" "$doc" <<'PY'
import io, json, re, sys
out = io.StringIO()
_print = print
def print(*a, **k):
    _print(*a, file=out, **k)
cal, calf = (json.load(open(f)) for f in sys.argv[1:3])
runs = [("defaults", cal["before"]), ("launch + sharing", cal["after"]), ("+ FLOP rate", calf["after"])]
def f(v, fmt="%.1f"):
    return "n/a" if v is None else fmt % v
def params(p):
    return ("launch %.1f us, start %.1f us, stagger %.0f us, sm_pack %g, flop_scale %g" %
            (p["launch_us"], p["start_us"], p["stagger_us"], p["sm_pack"], p["flop_scale"]))
print("MAPE (%) of the median time over the dedicated experiments with two or more active processes;")
every = cal.get("fit_every", int(sys.argv[3]))
print("calibrated on %s 2-way experiment of each file only, scored on every experiment; "
      "`scripts/twin_abacus_table.sh --doc`.\n" % ("every" if every == 1 else "every %dth" % every))
for name, r in runs:
    print("- %s: %s" % (name, params(r["params"])))
print("\n| k | n | " + " | ".join("%s MAPE (bias)" % n for n, _ in runs) +
      " | real alpha | twin alpha (defaults / calibrated / + FLOP) | solo runs | twin solo MAPE (defaults / + FLOP) |")
print("|---|---|" + "---|" * len(runs) + "---|---|---|---|")
for k in sorted(cal["before"]["by_k"]):
    rs = [r["by_k"][k] for _, r in runs]
    print("| %s | %d | %s | %s | %s | %d | %s / %s |" % (
        k, rs[0]["n"], " | ".join("%s (%s)" % (f(x["mape"]), f(x["bias"], "%+.1f")) for x in rs),
        f(rs[0]["real_alpha"], "%.3f"), " / ".join(f(x["twin_alpha"], "%.3f") for x in rs), rs[0]["n_solo"],
        f(rs[0]["solo_mape"]), f(rs[2]["solo_mape"])))
print("\nBy file (k = 2 and 3; a file is a pair or a triple of models):\n")
print("| file | k | n | " + " | ".join(n for n, _ in runs) + " | real alpha | twin alpha (defaults / + FLOP) |")
print("|---|---|---|" + "---|" * len(runs) + "---|---|")
files = cal["before"]["by_file"]
for name in sorted(files, key=lambda n: (files[n]["k"], n)):
    rs = [r["by_file"][name] for _, r in runs]
    print("| %s | %d | %d | %s | %s | %s / %s |" % (
        name, rs[0]["k"], rs[0]["n"], " | ".join(f(x["mape"]) for x in rs), f(rs[0]["real_alpha"], "%.3f"),
        f(rs[0]["twin_alpha"], "%.3f"), f(rs[2]["twin_alpha"], "%.3f")))
text = out.getvalue().rstrip("\n")
if sys.argv[4]:
    doc = open(sys.argv[4]).read()
    new, n = re.subn(r"(<!-- twin-abacus:begin -->\n).*?(<!-- twin-abacus:end -->)",
                     lambda m: m.group(1) + text + "\n" + m.group(2), doc, flags=re.S)
    assert n == 1, "no twin-abacus markers in " + sys.argv[4]
    open(sys.argv[4] + ".tmp", "w").write(new)
    _print("twin_abacus_table: %s rewritten" % sys.argv[4], file=sys.stderr)
else:
    _print(text)
PY
[ -z "$doc" ] || mv "$doc.tmp" "$doc"
