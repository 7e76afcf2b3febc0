"""The checks of tests/test_capture.sh: capture each model once (meta device),
then its parameter count against sum(p.numel()) and, for resnet50 and
mobilenet_v2, the list op for op against the collector's built-in list.
Usage: python3 capture_check.py PAIRSIGHT_CLI OUTDIR; exit 77 without torch."""
import os
import subprocess
import sys

try:
    import torch
    import torchvision
except ImportError as e:
    print("skip: Debian's python3-torch and python3-torchvision are needed (%s)" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "own_model"))
from pairsight import capture as C  # noqa: E402
import bert_nn  # noqa: E402

cli, out = sys.argv[1], sys.argv[2]


class no_init:
    """Skip weight initialisation while models are built (the capture reads shapes only): minutes of
    random numbers on a shared CPU otherwise."""

    def __enter__(self):
        self.saved = {}
        for n in dir(torch.nn.init):
            f = getattr(torch.nn.init, n)
            if callable(f) and n.endswith("_") and not n.startswith("_"):
                self.saved[n] = f
                setattr(torch.nn.init, n, lambda t, *a, **k: t)

    def __exit__(self, *exc):
        for n, f in self.saved.items():
            setattr(torch.nn.init, n, f)

fails = []
B = 8
MODELS = [("resnet50", {}, 224), ("resnet101", {}, 224), ("resnet152", {}, 224), ("vgg16", {}, 224),
          ("vgg19", {}, 224), ("inception_v3", {"aux_logits": False, "init_weights": False}, 299),
          ("mobilenet_v2", {}, 224)]
builtin = {"resnet50": "resnet50", "mobilenet_v2": "mobilenetv2"}
for name, kw, side in MODELS:
    with no_init():
        m = getattr(torchvision.models, name)(**kw)
    total = sum(p.numel() for p in m.parameters())
    l = C.capture(m, [torch.empty(B, 3, side, side)], name=name)
    l.write(os.path.join(out, name + ".oplist"))
    kinds = sorted(set(k for k, _, _ in l.ops))
    print("%-13s %4d ops, params %d (torch %d), kinds %s" % (name, len(l.ops), l.params(), total, kinds))
    if l.params() != total:
        fails.append("%s: params %d, torch says %d" % (name, l.params(), total))
    if name in builtin:
        ref = subprocess.run([cli, "collect", "ops", "--model", builtin[name], "--batch", str(B)],
                             capture_output=True, text=True, check=True).stdout
        d = C.compare(l.text(), ref)
        print("  vs built-in %s: %d differences" % (builtin[name], len(d)))
        fails += ["%s: %s" % (name, x) for x in d]

with no_init():
    m = bert_nn.bert_base()
total = sum(p.numel() for p in m.parameters())
for seq in (128, 64):
    l = C.capture(m, [torch.zeros(B, seq, dtype=torch.int64)], name="bert-nn", seq_len=seq)
    gemms = [kv for k, _, kv in l.ops if k == "gemm"]
    print("bert-nn seq %d: %d ops, params %d (torch %d), %d gemm" % (seq, len(l.ops), l.params(), total, len(gemms)))
    if l.params() != total:
        fails.append("bert-nn: params %d, torch says %d" % (l.params(), total))
    # per layer q, k, v, scores, context, attention output, intermediate, output; then the pooler
    if len(gemms) != 12 * 8 + 1 or gemms[0]["m"] != B * seq:
        fails.append("bert-nn seq %d: %d gemms, first m=%s" % (seq, len(gemms), gemms[0]["m"]))
l.write(os.path.join(out, "bert-nn.oplist"))

# Refusal: an op with no kind is listed with its count, never dropped.
class Odd(torch.nn.Module):
    def forward(self, x):
        return torch.sigmoid(x) + torch.erf(x)


try:
    C.capture(Odd(), [torch.empty(2, 4)])
    fails.append("sigmoid and erf were not refused")
except C.Unmapped as e:
    if e.counts != {"aten.sigmoid.default": 1, "aten.erf.default": 1}:
        fails.append("unmapped counts %s" % e.counts)
l = C.capture(Odd(), [torch.empty(2, 4)], unmapped_as_eltwise=True)
if [k for k, _, _ in l.ops] != ["eltwise"] * 3:
    fails.append("--unmapped-as-eltwise gave %s" % l.ops)

# The C reader takes what the capture wrote.
for name in ("resnet152", "inception_v3", "bert-nn"):
    r = subprocess.run([cli, "collect", "ops", "--file", os.path.join(out, name + ".oplist")], capture_output=True,
                       text=True)
    if r.returncode != 0:
        fails.append("collect ops --file %s: %s" % (name, r.stderr.strip()))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
