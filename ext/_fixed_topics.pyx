"""Kernels for documents under fixed topics: theta by Gibbs sampling (``infer``, document
completion, early stopping), left-to-right particles and the likelihood given theta.

As in ``_cgs.pyx``: the caller allocates and coerces every array, a kernel updates its outputs
in place inside one ``nogil`` block, random numbers come from the ``numpy.random.Generator``
passed in (``next_double`` of its bit generator, the stream ``Generator.random()`` draws from,
under the generator's lock), and nothing is validated here. The plain NumPy each kernel equals,
draw for draw, is in its docstring and in ``tests/oracle.py``.
"""

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t
from numpy.random cimport bitgen_t

from _shared cimport bitgen_of, search_cumulative


cdef inline Py_ssize_t _sample(const int32_t* nd, const double* alpha, const double* pw,
                               Py_ssize_t K, double* cum, bitgen_t* bitgen) noexcept nogil:
    """A topic drawn with probability proportional to (nd[k] + alpha[k]) * pw[k]."""
    cdef double total = 0.0
    cdef Py_ssize_t k
    for k in range(K):
        total = total + (nd[k] + alpha[k]) * pw[k]
        cum[k] = total
    return search_cumulative(cum, K, bitgen.next_double(bitgen.state) * total)


# --------------------------------------------------------------------------------------------
# Theta of documents under fixed topics (infer, document completion, early stopping, warm starts)

def sparse_fixed_topics_sweep(const int32_t[::1] words, const int64_t[::1] doc_ptr, int32_t[::1] z,
                              int32_t[:, ::1] ndk, const double[:, ::1] phi_wk,
                              const double[:, ::1] prior_cum, int32_t[::1] doc_topics, int32_t[::1] mark,
                              double[::1] work, object rng):
    """One exact Gibbs sweep with the topics fixed, in O(topics of the document + log K) per token.

    With phi fixed, ``(n_dk + a_k) phi_kw = n_dk phi_kw + a_k phi_kw``: the first term is sparse
    in the document's topics, and the second does not change, so its cumulative sums over k are
    computed once per word (``prior_cum[w] = cumsum_k a_k phi_kw``, (V, K) float64) and a topic
    is drawn from it by binary search. Arrays as in :func:`fixed_topics_sweep`, plus scratch
    ``doc_topics`` (K,) int32, ``mark`` (K,) int32 all 0 on entry and exit, ``work`` (K,)
    float64. Mutates ``z`` and ``ndk``; draws one double per token. The document's topic list
    starts as its topics in the order of its tokens and grows as new topics are drawn (topics
    whose count falls to 0 stay in it, with no mass). Equivalent NumPy::

        for d in range(D):
            topics = list(dict.fromkeys(z[doc_ptr[d]:doc_ptr[d + 1]]))
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w, t = words[i], z[i]
                ndk[d, t] -= 1
                mass, A = [], 0.0
                for k in topics:
                    A = A + ndk[d, k] * phi_wk[w, k]; mass.append(A)
                u = rng.random() * (A + prior_cum[w, -1])
                if u < A:
                    t = topics[first j with u < mass[j], else the last with mass]
                else:
                    t = min(np.searchsorted(prior_cum[w], u - A, side="right"), K - 1)
                ndk[d, t] += 1; z[i] = t
                if t not in topics: topics.append(t)
    """
    cdef Py_ssize_t K = ndk.shape[1]
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t d, i, j, k, t, n_doc, lo, hi, mid
    cdef double A, u
    cdef double* mass = &work[0]
    cdef const double* pw
    cdef const double* cum
    cdef int32_t* nd
    cdef int32_t* dt = &doc_topics[0]
    cdef int32_t* mk = &mark[0]
    cdef bitgen_t* bitgen = bitgen_of(rng)

    with rng.bit_generator.lock:
        with nogil:
            for d in range(D):
                nd = &ndk[d, 0]
                n_doc = 0
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    t = z[i]
                    if mk[t] == 0:
                        mk[t] = 1
                        dt[n_doc] = <int32_t> t
                        n_doc += 1
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    t = z[i]
                    pw = &phi_wk[words[i], 0]
                    cum = &prior_cum[words[i], 0]
                    nd[t] -= 1
                    A = 0.0
                    for j in range(n_doc):
                        A = A + nd[dt[j]] * pw[dt[j]]
                        mass[j] = A
                    u = bitgen.next_double(bitgen.state) * (A + cum[K - 1])
                    if u < A:
                        t = -1
                        for j in range(n_doc):
                            if u < mass[j]:
                                t = dt[j]
                                break
                        if t < 0:  # rounding: the last topic with mass
                            j = n_doc - 1
                            while nd[dt[j]] == 0:
                                j -= 1
                            t = dt[j]
                    else:
                        u = u - A
                        lo = 0
                        hi = K - 1
                        while lo < hi:
                            mid = (lo + hi) >> 1
                            if cum[mid] <= u:
                                lo = mid + 1
                            else:
                                hi = mid
                        t = lo
                    nd[t] += 1
                    z[i] = <int32_t> t
                    if mk[t] == 0:
                        mk[t] = 1
                        dt[n_doc] = <int32_t> t
                        n_doc += 1
                for j in range(n_doc):
                    mk[dt[j]] = 0


