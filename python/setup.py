"""The pairsight Python package: ctypes over the C library, which is built
and bundled into the package as xgboost's and lightgbm's wheels bundle
theirs.

`pip install ./python` (in a venv: Debian and Ubuntu refuse installs into
the system Python, PEP 668) runs CMake on the repository around this folder,
builds libpairsight.so.0 and puts it into the package, where
`import pairsight` finds it first (PAIRSIGHT_LIBRARY still overrides). It
needs the C build's dependencies (scripts/setup.sh) and works offline:

    python3 -m venv ~/.venvs/pairsight
    ~/.venvs/pairsight/bin/pip install --no-build-isolation ./python

Environment:
  PAIRSIGHT_BUILD_DIR=DIR  bundle DIR/libpairsight.so.0 from an existing
                           build instead of building (CI reuses its build)
  PAIRSIGHT_NO_BUNDLE=1    install the Python files alone; the library then
                           comes from PAIRSIGHT_LIBRARY, an install prefix's
                           lib/ or the system path
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIB = "libpairsight.so.0"


def _version():
    ns = {}
    with open(os.path.join(HERE, "pairsight", "_version.py")) as f:
        exec(f.read(), ns)
    return ns["__version__"]


def _bundle():
    return os.environ.get("PAIRSIGHT_NO_BUNDLE", "") in ("", "0")


def _cmake_build(build_temp):
    """Build the shared library with CMake from the repository; its path."""
    if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
        raise SystemExit("pairsight: no CMakeLists.txt at %s: install from a checkout of the repository, set "
                         "PAIRSIGHT_BUILD_DIR to a build folder holding %s, or PAIRSIGHT_NO_BUNDLE=1 for the "
                         "Python files alone" % (ROOT, LIB))
    cmake = shutil.which("cmake")
    if not cmake:
        raise SystemExit("pairsight: cmake is needed to build the C library (scripts/setup.sh installs it)")
    bdir = os.path.join(os.path.abspath(build_temp), "pairsight-cmake")
    cfg = [cmake, "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ccache"):
        cfg.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
    subprocess.check_call(cfg)
    subprocess.check_call([cmake, "--build", bdir, "--target", "pairsight_shared", "-j", str(os.cpu_count() or 2)])
    return os.path.join(bdir, LIB)


class BuildPy(build_py):
    """build_py, then the C library into the package folder."""

    def run(self):
        super().run()
        if not _bundle():
            return
        given = os.environ.get("PAIRSIGHT_BUILD_DIR")
        if given:
            src = os.path.join(given, LIB)
            if not os.path.exists(src):
                raise SystemExit("pairsight: PAIRSIGHT_BUILD_DIR=%s holds no %s" % (given, LIB))
        else:
            src = _cmake_build(self.get_finalized_command("build").build_temp)
        dest = os.path.join(self.build_lib, "pairsight", LIB)
        shutil.copyfile(src, dest)  # follows the symlink to the versioned file
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    """With the library bundled the wheel is platform-specific."""

    def has_ext_modules(self):
        return _bundle()


setup(
    name="pairsight",
    version=_version(),
    description="Predict the slowdown of deep-learning tasks sharing one NVIDIA GPU (ctypes bindings)",
    long_description=__doc__,
    packages=["pairsight"],
    python_requires=">=3.8",
    extras_require={"numpy": ["numpy"], "pandas": ["pandas"]},
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    zip_safe=False,
    license="see the pairsight repository",
)
