"""Capture a PyTorch model's operators as a pairsight operator list.

    python -m pairsight.capture MODULE:FACTORY --input 3x224x224[,SHAPE...]
        [--dtype fp16] --batch B --out mynet.oplist [--name mynet]

or, from Python:

    from pairsight.capture import capture
    ops = capture(model, [torch.empty(8, 3, 224, 224)], name="mynet")
    ops.write("mynet.oplist")

One forward pass (on the meta device where every op has a meta kernel, so
nothing is computed and nothing is allocated; on the CPU otherwise) under a
TorchDispatchMode records every aten op below autograd, in execution order.
Each op that launches a GPU kernel becomes one line of the collector's text
form (src/profile/oplist.h): `# pairsight oplist 1`, then `kind name key=value`.

Ops are mapped by rule, not by a list of names (docs/own-model.md has the
rules and the table of every torchvision model). torch 1.13 has no
torch.Tag.pointwise, so the rules read the op's schema and its shapes:
  dropped  an op whose schema says its output aliases an input (views,
           permutes, expand, split, detach: no kernel) or tagged
           inplace_view (as_strided_), _unsafe_view, allocations, eval
           dropout, and the device-to-host read of .item() on the CPU
  folded   an op whose tensor inputs are all constants (factories such as
           zeros, full, arange, tril of them, and the model's buffers):
           constant masks are built once at capture, as torch.jit.freeze
           and TensorRT fold them, not at every pass
  conv     aten.convolution of 1-D or 2-D inputs: grouped, depthwise,
           dilated (dilation folded into padding or the input extent),
           transposed (written as the data gradient of the forward conv, as
           cuDNN runs it: the same FLOPs and bytes); bias folded (cuDNN)
  gemm     mm, addmm, bmm, baddbmm, addbmm, addmv, mv, dot, addr,
           _addmm_activation (einsum and matmul arrive as these): the bias or
           beta term is folded (cuBLASLt's bias epilogue, cuBLAS's beta)
  norm     batch, layer and group norm; a module whose class name ends in
           RMSNorm (rms: its inner ops are one operator)
  softmax  _softmax, _log_softmax
  attn     any *scaled_dot_product* op;  embed: embedding
  pool     max/avg/adaptive pools with square windows, mean over the last
           two dims of a 4-D tensor (global)
  eltwise  by bytes moved, everything else that writes a tensor: pointwise
           ops and their in-place forms (output = broadcast of the inputs;
           relu, relu6, gelu, silu, tanh keep their variant, sigmoid is
           costed as silu, hardswish/hardsigmoid as relu6, erf as gelu,
           others scale / add / mul), index and mask ops and copies (elems =
           the output, inputs = input elements over output elements),
           gathers (the output read and written), reductions (elems = half
           of input + output elements, so that the bytes are exact)
  refused  ops outside aten (custom kernels), FFT and linear algebra,
           3-D convolution: listed with their counts (--unmapped-as-eltwise
           counts them by bytes instead)
Eager PyTorch launches every activation as a kernel of its own, so nothing
else is fused; a 1-D bias add right after a gemm or conv of the same module
is folded into it (the bias epilogue).

Names are module paths (`layer3.4.conv2`); an op of a module's forward that
is no module of its own is the module path plus the op (`layer1.0.add`); a
name met again gets `_1`, `_2`, ... Each operator carries `params=`: the
learned parameters it reads (through views too: nn.MultiheadAttention's
out_proj, class tokens, positional tables), each counted once, at its first
use; so the header's params= is sum(p.numel()) less the parameters of
modules that did not run (googlenet's aux heads in eval), which the header
names.

The capture needs torch only; it does not load libpairsight.
"""
import argparse
import contextlib
import importlib
import math
import os
import re
import sys
import tempfile

__all__ = ["capture", "OpList", "Unmapped", "CaptureError", "parse_inputs", "main"]

# Ops with no alias in their schema that still launch no kernel.
_NO_KERNEL = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "dropout", "feature_dropout",
    "alpha_dropout", "lift_fresh", "lift", "resolve_conj", "resolve_neg", "_assert_async", "sym_size",
    "sym_stride", "sym_numel", "is_same_size", "size", "stride", "_local_scalar_dense", "is_nonzero",
    "_has_compatible_shallow_copy_type", "set_", "record_stream", "_reshape_alias", "contiguous", "_unsafe_view",
}
# Ops whose output does not depend on their inputs' values: constants.
_FACTORY = {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "arange", "new_zeros",
            "new_ones", "new_full", "eye", "linspace", "logspace", "scalar_tensor", "tensor", "rand", "randn",
            "randint", "rand_like", "randn_like", "randperm"}
