"""Slow NumPy versions of the Cython kernels, draw for draw: the oracle the kernels must equal."""

import numpy as np


def cgs_sweep(words, doc_ptr, z, nwk, ndk, nk, alpha, beta, beta_sum, rng):
    K = nk.size
    inv = 1.0 / (nk + beta_sum)
    for d in range(doc_ptr.size - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, t = words[i], z[i]
            nwk[w, t] -= 1
            ndk[d, t] -= 1
            nk[t] -= 1
            inv[t] = 1.0 / (nk[t] + beta_sum)
            cum = np.cumsum((ndk[d] + alpha) * (nwk[w] + beta) * inv)
            u = rng.random() * cum[-1]
            t = min(int(np.searchsorted(cum, u, side="right")), K - 1)
            z[i] = t
            nwk[w, t] += 1
            ndk[d, t] += 1
            nk[t] += 1
            inv[t] = 1.0 / (nk[t] + beta_sum)


def fixed_topics_sweep(words, doc_ptr, z, ndk, phi_wk, alpha, rng):
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
