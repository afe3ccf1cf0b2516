"""Kernels for documents under fixed topics: theta by Gibbs sampling (``infer``, document
completion, early stopping, warm starts), left-to-right particles and the likelihood given theta.

As in ``_cgs.pyx``: the caller allocates and coerces every array, a kernel updates its outputs
in place inside one ``nogil`` block, random numbers come from the ``numpy.random.Generator``
passed in (``next_double`` of its bit generator, the stream ``Generator.random()`` draws from,
under the generator's lock), and nothing is validated here. The plain NumPy each kernel equals,
draw for draw, is in its docstring and in ``tests/oracle.py``.

:func:`theta_of_documents` gives every document its own stream: numpy's ``SFC64`` generator
started, at each document, from the document's key and the run's, as numpy seeds an SFC64 from
three words (:func:`document_draws`), so a document's draws do not depend on the documents before
it. The generator is run here, inline (:c:type:`Stream`, numpy's algorithm and its ``next_double``):
numpy's SFC64 has no C interface for setting its state, and a call through the bit generator's
function pointers per draw cost more than the draw. ``ldacli.fixed_topics.check_document_streams``
compares these draws with numpy's own SFC64 once per process. (SFC64 rather than the
counter-based Philox: numpy's Philox takes 17 ns a double here, SFC64 2.5.)
"""

from libc.math cimport log
from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t

from _shared cimport alias_table, bitgen_of, prefetch, search_cumulative


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
# A stream per document

cdef struct Stream:
    # A document's SFC64 generator: numpy's four state words (numpy/random/src/sfc64/sfc64.h,
    # ``s[0..3]``: a, b, c and the counter).
    uint64_t a, b, c, counter


# Outputs numpy's SFC64 discards after setting its state from a seed (sfc64_set_seed).
cdef enum:
    SFC64_WARM_UP = 12


cdef inline uint64_t _next64(Stream* s) noexcept nogil:
    """The next output of ``s``, as numpy's ``sfc64_next``."""
    cdef uint64_t out = s.a + s.b + s.counter
    s.counter += 1
    s.a = s.b ^ (s.b >> 11)
    s.b = s.c + (s.c << 3)
    s.c = ((s.c << 24) | (s.c >> 40)) + out
    return out


cdef inline double _next_double(Stream* s) noexcept nogil:
    """The next double in [0, 1) of ``s``, as numpy's ``next_double`` of an SFC64 (the top 53 bits)."""
    return <double> (_next64(s) >> 11) * (1.0 / 9007199254740992.0)


cdef inline void _start_document(Stream* s, const uint64_t* doc_key, uint64_t run_key) noexcept nogil:
    """``s`` set to the start of a document's stream, as numpy seeds an SFC64 from three words:
    state ``(doc_key[0], doc_key[1], run_key, 1)``, then :data:`SFC64_WARM_UP` outputs discarded."""
    cdef Py_ssize_t i
    s.a = doc_key[0]
    s.b = doc_key[1]
    s.c = run_key
    s.counter = 1
    for i in range(SFC64_WARM_UP):
        _next64(s)


def document_draws(const uint64_t[::1] doc_key, uint64_t run_key, double[::1] out):
    """``out`` (n,) float64 filled with the first n doubles of a document's stream (what
    :func:`theta_of_documents` draws from). Equivalent NumPy: an SFC64 whose state is set to
    ``(doc_key[0], doc_key[1], run_key, 1)``, 12 raw outputs discarded, then
    ``Generator(it).random(n)``."""
    cdef Stream stream
    cdef Py_ssize_t i
    with nogil:
        _start_document(&stream, &doc_key[0], run_key)
        for i in range(out.shape[0]):
            out[i] = _next_double(&stream)


# --------------------------------------------------------------------------------------------
# Theta of documents under fixed topics (infer, document completion, early stopping, warm starts)

cdef inline void _add(Py_ssize_t t, int32_t* count, int32_t* topics, int32_t* where,
                      Py_ssize_t* n) noexcept nogil:
    """One more token of topic t in the document; a topic new to it goes to the end of its list."""
    if count[t] == 0:
        where[t] = <int32_t> n[0]
        topics[n[0]] = <int32_t> t
        n[0] += 1
    count[t] += 1


