"""pairsight serve under attack and load on loopback, bounded in count and time (issue 41): slowloris clients,
oversized and heavy extender requests, a reload storm (files swapped by rename, POST /v1/reload, SIGHUP) and
mixed requests, all at once against one server. Checks: /healthz answers within 100 ms throughout, no reply
names one model's fingerprint beside another's predictions, every mixed request gets its expected status, the
server never dies, and its RSS stays within a stated bound of its level after a warm-up. "Within 100 ms
throughout": a probe every 20 ms, none over 1 s and never two in a row over 100 ms (a single late probe on a
machine shared with other work is the kernel's scheduling; the count of such probes is printed).

Usage: serve_load.py PAIRSIGHT [--requests N] [--seconds S] [--rss-bound-mib M]
  --requests N   mixed requests (default 10000); the run ends when they are answered
  --seconds S    run for S seconds instead (the soak: bench/serve_soak.sh), RSS printed every 60 s
  tests/test_serve_load.sh runs the first form; its load must finish within 90 s (about 35 s on the 2-core
  development machine), after a setup of a few seconds (a simulated campaign, two models).
"""
import csv, http.client, json, os, random, shutil, signal, socket, subprocess, sys, tempfile, threading, time

from serve_common import CLI, PROCS, cleanup, fail, finish, rss_kb, run

ARGS = dict(zip(sys.argv[2::2], sys.argv[3::2]))
ASAN = b"libasan" in subprocess.run(["ldd", CLI], capture_output=True).stdout
# under ASan (scripts/test.sh --sanitize) everything runs 3-10 times slower: 2,000 requests keep the bound
N_REQ = int(ARGS.get("--requests", 2000 if ASAN else 10000))
SECONDS = float(ARGS.get("--seconds", 0))
T = tempfile.mkdtemp(prefix="ps_serve_load.")
CD = "tests/data/colocate"
TIME_BOUND = (120 if ASAN else 90) if not SECONDS else SECONDS + 120  # the load itself, after the setup
# ASan keeps freed blocks in quarantine (256 MiB by default): RSS then grows with what is freed
RSS_BOUND_KB = int(ARGS.get("--rss-bound-mib", 320 if ASAN else 48)) << 10


class Conn:
    """One keep-alive client connection, reopened after an error."""

    def __init__(self, port, timeout=20):
        self.port, self.timeout, self.c = port, timeout, None

    def req(self, method, path, body=None, ctype="application/json"):
        for attempt in range(2):
            if self.c is None:
                self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                h = {"Content-Type": ctype} if method == "POST" else {}
                self.c.request(method, path, body, h)
                r = self.c.getresponse()
                return r.status, r.read()
            except (OSError, http.client.HTTPException):
                self.c.close()
                self.c = None
                if attempt:
                    return 0, b""


def setup():
    global OPS, M1, M2, MODEL, COLOC, GOOD
    run("simulate", "--gpu", "a100", "--models", "resnet50,bert-base", "--experiments", "300", "--runs", "2",
        "--threads", "1", "--seed", "5", "--out", T + "/c", "-q")
    OPS, M1, M2, MODEL = T + "/c/ops.csv", T + "/m1.psm", T + "/m2.psm", T + "/model.psm"
    run("train", "--ops", OPS, "--coexec", T + "/c/coexec.csv", "--out", M1, "--threads", "1", "--depths", "4",
        "--etas", "0.3", "--rounds", "40", "-q")
    run("train", "--ops", OPS, "--coexec", T + "/c/coexec.csv", "--out", M2, "--threads", "1", "--depths", "3",
        "--etas", "0.3", "--rounds", "20", "-q")
    shutil.copy(M1, MODEL)
    COLOC = T + "/mps.psc"
    run("colocate", "train", "--workloads", CD + "/workloads.csv", "--colocations", CD + "/colocations3.csv",
        "--kind", "mps", "--out", COLOC, "-q")
    rows = list(csv.DictReader(open(T + "/c/coexec.csv")))[:5]
    keys = ["gpu", "hp_model", "hp_batch", "hp_start", "hp_len", "lp_model", "lp_batch", "lp_start", "lp_len",
            "hp_tpcs", "lp_tpcs"]
    GOOD = json.dumps({"queries": [{k: (r[k] if k in ("gpu", "hp_model", "lp_model") else int(r[k])) for k in keys}
                                   for r in rows]}).encode()