# Reads of a tensor's value into Python: a branch on data (if tensor:, .item()).
_SCALAR_READS = {"_local_scalar_dense", "is_nonzero", "equal", "allclose"}
_GEMMS = {"mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "mv", "dot", "vdot", "addr", "_addmm_activation"}
_GATHERS = {"index_select", "gather", "index", "take", "take_along_dim", "embedding_bag", "_embedding_bag"}
_REFUSED = ("fft", "_fft", "linalg", "_linalg", "cholesky", "svd", "_svd", "lu", "_lu", "triangular_solve",
            "inverse", "qr", "geqrf", "eig", "symeig", "det", "logdet", "slogdet", "lstsq", "stft", "istft",
            "cdist", "_cdist", "histc", "bincount", "nonzero", "unique", "_unique", "masked_select", "multinomial",
            "grid_sampler", "_thnn_fused", "_cudnn", "cudnn", "miopen", "mkldnn", "_nested", "_transformer",
            "_native_multi_head_attention", "_native_decoder")
# Activation variants of their own; costed as the nearest one for some.
_ELT_VARIANT = {"relu": "relu", "gelu": "gelu", "silu": "silu", "tanh": "tanh", "sigmoid": "silu",
                "hardswish": "relu6", "hardsigmoid": "relu6", "erf": "gelu"}
_ADDS = {"add", "sub", "rsub", "where", "masked_fill", "lerp", "maximum", "minimum", "addcmul", "addcdiv"}
_NAME_RE = re.compile(r"^[!-~]{1,63}$")  # printable ASCII, no space: one token of the header and of each line
_NAME_MAX = 63
_CPU_MAX_ELEMS = 1 << 28  # a --device cpu pass allocates its inputs: 1 GiB of fp32 at most
_MAX_ELEMS = 1 << 40  # the C reader's bound on any tensor of an operator (src/profile/oplist.c)
_MAX_BATCH = 1 << 30  # and on the header's batch and seq_len


class CaptureError(Exception):
    """A capture that cannot finish: a one-line reason (no traceback on the command line)."""


class Unmapped(CaptureError):
    """Raised when ops cannot be mapped; .counts maps aten op name to count."""

    def __init__(self, counts):
        self.counts = dict(counts)
        lines = ["  %-40s %d" % (k, v) for k, v in sorted(self.counts.items(), key=lambda kv: -kv[1])]
        fast = any(k.startswith(("aten._native_multi_head_attention", "aten._transformer_encoder_layer_fwd",
                                 "aten._native_decoder")) for k in self.counts)
        super().__init__("%d op(s) launch a kernel that fits no operator kind (rerun with --unmapped-as-eltwise "
                         "to count each as an eltwise of its output, or map them%s):\n%s" %
                         (sum(counts.values()), "; the fused CPU fast path of nn.MultiheadAttention or "
                          "nn.TransformerEncoderLayer: the default --device meta runs their unfused ops" if fast else "",
                          "\n".join(lines)))


class _RecorderFault(RuntimeError):
    """A fault of the capture itself (a bug to report), raised with its traceback."""


def _bump(d, key, n=1):
    d[key] = d.get(key, 0) + n


class OpList:
    """The captured operators: .ops is a list of (kind, name, {key: value}).

    .mapped, .dropped, .folded, .fused and .unmapped count the aten ops by
    what became of them; .not_run lists the modules whose parameters no op
    read (params_uncalled of them)."""

    def __init__(self, model, batch, seq_len=0, dtype="fp16"):
        self.model, self.batch, self.seq_len, self.dtype = model, batch, seq_len, dtype
        self.ops = []
        self.unmapped = {}
        self.mapped = {}
        self.dropped = {}
        self.folded = {}
        self.fused = {}
        self.became = {}  # aten op -> the kind(s) it became
        self.params_uncalled = 0
        self.not_run = []

    def params(self):
        return sum(kv.get("params", 0) for _, _, kv in self.ops)

    def text(self):
        not_run = "" if not self.params_uncalled else " not_run=%d (%s: modules the pass did not run)" % (
            self.params_uncalled, ",".join(self.not_run) or "?")
        out = ["# pairsight oplist 1",
               "# model=%s batch=%d seq_len=%d ops=%d%s" % (self.model, self.batch, self.seq_len, len(self.ops),
                                                           " dtype=fp32" if self.dtype == "fp32" else ""),
               "# captured by pairsight.capture: dtype=%s params=%d%s" % (self.dtype, self.params(), not_run)]
        for kind, name, kv in self.ops:
            keys = " ".join("%s=%s" % (k, v) for k, v in kv.items() if not (k == "params" and v == 0))
            out.append("%s %s %s" % (kind, name, keys))
        return "\n".join(out) + "\n"

    def write(self, path):
        """Write the text form atomically (a temporary file, then a rename); '-' is stdout."""
        text = self.text()
        if path == "-":
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".oplist.", dir=d)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def _numel(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _short(func):
    # aten.relu_.default -> relu ; aten.add.Tensor -> add
    base = str(func).split(".")
    op = base[1] if len(base) > 1 else base[0]
    return op[:-1] if op.endswith("_") and not op.startswith("_") else op


def _namespace(func):
    return str(func).split(".")[0]


def _tensors(args):
    import torch
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(t for t in a if isinstance(t, torch.Tensor))
    return out


def _is_view(func):
    """The schema says the output aliases an input without writing it, or the op is tagged inplace_view
    (as_strided_, squeeze_: a change of metadata): no kernel."""
    import torch
    tag = getattr(getattr(torch, "Tag", None), "inplace_view", None)
    if tag is not None and tag in getattr(func, "tags", ()):
        return True
    try:
        rets = func._schema.returns
    except AttributeError:
        return False
    return bool(rets) and all(r.alias_info is not None and not r.alias_info.is_write for r in rets)


def _conv_fit(h, w, r, s, stride, pad, dil, oh, ow):
    """(H, W, stride, pad) of a square-stride, one-pad, undilated conv of an r x s kernel whose output is
    oh x ow (the C formula (H + 2 pad - r) / stride + 1): the same FLOPs as the real one."""
    out = lambda i, k, st, p: (i + 2 * p - k) // st + 1
    if stride[0] == stride[1]:
        st = stride[0]
        for p in {pad[0] - (dil[0] - 1) * (r - 1) // 2, pad[1] - (dil[1] - 1) * (s - 1) // 2}:
            if p >= 0 and out(h, r, st, p) == oh and out(w, s, st, p) == ow:
                return h, w, st, p
        return (oh - 1) * st + r, (ow - 1) * st + s, st, 0  # the padded input's used extent
    return oh + r - 1, ow + s - 1, 1, 0  # non-square stride: stride 1 over the sampled extent


def _conv(args, out):
    x, wt = args[0], args[1]
    if x.dim() not in (3, 4):
        raise KeyError("convolution over %d spatial dims" % (x.dim() - 2))
    two = lambda v: (list(v) * 2)[:2] if len(v) == 1 else list(v)
    stride, pad, dil = two(args[3]), two(args[4]), two(args[5])
    transposed, groups = bool(args[6]), int(args[8])
    xs, ws, ys = list(x.shape), list(wt.shape), list(out.shape)
    if x.dim() == 3:  # 1-D: the length is h, w is 1
        xs, ws, ys = xs + [1], ws + [1], ys + [1]
        stride, pad, dil = [stride[0], 1], [pad[0], 0], [dil[0], 1]
    r, s = ws[2], ws[3]
    if transposed:  # the data gradient of the conv from the output back to the input (cuDNN's dgrad)
        n, c, h, w, k = ys[0], ys[1], ys[2], ys[3], xs[1]
        oh, ow = xs[2], xs[3]
    else:
        n, c, h, w, k = xs[0], xs[1], xs[2], xs[3], ws[0]
        oh, ow = ys[2], ys[3]
    h, w, st, p = _conv_fit(h, w, r, s, stride, pad, dil, oh, ow)
    return "conv", dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, stride=st, pad=p, groups=groups)


def _gemm(op, args):
    a, b = (args[1], args[2]) if op in ("addmm", "baddbmm", "addbmm", "addmv", "addr", "_addmm_activation") \
        else (args[0], args[1])
    if op in ("bmm", "baddbmm"):
        return "gemm", dict(m=a.shape[1], n=b.shape[2], k=a.shape[2], batch=a.shape[0])
    if op == "addbmm":  # sum of the batch's products: one gemm over the concatenated k
        return "gemm", dict(m=a.shape[1], n=b.shape[2], k=a.shape[2] * a.shape[0], batch=1)
    if op in ("addmv", "mv"):
        return "gemm", dict(m=a.shape[0], n=1, k=a.shape[1], batch=1)
    if op in ("dot", "vdot"):
        return "gemm", dict(m=1, n=1, k=a.shape[0], batch=1)
    if op == "addr":
        return "gemm", dict(m=a.shape[0], n=b.shape[0], k=1, batch=1)
    return "gemm", dict(m=a.shape[0], n=b.shape[1], k=a.shape[1], batch=1)


def _tagged_pointwise(func):
    """torch.Tag.pointwise where torch has it (2.0 on; torch 1.13 has no such tag: the shape rule decides)."""
    import torch
    tag = getattr(getattr(torch, "Tag", None), "pointwise", None)
    return tag is not None and tag in getattr(func, "tags", ())


def _eltwise(op, func, args, outs):
    tens = [t for t in _tensors(args)]
    out = outs[0]
    elems = max(1, _numel(out.shape))
    nin = sum(_numel(t.shape) for t in tens)
    if any(t.is_complex() for t in tens + outs):
        raise KeyError(op)
    if op in _GATHERS:  # only the gathered elements are read
        return "eltwise", dict(variant="scale", elems=elems, inputs=1)
    if tens and elems < max(_numel(t.shape) for t in tens) and not _tagged_pointwise(func):
        # a reduction: bytes read + written
        return "eltwise", dict(variant="scale", elems=max(1, (nin + elems + 1) // 2), inputs=1)
    if op == "hardtanh" and (args[1] if len(args) > 1 else -1.0) == 0 and (args[2] if len(args) > 2 else 1.0) == 6:
        return "eltwise", dict(variant="relu6", elems=elems, inputs=1)
    if op in _ELT_VARIANT and len(tens) == 1:
        return "eltwise", dict(variant=_ELT_VARIANT[op], elems=elems, inputs=1)
    inputs = max(1, int(round(float(nin) / elems)))
    if inputs == 1:
        return "eltwise", dict(variant="scale", elems=elems, inputs=1)
    return "eltwise", dict(variant="add" if op in _ADDS else "mul", elems=elems, inputs=inputs)


def _pool(op, args, out):
    x = args[0]
    n, c, h, w = x.shape
    if op in ("max_pool2d_with_indices", "max_pool2d", "avg_pool2d"):
        k = list(args[1]) if isinstance(args[1], (list, tuple)) else [args[1]]
        st = list(args[2]) if len(args) > 2 and args[2] else k
        k, st = (k * 2)[:2], (st * 2)[:2]
        if k[0] != k[1] or st[0] != st[1]:
            return None
        return "pool", dict(variant="max" if op.startswith("max") else "avg", n=n, c=c, h=h, w=w,
                            window=k[0], stride=st[0])
    # adaptive pools
    oh, ow = out.shape[-2], out.shape[-1]
    if oh == 1 and ow == 1 and op.startswith("_adaptive_avg"):
        return "pool", dict(variant="global", n=n, c=c, h=h, w=w, window=h, stride=1)
    if h % oh or w % ow or h // oh != w // ow:
        return None
    win = h // oh
    return "pool", dict(variant="max" if "max" in op else "avg", n=n, c=c, h=h, w=w, window=win, stride=win)


def _map(op, func, args, outs):
    """(kind, keys) of one aten op that launches a kernel; KeyError if it fits no kind."""
    if _namespace(func) != "aten" or any(op == p or op.startswith(p + "_") for p in _REFUSED):
        raise KeyError(op)
    out = outs[0]
    if op == "convolution":
        return _conv(args, out)
    if op in _GEMMS:
        return _gemm(op, args)
    if op in ("native_batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit"):
        x = args[0]
        return "norm", dict(variant="batch", n=x.shape[0], c=x.shape[1], hw=_numel(x.shape[2:]))
    if op == "native_layer_norm":
        x, norm = args[0], args[1]
        c = _numel(norm)
        return "norm", dict(variant="layer", n=_numel(x.shape) // c, c=c, hw=1)
    if op == "native_group_norm":  # each (sample, group) a row: a layer norm's shape
        x, groups = args[0], int(args[6])
        return "norm", dict(variant="layer", n=x.shape[0] * groups, c=_numel(x.shape[1:]) // groups, hw=1)
    if op in ("_softmax", "softmax", "_log_softmax", "log_softmax"):
        x, dim = args[0], args[1]
        cols = x.shape[dim]
        return "softmax", dict(rows=_numel(x.shape) // cols, cols=cols)
    if "scaled_dot_product" in op or op in ("_flash_attention_forward", "_efficient_attention_forward"):
        q, k = args[0], args[1]
        causal = 1 if any(a is True for a in args[3:6]) else 0
        return "attn", dict(batch=_numel(q.shape[:-3]) if q.dim() > 3 else 1, heads=q.shape[-3],
                            kv_heads=k.shape[-3], seq_q=q.shape[-2], seq_kv=k.shape[-2], head_dim=q.shape[-1],
                            causal=causal)
    if op == "embedding":
        w, idx = args[0], args[1]
        return "embed", dict(rows=_numel(idx.shape), dim=w.shape[1], vocab=w.shape[0])
    r = None
    if op in ("max_pool2d_with_indices", "max_pool2d", "avg_pool2d", "_adaptive_avg_pool2d",
              "adaptive_max_pool2d") and args[0].dim() == 4:
        r = _pool(op, args, out)
    if op == "mean" and args[0].dim() == 4 and len(args) > 1 and isinstance(args[1], (list, tuple)) and \
            sorted(int(d) % 4 for d in args[1]) == [2, 3]:
        x = args[0]
        r = "pool", dict(variant="global", n=x.shape[0], c=x.shape[1], h=x.shape[2], w=x.shape[3],
                         window=x.shape[2], stride=1)
    return r or _eltwise(op, func, args, outs)


def _unmapped_eltwise(args, outs):
    elems = max([_numel(t.shape) for t in outs] or [_numel(t.shape) for t in _tensors(args)] or [1])
    ntens = len([t for t in _tensors(args) if t.dim() > 0])
    if ntens >= 2:
        return "eltwise", dict(variant="add", elems=max(elems, 1), inputs=2)
    return "eltwise", dict(variant="scale", elems=max(elems, 1), inputs=1)


def _op_name(name):
    """One token the C reader takes: printable, no space, at most 63 bytes with room for a _N suffix."""
    name = re.sub(r"[^!-~]", "_", name) or "op"
    return name if len(name) <= _NAME_MAX - 6 else name[:18] + "~" + name[-(_NAME_MAX - 6 - 19):]


class _Recorder:
    """Turns the aten calls of one pass into operators. It follows each tensor's provenance: the
    parameters it is a view of (counted at the first op that reads them) and whether it is a constant
    (a factory's output, a buffer, or computed from constants only: folded, no kernel)."""

    def __init__(self, model, oplist, unmapped_as_eltwise, device):
        self.model = model
        self.l = oplist
        self.as_elt = unmapped_as_eltwise
        self.device = device
        self.stack = []  # (path, module)
        self.names = {}
        self.counted = set()  # ids of parameters already on an operator
        self.last = None  # (index, path)
        self.param_numel = {}
        self.prov = {}  # id(tensor) -> (tensor, is_constant, frozenset of parameter ids)
        for p in model.parameters():
            self.param_numel[id(p)] = p.numel()
            self.prov[id(p)] = (p, False, frozenset([id(p)]))
        for b in model.buffers():
            self.prov[id(b)] = (b, True, frozenset())

    def path(self):
        return self.stack[-1][0] if self.stack else ""

    def module(self):
        return self.stack[-1][1] if self.stack else self.model

    def in_rms(self):
        return any(type(m).__name__.endswith("RMSNorm") for _, m in self.stack)

    def unique(self, name):
        name = _op_name(name)
        n = self.names.get(name, 0)
        self.names[name] = n + 1
        return name if n == 0 else "%s_%d" % (name, n)

    def const(self, t):
        e = self.prov.get(id(t))
        return bool(e and e[1])

    def params_in(self, tens):
        ids = set()
        for t in tens:
            e = self.prov.get(id(t))
            if e:
                ids |= e[2]
        return ids

    def take_params(self, ids):
        new = ids - self.counted
        self.counted |= new
        return sum(self.param_numel[i] for i in new)

    def fold_bias(self, op, tens, kind):
        # add(_) of a 1-D bias right after a gemm or conv of the same module: the bias epilogue
        if kind != "eltwise" or op != "add" or self.last is None or self.last[1] != self.path():
            return False
        prev_kind = self.l.ops[self.last[0]][0]
        if prev_kind in ("gemm", "conv") and len(tens) == 2 and min(t.dim() for t in tens) == 1:
            _bump(self.l.fused, "add (1-D bias) into the %s before it (%s)" % (
                prev_kind, "cuBLASLt bias epilogue" if prev_kind == "gemm" else "cuDNN conv+bias"))
            return True
        return False

    def note_fused(self, op, args):
        if op == "addmm" or op == "addmv" or op == "addr":
            _bump(self.l.fused, "%s bias into gemm (cuBLASLt bias epilogue)" % op)
        elif op in ("baddbmm", "addbmm"):
            _bump(self.l.fused, "%s input into gemm (cuBLAS beta: C = alpha AB + beta C)" % op)
        elif op == "_addmm_activation":
            _bump(self.l.fused, "_addmm_activation bias and activation into gemm (cuBLASLt epilogue)")
        elif op == "convolution" and len(args) > 2 and args[2] is not None:
            _bump(self.l.fused, "convolution bias into conv (cuDNN conv+bias)")

    def scalar_read(self, func):
        where = self.path() or "the model's forward"
        return CaptureError(
            "%s reads a tensor's value (%s: `.item()`, `if tensor:`, a comparison turned into a bool) in %s; "
            "a pass on the meta device has no values: rerun with --device cpu (zero inputs), or take the "
            "data-dependent branch out of the forward" % (type(self.model).__name__, func, where))

    def record(self, func, args, kwargs, out):
        import torch
        op = _short(func)
        tens = _tensors(list(args) + list(kwargs.values()))
        outs = [out] if isinstance(out, torch.Tensor) else _tensors(out) if isinstance(out, (list, tuple)) else []
        if self.in_rms():
            return
        if _is_view(func) or op in _NO_KERNEL:
            _bump(self.l.dropped, op)
            const = bool(tens) and all(self.const(t) for t in tens)
            ids = frozenset(self.params_in(tens))
            for o in outs:
                if const or ids:
                    self.prov[id(o)] = (o, const, ids)
            return
        if not outs:
            _bump(self.l.dropped, op)
            return
        const = all(self.const(t) for t in tens) if tens else True
        if op in _FACTORY or const:
            _bump(self.l.folded, op)
            for o in outs:
                self.prov[id(o)] = (o, True, frozenset())
            return
        for o in outs:  # a new value (or one written in place): not a constant, no parameter's view
            self.prov.pop(id(o), None)
        try:
            r = _map(op, func, args, outs)
        except KeyError:
            _bump(self.l.unmapped, str(func))
            if not self.as_elt:
                return
            r = _unmapped_eltwise(args, outs)
        kind, kv = r
        params = self.take_params(self.params_in(tens))
        if self.fold_bias(op, tens, kind):
            self.l.ops[self.last[0]][2]["params"] += params
            return
        _bump(self.l.mapped, str(func))
        self.l.became.setdefault(str(func), set()).add(kind)
        self.note_fused(op, args)
        leaf = self.stack and not list(self.module().children())
        base = self.path() if leaf and self.path() else ".".join(x for x in (self.path(), op) if x)
        kv["params"] = params
        self.l.ops.append((kind, self.unique(base), kv))
        self.last = (len(self.l.ops) - 1, self.path())

    def rms_enter(self, path, m, inp):
        x = inp[0]
        c = x.shape[-1]
        own = self.take_params(set(id(p) for p in m.parameters()))
        self.l.ops.append(("norm", self.unique(path or "rmsnorm"),
                           dict(variant="rms", n=_numel(x.shape) // c, c=c, hw=1, params=own)))
        _bump(self.l.fused, "%s (its ops) into one norm (a fused RMSNorm kernel)" % type(m).__name__)
        self.last = (len(self.l.ops) - 1, path)

    def not_run(self):
        """Top-most modules none of whose parameters an op read."""
        out = []
        for path, m in self.model.named_modules():
            ps = list(m.parameters())
            if path and ps and not any(id(p) in self.counted for p in ps) and \
                    not any(path.startswith(q + ".") for q in out):
                out.append(path)
        return out


def _hooks(model, rec):
    handles = []
    for path, m in model.named_modules():
        if m is model:
            continue

        def pre(mod, inp, path=path):
            if not rec.in_rms() and type(mod).__name__.endswith("RMSNorm"):
                rec.rms_enter(path, mod, inp)
            rec.stack.append((path, mod))

        def post(mod, inp, out):
            rec.stack.pop()

        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    return handles


def _on_meta(model, inputs):
    import copy
    try:
        on_meta = all(p.device.type == "meta" for p in model.parameters())
        m = model if on_meta else copy.deepcopy(model).to("meta")  # the caller's weights stay
        xs = [x.to("meta") for x in inputs]
        return m, xs
    except Exception:  # some modules refuse the move: run on the CPU
        return model, inputs


def input_hint(model):
    """What the model's first layer takes, for a message: '' when it cannot tell."""
    import torch.nn as nn
    for path, m in model.named_modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            return "its first layer %s (%s) takes %d channels: --input %s" % (
                path, type(m).__name__, m.in_channels, "x".join([str(m.in_channels)] + ["H", "W", "D"][:m.weight.dim() - 2]))
        if isinstance(m, nn.Linear):
            return "its first layer %s (Linear) takes %d features: --input ...x%d" % (path, m.in_features,
                                                                                      m.in_features)
        if isinstance(m, nn.Embedding):
            return "its first layer %s (Embedding) takes token ids: --input SEQ:int64" % path
    return ""


def _forward_hint(model):
    """The forward's tensor arguments, for a count of inputs that does not fit."""
    import inspect
    try:
        ps = [p for p in inspect.signature(model.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return ""
    need = [p.name for p in ps if p.default is p.empty]
    return "%s.forward(%s) takes %d input(s) without a default: one --input shape each, comma-separated" % (
        type(model).__name__, ", ".join(p.name for p in ps), len(need))


def _tensor_elems(kind, kv):
    """(what, elements) of each tensor of an operator, as src/profile/oplist.c counts them."""
    g = lambda k, d=1: int(kv.get(k, d))
    if kind == "gemm":
        return [("input", g("batch") * g("m") * g("k")), ("weight", g("batch") * g("k") * g("n")),
                ("output", g("batch") * g("m") * g("n"))]
    if kind == "conv":
        return [("input", g("n") * g("c") * g("h") * g("w")), ("weight", g("k") * g("c") * g("r") * g("s")),
                ("output", g("n") * g("k") * max(1, (g("h") + 2 * g("pad", 0) - g("r")) // g("stride") + 1) *
                 max(1, (g("w") + 2 * g("pad", 0) - g("s")) // g("stride") + 1))]
    if kind == "norm":
        return [("input", g("n") * g("c") * g("hw"))]
    if kind == "softmax":
        return [("input", g("rows") * g("cols"))]
    if kind == "eltwise":
        return [("input", g("elems") * g("inputs"))]
    if kind == "pool":
        return [("input", g("n") * g("c") * g("h") * g("w"))]
    if kind == "attn":
        return [("query", g("batch") * g("heads") * g("seq_q") * g("head_dim")),
                ("keys and values", 2 * g("batch") * g("kv_heads") * g("seq_kv") * g("head_dim"))]
    if kind == "embed":
        return [("output", g("rows") * g("dim")), ("table", g("vocab") * g("dim"))]
    return []


def _check_sizes(l):
    """Every tensor within the C reader's 2^40 elements: a list it would refuse is not written."""
    for kind, name, kv in l.ops:
        for what, n in _tensor_elems(kind, kv):
            if n > _MAX_ELEMS:
                raise CaptureError("%s %s: its %s has %d elements, past 2^40 (2 TiB at fp16: more than any GPU "
                                   "holds); a smaller --batch or --input" % (kind, name, what, n))


def capture(model, inputs, name="model", batch=None, seq_len=0, dtype="fp16", unmapped_as_eltwise=False,
            device="meta"):
    """Run model(*inputs) once and return its OpList.

    inputs are tensors with the batch dimension. device="meta" (default)
    computes nothing; "cpu" runs the pass for real. Raises Unmapped (with
    .counts) when an op has no kind and unmapped_as_eltwise is False, and
    CaptureError (one line) when the pass fails or launches no kernel.
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    if batch is None:
        batch = int(inputs[0].shape[0]) if inputs and inputs[0].dim() > 0 else 1
    l = OpList(name, batch, seq_len, dtype)
    model = model.eval()
    total = sum(p.numel() for p in model.parameters())
    if device == "meta":
        model, inputs = _on_meta(model, inputs)
    rec = _Recorder(model, l, unmapped_as_eltwise, device)

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if _short(func) in _SCALAR_READS and any(t.device.type == "meta" for t in _tensors(args)):
                raise rec.scalar_read(func)
            out = func(*args, **kwargs)
            try:
                rec.record(func, args, kwargs, out)
            except CaptureError:
                raise
            except Exception as e:  # a fault of the recorder, not of the model: keep its traceback
                raise _RecorderFault("recording %s in %s: %r" % (func, rec.path(), e)) from e
            return out

    handles = _hooks(model, rec)
    try:
        with torch.no_grad(), Mode():
            model(*inputs)
    except (CaptureError, _RecorderFault):
        raise
    except Exception as e:
        where = rec.path() or "the model's forward"
        msg = (str(e).strip().splitlines() or [""])[0]
        hint = input_hint(model)
        if isinstance(e, TypeError) and "argument" in msg and where == "the model's forward":
            hint = _forward_hint(model)
        if isinstance(e, NotImplementedError) and "Meta" in str(e):
            hint = "an op with no meta kernel: rerun with --device cpu"
        raise CaptureError("the pass failed in %s on inputs %s: %s: %s%s" % (
            where, ", ".join("x".join(str(d) for d in x.shape) for x in inputs), type(e).__name__, msg,
            "; " + hint if hint else "")) from e
    finally:
        for h in handles:
            h.remove()
    if l.unmapped and not unmapped_as_eltwise:
        raise Unmapped(l.unmapped)
    if not l.ops:
        raise CaptureError("%s launches no kernel on inputs %s: an empty operator list is no model" % (
            name, ", ".join("x".join(str(d) for d in x.shape) for x in inputs)))
    _check_sizes(l)
    l.params_uncalled = total - l.params()
    l.not_run = rec.not_run() if l.params_uncalled else []
    return l


# ---- comparing two lists ----

_SHAPE_KEYS = {"conv": "n c h w k r s stride pad groups", "gemm": "m n k batch", "norm": "variant n c hw",
               "softmax": "rows cols", "eltwise": "variant elems inputs", "pool": "variant n c h w window stride",
               "attn": "batch heads kv_heads seq_q seq_kv head_dim causal", "embed": "rows dim vocab"}


def read_text(text):
    """The operators of an oplist text: [(kind, name, {key: str})]."""
    ops = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, name, *kvs = line.split()
        ops.append((kind, name, dict(kv.split("=", 1) for kv in kvs)))
    return ops


def shape_params(kind, kv):
    """Learned parameters implied by an operator's shape (no biases): what a built-in list carries."""
    g = lambda k: int(kv.get(k, 1))
    if kind == "conv":
        return g("k") * (g("c") // g("groups")) * g("r") * g("s")
    if kind == "gemm" and g("batch") == 1:
        return g("k") * g("n")
    if kind == "norm" and kv.get("variant", "batch") in ("batch", "layer"):
        return 2 * g("c")
    if kind == "norm":
        return g("c")
    if kind == "embed":
        return g("vocab") * g("dim")
    return 0


def compare(captured, builtin):
    """Op-for-op differences between two oplist texts: a list of strings, empty when they agree on
    kinds, shapes and parameters (the captured list's params= against the built-in's shapes, biases
    of a gemm counted)."""
    a, b = read_text(captured), read_text(builtin)
    diffs = []
    if len(a) != len(b):
        diffs.append("%d operators captured, %d built in" % (len(a), len(b)))
    for i, (x, y) in enumerate(zip(a, b)):
        if x[0] != y[0]:
            diffs.append("op %d: %s %s captured, %s %s built in" % (i, x[0], x[1], y[0], y[1]))
            continue
        keys = _SHAPE_KEYS.get(x[0], "").split()
        dk = [k for k in keys if x[2].get(k) != y[2].get(k)]
        if dk:
            diffs.append("op %d: %s %s vs %s: %s" % (i, x[0], x[1], y[1], ", ".join(
                "%s=%s/%s" % (k, x[2].get(k), y[2].get(k)) for k in dk)))
        want = shape_params(y[0], y[2])
        got = int(x[2].get("params", 0))
        bias = int(y[2].get("n", 0)) if y[0] == "gemm" and want else 0
        if got not in (want, want + bias):
            diffs.append("op %d: %s params=%d captured, %d from the built-in shape" % (i, x[1], got, want))
    return diffs


# ---- command line ----

_DTYPES = {"fp16": "float16", "fp32": "float32", "bf16": "bfloat16"}


def parse_inputs(spec):
    """'3x224x224,128:int64' -> [((3, 224, 224), 'float'), ((128,), 'int64')]"""
    out = []
    for item in spec.split(","):
        shape, _, kind = item.partition(":")
        try:
            dims = tuple(int(d) for d in shape.lower().split("x"))
        except ValueError:
            raise ValueError("--input: '%s' is not a shape such as 3x224x224 or 128:int64" % item) from None
        if not dims or any(d <= 0 for d in dims):
            raise ValueError("--input: '%s': every dimension must be positive" % item)
        if kind not in ("", "float", "int64", "long"):
            raise ValueError("--input: '%s': the type after ':' is int64 (token ids) or float" % item)
        out.append((dims, "int64" if kind in ("int64", "long") else "float"))
    return out


def parse_kwargs(spec):
    """'aux_logits=False,num_classes=10' -> {'aux_logits': False, 'num_classes': 10}"""
    import ast
    kw = {}
    for item in filter(None, spec.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not k.strip().isidentifier():
            raise ValueError("--kwargs: '%s' is not NAME=VALUE (k=v,... with Python literals)" % item)
        try:
            kw[k.strip()] = ast.literal_eval(v.strip())
        except (ValueError, SyntaxError):
            raise ValueError("--kwargs: '%s': '%s' is not a Python literal (a number, a string in quotes, True, "
                             "False, None, a tuple)" % (item, v)) from None
    return kw


def _factory(spec):
    mod, sep, fn = spec.partition(":")
    if not sep or not mod or not fn:
        raise ValueError("MODEL: expected MODULE:FACTORY such as torchvision.models:resnet50, got '%s'" % spec)
    try:
        m = importlib.import_module(mod)
    except Exception as e:
        raise ValueError("MODEL: cannot import %s: %s: %s" % (mod, type(e).__name__, _first_line(e))) from None
    obj = m
    for part in fn.split("."):
        if not hasattr(obj, part):
            raise ValueError("MODEL: %s has no %s" % (mod, fn))
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError("MODEL: %s is not callable" % spec)
    return obj


def _first_line(e):
    return (str(e).strip().splitlines() or [""])[0]


@contextlib.contextmanager
def _stdout_to_stderr():
    """The model's print()s (Python's and the C library's) go to stderr: with --out - stdout is the list."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _check_args(p, a):
    """Refusals before anything runs; returns the input shapes."""
    if not 0 < a.batch <= _MAX_BATCH:
        p.error("--batch: expected 1 to 2^30 (%d), got %d" % (_MAX_BATCH, a.batch))
    if a.seq_len is not None and not 0 <= a.seq_len <= _MAX_BATCH:
        p.error("--seq-len: expected 0 to 2^30 (%d), got %d" % (_MAX_BATCH, a.seq_len))
    if a.name is not None and not _NAME_RE.match(a.name):
        p.error("--name: %r: 1 to %d printable characters without spaces or control characters (it is one "
                "token of the list's header)" % (a.name, _NAME_MAX))
    try:
        shapes = parse_inputs(a.input)
    except ValueError as e:
        p.error(str(e))
    elems = sum(_numel(dims) for dims, _ in shapes) * a.batch
    limit = _CPU_MAX_ELEMS if a.device == "cpu" else _MAX_ELEMS
    if elems > limit:
        p.error("--input x --batch: %d input elements; --device %s takes at most %d%s" % (
            elems, a.device, limit, " (it allocates them): the default --device meta allocates nothing"
            if a.device == "cpu" else ""))
    if a.out != "-":
        d = os.path.dirname(os.path.abspath(a.out))
        if not os.path.isdir(d):
            p.error("--out %s: no such folder %s" % (a.out, d))
        if os.path.isdir(a.out):
            p.error("--out %s: is a folder (give a file name)" % a.out)
        if not os.access(d, os.W_OK):
            p.error("--out %s: the folder %s is not writable" % (a.out, d))
    return shapes


def _inputs(shapes, a, dt):
    import torch
    dev = "meta" if a.device == "meta" else "cpu"
    xs = []
    seq = a.seq_len
    for dims, kind in shapes:
        if kind == "int64":
            xs.append(torch.zeros((a.batch,) + dims, dtype=torch.int64, device=dev))
            if seq is None:
                seq = dims[-1]
        else:
            xs.append(torch.zeros((a.batch,) + dims, dtype=dt if dev == "meta" else torch.float32, device=dev))
    return xs, seq


def _summary(l, name, a):
    kinds = {}
    for k, _, _ in l.ops:
        kinds[k] = kinds.get(k, 0) + 1
    sys.stderr.write("capture: %s batch %d: %d operators (%s), %d parameters%s -> %s\n" % (
        name, a.batch, len(l.ops), ", ".join("%s %d" % kv for kv in sorted(kinds.items())), l.params(),
        "" if not l.params_uncalled else " (%d more in %s, which the pass did not run)" % (
            l.params_uncalled, ", ".join(l.not_run)), a.out))
    if l.unmapped:
        sys.stderr.write("capture: counted as eltwise: %s\n" % ", ".join(
            "%s x%d" % kv for kv in sorted(l.unmapped.items())))


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage block: the message says what to change
        self.exit(2, "%s: error: %s (--help: usage)\n" % (self.prog, message))


def main(argv=None):
    p = _Parser(
        prog="python -m pairsight.capture",
        description="Capture a PyTorch model's operators as a pairsight operator list (one forward pass). "
                    "Ops map by rule (docs/own-model.md): views are dropped, constant masks folded, "
                    "convolutions and the GEMM family keep their FLOPs, everything else that writes a tensor "
                    "is an eltwise of the bytes it moves; only ops that fit none are refused, with counts.",
        epilog="example: python -m pairsight.capture torchvision.models:resnet50 --input 3x224x224 "
               "--batch 8 --out resnet50.oplist")
    p.add_argument("model", metavar="MODULE:FACTORY", help="a callable that returns the nn.Module")
    p.add_argument("--input", required=True, help="one shape per model input, without the batch "
                   "dimension: 3x224x224 or 128:int64 for token ids (required)")
    p.add_argument("--batch", type=int, default=1, help="batch size, 1 to 2^30 (default 1)")
    p.add_argument("--dtype", choices=sorted(_DTYPES), default="fp16", help="float inputs' type (default fp16)")
    p.add_argument("--name", default=None, help="model name in the list, printable without spaces, at most 63 "
                   "characters (default: the factory's name)")
    p.add_argument("--seq-len", type=int, default=None,
                   help="tokens per sequence, 0 to 2^30 (default: last dim of the first int64 input, else 0)")
    p.add_argument("--kwargs", default="", help="factory keyword arguments, k=v,... (Python literals; default none)")
    p.add_argument("--device", choices=("meta", "cpu"), default="meta",
                   help="where the pass runs (default meta: nothing allocated; cpu allocates the inputs, at most "
                        "2^28 elements, and gives values to a model that branches on them)")
    p.add_argument("--unmapped-as-eltwise", action="store_true",
                   help="count ops that fit no kind as eltwise by bytes moved (default: refuse, with counts)")
    p.add_argument("--out", required=True, help="output file, written whole or not at all; - for stdout "
                   "(the model's own prints go to stderr) (required)")
    p.add_argument("-q", action="store_true", help="no summary on stderr")
    a = p.parse_args(argv)
    shapes = _check_args(p, a)
    try:
        kw = parse_kwargs(a.kwargs)
        with _stdout_to_stderr():  # what the module prints as it is imported
            fn = _factory(a.model)
    except ValueError as e:
        p.error(str(e))
    name = a.name or a.model.partition(":")[2].split(".")[-1]
    if not _NAME_RE.match(name):
        p.error("MODEL: the name %r does not fit the list's header: give --name" % name)
    import torch
    dt = getattr(torch, _DTYPES[a.dtype])
    try:
        with _stdout_to_stderr():
            try:
                model = fn(**kw)
            except Exception as e:
                raise CaptureError("%s(%s) failed: %s: %s" % (a.model, a.kwargs, type(e).__name__, _first_line(e)))
            if not isinstance(model, torch.nn.Module):
                raise CaptureError("%s returned a %s, not a torch.nn.Module" % (a.model, type(model).__name__))
            xs, seq = _inputs(shapes, a, dt)
            if a.device == "meta":
                try:
                    model = model.to("meta")  # before the cast: the weights are not read
                except Exception:  # a module that refuses the move: capture() runs it on the CPU
                    pass
                model = model.to(dt)
            l = capture(model, xs, name=name, batch=a.batch, seq_len=seq or 0, dtype=a.dtype,
                        unmapped_as_eltwise=a.unmapped_as_eltwise, device=a.device)
        l.write(a.out)
    except CaptureError as e:
        sys.stderr.write("pairsight: capture: %s\n" % e)
        return 1
    except OSError as e:
        sys.stderr.write("pairsight: capture: %s: %s\n" % (a.out, e.strerror or e))
        return 1
    if not a.q:
        _summary(l, name, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
