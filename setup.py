"""Build the compiled core: every ``ext/_name.pyx`` becomes the private module ``pbf._name``.

Set ``PBF_DEBUG_CYTHON=1`` to build with bounds checks and wraparound on (slow, for stress tests).
"""
import os
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
    "nonecheck": DEBUG,
    "cdivision": True,
}

extensions = [
    Extension(
        f"pbf.{pyx.stem}",
        [str(pyx.relative_to(HERE))],
        include_dirs=["ext"],
        extra_compile_args=["-O3"] + (["-UNDEBUG"] if DEBUG else []),
    )
    for pyx in sorted((HERE / "ext").glob("_*.pyx"))
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives, include_path=["ext"]))
