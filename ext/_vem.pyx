"""Variational EM kernels for LDA (Blei, Ng & Jordan 2003), and the special functions they use.

Every array is allocated and coerced by the caller (``ldacli.methods.vem``); a kernel fills or updates its
arrays in place inside one ``nogil`` block and returns nothing. A call covers one range of
documents (E-step) or of words (M-step statistics), so the caller can run fixed ranges on several
threads: different ranges never write to the same memory, and nothing is summed across ranges
here, so the result does not depend on how ranges are spread over threads.

The corpus is the CSR document-term matrix: ``indptr`` (D+1,) int64, ``indices`` (NNZ,) int32
word ids, ``counts`` (NNZ,) int32. Topics are passed word-major, ``topic_wk`` (V, K) float64, so
the loop over topics walks contiguous memory; it holds ``beta_{k,w}`` (plain model) or
``exp(E[log beta_{k,w}])`` under the variational Dirichlet ``lambda`` (smoothed model).

``digamma`` and ``lgamma`` are our own (asymptotic series after a recurrence); the tests compare
them with ``scipy.special``. libc's ``lgamma`` is not used because it writes the global
``signgam``, which threads would race on.
"""

from libc.math cimport INFINITY, M_PI, NAN, cos, exp, fabs, floor, log, sin
from libc.stdint cimport int32_t, int64_t


# Below this the argument is shifted up by the recurrences before the asymptotic series is
# used; with terms up to x**-14 the truncation error there is below 1e-17.
cdef double _ASYMPTOTIC_FROM = 10.0
cdef double _HALF_LOG_2PI = 0.91893853320467274178


cdef double digamma(double x) noexcept nogil:
    """psi(x) = d/dx log Gamma(x) for real x; NaN at 0 and the negative integers."""
    cdef double result = 0.0, inv, inv2, num, den
    if x != x or x == -INFINITY:
        return NAN
    if x <= 0.0:
        if floor(x) == x:
            return NAN
        # Reflection: psi(1 - x) - psi(x) = pi cot(pi x).
        return digamma(1.0 - x) - M_PI * cos(M_PI * x) / sin(M_PI * x)
    if x < _ASYMPTOTIC_FROM:
        # psi(x) = psi(x + n) - sum_j 1/(x + j), the sum kept as one fraction num/den so that
        # it costs a single division (den stays below 1e11, no overflow).
        num = 0.0
        den = 1.0
        while x < _ASYMPTOTIC_FROM:
            num = num * x + den
            den = den * x
            x += 1.0
        result = -num / den
    inv = 1.0 / x
    inv2 = inv * inv
    # log x - 1/(2x) - sum B_2n / (2n x^2n), Bernoulli numbers B_2 ... B_14.
    result += log(x) - 0.5 * inv - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 * (1.0 / 12)))))))
    return result


cdef double lgamma(double x) noexcept nogil:
    """log Gamma(x) for x > 0 (NaN otherwise): Stirling's series after shifting x to >= 10."""
    cdef double shift = 1.0, inv, inv2
    if not x > 0.0:
        return NAN
    if x == INFINITY:
        return INFINITY
    if x < _ASYMPTOTIC_FROM:
        # Gamma(x) = Gamma(x + n) / (x (x + 1) ... (x + n - 1)); the product stays < 10**16.
        while x < _ASYMPTOTIC_FROM:
            shift *= x
            x += 1.0
        shift = log(shift)
    else:
        shift = 0.0
    inv = 1.0 / x
    inv2 = inv * inv
    # (x - 1/2) log x - x + log(2 pi)/2 + sum B_2n / (2n (2n - 1) x^(2n-1)).
    return ((x - 0.5) * log(x) - x + _HALF_LOG_2PI - shift
            + inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (
                1.0 / 1680 - inv2 * (1.0 / 1188 - inv2 * (691.0 / 360360 - inv2 * (1.0 / 156))))))))


def digamma_array(const double[::1] x, double[::1] out):
    """``out[i] = digamma(x[i])``; the tests' handle on the nogil function (scipy.special.digamma)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            out[i] = digamma(x[i])


def lgamma_array(const double[::1] x, double[::1] out):
    """``out[i] = lgamma(x[i])`` for x > 0; the tests' handle (scipy.special.gammaln)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(x.shape[0]):
            out[i] = lgamma(x[i])


