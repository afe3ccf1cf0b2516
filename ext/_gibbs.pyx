"""Gibbs-sampling kernels for LDA.

Every array is allocated and coerced by the caller (``ldacli.train`` and ``ldacli.infer``); a
kernel updates its arrays in place inside one ``nogil`` block and returns nothing. One call is one
sweep over the tokens it is given. Random numbers come from the ``numpy.random.Generator`` passed
in (its bit generator's ``next_double``, the stream ``Generator.random()`` draws from); the
generator's lock is held for the call. The kernels never validate: shapes, dtypes and ranges are
the caller's job.

Each kernel's docstring gives the plain NumPy it is equivalent to, draw for draw; those NumPy
versions live in ``tests/oracle.py`` and the tests check the kernels against them bit for bit.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int32_t, int64_t
from numpy.random cimport bitgen_t


cdef bitgen_t* _bitgen(object rng) except NULL:
    return <bitgen_t*> PyCapsule_GetPointer(rng.bit_generator.capsule, "BitGenerator")


cdef inline Py_ssize_t _search(const double* cum, Py_ssize_t n, double u) noexcept nogil:
    """First index k with u < cum[k], or n - 1 when rounding leaves u at the top."""
    cdef Py_ssize_t k = 0
    while k < n - 1 and cum[k] <= u:
        k += 1
    return k


def cgs_sweep(const int32_t[::1] words, const int64_t[::1] doc_ptr, int32_t[::1] z,
              int32_t[:, ::1] nwk, int32_t[:, ::1] ndk, int32_t[::1] nk,
              const double[::1] alpha, double beta, double beta_sum,
              double[::1] work, object rng):
    """One collapsed Gibbs sweep (Griffiths & Steyvers 2004) over every token, in order.

    Shapes and dtypes (N tokens, D documents, V words, K topics):
    ``words`` (N,) int32 word id of each token; ``doc_ptr`` (D+1,) int64, document d owns tokens
    ``doc_ptr[d]:doc_ptr[d+1]``; ``z`` (N,) int32 topic of each token; ``nwk`` (V, K) int32
    word-topic counts (word-major); ``ndk`` (D, K) int32; ``nk`` (K,) int32; ``alpha`` (K,)
    float64; ``beta`` the symmetric topic-word prior and ``beta_sum`` = V * beta; ``work`` (2K,)
    float64 scratch.

    Mutates ``z``, ``nwk``, ``ndk``, ``nk`` (and ``work``); draws N doubles from ``rng``.
    Equivalent NumPy, token by token::

        inv = 1.0 / (nk + beta_sum)
        for d in range(D):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w, t = words[i], z[i]
                nwk[w, t] -= 1; ndk[d, t] -= 1; nk[t] -= 1
                inv[t] = 1.0 / (nk[t] + beta_sum)
                cum = np.cumsum((ndk[d] + alpha) * (nwk[w] + beta) * inv)
                u = rng.random() * cum[-1]
                t = min(np.searchsorted(cum, u, side="right"), K - 1)
                z[i] = t; nwk[w, t] += 1; ndk[d, t] += 1; nk[t] += 1
                inv[t] = 1.0 / (nk[t] + beta_sum)
    """
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t d, i, k, w, t
    cdef double total, u
    cdef double* cum = &work[0]
    cdef double* inv = &work[K]
    cdef int32_t* nw
    cdef int32_t* nd
    cdef bitgen_t* bitgen = _bitgen(rng)

    with rng.bit_generator.lock:
        with nogil:
            for k in range(K):
                inv[k] = 1.0 / (nk[k] + beta_sum)
            for d in range(D):
                nd = &ndk[d, 0]
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    w = words[i]
                    t = z[i]
                    nw = &nwk[w, 0]
                    nw[t] -= 1
                    nd[t] -= 1
                    nk[t] -= 1
                    inv[t] = 1.0 / (nk[t] + beta_sum)
                    total = 0.0
                    for k in range(K):
                        total = total + (nd[k] + alpha[k]) * (nw[k] + beta) * inv[k]
                        cum[k] = total
                    u = bitgen.next_double(bitgen.state) * total
                    t = _search(cum, K, u)
                    z[i] = <int32_t> t
                    nw[t] += 1
                    nd[t] += 1
                    nk[t] += 1
                    inv[t] = 1.0 / (nk[t] + beta_sum)


def fixed_topics_sweep(const int32_t[::1] words, const int64_t[::1] doc_ptr, int32_t[::1] z,
                       int32_t[:, ::1] ndk, const double[:, ::1] phi_wk,
                       const double[::1] alpha, double[::1] work, object rng):
    """One Gibbs sweep for new documents with the topics held fixed (inference).

    ``phi_wk`` (V, K) float64 is the transposed topic-word matrix (word-major); ``words``,
    ``doc_ptr``, ``z``, ``ndk``, ``alpha`` as in :func:`cgs_sweep`; ``work`` (K,) float64 scratch.
    Mutates ``z`` and ``ndk``; draws N doubles from ``rng``. Equivalent NumPy::

        for d in range(D):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w, t = words[i], z[i]
                ndk[d, t] -= 1
                cum = np.cumsum((ndk[d] + alpha) * phi_wk[w])
                u = rng.random() * cum[-1]
                t = min(np.searchsorted(cum, u, side="right"), K - 1)
                z[i] = t; ndk[d, t] += 1
    """
    cdef Py_ssize_t K = alpha.shape[0]
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t d, i, k, t
    cdef double total, u
    cdef double* cum = &work[0]
    cdef const double* pw
    cdef int32_t* nd
    cdef bitgen_t* bitgen = _bitgen(rng)

    with rng.bit_generator.lock:
        with nogil:
            for d in range(D):
                nd = &ndk[d, 0]
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    t = z[i]
                    pw = &phi_wk[words[i], 0]
                    nd[t] -= 1
                    total = 0.0
                    for k in range(K):
                        total = total + (nd[k] + alpha[k]) * pw[k]
                        cum[k] = total
                    u = bitgen.next_double(bitgen.state) * total
                    t = _search(cum, K, u)
                    z[i] = <int32_t> t
                    nd[t] += 1
