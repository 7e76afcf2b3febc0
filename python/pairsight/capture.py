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

Mapping (docs/own-model.md lists it in full):
  conv     aten.convolution (its bias argument is folded in: cuDNN's conv +
           bias); asymmetric padding is folded into h and w with pad=0
  gemm     aten.mm, addmm (bias folded: cuBLASLt's bias epilogue), bmm, and
           the mm of a 3-D linear; an add of a 1-D bias straight after a gemm
           of the same module is folded into it
  norm     native_batch_norm (variant=batch), native_layer_norm (layer), a
           module whose class name ends in RMSNorm (rms: its inner ops are one
           operator)
  softmax  _softmax
  eltwise  relu, hardtanh(0, 6) (relu6), gelu, silu, tanh, add, mul, and a
           mul or div by a scalar (scale); copies (cat, clone, copy_,
           _to_copy) are eltwise scale: one read and one write an element;
           so are fills (zeros, ones, full, fill_, arange)
  pool     max_pool2d, avg_pool2d, _adaptive_avg_pool2d, mean over the last
           two dims (global)
  attn     any aten op named *scaled_dot_product* (flash, efficient, math)
  embed    embedding
Activations are not folded into their conv or GEMM: PyTorch's eager mode
launches them as kernels of their own, as the built-in lists have them.
Views, allocations and dropout in eval mode launch no kernel and are left
out. Any other op is unmapped: the capture lists them with their counts and
refuses, unless unmapped_as_eltwise=True (--unmapped-as-eltwise), which makes
each an eltwise of its output's elements (variant scale, or add for two or
more tensor inputs) so that its bytes moved are counted.

