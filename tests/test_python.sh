#!/bin/sh
# The Python package (python/pairsight, ctypes over libpairsight.so.0) with
# Debian's python3: its pytest suite against the build tree's library and
# CLI (under scripts/test.sh --sanitize the ASan build, with the threaded
# close-while-predicting stress test run longer), then `pip install ./python`
# (Python files alone) offline into a folder, imported with the
# library found through PAIRSIGHT_LIBRARY, next to the package, and on the
# system path. Exit 77 when python3, numpy or pytest is missing.
# Usage: sh tests/test_python.sh PAIRSIGHT (the CLI in its build folder)
set -u
CLI=${1:?usage: test_python.sh PAIRSIGHT}
. tests/clitest.sh
B=$(cd "$(dirname "$CLI")" && pwd)
PY=/usr/bin/python3
LIB=$B/libpairsight.so.0
"$PY" -c 'import numpy, pytest' 2>/dev/null || { echo "skip: $PY with numpy and pytest is needed"; exit 77; }
if [ "${PS_SANITIZED:-0}" = 1 ]; then
    # An uninstrumented interpreter loads the instrumented library only with
    # the sanitizer runtimes preloaded; Python's own allocations are not ours
    # to check for leaks.
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
    export LD_PRELOAD
    export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
    export PAIRSIGHT_STRESS_ROUNDS=20
fi

PYTHONPATH=python PAIRSIGHT_LIBRARY=$LIB PAIRSIGHT_CLI=$CLI "$PY" -m pytest -q -p no:cacheprovider python/tests >"$T/pytest" 2>&1 ||
    fail "pytest: $(tail -30 "$T/pytest")"
tail -1 "$T/pytest"

# pip install of the Python files alone (PAIRSIGHT_NO_BUNDLE=1; the bundled
# install is tests/test_python_venv.sh), offline, nothing compiled; the
# source tree is copied first so that pip's build folders stay out of it.
cp -r python "$T/src"
rm -rf "$T/src/build" "$T/src/"*.egg-info "$T/src/pairsight/"libpairsight.so*
export PAIRSIGHT_NO_BUNDLE=1
expect 0 "$PY" -m pip install --no-index --no-deps --disable-pip-version-check -q --target "$T/site" "$T/src"
[ -f "$T/site/pairsight/__init__.py" ] || fail "pip installed no pairsight/__init__.py"
find "$T/site" -name '*.so*' | grep -q . && fail "pip installed a compiled file"
imp='import pairsight; print(pairsight.version(), pairsight.library_path())'
expect 0 env PYTHONPATH="$T/site" PAIRSIGHT_LIBRARY="$LIB" "$PY" -c "$imp"
has "$T/out" "$LIB"
expect 0 env -u PAIRSIGHT_LIBRARY PYTHONPATH="$T/site" LD_LIBRARY_PATH="$B" "$PY" -c "$imp"
has "$T/out" "libpairsight"
cp "$LIB" "$T/site/pairsight/"
expect 0 env -u PAIRSIGHT_LIBRARY PYTHONPATH="$T/site" "$PY" -c "$imp"
has "$T/out" "$T/site/pairsight/libpairsight.so.0"
rm "$T/site/pairsight/libpairsight.so.0"
expect 0 env PAIRSIGHT_LIBRARY="$LIB" PYTHONPATH="$T/site" "$PY" -c "import pairsight; help(pairsight)"
has "$T/out" "Model.load"
# Installed: the C library with cmake --install and the package with pip
# into the same prefix; the package finds the library up its tree.
expect 0 cmake --install "$B" --prefix "$T/p"
expect 0 "$PY" -m pip install --no-index --no-deps --disable-pip-version-check -q --prefix "$T/p" "$T/src"
site=$(dirname "$(find "$T/p" -path '*pairsight/__init__.py' | head -1)")
[ -n "$site" ] || fail "pip --prefix installed no pairsight package"
expect 0 env -u PAIRSIGHT_LIBRARY PYTHONPATH="$(dirname "$site")" LD_LIBRARY_PATH= "$PY" -c "$imp"
has "$T/out" "$T/p/"
# Without a library the package imports (pairsight.capture needs none), and
# the first name of the C API fails saying what to do.
expect 1 env -u PAIRSIGHT_LIBRARY PYTHONPATH="$T/site" LD_LIBRARY_PATH= "$PY" -c 'import pairsight; pairsight.Model'
has "$T/err" "PAIRSIGHT_LIBRARY"
finish test_python