cdef inline double _dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """sum(a * b) with four running sums combined in a fixed order (the result never depends
    on anything but the inputs; four sums hide the latency of the additions)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t k = 0
    while k + 4 <= n:
        s0 += a[k] * b[k]
        s1 += a[k + 1] * b[k + 1]
        s2 += a[k + 2] * b[k + 2]
        s3 += a[k + 3] * b[k + 3]
        k += 4
    while k < n:
        s0 += a[k] * b[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


# A word whose topic probabilities all underflow would divide by zero; this floor keeps the
# document's statistics finite (it never binds unless every exp(E log theta) underflows).
cdef double _TINY = 1e-300


cdef Py_ssize_t _rounds(Py_ssize_t start, Py_ssize_t stop, const int32_t* indices,
                        const int32_t* counts, const double[:, ::1] topic_wk, const double* alpha,
                        Py_ssize_t K, double limit, Py_ssize_t max_rounds, double* g, double* e,
                        double* elog, double* acc, double* nrm, bint* converged) noexcept nogil:
    """Coordinate-ascent rounds for one document from ``g``; see :func:`estep`. Leaves in ``g``
    the last gamma, in ``e``/``elog`` the exp(E log theta)/E log theta and in ``nrm`` (one per
    unique word) the norms of the last round's phi. Returns the number of rounds."""
    cdef Py_ssize_t it = 0, p, k
    cdef double total, s, r, change, new
    cdef const double* b
    converged[0] = False
    while it < max_rounds:
        total = 0.0
        for k in range(K):
            total += g[k]
        s = digamma(total)
        for k in range(K):
            elog[k] = digamma(g[k]) - s
            e[k] = exp(elog[k])
            acc[k] = 0.0
        for p in range(start, stop):
            b = &topic_wk[indices[p], 0]
            r = _dot(b, e, K)
            if r < _TINY:
                r = _TINY
            nrm[p - start] = r
            r = counts[p] / r
            for k in range(K):
                acc[k] += r * b[k]
        change = 0.0
        for k in range(K):
            new = alpha[k] + e[k] * acc[k]
            change += fabs(new - g[k])
            g[k] = new
        it += 1
        if change <= limit:
            converged[0] = True
            break
    return it


cdef double _elbo(Py_ssize_t start, Py_ssize_t stop, const int32_t* counts, const double* alpha,
                  Py_ssize_t K, double alpha_const, const double* g, const double* elog,
                  const double* nrm) noexcept nogil:
    """The document's ELBO at (the phi of ``elog`` and ``nrm``, gamma ``g``); see :func:`estep`."""
    cdef double elbo = alpha_const, total = 0.0
    cdef Py_ssize_t k, p
    for k in range(K):
        total += g[k]
        elbo += lgamma(g[k]) - (g[k] - alpha[k]) * elog[k]
    elbo -= lgamma(total)
    for p in range(start, stop):
        elbo += counts[p] * log(nrm[p - start])
    return elbo


