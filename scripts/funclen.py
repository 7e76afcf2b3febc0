#!/usr/bin/env python3
"""Function lengths of the library and CLI: the house rule is that a function
stays under 80 lines and is never over 100 (README.md, "Using it").

Usage: scripts/funclen.py [--warn N] [--max M] [--params P] [PATH...]

PATHs are C, C++ or CUDA files or folders (default: src/, the library and the
CLI; tests/, bench/ and fuzz/ are exempt). Prints every function longer than
--warn lines (default 80), longest first, as "LINES FILE:LINE NAME", then a
count; exits 1 when one is longer than --max lines (default 100), 0 otherwise,
2 on a usage error. CI (.ci/run) runs it on src/.

A function's length is counted from the line of its opening brace to the line
of its closing brace, both included; .clang-format puts a function's braces
on lines of their own at column 0, which is what is matched here (a brace at
column 0 that opens an initializer, "= {", is not a function).

--params P lists instead every function that takes more than P parameters,
most first, as "PARAMS FILE:LINE NAME", then a count (issue 40 counts those
over 6); it always exits 0.
"""
import os
import re
import sys

EXTS = (".c", ".h", ".cpp", ".cu")
NAME = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(")
HEAD = re.compile(r"^[A-Za-z_].*\(")
NOT_FUNC = re.compile(r"^(static\s+)?(const\s+)?(struct|enum|union)\b.*=|=\s*$")


def n_params(text):
    """Top-level parameters in the text after a function's name."""
    depth, n, seen = 0, 0, ""
    for ch in text[text.index("(") :]:
        if ch == "(":
            depth += 1
            if depth == 1:
                continue
        elif ch == ")":
            depth -= 1
            if depth == 0:
                break
        elif ch == "," and depth == 1:
            n += 1
            continue
        if depth >= 1:
            seen += ch
    return 0 if not seen.strip() or seen.strip() == "void" and n == 0 else n + 1


def functions(path, params=False):
    """(length, line of its name, name) of each function in path (with
    params, the number of parameters in place of the length)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = None
    for i, line in enumerate(lines):
        if start is None and line.startswith("{"):
            j = i - 1  # back to the line that names the function
            while j > 0 and lines[j].strip() and not HEAD.match(lines[j]):
                j -= 1
            start = (i, j)
        elif start is not None and line.startswith("}"):
            first, j = start
            start = None
            head = lines[j] if j >= 0 else ""
            m = NAME.search(head)
            if m and not NOT_FUNC.search(head):
                size = n_params(" ".join(lines[j:first])[m.start() :]) if params else i - first + 1
                yield size, j + 1, m.group(1)


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                for n in sorted(names):
                    if n.endswith(EXTS):
                        yield os.path.join(root, n)
        else:
            yield p


def list_params(paths, most):
    found, total = [], 0
    for f in files(paths):
        for n, line, name in functions(f, params=True):
            total += 1
            if n > most:
                found.append((n, f, line, name))
    found.sort(key=lambda r: (-r[0], r[1], r[2]))
    for n, f, line, name in found:
        print(f"{n:4d} {f}:{line} {name}")
    print(f"funclen: {len(found)} of {total} functions take more than {most} parameters")
    return 0


def main(argv):
    warn, limit, params, paths = 80, 100, None, []
    it = iter(argv)
    for a in it:
        if a in ("--warn", "--max", "--params"):
            v = next(it, "")
            if not v.isdigit():
                print(f"funclen: {a} needs a number", file=sys.stderr)
                return 2
            if a == "--params":
                params = int(v)
            else:
                warn, limit = (int(v), limit) if a == "--warn" else (warn, int(v))
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif a.startswith("-"):
            print(f"funclen: unknown option '{a}' (see --help)", file=sys.stderr)
            return 2
        else:
            paths.append(a)
    if not paths:
        paths = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")]
        paths = [os.path.relpath(paths[0])]
    if params is not None:
        return list_params(paths, params)
    found = []
    for f in files(paths):
        if not os.path.isfile(f):
            print(f"funclen: {f}: no such file", file=sys.stderr)
            return 2
        found += [(n, f, line, name) for n, line, name in functions(f) if n > warn]
    found.sort(key=lambda r: (-r[0], r[1], r[2]))
    for n, f, line, name in found:
        print(f"{n:4d} {f}:{line} {name}{'  (over ' + str(limit) + ')' if n > limit else ''}")
    over = sum(1 for r in found if r[0] > limit)
    print(f"funclen: {len(found)} functions over {warn} lines, {over} over {limit}")
    if over:
        print(f"funclen: split the functions over {limit} lines into helpers that each do one job",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
