"""Build the compiled core: every ``ext/_name.pyx`` becomes the private module ``pbf._name``.

Set ``PBF_DEBUG_CYTHON=1`` to build with Cython's bounds, wraparound and initialisation checks on
and C assertions enabled (slow; for stress tests: see docs/engine.md).
"""
import os
import platform
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
DEBUG = os.environ.get("PBF_DEBUG_CYTHON", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    # nonecheck stays off even in debug builds: it needs the GIL to check `self` inside the nogil
    # loops, which use no Python objects anyway
    "nonecheck": False,
    "cdivision": True,
}

# the hardware popcount instruction (every x86-64 CPU since 2008); elsewhere the compiler's builtin
POPCNT = ["-mpopcnt"] if platform.machine() in ("x86_64", "AMD64") else []

extensions = [
    Extension(
        f"pbf.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=["ext", "."],
        extra_compile_args=["-O3", "-ffp-contract=off"] + POPCNT + (["-UNDEBUG"] if DEBUG else []),
    )
    for pyx in sorted((HERE / "ext").glob("_*.pyx"))
]

# A module's own declarations (pbf/_codes.pxd for ext/_codes.pyx) are not among the dependencies
# cythonize checks, as they sit outside ext/: a C file older than them is stale, made again.
for pyx in (HERE / "ext").glob("_*.pyx"):
    own, c_file = HERE / "pbf" / f"{pyx.stem}.pxd", pyx.with_suffix(".c")
    if own.exists() and c_file.exists() and own.stat().st_mtime > c_file.stat().st_mtime:
        c_file.unlink()

setup(ext_modules=cythonize(extensions, compiler_directives=directives, include_path=["ext", "."]))
