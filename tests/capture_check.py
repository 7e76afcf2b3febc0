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

# Rules (issue 37 item 1): each family on a small model, its FLOPs against the analytic count of
# capture_sweep.py (module shapes) and its kinds.
import capture_sweep as S  # noqa: E402


def rule(name, model, inputs, want_kinds=None, **kw):
    acc = [0]
    hs = S.analytic_hooks(model, acc)
    try:
        l = C.capture(model, inputs, name=name, **kw)
    finally:
        for h in hs:
            h.remove()
    kinds = [k for k, _, _ in l.ops]
    got = S.captured_flops(l)
    total = sum(p.numel() for p in model.parameters())
    print("%-12s %s flops %d (analytic %d) params %d (torch %d)" % (name, " ".join(kinds), got, acc[0], l.params(),
                                                                   total))
    if acc[0] and abs(got - acc[0]) > 0.01 * acc[0]:
        fails.append("%s: conv/gemm FLOPs %d, analytic %d" % (name, got, acc[0]))
    if l.params() != total:
        fails.append("%s: params %d, torch says %d" % (name, l.params(), total))
    if want_kinds is not None and kinds != want_kinds:
        fails.append("%s: kinds %s, expected %s" % (name, kinds, want_kinds))
    return l


nn = torch.nn
convs = nn.Sequential(nn.Conv2d(8, 16, 3, padding=2, dilation=2),  # dilated
                      nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16),  # depthwise
                      nn.Conv2d(16, 32, 3, padding=1, groups=4),  # grouped
                      nn.ConvTranspose2d(32, 8, 4, stride=2, padding=1),  # transposed
                      nn.Conv2d(8, 8, (1, 7), padding=(0, 3)),  # asymmetric
                      nn.Conv2d(8, 8, 3, stride=(2, 1), padding=1, dilation=(1, 2)))  # non-square stride
rule("convs", convs, [torch.empty(2, 8, 20, 20)], ["conv"] * 6)
rule("conv1d", nn.Sequential(nn.Conv1d(4, 8, 5, stride=2, padding=2), nn.ConvTranspose1d(8, 4, 4, stride=2, padding=1)),
     [torch.empty(2, 4, 33)], ["conv"] * 2)


class Gemms(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.empty(16, 24))
        self.v = nn.Parameter(torch.empty(24))
        self.b = nn.Parameter(torch.empty(4, 16, 16))

    def forward(self, x):  # x: 4 x 16 x 24
        a = torch.baddbmm(self.b, x, x.transpose(1, 2))  # 4 x (16x24 @ 24x16), beta folded
        c = torch.addbmm(self.b[0], x, x.transpose(1, 2))  # summed over the batch
        d = torch.mv(self.w, self.v) + torch.addmv(self.w[:, 0], self.w, self.v)
        e = torch.einsum("bij,bkj->bik", x, x)  # a bmm
        return a.sum() + c.sum() + d.sum() + e.sum()


l = rule("gemms", Gemms(), [torch.empty(4, 16, 24)])
g = [(kv["m"], kv["n"], kv["k"], kv["batch"]) for k, _, kv in l.ops if k == "gemm"]
if g != [(16, 16, 24, 4), (16, 16, 96, 1), (16, 1, 24, 1), (16, 1, 24, 1), (16, 16, 24, 4)]:
    fails.append("gemms: %s" % g)
if not any("cuBLAS beta" in k for k in l.fused):
    fails.append("gemms: baddbmm's input not fused: %s" % l.fused)


class Pointwise(nn.Module):
    def forward(self, x):  # x: 2 x 8 x 16
        t = x.shape[1]
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))  # folded: constants only
        y = torch.sigmoid(x) * nn.functional.hardswish(x, inplace=False)
        y = nn.functional.hardswish(y.clone(), inplace=True)
        s = torch.einsum("bik,bjk->bij", y, y).masked_fill(~mask, float("-inf"))
        return s.amax(dim=-1), torch.where(x > 0, x, -x).sum(dim=1)