Names are module paths (`layer3.4.conv2`); an op of a module's forward that
is no module of its own is the module path plus the op (`layer1.0.add`); a
name met again gets `_1`, `_2`, ... Each operator carries `params=` (the
learned parameters of its module, counted at the module's first op, once).

The capture needs torch only; it does not load libpairsight.
"""
import argparse
import importlib
import math
import os
import sys
import tempfile

__all__ = ["capture", "OpList", "Unmapped", "parse_inputs", "main"]

_VIEW_OPS = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "t", "transpose", "permute", "expand", "squeeze",
    "unsqueeze", "slice", "select", "as_strided", "detach", "alias", "split", "split_with_sizes", "chunk",
    "unbind", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "lift_fresh",
    "dropout", "feature_dropout", "alpha_dropout", "flatten", "contiguous", "expand_as", "view_as",
    "narrow", "unfold", "diagonal", "movedim", "_to_copy_noop", "lift", "resolve_conj", "resolve_neg",
    "_assert_async", "sym_size", "sym_stride", "sym_numel", "is_same_size", "size", "stride",
}
_ELT_UNARY = {"relu": "relu", "gelu": "gelu", "silu": "silu", "tanh": "tanh"}
_COPY_OPS = {"cat", "clone", "copy", "_to_copy", "stack"}
_FILL_OPS = {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "fill", "zero", "arange"}


class Unmapped(Exception):
    """Raised when ops cannot be mapped; .counts maps aten op name to count."""

    def __init__(self, counts):
        self.counts = dict(counts)
        lines = ["  %-40s %d" % (k, v) for k, v in sorted(self.counts.items(), key=lambda kv: -kv[1])]
        super().__init__("%d aten op(s) with no operator kind (rerun with --unmapped-as-eltwise to count "
                         "each as an eltwise of its output, or map them):\n%s" % (sum(counts.values()),
                                                                                  "\n".join(lines)))


class OpList:
    """The captured operators: .ops is a list of (kind, name, {key: value})."""

    def __init__(self, model, batch, seq_len=0, dtype="fp16"):
        self.model, self.batch, self.seq_len, self.dtype = model, batch, seq_len, dtype
        self.ops = []
        self.unmapped = {}
        self.mapped = {}
        self.fused = {}
        self.params_uncalled = 0

    def params(self):
        return sum(kv.get("params", 0) for _, _, kv in self.ops)

    def text(self):
        out = ["# pairsight oplist 1",
               "# model=%s batch=%d seq_len=%d ops=%d%s" % (self.model, self.batch, self.seq_len, len(self.ops),
                                                           " dtype=fp32" if self.dtype == "fp32" else ""),
               "# captured by pairsight.capture: dtype=%s params=%d" % (self.dtype, self.params())]
        for kind, name, kv in self.ops:
            keys = " ".join("%s=%s" % (k, v) for k, v in kv.items() if not (k == "params" and v == 0))
            out.append("%s %s %s" % (kind, name, keys))
        return "\n".join(out) + "\n"

    def write(self, path):
        """Write the text form atomically (a temporary file, then a rename); '-' is stdout."""
        if path == "-":
            sys.stdout.write(self.text())
            return
        d = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".oplist.", dir=d)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(self.text())
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
    name = func.__name__ if hasattr(func, "__name__") else str(func)
    base = str(func).split(".")
    op = base[1] if len(base) > 1 and base[0] == "aten" else name.split(".")[0]
    return op[:-1] if op.endswith("_") and not op.startswith("_") else op


def _tensors(args):
    import torch
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(t for t in a if isinstance(t, torch.Tensor))
    return out


class _Mapper:
    """Turns one aten call into (kind, suffix, keys) or None (no kernel); raises KeyError if unmapped."""

    def conv(self, args, out):
        x, w = args[0], args[1]
        stride, pad, dil = list(args[3]), list(args[4]), list(args[5])
        transposed, groups = args[6], int(args[8])
        if transposed or any(d != 1 for d in dil) or len(stride) != 2 or stride[0] != stride[1]:
            raise KeyError("convolution (transposed, dilated, non-2-D or non-square stride)")
        n, c, h, wd = x.shape
        kv = dict(n=n, c=c, h=h, w=wd, k=w.shape[0], r=w.shape[2], s=w.shape[3], stride=stride[0])
        if pad[0] == pad[1]:
            kv["pad"] = pad[0]
        else:  # one pad per axis does not fit the format: pad the input instead
            kv["h"], kv["w"], kv["pad"] = h + 2 * pad[0], wd + 2 * pad[1], 0
        kv["groups"] = groups
        return "conv", kv

    def gemm(self, op, args, out):
        if op == "addmm":
            a, b = args[1], args[2]
        else:
            a, b = args[0], args[1]
        if op == "bmm":
            return "gemm", dict(m=a.shape[1], n=b.shape[2], k=a.shape[2], batch=a.shape[0])
        return "gemm", dict(m=a.shape[0], n=b.shape[1], k=a.shape[1], batch=1)


def _eltwise(op, args, out):
    import torch
    tens = _tensors(args)
    elems = _numel(out.shape)
    if op in _ELT_UNARY:
        return "eltwise", dict(variant=_ELT_UNARY[op], elems=elems, inputs=1)
    if op == "hardtanh":
        lo = args[1] if len(args) > 1 else -1.0
        hi = args[2] if len(args) > 2 else 1.0
        if lo == 0 and hi == 6:
            return "eltwise", dict(variant="relu6", elems=elems, inputs=1)
        raise KeyError("hardtanh")
    if op in ("add", "mul", "sub", "div"):
        ntens = sum(1 for t in tens if t.dim() > 0)
        if ntens >= 2:
            if op == "div":
                raise KeyError("div")
            return "eltwise", dict(variant="add" if op in ("add", "sub") else "mul", elems=elems, inputs=2)
        return "eltwise", dict(variant="scale" if op in ("mul", "div") else "add", elems=elems, inputs=1)
    if op in _COPY_OPS or op in _FILL_OPS:
        return "eltwise", dict(variant="scale", elems=elems, inputs=1)
    if isinstance(out, torch.Tensor) is False:
        raise KeyError(op)
    raise KeyError(op)


def _pool(op, args, out):
    x = args[0]
    n, c, h, w = x.shape
    if op in ("max_pool2d_with_indices", "max_pool2d", "avg_pool2d"):
        k = list(args[1]) if isinstance(args[1], (list, tuple)) else [args[1]]
        st = list(args[2]) if len(args) > 2 and args[2] else k
        if len(st) == 1:
            st = st * 2
        return "pool", dict(variant="max" if op.startswith("max") else "avg", n=n, c=c, h=h, w=w,
                            window=k[0], stride=st[0])
    # _adaptive_avg_pool2d
    oh = out.shape[-2]
    if oh == 1 and out.shape[-1] == 1:
        return "pool", dict(variant="global", n=n, c=c, h=h, w=w, window=h, stride=1)
    win = max(1, h // oh)
    return "pool", dict(variant="avg", n=n, c=c, h=h, w=w, window=win, stride=win)


def _map(op, args, out):
    """(kind, keys) of one aten op, None for one that launches no kernel; KeyError if unmapped."""
    if op in _VIEW_OPS:
        return None
    if op == "convolution":
        return _Mapper().conv(args, out)
    if op in ("mm", "addmm", "bmm"):
        return _Mapper().gemm(op, args, out)
    if op == "native_batch_norm" or op == "_native_batch_norm_legit_no_training" or \
            op == "_native_batch_norm_legit":
        x = args[0]
        return "norm", dict(variant="batch", n=x.shape[0], c=x.shape[1], hw=_numel(x.shape[2:]))
    if op == "native_layer_norm":
        x, norm = args[0], args[1]
        c = _numel(norm)
        return "norm", dict(variant="layer", n=_numel(x.shape) // c, c=c, hw=1)
    if op in ("_softmax", "softmax"):
        x, dim = args[0], args[1]
        cols = x.shape[dim]
        return "softmax", dict(rows=_numel(x.shape) // cols, cols=cols)
    if "scaled_dot_product" in op or op in ("_flash_attention_forward", "_efficient_attention_forward"):
        q, k = args[0], args[1]
        causal = 1 if any(a is True for a in args[3:6]) or bool(_kw_causal(args)) else 0
        return "attn", dict(batch=_numel(q.shape[:-3]) if q.dim() > 3 else 1, heads=q.shape[-3],
                            kv_heads=k.shape[-3], seq_q=q.shape[-2], seq_kv=k.shape[-2], head_dim=q.shape[-1],
                            causal=causal)
    if op == "embedding":
        w, idx = args[0], args[1]
        return "embed", dict(rows=_numel(idx.shape), dim=w.shape[1], vocab=w.shape[0])
    if op in ("max_pool2d_with_indices", "max_pool2d", "avg_pool2d", "_adaptive_avg_pool2d"):
        return _pool(op, args, out)
    if op == "mean" and args[0].dim() == 4 and sorted(int(d) % 4 for d in args[1]) == [2, 3]:
        x = args[0]
        return "pool", dict(variant="global", n=x.shape[0], c=x.shape[1], h=x.shape[2], w=x.shape[3],
                            window=x.shape[2], stride=1)
    return _eltwise(op, args, out)


def _kw_causal(args):
    return False


def _unmapped_eltwise(args, out):
    import torch
    elems = _numel(out.shape) if isinstance(out, torch.Tensor) else max(
        [_numel(t.shape) for t in _tensors(args)] or [1])
    ntens = len([t for t in _tensors(args) if t.dim() > 0])
    if ntens >= 2:
        return "eltwise", dict(variant="add", elems=max(elems, 1), inputs=2)
    return "eltwise", dict(variant="scale", elems=max(elems, 1), inputs=1)


class _Recorder:
    def __init__(self, model, oplist, unmapped_as_eltwise):
        self.model = model
        self.l = oplist
        self.as_elt = unmapped_as_eltwise
        self.stack = []  # (path, module)
        self.names = {}
        self.counted = set()
        self.fused_rms = 0
        self.last = None  # (index, path)

    def path(self):
        return self.stack[-1][0] if self.stack else ""

    def module(self):
        return self.stack[-1][1] if self.stack else self.model

    def in_rms(self):
        return any(type(m).__name__.endswith("RMSNorm") for _, m in self.stack)

    def unique(self, name):
        n = self.names.get(name, 0)
        self.names[name] = n + 1
        return name if n == 0 else "%s_%d" % (name, n)

    def params_of(self):
        # The parameters of the innermost module with its own, counted once.
        for path, m in reversed(self.stack):
            own = list(m.parameters(recurse=False))
            if own:
                if id(m) in self.counted:
                    return 0
                self.counted.add(id(m))
                return sum(p.numel() for p in own)
            if list(m.children()):
                return 0
        return 0

    def fold_bias(self, op, args, kind, kv):
        # add(_) of a 1-D bias right after a gemm or conv of the same module
        if kind != "eltwise" or op != "add" or self.last is None or self.last[1] != self.path():
            return False
        prev_kind = self.l.ops[self.last[0]][0]
        tens = _tensors(args)
        if prev_kind in ("gemm", "conv") and len(tens) == 2 and min(t.dim() for t in tens) == 1:
            self.l.fused["add (bias) into %s" % prev_kind] = self.l.fused.get("add (bias) into %s" % prev_kind,
                                                                             0) + 1
            return True
        return False

    def record(self, func, args, out):
        op = _short(func)
        if self.in_rms():
            return
        try:
            r = _map(op, args, out)
        except KeyError:
            self.l.unmapped[str(func)] = self.l.unmapped.get(str(func), 0) + 1
            if not self.as_elt:
                return
            r = _unmapped_eltwise(args, out)
        if r is None:
            return
        kind, kv = r
        if self.fold_bias(op, args, kind, kv):
            return
        self.l.mapped[str(func)] = self.l.mapped.get(str(func), 0) + 1
        if op == "addmm":
            self.l.fused["addmm bias into gemm"] = self.l.fused.get("addmm bias into gemm", 0) + 1
        if op == "convolution" and len(args) > 2 and args[2] is not None:
            self.l.fused["conv bias into conv"] = self.l.fused.get("conv bias into conv", 0) + 1
        leaf = self.stack and not list(self.module().children())
        base = self.path() if leaf and self.path() else ".".join(x for x in (self.path(), op) if x)
        kv["params"] = self.params_of()
        self.l.ops.append((kind, self.unique(base), kv))
        self.last = (len(self.l.ops) - 1, self.path())

    def rms_enter(self, path, m, inp):
        x = inp[0]
        c = x.shape[-1]
        own = sum(p.numel() for p in m.parameters(recurse=False)) if id(m) not in self.counted else 0
        self.counted.add(id(m))
        self.l.ops.append(("norm", self.unique(path or "rmsnorm"),
                           dict(variant="rms", n=_numel(x.shape) // c, c=c, hw=1, params=own)))
        self.l.fused["%s (its ops) into one norm" % type(m).__name__] = \
            self.l.fused.get("%s (its ops) into one norm" % type(m).__name__, 0) + 1
        self.last = (len(self.l.ops) - 1, path)


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


def capture(model, inputs, name="model", batch=None, seq_len=0, dtype="fp16", unmapped_as_eltwise=False,
            device="meta"):
    """Run model(*inputs) once and return its OpList.

    inputs are tensors with the batch dimension. device="meta" (default)
    computes nothing; "cpu" runs the pass for real. Raises Unmapped (with
    .counts) when an op has no kind and unmapped_as_eltwise is False.
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
    rec = _Recorder(model, l, unmapped_as_eltwise)

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            rec.record(func, list(args), out if isinstance(out, torch.Tensor) else
                       (out[0] if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor)
                        else out))
            return out

    handles = _hooks(model, rec)
    try:
        with torch.no_grad(), Mode():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    if l.unmapped and not unmapped_as_eltwise:
        raise Unmapped(l.unmapped)
    l.params_uncalled = total - l.params()
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


