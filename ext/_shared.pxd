# Helpers shared by the kernels (inline, so nothing is imported at run time).

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int32_t
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


cdef inline void alias_table(const double* weight, Py_ssize_t n, double total, double* prob, int32_t* alias,
                             int32_t* small, int32_t* large) noexcept nogil:
    """Vose's alias table (``prob``, ``alias``, n each) of ``weight[:n]`` summing to ``total``;
    ``small``, ``large`` (n,) scratch: the alias sampler's (``_cgs.pyx``) and inference's."""
    cdef Py_ssize_t j, ns = 0, nl = 0, a, b
    cdef double scale = n / total
    for j in range(n):
        prob[j] = weight[j] * scale
        alias[j] = <int32_t> j
        if prob[j] < 1.0:
            small[ns] = <int32_t> j
            ns += 1
        else:
            large[nl] = <int32_t> j
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        a = small[ns]
        b = large[nl - 1]
        alias[a] = <int32_t> b
        prob[b] = (prob[b] + prob[a]) - 1.0
        if prob[b] < 1.0:
            nl -= 1
            small[ns] = <int32_t> b
            ns += 1
    while nl > 0:
        nl -= 1
        prob[large[nl]] = 1.0
    while ns > 0:  # rounding leftovers
        ns -= 1
        prob[small[ns]] = 1.0


cdef inline Py_ssize_t alias_draw(const double* prob, const int32_t* alias, Py_ssize_t n, double u) noexcept nogil:
    """An index from the alias table of :func:`alias_table`, for u uniform in [0, 1)."""
    cdef double x = u * n
    cdef Py_ssize_t j = <Py_ssize_t> x
    if j >= n:
        j = n - 1
    if x - j < prob[j]:
        return j
    return alias[j]


cdef extern from *:
    """#define LDACLI_PREFETCH(p) __builtin_prefetch((const void*) (p))"""
    void prefetch "LDACLI_PREFETCH"(const void* p) noexcept nogil
