"""The PEP 517 build backend of the pairsight Python package, standard
library only: a wheel of python/pairsight plus the C library, which it builds
with CMake from the repository around this folder and bundles into the
package (as xgboost's and lightgbm's wheels bundle theirs), where
`import pairsight` finds it first (PAIRSIGHT_LIBRARY still overrides).

    python3 -m venv ~/.venvs/pairsight
    ~/.venvs/pairsight/bin/pip install --no-build-isolation ./python

Environment:
  PAIRSIGHT_BUILD_DIR=DIR  bundle DIR/libpairsight.so.0 from an existing
                           build instead of building; a relative DIR is
                           taken from the folder pip was started in (the
                           caller's $PWD), else from the repository root
  PAIRSIGHT_NO_BUNDLE=1    the Python files alone (a pure wheel); the library
                           then comes from PAIRSIGHT_LIBRARY, an install
                           prefix's lib/ or the system path
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
ROOT = os.path.dirname(HERE)
LIB = "libpairsight.so.0"
NAME = "pairsight"


def _version():
    ns = {}
    with open(os.path.join(HERE, NAME, "_version.py")) as f:
        exec(f.read(), ns)
    return ns["__version__"]


def _bundle():
    return os.environ.get("PAIRSIGHT_NO_BUNDLE", "") in ("", "0")


def build_dir(given, caller=None, root=ROOT):
    """PAIRSIGHT_BUILD_DIR as an absolute path: as given when absolute, else
    from the caller's folder ($PWD: pip runs the backend in python/), else
    from the repository root."""
    if os.path.isabs(given):
        return given
    caller = caller if caller is not None else os.environ.get("PWD", "")
    for base in (caller, root):
        if base and os.path.isdir(os.path.join(base, given)):
            return os.path.abspath(os.path.join(base, given))
    return os.path.abspath(os.path.join(caller or os.getcwd(), given))


def _cmake_build(tmp):
    """Build the shared library with CMake from the repository; its path."""
    if not os.path.exists(os.path.join(ROOT, "CMakeLists.txt")):
        raise SystemExit("pairsight: no CMakeLists.txt at %s: install from a checkout of the repository, set "
                         "PAIRSIGHT_BUILD_DIR to a build folder holding %s, or PAIRSIGHT_NO_BUNDLE=1 for the "
                         "Python files alone" % (ROOT, LIB))
    cmake = shutil.which("cmake")
    if not cmake:
        raise SystemExit("pairsight: cmake is needed to build the C library (scripts/setup.sh installs it)")
    bdir = os.path.join(tmp, "pairsight-cmake")
    cfg = [cmake, "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ccache"):
        cfg.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
    subprocess.check_call(cfg, stdout=sys.stderr)
    subprocess.check_call([cmake, "--build", bdir, "--target", "pairsight_shared", "-j", str(os.cpu_count() or 2)],
                          stdout=sys.stderr)
    return os.path.join(bdir, LIB)


def _library(tmp):
    given = os.environ.get("PAIRSIGHT_BUILD_DIR")
    if not given:
        return _cmake_build(tmp)
    d = build_dir(given)
    src = os.path.join(d, LIB)
    if not os.path.exists(src):
        raise SystemExit("pairsight: PAIRSIGHT_BUILD_DIR=%s (%s) holds no %s" % (given, d, LIB))
    return src


def _tag():
    if not _bundle():
        return "py3-none-any"
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: Predict the slowdown of deep-learning tasks "
            "sharing one NVIDIA GPU (ctypes bindings)\nRequires-Python: >=3.8\nProvides-Extra: numpy\n"
            "Requires-Dist: numpy; extra == \"numpy\"\nProvides-Extra: pandas\n"
            "Requires-Dist: pandas; extra == \"pandas\"\n" % (NAME, _version()))


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (arc, digest, len(data))


def _dist_info_files():
    wheel = "Wheel-Version: 1.0\nGenerator: pairsight_build\nRoot-Is-Purelib: %s\nTag: %s\n" % (
        "false" if _bundle() else "true", _tag())
    return {"METADATA": _metadata(), "WHEEL": wheel}


# ---- PEP 517 hooks ----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di = "%s-%s.dist-info" % (NAME, _version())
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for name, text in _dist_info_files().items():
        with open(os.path.join(metadata_directory, di, name), "w") as f:
            f.write(text)
    return di


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    ver = _version()
    di = "%s-%s.dist-info" % (NAME, ver)
    fname = "%s-%s-%s.whl" % (NAME, ver, _tag())
    files = []
    pkg = os.path.join(HERE, NAME)
    for f in sorted(os.listdir(pkg)):
        if f.endswith((".py", ".typed")):
            with open(os.path.join(pkg, f), "rb") as fh:
                files.append(("%s/%s" % (NAME, f), fh.read(), 0o644))
    with tempfile.TemporaryDirectory() as tmp:
        if _bundle():
            with open(_library(tmp), "rb") as fh:  # follows the symlink to the versioned file
                files.append(("%s/%s" % (NAME, LIB), fh.read(), 0o755))
    for name, text in _dist_info_files().items():
        files.append(("%s/%s" % (di, name), text.encode(), 0o644))
    record = "".join(_record_line(arc, data) for arc, data, _ in files) + "%s/RECORD,,\n" % di
    files.append(("%s/RECORD" % di, record.encode(), 0o644))
    os.makedirs(wheel_directory, exist_ok=True)
    path = os.path.join(wheel_directory, fname)
    part = path + ".part"  # whole or not at all
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data, mode in files:
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(part, path)
    return fname


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    base = "%s-%s" % (NAME, _version())
    fname = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    path = os.path.join(sdist_directory, fname)
    with tarfile.open(path + ".part", "w:gz") as t:
        for rel in ("pyproject.toml", "_build/pairsight_build.py"):
            t.add(os.path.join(HERE, rel), arcname="%s/%s" % (base, rel))
        t.add(os.path.join(HERE, NAME), arcname="%s/%s" % (base, NAME),
              filter=lambda ti: None if "__pycache__" in ti.name else ti)
        pkg_info = _metadata().encode()
        import io
        ti = tarfile.TarInfo("%s/PKG-INFO" % base)
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    os.replace(path + ".part", path)
    return fname
