#!/bin/sh
# The Python step of the new-user walk (scripts/new_user_walk.sh): the
# README's Python install as written, in WORKDIR: a fresh venv, `pip install
# --no-build-isolation ./python` (offline; it builds the C library with CMake
# and bundles it, minutes on 2 cores; PAIRSIGHT_BUILD_DIR=build reuses a
# build instead), then `import pairsight` from WORKDIR finds the bundled
# library with no PAIRSIGHT_LIBRARY and loads a table.
# Usage: scripts/new_user_walk_python.sh WORKDIR
# Exit 0 when it passed, 1 naming the failing step.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:?usage: new_user_walk_python.sh WORKDIR}
mkdir -p "$work"
venv=$work/venv-pairsight
rm -rf "$venv"
# Debian's python3, which scripts/setup.sh provisions (a pyenv python3 on
# PATH brings pip >= 23.1, which builds offline only with `wheel` in the venv).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" -m venv "$venv" || { echo "new_user_walk_python: $py -m venv failed (scripts/setup.sh installs python3-venv)" >&2; exit 1; }
start=$(date +%s)
(cd "$root" && "$venv/bin/pip" install --no-index --no-build-isolation --disable-pip-version-check -q ./python) \
    >"$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2; echo "new_user_walk_python: pip install ./python failed" >&2; exit 1; }
echo "new_user_walk_python: pip install ./python took $(($(date +%s) - start)) s" >&2
cd "$work"
env -u PAIRSIGHT_LIBRARY "$venv/bin/python" - "$root" <<'EOF'
import os, sys
import pairsight
root = sys.argv[1]
lib = pairsight.library_path()
assert lib.startswith(sys.prefix), "the library is not the package's own: %s" % lib
ops = pairsight.Ops.load(os.path.join(root, "tests", "data", "ops_small.csv"))
print("pairsight %s from %s; %d ops rows" % (pairsight.version(), lib, len(ops)))
EOF