def left_to_right(const int32_t[::1] words, const int64_t[::1] doc_ptr,
                  const double[:, ::1] phi_wk, const double[::1] alpha, bint resample,
                  int32_t[:, ::1] z, int32_t[:, ::1] ndk, double[::1] p, double[::1] cum,
                  double[:, ::1] log_weight, double[::1] position_ll, double[:, ::1] ratio_sum,
                  object rng):
    """Left-to-right particle estimate of log p(w_d) for every document (Wallach et al. 2009).

    Shapes and dtypes (N tokens, D documents, V words, K topics, R particles, L the longest
    document): ``words`` (N,) int32, each document's tokens in the order they are scored;
    ``doc_ptr`` (D+1,) int64; ``phi_wk`` (V, K) float64 topics, word-major; ``alpha`` (K,)
    float64. Scratch: ``z`` (R, L) int32, ``ndk`` (R, K) int32, ``p`` (R,) and ``cum`` (K,)
    float64. Outputs, all (re)written for every document: ``log_weight`` (D, R) float64,
    ``sum_n log p_n^r`` per particle; ``position_ll`` (D,) float64, ``sum_n log mean_r p_n^r``;
    ``ratio_sum`` (D, R) float64, ``sum_n p_n^r / mean_r p_n^r``.

    For each position n, each particle r first (only if ``resample``) re-draws the topics of
    positions 0..n-1 in order from their conditionals given the rest (the quadratic step of
    the original algorithm), then computes ``p_n^r = sum_k (n_k^r + alpha_k) / (n + sum alpha)
    * phi_wk[w_n, k]`` and draws z_n from ``(n_k^r + alpha_k) * phi_wk[w_n, k]``. Without
    resampling each particle is a sequential importance sampler whose weight
    ``exp(log_weight[d, r])`` is an unbiased estimate of p(w_d). Draws, per document, R per
    position plus (with resampling) R * n re-draws at position n. Equivalent NumPy::

        A = alpha.sum()
        for d in range(D):
            ws = words[doc_ptr[d]:doc_ptr[d + 1]]
            ndk[:] = 0; log_weight[d] = 0; position_ll[d] = 0; ratio_sum[d] = 0
            for n, w in enumerate(ws):
                for r in range(R):
                    if resample:
                        for m in range(n):
                            ndk[r, z[r, m]] -= 1
                            z[r, m] = draw((ndk[r] + alpha) * phi_wk[ws[m]])
                            ndk[r, z[r, m]] += 1
                    p[r] = np.sum((ndk[r] + alpha) / (n + A) * phi_wk[w])   # summed in k order
                    log_weight[d, r] += log(p[r])
                    z[r, n] = draw((ndk[r] + alpha) * phi_wk[w]); ndk[r, z[r, n]] += 1
                mean = p.sum() / R
                position_ll[d] += log(mean); ratio_sum[d] += p / mean

    where ``draw(x)`` is ``min(searchsorted(cumsum(x), rng.random() * cumsum(x)[-1], "right"), K-1)``.
    """
    cdef Py_ssize_t K = alpha.shape[0]
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t R = p.shape[0]
    cdef Py_ssize_t d, n, m, r, k, t, start, w
    cdef double A = 0.0
    cdef double total, mean
    cdef int32_t* nd
    cdef int32_t* zr
    cdef const double* pw
    cdef bitgen_t* bitgen = bitgen_of(rng)
    for k in range(K):
        A = A + alpha[k]

    with rng.bit_generator.lock:
        with nogil:
            for d in range(D):
                start = doc_ptr[d]
                position_ll[d] = 0.0
                for r in range(R):
                    log_weight[d, r] = 0.0
                    ratio_sum[d, r] = 0.0
                    for k in range(K):
                        ndk[r, k] = 0
                for n in range(doc_ptr[d + 1] - start):
                    w = words[start + n]
                    pw = &phi_wk[w, 0]
                    for r in range(R):
                        nd = &ndk[r, 0]
                        zr = &z[r, 0]
                        if resample:
                            for m in range(n):
                                t = zr[m]
                                nd[t] -= 1
                                t = _sample(nd, &alpha[0], &phi_wk[words[start + m], 0], K, &cum[0], bitgen)
                                zr[m] = <int32_t> t
                                nd[t] += 1
                        total = 0.0
                        for k in range(K):
                            total = total + (nd[k] + alpha[k]) / (n + A) * pw[k]
                        p[r] = total
                        log_weight[d, r] += log(total)
                        t = _sample(nd, &alpha[0], pw, K, &cum[0], bitgen)
                        zr[n] = <int32_t> t
                        nd[t] += 1
                    total = 0.0
                    for r in range(R):
                        total = total + p[r]
                    mean = total / R
                    position_ll[d] += log(mean)
                    for r in range(R):
                        ratio_sum[d, r] += p[r] / mean


