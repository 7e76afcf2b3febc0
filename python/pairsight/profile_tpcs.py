"""Profile a PyTorch model alone at several TPC counts and write ops.csv.

    python -m pairsight.profile_tpcs MODULE:FACTORY --input 3x224x224 --batch 8 \\
        --tpcs 8,16,27,54 --method green --out DIR [--oplist mynet.oplist] [--name mynet]

For each TPC count N the model runs on N TPCs (2N SMs) of GPU 0, one
forward pass is recorded with torch.profiler into DIR/trace_tpcsN.json, and
`pairsight import torch-trace ... --oplist L --tpcs-from twin --at N
--append` adds its operators' measured rows at N to DIR/ops.csv (kernels
aligned with the operators of L; L is captured first with
pairsight.capture when --oplist is not given). The two ways to run on part
of the SMs (docs/profile.md, "Several TPC counts on a GPU"):

  green  CUDA green contexts, in this process: PyTorch >= 2.10's
         torch.cuda.green_contexts.GreenContext.create(num_sms=2N) (with
         ctx.Stream() where the version has it, set_context/pop_context
         otherwise). Exact SM counts, within the GPU's granularity.
  mps    one child process per count under the MPS daemon
         (nvidia-cuda-mps-control -d) with
         CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = ceil(100 N / TPCs): the driver
         caps the SMs a kernel may use, rounded to its own granularity.

Then, to fill in counts not measured: pairsight import ops DIR/ops.csv
--model M --batch B --tpcs N --oplist L --tpcs-from twin --out all.csv.

The CUDA calls sit behind one small class (Cuda) so that the logic is
tested on a CPU with them stubbed (tests/test_profile_tpcs.sh).
"""
import argparse
import math
import os
import shutil
import subprocess
import sys

__all__ = ["Cuda", "plan", "run", "main", "mps_percentage"]


def mps_percentage(tpcs, total):
    """The CUDA_MPS_ACTIVE_THREAD_PERCENTAGE that gives at least tpcs of total TPCs."""
    return max(1, min(100, int(math.ceil(100.0 * tpcs / total))))


