#!/usr/bin/env python3
"""The stages of src/ run one way: a file includes and calls only its own
folder, the public headers (include/) and the folders of earlier stages, and
no two files call each other in a loop (docs/ARCHITECTURE.md).

Usage: scripts/stages.py [--root DIR] [--build DIR] [--no-objects] [--list]

The order, declared here and nowhere else (folders on one line are one stage
and may not reach each other):

    common -> profile -> features -> model -> simulate | collect | colocate
           -> evaluate -> decision -> ops -> serve -> cli

serve and cli, the front ends, may include only the public headers
(include/pairsight*.h) and their own, and call only the API (ps_*) of the
library; the CLI's `serve` command calls serve through
include/pairsight_serve.h. The files of PENDING (cli files not yet moved
onto the public headers) are held to the stage order alone until they are.

Two checks:
  includes  every #include "folder/x.h" of src/ against the order: a header of
            a later stage, or of another folder of the same stage, is a
            backward include (FILE:LINE: the line).
  objects   `nm` of the object files under the build folder (--build, default
            build/; CMake keeps src/F/x.c's object as .../src/F/x.c.o): which
            file defines each global symbol and which uses it. A file that
            uses a symbol of a later stage makes a backward call; files that
            reach each other through such uses, in a circle, make a cross-file
            cycle (every circle is printed with one symbol per step).
            --no-objects skips this check (sources only).

Exits 1 on any backward include, backward call or cycle, 0 otherwise, 2 on a
usage error or when --build holds no objects. --list prints the stage of each
folder and the include and call counts between folders. CI (.ci/run) runs it
after the build.
"""
import os
import re
import subprocess
import sys