def loglik_given_theta(const int32_t[::1] indices, const int32_t[::1] counts,
                       const int64_t[::1] indptr, const double[:, :, ::1] theta,
                       const double[:, ::1] phi_wk, double[:, ::1] out):
    """log p(w_d | theta_ds, phi) for every document d and every sample s of its proportions.

    ``indices``, ``counts``, ``indptr`` are a (D, V) CSR count matrix (int32 word ids, int32
    counts, int64 row pointers); ``theta`` (D, S, K) float64; ``phi_wk`` (V, K) float64;
    ``out`` (D, S) float64 is written. Deterministic. Equivalent NumPy::

        for d in range(D):
            ws, cs = indices[indptr[d]:indptr[d + 1]], counts[indptr[d]:indptr[d + 1]]
            out[d] = np.log(theta[d] @ phi_wk[ws].T) @ cs        # summed in word then k order
    """
    cdef Py_ssize_t D = indptr.shape[0] - 1
    cdef Py_ssize_t S = theta.shape[1]
    cdef Py_ssize_t K = theta.shape[2]
    cdef Py_ssize_t d, s, j, k
    cdef double total, ll
    cdef const double* pw
    cdef const double* th
    with nogil:
        for d in range(D):
            for s in range(S):
                th = &theta[d, s, 0]
                ll = 0.0
                for j in range(indptr[d], indptr[d + 1]):
                    pw = &phi_wk[indices[j], 0]
                    total = 0.0
                    for k in range(K):
                        total = total + th[k] * pw[k]
                    ll = ll + counts[j] * log(total)
                out[d, s] = ll


