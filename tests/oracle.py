"""Slow NumPy versions of the Cython kernels, draw for draw: the oracle the kernels must equal;
and the exact posterior of a tiny corpus, by enumeration, that every sampler must visit."""

import itertools

import numpy as np
from scipy.special import gammaln

from ldacli.methods.base import doc_topic_counts, word_topic_counts


def dense_sweep(words, doc_ptr, z, nwk, nk, alpha, beta, beta_sum, rng, word_lo=0, word_hi=None):
    """ldacli._cgs.dense_sweep for one shard's tokens of the words word_lo <= w < word_hi."""
    K = nk.size
    word_hi = nwk.shape[0] if word_hi is None else word_hi
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
            inv[t] = 1.0 / (nk[t] + beta_sum)
            cum = np.cumsum((ndk + alpha) * (nwk[w] + beta) * inv)
            u = rng.random() * cum[-1]
            t = min(int(np.searchsorted(cum, u, side="right")), K - 1)
            z[i] = t
            nwk[w, t] += 1
            ndk[t] += 1
            nk[t] += 1
            inv[t] = 1.0 / (nk[t] + beta_sum)


def partition_sweep(words, doc_ptr, z, V, K, alpha, beta, bounds, slices, rngs):
    """One sweep of the partition scheme: P rounds; in round r, shard s samples its tokens of word
    slice (s + r) mod P against the shared word-topic counts and its own copy of the topic totals
    of the round's start; the totals' changes are summed after the round."""
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
            dense_sweep(words[lo:hi], ptr, z[lo:hi], nwk, mine, alpha, beta, V * beta, rngs[s], slices[j],
                        slices[j + 1])
            change += mine - start
        nk = start + change


def sparse_fixed_topics_sweep(words, doc_ptr, z, ndk, phi_wk, prior_cum, rng):
    """ldacli._heldout.sparse_fixed_topics_sweep."""
    K = ndk.shape[1]
    for d in range(doc_ptr.size - 1):
        topics = list(dict.fromkeys(int(t) for t in z[doc_ptr[d]:doc_ptr[d + 1]]))
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
            ndk[d, t] -= 1
            mass, A = [], 0.0
            for k in topics:
                A = A + ndk[d, k] * phi_wk[w, k]
                mass.append(A)
            u = rng.random() * (A + prior_cum[w, -1])
            if u < A:
                hits = [j for j, m in enumerate(mass) if u < m]
                t = topics[hits[0]] if hits else [k for k in topics if ndk[d, k] > 0][-1]
            else:
                t = min(int(np.searchsorted(prior_cum[w], u - A, side="right")), K - 1)
            ndk[d, t] += 1
            z[i] = t
            if t not in topics:
                topics.append(t)


def _draw(x, rng):
    cum = np.cumsum(x)
    return min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), x.size - 1)


def left_to_right(words, doc_ptr, phi_wk, alpha, resample, n_particles, rng):
    """ldacli._heldout.left_to_right (ext/_heldout.pyx), draw for draw: returns the arrays the kernel
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
    """ldacli._heldout.loglik_given_theta: returns the (D, S) array the kernel writes into ``out``."""
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
    """ldacli._heldout.particle_filter (ext/_heldout.pyx), draw for draw: returns the (D, G) array
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


def exact_posterior(words, doc_ptr, V, K, alpha, beta):
    """p(z | w) for every assignment of a tiny corpus, by enumeration of the collapsed joint:
    the list of states (tuples z) and their probabilities."""
    states = list(itertools.product(range(K), repeat=words.size))
    logp = []
    for z in states:
        z = np.array(z, np.int32)
        nwk = word_topic_counts(words, z, V, K)
        lp = np.sum(gammaln(nwk + beta)) - np.sum(gammaln(nwk.sum(axis=0) + V * beta))
        lp += np.sum(gammaln(doc_topic_counts(doc_ptr, z, K) + alpha))
        logp.append(lp)
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return states, p / p.sum()
