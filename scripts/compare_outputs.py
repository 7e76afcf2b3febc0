#!/usr/bin/env python3
"""Compare what two builds of pairsight answer: CLI commands, service
replies and Python calls, one line per difference (issue 40: "compare 100+
commands' output before and after").

Usage: scripts/compare_outputs.py BEFORE AFTER [--keep DIR]

BEFORE and AFTER are build folders (or copies of one) holding `pairsight`,
`libpairsight.so.0` and, when the Python package differs from this
checkout's python/, a copy of it as python/ (git archive REV python | tar
-x -C BEFORE). The inputs (a small simulated
campaign, a model trained on it, tests/data/serve's co-location model) are
made once with AFTER's CLI; then every case runs with each build, and the
outputs (exit code, stdout, stderr; HTTP status and body; Python's result or
its exception) are compared after the run times are blanked (plan_seconds,
loaded_at, the timing of progress lines). Prints "compare: N of N cases
identical" and exits 0 when all are, 1 otherwise. Runs in about a minute on
2 cores; needs /usr/bin/python3's nothing but the standard library.
"""
import difflib, json, os, re, shutil, signal, subprocess, sys, tempfile, time
import urllib.error, urllib.request

from localport import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SD = os.path.join(ROOT, "tests/data/serve")


def blank(text):
    text = re.sub(r'"(plan_seconds|loaded_at|plan_us|train_seconds|query_us)":\s*[-0-9.e+]+', r'"\1":0', text)
    text = re.sub(r"\d+(\.\d+)? ?(ms|s)\b", "T", text)
    return text


def run(bin_dir, args, stdin=None):
    p = subprocess.run([os.path.join(bin_dir, "pairsight")] + args, capture_output=True, text=True, input=stdin,
                       timeout=120)
    return "rc=%d\n--stdout\n%s\n--stderr\n%s" % (p.returncode, blank(p.stdout), blank(p.stderr))