def ext(gpus, residents=2, workload="alpha_batch2-inf"):
    g = {"type": "TESTGPU", "gpus": [["alpha_batch8-inf"] * residents for _ in range(gpus)]}
    return json.dumps({"Pod": {"metadata": {"name": "p", "annotations": {"pairsight.io/workload": workload}}},
                       "Nodes": {"items": [{"metadata": {"name": "n1", "annotations": {
                           "pairsight.io/gpus": json.dumps(g)}}}]}}).encode()


def swap(src):
    shutil.copy(src, MODEL + ".tmp")
    os.replace(MODEL + ".tmp", MODEL)


class Load:
    def __init__(self):
        self.port = socket.socket()
        self.port.bind(("127.0.0.1", 0))
        port = self.port.getsockname()[1]
        self.port.close()
        self.port = port
        self.log = open(T + "/serve.log", "w")
        self.p = subprocess.Popen([CLI, "serve", "--model", MODEL, "--ops", OPS, "--coloc", COLOC, "--workloads",
                                   CD + "/workloads.csv", "--listen", "127.0.0.1:%d" % port, "--threads", "2",
                                   "--allow-reload", "--timeout", "2", "--request-timeout", "4", "-q"],
                                  stderr=self.log)
        PROCS.append(self.p)
        c = Conn(port, timeout=2)
        for _ in range(200):
            if c.req("GET", "/healthz")[0] == 200:
                break
            time.sleep(0.05)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.health, self.mismatch, self.wrong, self.counts = [], [], [], {}
        self.reloads = [0, 0]
        self.slow = [0, 0]  # slow connections opened, cut by the server
        self.ext = [0, 0]   # oversized (413), heavy (200)
        self.rss = []
        self.start_prober()
        # the load generators below the server and the probe: on a busy machine what is measured is the
        # server's answer, not this process's share of the CPU
        os.nice(5)

    def note(self, kind, ok, what=None):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if not ok:
                self.wrong.append((kind, what))

    def fingerprints(self):
        c, want = Conn(self.port), {}
        for src in (M1, M2):
            swap(src)
            code, r = c.req("POST", "/v1/reload", b"")
            code, p = c.req("POST", "/v1/predict", GOOD)
            p = json.loads(p)
            want[p["fingerprint"]] = p["predictions"]
        self.want = want

    def start_prober(self):
        """/healthz from a process of its own (the clients' threads here share one interpreter lock, which
        would add their waits to its latency), at this process's priority before it lowers its own."""
        code = ("import http.client, sys, time\n"
                "c = http.client.HTTPConnection('127.0.0.1', %d, timeout=5)\n"
                "while sys.stdin.readline():\n"
                "    t = time.time()\n"
                "    try:\n"
                "        c.request('GET', '/healthz'); r = c.getresponse(); r.read(); ok = r.status == 200\n"
                "    except Exception:\n"
                "        c.close(); ok = False\n"
                "    print(time.time() - t if ok else 99.0, flush=True)\n" % self.port)
        self.probe_p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        PROCS.append(self.probe_p)

    def prober(self):
        """/healthz every 20 ms through the probe process."""
        p = self.probe_p
        while not self.stop.is_set():
            p.stdin.write("x\n")
            p.stdin.flush()
            self.health.append(float(p.stdout.readline() or 99))
            time.sleep(0.02)
        p.stdin.close()
        p.wait()

    def slowloris(self, n=24):
        socks = []
        while not self.stop.is_set():
            while len(socks) < n:
                k = socket.socket()
                k.bind(("127.0.0.2", 0))
                try:
                    k.connect(("127.0.0.1", self.port))
                    k.setblocking(False)
                    k.send(b"POST /v1/predict HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                    socks.append(k)
                    self.slow[0] += 1
                except OSError:
                    k.close()
                    time.sleep(0.05)
            for k in list(socks):
                try:
                    if k.recv(100) == b"":
                        raise OSError
                except BlockingIOError:
                    try:
                        k.send(b"a")
                    except OSError:
                        pass
                    continue
                except OSError:
                    pass
                socks.remove(k)
                k.close()
                self.slow[1] += 1
            time.sleep(0.5)
        for k in socks:
            k.close()

    def extender(self):
        c, over, heavy = Conn(self.port, timeout=30), ext(3000), ext(800)
        i = 0
        while not self.stop.is_set():
            code = c.req("POST", "/k8s/filter", over)[0]
            self.ext[0] += code == 413
            self.note("oversized extender", code == 413, code)
            if i % 4 == 0:
                code = c.req("POST", "/k8s/prioritize", heavy)[0]
                self.ext[1] += code == 200
                self.note("heavy extender", code == 200, code)
            i += 1
            self.stop.wait(0.5)

    def storm(self):
        c, i = Conn(self.port), 0
        while not self.stop.is_set():
            swap((M1, M2)[i % 2])
            if i % 10 == 9:
                self.p.send_signal(signal.SIGHUP)
            else:
                code = c.req("POST", "/v1/reload", b"")[0]
                self.reloads[code != 200] += 1
            i += 1
            self.stop.wait(0.05)

    def mixed(self, seed, n, deadline):
        rnd = random.Random(seed)
        c = Conn(self.port)
        cases = [
            ("POST", "/v1/predict", GOOD, 200, 50), ("POST", "/v1/predict", b'{"queries":[{"hp_batch":"x"}]}', 400, 8),
            ("POST", "/v1/predict", b'{"queries":[' + b"[" * 50, 400, 4), ("GET", "/v1/models", None, 200, 8),
            ("POST", "/v1/plan", b'{"hp":"resnet50:8","lp":["bert-base:8"],"slo_factor":1.3}', 200, 4),
            ("POST", "/k8s/filter", ext(2), 200, 10), ("GET", "/nope/%ff%fe", None, 404, 4),
            ("POST", "/v1/predict", b'{"queries":[{"hp_model":"\xff"}]}', 400, 4),
            ("POST", "/v1/predict", GOOD, 415, 4), ("GET", "/metrics", None, 200, 4)]
        weights = [w for *_, w in cases]
        i = 0
        while (i < n if not SECONDS else time.time() < deadline) and self.p.poll() is None:
            method, path, body, want, _ = rnd.choices(cases, weights)[0]
            code, data = c.req(method, path, body, ctype="text/plain" if want == 415 else "application/json")
            ok = code == want
            if ok and code == 200 and path == "/v1/predict":
                r = json.loads(data)
                if self.want.get(r["fingerprint"]) != r["predictions"]:
                    with self.lock:
                        self.mismatch.append(r["fingerprint"])
            elif ok and path != "/metrics":
                try:
                    json.loads(data.decode("utf-8"))
                except ValueError:
                    ok = False
            self.note("mixed", ok, (method, path, code))
            i += 1


def main():
    t0 = time.time()
    try:
        setup()
        L = Load()
        L.fingerprints()
        warm = threading.Thread(target=L.mixed, args=(99, 1000, 0))
        warm.start()
        warm.join()
        rss0 = rss_kb(L.p.pid)
        L.counts = {}
        bg = [threading.Thread(target=f) for f in (L.prober, L.slowloris, L.extender, L.storm)]
        for x in bg:
            x.start()
        deadline = time.time() + SECONDS
        per = N_REQ // 4
        clients = [threading.Thread(target=L.mixed, args=(k, per, deadline)) for k in range(4)]
        t1 = time.time()
        for x in clients:
            x.start()
        last = t1
        while any(x.is_alive() for x in clients):
            time.sleep(1)
            if SECONDS and time.time() - last >= 60:
                last = time.time()
                L.rss.append((int(time.time() - t1), rss_kb(L.p.pid)))
                print("  t=%4d s RSS %d KiB, %d mixed requests" % (L.rss[-1] + (L.counts.get("mixed", 0),)))
                sys.stdout.flush()
            if time.time() - t1 > TIME_BOUND:
                fail("the run went past its time bound of %d s" % TIME_BOUND)
                break
        # On an idle machine the mixed requests can all be answered before the first whole-request
        # deadline (--request-timeout 4) has passed: the attack goes on, at most 15 s more, until each
        # of its parts has run once.
        more = time.time() + 15
        while (L.slow[1] == 0 or L.ext[0] == 0 or L.reloads[0] == 0) and time.time() < more and L.p.poll() is None:
            time.sleep(0.2)
        secs = time.time() - t1
        alive = L.p.poll() is None
        rss1 = rss_kb(L.p.pid) if alive else 0
        L.stop.set()
        for x in bg + clients:
            x.join(30)
        worst = max(L.health) if L.health else 99
        slow_ms = sorted(L.health)[int(0.99 * (len(L.health) - 1))] if L.health else 99
        if not alive:
            fail("serve died under load (exit %s)" % L.p.returncode)
        # 100 ms throughout: no two probes in a row over it (one late probe alone, on a machine shared with
        # other work, is the kernel's scheduling, not the server's; two in a row span 140 ms), none over 1 s
        over = [x >= 0.1 for x in L.health]
        runs = sum(1 for a, b in zip(over, over[1:]) if a and b)
        if runs or worst >= 1:
            fail("/healthz over 100 ms twice in a row %d times, worst %.1f ms" % (runs, 1e3 * worst))
        if L.mismatch:
            fail("%d replies named one model's fingerprint beside another's predictions" % len(L.mismatch))
        if L.wrong:
            fail("%d requests got an unexpected status: %s" % (len(L.wrong), L.wrong[:5]))
        if rss1 - rss0 > RSS_BOUND_KB:
            fail("RSS grew by %d KiB (bound %d KiB)" % (rss1 - rss0, RSS_BOUND_KB))
        if not SECONDS and L.counts.get("mixed", 0) < N_REQ - 3:
            fail("only %d of %d mixed requests answered" % (L.counts.get("mixed", 0), N_REQ))
        if L.slow[1] == 0 or L.ext[0] == 0 or L.reloads[0] == 0:
            fail("a part of the load did not run: slow cut %d, oversized %d, reloads %d" %
                 (L.slow[1], L.ext[0], L.reloads[0]))
        print("serve_load: setup %.1f s; %d mixed requests in %.1f s (%s), /healthz %d probes, p99 %.1f ms, worst %.1f ms, %d over 100 ms (never twice in a row); "
              "%d reloads (+%d failed while a file was being swapped) beside SIGHUPs, 0 crashes, %d mismatched "
              "fingerprints; slowloris: %d slow connections, %d cut by the deadline; extender: %d oversized "
              "refused, %d heavy answered; RSS %d -> %d KiB (bound +%d KiB)" %
              (t1 - t0, L.counts.get("mixed", 0), secs, ", ".join("%s %d" % kv for kv in sorted(L.counts.items())),
               len(L.health), 1e3 * slow_ms, 1e3 * worst, sum(over), L.reloads[0], L.reloads[1], len(L.mismatch), L.slow[0],
               L.slow[1], L.ext[0], L.ext[1], rss0, rss1, RSS_BOUND_KB))
        L.p.send_signal(signal.SIGTERM)
        if L.p.wait(10) != 0:
            fail("serve exited %d after SIGTERM: %s" % (L.p.returncode, open(T + "/serve.log").read()[-2000:]))
    finally:
        cleanup(T)
    finish("serve_load", t0)


main()
