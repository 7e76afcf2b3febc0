"""What the serve tests share (tests/serve_test.py, serve_hardening.py, serve_load.py): the CLI under test
(the first argument), the failures and the processes started, and the small helpers each of them needs."""
import os, shutil, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scripts"))
from localport import free_port  # noqa: E402 (re-exported to the serve tests)

CLI = os.path.abspath(sys.argv[1])
FAILS, PROCS = [], []


def fail(msg):
    FAILS.append(msg)
    print("FAIL:", msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def run(*args):
    r = subprocess.run([CLI] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("pairsight %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def fnv(path):
    h = 1469598103934665603
    for b in open(path, "rb").read():
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def rss_kb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cleanup(tmp):
    """Kills what the test started and removes its folder (the tests' finally: blocks)."""
    for p in PROCS:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)


def finish(name, t0):
    print("%s: %s in %.1f s" % (name, "ok" if not FAILS else "%d failures" % len(FAILS), time.time() - t0))
    sys.exit(1 if FAILS else 0)
