"""The capture sweep (tests/test_capture_sweep.sh): every classification builder of torchvision.models
(Debian's torch 1.13, torchvision 0.14) built in eval mode and captured with default flags on the meta
device at batch 1, plus causal transformer stacks built from torch.nn and a hand-written GPT-2 block.

For each model: the capture succeeds; its parameters (plus those of modules that did not run, which must
be auxiliary heads) equal sum(p.numel()); the FLOPs of its conv and gemm operators are within 1% of an
analytic count from the modules' shapes, written here (forward hooks read the shapes; the formulas are
below, independent of the capture's aten mapping).

Usage: python3 capture_sweep.py [--table FILE.md] [--only NAME,...]; exit 77 without torch."""
import argparse
import math
import os
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as e:
    print("skip: Debian's python3-torch and python3-torchvision are needed (%s)" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from pairsight import capture as C  # noqa: E402


class no_init:
    """Skip weight initialisation while models are built (the capture reads shapes only)."""

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


# ---- causal transformer stacks ----

class CausalEncoder(nn.Module):
    """Two nn.TransformerEncoderLayer with a causal mask (a GPT-style decoder from torch.nn)."""

    def __init__(self, d=256, heads=4, layers=2, vocab=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, 512, d))
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True)
                                    for _ in range(layers))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        t = ids.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf"), device=ids.device), diagonal=1)
        x = self.embed(ids) + self.pos[:, :t]
        for layer in self.layers:
            x = layer(x, src_mask=mask)
        return self.head(x)


class CausalDecoder(nn.Module):
    """nn.TransformerDecoderLayer with a causal target mask over an encoder memory."""

    def __init__(self, d=256, heads=8):
        super().__init__()
        self.layer = nn.TransformerDecoderLayer(d, heads, 2 * d, batch_first=True)

    def forward(self, x, memory):
        t = x.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf"), device=x.device), diagonal=1)
        return self.layer(x, memory, tgt_mask=mask)


class GPT2Attention(nn.Module):
    def __init__(self, d, heads, ctx):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.register_buffer("bias", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)).view(1, 1, ctx, ctx))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        w = w.masked_fill(~self.bias[:, :, :t, :t], torch.finfo(w.dtype).min)
        w = F.softmax(w, dim=-1)
        y = torch.matmul(w, v).transpose(1, 2).contiguous().view(b, t, d)
        return self.c_proj(y)


