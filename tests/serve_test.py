"""pairsight serve on loopback, driven by urllib and raw sockets (tests/test_serve.sh).

Each part prints one line; a failure is counted and the run goes on. The
servers get free loopback ports found here; everything they write goes to a
temporary folder removed at exit.
"""
import csv, http.client, json, os, shutil, signal, socket, ssl, subprocess, tempfile, threading, time
import urllib.error, urllib.request

from serve_common import CLI, PROCS, check, cleanup, fail, finish, fnv, free_port, rss_kb, run

T = tempfile.mkdtemp(prefix="ps_serve_test.")
SD = "tests/data/serve"


class Server:
    def __init__(self, *extra, scheme="http", ctx=None, token=None):
        self.port = free_port()
        self.scheme, self.ctx, self.token = scheme, ctx, token
        self.log = open(os.path.join(T, "serve-%d.log" % self.port), "w")
        args = [CLI, "serve", "--model", MODEL, "--ops", OPS, "--listen", "127.0.0.1:%d" % self.port, "-q"]
        self.p = subprocess.Popen(args + list(extra), stderr=self.log)
        PROCS.append(self.p)
        for _ in range(200):
            try:
                if self.req("GET", "/healthz")[0] == 200:
                    return
            except (OSError, urllib.error.URLError):
                time.sleep(0.05)
        raise SystemExit("serve did not start: " + open(self.log.name).read())

    def req(self, method, path, body=None, headers=None, token=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        h = dict(headers or {})
        if method == "POST":
            h.setdefault("Content-Type", "application/json")
        tok = token if token is not None else self.token
        if tok:
            h["Authorization"] = "Bearer " + tok
        r = urllib.request.Request("%s://127.0.0.1:%d%s" % (self.scheme, self.port, path), data=data, method=method,
                                   headers=h)
        try:
            with urllib.request.urlopen(r, timeout=20, context=self.ctx) as f:
                return f.status, f.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def json(self, method, path, body=None, **kw):
        code, data = self.req(method, path, body, **kw)
        return code, json.loads(data)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        if self.p.wait(10) != 0:
            fail("serve exited %d" % self.p.returncode)


KEYS = ["gpu", "hp_model", "hp_batch", "hp_start", "hp_len", "lp_model", "lp_batch", "lp_start", "lp_len",
        "hp_tpcs", "lp_tpcs"]
INTS = {"hp_batch", "hp_start", "hp_len", "lp_batch", "lp_start", "lp_len", "hp_tpcs", "lp_tpcs"}


def setup():
    global MODEL, OPS, MODEL2, COLOC, QUERIES
    run("simulate", "--gpu", "a100", "--models", "resnet50,bert-base", "--experiments", "300", "--runs", "2",
        "--threads", "1", "--seed", "5", "--out", T + "/c", "-q")
    OPS = T + "/c/ops.csv"
    run("train", "--ops", OPS, "--coexec", T + "/c/coexec.csv", "--out", T + "/m1.psm", "--threads", "1",
        "--depths", "4", "--etas", "0.3", "--rounds", "40", "-q")
    run("train", "--ops", OPS, "--coexec", T + "/c/coexec.csv", "--out", T + "/m2.psm", "--threads", "1",
        "--depths", "3", "--etas", "0.3", "--rounds", "20", "-q")
    MODEL, MODEL2 = T + "/model.psm", T + "/m2.psm"
    shutil.copy(T + "/m1.psm", MODEL)
    COLOC = T + "/r.psc"
    run("colocate", "train", "--workloads", SD + "/workloads.csv", "--colocations", SD + "/colocations.csv",
        "--kind", "ratio", "--out", COLOC)
    rows = list(csv.DictReader(open(T + "/c/coexec.csv")))[:60]
    # a segment longer than the window too, composed from windows
    rows.append(dict(rows[0], hp_start="0", hp_len="40", lp_start="0", lp_len="33"))
    QUERIES = [{k: (int(r[k]) if k in INTS else r[k]) for k in KEYS} for r in rows]
    with open(T + "/q.csv", "w") as f:
        f.write(",".join(KEYS) + "\n")
        for q in QUERIES:
            f.write(",".join(str(q[k]) for k in KEYS) + "\n")


def happy(s):
    run("predict", "--model", MODEL, "--ops", OPS, "--queries", T + "/q.csv", "--coverage", "0.9", "--out",
        T + "/p.csv", "-q")
    want = list(csv.DictReader(open(T + "/p.csv")))
    cols = ["hp_ns_pred", "lp_ns_pred", "hp_delta_pred", "lp_delta_pred", "hp_ns_upper", "lp_ns_upper"]
    code, got = s.json("POST", "/v1/predict", {"queries": QUERIES, "coverage": 0.9})
    check(code == 200 and got["schema"] == "pairsight.predict.v1", "predict rows: %d %s" % (code, got))
    bad = [(c, i) for c in cols for i, w in enumerate(want) if float(w[c]) != got["predictions"][c][i]]
    check(not bad, "predict differs from the CLI at %s" % bad[:3])
    colq = {k: [q[k] for q in QUERIES] for k in KEYS if k != "gpu"}
    code, got2 = s.json("POST", "/v1/predict", {"queries": colq, "coverage": 0.9})
    check(code == 200 and got2["predictions"] == got["predictions"], "predict columns differ from rows")
    plan_args = ["--hp", "resnet50:8", "--lp", "bert-base:8", "--slo-factor", "1.3"]
    cli_plan = json.loads(run("plan", "--model", MODEL, "--ops", OPS, *plan_args, "-q"))
    code, plan = s.json("POST", "/v1/plan", {"hp": "resnet50:8", "lp": ["bert-base:8"], "slo_factor": 1.3})
    for p in (cli_plan, plan):
        p.pop("plan_seconds", None), p.pop("seconds", None)
    check(code == 200 and plan == cli_plan, "plan differs from the CLI: %s" % plan)
    # the plan operation's other members (window, lp_lengths, gpu) as the CLI's options
    more = {"window": 8, "lp_lengths": 2, "gpu": json.loads(run("model", "info", MODEL, "--json"))["gpu"]}
    cli_plan = json.loads(run("plan", "--model", MODEL, "--ops", OPS, *plan_args, "-q", "--window", "8",
                              "--lp-lengths", "2", "--gpu", more["gpu"]))
    code, plan = s.json("POST", "/v1/plan", dict({"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 1.3}, **more))
    for p in (cli_plan, plan):
        p.pop("plan_seconds", None), p.pop("seconds", None)
    check(code == 200 and plan == cli_plan, "plan with window, lp_lengths differs from the CLI: %s" % str(plan)[:300])
    # /v1/explain: a route to the library's explain operation (serve_op), its query read through the query's
    # field table; its predicted latencies are /v1/predict's for the same query
    q0 = dict(QUERIES[0], hp_len=min(QUERIES[0]["hp_len"], 8), lp_len=min(QUERIES[0]["lp_len"], 8))
    code, ex = s.json("POST", "/v1/explain", {"query": q0})
    code2, pr = s.json("POST", "/v1/predict", {"queries": [q0]})
    check(code == 200 and ex["schema"] == "pairsight.explanation.v1" and ex["items"] and code2 == 200 and
          abs(ex["hp_ns"] - pr["predictions"]["hp_ns_pred"][0]) <= 1e-6 * ex["hp_ns"],
          "explain: %s / %s" % (str(ex)[:300], pr))
    sel = json.loads(run("colocate", "select", "--model", COLOC, "--workloads", SD + "/workloads.csv", "--target",
                         "a", "--candidates", "b,c+b", "--json"))
    code, sc = s.json("POST", "/v1/colocate/score", {"target": "a", "candidates": ["b", {"workloads": ["c", "b"]}]})
    check(code == 200, "colocate score: %s" % sc)
    byname = {"+".join(c["workloads"][1:]): c for c in sc["candidates"]}
    check(all(byname[r["candidate"]]["tput_sum"] == r["tput_sum"] and byname[r["candidate"]]["tput"] == r["tput"]
              for r in sel["ranking"]), "colocate score differs from select")
    # Ranked by normalised throughput, an untrained k after the trained
    # ones: the pair first although the 3-way set's raw sum is larger.
    check(sc["ranked_by"] == "norm_sum" and sc["ranking"] == [0, 1] and
          sc["candidates"][1]["tput_sum"] > sc["candidates"][0]["tput_sum"], "colocate score ranking: %s" % sc)
    # The request's shares as the CLI's --shares (issue 41 item 14): a list
    # longer than a small candidate fits the largest one; longer than every
    # candidate, both refuse it.
    sel3 = json.loads(run("colocate", "select", "--model", COLOC, "--workloads", SD + "/workloads.csv", "--target",
                         "a", "--candidates", "b,c+b", "--shares", "50/25/25", "--json"))
    code, sx = s.json("POST", "/v1/colocate/score", {"target": "a", "candidates": ["b", "c+b"], "shares": [50, 25, 25]})
    byname = {"+".join(c["workloads"][1:]): c for c in sx.get("candidates", [])}
    check(code == 200 and byname["b"]["shares"] == [50, 25] and byname["c+b"]["shares"] == [50, 25, 25] and
          all(byname[r["candidate"]]["tput"] == r["tput"] for r in sel3["ranking"]),
          "extra shares differ from select: %s %s" % (sx, sel3))
    code, sx = s.json("POST", "/v1/colocate/score", {"target": "a", "candidates": ["b"], "shares": [50, 25, 25]})
    cli = subprocess.run([CLI, "colocate", "select", "--model", COLOC, "--workloads", SD + "/workloads.csv", "--target",
                          "a", "--candidates", "b", "--shares", "50/25/25"], capture_output=True, text=True)
    check(code == 400 and "3 shares for at most 2 workloads" in sx["error"]["message"] and cli.returncode == 2 and
          "3 shares for at most 2 workloads" in cli.stderr, "too many shares: %s / %s" % (sx, cli.stderr))
    code, sc2 = s.json("POST", "/v1/colocate/score", {"target": "a", "candidates": ["b", "c"]})
    n2 = [c["norm_sum"] for c in sc2["candidates"]]
    check(code == 200 and sc2["ranking"] == sorted(range(2), key=lambda i: -n2[i]), "score by norm_sum: %s" % sc2)
    cli_sel = json.loads(run("colocate", "select", "--model", COLOC, "--workloads", SD + "/workloads.csv", "--target",
                             "a", "--candidates", "b,c+b,c", "--shares", "50/25", "--json"))
    code, sel = s.json("POST", "/v1/colocate/select", {"target": "a", "candidates": ["b", "c+b", "c"],
                                                        "shares": [50, 25]})
    check(code == 200 and sel == cli_sel and sel["schema"] == "pairsight.colocate-select.v1",
          "select differs from the CLI: %s" % sel)
    cli_pl = json.loads(run("colocate", "place", "--model", COLOC, "--workloads", SD + "/workloads.csv", "--jobs",
                            "a,b*2,c", "--gpus", "2", "--shares", "100,50", "--json", "-q"))
    code, pl = s.json("POST", "/v1/colocate/place", {"jobs": ["a", "b", "b", "c"], "gpus": 2, "shares": [100, 50],
                                                     "time_limit": 2})
    check(code == 200 and pl == cli_pl and pl["schema"] == "pairsight.colocate-place.v1",
          "place differs from the CLI: %s" % pl)
    shares_args = ["--set", "a,b", "--floor", "a=0.1", "--json"]
    cli_sh = json.loads(run("colocate", "shares", "--model", COLOC, "--workloads", SD + "/workloads.csv",
                            *shares_args))
    code, sh = s.json("POST", "/v1/colocate/shares", {"set": ["a", "b"], "floor": {"a": 0.1}})
    check(code == 200 and sh == cli_sh and sh["schema"] == "pairsight.shares.v1", "shares differs from the CLI: %s" % sh)
    code, sh = s.json("POST", "/v1/colocate/shares", {"set": "a,b", "floor": "b=50"})
    check(code == 200 and sh["feasible"] is False and sh["failing"]["workload"] == "b", "shares infeasible: %s" % sh)
    check(sc["candidates"][0]["norm_tput"] == [0.8, 0.6] and sc["candidates"][1]["k_trained"] is False,
          "colocate score normalization or k check: %s" % sc["candidates"])
    code, m = s.json("GET", "/v1/models")
    check(code == 200 and m["model"]["file"]["fingerprint"] == fnv(MODEL) and m["colocate"]["k"] == [2] and
          m["model"]["gpu"] == "A100-SXM4-40GB", "models: %s" % m)
    check(s.json("GET", "/readyz")[0] == 200, "readyz")
    code, text = s.req("GET", "/metrics")
    check(code == 200 and b'pairsight_model_info{fingerprint="%s"' % fnv(MODEL).encode() in text, "metrics")
    print("happy paths vs CLI: ok")


def big(n):
    return b'{"queries":[' + b",".join([json.dumps(QUERIES[0]).encode()] * n) + b"]}"


def malformed(s):
    q = QUERIES[0]
    def qw(**kw):
        return {"queries": [dict(q, **kw)]}
    cases = [
        ("POST", "/v1/predict", b"", 400, "empty body"),
        ("POST", "/v1/predict", b"not json", 400, "not valid JSON"),
        ("POST", "/v1/predict", b'{"queries":[', 400, "not valid JSON"),
        ("POST", "/v1/predict", b"[]", 400, "expected a JSON object"),
        ("POST", "/v1/predict", b'{"queries":5}', 400, "queries: expected"),
        ("POST", "/v1/predict", b'{"queries":[]}', 400, "no query"),
        ("POST", "/v1/predict", b'{"queries":[5]}', 400, "queries[0]: expected an object"),
        ("POST", "/v1/predict", {"queries": [{k: v for k, v in q.items() if k != "hp_len"}]}, 400, "missing hp_len"),
        ("POST", "/v1/predict", qw(hp_batch="8"), 400, "queries[0].hp_batch: expected an integer"),
        ("POST", "/v1/predict", qw(hp_batch=8.5), 400, "'8.5' is not an integer"),
        ("POST", "/v1/predict", json.dumps(qw(hp_batch=1)).replace('"hp_batch": 1', '"hp_batch": 1e400').encode(),
         400, "hp_batch"),
        ("POST", "/v1/predict", qw(hp_batch=99999999999), 400, "is not an integer"),
        ("POST", "/v1/predict", json.dumps(qw(hp_batch=1)).replace('"hp_batch": 1', '"hp_batch": NaN').encode(),
         400, "not valid JSON"),
        ("POST", "/v1/predict", json.dumps(qw(hp_batch=1)).replace('"hp_batch": 1', '"hp_batch": -Infinity').encode(),
         400, "not valid JSON"),
        ("POST", "/v1/predict", qw(hp_model="resnet5"), 400, "queries[0]: hp: no profile of model 'resnet5'"),
        ("POST", "/v1/predict", qw(gpu="H100"), 400, "queries[0]"),
        ("POST", "/v1/predict", qw(hp_tpcs=9999), 400, "queries[0]"),
        ("POST", "/v1/predict", dict(qw(), coverage=2), 400, "coverage: bad value '2'"),
        ("POST", "/v1/predict", dict(qw(), coverage="x"), 400, "coverage"),
        ("POST", "/v1/predict", dict(qw(), compose="bogus"), 400, "compose"),
        ("POST", "/v1/predict", b'{"queries":' + b"[" * 40 + b"]" * 40 + b"}", 400, "nested deeper"),
        ("POST", "/v1/predict", {"queries": {"hp_model": ["resnet50"], "hp_batch": [8, 8]}}, 400, "queries.hp_batch"),
        ("POST", "/v1/predict", json.dumps(qw()).encode() + b" x", 400, "text after"),
        ("POST", "/v1/predict", b'{"queries":[{"hp_model":"a\\q"}]}', 400, "bad escape"),
        ("POST", "/v1/predict", b'{"queries":[{"hp_model":"a\x01"}]}', 400, "control character"),
        ("POST", "/v1/predict", b'{"queries":[{"hp_model":"\\ud800"}]}', 400, "bad escape"),
        ("POST", "/v1/predict", big(101), 413, "at most 100 per request"),
        ("POST", "/v1/predict", b" " * 70000, 413, "over the limit"),
        ("GET", "/v1/predict", None, 405, "takes POST"),
        ("POST", "/healthz", b"{}", 405, "takes GET"),
        ("GET", "/nope", None, 404, "no endpoint /nope"),
        ("POST", "/v1/plan", {"lp": "bert-base:8", "slo_factor": 1.2}, 400, "missing hp"),
        ("POST", "/v1/explain", {"query": {"hp_model": "resnet50"}}, 400, "explain: query: missing hp_batch"),
        ("POST", "/v1/explain", {"query": QUERIES[0], "top": 3}, 400, "unknown member 'top' (known: query)"),
        ("POST", "/v1/plan", {"hp": "resnet50", "lp": "bert-base:8", "slo_factor": 1.2}, 400, "hp: bad value"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": "bert-base:8", "slo_factor": 1.2, "slo_ns": 1e6}, 400,
         "give one of slo_ns and slo_factor"),
        ("POST", "/v1/plan", {"hp": "vgg16:8", "lp": "bert-base:8", "slo_ns": 1e6}, 400, "vgg16"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": [5], "slo_ns": 1e6}, 400, "lp[0]"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": "bert-base:8", "slo_ns": 1e6, "gpu": 5}, 400, "gpu: expected"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": "bert-base:8", "slo_ns": 1e6, "gpu": "h100"}, 400, "h100"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": "bert-base:8", "slo_ns": 1e6, "window": 65}, 400, "window"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": ",".join(["bert-base:8"] * 65), "slo_ns": 1e6}, 400,
         "more than 64 LP tasks"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": ["bert-base:8"] * 65, "slo_ns": 1e6}, 400, "1..64 strings"),
        ("POST", "/v1/plan", {"hp": "resnet50:8", "lp": "bert-base:8,x", "slo_ns": 1e6}, 400, "lp: bad value 'x'"),
        ("POST", "/v1/colocate/score", {"target": "zz", "candidates": ["b"]}, 400, "target 'zz'"),
        ("POST", "/v1/colocate/score", {"target": "a", "candidates": ["b+nope"]}, 400, "candidates[0]: workload 'nope'"),
        ("POST", "/v1/colocate/score", {"target": "a", "candidates": [{"workloads": ["b"], "shares": [150]}]}, 400,
         "candidates[0].shares[0]"),
        ("POST", "/v1/colocate/select", {"target": "aa", "candidates": ["b"]}, 400, "did you mean 'a'"),
        ("POST", "/v1/colocate/select", {"target": "a", "candidates": ["b", "b"]}, 400, "'b' is listed twice"),
        ("POST", "/v1/colocate/select", {"target": "a", "candidates": "b", "shares": [50, 0]}, 400,
         "shares: expected A/B/.. in 1..100"),
        ("POST", "/v1/colocate/select", {"target": "a"}, 400, "candidates: expected"),
        ("POST", "/v1/colocate/place", {"jobs": "a,b", "gpus": 1, "time_limit": 0}, 400,
         "time_limit: bad value '0': the service takes a budget in seconds above 0 and at most 10"),
        ("POST", "/v1/colocate/place", {"jobs": "a,b", "gpus": 1, "time_limit": 60}, 400, "at most 10"),
        ("POST", "/v1/colocate/place", {"jobs": "a,b", "gpus": 1, "time_limit": "x"}, 400, "time_limit"),
        ("POST", "/v1/colocate/place", {"jobs": "a,zz", "gpus": 1}, 400, "jobs: 'zz' has no row"),
        ("POST", "/v1/colocate/place", {"jobs": "a*65", "gpus": 1}, 400, "repeat count must be 1..64"),
        ("POST", "/v1/colocate/shares", {"set": ["a", "zz"]}, 400, "workload 'zz'"),
        ("POST", "/v1/colocate/shares", {"set": []}, 400, "a set needs 2"),
        ("POST", "/v1/colocate/shares", {"set": 5}, 400, "set: expected"),
        ("POST", "/v1/colocate/shares", {}, 400, "set: expected"),
        ("POST", "/v1/colocate/shares", {"set": "a,b", "candidates": [[60, 60]]}, 400, "sums to 120"),
        ("POST", "/v1/colocate/shares", {"set": "a,b", "candidates": "30/70/10"}, 400, "3 shares for 2"),
        ("POST", "/v1/colocate/shares", {"set": "a,b", "floor": {"c": 1}}, 400, "'c' is not in the set"),
        ("POST", "/v1/colocate/shares", {"set": "a,b", "step": 0}, 400, "step: expected an integer"),
        ("POST", "/v1/colocate/shares", {"set": "a,b", "shares": 5}, 400, "unknown field 'shares'"),
        ("POST", "/v1/colocate/shares", b'[1]', 400, "expected a JSON object"),
        ("POST", "/k8s/filter", {"Pod": {"metadata": {"annotations": {"pairsight.io/workload": 5}}},
                                 "NodeNames": ["n1"]}, 400, "pairsight.io/workload"),
        ("POST", "/k8s/filter", pod("a", "abc"), 400, "min-throughput: bad value 'abc'"),
        ("POST", "/k8s/prioritize", pod("a", "1.5"), 400, "min-throughput: bad value '1.5'"),
        ("POST", "/k8s/filter", {"Pod": {"metadata": {"annotations": {"pairsight.io/workload": "a"}}}}, 400,
         "expected Nodes"),
        ("POST", "/k8s/filter", {"Pod": 5, "NodeNames": []}, 400, "Pod: expected"),
    ]
    for method, path, body, want, text in cases:
        code, data = s.req(method, path, body)
        try:
            msg = json.loads(data)["error"]["message"]
        except (ValueError, KeyError, TypeError):
            msg = "(not an error JSON: %r)" % data[:200]
        check(code == want and text in msg, "%s %s %r: %d %s (expected %d, '%s')" %
              (method, path, str(body)[:60], code, msg, want, text))
        check(s.req("GET", "/healthz")[0] == 200, "server not serving after %s" % text)
    chunked_too_big(s)
    slow_client(s)
    print("malformed requests: %d cases + chunked + slow client: ok" % len(cases))


def pod(workload, floor=None, lower=False):
    ann = {"pairsight.io/workload": workload}
    if floor is not None:
        ann["pairsight.io/min-throughput"] = floor
    p = {"metadata": {"name": "p1", "namespace": "default", "annotations": ann}, "spec": {"containers": []}}
    return {"pod" if lower else "Pod": p, "NodeNames": ["n1"]}


def chunked_too_big(s):
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    c.putrequest("POST", "/v1/predict")
    c.putheader("Transfer-Encoding", "chunked")
    c.putheader("Content-Type", "application/json")
    c.endheaders()
    try:
        for _ in range(20):
            c.send(b"1000\r\n" + b" " * 4096 + b"\r\n")
        c.send(b"0\r\n\r\n")
        r = c.getresponse()
        check(r.status == 413, "chunked body over the limit: %d" % r.status)
    except OSError as e:  # the server may close as soon as it answered
        print("chunked: connection closed early (%s)" % e)
    c.close()
    check(s.req("GET", "/healthz")[0] == 200, "not serving after a chunked body over the limit")


def slow_client(s):
    k = socket.create_connection(("127.0.0.1", s.port))
    k.sendall(b"POST /v1/predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100\r\n\r\n{")
    t0 = time.time()
    k.settimeout(10)
    try:
        data = k.recv(100)
    except OSError:
        data = b""
    check(data == b"" and time.time() - t0 < 8, "slow client not closed after --timeout: %r" % data)
    k.close()
    check(s.req("GET", "/healthz")[0] == 200, "not serving after a slow client")


def token_tls():
    tok = T + "/token"
    open(tok, "w").write("s3cret-token\n")
    s = Server("--token-file", tok)
    check(s.req("GET", "/v1/models")[0] == 401, "no token: not 401")
    check(s.req("GET", "/v1/models", token="wrong")[0] == 401, "wrong token: not 401")
    check(s.req("GET", "/v1/models", token="s3cret-token")[0] == 200, "right token: not 200")
    check(s.req("GET", "/healthz")[0] == 200, "healthz needs no token")
    check(s.req("POST", "/v1/reload", b"")[0] == 401, "reload without the token: not 401")
    s.stop()
    if not shutil.which("openssl"):
        print("TLS: skipped: openssl is absent (scripts/setup.sh installs it)")
        return
    crt, key = T + "/tls.crt", T + "/tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-days",
                    "1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", crt],
                   check=True, capture_output=True)
    ctx = ssl.create_default_context(cafile=crt)
    s = Server("--tls-cert", crt, "--tls-key", key, "--token-file", tok, scheme="https", ctx=ctx,
               token="s3cret-token")
    code, m = s.json("GET", "/v1/models")
    check(code == 200 and m["schema"] == "pairsight.models.v1", "TLS + token: %d" % code)
    check(s.req("GET", "/v1/models", token="nope")[0] == 401, "TLS, wrong token: not 401")
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/healthz" % s.port, timeout=5)
        fail("plain HTTP answered on the TLS port")
    except (OSError, urllib.error.URLError, http.client.HTTPException):
        pass
    check(s.req("GET", "/healthz")[0] == 200, "TLS server not serving after a plain HTTP client")
    s.stop()
    print("token and TLS on and off: ok")


def reload_under_load(s):
    body = json.dumps({"queries": QUERIES[:20]}).encode()
    stop, errors, done = threading.Event(), [], [0]

    def client():
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=20)
        while not stop.is_set():
            c.request("POST", "/v1/predict", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            if r.status != 200:
                errors.append((r.status, data[:200]))
            done[0] += 1
        c.close()

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    shutil.copy(MODEL2, MODEL + ".tmp")
    os.replace(MODEL + ".tmp", MODEL)
    code, r = s.json("POST", "/v1/reload", b"")
    check(code == 200 and r["fingerprint"] == fnv(MODEL2), "reload: %d %s" % (code, r))
    time.sleep(0.3)
    open(MODEL + ".tmp", "wb").write(b"not a model")
    os.replace(MODEL + ".tmp", MODEL)
    code, r = s.json("POST", "/v1/reload", b"")
    check(code == 500 and r["error"]["code"] == "reload_failed", "broken reload: %d %s" % (code, r))
    time.sleep(0.3)
    shutil.copy(T + "/m1.psm", MODEL + ".tmp")
    os.replace(MODEL + ".tmp", MODEL)
    s.p.send_signal(signal.SIGHUP)
    for _ in range(200):  # the reload runs on the server's main thread, beside the load
        code, m = s.json("GET", "/v1/models")
        if m["model"]["file"]["fingerprint"] == fnv(T + "/m1.psm"):
            break
        time.sleep(0.1)
    stop.set()
    for t in threads:
        t.join()
    check(not errors, "requests failed during reloads: %s" % errors[:3])
    check(m["model"]["file"]["fingerprint"] == fnv(T + "/m1.psm"), "SIGHUP did not reload within 20 s")
    text = s.req("GET", "/metrics")[1].decode()
    check('pairsight_reloads_total{result="error"} 1' in text and "pairsight_reload_failed 0" in text,
          "reload metrics")
    check("reload failed" in open(s.log.name).read(), "the failed reload is not in the log")
    print("reload under load: %d requests, 0 failed, 2 reloads + 1 broken: ok" % done[0])


# The 3-node cluster of docs/serve.md's fixtures, with the ratio model of
# tests/data/serve: a, b and c keep 0.8, 0.6 and 0.9 of their exclusive
# throughput beside anyone (their median co-located / solo ratios).
GPUS = {
    "n1": {"type": "TESTGPU", "gpus": [["b"]]},
    "n2": {"type": "TESTGPU", "gpus": [[{"workload": "c", "min_throughput": 0.95}], []]},
    "n3": {"type": "TESTGPU", "gpus": [[{"workload": "b", "min_throughput": 0.7}]]},
}


def node(name, lower=False):
    md = "metadata" if lower else "Metadata"
    return {md: {"name": name, "annotations": {"pairsight.io/gpus": json.dumps(GPUS[name])}}, "status": {}}


def extender():
    nodes_file = T + "/nodes.json"
    json.dump(GPUS, open(nodes_file, "w"))
    s = Server("--coloc", COLOC, "--workloads", SD + "/workloads.csv", "--nodes", nodes_file)
    # floor 0.7: n1 takes a beside b (0.8 + 0.6 = 1.4); n2's first GPU would put c under 0.95, its empty
    # second GPU takes a alone (1.0); n3 would put b under 0.7.
    for lower in (False, True):
        P = (lambda k: k.lower()) if lower else (lambda k: k)
        args = {P("Pod"): pod("a", "0.7")["Pod"], P("Nodes"): {"items": [node(n, lower) for n in GPUS]}}
        code, r = s.json("POST", "/k8s/filter", args)
        check(code == 200 and [i["Metadata" if not lower else "metadata"]["name"] for i in r["Nodes"]["items"]] ==
              ["n1", "n2"] and r["NodeNames"] is None and list(r["FailedNodes"]) == ["n3"] and
              "resident b" in r["FailedNodes"]["n3"] and r["FailedAndUnresolvableNodes"] == {} and r["Error"] == "",
              "filter (Nodes, %s): %s" % ("lower" if lower else "PascalCase", r))
        code, r = s.json("POST", "/k8s/prioritize", args)
        check(r == [{"Host": "n1", "Score": 10}, {"Host": "n2", "Score": 7}, {"Host": "n3", "Score": 0}],
              "prioritize: %s" % r)
    args = {"Pod": pod("a", "0.85")["Pod"], "NodeNames": ["n1", "n2", "n3", "n4"]}
    code, r = s.json("POST", "/k8s/filter", args)
    check(code == 200 and r["Nodes"] is None and r["NodeNames"] == ["n2"] and sorted(r["FailedNodes"]) == ["n1", "n3"]
          and "pod a would get 0.8" in r["FailedNodes"]["n1"] and list(r["FailedAndUnresolvableNodes"]) == ["n4"],
          "filter (NodeNames, floor 0.85): %s" % r)
    code, r = s.json("POST", "/k8s/prioritize", args)
    check([h["Score"] for h in r] == [0, 10, 0, 0], "prioritize (NodeNames): %s" % r)
    s.stop()
    print("extender fixtures (PascalCase, lower-case, Nodes, NodeNames): ok")


def prometheus(s):
    text = s.req("GET", "/metrics")[1]
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
    check(r.returncode == 0, "promtool check metrics: %s" % (r.stdout + r.stderr)[:500])
    if not shutil.which("prometheus"):
        print("prometheus: skipped: not installed")
        return
    pport = free_port()
    cfg = T + "/prom.yml"
    open(cfg, "w").write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: pairsight\n"
                         "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % s.port)
    p = subprocess.Popen(["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + T + "/tsdb",
                          "--web.listen-address=127.0.0.1:%d" % pport], stdout=subprocess.DEVNULL,
                         stderr=open(T + "/prom.log", "w"))
    PROCS.append(p)
    url = "http://127.0.0.1:%d/api/v1/query?query=pairsight_requests_total" % pport
    got = None
    for _ in range(100):
        try:
            res = json.load(urllib.request.urlopen(url, timeout=2))["data"]["result"]
            if res:
                got = res
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    p.terminate()
    p.wait(10)
    check(got and any(x["metric"].get("endpoint") == "/v1/predict" for x in got),
          "Prometheus did not answer pairsight_requests_total: %s" % open(T + "/prom.log").read()[-500:])
    print("promtool + Prometheus scrape: ok (%d series)" % len(got or []))


def load_test(s, total=10000, threads=4, bound_kb=16384):
    good = json.dumps({"queries": QUERIES[:5]}).encode()
    code, ref = s.json("POST", "/v1/predict", good)
    bad = [b"{", b'{"queries":[{"hp_batch":"x"}]}', b"[1,2", b'{"queries":[]}', b'{"queries":' + b"[" * 50]
    counts, wrong, lock = [0, 0], [], threading.Lock()

    def client(n, seed):
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=20)
        for i in range(n):
            malformed = (i * 7 + seed) % 10 == 0
            c.request("POST", "/v1/predict", bad[i % len(bad)] if malformed else good,
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
            ok = r.status == 400 if malformed else r.status == 200 and json.loads(data) == ref
            with lock:
                counts[malformed] += 1
                if not ok:
                    wrong.append((r.status, data[:100]))
        c.close()

    def burst(n):
        ts = [threading.Thread(target=client, args=(n // threads, k)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    burst(1000)  # warm-up: thread-local buffers, allocator pools
    rss0 = rss_kb(s.p.pid)
    t0 = time.time()
    counts[0] = counts[1] = 0
    burst(total)
    secs = time.time() - t0
    rss1 = rss_kb(s.p.pid)
    check(s.p.poll() is None, "serve died under load")
    check(not wrong, "%d wrong answers under load: %s" % (len(wrong), wrong[:3]))
    check(rss1 - rss0 <= bound_kb, "RSS grew by %d KiB (bound %d KiB)" % (rss1 - rss0, bound_kb))
    print("load test: %d requests (%d malformed) in %.1f s, 0 crashes, %d wrong, RSS %d -> %d KiB (bound +%d): ok" %
          (sum(counts), counts[1], secs, len(wrong), rss0, rss1, bound_kb))


def main():
    t0 = time.time()
    try:
        setup()
        s = Server("--coloc", COLOC, "--workloads", SD + "/workloads.csv", "--max-queries", "100", "--max-body",
                   "65536", "--timeout", "2")
        happy(s)
        malformed(s)
        prometheus(s)
        s.stop()
        token_tls()
        extender()
        s = Server("--threads", "2", "--allow-reload")
        code, r = s.json("POST", "/v1/colocate/score", {"target": "a", "candidates": ["b"]})
        check(code == 503 and r["error"]["code"] == "no_model", "score without --coloc: %d %s" % (code, r))
        # AddressSanitizer keeps freed blocks in quarantine (256 MiB by default): RSS then grows with
        # what is freed, not with what leaks, and LeakSanitizer checks leaks at exit instead.
        asan = b"libasan" in subprocess.run(["ldd", CLI], capture_output=True).stdout
        load_test(s, bound_kb=(300 << 10) if asan else 16384)
        reload_under_load(s)
        s.stop()
    finally:
        cleanup(T)
    finish("test_serve", t0)


main()
