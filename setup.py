"""Declares and cythonizes the extension modules; all other metadata is in pyproject.toml.

The kernels are compiled once per tree: ``pip install .`` builds in ``build/``, and a second
install of the same tree (``pip install '.[test]'`` after ``pip install .``) reuses them unless
``ext/``, this file or the Cython version changed. Cython alone would regenerate every module
each time, because pip's isolated build environment installs fresh copies of Cython and numpy
whose ``.pxd`` files are newer than the generated C. The modules compile in parallel, one per
core this process may use, and the build says on the terminal what it compiles (pip shows a
backend's output only with ``-v``).
"""

import glob
import os
import sys
import time

import numpy
from Cython import __version__ as CYTHON_VERSION
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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
# -g0: no debug information (Python's own CFLAGS ask for it): the same machine code, a quarter
# less compile time; a build with CFLAGS=-g (for perf or gdb) keeps it.
COMPILE_ARGS = ["-O3", "-ffp-contract=off"] + ([] if "-g" in os.environ.get("CFLAGS", "").split() else ["-g0"])

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
# Seconds of one core to compile every kernel (Cython and the C compiler), measured on the 2-core
# machine the project is developed on; what the build tells the user to expect.
CPU_SECONDS = 40

# Every ext/NAME.pyx becomes the module ldacli.NAME (in ldacli/ when built in place).
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


def say(message: str) -> None:
    """Print ``message`` on stderr, and on the terminal when pip holds stderr (it shows a
    backend's output only with -v or on failure)."""
    print(message, file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        return
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(f"\n{message}\n")
    except OSError:
        pass   # no terminal: a CI job, a cron job


def c_of(source: str) -> str:
    """The C that Cython generates from ``source`` (ext/NAME.pyx: ext/NAME.c)."""
    return source[:-len(".pyx")] + ".c" if source.endswith(".pyx") else source


def c_is_current(pyx: str) -> bool:
    """Whether the C that Cython generated from ``pyx`` is newer than everything of the project's
    it depends on (the module, ext/*.pxd, this file) and came from this Cython version."""
    c = c_of(pyx)
    try:
        with open(c, encoding="utf-8") as f:
            if f"Cython {CYTHON_VERSION} " not in f.readline():
                return False
        made = os.path.getmtime(c)
    except OSError:
        return False
    return all(os.path.getmtime(p) <= made for p in [pyx, __file__, *glob.glob("ext/*.pxd")])


class BuildKernels(build_ext):
    """build_ext that cythonizes only stale modules, compiles in parallel and says so."""

    def is_current(self, ext) -> bool:
        """Whether the compiled module is newer than its C (what build_ext then skips)."""
        built = self.get_ext_fullpath(ext.name)
        return os.path.exists(built) and os.path.getmtime(built) >= os.path.getmtime(c_of(ext.sources[0]))

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = CORES

    def run(self):
        start = time.monotonic()
        stale = [e for e in self.extensions if not c_is_current(e.sources[0])]
        compile_ = [e for e in self.extensions if self.force or e in stale or not self.is_current(e)]
        if not compile_:
            say(f"ldacli: the compiled kernels in {'ldacli' if self.inplace else self.build_lib} are up to date: "
                "nothing to compile")
        else:
            cores = min(CORES, len(compile_))
            about = max(5, round(CPU_SECONDS * len(compile_) / len(self.extensions) / cores / 5) * 5)
            say(f"ldacli: compiling {len(compile_)} Cython kernel{'s' * (len(compile_) > 1)} "
                f"({', '.join(e.name.split('.')[-1] for e in compile_)}) on {cores} core{'s' * (cores > 1)}: "
                f"about {about} s, longer on a busy machine")
        if stale:   # writes ext/NAME.c beside each module
            cythonize(stale, compiler_directives=DIRECTIVES, nthreads=CORES if len(stale) > 1 else 0, force=True,
                      quiet=True)
        for e in self.extensions:
            e.sources = [c_of(e.sources[0])]
        super().run()
        if compile_:
            say(f"ldacli: kernels compiled in {time.monotonic() - start:.0f} s")

setup(ext_modules=extensions, cmdclass={"build_ext": BuildKernels})
