"""Slow NumPy versions of the Cython kernels, draw for draw: the oracle the kernels must equal;
and the exact posterior of a tiny corpus, by enumeration, that every sampler must visit."""

import bisect
import itertools

import numpy as np
from scipy.special import gammaln

from ldacli._cgs import dense_lanes_from
from ldacli.corpora.counts import doc_topic_counts
from ldacli.methods.base import word_topic_counts


def extra_cells(prior, w):
    """Word w's cells of extra prior mass, [(topic, extra), ...] by topic (none without a prior)."""
    if prior is None:
        return []
    return [(int(t), float(e)) for ww, t, e in zip(prior.words, prior.topics, prior.extra) if ww == w]


def beta_row(prior, w, beta, K):
    """Word w's topic-word prior, (K,): ``beta``, and ``beta + extra`` on its cells."""
    row = np.full(K, float(beta))
    for t, e in extra_cells(prior, w):
        row[t] = beta + e
    return row


DENSE_LANES = 8


def dense_draw(p, r):
    """_cgs's _dense_masses and _dense_pick: below dense_lanes_from() topics (32), the masses
    ``p``'s running sum and ``u = r * total`` searched in it; from there, the masses added up in
    8 running sums (topics j, j + 8, ... in sum j), their total in order, ``u = r * total``; the
    lane by the lanes' running sum (the last lane with topics if none is reached), then the topic
    by the running sum on from there over the lane's topics (its last if none is reached)."""
    K, L = p.size, DENSE_LANES
    if K < dense_lanes_from():
        cum = np.cumsum(p)
        return min(int(np.searchsorted(cum, r * cum[-1], side="right")), K - 1)
    lanes = [0.0] * L
    for k in range(K):
        lanes[k % L] = lanes[k % L] + float(p[k])
    total = 0.0
    for j in range(L):
        total = total + lanes[j]
    u = r * total
    acc, j, last = 0.0, 0, min(K, L) - 1
    while j < last and acc + lanes[j] <= u:
        acc = acc + lanes[j]
        j += 1
    k = j
    while k + L < K and acc + float(p[k]) <= u:
        acc = acc + float(p[k])
        k += L
    return k


def dense_sweep(words, doc_ptr, z, nwk, nk, alpha, beta, beta_sum, rng, word_lo=0, word_hi=None, prior=None):
    """ldacli._cgs.dense_sweep for one shard's tokens of the words word_lo <= w < word_hi, under
    the topic-word prior ``beta`` plus ``prior``'s extra mass (``beta_sum`` (K,) its topics' sums)."""
    K = nk.size
    word_hi = nwk.shape[0] if word_hi is None else word_hi
    beta_sum = np.broadcast_to(beta_sum, (K,))
    inv = 1.0 / (nk + beta_sum)
    for d in range(doc_ptr.size - 1):
        ndk = np.bincount(z[doc_ptr[d]:doc_ptr[d + 1]], minlength=K)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
            if not word_lo <= w < word_hi:
                continue
            nwk[w, t] -= 1
            ndk[t] -= 1
            nk[t] -= 1
            inv[t] = 1.0 / (nk[t] + beta_sum[t])
            t = dense_draw((ndk + alpha) * (nwk[w] + beta_row(prior, w, beta, K)) * inv, rng.random())
            z[i] = t
            nwk[w, t] += 1
            ndk[t] += 1
            nk[t] += 1
            inv[t] = 1.0 / (nk[t] + beta_sum[t])


def word_list(counts):
    """A word's topics as its sorted list in the sparse kernels keeps them: those with a count,
    largest count first, then by topic (``ext/_cgs.pyx``'s packed entries, decreasing)."""
    topics = np.flatnonzero(counts)
    return [int(k) for k in topics[np.lexsort((topics, -counts[topics]))]]


