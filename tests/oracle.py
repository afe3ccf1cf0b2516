"""Slow NumPy versions of the Cython kernels, draw for draw: the oracle the kernels must equal."""

import numpy as np


def dense_sweep(words, doc_ptr, z, nwk, nk, alpha, beta, beta_sum, rng):
    """ldacli._gibbs.dense_sweep for one shard."""
    K = nk.size
    inv = 1.0 / (nk + beta_sum)
    for d in range(doc_ptr.size - 1):
        ndk = np.bincount(z[doc_ptr[d]:doc_ptr[d + 1]], minlength=K)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
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


def sharded_sweep(words, doc_ptr, z, V, K, alpha, beta, bounds, rngs):
    """One AD-LDA sweep: every shard from the same snapshot of the counts, then merged."""
    nwk = np.zeros((V, K), np.int64)
    np.add.at(nwk, (words, z), 1)
    nk = np.bincount(z, minlength=K)
    for s in range(len(bounds) - 1):
        lo, hi = doc_ptr[bounds[s]], doc_ptr[bounds[s + 1]]
        ptr = doc_ptr[bounds[s]:bounds[s + 1] + 1] - lo
        dense_sweep(words[lo:hi], ptr, z[lo:hi], nwk.copy(), nk.copy(), alpha, beta, V * beta, rngs[s])


def fixed_topics_sweep(words, doc_ptr, z, ndk, phi_wk, alpha, rng):
    """ldacli._gibbs.fixed_topics_sweep."""
    K = alpha.size
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
            ndk[d, t] -= 1
            cum = np.cumsum((ndk[d] + alpha) * phi_wk[w])
            u = rng.random() * cum[-1]
            t = min(int(np.searchsorted(cum, u, side="right")), K - 1)
            z[i] = t
            ndk[d, t] += 1
