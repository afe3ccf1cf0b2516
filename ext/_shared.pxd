# Helpers shared by the kernels (inline, so nothing is imported at run time).

from cpython.pycapsule cimport PyCapsule_GetPointer
from numpy.random cimport bitgen_t


cdef inline bitgen_t* bitgen_of(object rng) except NULL:
    """The bit generator behind a ``numpy.random.Generator``."""
    return <bitgen_t*> PyCapsule_GetPointer(rng.bit_generator.capsule, "BitGenerator")


cdef inline Py_ssize_t search_cumulative(const double* cum, Py_ssize_t n, double u) noexcept nogil:
    """First index k with u < cum[k], or n - 1 when rounding leaves u at the top."""
    cdef Py_ssize_t k = 0
    while k < n - 1 and cum[k] <= u:
        k += 1
    return k


cdef extern from *:
    """#define LDACLI_PREFETCH(p) __builtin_prefetch((const void*) (p))"""
    void prefetch "LDACLI_PREFETCH"(const void* p) noexcept nogil