STAGES = [
    ["common"],
    ["profile"],
    ["features"],
    ["model"],
    ["simulate", "collect", "colocate"],
    ["evaluate"],
    ["decision"],
    ["ops"],
    ["serve"],
    ["cli"],
]
PUBLIC_ONLY = {"serve", "cli"}  # front ends that may use include/ alone
# Files of the front ends that still reach internal headers (issue 25); each
# leaves this list when it uses the public headers alone, and the list only
# shrinks.
PENDING = set()  # every cli file is on the public headers (issue 25 item 2 done)
LEVEL = {f: i for i, stage in enumerate(STAGES) for f in stage}
EXTS = (".c", ".h", ".cpp", ".cu", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def src_files(root):
    src = os.path.join(root, "src")
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith(EXTS):
                yield folder, os.path.join("src", folder, name)


def public_only(frm, rel):
    """Whether file rel of folder frm may use the public headers alone."""
    return frm in PUBLIC_ONLY and rel not in PENDING


def allowed(frm, to, rel=None):
    """Whether folder frm (file rel) may include or call folder to."""
    if frm == to:
        return True
    if public_only(frm, rel) or frm not in LEVEL or to not in LEVEL:
        return False
    return LEVEL[to] < LEVEL[frm]


def target_folder(folder, inc):
    """The src/ folder of an included name, or None for a public header or a
    file outside src/ (data tables)."""
    if inc.startswith(".."):
        return None
    parts = inc.split("/")
    if len(parts) == 1:
        return None if inc.startswith("pairsight") else folder
    return parts[0]


def check_includes(root, counts):
    bad = []
    for folder, rel in src_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                to = target_folder(folder, m.group(1))
                if to is None:
                    continue
                if to != folder:
                    counts[(folder, to)] = counts.get((folder, to), [0, 0])
                    counts[(folder, to)][0] += 1
                if not allowed(folder, to, rel):
                    bad.append(f"{rel}:{n}: {line.strip()} ({why(folder, to, rel)})")
    return bad


def why(frm, to, rel=None):
    if public_only(frm, rel):
        return f"{frm} uses the public headers only"
    if to not in LEVEL:
        return f"src/{to} is in no stage of scripts/stages.py"
    if frm not in LEVEL:
        return f"src/{frm} is in no stage of scripts/stages.py"
    if LEVEL[to] == LEVEL[frm]:
        return f"{frm} and {to} are one stage and may not reach each other"
    return f"{to} comes after {frm}"


def objects(root, build):
    """{src/F/x.c: (target, object path)} for the objects of build whose
    source exists; target is CMake's folder of the link unit (X.dir)."""
    found = {}
    for top, dirs, names in os.walk(build):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(".o"):
                continue
            path = os.path.join(top, name)
            i = path.rfind(".dir/src/")
            if i < 0:
                continue
            rel = path[i + len(".dir/"):-len(".o")]
            target = os.path.basename(path[:i])
            if os.path.isfile(os.path.join(root, rel)):
                found.setdefault(rel, (target, path))
    return found


def symbols(objs):
    """({(target, symbol): defining file}, {file: {symbol used}}) from nm -P.
    A symbol resolves within its own link unit first (the CUDA module defines
    its own forwarding psi_error), then in the library (pairsight_obj)."""
    defs, uses = {}, {}
    for rel, (target, path) in objs.items():
        out = subprocess.run(["nm", "-P", path], capture_output=True, text=True, check=True)
        uses[rel] = set()
        for line in out.stdout.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            if kind == "U":
                uses[rel].add(sym)
            elif kind in "TDBRCVWGS" and not sym.startswith("."):
                defs.setdefault((target, sym), rel)
                defs.setdefault((None, sym), rel)
    return defs, uses


def graph(objs, defs, uses):
    """{file: {file it calls: [the symbols, sorted]}}"""
    edges = {}
    for rel, syms in uses.items():
        edges[rel] = {}
        target = objs[rel][0]
        for s in sorted(syms):
            d = defs.get((target, s)) or defs.get(("pairsight_obj", s)) or defs.get((None, s))
            if d and d != rel:
                edges[rel].setdefault(d, []).append(s)
    return edges


def allowed_call(fa, fb, sym, rel=None):
    """A public-only front end (serve, cli) may call the API (ps_*) of any stage."""
    if fa in PUBLIC_ONLY and sym.startswith("ps_"):
        return True
    return allowed(fa, fb, rel)


def components(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def folder_of(rel):
    return rel.split("/")[1]


def check_objects(root, build, counts):
    objs = objects(root, build)
    if not objs:
        return None, None
    defs, uses = symbols(objs)
    edges = graph(objs, defs, uses)
    back = []
    for a in sorted(edges):
        for b, syms in sorted(edges[a].items()):
            fa, fb = folder_of(a), folder_of(b)
            if fa != fb:
                counts[(fa, fb)] = counts.get((fa, fb), [0, 0])
                counts[(fa, fb)][1] += 1
            bad = [s for s in syms if not allowed_call(fa, fb, s, a)]
            if bad:
                back.append(f"{a} calls {b} ({', '.join(bad[:3])}; {why(fa, fb, a)})")
    cycles = []
    for comp in components(edges):
        inner = {a: {b: syms[0] for b, syms in edges[a].items() if b in comp} for a in comp}
        steps = "; ".join(f"{a} -> {b} ({s})" for a in comp for b, s in sorted(inner[a].items()))
        cycles.append(f"{' <-> '.join(comp)}: {steps}")
    return back, cycles


def main(argv):
    root = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    build, use_objects, listing = None, True, False
    it = iter(argv)
    for a in it:
        if a in ("--root", "--build"):
            v = next(it, None)
            if not v:
                print(f"stages: {a} needs a folder", file=sys.stderr)
                return 2
            root, build = (v, build) if a == "--root" else (root, v)
        elif a == "--no-objects":
            use_objects = False
        elif a == "--list":
            listing = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            print(f"stages: unknown argument '{a}' (see --help)", file=sys.stderr)
            return 2
    build = build or os.path.join(root, "build")
    counts = {}
    bad = check_includes(root, counts)
    for b in bad:
        print(f"backward include: {b}")
    back, cycles = [], []
    if use_objects:
        back, cycles = check_objects(root, build, counts)
        if back is None:
            print(f"stages: no object files of src/ under {build}: build first, or pass "
                  "--no-objects to check the includes alone", file=sys.stderr)
            return 2
        for b in back:
            print(f"backward call: {b}")
        for c in cycles:
            print(f"cycle: {c}")
    if listing:
        for i, stage in enumerate(STAGES):
            print(f"stage {i}: {' | '.join(stage)}")
        for (a, b), (inc, calls) in sorted(counts.items()):
            print(f"{a} -> {b}: {inc} includes, {calls} file-to-file calls")
    checked = "includes and objects" if use_objects else "includes"
    print(f"stages: {len(bad)} backward includes, {len(back)} backward calls, "
          f"{len(cycles)} cross-file cycles ({checked})")
    if bad or back or cycles:
        print("stages: a file may reach only its own folder, include/ and earlier stages, "
              "and no files may call each other in a circle (docs/ARCHITECTURE.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