def sparse_sweep(words, doc_ptr, z, nwk, nk, alpha, beta, beta_sum, rng, word_lo=0, word_hi=None, prior=None):
    """ldacli._cgs.sparse_sweep for one shard's tokens of the words word_lo <= w < word_hi, step
    for step: the buckets s, r, q and the extra prior mass kept as the kernel keeps them (running
    sums, each change made in the same order), so every double is the same. ``nwk`` (V, K)
    dense counts stand for the word lists (:func:`word_list` gives a word's list order)."""
    K = nk.size
    word_hi = nwk.shape[0] if word_hi is None else word_hi
    alpha = [float(a) for a in alpha]
    beta_sum = [float(x) for x in np.broadcast_to(beta_sum, (K,))]
    inv = [1.0 / (int(nk[k]) + beta_sum[k]) for k in range(K)]
    coef = [alpha[k] * inv[k] for k in range(K)]
    sterm = [alpha[k] * beta * inv[k] for k in range(K)]
    b = {"s": 0.0, "r": 0.0}
    for k in range(K):
        b["s"] += sterm[k]
    nd, dt = [0] * K, []

    def add_to_topic(k, delta):  # _add_to_topic
        b["s"] -= sterm[k]
        b["r"] -= nd[k] * beta * inv[k]
        nk[k] += delta
        nd[k] += delta
        inv[k] = 1.0 / (int(nk[k]) + beta_sum[k])
        sterm[k] = alpha[k] * beta * inv[k]
        b["s"] += sterm[k]
        b["r"] += nd[k] * beta * inv[k]
        coef[k] = (alpha[k] + nd[k]) * inv[k]

    def draw_entry(qterm, u):  # _draw_entry: by pairs
        j = 0
        while j + 1 < len(qterm):
            pair = qterm[j] + qterm[j + 1]
            if u < pair:
                return j if u < qterm[j] else j + 1
            u -= pair
            j += 2
        if j < len(qterm) and u < qterm[j]:
            return j
        return max(j for j, x in enumerate(qterm) if x != 0.0)

    def draw_document_topic(u):  # _draw_document_topic
        for k in dt:
            if nd[k] > 0:
                u -= nd[k] * beta * inv[k]
                if u < 0.0:
                    return k
        with_mass = [k for k in dt if nd[k] > 0]
        return with_mass[-1] if with_mass else -1

    bits = 4  # _block_bits: blocks of 2**bits topics, about sqrt(K) of them, at most 256
    while ((K - 1) >> bits) + 1 > 256 or (1 << (2 * bits)) < K:
        bits += 1

    def block_mass(lo, hi):  # _block_mass: four running sums, topics lo + j, lo + j + 4, ... in sum j
        parts = [0.0, 0.0, 0.0, 0.0]
        for k in range(lo, hi):
            parts[(k - lo) % 4] += sterm[k]
        return (parts[0] + parts[1]) + (parts[2] + parts[3])

    def draw_smoothing_topic(u):  # _draw_smoothing_topic: the block by its mass, then the topic
        for lo in range(0, K, 1 << bits):
            hi = min(K, lo + (1 << bits))
            mass = block_mass(lo, hi)
            if u < mass:
                for k in range(lo, hi):
                    u -= sterm[k]
                    if u < 0.0:
                        return k
                return hi - 1
            u -= mass
        return K - 1

    for d in range(doc_ptr.size - 1):
        mine = [i for i in range(doc_ptr[d], doc_ptr[d + 1]) if word_lo <= words[i] < word_hi]
        if not mine:
            continue
        # _enter_document: the document's topics in increasing order
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            nd[int(z[i])] += 1
        dt.extend(k for k in range(K) if nd[k] > 0)
        b["r"] = 0.0
        for t in dt:
            b["r"] += nd[t] * beta * inv[t]
            coef[t] = (alpha[t] + nd[t]) * inv[t]
        for i in mine:
            w, old = int(words[i]), int(z[i])
            kept = (b["s"], b["r"], inv[old], sterm[old], coef[old])
            add_to_topic(old, -1)
            # the word bucket over the word's list, full counts, in two running sums (even and
            # odd entries), then the token's own count taken out
            topics = word_list(nwk[w])
            qterm = [coef[k] * int(nwk[w, k]) for k in topics]
            q, q2 = 0.0, 0.0
            for j, x in enumerate(qterm):
                if j % 2 == 0:
                    q += x
                else:
                    q2 += x
            q = (q + q2) - coef[old]
            total = b["s"] + b["r"] + q
            # the word's extra prior mass, sum coef[k] extra_wk over its cells
            cells, qe = extra_cells(prior, w), 0.0
            for k, e in cells:
                qe += coef[k] * e
            if cells:
                total += qe
            u = rng.random() * total
            if u < q:
                qterm[topics.index(old)] -= coef[old]
                t = topics[draw_entry(qterm, u)]
            else:
                u -= q
                t = -1
                if cells and u < qe:
                    t = cells[-1][0]
                    for k, e in cells:
                        u -= coef[k] * e
                        if u < 0.0:
                            t = k
                            break
                elif cells:
                    u -= qe
                if t < 0:
                    t = draw_document_topic(u) if u < b["r"] else -1
                if t < 0:
                    t = draw_smoothing_topic(u - b["r"])
            if t == old:  # _put_back
                nk[old] += 1
                nd[old] += 1
                b["s"], b["r"], inv[old], sterm[old], coef[old] = kept
                continue
            add_to_topic(t, 1)
            if nd[old] == 0:  # _move_in_document: the list stays in increasing order
                dt.remove(old)
            if nd[t] == 1:
                bisect.insort(dt, t)
            nwk[w, old] -= 1
            nwk[w, t] += 1
            z[i] = t
        for t in dt:  # _leave_document
            nd[t] = 0
            coef[t] = alpha[t] * inv[t]
        dt.clear()