def plan(counts, total, method):
    """[(tpcs, sms, env)] for each count: env is the child's extra environment (mps) or {}."""
    out = []
    for n in counts:
        if n < 1 or n > total:
            raise ValueError("--tpcs: %d is outside 1..%d (the GPU's TPCs)" % (n, total))
        env = {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": str(mps_percentage(n, total))} if method == "mps" else {}
        out.append((n, 2 * n, env))
    return out


class Cuda:
    """The CUDA side: what the tests stub."""

    def total_tpcs(self):
        import torch
        return torch.cuda.get_device_properties(0).multi_processor_count // 2

    def profile_pass(self, model, inputs, sms, trace_path, warmup):
        """Run warmup passes then one profiled pass on sms SMs (None: all) and export its trace."""
        import torch
        ctx = stream = None
        if sms is not None:
            gc = getattr(getattr(torch.cuda, "green_contexts", None), "GreenContext", None)
            if gc is None:
                raise RuntimeError("green contexts need PyTorch >= 2.10 (torch.cuda.green_contexts); use --method mps")
            ctx = gc.create(num_sms=sms)
            if hasattr(ctx, "Stream"):
                stream = ctx.Stream()
            else:
                ctx.set_context()
        try:
            with torch.no_grad(), torch.cuda.stream(stream or torch.cuda.current_stream()):
                for _ in range(warmup):
                    model(*inputs)
                torch.cuda.synchronize()
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    model(*inputs)
                    torch.cuda.synchronize()
            prof.export_chrome_trace(trace_path)
        finally:
            if ctx is not None and stream is None:
                ctx.pop_context()


def _cli(cli, args):
    r = subprocess.run([cli] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s %s: %s" % (cli, " ".join(args[:2]), r.stderr.strip()))
    return r.stderr


def _import(cli, trace, a, n, oplist, ops_csv):
    args = ["import", "torch-trace", trace, "--model", a.name, "--batch", str(a.batch), "--tpcs", str(n),
            "--oplist", oplist, "--tpcs-from", "twin", "--at", str(n), "--out", ops_csv, "--append", "-q"]
    if a.gpu:
        args += ["--gpu", a.gpu]
    if a.drop_zero:
        args += ["--drop-zero"]
    _cli(cli, args)


def _child_cmd(a, n):
    cmd = [sys.executable, "-m", "pairsight.profile_tpcs", a.model, "--input", a.input, "--batch", str(a.batch),
           "--dtype", a.dtype, "--out", a.out, "--child", str(n), "--warmup", str(a.warmup)]
    return cmd


def run(a, cuda=None, model_inputs=None, spawn=subprocess.run, log=sys.stderr):
    """Profile every count of a.tpcs into a.out; returns the path of ops.csv.

    model_inputs() gives (model, inputs) on the GPU; spawn runs the mps
    children (both stubbed in tests)."""
    cuda = cuda or Cuda()
    os.makedirs(a.out, exist_ok=True)
    total = cuda.total_tpcs()
    counts = [int(x) for x in a.tpcs.split(",")] if a.tpcs else [total]
    steps = plan(counts, total, a.method)
    oplist = a.oplist or os.path.join(a.out, a.name + ".oplist")
    if not a.oplist:
        from . import capture as cap
        m, xs = model_inputs(meta=True)
        cap.capture(m, xs, name=a.name, batch=a.batch, dtype=a.dtype).write(oplist)
    ops_csv = os.path.join(a.out, "ops.csv")
    if os.path.exists(ops_csv):
        os.unlink(ops_csv)
    model = inputs = None
    for n, sms, env in steps:
        trace = os.path.join(a.out, "trace_tpcs%d.json" % n)
        if a.method == "green":
            if model is None:
                model, inputs = model_inputs(meta=False)
            cuda.profile_pass(model, inputs, None if n == total else sms, trace, a.warmup)
        else:
            r = spawn(_child_cmd(a, n), env=dict(os.environ, **env))
            if getattr(r, "returncode", 0) != 0:
                raise RuntimeError("the profiling child at %d TPCs (%s) failed" % (n, env))
        if not a.no_import:
            _import(a.cli, trace, a, n, oplist, ops_csv)
        log.write("profile_tpcs: %s batch %d at %d TPCs (%s): %s\n" % (
            a.name, a.batch, n, "%d SMs" % sms if a.method == "green" else
            "MPS %s%%" % env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], trace))
    return ops_csv


def _model_inputs_factory(a):
    from . import capture as cap

    def make(meta):
        import torch
        fn = cap._factory(a.model)
        m = fn()
        dt = getattr(torch, cap._DTYPES[a.dtype])
        dev = "meta" if meta else "cuda"
        xs = []
        for dims, kind in cap.parse_inputs(a.input):
            if kind == "int64":
                xs.append(torch.zeros((a.batch,) + dims, dtype=torch.int64, device=dev))
            else:
                xs.append(torch.zeros((a.batch,) + dims, dtype=dt, device=dev))
        return m.to(dt).to(dev).eval(), xs
    return make


def main(argv=None, cuda=None, model_inputs=None, spawn=subprocess.run):
    p = argparse.ArgumentParser(prog="python -m pairsight.profile_tpcs",
                                description="Profile a PyTorch model alone at several TPC counts into ops.csv.")
    p.add_argument("model", metavar="MODULE:FACTORY")
    p.add_argument("--input", required=True, help="one shape per input without the batch (required)")
    p.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    p.add_argument("--dtype", choices=("fp16", "fp32", "bf16"), default="fp16", help="(default fp16)")
    p.add_argument("--tpcs", default=None, help="TPC counts, e.g. 8,16,27,54 (default: the whole GPU)")
    p.add_argument("--method", choices=("green", "mps"), default="green", help="(default green)")
    p.add_argument("--name", default=None, help="model name (default: the factory's)")
    p.add_argument("--oplist", default=None, help="the model's operator list (default: captured into --out)")
    p.add_argument("--gpu", default=None, help="GPU name for ops.csv (default: the trace's)")
    p.add_argument("--warmup", type=int, default=10, help="untimed passes before the profiled one (default 10)")
    p.add_argument("--drop-zero", action="store_true", help="passed to import (default off)")
    p.add_argument("--cli", default=os.environ.get("PAIRSIGHT_CLI") or shutil.which("pairsight") or "pairsight",
                   help="the pairsight program (default $PAIRSIGHT_CLI, else on PATH)")
    p.add_argument("--no-import", action="store_true",
                   help="write the traces only, to import elsewhere (a GPU machine without pairsight; default off)")
    p.add_argument("--out", required=True, help="output folder (required)")
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.name = a.name or a.model.partition(":")[2].split(".")[-1]
    model_inputs = model_inputs or _model_inputs_factory(a)
    cuda = cuda or Cuda()
    if a.child is not None:  # an mps child: the whole (MPS-capped) GPU is its own
        m, xs = model_inputs(meta=False)
        cuda.profile_pass(m, xs, None, os.path.join(a.out, "trace_tpcs%d.json" % a.child), a.warmup)
        return 0
    try:
        path = run(a, cuda, model_inputs, spawn)
    except (RuntimeError, ValueError) as e:
        sys.stderr.write("pairsight: profile_tpcs: %s\n" % e)
        return 1
    sys.stderr.write("profile_tpcs: wrote %s\n" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
