"""The package's version: the C library's major.minor must equal it (checked
at import). setup.py reads it from here; keep it equal to CMakeLists.txt's
project(VERSION) (tests/test_python.sh checks)."""
__version__ = "0.1.0"