def build_alias(weight, total):
    """_shared.pxd's alias_table: Vose's alias table (prob, alias) of ``weight``."""
    n = len(weight)
    scale = n / total
    prob = [x * scale for x in weight]
    alias = list(range(n))
    small = [j for j in range(n) if prob[j] < 1.0]
    large = [j for j in range(n) if prob[j] >= 1.0]
    while small and large:
        a = small.pop()
        b = large[-1]
        alias[a] = b
        prob[b] = (prob[b] + prob[a]) - 1.0
        if prob[b] < 1.0:
            large.pop()
            small.append(b)
    for j in large + small:  # what is left, and rounding leftovers
        prob[j] = 1.0
    return prob, alias


def draw_alias(prob, alias, u):
    """_shared.pxd's alias_draw: an index of the table, for u uniform in [0, 1)."""
    n = len(prob)
    x = u * n
    j = min(int(x), n - 1)
    return j if x - j < prob[j] else alias[j]


def alias_sweep(words, doc_ptr, z, nwk, nk, alpha, beta, beta_sum, rng, word_lo=0, word_hi=None, prior=None,
                mh_steps=2):
    """ldacli._cgs.alias_sweep for one shard's tokens of the words word_lo <= w < word_hi (the
    shard's tokens of those words grouped by word, in a stable order), draw for draw. ``nwk``
    (V, K) dense counts stand for the word lists: all the shards' counts of a word, of which the
    other shards' part is frozen while this shard samples."""
    K = nk.size
    word_hi = nwk.shape[0] if word_hi is None else word_hi
    alpha = [float(a) for a in alpha]
    bs = [float(x) for x in np.broadcast_to(beta_sum, (K,))]
    order = np.argsort(words, kind="stable")
    order = [int(m) for m in order if word_lo <= words[m] < word_hi]
    doc_of = np.repeat(np.arange(doc_ptr.size - 1), np.diff(doc_ptr))
    ndk = doc_topic_counts(doc_ptr, z, K).tolist()
    alpha_sum = 0.0
    for a in alpha:
        alpha_sum += a
    alpha_prob, alpha_alias = build_alias(alpha, alpha_sum)
    i = 0
    while i < len(order):
        w = int(words[order[i]])
        run = [m for m in order[i:] if words[m] == w]  # the word's tokens: one run of the order
        cur = [int(c) for c in nwk[w]]
        here = np.bincount(z[run], minlength=K)
        other_topics, weight, other_mass = [], [], 0.0
        for k in word_list(nwk[w]):
            if cur[k] - here[k] > 0:
                other_topics.append(k)
                weight.append(float(cur[k] - here[k]))
                other_mass += cur[k] - here[k]
        if other_topics:
            other_prob, other_alias = build_alias(weight, other_mass)
        cells, extra_mass = extra_cells(prior, w), 0.0
        for _, e in cells:
            extra_mass += e
        bw = beta_row(prior, w, beta, K).tolist()
        for m in run:
            d = doc_of[m]
            nd, lo, hi = ndk[d], doc_ptr[d], doc_ptr[d + 1]
            st = int(z[m])
            cur[st] -= 1
            nd[st] -= 1
            nk[st] -= 1
            for _ in range(mh_steps):
                # the document proposal, q(k) ~ n_dk + a_k
                u = rng.random() * ((hi - lo) + alpha_sum)
                if u < hi - lo:
                    t = int(z[lo + int(u)])
                else:
                    t = draw_alias(alpha_prob, alpha_alias, (u - (hi - lo)) / alpha_sum)
                if t != st:
                    ratio = ((cur[t] + bw[t]) * (int(nk[st]) + bs[st])) / ((cur[st] + bw[st]) * (int(nk[t]) + bs[t]))
                    if rng.random() < ratio:
                        st = t
                        z[m] = st
                # the word proposal, q(k) ~ n_wk + b_wk: other shards, this shard, uniform, extra
                u = rng.random() * (other_mass + len(run) + K * beta + extra_mass)
                if u < other_mass:
                    t = other_topics[draw_alias(other_prob, other_alias, u / other_mass)]
                elif u < other_mass + len(run):
                    t = int(z[run[int(u - other_mass)]])
                else:
                    x = u - other_mass - len(run)
                    if cells and x >= K * beta:
                        x -= K * beta
                        t = cells[-1][0]
                        for k, e in cells:
                            x -= e
                            if x < 0.0:
                                t = k
                                break
                    else:
                        t = min(int(x / beta), K - 1)
                if t != st:
                    ratio = ((nd[t] + alpha[t]) * (int(nk[st]) + bs[st])) / ((nd[st] + alpha[st]) * (int(nk[t]) + bs[t]))
                    if rng.random() < ratio:
                        st = t
                        z[m] = st
            cur[st] += 1
            nd[st] += 1
            nk[st] += 1
        nwk[w] = cur
        i += len(run)