l = C.capture(Pointwise(), [torch.empty(2, 8, 16)])
ops = [(k, kv.get("variant"), kv.get("elems"), kv.get("inputs")) for k, _, kv in l.ops]
print("pointwise   ", ops, "folded", l.folded)
want = [("eltwise", "silu", 256, 1), ("eltwise", "relu6", 256, 1), ("eltwise", "mul", 256, 2),
        ("eltwise", "scale", 256, 1), ("eltwise", "relu6", 256, 1), ("gemm", None, None, None),
        ("eltwise", "add", 128, 2), ("eltwise", "scale", 72, 1), ("eltwise", "scale", 256, 1),
        ("eltwise", "scale", 256, 1), ("eltwise", "add", 256, 3), ("eltwise", "scale", 144, 1)]
# sigmoid as silu, hardswish (and its in-place form) as relu6, a product of two tensors, a clone; the
# einsum's bmm; masked_fill reads the scores and the mask (192 elements for 128 written: inputs 2);
# amax reads 128 and writes 16 (elems 72: the bytes are exact); gt and neg; where reads three tensors;
# the sum over dim 1 reads 256 and writes 32.
if ops != want:
    fails.append("pointwise: %s, expected %s" % (ops, want))
if sum(l.folded.values()) < 2:
    fails.append("pointwise: the constant mask was not folded: %s" % l.folded)


# Parameters read through functional calls and views: nn.MultiheadAttention's out_proj, a class token,
# a positional table; a module that does not run is named apart.
class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.zeros(1, 1, 32))
        self.pos = nn.Parameter(torch.zeros(1, 9, 32))
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.unused = nn.Linear(32, 32)

    def forward(self, x):
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.attn(x, x, x, need_weights=False)[0]


m = Tokens()
l = C.capture(m, [torch.empty(2, 8, 32)])
total = sum(p.numel() for p in m.parameters())
print("tokens       params %d + %d not run (%s), torch %d" % (l.params(), l.params_uncalled, l.not_run, total))
if l.params() != total - 32 * 33 or l.not_run != ["unused"] or "not_run=1056 (unused:" not in l.text():
    fails.append("tokens: params %d, not run %d %s, torch %d" % (l.params(), l.params_uncalled, l.not_run, total))

# Refusal: only an op that launches a kernel and fits no kind, listed with its count, never dropped.
class Odd(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs() + torch.erf(x[..., :3])


try:
    C.capture(Odd(), [torch.empty(2, 4)])
    fails.append("rfft was not refused")
except C.Unmapped as e:
    if e.counts != {"aten._fft_r2c.default": 1, "aten.abs.default": 1}:
        fails.append("unmapped counts %s" % e.counts)
try:
    C.capture(nn.Conv3d(2, 2, 3), [torch.empty(1, 2, 4, 4, 4)])
    fails.append("a 3-D convolution was not refused")
except C.Unmapped as e:
    if e.counts != {"aten.convolution.default": 1}:
        fails.append("conv3d: unmapped counts %s" % e.counts)
# On the CPU under no_grad, nn.MultiheadAttention takes its fused fast path: refused, saying so; the
# default meta device runs the unfused ops.
mha = nn.MultiheadAttention(16, 2, batch_first=True).eval()
try:
    C.capture(mha, [torch.zeros(1, 4, 16)] * 3, device="cpu")
    fails.append("the CPU fast path of nn.MultiheadAttention was not refused")
except C.Unmapped as e:
    if "--device meta" not in str(e):
        fails.append("the fast path's refusal does not name --device meta: %s" % e)
# (query, key and value become three meta tensors: three in-projections, q k^T, attn v, out_proj)
l = C.capture(mha, [torch.zeros(1, 4, 16)] * 3)
if [k for k, _, _ in l.ops].count("gemm") != 6 or l.params() != sum(p.numel() for p in mha.parameters()):
    fails.append("nn.MultiheadAttention on meta: %s" % l.ops)
l = C.capture(Odd(), [torch.empty(2, 4)], unmapped_as_eltwise=True)
if [k for k, _, _ in l.ops] != ["eltwise"] * 4:
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