cdef inline void _remove(Py_ssize_t t, int32_t* count, int32_t* topics, int32_t* where,
                         Py_ssize_t* n) noexcept nogil:
    """One token of topic t fewer; a topic left with none leaves the list, the last one taking its place."""
    cdef int32_t last
    count[t] -= 1
    if count[t] == 0:
        n[0] -= 1
        last = topics[n[0]]
        topics[where[t]] = last
        where[last] = where[t]


cdef packed struct AliasCell:
    # a cell of a word's alias table: the probability of keeping the cell's topic, rounded to
    # float32, and the topic taken otherwise; the two in one 8-byte cell, so that a draw waits
    # on one cache line, not one in each of two arrays
    float prob
    int32_t alias


cdef inline Py_ssize_t _cell_draw(const AliasCell* table, Py_ssize_t n, double u) noexcept nogil:
    """``_shared.alias_draw`` from a table of :c:type:`AliasCell`."""
    cdef double x = u * n
    cdef Py_ssize_t j = <Py_ssize_t> x
    cdef Py_ssize_t other, keep
    if j >= n:
        j = n - 1
    # a select by arithmetic, not a branch: a branch on the cell, often mispredicted, waits on
    # its cache miss, and the draws after it with it
    other = table[j].alias
    keep = x - j < <double> table[j].prob
    return other + keep * (j - other)


cdef inline void _prior_draws(const int32_t* words, Py_ssize_t n_tokens, const AliasCell* tables,
                              const double* total, Py_ssize_t K, int32_t* out, Stream* stream) noexcept nogil:
    """``out[i]``, for each of a document's ``n_tokens`` tokens in order, a topic drawn from its word's
    prior weights ``alpha_k phi_kw`` (the word's alias table, row w of ``tables`` (V, K), and
    ``total`` (V,)); topic 0 for a word of no prior mass. One double drawn a token. These draws do
    not depend on the document's state, so the tables' rows, which are far apart in memory, are
    read here one after another with no draw waiting on the one before, instead of one at a time
    at the end of each token's draw."""
    cdef Py_ssize_t i, w
    cdef double u
    for i in range(n_tokens):
        w = words[i]
        u = _next_double(stream)
        out[i] = <int32_t> (_cell_draw(&tables[w * K], K, u) if total[w] > 0.0 else 0)


cdef inline Py_ssize_t _draw(const int32_t* count, const int32_t* topics, Py_ssize_t n, const double* pw,
                             double total, Py_ssize_t prior_topic, double* mass, Stream* stream) noexcept nogil:
    """A topic drawn with probability proportional to ``(count[k] + alpha_k) phi_kw``: the document's
    bucket ``count[k] phi_kw`` over its topics (``pw`` the word's row of phi), else the prior's
    ``alpha_k phi_kw`` (of sum ``total``), whose draw ``prior_topic`` was made beforehand
    (:func:`_prior_draws`). One double drawn, to choose between the two and within the bucket.
    The bucket is summed in two chains of additions, the even entries and the odd ones, each
    prefix their sum: the chain of one, each addition waiting on the one before, was most of a
    long document's time."""
    cdef double A = 0.0, even = 0.0, odd = 0.0
    cdef double u
    cdef Py_ssize_t j
    for j in range(0, n - 1, 2):
        even = even + count[topics[j]] * pw[topics[j]]
        mass[j] = even + odd
        odd = odd + count[topics[j + 1]] * pw[topics[j + 1]]
        mass[j + 1] = even + odd
    if n % 2:
        even = even + count[topics[n - 1]] * pw[topics[n - 1]]
        mass[n - 1] = even + odd
    A = even + odd
    u = _next_double(stream) * (A + total)
    if u < A:
        for j in range(n):
            if u < mass[j]:
                return topics[j]
        return topics[n - 1]  # rounding
    return prior_topic