SWEEPS = {"dense": dense_sweep, "sparse": sparse_sweep, "alias": alias_sweep}


def partition_sweep(words, doc_ptr, z, V, K, alpha, beta, bounds, slices, rngs, kind="dense", prior=None):
    """One sweep of the partition scheme with sampler ``kind``: P rounds; in round r, shard s
    samples its tokens of word slice (s + r) mod P against the shared word-topic counts and its
    own copy of the topic totals of the round's start; the totals' changes are summed after the
    round. The topic-word prior is ``beta`` plus ``prior``'s extra mass (None: none)."""
    beta_sum = V * beta + (np.bincount(prior.topics, weights=prior.extra, minlength=K) if prior is not None
                           else np.zeros(K))
    nwk = np.zeros((V, K), np.int64)
    np.add.at(nwk, (words, z), 1)
    nk = np.bincount(z, minlength=K)
    P = len(bounds) - 1
    for r in range(P):
        start, change = nk.copy(), np.zeros(K, np.int64)
        for s in range(P):
            j = (s + r) % P
            lo, hi = doc_ptr[bounds[s]], doc_ptr[bounds[s + 1]]
            ptr = doc_ptr[bounds[s]:bounds[s + 1] + 1] - lo
            mine = start.copy()
            SWEEPS[kind](words[lo:hi], ptr, z[lo:hi], nwk, mine, alpha, beta, beta_sum, rngs[s], slices[j],
                         slices[j + 1], prior)
            change += mine - start
        nk = start + change