def particle_filter(const int32_t[::1] words, const int64_t[::1] doc_ptr,
                    const double[:, ::1] phi_wk, const double[::1] alpha, Py_ssize_t n_filters,
                    int32_t[:, ::1] ndk, int32_t[:, ::1] ndk_next, double[::1] p, double[::1] cum,
                    double[:, ::1] log_z, object rng):
    """Left-to-right estimate of log p(w_d) by independent particle filters, linear in length.

    Shapes and dtypes (N tokens, D documents, V words, K topics, G = ``n_filters`` filters of
    R particles each, P = G R): ``words`` (N,) int32, each document's tokens in the order they
    are scored; ``doc_ptr`` (D+1,) int64; ``phi_wk`` (V, K) float64; ``alpha`` (K,) float64.
    Scratch: ``ndk`` and ``ndk_next`` (P, K) int32, ``p`` (P,) float64, ``cum`` (max(K, R),)
    float64. Output ``log_z`` (D, G) float64: each filter's log-estimate of p(w_d).

    A fully adapted particle filter over the tokens: at position n every particle r (its state
    is its topic counts n^r) predicts ``p_r = sum_k (n^r_k + alpha_k) / (n + sum alpha)
    phi_wk[w_n, k]``; each filter adds ``log mean_r p_r`` over its own particles, draws R
    ancestors among them with probabilities proportional to p_r (multinomial resampling), and
    every particle then draws the topic of w_n from ``(n_k + alpha_k) phi_wk[w_n, k]``. The
    product of the means is an unbiased estimate of p(w_d) for every filter. Draws per
    position: P for the ancestors, then P for the topics. Equivalent NumPy::

        A = alpha.sum()
        for d in range(D):
            ndk[:] = 0; log_z[d] = 0
            for n, w in enumerate(words[doc_ptr[d]:doc_ptr[d + 1]]):
                p = np.array([np.cumsum((ndk[r] + alpha) / (n + A) * phi_wk[w])[-1] for r in range(P)])
                for g in range(G):
                    ps = p[g * R:(g + 1) * R]
                    log_z[d, g] += log(np.cumsum(ps)[-1] / R)
                    for j in range(R):
                        ndk_next[g * R + j] = ndk[g * R + draw(ps)]
                ndk[:] = ndk_next
                for r in range(P):
                    t = draw((ndk[r] + alpha) * phi_wk[w]); ndk[r, t] += 1

    with ``draw(x) = min(searchsorted(cumsum(x), rng.random() * cumsum(x)[-1], "right"), len(x) - 1)``.
    """
    cdef Py_ssize_t K = alpha.shape[0]
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t P = p.shape[0]
    cdef Py_ssize_t G = n_filters
    cdef Py_ssize_t R = P // G
    cdef Py_ssize_t d, n, r, g, j, k, t, a, start, w
    cdef double A = 0.0
    cdef double total
    cdef const double* pw
    cdef bitgen_t* bitgen = bitgen_of(rng)
    for k in range(K):
        A = A + alpha[k]

    with rng.bit_generator.lock:
        with nogil:
            for d in range(D):
                start = doc_ptr[d]
                for g in range(G):
                    log_z[d, g] = 0.0
                for r in range(P):
                    for k in range(K):
                        ndk[r, k] = 0
                for n in range(doc_ptr[d + 1] - start):
                    w = words[start + n]
                    pw = &phi_wk[w, 0]
                    for r in range(P):
                        total = 0.0
                        for k in range(K):
                            total = total + (ndk[r, k] + alpha[k]) / (n + A) * pw[k]
                        p[r] = total
                    for g in range(G):
                        total = 0.0
                        for j in range(R):
                            total = total + p[g * R + j]
                            cum[j] = total
                        log_z[d, g] += log(total / R)
                        for j in range(R):
                            a = search_cumulative(&cum[0], R, bitgen.next_double(bitgen.state) * total)
                            for k in range(K):
                                ndk_next[g * R + j, k] = ndk[g * R + a, k]
                    for r in range(P):
                        for k in range(K):
                            ndk[r, k] = ndk_next[r, k]
                        t = _sample(&ndk[r, 0], &alpha[0], pw, K, &cum[0], bitgen)
                        ndk[r, t] += 1
