"""The pairsight Python package: pure Python over the C library (ctypes).

Nothing is compiled at install time: `pip install ./python` needs only
setuptools (Debian: python3-setuptools) and works offline. The shared library
libpairsight.so.0 comes from the C build or install (see the README)."""
from setuptools import setup

setup(
    name="pairsight",
    version="0.1.0",
    description="Predict the slowdown of deep-learning tasks sharing one NVIDIA GPU (ctypes bindings)",
    long_description=__doc__,
    packages=["pairsight"],
    python_requires=">=3.8",
    extras_require={"numpy": ["numpy"]},
    license="see the pairsight repository",
)
