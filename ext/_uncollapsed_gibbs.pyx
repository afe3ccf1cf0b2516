"""Kernels of the uncollapsed (blocked) Gibbs sampler for LDA.

Given theta (D, K) and phi, the topics of all tokens are independent, so a sweep can run over
fixed ranges of documents in parallel, each range with its own ``numpy.random.Generator``. Every
array is allocated by the caller (``ldacli.methods.uncollapsed_gibbs``); a kernel updates its
arrays in place inside one ``nogil`` block and returns nothing. Random numbers come from the
generator passed in (its bit generator's ``next_double``); its lock is held for the call. The
kernels never validate.

The corpus is the CSR document-term matrix: ``indptr`` (D+1,) int64, ``indices`` (NNZ,) int32,
``counts`` (NNZ,) int32. Topics are word-major, ``phi_wk`` (V, K) float64 (column k is topic k).

Gamma variates (for the Dirichlet draws) are drawn by Marsaglia & Tsang's method (2000) with
standard normals from Marsaglia's polar method, both written here so that the draws can run
without the GIL; the tests check their moments.
"""

from libc.math cimport exp, log, sqrt
from libc.stdint cimport int32_t, int64_t
from numpy.random cimport bitgen_t

from _shared cimport bitgen_of


cdef double _normal(bitgen_t* bg) noexcept nogil:
    """A standard normal variate (polar method; the second variate of the pair is dropped)."""
    cdef double u, v, s
    while True:
        u = 2.0 * bg.next_double(bg.state) - 1.0
        v = 2.0 * bg.next_double(bg.state) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            return u * sqrt(-2.0 * log(s) / s)


cdef double _gamma(bitgen_t* bg, double shape) noexcept nogil:
    """A Gamma(shape, 1) variate, shape > 0 (Marsaglia & Tsang; shape < 1 by boosting:
    Gamma(a) = Gamma(a + 1) * U**(1/a), computed in logs so that it underflows to 0 cleanly)."""
    cdef double d, c, x, v, u, boost = 0.0
    if shape < 1.0:
        u = 1.0 - bg.next_double(bg.state)  # in (0, 1]
        boost = log(u) / shape
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / sqrt(9.0 * d)
    while True:
        x = _normal(bg)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = bg.next_double(bg.state)
        if u < 1.0 - 0.0331 * (x * x) * (x * x) or log(u) < 0.5 * x * x + d * (1.0 - v + log(v)):
            if boost == 0.0:
                return d * v
            return exp(log(d * v) + boost)


def gamma_fill(const double[::1] shape, double[::1] out, object rng):
    """``out[i] ~ Gamma(shape[i], 1)``, independently; the tests' handle on the gamma sampler."""
    cdef Py_ssize_t i
    cdef bitgen_t* bg = bitgen_of(rng)
    with rng.bit_generator.lock:
        with nogil:
            for i in range(shape.shape[0]):
                out[i] = _gamma(bg, shape[i])


cdef inline Py_ssize_t _find(const double* cum, Py_ssize_t n, double u) noexcept nogil:
    """First index k with u < cum[k] (cum non-decreasing), or n - 1 if there is none."""
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[mid] <= u:
            lo = mid + 1
        else:
            hi = mid
    return lo