def _factory(spec):
    mod, sep, fn = spec.partition(":")
    if not sep or not mod or not fn:
        raise ValueError("MODEL: expected MODULE:FACTORY such as torchvision.models:resnet50, got '%s'" % spec)
    m = importlib.import_module(mod)
    obj = m
    for part in fn.split("."):
        obj = getattr(obj, part)
    return obj


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m pairsight.capture",
        description="Capture a PyTorch model's operators as a pairsight operator list (one forward pass).",
        epilog="example: python -m pairsight.capture torchvision.models:resnet50 --input 3x224x224 "
               "--batch 8 --out resnet50.oplist")
    p.add_argument("model", metavar="MODULE:FACTORY", help="a callable that returns the nn.Module")
    p.add_argument("--input", required=True, help="one shape per model input, without the batch "
                   "dimension: 3x224x224 or 128:int64 for token ids (required)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--dtype", choices=sorted(_DTYPES), default="fp16", help="float inputs' type (default fp16)")
    p.add_argument("--name", default=None, help="model name in the list (default: the factory's name)")
    p.add_argument("--seq-len", type=int, default=None,
                   help="tokens per sequence (default: last dim of the first int64 input, else 0)")
    p.add_argument("--kwargs", default="", help="factory keyword arguments, k=v,... (Python literals; default none)")
    p.add_argument("--device", choices=("meta", "cpu"), default="meta", help="where the pass runs (default meta)")
    p.add_argument("--unmapped-as-eltwise", action="store_true",
                   help="count ops with no kind as eltwise by bytes moved (default: refuse)")
    p.add_argument("--out", required=True, help="output file, - for stdout (required)")
    p.add_argument("-q", action="store_true", help="no summary on stderr")
    a = p.parse_args(argv)
    if a.batch <= 0:
        p.error("--batch: expected a positive integer, got %d" % a.batch)
    try:
        shapes = parse_inputs(a.input)
        fn = _factory(a.model)
    except (ValueError, ImportError, AttributeError) as e:
        p.error(str(e))
    import ast
    import torch
    kw = {}
    for item in filter(None, a.kwargs.split(",")):
        k, _, v = item.partition("=")
        kw[k] = ast.literal_eval(v)
    model = fn(**kw)
    dt = getattr(torch, _DTYPES[a.dtype])
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
    if dev == "meta":
        model = model.to(dt)
    name = a.name or a.model.partition(":")[2].split(".")[-1]
    try:
        l = capture(model, xs, name=name, batch=a.batch, seq_len=seq or 0, dtype=a.dtype,
                    unmapped_as_eltwise=a.unmapped_as_eltwise, device=a.device)
    except Unmapped as e:
        sys.stderr.write("pairsight: capture: %s\n" % e)
        return 1
    l.write(a.out)
    if not a.q:
        kinds = {}
        for k, _, _ in l.ops:
            kinds[k] = kinds.get(k, 0) + 1
        sys.stderr.write("capture: %s batch %d: %d operators (%s), %d parameters%s -> %s\n" % (
            name, a.batch, len(l.ops), ", ".join("%s %d" % kv for kv in sorted(kinds.items())), l.params(),
            "" if not l.params_uncalled else " (%d more in modules the pass did not call)" % l.params_uncalled,
            a.out))
        if l.unmapped:
            sys.stderr.write("capture: counted as eltwise: %s\n" % ", ".join(
                "%s x%d" % kv for kv in sorted(l.unmapped.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
