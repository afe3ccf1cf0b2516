"""Gibbs-sampling kernels for LDA.

Every array is allocated and coerced by the caller (``ldacli.methods.cgs.layouts``); a
kernel updates its arrays in place inside one ``nogil`` block and returns a count or nothing.
One call is one sweep over the tokens of one shard (a contiguous range of documents). Random
numbers come from the ``numpy.random.Generator`` passed in (its bit generator's
``next_double``, the stream ``Generator.random()`` draws from); the generator's lock is held for
the call. The kernels never validate: shapes, dtypes and ranges are the caller's job.

Shards and slices (the partition scheme, as tomotopy's default): documents are cut into P
shards and the vocabulary into P slices; a sweep is P rounds, and in round r shard s samples
only its tokens of slice (s + r) mod P. The blocks of a round touch disjoint documents and
disjoint words, so they share one set of word-topic counts; each starts from its own copy of the
topic totals as they were at the round's start, and the totals' changes are summed after the
round (integer additions, in any order). Each document's tokens are sorted by word
(``Corpus.tokens``), so its tokens of a slice are one run; :func:`slice_runs` finds where every
run starts once, and a kernel is given that table, ``runs`` (d, P+1) int32 (positions within
the shard, which holds fewer than 2^31 tokens): document j owns
tokens ``runs[j, 0]:runs[j, P]``, and its tokens of slice p are ``runs[j, p]:runs[j, p+1]``
(with one slice, ``runs`` is the document pointers as two columns).

Each sampling kernel's docstring gives the plain NumPy it is equivalent to; those NumPy versions
live in ``tests/oracle.py`` and the tests check every kernel against them bit for bit, and against
the exact posterior of a tiny corpus, with and without a non-uniform topic-word prior.

The topic-word prior is ``beta_kw = beta + extra_kw`` (seeded topics: ``ldacli.topic_word_prior``):
a kernel takes the symmetric ``beta``, each topic's sum ``beta_sum`` (K,) and the extra mass by
word: the sparse and alias kernels as cells (``extra_ptr`` (V+1,), ``extra_topics``, ``extra``;
all of ``extra_ptr`` zero without it), the dense one as a row of ``beta_kw`` per word that has
extra mass (``prior_row``, ``prior_rows``), which it reads as it reads the word's counts.
Sweeps are split into named inline steps (take the token out, the bucket masses, the draw, put it
back), as tomotopy's ``sampleDocument`` reads.
"""

from libc.math cimport lgamma
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport qsort
from numpy.random cimport bitgen_t

from _shared cimport alias_draw, alias_table, bitgen_of, prefetch, search_cumulative


# --------------------------------------------------------------------------------------------
# Dense O(K) sampler

