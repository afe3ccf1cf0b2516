"""Declares and cythonizes the extension modules; all other metadata is in pyproject.toml."""

import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

# Cython directives for the whole project, in one place.
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
    "cdivision": True,
    "embedsignature": True,
}

# -ffp-contract=off: no fused multiply-add, so the kernels round exactly like the NumPy oracle
# in the tests on every platform (aarch64 compilers fuse by default).
COMPILE_ARGS = ["-O3", "-ffp-contract=off"]

# Every ext/NAME.pyx becomes the module ldacli.NAME (in src/ldacli when built in place).
extensions = [
    Extension(
        f"ldacli.{os.path.splitext(os.path.basename(source))[0]}",
        [source],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=COMPILE_ARGS,
    )
    for source in sorted(glob.glob("ext/*.pyx"))
]

setup(ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES))