def prior_alias_tables(phi_wk, alpha):
    """ldacli._fixed_topics.prior_alias_tables: returns ``(prob, alias, total)``, ``prob`` rounded
    to float32 as the kernel's tables keep it."""
    V, K = phi_wk.shape
    prob, alias, total = np.zeros((V, K), np.float32), np.zeros((V, K), np.int32), np.zeros(V)
    for w in range(V):
        weight = [alpha[k] * phi_wk[w, k] for k in range(K)]
        t = 0.0
        for x in weight:
            t = t + x
        total[w] = t
        if t > 0:
            prob[w], alias[w] = build_alias(weight, t)
    return prob, alias, total


def word_lists(phi_wk, density=0.25, by_word_from=16):
    """fixed_topics.PriorTables' lists: ``(floor, list_ptr, list_topics, excess, by_word_from)``,
    each word's topics above the topic's least phi, in increasing order, and how far above."""
    V, K = phi_wk.shape
    floor = np.array([min(phi_wk[w, k] for w in range(V)) for k in range(K)])
    ptr, topics, excess = [0], [], []
    for w in range(V):
        for k in range(K):
            if phi_wk[w, k] > floor[k]:
                topics.append(k)
                excess.append(phi_wk[w, k] - floor[k])
        ptr.append(len(topics))
    if len(topics) > density * V * K:
        return floor, np.zeros(V + 1, np.int64), np.zeros(0, np.int32), np.zeros(0), K
    return floor, np.array(ptr, np.int64), np.array(topics, np.int32), np.array(excess), by_word_from


def paired_sums(terms, first=0.0):
    """The running sums of ``terms`` as the inference kernel keeps them (two chains of additions
    instead of one): terms 0, 2, 4, ... added to ``first``, terms 1, 3, 5, ... to 0.0, and each
    prefix the sum of the two. Returns the prefixes and the total."""
    even, odd, prefixes = first, 0.0, []
    for j, x in enumerate(terms):
        if j % 2 == 0:
            even = even + x
        else:
            odd = odd + x
        prefixes.append(even + odd)
    return prefixes, even + odd