def draw_z_theta(const int64_t[::1] indptr, const int32_t[::1] indices, const int32_t[::1] counts,
                 double[:, ::1] theta, const double[:, ::1] phi_wk, const double[::1] alpha,
                 Py_ssize_t doc_start, Py_ssize_t doc_stop, int32_t[:, ::1] nwk,
                 int32_t[::1] ndk_work, double[::1] work, object rng):
    """One blocked-Gibbs step for documents ``doc_start:doc_stop``: z given (theta, phi), then
    theta given z.

    ``theta`` (D, K) float64, rows of the range read then overwritten; ``phi_wk`` (V, K);
    ``alpha`` (K,); ``nwk`` (V, K) int32, this sweep's word-topic counts *added to*; scratch
    ``ndk_work`` (K,) int32 and ``work`` (2K,) float64. Equivalent NumPy, per document d::

        n_d = zeros(K, int)
        for each unique word w of d, with count c:
            cum = np.cumsum(theta[d] * phi_wk[w])
            for _ in range(c):                    # the c tokens of w: independent draws
                t = min(np.searchsorted(cum, rng.random() * cum[-1], side="right"), K - 1)
                n_d[t] += 1; nwk[w, t] += 1
        g = [Gamma(alpha[k] + n_d[k]) for k in range(K)]   # this module's gamma sampler
        theta[d] = g / g.sum()                             # theta_d ~ Dirichlet(alpha + n_d)
    """
    cdef Py_ssize_t K = alpha.shape[0]
    cdef Py_ssize_t d, p, k, t, w
    cdef double total, u
    cdef double* cum = &work[0]
    cdef double* g = &work[K]
    cdef double* th
    cdef const double* pw
    cdef int32_t* nd = &ndk_work[0]
    cdef bitgen_t* bg = bitgen_of(rng)

    with rng.bit_generator.lock:
        with nogil:
            for d in range(doc_start, doc_stop):
                th = &theta[d, 0]
                for k in range(K):
                    nd[k] = 0
                for p in range(indptr[d], indptr[d + 1]):
                    w = indices[p]
                    pw = &phi_wk[w, 0]
                    total = 0.0
                    for k in range(K):
                        total = total + th[k] * pw[k]
                        cum[k] = total
                    for j in range(counts[p]):
                        u = bg.next_double(bg.state) * total
                        t = _find(cum, K, u)
                        nd[t] += 1
                        nwk[w, t] += 1
                total = 0.0
                for k in range(K):
                    g[k] = _gamma(bg, alpha[k] + nd[k])
                    total += g[k]
                if total > 0.0:
                    for k in range(K):
                        th[k] = g[k] / total
                else:  # every variate underflowed (tiny alpha, empty document): use the mean
                    total = 0.0
                    for k in range(K):
                        total += alpha[k] + nd[k]
                    for k in range(K):
                        th[k] = (alpha[k] + nd[k]) / total


def draw_topic(const int32_t[:, ::1] nwk, Py_ssize_t topic, double beta, double[::1] out,
               object rng):
    """``out ~ Dirichlet(beta + nwk[:, topic])``: topic ``topic``'s words, drawn in word order.

    ``nwk`` (V, K) int32 word-topic counts of this sweep; ``out`` (V,) float64, e.g. a row of a
    (K, V) array. Equivalent NumPy: ``g = Gamma(beta + nwk[:, topic])`` (V variates from this
    module's gamma sampler), ``out[:] = g / g.sum()``.
    """
    cdef Py_ssize_t V = nwk.shape[0]
    cdef Py_ssize_t w
    cdef double total = 0.0, x
    cdef bitgen_t* bg = bitgen_of(rng)
    with rng.bit_generator.lock:
        with nogil:
            for w in range(V):
                x = _gamma(bg, beta + nwk[w, topic])
                out[w] = x
                total += x
            if total > 0.0:
                for w in range(V):
                    out[w] = out[w] / total
            else:  # every variate underflowed: use the mean
                total = 0.0
                for w in range(V):
                    total += beta + nwk[w, topic]
                for w in range(V):
                    out[w] = (beta + nwk[w, topic]) / total


def doc_loglik(const int64_t[::1] indptr, const int32_t[::1] indices, const int32_t[::1] counts,
               const double[:, ::1] theta, const double[:, ::1] phi_wk,
               Py_ssize_t doc_start, Py_ssize_t doc_stop, double[::1] out):
    """``out[d] = sum_w counts[d, w] * log(theta[d] @ phi_wk[w])`` for the documents in range:
    log p(w_d | theta_d, phi)."""
    cdef Py_ssize_t K = theta.shape[1]
    cdef Py_ssize_t d, p, k
    cdef double s, ll
    cdef const double* th
    cdef const double* pw
    with nogil:
        for d in range(doc_start, doc_stop):
            th = &theta[d, 0]
            ll = 0.0
            for p in range(indptr[d], indptr[d + 1]):
                pw = &phi_wk[indices[p], 0]
                s = 0.0
                for k in range(K):
                    s = s + th[k] * pw[k]
                ll += counts[p] * log(s)
            out[d] = ll