def cli_cases(d):
    m, o = ["--model", d + "/m.psm"], ["--ops", d + "/c/ops.csv"]
    cases = []
    for hp in ["resnet50:8", "bert-base:8"]:
        for lp in ["bert-base:8", "resnet50:8", "bert-base:8,resnet50:8"]:
            for extra in [["--slo-factor", "1.3"], ["--slo-factor", "1.1", "--coverage", "0"],
                          ["--slo-factor", "2", "--time-value", "1"], ["--slo-ns", "6e6"],
                          ["--slo-factor", "1.5", "--lp-start", "37", "--alone-run-ns", "20000"]]:
                cases.append(["plan"] + m + o + ["--hp", hp, "--lp", lp] + extra)
    bad = [["--slo-factor", "0.5"], ["--slo-factor", "1.2", "--slo-ns", "5"], [], ["--slo-factor", "1.2",
           "--coverage", "0.3"], ["--slo-factor", "1.2", "--lp-start", "-1"], ["--slo-factor", "x"],
           ["--slo-factor", "1.2", "--time-value", "101"], ["--slo-factor", "1.2", "--alone-run-ns", "2e12"],
           ["--slo-factor", "1.2", "--bogus", "1"], ["--slo-factor", "1.2", "--slo-facto", "1"]]
    for extra in bad:
        cases.append(["plan"] + m + o + ["--hp", "resnet50:8", "--lp", "bert-base:8"] + extra)
    cases += [["plan", "--help"], ["plan", "--hp", "x"], ["predict", "--help"], ["serve", "--help"], ["--help"],
              ["replay", "--help"]]
    r = ["replay"] + m + o + ["--hp", "resnet50:8", "--lp", "bert-base:8", "--requests", "20", "--warmup", "20"]
    for extra in [["--policies", "dedicated,orion", "--json"], ["--policies", "dedicated,pairsight", "--load", "0.3",
                  "--seed", "7", "--json"], ["--load", "1"], ["--seed", "-1"], ["--requests", "5"],
                  ["--policies", "nope"], ["--stretch", "0.5"], ["--orion-lp-tpcs", "4097"]]:
        cases.append(r + extra)
    q = d + "/q.csv"
    for extra in [[], ["--coverage", "0.9"], ["--compose", "index"], ["--coverage", "0.95", "--compose", "index"],
                  ["--coverage", "0.2"], ["--compose", "x"]]:
        cases.append(["predict"] + m + o + ["--queries", q, "--out", "-"] + extra)
    w = ["--workloads", SD + "/workloads.csv"]
    for c in ["b", "c", "b,c", "b+c"]:
        cases.append(["colocate", "select", "--model", d + "/r.psc"] + w + ["--target", "a", "--candidates", c])
    sel = ["colocate", "select", "--model", d + "/r.psc"] + w
    for extra in [["--target", "a", "--candidates", "b,c+b,c", "--json"], ["--target", "b", "--candidates", "a,c",
                  "--shares", "50/25", "--json"], ["--target", "a", "--candidates", "b+c", "--shares", "30/20/10"],
                  ["--target", "a", "--candidates", "b", "--gpu", "TESTGPU", "--json"], ["--target", "aa",
                  "--candidates", "b"], ["--target", "a", "--candidates", "b,zc"], ["--target", "a", "--candidates",
                  ""], ["--target", "a", "--candidates", "b,,c"], ["--target", "a", "--candidates", "b,c,b"],
                  ["--target", "a", "--candidates", "b", "--shares", "50/50/50"], ["--target", "a", "--candidates",
                  "b", "--shares", "0/5"], ["--target", "a", "--candidates", "b", "--gpu", "X"], ["--target", "a"],
                  ["--help"]]:
        cases.append(sel + extra)
    pl = ["colocate", "place", "--model", d + "/r.psc"] + w
    for extra in [["--jobs", "a,b*2,c", "--gpus", "2", "-q"], ["--jobs", "a,b*2,c", "--gpus", "2", "--json", "-q"],
                  ["--jobs", "a*3,b,c", "--gpus", "1:TESTGPU,1:TESTGPU", "--max-per-gpu", "3", "--shares", "100,50",
                  "--json", "-q"], ["--jobs", "a,b,c*2", "--gpus", "1", "--allow-wait", "-q"], ["--jobs", "a,b,c",
                  "--gpus", "2", "--time-limit", "1", "--json", "-q"], ["--jobs", "", "--gpus", "2"], ["--jobs",
                  "a*0", "--gpus", "2"], ["--jobs", "a,b", "--gpus", "0"], ["--jobs", "a,b", "--gpus", "1:NOPE"],
                  ["--jobs", "a,zz", "--gpus", "1"], ["--jobs", "a,b", "--gpus", "1", "--time-limit", "90000"],
                  ["--jobs", "a,b", "--gpus", "1", "--max-per-gpu", "9"], ["--jobs", "a,b", "--gpus", "1", "--shares",
                  "100,0"], ["--jobs", "a,b", "--gpus", "1:"], ["--jobs", "a"], ["--help"]]:
        cases.append(pl + extra)
    cases.append(["colocate", "--help"])
    for s in [["--set", "a,b"], ["--set", "a,b", "--floor", "a=0.1", "--json"], ["--set", "a,b", "--floor", "b=50"]]:
        cases.append(["colocate", "shares", "--model", d + "/r.psc"] + w + s)
    # the documents the library writes whole for the CLI: replay's planners, train, model info, eval
    cx = ["--coexec", d + "/c/coexec.csv"]
    for extra in [[], ["--stretch", "1e9", "--policies", "intensity,pairsight"]]:
        cases.append(r + cx + extra + ["--json", "-q"])
    cases += [["model", "info", d + "/m.psm", "--json"], ["model", "info", d + "/m.psm"],
              ["train"] + o + cx + ["--out", d + "/t.psm", "--threads", "1", "--depths", "3", "--etas", "0.3",
                                    "--rounds", "10", "--json", "-q"],
              ["eval"] + m + o + cx + ["--mlp-epochs", "2", "--threads", "1", "--json", "-q"]]
    return cases


def http(port, method, path, body):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    h = {"Content-Type": "application/json"} if method == "POST" else {}
    r = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(r, timeout=30) as f:
            return "%d %s" % (f.status, blank(f.read().decode()))
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, blank(e.read().decode()))