def theta_of_documents(words, doc_ptr, doc_keys, run_key, phi_wk, tables, lists, alpha, alpha_sum, batch_of_sweep,
                       batch_sweeps):
    """ldacli._fixed_topics.theta_of_documents, draw for draw: returns ``(z, theta)`` as the kernel
    writes them. Each document's stream is made through numpy's Python interface
    (``random_streams.document_generator``)."""
    from ldacli.random_streams import document_generator

    prob, alias, total = tables
    prob = np.asarray(prob, dtype=np.float64)  # the kernel compares each float32 probability as a double
    floor, list_ptr, list_topics, excess, by_word_from = lists
    D, K, B = doc_ptr.size - 1, phi_wk.shape[1], batch_sweeps.size
    z = np.zeros(words.size, np.int32)
    theta = np.zeros((B + 1 if B > 1 else B, D, K))
    kept = 0.0
    for n in batch_sweeps:
        kept = kept + n
    for d in range(D):
        rng = document_generator(run_key, doc_keys[d])
        count, topics, sums = np.zeros(K, np.int64), [], np.zeros((B, K))
        smooth = [0.0]  # sum of count[k] * floor[k], kept as tokens come and go

        def prior_draws():
            return [int(draw_alias(prob[w], alias[w], u)) if total[w] > 0 else 0
                    for w, u in zip(words[tokens], (rng.random() for _ in tokens))]

        def draw(w, prior_topic):
            lo, hi = list_ptr[w], list_ptr[w + 1]
            if len(topics) > by_word_from and hi - lo < len(topics):
                mass, A = paired_sums([count[k] * x for k, x in zip(list_topics[lo:hi], excess[lo:hi])], smooth[0])
                u = rng.random() * (A + total[w])
                if u >= A:
                    return prior_topic
                if u < smooth[0]:
                    c = 0.0
                    for k in topics:
                        c = c + count[k] * floor[k]
                        if u < c:
                            return k
                    return topics[-1]
                return int(next(k for k, m in zip(list_topics[lo:hi], mass) if u < m))
            mass, A = paired_sums([count[k] * phi_wk[w, k] for k in topics])
            u = rng.random() * (A + total[w])
            if u < A:
                return next((k for k, m in zip(topics, mass) if u < m), topics[-1])
            return prior_topic

        def add(t):
            if count[t] == 0:
                topics.append(t)
            count[t] += 1
            smooth[0] = smooth[0] + floor[t]

        def remove(t):
            smooth[0] = smooth[0] - floor[t]
            count[t] -= 1
            if count[t] == 0:
                j = topics.index(t)
                last = topics.pop()
                if j < len(topics):
                    topics[j] = last

        tokens = range(doc_ptr[d], doc_ptr[d + 1])
        for i, prior_topic in zip(tokens, prior_draws()):
            z[i] = draw(words[i], prior_topic)
            add(z[i])
        for s, b in enumerate(batch_of_sweep):
            for i, prior_topic in zip(tokens, prior_draws()):
                remove(z[i])
                z[i] = draw(words[i], prior_topic)
                add(z[i])
            if b >= 0:
                sums[b] += count
        denom = len(tokens) + alpha_sum
        if B > 0:
            summed = np.zeros(K)
            for b in range(B):
                summed = summed + sums[b]
                if B > 1:
                    theta[1 + b, d] = (sums[b] / batch_sweeps[b] + alpha) / denom
            theta[0, d] = (summed / kept + alpha) / denom
    return z, theta


def _draw(x, rng):
    cum = np.cumsum(x)
    return min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), x.size - 1)


def left_to_right(words, doc_ptr, phi_wk, alpha, resample, n_particles, rng):
    """ldacli._fixed_topics.left_to_right (ext/_fixed_topics.pyx), draw for draw: returns the arrays the kernel
    writes into its arguments, (log_weight (D, R), position_ll (D,), ratio_sum (D, R))."""
    import math

    D, K, R = doc_ptr.size - 1, alpha.size, n_particles
    A = float(np.cumsum(alpha)[-1])
    log_weight, position_ll, ratio_sum = np.zeros((D, R)), np.zeros(D), np.zeros((D, R))
    for d in range(D):
        ws = words[doc_ptr[d]:doc_ptr[d + 1]]
        ndk = np.zeros((R, K), dtype=np.int64)
        z = np.zeros((R, ws.size), dtype=np.int64)
        p = np.zeros(R)
        for n, w in enumerate(ws):
            for r in range(R):
                if resample:
                    for m in range(n):
                        ndk[r, z[r, m]] -= 1
                        z[r, m] = _draw((ndk[r] + alpha) * phi_wk[ws[m]], rng)
                        ndk[r, z[r, m]] += 1
                p[r] = np.cumsum((ndk[r] + alpha) / (n + A) * phi_wk[w])[-1]
                log_weight[d, r] += math.log(p[r])
                z[r, n] = _draw((ndk[r] + alpha) * phi_wk[w], rng)
                ndk[r, z[r, n]] += 1
            mean = np.cumsum(p)[-1] / R
            position_ll[d] += math.log(mean)
            ratio_sum[d] += p / mean
    return log_weight, position_ll, ratio_sum