cdef inline Py_ssize_t _first_at_least(const int32_t* words, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t w) noexcept nogil:
    """The first i in [lo, hi) with words[i] >= w (hi if none), for words sorted on [lo, hi)."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if words[mid] < w:
            lo = mid + 1
        else:
            hi = mid
    return lo


def slice_runs(const int32_t[::1] words, const int64_t[::1] doc_ptr, const int64_t[::1] cuts,
               int32_t[:, ::1] runs):
    """Fill ``runs`` (d, S+1) int32 with where each document's tokens of each word slice start:
    ``runs[j, p]`` is the first token of document j (tokens ``doc_ptr[j]:doc_ptr[j+1]``, words
    sorted) whose word is at least ``cuts[p]``, for the S+1 slice cuts (``cuts[0] = 0`` and
    ``cuts[S]`` = V give the document's start and end)."""
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t n_cuts = cuts.shape[0]
    cdef Py_ssize_t d, p, lo
    with nogil:
        for d in range(D):
            lo = doc_ptr[d]
            for p in range(n_cuts):
                lo = _first_at_least(&words[0], lo, doc_ptr[d + 1], cuts[p])
                runs[d, p] = <int32_t> lo


cdef inline void _dense_add(int32_t* nw, int32_t* nd, int32_t* nk, double* inv, const double* beta_sum,
                            Py_ssize_t k, int32_t delta) noexcept nogil:
    """Add ``delta`` (+1 or -1) tokens of the word and document to topic k, and its ``inv``."""
    nw[k] += delta
    nd[k] += delta
    nk[k] += delta
    inv[k] = 1.0 / (nk[k] + beta_sum[k])


# From DENSE_LANES_FROM topics, the dense conditional's masses are added up in DENSE_LANES
# running sums, topics j, j + L, j + 2L, ... in sum j, so that the sums do not wait on each
# other (one running sum over the K topics makes each addition wait on the one before), and a
# topic is drawn by its lane, then within it: a sweep takes 4% less at K=50, 16-22% at K=100
# (20NG, 20 M tokens) and 45% at K=1000 (20NG; benchmarks/ab_sweep.py --sampler dense). Below,
# one running sum is faster (at K=20 the lanes took 13-15% more).
cdef enum:
    DENSE_LANES = 8
    DENSE_LANES_FROM = 32


cdef inline double _dense_lanes(const double* p, double* lanes, Py_ssize_t K) noexcept nogil:
    """Add up the masses ``p`` (K,) into ``lanes`` (:data:`DENSE_LANES`,): lane j the masses of
    topics j, j + L, ... in that order; returns their total, the lanes added in order."""
    cdef Py_ssize_t j, k, whole = K - K % DENSE_LANES
    cdef double total = 0.0
    for j in range(DENSE_LANES):
        lanes[j] = 0.0
    k = 0
    while k < whole:
        for j in range(DENSE_LANES):
            lanes[j] = lanes[j] + p[k + j]
        k += DENSE_LANES
    for k in range(whole, K):
        lanes[k - whole] = lanes[k - whole] + p[k]
    for j in range(DENSE_LANES):
        total = total + lanes[j]
    return total


cdef inline Py_ssize_t _dense_draw(const double* p, const double* lanes, Py_ssize_t K, double u) noexcept nogil:
    """The topic that ``u`` (in [0, total)) falls on: its lane by the lanes' running sum (the
    last lane with topics when rounding leaves ``u`` above the others), then its topic by the
    running sum of the lane's masses on from there (its last topic when rounding leaves ``u``
    above them: every mass is > 0)."""
    cdef Py_ssize_t j = 0, k, last = (K if K < DENSE_LANES else DENSE_LANES) - 1
    cdef double acc = 0.0
    while j < last and acc + lanes[j] <= u:
        acc = acc + lanes[j]
        j += 1
    k = j
    while k + DENSE_LANES < K and acc + p[k] <= u:
        acc = acc + p[k]
        k += DENSE_LANES
    return k


cdef Py_ssize_t _lanes_from = DENSE_LANES_FROM


def dense_lanes_from(Py_ssize_t n=0):
    """The number of topics from which the dense sampler adds its masses up by lanes
    (``DENSE_LANES_FROM``, 32); ``n`` >= 1 sets it for the process (the tests draw both ways on
    a few topics). Returns the number in force."""
    global _lanes_from
    if n >= 1:
        _lanes_from = n
    return _lanes_from


cdef inline Py_ssize_t _dense_pick(const double* p, const double* lanes, Py_ssize_t K, double u) noexcept nogil:
    """The topic ``u`` falls on, as :func:`_dense_masses` added the masses up."""
    if K >= _lanes_from:
        return _dense_draw(p, lanes, K, u)
    return search_cumulative(p, K, u)


cdef inline double _dense_masses(const int32_t* nd, const double* alpha, const int32_t* nw, double beta,
                                 const double* inv, double* p, double* lanes, Py_ssize_t K) noexcept nogil:
    """The conditional's masses ``(n_dk + a_k)(n_wk + b) / (n_k + V b)``, for a word without
    extra prior mass, added up for :func:`_dense_pick`: from :func:`dense_lanes_from` topics the
    masses in ``p`` and their lanes (:func:`_dense_lanes`), else their running sum in ``p``
    (``p[k]`` the sum of topics 0 to k); returns the total."""
    cdef Py_ssize_t k
    cdef double total = 0.0
    if K < _lanes_from:
        for k in range(K):
            total = total + (nd[k] + alpha[k]) * (nw[k] + beta) * inv[k]
            p[k] = total
        return total
    for k in range(K):
        p[k] = (nd[k] + alpha[k]) * (nw[k] + beta) * inv[k]
    return _dense_lanes(p, lanes, K)


cdef inline double _dense_masses_row(const int32_t* nd, const double* alpha, const int32_t* nw,
                                     const double* beta_row, const double* inv, double* p, double* lanes,
                                     Py_ssize_t K) noexcept nogil:
    """:func:`_dense_masses` for a word with its own prior per topic, ``beta_row[k]``."""
    cdef Py_ssize_t k
    cdef double total = 0.0
    if K < _lanes_from:
        for k in range(K):
            total = total + (nd[k] + alpha[k]) * (nw[k] + beta_row[k]) * inv[k]
            p[k] = total
        return total
    for k in range(K):
        p[k] = (nd[k] + alpha[k]) * (nw[k] + beta_row[k]) * inv[k]
    return _dense_lanes(p, lanes, K)


cdef inline void _set_extra(double* beta_row, const int32_t* topics, const double* extra, Py_ssize_t n,
                            double beta, bint on) noexcept nogil:
    """Put a word's extra prior mass (its ``n`` cells ``topics``, ``extra``) into ``beta_row``
    (``on``), or take it out again (back to ``beta``)."""
    cdef Py_ssize_t j
    for j in range(n):
        beta_row[topics[j]] = beta + extra[j] if on else beta


# A word's rows asked for ahead of its token, at most this many topics of them
cdef enum:
    PREFETCH_TOPICS = 128


cdef inline void _ask_for_row(const void* row, Py_ssize_t n_bytes) noexcept nogil:
    """Ask for the first ``n_bytes`` of the next token's word row, a cache line (64 bytes) at a
    time: the rows are scattered over the V x K counts, and over the prior's rows. Paired timings
    (``ab_sweep.py --sampler dense``), its counts' first 128 topics: 6.4-6.7% less a sweep at K=8
    and 100 on 20 M tokens and at K=8 on 20NG; none at K=1000."""
    cdef const char* first = <const char*> row
    cdef Py_ssize_t b
    for b in range(0, n_bytes, 64):
        prefetch(first + b)


def dense_sweep(const int32_t[::1] words, const int32_t[:, ::1] runs, int32_t[::1] z,
                int32_t[:, ::1] nwk, int32_t[::1] nk, const double[::1] alpha, double beta,
                const double[::1] beta_sum, const int32_t[::1] prior_row, const double[:, ::1] prior_rows,
                int32_t[::1] ndk, double[::1] work, object rng, Py_ssize_t part=0):
    """One collapsed Gibbs sweep (Griffiths & Steyvers 2004) over one shard's tokens of word
    slice ``part`` (see above), in order.

    Shapes and dtypes (n tokens and d documents in the shard, P slices, V words, K topics, R
    words with extra prior mass): ``words`` (n,) int32; ``runs`` (d, P+1) int32 from
    :func:`slice_runs`; ``z`` (n,) int32 topics; ``nwk`` (V, K) int32 word-topic counts
    (word-major); ``nk`` (K,) int32; ``alpha`` (K,) float64. The topic-word prior is
    ``beta_kw = beta + extra_kw``: ``beta`` the symmetric part; a word with extra mass has a row
    of its own, ``prior_rows[prior_row[w]]`` (``prior_rows`` (R, K) float64, each row ``beta +
    extra_w``; ``prior_row`` (V,) int32, -1 for a word without: read as one row per token, the
    cost of a token does not grow with its word's cells); ``beta_sum`` (K,) float64 each topic's
    ``sum_w beta_kw``. ``ndk`` (K,) int32 scratch, zero on entry and on exit; ``work`` (2K,)
    float64 scratch. Mutates ``z``, ``nwk``, ``nk``; draws one double per token sampled.
    Equivalent NumPy (``B`` the (V, K) prior, ``beta + extra``)::

        inv = 1.0 / (nk + beta_sum)
        for j in range(d):
            ndk = np.bincount(z[runs[j, 0]:runs[j, -1]], minlength=K)
            for i in range(runs[j, part], runs[j, part + 1]):
                w, t = words[i], z[i]
                nwk[w, t] -= 1; ndk[t] -= 1; nk[t] -= 1
                inv[t] = 1.0 / (nk[t] + beta_sum[t])
                p = (ndk + alpha) * (nwk[w] + B[w]) * inv
                t = dense_draw(p, rng.random())  # tests/oracle.py: by lanes from 32 topics
                z[i] = t; nwk[w, t] += 1; ndk[t] += 1; nk[t] += 1
                inv[t] = 1.0 / (nk[t] + beta_sum[t])
    """
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t D = runs.shape[0]
    cdef Py_ssize_t last = runs.shape[1] - 1
    cdef Py_ssize_t d, i, k, w, t, old, lo, hi, r
    cdef Py_ssize_t ahead = K if K < PREFETCH_TOPICS else PREFETCH_TOPICS
    cdef double total, u
    cdef double lanes[DENSE_LANES]
    cdef double* cum = &work[0]
    cdef double* inv = &work[K]
    cdef int32_t* nw
    cdef int32_t* nd = &ndk[0]
    cdef int32_t* n_k = &nk[0]
    cdef const double* a = &alpha[0]
    cdef const double* bs = &beta_sum[0]
    cdef const int32_t* row_of = &prior_row[0]
    cdef bint seeded = prior_rows.shape[0] > 0
    cdef bitgen_t* bitgen = bitgen_of(rng)

    with rng.bit_generator.lock:
        with nogil:
            for k in range(K):
                inv[k] = 1.0 / (n_k[k] + bs[k])
            for d in range(D):
                lo = runs[d, part]
                hi = runs[d, part + 1]
                if lo == hi:
                    continue
                for i in range(runs[d, 0], runs[d, last]):
                    nd[z[i]] += 1
                for i in range(lo, hi):
                    w = words[i]
                    old = z[i]
                    nw = &nwk[w, 0]
                    if i + 1 < hi:
                        _ask_for_row(&nwk[words[i + 1], 0], ahead * sizeof(int32_t))
                        if seeded and row_of[words[i + 1]] >= 0:
                            _ask_for_row(&prior_rows[row_of[words[i + 1]], 0], ahead * sizeof(double))
                    _dense_add(nw, nd, n_k, inv, bs, old, -1)
                    r = row_of[w] if seeded else -1
                    if r < 0:
                        total = _dense_masses(nd, a, nw, beta, inv, cum, lanes, K)
                    else:
                        total = _dense_masses_row(nd, a, nw, &prior_rows[r, 0], inv, cum, lanes, K)
                    u = bitgen.next_double(bitgen.state) * total
                    t = _dense_pick(cum, lanes, K, u)
                    z[i] = <int32_t> t
                    _dense_add(nw, nd, n_k, inv, bs, t, 1)
                for i in range(runs[d, 0], runs[d, last]):
                    nd[z[i]] = 0


# --------------------------------------------------------------------------------------------
# Sparse exact sampler (SparseLDA, Yao, Mimno & McCallum 2009)
#
# Word-topic counts are kept per word as a list of its non-zero (topic, count) pairs, each
# packed in one unsigned integer ``(count << bits) | (mask - topic)`` (``bits`` enough for
# K - 1, ``mask = 2**bits - 1``), as MALLET packs them: comparing two entries compares counts,
# then topics the other way round, so the list, kept in decreasing order, is sorted by count
# (largest first) and then by topic, and large counts are met first when sampling. Word w's list
# is ``wt[wt_ptr[w]:wt_ptr[w] + wt_len[w]]``; its capacity is min(K, its corpus frequency),
# fixed for the run. Entries are uint32 when every count fits in 32 - bits bits, else uint64.

ctypedef fused packed_t:
    uint32_t
    uint64_t

# A document's list of topics (the sparse sampler keeps one per document from one visit to the
# next) holds its topics in increasing order and their counts, each pair packed in one unsigned
# integer ``(count << bits) | topic`` (``bits`` as for the word lists): uint32 when every
# document's length fits in 32 - bits bits, else uint64 (a fused type of its own: a corpus of
# long documents may have small word counts, and the other way round).

ctypedef fused list_t:
    uint32_t
    uint64_t


cdef inline Py_ssize_t _word_dec_at(packed_t* wt, int32_t* length, Py_ssize_t j, packed_t unit) noexcept nogil:
    """Decrement the count of the entry at position j of one word's sorted list, keeping it
    sorted (and dropping the entry when its count reaches 0). Returns where the entry ended up
    (-1 if dropped): the entries after j up to there moved up by one."""
    cdef Py_ssize_t n = length[0]
    cdef packed_t e = wt[j] - unit
    if e < unit:  # count 0
        while j + 1 < n:
            wt[j] = wt[j + 1]
            j += 1
        length[0] = <int32_t> (n - 1)
        return -1
    while j + 1 < n and wt[j + 1] > e:  # move down past the entries that now rank higher
        wt[j] = wt[j + 1]
        j += 1
    wt[j] = e
    return j


cdef inline void _word_inc_at(packed_t* wt, Py_ssize_t j, packed_t unit) noexcept nogil:
    """Increment the count of the entry at position j of one word's sorted list, keeping it
    sorted."""
    cdef packed_t e = wt[j] + unit
    while j > 0 and wt[j - 1] < e:  # move up past the entries that now rank lower
        wt[j] = wt[j - 1]
        j -= 1
    wt[j] = e


cdef inline Py_ssize_t _entry_of(const packed_t* wt, Py_ssize_t n, packed_t code, packed_t mask) noexcept nogil:
    """The position of the topic whose code (``mask - topic``) is ``code`` among the first n
    entries of one word's list (n if absent)."""
    cdef Py_ssize_t j = 0
    while j < n and (wt[j] & mask) != code:
        j += 1
    return j


cdef inline void _word_inc(packed_t* wt, int32_t* length, packed_t code, packed_t unit, packed_t mask) noexcept nogil:
    """Increment the count of the topic whose code (``mask - topic``) is ``code`` in one word's
    sorted list, inserting it when absent."""
    cdef Py_ssize_t n = length[0]
    cdef Py_ssize_t j = _entry_of(wt, n, code, mask)
    if j == n:  # absent: a new entry of count 0, incremented below
        wt[j] = code
        length[0] = <int32_t> (n + 1)
    _word_inc_at(wt, j, unit)


cdef inline Py_ssize_t _rebuild_word(packed_t* wt, Py_ssize_t length, int32_t* counts, int32_t* mark,
                                     int bits, packed_t mask) noexcept nogil:
    """Rewrite one word's list from ``counts[topic]`` for the topics of its ``length`` slots
    (their counts are ignored): non-zero counts only, sorted. Clears ``counts`` and ``mark``
    at those topics; returns the new length."""
    cdef Py_ssize_t j, top, cnt = 0, tk
    cdef packed_t e
    for j in range(length):
        tk = <Py_ssize_t> (mask - (wt[j] & mask))
        e = ((<packed_t> counts[tk]) << bits) | (wt[j] & mask)
        counts[tk] = 0
        mark[tk] = 0
        if (e >> bits) > 0:
            top = cnt
            while top > 0 and wt[top - 1] < e:
                wt[top] = wt[top - 1]
                top -= 1
            wt[top] = e
            cnt += 1
    return cnt


cdef inline double _entry_mass(const double* coef, packed_t e, packed_t mask, int bits) noexcept nogil:
    """A word-list entry's term of the word bucket: ``coef[topic] * count``."""
    return coef[<Py_ssize_t> (mask - (e & mask))] * <Py_ssize_t> (e >> bits)


cdef enum:
    MIN_BLOCK_BITS = 4  # blocks of the smoothing bucket's draw: at least 16 topics,
    MAX_BLOCKS = 256    # at most this many blocks


cdef struct Buckets:
    # The sparse sampler's state besides the word lists: the per-topic terms of the three
    # buckets, the current document's counts and topic list, and the sums s and r. A sweep
    # keeps one on its stack; the steps below take it by pointer and are inlined into the loop.
    double s                # sum_k a_k b / (n_k + V b), the smoothing bucket
    double r                # sum_{k in doc} n_dk b / (n_k + V b), the document bucket
    double* inv             # (K,) 1 / (n_k + V b)
    double* coef            # (K,) (a_k + n_dk) / (n_k + V b), a word-list entry's factor
    double* sterm           # (K,) a_k b / (n_k + V b), the smoothing bucket's terms
    double* qterm           # (K,) the word bucket's terms, one per entry of the token's word
    int32_t* nk             # (K,) topic totals
    int32_t* nd             # (K,) the document's topic counts
    int32_t* dt             # (K,) the document's topics, n_doc of them, in increasing order
    int32_t* dp             # (K,) where each of the document's topics is in dt
    Py_ssize_t n_doc
    const double* alpha
    double beta
    const double* beta_sum  # (K,) each topic's sum_w beta_kw (V b without extra prior mass)


cdef struct Kept:
    # What taking a token out changed, so that a token drawn back into its topic restores it
    # exactly (the same bits as before it was taken out)
    double s, r, inv, sterm, coef


cdef inline void _set_topic_terms(Buckets* b, Py_ssize_t k) noexcept nogil:
    """Topic k's terms from its counts: ``inv``, ``sterm`` and ``coef``; s and r take the new
    terms (the old ones were taken out by the caller)."""
    b.inv[k] = 1.0 / (b.nk[k] + b.beta_sum[k])
    b.sterm[k] = b.alpha[k] * b.beta * b.inv[k]
    b.s += b.sterm[k]
    b.r += b.nd[k] * b.beta * b.inv[k]
    b.coef[k] = (b.alpha[k] + b.nd[k]) * b.inv[k]


cdef inline void _add_to_topic(Buckets* b, Py_ssize_t k, int32_t delta) noexcept nogil:
    """Add ``delta`` (+1 or -1) tokens of the document to topic k: its counts, its terms and
    the sums s and r."""
    b.s -= b.sterm[k]
    b.r -= b.nd[k] * b.beta * b.inv[k]
    b.nk[k] += delta
    b.nd[k] += delta
    _set_topic_terms(b, k)


cdef inline void _enter_document(Buckets* b, const list_t* entries, Py_ssize_t n, int bits) noexcept nogil:
    """Enter a document from its list (its n topics in increasing order with their counts, packed
    entries): ``nd``, the topic list ``dt``, each topic's ``coef`` and the document bucket ``r``,
    summed in the list's order. The list is kept from one visit of the document to the next (one
    per word slice), so a visit costs its topics, not its tokens."""
    cdef Py_ssize_t j, t
    cdef double r = 0.0
    cdef list_t mask = ((<list_t> 1) << bits) - 1
    for j in range(n):
        t = <Py_ssize_t> (entries[j] & mask)
        b.dt[j] = <int32_t> t
        b.dp[t] = <int32_t> j
        b.nd[t] = <int32_t> (entries[j] >> bits)
        r += b.nd[t] * b.beta * b.inv[t]
        b.coef[t] = (b.alpha[t] + b.nd[t]) * b.inv[t]
    b.n_doc = n
    b.r = r


cdef inline Py_ssize_t _leave_document(Buckets* b, list_t* entries, int bits) noexcept nogil:
    """Write the document's list back (its topics and counts, packed), clear its counts, and
    give its topics back their ``coef`` without the document; returns the list's length."""
    cdef Py_ssize_t j, t
    for j in range(b.n_doc):
        t = b.dt[j]
        entries[j] = ((<list_t> b.nd[t]) << bits) | <list_t> t
        b.nd[t] = 0
        b.coef[t] = b.alpha[t] * b.inv[t]
    return b.n_doc


cdef inline void _take_out(Buckets* b, Py_ssize_t old, Kept* kept) noexcept nogil:
    """Take the token out of its topic ``old``'s total and document count (the word list is
    only changed if the token moves: most do not once the chain has mixed)."""
    kept.s = b.s
    kept.r = b.r
    kept.inv = b.inv[old]
    kept.sterm = b.sterm[old]
    kept.coef = b.coef[old]
    _add_to_topic(b, old, -1)


cdef inline void _put_back(Buckets* b, Py_ssize_t old, const Kept* kept) noexcept nogil:
    """The token drawn back into ``old``: the counts, and every term made from them, as they
    were before :func:`_take_out`."""
    b.nk[old] += 1
    b.nd[old] += 1
    b.s = kept.s
    b.r = kept.r
    b.inv[old] = kept.inv
    b.sterm[old] = kept.sterm
    b.coef[old] = kept.coef


cdef inline void _move_in_document(Buckets* b, Py_ssize_t old, Py_ssize_t t) noexcept nogil:
    """Keep the document's topic list right, and in increasing order, after a token moved from
    ``old`` to ``t`` (counts already changed): ``old`` leaves it at 0, ``t`` joins it at 1. Only
    the topics between where they leave and join move, by one place (the list is short, and
    ``dp`` says where each topic is)."""
    cdef Py_ssize_t j, k, n = b.n_doc
    cdef bint leaves = b.nd[old] == 0
    cdef bint joins = b.nd[t] == 1
    if leaves:  # old's place is the gap that moves up to where t goes (or to the end)
        j = b.dp[old]
        while j + 1 < n and (not joins or b.dt[j + 1] < t):
            k = b.dt[j + 1]
            b.dt[j] = <int32_t> k
            b.dp[k] = <int32_t> j
            j += 1
        if not joins:
            b.n_doc = n - 1
    elif joins:  # a gap at the end
        j = b.n_doc
        b.n_doc += 1
    else:
        return
    if joins:  # the gap moves down to where t goes
        while j > 0 and b.dt[j - 1] > t:
            k = b.dt[j - 1]
            b.dt[j] = <int32_t> k
            b.dp[k] = <int32_t> j
            j -= 1
        b.dt[j] = <int32_t> t
        b.dp[t] = <int32_t> j


cdef inline double _word_mass(const packed_t* wp, Py_ssize_t n, const double* coef, double* qterm,
                              packed_t mask, int bits) noexcept nogil:
    """Each of the n entries' terms of the word bucket (``coef[topic] * count``, full counts)
    into ``qterm``, and their sum: in two running sums, so that the loop waits on its loads,
    not on one chain of additions."""
    cdef double q = 0.0, q2 = 0.0
    cdef Py_ssize_t j = 0
    while j + 1 < n:
        qterm[j] = _entry_mass(coef, wp[j], mask, bits)
        q += qterm[j]
        qterm[j + 1] = _entry_mass(coef, wp[j + 1], mask, bits)
        q2 += qterm[j + 1]
        j += 2
    if j < n:
        qterm[j] = _entry_mass(coef, wp[j], mask, bits)
        q += qterm[j]
    return q + q2


cdef inline Py_ssize_t _draw_entry(const double* qterm, Py_ssize_t n, double u) noexcept nogil:
    """The entry of the word bucket that ``u`` (< the bucket's mass) falls in, searched two
    entries at a time (one dependent subtraction per pair); when rounding runs past the end,
    the last entry with mass."""
    cdef Py_ssize_t j = 0
    cdef double pair
    while j + 1 < n:
        pair = qterm[j] + qterm[j + 1]
        if u < pair:
            return j if u < qterm[j] else j + 1
        u -= pair
        j += 2
    if j < n and u < qterm[j]:
        return j
    j = n - 1
    while qterm[j] == 0.0:
        j -= 1
    return j


cdef inline Py_ssize_t _draw_document_topic(const Buckets* b, double u) noexcept nogil:
    """The topic of the document bucket that ``u`` (< r) falls in; when rounding runs past the
    end, the last topic with mass, or -1 if none has any."""
    cdef Py_ssize_t j, k
    for j in range(b.n_doc):
        k = b.dt[j]
        if b.nd[k] > 0:
            u -= b.nd[k] * b.beta * b.inv[k]
            if u < 0.0:
                return k
    j = b.n_doc - 1
    while j >= 0 and b.nd[b.dt[j]] == 0:
        j -= 1
    return b.dt[j] if j >= 0 else -1


cdef inline int _block_bits(Py_ssize_t K) noexcept nogil:
    """The smoothing bucket's blocks: of 2**bits topics, about sqrt(K) of them, at least
    ``MIN_BLOCK_BITS`` bits and at most ``MAX_BLOCKS`` blocks."""
    cdef int bits = MIN_BLOCK_BITS
    while ((K - 1) >> bits) + 1 > MAX_BLOCKS or (1 << (2 * bits)) < K:
        bits += 1
    return bits


cdef inline double _block_mass(const double* sterm, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """``sum(sterm[lo:hi])`` in four running sums (topics lo, lo + 4, ...; lo + 1, ...), so
    that the additions do not wait on each other."""
    cdef double a = 0.0, b = 0.0, c = 0.0, d = 0.0
    cdef Py_ssize_t k = lo
    while k + 3 < hi:
        a += sterm[k]
        b += sterm[k + 1]
        c += sterm[k + 2]
        d += sterm[k + 3]
        k += 4
    if k < hi:
        a += sterm[k]
    if k + 1 < hi:
        b += sterm[k + 1]
    if k + 2 < hi:
        c += sterm[k + 2]
    return (a + b) + (c + d)


cdef inline Py_ssize_t _draw_smoothing_topic(const double* sterm, Py_ssize_t K, int bits, double u) noexcept nogil:
    """The topic of the smoothing bucket that ``u`` (< s) falls in: the block of 2**bits topics
    it falls in, by the blocks' masses (:func:`_block_mass`; independent sums, which the
    processor overlaps), then the topic within it (the block's last on rounding, or the last
    topic). The terms are not summed in one chain of K dependent steps: at K=1000 about 1% of
    the draws land here (2% in the first sweeps), and that chain cost 5% of a sweep."""
    cdef Py_ssize_t lo = 0, hi, k
    cdef double mass
    while lo < K:
        hi = min(K, lo + ((<Py_ssize_t> 1) << bits))
        mass = _block_mass(sterm, lo, hi)
        if u < mass:
            for k in range(lo, hi):
                u -= sterm[k]
                if u < 0.0:
                    return k
            return hi - 1
        u -= mass
        lo = hi
    return K - 1


cdef inline double _extra_mass(const double* coef, const int32_t* topics, const double* extra,
                               Py_ssize_t n) noexcept nogil:
    """The word's extra-prior bucket: ``sum coef[topic] * extra`` over its n cells."""
    cdef double q = 0.0
    cdef Py_ssize_t j
    for j in range(n):
        q += coef[topics[j]] * extra[j]
    return q


cdef inline Py_ssize_t _draw_extra_topic(const double* coef, const int32_t* topics, const double* extra,
                                         Py_ssize_t n, double u) noexcept nogil:
    """The topic of the extra-prior bucket that ``u`` (< its mass) falls in (the last on
    rounding: every cell has mass)."""
    cdef Py_ssize_t j
    for j in range(n):
        u -= coef[topics[j]] * extra[j]
        if u < 0.0:
            return topics[j]
    return topics[n - 1]


cdef inline void _move_in_word(packed_t* wp, int32_t* length, Py_ssize_t old, Py_ssize_t t, Py_ssize_t j_old,
                               Py_ssize_t j_new, packed_t unit, packed_t mask) noexcept nogil:
    """Move one token of the word from topic ``old`` (its entry at ``j_old``, or -1: not yet
    found) to topic ``t`` in the word's sorted list. ``j_new`` is where the draw found ``t``
    in the list before the decrement, or -1 when ``t`` came from another bucket (then it is
    searched for, or added)."""
    cdef Py_ssize_t n = length[0], j
    if j_old < 0:
        j_old = _entry_of(wp, n, mask - <packed_t> old, mask)
    j = _word_dec_at(wp, length, j_old, unit)
    if j_new < 0:
        _word_inc(wp, length, <packed_t> (mask - <packed_t> t), unit, mask)
    else:  # the decrement moved the entries between j_old and j up by one
        if j_new > j_old and (j < 0 or j_new <= j):
            j_new -= 1
        _word_inc_at(wp, j_new, unit)


cdef inline Py_ssize_t _choose_topic(Buckets* b, const packed_t* wp, Py_ssize_t nw_len, packed_t mask,
                                     Py_ssize_t old, double q, const int32_t* e_topics, const double* e_mass,
                                     Py_ssize_t n_e, double qe, Py_ssize_t K, int block_bits, double u,
                                     Py_ssize_t* j_old, Py_ssize_t* j_new) noexcept nogil:
    """The topic that the draw ``u`` (uniform below the total mass) falls on, the buckets
    searched in order: the word's (``q``, the token's own count taken out: the entry of
    ``old`` loses its term here, and ``j_old`` and ``j_new`` are set to the entries of the old
    and the new topic, for :func:`_move_in_word`; else both are -1), the word's extra prior
    mass (``qe`` over its ``n_e`` cells ``e_topics``, ``e_mass``), the document's (r), then
    the smoothing bucket (s)."""
    cdef Py_ssize_t t
    j_old[0] = -1
    j_new[0] = -1
    if u < q:
        j_old[0] = _entry_of(wp, nw_len, mask - <packed_t> old, mask)
        b.qterm[j_old[0]] -= b.coef[old]  # the term without the token
        j_new[0] = _draw_entry(b.qterm, nw_len, u)
        return <Py_ssize_t> (mask - (wp[j_new[0]] & mask))
    u -= q
    if n_e > 0:
        if u < qe:
            return _draw_extra_topic(b.coef, e_topics, e_mass, n_e, u)
        u -= qe
    if u < b.r:
        t = _draw_document_topic(b, u)
        if t >= 0:
            return t
    return _draw_smoothing_topic(b.sterm, K, block_bits, u - b.r)


cdef inline void _ask_for_word_lists(const int32_t* words, const int64_t* wt_ptr, const int32_t* wt_len,
                                     const packed_t* wt, Py_ssize_t i, Py_ssize_t hi, Py_ssize_t next_lo,
                                     Py_ssize_t next_hi) noexcept nogil:
    """The word lists are scattered over memory: ask for the list of the token sampled after
    token i (and for where the one after that lives) while token i is sampled. Token i is in
    a document's run of the slice that ends at ``hi``; the next document's run is
    ``next_lo:next_hi`` (empty at the end), where the tokens to sample go on."""
    cdef Py_ssize_t one = i + 1, two = i + 2
    cdef Py_ssize_t one_end = hi, two_end = hi  # where each may run to
    if two >= hi:
        two, two_end = next_lo + two - hi, next_hi
        if one >= hi:
            one, one_end = next_lo, next_hi
    if two < two_end:
        prefetch(&wt_ptr[words[two]])
        prefetch(&wt_len[words[two]])
    if one < one_end:
        prefetch(&wt[wt_ptr[words[one]]])


def sparse_sweep(const int32_t[::1] words, const int32_t[:, ::1] runs, int32_t[::1] z,
                 const int64_t[::1] wt_ptr, packed_t[::1] wt, int32_t[::1] wt_len, int bits,
                 int32_t[::1] nk, const double[::1] alpha, double beta,
                 const double[::1] beta_sum, const int64_t[::1] extra_ptr, const int32_t[::1] extra_topics,
                 const double[::1] extra, int32_t[::1] ndk, int32_t[::1] doc_topics, const int64_t[::1] list_ptr,
                 int32_t[::1] list_len, list_t[::1] lists, double[::1] work, object rng, Py_ssize_t part=0):
    """One SparseLDA sweep over one shard's tokens of word slice ``part`` (as
    :func:`dense_sweep`): exact collapsed Gibbs in O(K_d + K_w) per token.

    The conditional ``(n_dk + a_k)(n_wk + b_wk) / (n_k + B_k)``, with the topic-word prior
    ``b_wk = b + e_wk`` (``e`` the extra mass of a few cells, ``B_k = sum_w b_wk``), is split into
    four buckets: ``s = sum_k a_k b / (n_k + B_k)`` (all topics, kept up to date as n_k
    changes), ``r = sum_{k in doc} n_dk b / (n_k + B_k)`` (the document's topics),
    ``q = sum_{k in word} (a_k + n_dk) n_wk / (n_k + B_k)`` (the word's topics) and, for a word
    with extra prior mass, ``sum_{k: e_wk > 0} (a_k + n_dk) e_wk / (n_k + B_k)``. One uniform
    draw picks the bucket and the topic within it, searching q, then the extra mass, then r,
    then s.

    Arrays as in :func:`dense_sweep` (the prior included), plus the packed word lists ``wt_ptr``
    (V+1,) int64, ``wt`` uint32 or uint64 and ``wt_len`` (V,) int32 with ``bits`` (see above);
    each document's list of topics (in increasing order) and their counts, kept from one sweep
    and slice to the next: ``list_ptr`` (d+1,) int64 (room for min(K, tokens) topics each),
    ``list_len`` (d,) int32 and the packed entries ``lists``, uint32 or uint64 with ``bits``
    (see above; ``shard.document_lists`` makes them from ``z``; they change as ``z`` does);
    ``doc_topics`` (2K,) int32 scratch;
    ``work`` (4K,) float64 scratch. Mutates ``z``, the word and document lists and ``nk``; draws
    one double per token sampled. The NumPy it equals, draw for draw, is ``tests/oracle.py``'s
    ``sparse_sweep``.
    """
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t D = runs.shape[0]
    cdef Py_ssize_t d, i, k, w, t, old, nw_len, j_old, j_new, e_lo, n_e, at, lo, hi, next_lo, next_hi
    cdef double q, qe = 0.0, total, u
    cdef bint seeded = extra.shape[0] > 0
    cdef const int32_t* e_topics = NULL
    cdef const double* e_mass = NULL
    cdef Buckets b
    cdef Kept kept
    cdef packed_t* wp
    cdef packed_t unit = (<packed_t> 1) << bits
    cdef packed_t mask = unit - 1
    cdef bitgen_t* bitgen = bitgen_of(rng)
    cdef int block_bits = _block_bits(K)

    b.inv, b.coef, b.qterm, b.sterm = &work[0], &work[K], &work[2 * K], &work[3 * K]
    b.nk, b.nd, b.dt, b.dp = &nk[0], &ndk[0], &doc_topics[0], &doc_topics[K]
    b.alpha, b.beta, b.beta_sum = &alpha[0], beta, &beta_sum[0]
    b.s = 0.0
    b.n_doc = 0
    with rng.bit_generator.lock:
        with nogil:
            for k in range(K):
                b.inv[k] = 1.0 / (nk[k] + b.beta_sum[k])
                b.coef[k] = alpha[k] * b.inv[k]
                b.sterm[k] = alpha[k] * beta * b.inv[k]
                b.s += b.sterm[k]
            for d in range(D):
                lo, hi = runs[d, part], runs[d, part + 1]
                if lo == hi:
                    continue
                # the next document's run of the slice (its tokens, its topics), asked for now:
                # a document's runs of the other slices lie between, so it is rarely in the cache
                next_lo = next_hi = hi
                if d + 1 < D:
                    next_lo, next_hi = runs[d + 1, part], runs[d + 1, part + 1]
                    if next_lo < next_hi:
                        prefetch(&words[next_lo])
                        prefetch(&z[next_lo])
                at = list_ptr[d]
                _enter_document(&b, &lists[at], list_len[d], bits)
                for i in range(lo, hi):
                    w = words[i]
                    old = z[i]
                    wp = &wt[wt_ptr[w]]
                    nw_len = wt_len[w]
                    _ask_for_word_lists(&words[0], &wt_ptr[0], &wt_len[0], &wt[0], i, hi, next_lo, next_hi)
                    _take_out(&b, old, &kept)
                    # the word bucket with the token's own count taken out (never below 0: the
                    # sum holds that entry's term), and the word's extra prior mass
                    q = _word_mass(wp, nw_len, b.coef, b.qterm, mask, bits) - b.coef[old]
                    total = b.s + b.r + q
                    n_e = 0
                    if seeded:
                        e_lo = extra_ptr[w]
                        n_e = extra_ptr[w + 1] - e_lo
                    if n_e > 0:
                        e_topics = &extra_topics[e_lo]
                        e_mass = &extra[e_lo]
                        qe = _extra_mass(b.coef, e_topics, e_mass, n_e)
                        total += qe
                    u = bitgen.next_double(bitgen.state) * total
                    t = _choose_topic(&b, wp, nw_len, mask, old, q, e_topics, e_mass, n_e, qe, K, block_bits, u,
                                      &j_old, &j_new)
                    if t == old:
                        _put_back(&b, old, &kept)
                        continue
                    _add_to_topic(&b, t, 1)
                    _move_in_document(&b, old, t)
                    _move_in_word(wp, &wt_len[w], old, t, j_old, j_new, unit, mask)
                    z[i] = <int32_t> t
                list_len[d] = <int32_t> _leave_document(&b, &lists[at], bits)


# --------------------------------------------------------------------------------------------
# Metropolis-Hastings sampler with alias tables (LightLDA, Yuan et al. 2015), O(1) per token

cdef struct Proposals:
    # The alias sampler's state for one word's tokens: the topic totals, the word's counts in
    # this shard's list, and the two proposals (document: its tokens and the prior alpha; word:
    # its counts in the other shards, its tokens in this shard, and the uniform part K b).
    int32_t* z
    int32_t* nk
    int32_t* cur            # (K,) the word's counts, the token's own taken out
    const double* alpha
    double alpha_sum
    double beta
    const double* beta_sum  # (K,) each topic's sum_w b_wk
    const double* beta_row  # (K,) the word's prior b_wk: b, and b + e_wk on its cells of extra mass
    const int32_t* extra_topics  # the word's cells of extra prior mass, n_extra of them
    const double* extra
    Py_ssize_t n_extra
    double extra_mass       # their sum
    Py_ssize_t K
    const double* alpha_prob    # the alias table of alpha
    const int32_t* alpha_alias
    const double* other_prob    # the alias table of the word's counts in the other shards
    const int32_t* other_alias
    const int32_t* other_topics  # ... and the topic of each of its n_other slots
    Py_ssize_t n_other
    double other_mass
    const int32_t* run      # this shard's tokens of the word (positions in z), run_len of them
    Py_ssize_t run_len
    bitgen_t* bitgen


cdef inline Py_ssize_t _spread_word(Proposals* p, const packed_t* wp, Py_ssize_t length, int32_t* mark,
                                    int32_t* other_topics, double* weight, packed_t mask, int bits) noexcept nogil:
    """Spread the word's list (``length`` entries at ``wp``) into ``p.cur`` (counts) and ``mark``
    (1: the topic has a slot), and list the word's counts in the other shards (what this shard's
    tokens ``p.run`` do not account for) as ``other_topics`` with ``weight``; sets ``n_other``
    and ``other_mass``."""
    cdef Py_ssize_t j, k, cnt, n_other = 0
    cdef double other_mass = 0.0
    for j in range(length):
        k = <Py_ssize_t> (mask - (wp[j] & mask))
        p.cur[k] = <int32_t> (wp[j] >> bits)
        mark[k] = 1
    for j in range(p.run_len):
        mark[p.z[p.run[j]]] -= 1  # mark - 1 - (tokens here): borrowed
    for j in range(length):
        k = <Py_ssize_t> (mask - (wp[j] & mask))
        cnt = p.cur[k] + (mark[k] - 1)  # counts from the other shards
        mark[k] = 1
        if cnt > 0:
            other_topics[n_other] = <int32_t> k
            weight[n_other] = cnt
            other_mass += cnt
            n_other += 1
    p.n_other = n_other
    p.other_mass = other_mass
    return n_other


cdef inline Py_ssize_t _document_step(Proposals* p, const int32_t* nd, const int32_t* doc_z, Py_ssize_t nd_len,
                                      Py_ssize_t m, Py_ssize_t st) noexcept nogil:
    """One Metropolis-Hastings step for token ``m`` at topic ``st`` with the document proposal
    ``q(k) ~ n_dk + a_k`` (a random token ``doc_z`` of the document's ``nd_len``, or a topic from
    the prior) and acceptance ``W(t) / W(s)``, ``W(k) = (n_wk + b_wk) / (n_k + B_k)``. Returns
    the token's topic after the step (also written to ``z[m]``)."""
    cdef Py_ssize_t t
    cdef double ratio
    cdef double u = p.bitgen.next_double(p.bitgen.state) * (nd_len + p.alpha_sum)
    if u < nd_len:
        t = doc_z[<Py_ssize_t> u]
    else:
        t = alias_draw(p.alpha_prob, p.alpha_alias, p.K, (u - nd_len) / p.alpha_sum)
    if t != st:
        ratio = (((p.cur[t] + p.beta_row[t]) * (p.nk[st] + p.beta_sum[st]))
                 / ((p.cur[st] + p.beta_row[st]) * (p.nk[t] + p.beta_sum[t])))
        if p.bitgen.next_double(p.bitgen.state) < ratio:
            st = t
            p.z[m] = <int32_t> st
    return st


cdef inline Py_ssize_t _word_step(Proposals* p, const int32_t* nd, Py_ssize_t m, Py_ssize_t st) noexcept nogil:
    """One Metropolis-Hastings step for token ``m`` at topic ``st`` with the word proposal
    ``q(k) ~ n_wk + b_wk`` (the other shards' counts, a random token of the word in this shard,
    a uniform topic, or a cell of the word's extra prior mass) and acceptance
    ``(n_dt + a_t)(n_s + B_s) / ((n_ds + a_s)(n_t + B_t))`` (``nd`` the document's counts).
    Returns the token's topic after the step."""
    cdef Py_ssize_t t, j
    cdef double ratio, x
    cdef double u = p.bitgen.next_double(p.bitgen.state) * (p.other_mass + p.run_len + p.K * p.beta + p.extra_mass)
    if u < p.other_mass:
        t = p.other_topics[alias_draw(p.other_prob, p.other_alias, p.n_other, u / p.other_mass)]
    elif u < p.other_mass + p.run_len:
        t = p.z[p.run[<Py_ssize_t> (u - p.other_mass)]]
    else:
        x = u - p.other_mass - p.run_len
        if p.n_extra > 0 and x >= p.K * p.beta:  # the extra prior mass
            x -= p.K * p.beta
            t = p.extra_topics[p.n_extra - 1]
            for j in range(p.n_extra):
                x -= p.extra[j]
                if x < 0.0:
                    t = p.extra_topics[j]
                    break
        else:
            t = <Py_ssize_t> (x / p.beta)
            if t >= p.K:
                t = p.K - 1
    if t != st:
        ratio = (((nd[t] + p.alpha[t]) * (p.nk[st] + p.beta_sum[st]))
                 / ((nd[st] + p.alpha[st]) * (p.nk[t] + p.beta_sum[t])))
        if p.bitgen.next_double(p.bitgen.state) < ratio:
            st = t
            p.z[m] = <int32_t> st
    return st


cdef inline Py_ssize_t _give_slot(packed_t* wp, Py_ssize_t length, Py_ssize_t capacity, const int32_t* cur,
                                  int32_t* mark, Py_ssize_t t, packed_t mask) noexcept nogil:
    """Give topic ``t``, new to the word, a slot in its list (at the end, or when the list is
    full the slot of a topic whose count has dropped to zero); returns the list's length."""
    cdef Py_ssize_t j = 0
    mark[t] = 1
    if length < capacity:
        wp[length] = mask - <packed_t> t
        return length + 1
    while cur[mask - (wp[j] & mask)] != 0:
        j += 1
    mark[mask - (wp[j] & mask)] = 0
    wp[j] = mask - <packed_t> t
    return length


def alias_sweep(const int32_t[::1] words, const int32_t[:, ::1] runs, int32_t[::1] z,
                const int32_t[::1] order, const int32_t[::1] doc_of,
                const int64_t[::1] wt_ptr, packed_t[::1] wt, int32_t[::1] wt_len, int bits, int32_t[::1] nk,
                const double[::1] alpha, double beta, const double[::1] beta_sum, const int64_t[::1] extra_ptr,
                const int32_t[::1] extra_topics, const double[::1] extra, int32_t[:, ::1] ndk, int32_t[::1] cur,
                int32_t[::1] mark, int32_t[::1] iwork, double[::1] work, int mh_steps, object rng):
    """One Metropolis-Hastings sweep over one shard, word by word, O(1) per token.

    Tokens are visited in ``order`` (the shard's tokens grouped by word, or a range of it: the
    tokens of a slice of the words). For each token,
    ``mh_steps`` cycles of two Metropolis-Hastings steps target the collapsed conditional
    ``(n_dk + a_k)(n_wk + b_wk) / (n_k + B_k)`` (token's own counts removed; the prior
    ``b_wk = b + e_wk`` and ``B_k = sum_w b_wk`` as in :func:`dense_sweep`), as LightLDA does,
    with proposals that depend only on the current state, so the chain is exact:

    * a document proposal ``q(k) ~ n_dk + a_k`` (counts with the token at its current topic):
      a random token of the document, or with weight ``sum a`` a topic from the prior (alias
      table); acceptance ``W(t) / W(s)`` with ``W(k) = (n_wk + b_wk) / (n_k + B_k)``;
    * a word proposal ``q(k) ~ n_wk + b_wk`` (with the token at its current topic): the word's
      counts in the other shards (frozen during the sweep: an alias table per word and shard),
      or a random token of the word in this shard, or with weight ``K b`` a uniform topic, or
      with weight ``sum_k e_wk`` a cell of the word's extra prior mass; acceptance
      ``(n_dt + a_t)(n_s + B_s) / ((n_ds + a_s)(n_t + B_t))``.

    Arrays (the packed word lists ``wt``, ``bits`` included, and the prior) as in
    :func:`sparse_sweep` plus ``order`` and ``doc_of`` (n,) int32 (each token's document within
    the shard); ``ndk`` (d, K) int32 scratch for the document-topic counts of the shard's
    documents, zero on entry and exit; ``cur``, ``mark`` (K,) int32 zero on entry and exit;
    ``iwork`` (5K,) int32 and ``work`` (4K,) float64 scratch. The NumPy it equals, draw for
    draw, is ``tests/oracle.py``'s ``alias_sweep``.
    """
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t n = order.shape[0]
    cdef Py_ssize_t D = runs.shape[0]
    cdef Py_ssize_t last = runs.shape[1] - 1
    cdef Py_ssize_t d, i, k, m, w, st, length, base, run_start, e_lo
    cdef double* other_prob = &work[0]
    cdef double* alpha_prob = &work[K]
    cdef double* weight = &work[2 * K]
    cdef double* beta_row = &work[3 * K]
    cdef int32_t* other_alias = &iwork[0]
    cdef int32_t* alpha_alias = &iwork[K]
    cdef int32_t* small = &iwork[2 * K]
    cdef int32_t* large = &iwork[3 * K]
    cdef int32_t* other_topics = &iwork[4 * K]
    cdef int32_t* nd
    cdef packed_t* wp
    cdef packed_t unit = (<packed_t> 1) << bits
    cdef packed_t mask = unit - 1
    cdef Proposals p

    p.z, p.nk, p.cur, p.alpha, p.beta, p.beta_sum, p.K = &z[0], &nk[0], &cur[0], &alpha[0], beta, &beta_sum[0], K
    p.beta_row = beta_row
    p.extra_topics, p.extra, p.n_extra, p.extra_mass = NULL, NULL, 0, 0.0
    p.alpha_prob, p.alpha_alias = alpha_prob, alpha_alias
    p.other_prob, p.other_alias, p.other_topics = other_prob, other_alias, other_topics
    p.alpha_sum = 0.0
    p.bitgen = bitgen_of(rng)
    with rng.bit_generator.lock:
        with nogil:
            for k in range(K):
                weight[k] = alpha[k]
                p.alpha_sum += alpha[k]
                beta_row[k] = beta
            alias_table(weight, K, p.alpha_sum, alpha_prob, alpha_alias, small, large)
            # the shard's document-topic counts, from all its tokens (cleared at the end, so that
            # the cost follows the tokens, not documents x topics, when a shard is sampled slice
            # by slice)
            for d in range(D):
                for i in range(runs[d, 0], runs[d, last]):
                    ndk[d, z[i]] += 1

            i = 0
            while i < n:
                w = words[order[i]]
                base = wt_ptr[w]
                wp = &wt[base]
                length = wt_len[w]
                run_start = i
                p.run = &order[run_start]
                p.run_len = 0
                while i + p.run_len < n and words[order[i + p.run_len]] == w:
                    p.run_len += 1
                if _spread_word(&p, wp, length, &mark[0], other_topics, weight, mask, bits) > 0:
                    alias_table(weight, p.n_other, p.other_mass, other_prob, other_alias, small, large)
                # the word's extra prior mass
                e_lo = extra_ptr[w]
                p.n_extra = extra_ptr[w + 1] - e_lo
                p.extra_mass = 0.0
                if p.n_extra > 0:
                    p.extra_topics, p.extra = &extra_topics[e_lo], &extra[e_lo]
                    _set_extra(beta_row, p.extra_topics, p.extra, p.n_extra, beta, True)
                    for k in range(p.n_extra):
                        p.extra_mass += p.extra[k]
                # this word's tokens
                while i < run_start + p.run_len:
                    m = order[i]
                    d = doc_of[m]
                    nd = &ndk[d, 0]
                    st = z[m]
                    cur[st] -= 1
                    nd[st] -= 1
                    nk[st] -= 1
                    for _ in range(mh_steps):
                        st = _document_step(&p, nd, &z[runs[d, 0]], runs[d, last] - runs[d, 0], m, st)
                        st = _word_step(&p, nd, m, st)
                    cur[st] += 1
                    nd[st] += 1
                    nk[st] += 1
                    if mark[st] == 0:  # a topic new to this word
                        length = _give_slot(wp, length, wt_ptr[w + 1] - base, &cur[0], &mark[0], st, mask)
                    i += 1
                # write the word's list back, sorted; clear the scratch
                wt_len[w] = <int32_t> _rebuild_word(wp, length, &cur[0], &mark[0], bits, mask)
                if p.n_extra > 0:
                    _set_extra(beta_row, p.extra_topics, p.extra, p.n_extra, beta, False)
            for d in range(D):
                for i in range(runs[d, 0], runs[d, last]):
                    ndk[d, z[i]] = 0


# --------------------------------------------------------------------------------------------
# Cells of the counts, sorted, and their running sums (the snapshots phi and theta average)
#
# A set of cells is ``codes`` (int64, increasing, each once: ``row * K + topic``, a word's or a
# document's) and their counts or sums. These kernels list a state's cells in that order straight
# from the samplers' lists and add them to running sums in one merge, O(cells), with no sort of
# them all.

cdef enum:
    SHORT_LIST = 16  # lists this long or shorter are sorted by insertion, longer ones by qsort


cdef int _compare_keys(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*> a)[0]
    cdef uint64_t y = (<const uint64_t*> b)[0]
    return (x > y) - (x < y)


cdef inline void _sort_keys(uint64_t* keys, Py_ssize_t n) noexcept nogil:
    """Sort ``n`` keys in increasing order."""
    cdef Py_ssize_t j, at
    cdef uint64_t key
    if n > SHORT_LIST:
        qsort(keys, n, sizeof(uint64_t), _compare_keys)
        return
    for j in range(1, n):
        key = keys[j]
        at = j
        while at > 0 and keys[at - 1] > key:
            keys[at] = keys[at - 1]
            at -= 1
        keys[at] = key


def word_list_cells(const int64_t[::1] wt_ptr, const packed_t[::1] wt, const int32_t[::1] wt_len, int bits,
                    Py_ssize_t n_topics, int64_t[::1] codes, int32_t[::1] counts, uint64_t[::1] scratch):
    """The non-zero word-topic counts of the packed word lists (``wt_ptr`` (V+1,) int64, ``wt``,
    ``wt_len`` (V,) int32 and ``bits`` as :func:`sparse_sweep` takes them) as cells in word-major
    order: ``codes[j] = w * K + t``, increasing, and ``counts[j]`` int32; returns how many (the
    lists' entries, which ``codes`` and ``counts`` must have room for). ``scratch`` (K,) uint64.

    NumPy, from the dense (V, K) counts ``nwk``: ``w, t = np.nonzero(nwk); codes = w * K + t;
    counts = nwk[w, t]``.
    """
    cdef Py_ssize_t V = wt_len.shape[0]
    cdef Py_ssize_t w, j, length, base, n = 0
    cdef packed_t mask = ((<packed_t> 1) << bits) - 1
    cdef packed_t e
    cdef uint64_t* keys = &scratch[0]
    cdef uint64_t LOW_32 = (<uint64_t> 1 << 32) - 1
    with nogil:
        for w in range(V):
            length = wt_len[w]
            base = wt_ptr[w]
            for j in range(length):  # (topic, count) as one key, sorted by topic
                e = wt[base + j]
                keys[j] = ((<uint64_t> (mask - (e & mask))) << 32) | <uint64_t> (e >> bits)
            _sort_keys(keys, length)
            for j in range(length):
                codes[n] = w * n_topics + <int64_t> (keys[j] >> 32)
                counts[n] = <int32_t> (keys[j] & LOW_32)
                n += 1
    return n


def list_cells(const int64_t[::1] ptr, const int32_t[::1] length, const list_t[::1] lists, int bits,
               Py_ssize_t n_topics, int64_t first, int64_t[::1] codes, int32_t[::1] out):
    """The cells of the sparse sampler's document lists (row j's packed entries, topics
    increasing, at ``ptr[j]:ptr[j] + length[j]``, as ``shard.document_lists`` makes them) in
    row-major order: ``codes = (first + j) * K + topic`` and their counts ``out``; returns how
    many.

    NumPy: ``j = np.repeat(np.arange(d), length); at = ptr[j] + np.arange(j.size) -
    np.repeat(np.cumsum(length) - length, length); codes = (first + j) * K + (lists[at] &
    (2**bits - 1)); out = lists[at] >> bits``.
    """
    cdef Py_ssize_t d = length.shape[0]
    cdef Py_ssize_t j, i, n = 0
    cdef list_t mask = ((<list_t> 1) << bits) - 1
    with nogil:
        for j in range(d):
            for i in range(ptr[j], ptr[j] + length[j]):
                codes[n] = (first + j) * n_topics + <int64_t> (lists[i] & mask)
                out[n] = <int32_t> (lists[i] >> bits)
                n += 1
    return n


# --------------------------------------------------------------------------------------------
# Likelihood helper

def doc_topic_lgamma(const int64_t[::1] doc_ptr, const int32_t[::1] z, const double[::1] alpha,
                     int32_t[::1] ndk):
    """``sum_d sum_k [lgamma(n_dk + alpha_k) - lgamma(alpha_k)]`` over non-zero n_dk, from z.

    ``ndk`` (K,) int32 scratch, zero on entry and exit. O(N), no D x K array.
    """
    cdef Py_ssize_t D = doc_ptr.shape[0] - 1
    cdef Py_ssize_t d, i, t
    cdef double total = 0.0
    with nogil:
        for d in range(D):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                ndk[z[i]] += 1
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                t = z[i]
                if ndk[t] > 0:
                    total += lgamma(ndk[t] + alpha[t]) - lgamma(alpha[t])
                    ndk[t] = 0
    return total