class GPT2Block(nn.Module):
    def __init__(self, d, heads, ctx):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = GPT2Attention(d, heads, ctx)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    """A hand-written GPT-2 (small widths): token and position embeddings, blocks, tied-free lm head."""

    def __init__(self, d=256, heads=4, layers=2, ctx=128, vocab=1000):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.h = nn.ModuleList(GPT2Block(d, heads, ctx) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for blk in self.h:
            x = blk(x)
        return self.lm_head(self.ln_f(x))


# ---- the analytic count: FLOPs of convolutions and matrix products from module shapes ----

def analytic_hooks(model, acc):
    """Forward hooks that add 2 x multiply-adds of each conv, linear and attention matmul to acc[0]."""
    from torchvision.models import swin_transformer as sw
    from torchvision.models import maxvit as mv
    handles = []

    def conv(m, inp, out):
        k = m.weight.shape[2:].numel()
        if m.transposed:  # every input element meets out_channels/groups x kernel weights
            acc[0] += 2 * inp[0].numel() * (m.out_channels // m.groups) * k
        else:
            acc[0] += 2 * out.numel() * (m.in_channels // m.groups) * k

    def linear(m, inp, out):
        acc[0] += 2 * out.numel() * m.in_features

    def mha(m, inp, out):
        q, k = (inp[0], inp[1]) if len(inp) > 1 else (out[0], out[0])  # vit passes query=x, key=x: self-attention
        e = m.embed_dim
        lq, lk = q.numel() // e, k.numel() // e  # tokens over the batch
        batch = q.shape[0] if m.batch_first else q.shape[1]
        sq, sk = lq // batch, lk // batch
        acc[0] += 2 * (lq * e * e + 2 * lk * e * e)  # in projections
        acc[0] += 2 * 2 * batch * sq * sk * e  # q k^T and (softmax) v, over the heads
        acc[0] += 2 * lq * e * e  # out_proj, called functionally

    def swin(m, inp, out):
        b, h, w, c = inp[0].shape
        wh, ww = m.window_size
        hp, wp = -(-h // wh) * wh, -(-w // ww) * ww
        tok = b * hp * wp
        acc[0] += 2 * tok * c * 3 * c + 2 * tok * c * c  # qkv and proj, called functionally
        acc[0] += 2 * 2 * tok * wh * ww * c  # per window: q k^T and attn v

    def maxvit(m, inp, out):
        b, g, p, d = inp[0].shape
        acc[0] += 2 * 2 * b * g * p * p * d  # the two einsums

    def gpt2(m, inp, out):
        b, t, d = inp[0].shape
        acc[0] += 2 * 2 * b * t * t * d  # q k^T and w v (c_attn, c_proj are Linear modules)

    for mod in model.modules():
        if isinstance(mod, nn.modules.conv._ConvNd):
            handles.append(mod.register_forward_hook(conv))
        elif isinstance(mod, nn.MultiheadAttention):
            handles.append(mod.register_forward_hook(mha))
        elif isinstance(mod, sw.ShiftedWindowAttention):
            handles.append(mod.register_forward_hook(swin))
        elif isinstance(mod, mv.RelativePositionalMultiHeadAttention):
            handles.append(mod.register_forward_hook(maxvit))
        elif isinstance(mod, GPT2Attention):
            handles.append(mod.register_forward_hook(gpt2))
        elif isinstance(mod, nn.Linear):
            handles.append(mod.register_forward_hook(linear))
    return handles


def conv_out(i, k, st, p):
    return max(1, (i + 2 * p - k) // st + 1)


def captured_flops(l):
    """Conv and gemm FLOPs of the list, as src/profile/oplist.c's psi_op_flops counts them."""
    total = 0
    for kind, _, kv in l.ops:
        g = lambda k, d=1: int(kv.get(k, d))
        if kind == "gemm":
            total += 2 * g("batch") * g("m") * g("n") * g("k")
        elif kind == "conv":
            oh, ow = conv_out(g("h"), g("r"), g("stride"), g("pad", 0)), conv_out(g("w"), g("s"), g("stride"), g("pad", 0))
            total += 2 * g("n") * g("k") * oh * ow * (g("c") // g("groups")) * g("r") * g("s")
    return total


def cases(only):
    side = {"inception_v3": 299}
    for name in torchvision.models.list_models(module=torchvision.models):
        if not only or name in only:
            yield name, (lambda n=name: getattr(torchvision.models, n)()), \
                lambda n=name: [torch.empty(1, 3, side.get(n, 224), 224 if n != "inception_v3" else 299)]
    extra = [("causal_encoder", CausalEncoder, lambda: [torch.zeros(1, 64, dtype=torch.int64)]),
             ("causal_decoder", CausalDecoder, lambda: [torch.empty(1, 32, 256), torch.empty(1, 48, 256)]),
             ("gpt2_block", GPT2, lambda: [torch.zeros(1, 64, dtype=torch.int64)])]
    for name, build, inputs in extra:
        if not only or name in only:
            yield name, build, inputs


def summarise(l):
    kinds = {}
    for k, _, _ in l.ops:
        kinds[k] = kinds.get(k, 0) + 1
    dropped = sum(l.dropped.values())
    folded = sum(l.folded.values())
    fused = sum(l.fused.values())
    return kinds, dropped, folded, fused


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", help="rewrite the table of every model in this markdown file (between its "
                    "capture-sweep markers)")
    ap.add_argument("--check-doc", help="fail when this markdown file's table differs from the sweep's")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--write", metavar="DIR", help="write each list to DIR/NAME.oplist")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    fails, rows, newly = [], [], {}
    t0 = time.time()
    for name, build, inputs in cases(only):
        t1 = time.time()
        with no_init():
            m = build().eval()
        total = sum(p.numel() for p in m.parameters())
        m = m.to("meta")
        acc = [0]
        hs = analytic_hooks(m, acc)
        try:
            l = C.capture(m, inputs(), name=name)
        except C.CaptureError as e:
            fails.append("%s: %s" % (name, e))
            continue
        finally:
            for h in hs:
                h.remove()
        if a.write:
            l.write(os.path.join(a.write, name + ".oplist"))
        got = captured_flops(l)
        err = abs(got - acc[0]) / max(acc[0], 1)
        kinds, dropped, folded, fused = summarise(l)
        aux = [p for p in l.not_run if "aux" not in p.lower()]
        if l.params() + l.params_uncalled != total or aux:
            fails.append("%s: params %d + %d not run (%s), torch says %d" % (name, l.params(), l.params_uncalled,
                                                                             ",".join(l.not_run), total))
        if err > 0.01:
            fails.append("%s: conv+gemm %.6g GFLOP captured, %.6g analytic (%.2f%%)" % (name, got / 1e9,
                                                                                      acc[0] / 1e9, 100 * err))
        for what, counts in (("mapped", l.mapped), ("dropped", l.dropped), ("folded", l.folded)):
            for k, v in counts.items():
                e = newly.setdefault((what, k), [0, set(), set()])
                e[0] += v
                e[1].add(name)
                e[2] |= l.became.get(k, set()) if what == "mapped" else {what}
        rows.append((name, len(l.ops), l.params(), l.params_uncalled, ", ".join(l.not_run), kinds, dropped, folded,
                     fused, got, err))
        print("%-20s %5d ops %11d params%s  %-60s dropped %4d folded %3d fused %3d  %8.3f GFLOP (%.3f%%) %.1fs" % (
            name, len(l.ops), l.params(), " (+%d not run)" % l.params_uncalled if l.params_uncalled else "",
            " ".join("%s %d" % kv for kv in sorted(kinds.items())), dropped, folded, fused, got / 1e9, 100 * err,
            time.time() - t1), flush=True)
    print("%d models in %.1f s" % (len(rows), time.time() - t0))
    if a.doc or a.check_doc:
        fails += doc_table(a.doc or a.check_doc, rows, newly, check=bool(a.check_doc), full=not only)
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


BEGIN = "<!-- capture-sweep table: python3 tests/capture_sweep.py --doc docs/own-model.md -->"
END = "<!-- capture-sweep table end -->"


def doc_table(path, rows, ops, check, full):
    """Rewrite (or, with check, compare) the table between BEGIN and END in path; a list of failures."""
    if not full:
        return ["--doc and --check-doc take the whole sweep (no --only)"]
    text = open(path).read()
    if BEGIN not in text or END not in text:
        return ["%s: no capture-sweep markers" % path]
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    new = "\n" + table(rows) + "\n" + ops_table(ops)
    if check:
        return [] if old == new else ["%s: the table differs from the sweep's (rerun python3 tests/capture_sweep.py "
                                      "--doc %s)" % (path, path)]
    with open(path + ".tmp", "w") as f:
        f.write(head + BEGIN + new + END + tail)
    os.replace(path + ".tmp", path)
    return []


def ops_table(ops):
    """Every aten op the sweep met: what it became, how often, in how many models."""
    out = ["Every aten op the sweep met (calls over all 83 models):", "",
           "| aten op | became | calls | models (first) |", "|---|---|---:|---|"]
    order = {"mapped": 0, "folded": 1, "dropped": 2}
    for (what, op), (n, models, kinds) in sorted(ops.items(), key=lambda kv: (order[kv[0][0]], -kv[1][0], kv[0][1])):
        short = op if what != "mapped" else op[len("aten."):] if op.startswith("aten.") else op
        out.append("| `%s` | %s | %d | %d (%s) |" % (short, ", ".join(sorted(kinds)), n, len(models), sorted(models)[0]))
    return "\n".join(out) + "\n"


def table(rows):
    out = ["| model | ops | parameters | kinds | dropped / folded / fused | conv+gemm GFLOP |",
           "|---|---:|---:|---|---|---:|"]
    for name, n, params, not_run, where, kinds, dropped, folded, fused, got, err in rows:
        out.append("| %s | %d | %d%s | %s | %d / %d / %d | %.3f |" % (
            name, n, params, " (+%d in %s, not run)" % (not_run, where) if not_run else "",
            ", ".join("%s %d" % kv for kv in sorted(kinds.items())), dropped, folded, fused, got / 1e9))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
