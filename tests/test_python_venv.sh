#!/bin/sh
# The Python package as a new user installs it (README "Python"): a fresh
# venv (no system site-packages: no numpy, nothing of ours), `pip install
# --no-build-isolation ./python` offline, and `import pairsight` from
# another folder finds the library bundled in the package, with no
# PAIRSIGHT_LIBRARY and no LD_LIBRARY_PATH; PAIRSIGHT_LIBRARY still
# overrides it. The install reuses this build's library (PAIRSIGHT_BUILD_DIR)
# so that the test stays quick; PS_TEST_FRESH_PIP=1 also builds it from a
# fresh clone with CMake, as a user's install does (minutes).
# Exit 77 when the venv module (Debian: python3-venv) is missing.
# Usage: sh tests/test_python_venv.sh PAIRSIGHT (the CLI in its build folder)
set -u
CLI=${1:?usage: test_python_venv.sh PAIRSIGHT}
. tests/clitest.sh
B=$(cd "$(dirname "$CLI")" && pwd)
SRC=$(pwd)
PY=/usr/bin/python3
[ "${PS_SANITIZED:-0}" = 1 ] && { echo "skip: the sanitized library needs LD_PRELOAD; test_python covers it"; exit 77; }
"$PY" -c 'import ensurepip, venv' 2>/dev/null || { echo "skip: no venv module (scripts/setup.sh installs python3-venv)"; exit 77; }

# pip builds in place: a copy of the checkout keeps build/ and egg-info out
# of the source tree (the tracked files of python/, as a clone has them).
mkdir "$T/repo"
git -C "$SRC" ls-files -z python | (cd "$SRC" && xargs -0 tar cf -) | tar xf - -C "$T/repo"

install() { # venv folder, then extra environment (VENV_PY: the Python of the venv, default $PY)
    v=$1; shift
    "${VENV_PY:-$PY}" -m venv "$v" || return 1
    (cd "$T/repo" && env "$@" "$v/bin/pip" install --no-index --no-build-isolation --disable-pip-version-check \
        -q ./python) >"$T/pip.log" 2>&1 || { cat "$T/pip.log"; return 1; }
}
imp='import pairsight, sys; print(pairsight.version(), pairsight.library_path()); print(sys.prefix)'

expect 0 install "$T/v1" PAIRSIGHT_BUILD_DIR="$B"
lib=$(find "$T/v1" -name libpairsight.so.0 | head -1)
[ -n "$lib" ] || fail "the package bundles no libpairsight.so.0"
cd "$T" || exit 1
expect 0 env -u PAIRSIGHT_LIBRARY LD_LIBRARY_PATH= "$T/v1/bin/python" -c "$imp"
has "$T/out" "$lib"
has "$T/out" "$("$CLI" --version | awk '{print $2}')"
# PAIRSIGHT_LIBRARY overrides the bundled copy.
cp "$B/libpairsight.so.0" "$T/other.so"
expect 0 env PAIRSIGHT_LIBRARY="$T/other.so" "$T/v1/bin/python" -c "$imp"
has "$T/out" "$T/other.so"
# It works without numpy (lists): train, predict, pickle.
expect 0 env -u PAIRSIGHT_LIBRARY "$T/v1/bin/python" -c "
import pickle, pairsight
assert pairsight._lib._np is None
ops = pairsight.Ops.load('$SRC/tests/data/ops_small.csv')
print(len(ops), 'ops rows')
"
has "$T/out" "ops rows"

# The build backend (python/pyproject.toml, python/_build) needs neither
# setuptools nor wheel: also a venv of the other Python on this machine
# (pyenv's 3.11 with pip 23.2, whose venvs have no wheel), and a relative
# PAIRSIGHT_BUILD_DIR is taken from the folder pip was started in, not from
# python/ where pip runs the backend.
rel=$("$PY" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$B" "$T/repo")
for other in "$(command -v python3)" /usr/bin/python3; do
    [ -x "$other" ] && "$other" -c 'import ensurepip, venv' 2>/dev/null || continue
    VENV_PY=$other expect 0 install "$T/v3" PAIRSIGHT_BUILD_DIR="$rel"
    expect 0 env -u PAIRSIGHT_LIBRARY LD_LIBRARY_PATH= "$T/v3/bin/python" -c "$imp"
    has "$T/out" "$T/v3/"
    find "$T/repo/python" -name '*.egg-info' | grep -q . && fail "the build wrote an egg-info into the source tree"
    echo "venv of $other ($("$other" --version 2>&1)): installed with PAIRSIGHT_BUILD_DIR=$rel"
    rm -rf "$T/v3"
done
VENV_PY= expect 1 install "$T/v4" PAIRSIGHT_BUILD_DIR="$T/none"
has "$T/pip.log" "holds no libpairsight.so.0"

if [ "${PS_TEST_FRESH_PIP:-0}" = 1 ]; then
    git clone -q "$SRC" "$T/clone" || fail "git clone"
    rm -rf "$T/repo" && mv "$T/clone" "$T/repo"
    start=$(date +%s)
    expect 0 install "$T/v2"
    echo "fresh clone: pip install built and bundled the library in $(($(date +%s) - start)) s"
    expect 0 env -u PAIRSIGHT_LIBRARY LD_LIBRARY_PATH= "$T/v2/bin/python" -c "$imp"
    has "$T/out" "$T/v2/"
fi
finish test_python_venv