def loglik_given_theta(indices, counts, indptr, theta, phi_wk):
    """ldacli._fixed_topics.loglik_given_theta: returns the (D, S) array the kernel writes into ``out``."""
    import math

    D, S, _ = theta.shape
    out = np.zeros((D, S))
    for d in range(D):
        for s in range(S):
            ll = 0.0
            for j in range(indptr[d], indptr[d + 1]):
                ll += counts[j] * math.log(np.cumsum(theta[d, s] * phi_wk[indices[j]])[-1])
            out[d, s] = ll
    return out


def particle_filter(words, doc_ptr, phi_wk, alpha, n_filters, n_particles, rng):
    """ldacli._fixed_topics.particle_filter (ext/_fixed_topics.pyx), draw for draw: returns the (D, G) array
    the kernel writes into ``log_z``."""
    import math

    D, K, G, R = doc_ptr.size - 1, alpha.size, n_filters, n_particles
    P = G * R
    A = float(np.cumsum(alpha)[-1])
    log_z = np.zeros((D, G))
    for d in range(D):
        ndk = np.zeros((P, K), dtype=np.int64)
        for n, w in enumerate(words[doc_ptr[d]:doc_ptr[d + 1]]):
            p = np.array([np.cumsum((ndk[r] + alpha) / (n + A) * phi_wk[w])[-1] for r in range(P)])
            nxt = ndk.copy()
            for g in range(G):
                ps = p[g * R:(g + 1) * R]
                log_z[d, g] += math.log(np.cumsum(ps)[-1] / R)
                for j in range(R):
                    nxt[g * R + j] = ndk[g * R + _draw(ps, rng)]
            ndk = nxt
            for r in range(P):
                ndk[r, _draw((ndk[r] + alpha) * phi_wk[w], rng)] += 1
    return log_z


def root_overlaps(ptr, rows, values, totals, K):
    """ldacli._update.root_overlaps: returns the (K, K) array it adds to a zero ``out``, column by
    column in order (each pair of rows gets at most one product a column)."""
    out = np.zeros((K, K))
    for c in range(len(ptr) - 1):
        r, v = rows[ptr[c]:ptr[c + 1]], values[ptr[c]:ptr[c + 1]]
        roots = np.sqrt(v / totals[r])
        i, j = np.triu_indices(r.size, 1)
        lo, hi = np.minimum(r[i], r[j]), np.maximum(r[i], r[j])
        out[lo, hi] += roots[i] * roots[j]
    return out


def exact_posterior(words, doc_ptr, V, K, alpha, beta):
    """p(z | w) for every assignment of a tiny corpus, by enumeration of the collapsed joint:
    the list of states (tuples z) and their probabilities. ``beta`` is the topic-word prior,
    symmetric (a number) or one per word and topic ((V, K))."""
    beta = np.broadcast_to(np.asarray(beta, dtype=np.float64), (V, K))
    states = list(itertools.product(range(K), repeat=words.size))
    logp = []
    for z in states:
        z = np.array(z, np.int32)
        nwk = word_topic_counts(words, z, V, K)
        # log p(w | z), less what does not depend on z
        lp = np.sum(gammaln(nwk + beta)) - np.sum(gammaln(nwk.sum(axis=0) + beta.sum(axis=0)))
        lp += np.sum(gammaln(doc_topic_counts(doc_ptr, z, K) + alpha))
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return states, p / p.sum()


def renumbered_rows(ptr, columns, values, to, n_columns, first_row):
    """ldacli._update.renumbered_rows: returns the ``(codes, sums)`` it writes."""
    codes, sums = [], []
    for r in range(len(ptr) - 1):
        cols, vals = to[columns[ptr[r]:ptr[r + 1]]], values[ptr[r]:ptr[r + 1]]
        unique, where = np.unique(cols, return_inverse=True)
        codes.append((first_row + r) * n_columns + unique)
        sums.append(np.bincount(where, weights=vals, minlength=unique.size).astype(np.int64))
    return np.concatenate(codes or [np.zeros(0, np.int64)]), np.concatenate(sums or [np.zeros(0, np.int64)])
