"""tests/test_profile_tpcs.sh: pairsight.profile_tpcs's logic with the CUDA
calls stubbed: each profiled pass writes a copy of a real PyTorch trace
(tests/data/torch_pt18.json: a cuDNN helper, a conv, a batch norm, a GEMM).
Usage: python3 profile_tpcs_check.py PAIRSIGHT_CLI OUTDIR"""
import csv
import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.modules["pairsight"] = types.ModuleType("pairsight")  # the package without its C library
sys.modules["pairsight"].__path__ = [os.path.join(HERE, "..", "python", "pairsight")]
from pairsight import profile_tpcs as P  # noqa: E402

cli, out = sys.argv[1], sys.argv[2]
TRACE = os.path.join(HERE, "data", "torch_pt18.json")
fails = []
oplist = os.path.join(out, "tiny.oplist")
with open(oplist, "w") as f:
    f.write("# pairsight oplist 1\n# model=tiny batch=1 seq_len=0 ops=3\n"
            "conv conv1 n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 groups=1\n"
            "norm bn1 variant=batch n=1 c=64 hw=12544\ngemm fc m=1 n=1000 k=2048 batch=1\n")


class StubCuda(P.Cuda):
    def __init__(self):
        self.calls = []

    def total_tpcs(self):
        return 40  # a V100

    def profile_pass(self, model, inputs, sms, trace_path, warmup):
        self.calls.append(sms)
        shutil.copy(TRACE, trace_path)


def models(meta):
    return None, None


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# green contexts: 2N SMs per count, the whole GPU without a context
c = StubCuda()
d = os.path.join(out, "green")
rc = P.main(["m:f", "--input", "3x224x224", "--name", "tiny", "--tpcs", "8,20,40", "--oplist", oplist, "--gpu", "v100",
             "--drop-zero", "--cli", cli, "--out", d], cuda=c, model_inputs=models)
if rc != 0 or c.calls != [16, 40, None]:
    fails.append("green: rc %d, SMs asked %s (want [16, 40, None])" % (rc, c.calls))
r = rows(os.path.join(d, "ops.csv"))
got = sorted((x["name"], int(x["tpcs"])) for x in r)
want = sorted((n, t) for n in ("conv1", "bn1", "fc") for t in (8, 20, 40))
if got != want or any(x.get("source") for x in r):
    fails.append("green: ops.csv rows %s" % got)

# MPS: one child per count with its percentage
envs = []


def spawn(cmd, env):
    n = int(cmd[cmd.index("--child") + 1])
    envs.append((n, env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"]))
    shutil.copy(TRACE, os.path.join(cmd[cmd.index("--out") + 1], "trace_tpcs%d.json" % n))
    return types.SimpleNamespace(returncode=0)


d = os.path.join(out, "mps")
rc = P.main(["m:f", "--input", "3x224x224", "--name", "tiny", "--tpcs", "5,13,40", "--method", "mps", "--oplist",
             oplist, "--gpu", "v100", "--drop-zero", "--cli", cli, "--out", d], cuda=StubCuda(), model_inputs=models,
            spawn=spawn)
if rc != 0 or envs != [(5, "13"), (13, "33"), (40, "100")]:
    fails.append("mps: rc %d, children %s" % (rc, envs))
if len(rows(os.path.join(d, "ops.csv"))) != 9:
    fails.append("mps: %d rows" % len(rows(os.path.join(d, "ops.csv"))))
# a count beyond the GPU is refused before anything runs
rc = P.main(["m:f", "--input", "3x224x224", "--tpcs", "41", "--oplist", oplist, "--cli", cli, "--out", d],
            cuda=StubCuda(), model_inputs=models)
if rc != 1:
    fails.append("41 TPCs of 40: rc %d" % rc)
if P.mps_percentage(1, 66) != 2 or P.mps_percentage(66, 66) != 100:
    fails.append("mps_percentage")
for f in fails:
    print("FAIL:", f)
print("profile_tpcs_check: %s" % ("ok" if not fails else "%d failures" % len(fails)))
sys.exit(1 if fails else 0)
