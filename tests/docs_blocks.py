"""Runs every shell and Python block of every docs/*.md as a user would.

Usage: python3 tests/docs_blocks.py PAIRSIGHT [DOC...]   (tests/test_docs_blocks.sh)

Each doc runs in a fresh temporary folder that holds a copy of the
repository's files (as a clone does), `build` (the build tree of the CLI
given) and, beside it, `shared` when ../shared exists: one shell, blocks in
the doc's order, each under `set -e`, with PATH starting with a folder that
holds `pairsight` (the CLI given) and `python3` (Debian's, which has torch),
HOME a folder of its own and P a free TCP port (docs/serve.md's
`P=${P:-8470}`).

A block is run when it is fenced as ```sh, ```bash, ```shell or ```console
(the lines after "$ ") or ```python (through python3). A comment on the line
before a block (blank lines between allowed) says otherwise:

    <!-- run: skip (REASON) -->          never run here; the runner prints REASON
    <!-- run: needs shared-data -->      run where ../shared/data exists
    <!-- run: needs torch -->            run where python3 imports torch and torchvision
                                         (and the library is not sanitized)
    <!-- run: needs shared-data, torch -->

A block that looks like commands (its first line starts with `pairsight`,
`$ `, `scripts/`, `curl`, an assignment, ...) but is not fenced as one of
the kinds above and has no such comment is an error: a command in a doc
either runs in the suite or says why not. A failing block is reported as
DOC:LINE with the last lines of its output. Exit status: 1 when a block
failed or a doc is malformed, 77 when every run block passed but some were
left out for want of ../shared/data or torch (the reasons printed), else 0.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scripts"))
from localport import free_port  # noqa: E402

RUN_KINDS = {"sh", "bash", "shell", "console", "python"}
NEEDS = ("shared-data", "torch")
MARK = re.compile(r"^<!--\s*run:\s*(.*?)\s*-->$")
FENCE = re.compile(r"^(\s*)(```+)\s*([A-Za-z0-9_+-]*)")
# The first line of a block that a reader would type into a shell.
COMMANDISH = re.compile(
    r"^(\$ |\$ps\b|pairsight |python3? |/usr/bin/|scripts/|tools/|build/|\./|device-bundle/|curl |awk |sed |"
    r"mkdir |cat |printf |nice |sh |bash |kubectl |cmake |ctest |make |cd |git |export |ln |cp |mv |rm |kill |"
    r"pip3? |~/|env |time |timeout |ldd |du |ncu |nsys |docker |bench/|fuzz/|examples/|[A-Za-z_][A-Za-z0-9_]*=\S)"
)
TIMEOUT = int(os.environ.get("PS_DOCS_TIMEOUT", "240"))  # seconds, per doc
# PS_DOCS_LOGS=DIR keeps each doc's output in DIR/DOC.log (to update a doc's outputs).


class Block:
    def __init__(self, doc, line, kind, body, mark):
        self.doc, self.line, self.kind, self.body, self.mark = doc, line, kind, body, mark

    @property
    def where(self):
        return f"{self.doc}:{self.line}"


def parse(doc, text):
    """Returns (blocks, errors) of one doc: every fenced and indented block."""
    lines = text.split("\n")
    blocks, errors = [], []
    mark, mark_line = None, 0
    i, n = 0, len(lines)
    prev_blank = True
    while i < n:
        line = lines[i]
        m = MARK.match(line.strip())
        if m:
            if mark is not None:
                errors.append(f"{doc}:{mark_line}: a run comment with no block after it")
            mark, mark_line = m.group(1), i + 1
            i += 1
            prev_blank = True
            continue
        f = FENCE.match(line)
        if f:
            ticks, kind, start = f.group(2), f.group(3).lower(), i
            body = []
            i += 1
            while i < n and not re.match(r"^\s*" + ticks + r"\s*$", lines[i]):
                body.append(lines[i][len(f.group(1)):] if lines[i].startswith(f.group(1)) else lines[i])
                i += 1
            if i == n:
                errors.append(f"{doc}:{start + 1}: a fence that is never closed")
            blocks.append(Block(doc, start + 1, kind, body, mark))
            mark = None
            i += 1
            prev_blank = False
            continue
        if line.startswith("    ") and prev_blank and line.strip():
            start, body = i, []
            while i < n and (lines[i].startswith("    ") or
                             (not lines[i].strip() and i + 1 < n and lines[i + 1].startswith("    "))):
                body.append(lines[i][4:])
                i += 1
            blocks.append(Block(doc, start + 1, "indented", body, mark))
            mark = None
            prev_blank = False
            continue
        if line.strip() and mark is not None:
            errors.append(f"{doc}:{mark_line}: a run comment must come just before its block (blank lines allowed)")
            mark = None
        prev_blank = not line.strip()
        i += 1
    if mark is not None:
        errors.append(f"{doc}:{mark_line}: a run comment with no block after it")
    return blocks, errors


def plan(block, have):
    """Returns ('run'|'skip'|'want'|'text'|'error', reason) for one block."""
    mark = block.mark
    runnable = block.kind in RUN_KINDS
    if mark is None:
        if runnable:
            return "run", ""
        first = next((l.strip() for l in block.body if l.strip()), "")
        if COMMANDISH.match(first):
            return "error", (f"{block.where}: '{first[:60]}' looks like a command, but the block is not fenced as "
                             "```sh (then it runs in the suite) nor marked <!-- run: skip (why) -->")
        return "text", ""
    m = re.match(r"^skip\s*\((.+)\)$", mark, re.S)
    if m:
        return "skip", m.group(1).strip()
    m = re.match(r"^needs\s+(.+)$", mark)
    if m:
        want = [w.strip() for w in m.group(1).split(",")]
        bad = [w for w in want if w not in NEEDS]
        if bad or not runnable:
            return "error", (f"{block.where}: <!-- run: needs ... --> takes {', '.join(NEEDS)} before a "
                             "```sh or ```python block")
        missing = [w for w in want if not have(w)]
        return ("want", ", ".join(missing)) if missing else ("run", "")
    return "error", f"{block.where}: unknown run comment '{mark}' (skip (REASON) or needs {' | '.join(NEEDS)})"


def script_of(block, status):
    """The shell text that runs one block and records that it started."""
    out = [f"printf '%s\\n' '{block.where}' >'{status}'"]
    if block.kind == "python":
        out += ["python3 - <<'PS_DOCS_PY_EOF'"] + block.body + ["PS_DOCS_PY_EOF"]
    elif block.kind == "console":
        out += [l[2:] for l in block.body if l.startswith("$ ")]
    else:
        out += block.body
    out.append(f"printf '%s\\n' '{block.where} ok' >>'{status}.done'")
    return "\n".join(out)


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            rel = os.path.relpath(d, root)
            dirs[:] = [x for x in dirs if not (rel == "." and (x.startswith("build") or x in (".git", "out")))]
            files += [os.path.normpath(os.path.join(rel, x)) for x in names]
        return files


def clone(root, cli, work):
    """A folder laid out as a user's clone with its build: WORK/clone."""
    dst = os.path.join(work, "clone")
    for rel in tracked_files(root):
        src = os.path.join(root, rel)
        if not os.path.isfile(src):
            continue  # a submodule or a file deleted in the work tree
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel), follow_symlinks=False)
    os.symlink(os.path.dirname(cli), os.path.join(dst, "build"))
    shared = os.path.join(root, "..", "shared")
    if os.path.isdir(shared):
        os.symlink(os.path.realpath(shared), os.path.join(work, "shared"))
    bind = os.path.join(work, "bin")
    os.makedirs(bind)
    os.symlink(cli, os.path.join(bind, "pairsight"))
    os.symlink(PY, os.path.join(bind, "python3"))
    os.makedirs(os.path.join(work, "home"))
    return dst