def serve_cases(queries):
    P = "/v1/plan"
    cases = [("POST", "/v1/predict", {"queries": queries}), ("POST", "/v1/predict", {"queries": queries[:3],
             "coverage": 0.9}), ("POST", "/v1/predict", {"queries": queries[:3], "compose": "index"}),
             ("POST", "/v1/predict", {"queries": queries[:2], "coverage": None}),
             ("POST", "/v1/predict", {"queries": queries[:2], "coverage": 0.2}),
             ("POST", "/v1/predict", {"queries": queries[:2], "coverage": "x"}),
             ("POST", "/v1/predict", {"queries": queries[:2], "compose": "y"}), ("POST", "/v1/predict", {}),
             ("POST", "/v1/predict", {"queries": []}), ("POST", "/v1/predict", b"[1]"), ("POST", "/v1/predict", b"{"),
             ("POST", "/v1/predict", {"queries": {k: [q[k] for q in queries[:4]] for k in queries[0]}}),
             ("POST", "/v1/predict", {"queries": [dict(queries[0], hp_batch="x")]}),
             ("POST", "/v1/predict", {"queries": [{k: v for k, v in queries[0].items() if k != "lp_len"}]})]
    for hp in ["resnet50:8", "bert-base:8"]:
        for lp in [["bert-base:8"], "bert-base:8,resnet50:8", ["resnet50:8", "bert-base:8"]]:
            for extra in [{"slo_factor": 1.3}, {"slo_factor": 1.1, "coverage": 0}, {"slo_ns": 6e6},
                          {"slo_factor": 2, "time_value": 1, "lp_start": 37, "alone_run_ns": 2e4}]:
                cases.append(("POST", P, dict({"hp": hp, "lp": lp}, **extra)))
    for bad in [{}, {"hp": "resnet50:8"}, {"hp": 5, "lp": ["bert-base:8"]}, {"hp": "resnet50", "lp": "x:1"},
                {"hp": "resnet50:8", "lp": []}, {"hp": "resnet50:8", "lp": [1]}, {"hp": "resnet50:8", "lp": ""},
                {"hp": "resnet50:8", "lp": "bert-base:8"}, {"hp": "resnet50:8", "lp": "bert-base:8", "slo_ns": 1,
                "slo_factor": 1.2}, {"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 0.5},
                {"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": "1.2"},
                {"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 1.2, "lp_start": 1.5},
                {"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 1.2, "coverage": 0.3},
                {"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 1.2, "time_value": 200},
                {"hp": "resnet50:8", "lp": "nope:8", "slo_factor": 1.2}, {"hp": "resnet50:8", "lp": ["a:1"] * 65,
                "slo_factor": 1.2}]:
        cases.append(("POST", P, bad))
    S = "/v1/colocate/score"
    cases += [("POST", S, {"target": "a", "candidates": ["b", {"workloads": ["c", "b"]}]}),
              ("POST", S, {"target": "a", "candidates": ["b", "c+b"], "shares": [50, 25, 25]}),
              ("POST", S, {"target": "a", "candidates": ["b"], "shares": [50, 25, 25]}),
              ("POST", S, {"target": "a", "candidates": ["b", "c"], "gpu": "TESTGPU"}),
              ("POST", S, {"target": "zz", "candidates": ["b"]}), ("POST", S, {"target": "a", "candidates": ["b+x"]}),
              ("POST", S, {"target": "a", "candidates": [{"workloads": ["b"], "shares": [150]}]}),
              ("POST", S, {"target": "a"}), ("POST", S, {"candidates": ["b"]}),
              ("POST", "/v1/colocate/shares", {"set": ["a", "b"], "floor": {"a": 0.1}}),
              ("POST", "/v1/colocate/shares", {"set": "a,b", "floor": "b=50"}),
              ("POST", "/v1/colocate/shares", {"set": ["a", "zz"]}), ("POST", "/v1/colocate/shares", {"set": []}),
              ("POST", "/v1/colocate/select", {"target": "a", "candidates": ["b", "c+b", "c"], "shares": [50, 25]}),
              ("POST", "/v1/colocate/select", {"target": "a", "candidates": "b,c", "gpu": "TESTGPU"}),
              ("POST", "/v1/colocate/select", {"target": "aa", "candidates": ["b"]}),
              ("POST", "/v1/colocate/select", {"target": "a", "candidates": ["b", "b"]}),
              ("POST", "/v1/colocate/place", {"jobs": ["a", "b", "b", "c"], "gpus": 2, "time_limit": 2}),
              ("POST", "/v1/colocate/place", {"jobs": "a*3,b,c", "gpus": ["TESTGPU", None], "max_per_gpu": 3,
                                              "shares": [100, 50], "allow_wait": True}),
              ("POST", "/v1/colocate/place", {"jobs": "a,b", "gpus": 1, "time_limit": 0}),
              ("POST", "/v1/colocate/place", {"jobs": "a,zz", "gpus": 1})]
    pod = {"metadata": {"annotations": {"pairsight.io/workload": "a", "pairsight.io/min-throughput": "0.5"}}}
    node = lambda n, g: {"metadata": {"name": n, "annotations": {"pairsight.io/gpus": json.dumps(g)}}}
    args = {"Pod": pod, "Nodes": {"items": [node("n1", {"type": "TESTGPU", "gpus": [["b"], []]}),
                                            node("n2", {"type": "TESTGPU", "gpus": [["b", "c"]]}),
                                            node("n3", {"type": "TESTGPU", "gpus": [[{"workload": "c",
                                                                                      "min_throughput": 0.99}]]}),
                                            node("n4", {"type": "X", "gpus": [["b"]]}), node("n5", {})]}}
    cases += [("POST", "/k8s/filter", args), ("POST", "/k8s/prioritize", args),
              ("POST", "/k8s/filter", {"Pod": pod, "NodeNames": ["n1"]}), ("POST", "/k8s/filter", {"Pod": pod})]
    cases += [("GET", "/v1/models", None), ("GET", "/healthz", None), ("GET", "/readyz", None),
              ("GET", "/nope", None), ("GET", "/v1/predict", None), ("POST", "/healthz", b"{}"),
              ("POST", "/v1/reload", b"{}"), ("GET", "/metrics", None)]
    return cases


def serve_run(bin_dir, d, cases):
    port = free_port()
    p = subprocess.Popen([os.path.join(bin_dir, "pairsight"), "serve", "--model", d + "/m.psm", "--ops", d +
                          "/c/ops.csv", "--coloc", d + "/r.psc", "--workloads", SD + "/workloads.csv", "--listen",
                          "127.0.0.1:%d" % port, "--threads", "1", "-q"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            try:
                http(port, "GET", "/healthz", None)
                break
            except OSError:
                time.sleep(0.05)
        out = [http(port, *c) for c in cases]
        # the metrics' duration histograms depend on time: keep the counts
        out[-1] = "\n".join(l for l in out[-1].split("\n") if "duration" not in l and "_slowdown_sum" not in l)
        return out
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(10)


# collect on the fake backend, in order in a folder of each build's own
# (relative paths, so that messages naming them agree): profile, counters,
# coexec, status, export, --devices (merged, and with a shard that fails)
# and refusals; then the files they wrote are compared.
FK = " --backend fake --batch 2 --tpcs 8,20,46"
SC = "scaling --backend fake --seconds 0.01 --model "
CL = "colocate --backend fake --seconds 0.01 --jobs "
CO = "coexec --backend fake --hp resnet50:2 --lp bert-base:2 --tpcs 8,20,46 --runs 3 --experiments 12"
COLLECT = ["profile --model resnet50 --db c.db" + FK, "profile --model bert-base --db c.db --json" + FK,
           CO + " --db c.db", "counters --model resnet50 --db c.db" + FK,
           "counters --model bert-base --tpcs 20,46 --db c.db -q" + FK, "status --db c.db", "status --db c.db --json",
           "export --db c.db --ops ops.csv --coexec coexec.csv", "export --db c.db --ops o2.csv --coexec ''",
           CO + " --db d.db --devices 0,1", "export --db d.db --ops '' --coexec d_co.csv -q",
           "profile --model resnet50 --db p.db --devices 1,0 --json" + FK,
           "export --db p.db --ops p_ops.csv --coexec ''", CO + " --db f.db --devices 0,1",
           CO + " --db f.db --devices 0,1 -q", "profile --model vgg16 --db c.db" + FK,
           "profile --model resnet50 --db c.db" + FK + " --tpcs 80", "profile --model resnet50 --db c.db" + FK +
           " --tpcs 0,x", "counters --model resnet50 --fake-no-permission --db c.db" + FK, "status --db none.db",
           CO + " --db c.db --seed 9 --shard 1/2", CO + " --db c.db --devices 0,0",
           "profile --model resnet50 --batch 2 --db x.db", "profile --model resnet50 --db g.db -q" + FK +
           " --tpcs 2,4-16:4,,20", "profile --model resnet50 --db g.db --json" + FK + " --tpcs 4-12:4",
           SC + "mobilenetv2 --batch 4 --shares 20,100", SC + "mobilenetv2 --batch 4 --shares 20,100",
           SC + "bert-base --batch 2 --shares 50,100 --json", "sh:head -n 2 workloads.csv > w && mv w workloads.csv",
           SC + "bert-base --batch 2 --shares 50,100", SC + "bert-base --batch 2 --shares 50,100 --json",
           "scaling --backend fake --seconds 0.01", "scaling --model resnet50 --seconds 0.01",
           CL + "mobilenetv2:4@50,bert-base:2@50", CL + "mobilenetv2:4@50,bert-base:2@50",
           CL + "mobilenetv2:4@30,bert-base:2@70 --id mine --json", CL + ",".join(["llama-3.2-1b:1000000@100"] * 16),
           CL + "vgg16:1@50"]
COLLECT_FILES = ["ops.csv", "coexec.csv", "o2.csv", "d_co.csv", "p_ops.csv", "workload_scaling.csv", "workloads.csv",
                 "colocations.csv"]


def collect_run(bin_dir, d, tag):
    w = os.path.join(d, "collect-" + tag)
    os.makedirs(w)
    # shard 0 fails: its message comes before shard 1 is waited for, in either build
    open(os.path.join(w, "f.db.shard0-of-2"), "w").write("not a database\n")
    out = []
    for c in COLLECT:  # "sh:" a shell command between two of pairsight's
        cmd = c[3:] if c.startswith("sh:") else "%s collect %s" % (os.path.abspath(os.path.join(bin_dir,
                                                                                                "pairsight")), c)
        p = subprocess.run(cmd, shell=True, cwd=w, capture_output=True, text=True, timeout=120)
        out.append("rc=%d\n--stdout\n%s\n--stderr\n%s" % (p.returncode, blank(p.stdout), blank(p.stderr)))
    for f in COLLECT_FILES:
        out.append(open(os.path.join(w, f)).read() if os.path.exists(os.path.join(w, f)) else "(no file)")
    return out


PY = r'''
import json, sys, pairsight as ps
d = sys.argv[1]
out = []
def case(f):
    try:
        r = f()
    except Exception as e:
        r = "%s: %s" % (type(e).__name__, e)
    if isinstance(r, dict):
        r.pop("plan_seconds", None)
        for p in (r["policies"].values() if isinstance(r.get("policies"), dict) else []):
            p.pop("plan_us", None)
    out.append(json.dumps(r, sort_keys=True, default=str))
m, o = ps.Model.load(d + "/m.psm"), ps.Ops.load(d + "/c/ops.csv")
for w in ["train", "coloc", "plan", "replay", "place", "nope"]:
    case(lambda: ps.default_params(w))
for hp, lp in [("resnet50", "bert-base"), ("bert-base", "resnet50")]:
    for kw in [{}, {"coverage": 0.9}, {"lp_start": 37}, {"nope": 1}, {"window": 0}]:
        case(lambda: m.plan(o, hp, 8, lp, 8, 6e6, **kw))
cx = ps.Coexec.load(d + "/c/coexec.csv")
for kw in [{}, {"intensity_train": cx, "policies": "intensity,pairsight", "stretch": 1e9}]:
    case(lambda: m.replay(o, "resnet50", 8, "bert-base", 8, requests=20, warmup=20, **kw))
print(json.dumps(out))
'''


def py_run(bin_dir, d):
    py = os.path.join(bin_dir, "python") if os.path.isdir(os.path.join(bin_dir, "python")) else os.path.join(ROOT,
                                                                                                          "python")
    env = dict(os.environ, PAIRSIGHT_LIBRARY=os.path.join(bin_dir, "libpairsight.so.0"), PYTHONPATH=py,
               OMP_NUM_THREADS="1")
    p = subprocess.run(["/usr/bin/python3", "-c", PY, d], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        return ["python failed: " + p.stderr[-2000:]]
    return [extra + s for extra, s in zip(["py "] * 10000, json.loads(p.stdout))]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    d = tempfile.mkdtemp(prefix="ps_compare.")
    try:
        cli = os.path.join(after, "pairsight")
        subprocess.run([cli, "simulate", "--gpu", "a100", "--models", "resnet50,bert-base", "--experiments", "300",
                        "--runs", "2", "--threads", "1", "--seed", "5", "--out", d + "/c", "-q"], check=True)
        subprocess.run([cli, "train", "--ops", d + "/c/ops.csv", "--coexec", d + "/c/coexec.csv", "--out", d +
                        "/m.psm", "--threads", "1", "--depths", "4", "--etas", "0.3", "--rounds", "40", "-q"],
                       check=True)
        subprocess.run([cli, "colocate", "train", "--workloads", SD + "/workloads.csv", "--colocations", SD +
                        "/colocations.csv", "--kind", "ratio", "--out", d + "/r.psc"], check=True,
                       capture_output=True)
        rows = open(d + "/c/coexec.csv").read().split("\n")
        open(d + "/q.csv", "w").write("\n".join(rows[:40]) + "\n")
        head = rows[0].split(",")
        ints = {"hp_batch", "hp_start", "hp_len", "lp_batch", "lp_start", "lp_len", "hp_tpcs", "lp_tpcs"}
        keys = ["gpu", "hp_model", "hp_batch", "hp_start", "hp_len", "lp_model", "lp_batch", "lp_start", "lp_len",
                "hp_tpcs", "lp_tpcs"]
        queries = []
        for r in rows[1:30]:
            v = dict(zip(head, r.split(",")))
            queries.append({k: int(v[k]) if k in ints else v[k] for k in keys})
        cc, sc = cli_cases(d), serve_cases(queries)
        outs = {}
        for b, tag in ((before, "before"), (after, "after")):
            outs[b] = [run(b, c) for c in cc] + serve_run(b, d, sc) + py_run(b, d) + collect_run(b, d, tag)
        names = [" ".join(c) for c in cc] + ["%s %s %s" % (m, p, json.dumps(x)[:80] if isinstance(x, dict) else x)
                                              for m, p, x in sc] + ["python call %d" % i for i in range(len(
                                                  outs[after]) - len(cc) - len(sc) - len(COLLECT) - len(
                                                  COLLECT_FILES))] + ["collect " + c for c in COLLECT] + \
            ["collect's file " + f for f in COLLECT_FILES]
        same = 0
        for i, (x, y) in enumerate(zip(outs[before], outs[after])):
            if x == y:
                same += 1
            else:
                diff = [l for l in difflib.unified_diff(x.split("\n"), y.split("\n"), lineterm="", n=0)
                        if l[:1] in "+-" and l[:3] not in ("+++", "---")]
                print("DIFFERS: %s\n  %s" % (names[i], "\n  ".join(d[:300] for d in diff[:12])))
        n = max(len(outs[before]), len(outs[after]))
        ok = sum(1 for y in outs[after] if y.startswith(("rc=0", "200 ")) or (y.startswith("py ") and not y.startswith("py \"")))
        nc = len(COLLECT) + len(COLLECT_FILES)
        print("compare: %d of %d cases identical (%d CLI, %d HTTP, %d Python, %d collect; %d of them succeed, the "
              "others are refusals)" % (same, n, len(cc), len(sc), n - len(cc) - len(sc) - nc, nc, ok))
        sys.exit(0 if same == n else 1)
    finally:
        if "--keep" not in sys.argv:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