def estep(const int64_t[::1] indptr, const int32_t[::1] indices, const int32_t[::1] counts,
          const double[:, ::1] topic_wk, const double[::1] alpha,
          Py_ssize_t doc_start, Py_ssize_t doc_stop, double tol, Py_ssize_t max_iter, double restart,
          double[:, ::1] gamma, double[:, ::1] expelog_theta, double[::1] norm,
          double[::1] elbo_doc, int32_t[::1] doc_iters, double[::1] work):
    """Variational E-step for documents ``doc_start:doc_stop``, per unique word with its count.

    Shapes and dtypes (D documents, V words, K topics, NNZ non-zero counts, L the most unique
    words in one document): ``indptr``, ``indices``, ``counts`` the CSR corpus; ``topic_wk``
    (V, K); ``alpha`` (K,); ``gamma`` (D, K) variational Dirichlet of each document, read as the
    warm start and overwritten; ``expelog_theta`` (D, K) out; ``norm`` (NNZ,) out; ``elbo_doc``
    (D,) out; ``doc_iters`` (D,) int32 out (rounds done); ``work`` (5K + L,) scratch. Only the
    rows and entries of the given documents are touched.

    A round, with ``e = exp(digamma(gamma) - digamma(gamma.sum()))``, is::

        norm[p] = topic_wk[w_p] @ e                    # for each unique word p of the document
        new     = alpha + e * sum_p (counts[p] / norm[p]) * topic_wk[w_p]
        change  = abs(new - gamma).sum();  gamma = new

    (``phi_pk = topic_wk[w_p, k] e_k / norm[p]`` is never stored). Rounds repeat until
    ``change <= tol * counts.sum()`` -- fewer than a fraction ``tol`` of the tokens moved -- or
    ``max_iter`` rounds. The document's ELBO at (the last round's phi, the final gamma) is::

        lgamma(alpha.sum()) - lgamma(alpha).sum() + lgamma(gamma).sum() - lgamma(gamma.sum())
        + (counts * log(norm)).sum() - ((gamma - alpha) * log(e)).sum()

    With ``restart == 0``, rounds run from the stored gamma (warm start). With ``restart`` in
    (0, 1], one round is run from the stored gamma, then rounds from a second start that mixes
    the stored gamma with the uniform one, ``alpha + (1 - restart) * (gamma - alpha) + restart
    * counts.sum() / K`` (1: a fresh start), until convergence; that result is kept if its ELBO
    is at least the warm round's, otherwise the warm rounds continue. Either way the ELBO is at
    least that of one round from the stored gamma, so the EM trace never decreases, while the
    second start lets a topic that a document had dropped come back (warm starts with a small
    alpha never do).

    Outputs: ``gamma`` the final gamma; ``expelog_theta`` the ``e`` and ``norm`` the norms of
    the last round (together they give its phi, for the M-step); ``elbo_doc`` the ELBO above;
    ``doc_iters`` the rounds done. Empty documents get ``gamma = alpha``, ELBO 0 and 0 rounds.
    """
    cdef Py_ssize_t K = alpha.shape[0]
    cdef Py_ssize_t d, k, start, stop, n, it
    cdef double alpha_sum = 0.0, alpha_const = 0.0, n_tokens, warm, fresh
    cdef bint conv_warm, conv
    cdef double* g
    cdef double* e
    cdef double* elog_w = &work[0]
    cdef double* acc = &work[K]
    cdef double* g_f = &work[2 * K]
    cdef double* e_f = &work[3 * K]
    cdef double* elog_f = &work[4 * K]
    cdef double* nrm_f = &work[5 * K]
    cdef const int32_t* ind = &indices[0]
    cdef const int32_t* cnt = &counts[0]
    cdef const double* al = &alpha[0]

    with nogil:
        for k in range(K):
            alpha_sum += alpha[k]
            alpha_const -= lgamma(alpha[k])
        alpha_const += lgamma(alpha_sum)
        for d in range(doc_start, doc_stop):
            start = indptr[d]
            stop = indptr[d + 1]
            g = &gamma[d, 0]
            e = &expelog_theta[d, 0]
            if start == stop:
                for k in range(K):
                    g[k] = alpha[k]
                    e[k] = exp(digamma(alpha[k]) - digamma(alpha_sum))
                elbo_doc[d] = 0.0
                doc_iters[d] = 0
                continue
            n_tokens = 0.0
            for n in range(start, stop):
                n_tokens += counts[n]
            if restart <= 0.0:
                it = _rounds(start, stop, ind, cnt, topic_wk, al, K, tol * n_tokens, max_iter,
                             g, e, elog_w, acc, &norm[start], &conv)
                elbo_doc[d] = _elbo(start, stop, cnt, al, K, alpha_const, g, elog_w, &norm[start])
                doc_iters[d] = <int32_t> it
                continue
            for k in range(K):
                g_f[k] = alpha[k] + (1.0 - restart) * (g[k] - alpha[k]) + restart * (n_tokens / K)
            it = _rounds(start, stop, ind, cnt, topic_wk, al, K, tol * n_tokens, 1,
                         g, e, elog_w, acc, &norm[start], &conv_warm)
            warm = _elbo(start, stop, cnt, al, K, alpha_const, g, elog_w, &norm[start])
            n = _rounds(start, stop, ind, cnt, topic_wk, al, K, tol * n_tokens, max_iter,
                        g_f, e_f, elog_f, acc, nrm_f, &conv)
            it += n
            fresh = _elbo(start, stop, cnt, al, K, alpha_const, g_f, elog_f, nrm_f)
            if fresh >= warm:
                for k in range(K):
                    g[k] = g_f[k]
                    e[k] = e_f[k]
                for n in range(stop - start):
                    norm[start + n] = nrm_f[n]
                warm = fresh
            elif not conv_warm and max_iter > 1:
                it += _rounds(start, stop, ind, cnt, topic_wk, al, K, tol * n_tokens, max_iter - 1,
                              g, e, elog_w, acc, &norm[start], &conv)
                warm = _elbo(start, stop, cnt, al, K, alpha_const, g, elog_w, &norm[start])
            elbo_doc[d] = warm
            doc_iters[d] = <int32_t> it


def word_stats(const int64_t[::1] colptr, const int32_t[::1] rows, const int64_t[::1] csr_pos,
               const int32_t[::1] counts, const double[::1] norm,
               const double[:, ::1] expelog_theta, const double[:, ::1] topic_wk,
               Py_ssize_t word_start, Py_ssize_t word_stop, double[:, ::1] sstats):
    """Expected topic-word counts of words ``word_start:word_stop`` after an E-step.

    The corpus is walked by word (CSC): ``colptr`` (V+1,) int64, ``rows`` (NNZ,) int32 the
    document of each entry, ``csr_pos`` (NNZ,) int64 its position in the CSR arrays
    ``counts`` and ``norm`` (from :func:`estep`). ``expelog_theta`` (D, K) and ``topic_wk``
    (V, K) as used by the E-step. Writes rows ``word_start:word_stop`` of ``sstats`` (V, K)::

        sstats[w] = topic_wk[w] * sum over entries p of word w of
                    (counts[csr_pos[p]] / norm[csr_pos[p]]) * expelog_theta[rows[p]]

    that is ``sum_d counts[d, w] * phi_dwk``, the documents added in increasing order.
    """
    cdef Py_ssize_t K = topic_wk.shape[1]
    cdef Py_ssize_t w, p, q, k
    cdef double r
    cdef double* out
    cdef const double* e
    with nogil:
        for w in range(word_start, word_stop):
            out = &sstats[w, 0]
            for k in range(K):
                out[k] = 0.0
            for p in range(colptr[w], colptr[w + 1]):
                q = csr_pos[p]
                r = counts[q] / norm[q]
                e = &expelog_theta[rows[p], 0]
                for k in range(K):
                    out[k] += r * e[k]
            for k in range(K):
                out[k] *= topic_wk[w, k]