def run_doc(root, cli, doc, blocks):
    """Runs the blocks of one doc; returns the DOC:LINE of a failure or None."""
    work = tempfile.mkdtemp(prefix="ps_docs_")
    try:
        cwd = clone(root, cli, work)
        status = os.path.join(work, "status")
        text = "set -e\n" + "\n".join(script_of(b, status) for b in blocks) + "\n"
        env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ.get("PATH", ""),
                   HOME=os.path.join(work, "home"), P=str(free_port()))
        for k in ("PYTHONPATH", "PAIRSIGHT_LIBRARY", "PAIRSIGHT_BUILD_DIR", "CDPATH", "ENV"):
            env.pop(k, None)
        log = os.path.join(work, "log")
        t0 = time.monotonic()
        with open(log, "wb") as out:
            p = subprocess.Popen(["sh", "-c", text], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                rc = p.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                rc = None
            # Whatever the doc started in the background (a server) ends with it.
            try:
                os.killpg(p.pid, signal.SIGTERM)
                time.sleep(0.2)
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        secs = time.monotonic() - t0
        if os.environ.get("PS_DOCS_LOGS"):  # a folder: each doc's output is kept there
            shutil.copy(log, os.path.join(os.environ["PS_DOCS_LOGS"], os.path.basename(doc) + ".log"))
        done = open(status + ".done").read().split("\n") if os.path.exists(status + ".done") else []
        if rc == 0 and len([d for d in done if d]) == len(blocks):
            print(f"{doc}: {len(blocks)} blocks ran ({secs:.1f} s)")
            return None
        where = open(status).read().strip() if os.path.exists(status) else blocks[0].where
        why = f"timed out after {TIMEOUT} s" if rc is None else f"exit status {rc}"
        tail = open(log, errors="replace").read().split("\n")[-25:]
        print(f"FAIL: {where}: the block fails as written ({why}); its last output:")
        print("\n".join("    " + l for l in tail))
        return where
    finally:
        shutil.rmtree(work, ignore_errors=True)


def have_torch():
    # An uninstrumented Python cannot load a sanitized libpairsight
    # (scripts/test.sh --sanitize), which the package's __init__ loads.
    if os.environ.get("PS_SANITIZED") == "1":
        return False
    try:
        return subprocess.run([PY, "-c", "import torch, torchvision"], capture_output=True).returncode == 0
    except OSError:
        return False


PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else shutil.which("python3") or "python3"


def main(argv):
    if len(argv) < 2:
        print("usage: docs_blocks.py PAIRSIGHT [DOC...]", file=sys.stderr)
        return 2
    cli = os.path.abspath(argv[1])
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    docs = argv[2:] or sorted(os.path.join("docs", d) for d in os.listdir(os.path.join(root, "docs"))
                              if d.endswith(".md"))
    known = {}

    def have(need):  # asked only when a block needs it (importing torch takes seconds)
        if need not in known:
            known[need] = (os.path.isdir(os.path.join(root, "..", "shared", "data")) if need == "shared-data"
                           else have_torch())
        return known[need]

    errors, failed, wanting, nrun, nskip = [], [], [], 0, 0
    for doc in docs:
        blocks, errs = parse(doc, open(os.path.join(root, doc), encoding="utf-8").read())
        errors += errs
        torun = []
        for b in blocks:
            what, why = plan(b, have)
            if what == "run":
                torun.append(b)
            elif what == "skip":
                nskip += 1
                print(f"{b.where}: not run here: {why}")
            elif what == "want":
                wanting.append(f"{b.where} (needs {why})")
            elif what == "error":
                errors.append(why)
        if torun and not errs:
            nrun += len(torun)
            where = run_doc(root, cli, doc, torun)
            if where:
                failed.append(where)
    for e in errors:
        print(f"FAIL: {e}")
    print(f"docs blocks: {nrun} run, {len(failed)} failed, {nskip} not run here (reasons above), "
          f"{len(wanting)} left out for want of ../shared/data or torch")
    if errors or failed:
        return 1
    if wanting:
        print("skip: " + "; ".join(wanting))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