cdef inline Py_ssize_t _draw_by_word(const int32_t* count, const int32_t* topics, Py_ssize_t n, double smooth,
                                     const double* floor, const int32_t* list_topics, const double* excess,
                                     Py_ssize_t L, double total, Py_ssize_t prior_topic, double* mass,
                                     Stream* stream) noexcept nogil:
    """:func:`_draw` by the word's list instead of the document's: with ``phi_kw = floor_k +
    excess_kw``, the document's bucket is ``count[k] floor_k`` (of sum ``smooth``, kept as
    tokens come and go) plus ``count[k] excess_kw`` over the word's ``L`` topics whose excess is
    not 0 (``list_topics``, ``excess``), read in order from the word's list rather than
    scattered over its row of phi, in two chains as in :func:`_draw`. One double drawn."""
    cdef double A, even = smooth, odd = 0.0
    cdef double u, c
    cdef Py_ssize_t e, j
    for e in range(0, L - 1, 2):
        even = even + count[list_topics[e]] * excess[e]
        mass[e] = even + odd
        odd = odd + count[list_topics[e + 1]] * excess[e + 1]
        mass[e + 1] = even + odd
    if L % 2:
        even = even + count[list_topics[L - 1]] * excess[L - 1]
        mass[L - 1] = even + odd
    A = even + odd
    u = _next_double(stream) * (A + total)
    if u >= A:
        return prior_topic
    if u < smooth:
        c = 0.0
        for j in range(n):
            c = c + count[topics[j]] * floor[topics[j]]
            if u < c:
                return topics[j]
        return topics[n - 1]  # rounding (smooth is a running sum)
    for e in range(L):
        if u < mass[e]:
            return list_topics[e]
    return topics[n - 1]  # not reached: u < A = mass[L - 1]


def prior_alias_tables(const double[:, ::1] phi_wk, const double[::1] alpha, AliasCell[:, ::1] tables,
                       double[::1] total, int32_t[::1] small, int32_t[::1] large, double[::1] weight,
                       double[::1] prob, int32_t[::1] alias):
    """Alias tables of every word's prior weights ``alpha_k phi_kw``.

    ``phi_wk`` (V, K) float64, ``alpha`` (K,) float64. Outputs: ``tables`` (V, K) of the dtype
    :data:`ldacli.fixed_topics.ALIAS_CELL` (``prob`` float32, ``alias`` int32), each word's
    table (``_shared.alias_table``, Vose's, made in float64, its probabilities then rounded to
    float32); ``total`` (V,) float64, ``sum_k alpha_k phi_kw`` summed in k order. Scratch
    ``small``, ``large``, ``alias`` (K,) int32, ``weight``, ``prob`` (K,) float64. A word whose
    total is 0 gets no table (its row is left as it was). Equivalent NumPy, per word w::

        weight = [alpha[k] * phi_wk[w, k] for k in range(K)]
        total[w] = sum(weight) (in k order)
        prob, alias = alias_table(weight, total[w])      # tests/oracle.py build_alias
        tables[w] = float32(prob), alias
    """
    cdef Py_ssize_t V = phi_wk.shape[0]
    cdef Py_ssize_t K = phi_wk.shape[1]
    cdef Py_ssize_t w, k
    cdef double t
    with nogil:
        for w in range(V):
            t = 0.0
            for k in range(K):
                weight[k] = alpha[k] * phi_wk[w, k]
                t = t + weight[k]
            total[w] = t
            if t > 0.0:
                alias_table(&weight[0], K, t, &prob[0], &alias[0], &small[0], &large[0])
                for k in range(K):
                    tables[w, k].prob = <float> prob[k]
                    tables[w, k].alias = alias[k]


def theta_of_documents(const int32_t[::1] words, const int64_t[::1] doc_ptr, const uint64_t[:, ::1] doc_keys,
                       uint64_t run_key, const double[:, ::1] phi_wk, const AliasCell[:, ::1] tables,
                       const double[::1] total, const double[::1] floor,
                       const int64_t[::1] list_ptr, const int32_t[::1] list_topics, const double[::1] excess,
                       Py_ssize_t by_word_from, const double[::1] alpha,
                       double alpha_sum, const int32_t[::1] batch_of_sweep, const double[::1] batch_sweeps,
                       int32_t[::1] z, double[:, :, ::1] theta, int32_t[::1] scratch, int32_t[::1] drawn,
                       double[::1] work):
    """Topic proportions of documents under fixed topics, by Gibbs sampling, each document on
    its own stream, in O(topics of the document) per token.

    Shapes and dtypes (N tokens, D documents, V words, K topics, I sweeps, B batches): ``words``
    (N,) int32; ``doc_ptr`` (D+1,) int64; ``doc_keys`` (D, 2) uint64 and ``run_key``, each
    document's stream (see the module docstring);
    ``phi_wk`` (V, K) float64 topics, word-major; ``tables``, ``total`` the alias
    tables of the prior's weights ``alpha_k phi_kw`` (:func:`prior_alias_tables`); ``floor``
    (K,) float64, each topic's least phi_kw, and the words' lists of the rest: word w's at
    ``list_ptr[w]:list_ptr[w + 1]`` (``list_ptr`` (V+1,) int64), its topics k in increasing
    order (``list_topics`` int32) whose ``excess`` (float64) ``phi_kw - floor_k`` is not 0, read
    for a token when its document has more than ``by_word_from`` topics (K or more: never, and
    the lists may be empty); ``alpha``
    (K,) float64 and ``alpha_sum`` its sum; ``batch_of_sweep`` (I,)
    int32, the batch each sweep's state is averaged into, -1 for a sweep discarded;
    ``batch_sweeps`` (B,) float64, the sweeps of each batch. Outputs: ``z`` (N,) int32, the
    topics after the last sweep; ``theta`` (B+1 if B > 1 else B, D, K) float64: ``theta[0]``
    averaged over every kept sweep, ``theta[1 + b]`` over batch b's. Scratch: ``scratch`` (3K,)
    int32, its first K all 0 on entry and exit; ``drawn`` (L,) int32, L the longest document;
    ``work`` (K (B + 1),) float64, its last B K all 0 on entry and exit.

    With phi fixed, ``(n_dk + a_k) phi_kw = n_dk phi_kw + a_k phi_kw``: the first term is sparse
    in the document's topics, kept as a list (a topic joins at the end when its count becomes 1,
    and leaves, the last taking its place, when it becomes 0); the second never changes, and is
    drawn from the word's alias table in O(1). The document's words' rows of phi are fetched into
    the cache first (a sweep draws new topics, whose entries the bucket then reads). A
    document's tokens are first placed in order, each drawn given those placed before it; then
    I sweeps each redraw every token given the others. Each of these I + 1 passes first draws
    every token's topic from its prior table (one double a token, the tokens in order), then,
    token by token, one double that keeps that draw or takes one from the document's bucket.
    The bucket is summed over the document's n topics, or (when n > ``by_word_from`` and the
    word's list is shorter than n) as ``sum_k count_k floor_k``, kept as tokens come and go, plus
    the word's list (:func:`_draw_by_word`): the same conditional, summed in another order.
    After a kept
    sweep of batch b, the document's counts are added to its sums S_b; then ``theta[0, d, k] =
    (sum_b S_bk / sum(batch_sweeps) + alpha_k) / (N_d + alpha_sum)`` and, with batches,
    ``theta[1 + b, d, k] = (S_bk / batch_sweeps[b] + alpha_k) / (N_d + alpha_sum)``. Draws two
    doubles per token placed and per token per sweep. Equivalent NumPy::

        for d in range(D):
            rng = the stream of (doc_keys[d], run_key), as in document_draws
            count, topics, S = zeros(K), [], zeros((B, K))
            def prior_draws():   # tests/oracle.py draw_alias
                return [alias_draw(tables[w].prob, tables[w].alias, rng.random()) if total[w] > 0 else 0
                        for w in words of d]   # one double each, in order, also for total 0
            smooth = 0.0   # add(t): smooth = smooth + floor[t]; remove(t): smooth = smooth - floor[t]
            def draw(w, prior_topic):
                L = list_ptr[w + 1] - list_ptr[w]
                if len(topics) > by_word_from and L < len(topics):
                    ks, xs = list_topics[list_ptr[w]:list_ptr[w + 1]], excess[list_ptr[w]:list_ptr[w + 1]]
                    mass, A = paired_sums([count[k] * x for k, x in zip(ks, xs)], smooth)   # tests/oracle.py
                    u = rng.random() * (A + total[w])
                    if u >= A: return prior_topic
                    if u < smooth:
                        c = accumulate(count[k] * floor[k] for k in topics)   # list order
                        return topics[first j with u < c[j], else the last]
                    return ks[first e with u < mass[e]]
                mass, A = paired_sums([count[k] * phi_wk[w, k] for k in topics])   # k in list order
                u = rng.random() * (A + total[w])
                if u < A: return topics[first j with u < mass[j], else the last]
                return prior_topic
            drawn = prior_draws()
            for i in tokens of d: t = draw(words[i], drawn[i - start]); add(t); z[i] = t
            for s in range(I):
                drawn = prior_draws()
                for i in tokens of d: remove(z[i]); t = draw(words[i], drawn[i - start]); add(t); z[i] = t
                if batch_of_sweep[s] >= 0: S[batch_of_sweep[s]] += count
            theta as above, the S_b summed over b in order

    where ``add`` and ``remove`` change ``count`` and the list as described.
    """
    cdef Py_ssize_t K = phi_wk.shape[1]
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t I = batch_of_sweep.shape[0]
    cdef Py_ssize_t B = batch_sweeps.shape[0]
    cdef Py_ssize_t d, i, s, t, k, b, n, w
    cdef double kept = 0.0
    cdef double denom, summed
    cdef int32_t* count = &scratch[0]
    cdef int32_t* topics = &scratch[K]
    cdef int32_t* where = &scratch[2 * K]
    cdef const AliasCell* tables_ = &tables[0, 0]
    cdef Py_ssize_t start, length, j, L
    cdef double smooth
    cdef const double* floor_ = &floor[0]
    cdef const int64_t* list_ptr_ = &list_ptr[0]
    cdef const int32_t* list_topics_ = &list_topics[0] if list_topics.shape[0] > 0 else NULL
    cdef const double* excess_ = &excess[0] if excess.shape[0] > 0 else NULL
    cdef double* mass = &work[0]
    cdef double* sums = &work[K]
    cdef double* into
    cdef Stream stream
    for b in range(B):
        kept = kept + batch_sweeps[b]

    with nogil:
        for d in range(D):
            _start_document(&stream, &doc_keys[d, 0], run_key)
            n = 0
            smooth = 0.0
            start = doc_ptr[d]
            length = doc_ptr[d + 1] - start
            for i in range(length):  # the document's rows of phi into the cache, a line at a time
                w = words[start + i]
                for j in range(0, K, 8):
                    prefetch(&phi_wk[w, j])
            for s in range(-1, I):  # pass -1 places the tokens, each given those before it; then the sweeps
                _prior_draws(&words[start], length, tables_, &total[0], K, &drawn[0], &stream)
                for i in range(length):
                    w = words[start + i]
                    if s >= 0:
                        _remove(z[start + i], count, topics, where, &n)
                        smooth = smooth - floor_[z[start + i]]
                    L = list_ptr_[w + 1] - list_ptr_[w] if n > by_word_from else K
                    if L < n:
                        t = _draw_by_word(count, topics, n, smooth, floor_, &list_topics_[list_ptr_[w]],
                                          &excess_[list_ptr_[w]], L, total[w], drawn[i], mass, &stream)
                    else:
                        t = _draw(count, topics, n, &phi_wk[w, 0], total[w], drawn[i], mass, &stream)
                    _add(t, count, topics, where, &n)
                    smooth = smooth + floor_[t]
                    z[start + i] = <int32_t> t
                if s >= 0 and batch_of_sweep[s] >= 0:
                    into = &sums[batch_of_sweep[s] * K]
                    for i in range(n):
                        into[topics[i]] += count[topics[i]]
            if B > 0:
                denom = (doc_ptr[d + 1] - doc_ptr[d]) + alpha_sum
                for k in range(K):
                    summed = 0.0
                    for b in range(B):
                        summed = summed + sums[b * K + k]
                        if B > 1:
                            theta[1 + b, d, k] = (sums[b * K + k] / batch_sweeps[b] + alpha[k]) / denom
                        sums[b * K + k] = 0.0
                    theta[0, d, k] = (summed / kept + alpha[k]) / denom
            for i in range(n):
                count[topics[i]] = 0

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
