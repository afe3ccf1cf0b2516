"""Inference: topic proportions of new documents by Gibbs sampling with the topics held fixed."""

from __future__ import annotations

import sys

import numpy as np
from tqdm import tqdm

from ldacli import __version__
from ldacli._heldout import fixed_topics_sweep
from ldacli.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.model import Inference, Model
from ldacli.methods.cgs import _check_count

DEFAULT_ITERATIONS = 100
DEFAULT_BURN_IN = 50


def make_rng(seed: int | None) -> tuple[np.random.Generator, int]:
    """A generator for ``seed``, or for fresh entropy; returns it with the seed to record."""
    entropy = np.random.SeedSequence().entropy if seed is None else _check_count("seed", seed, 0)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy))), entropy


def estimate_theta(model: Model, words: np.ndarray, doc_ptr: np.ndarray, *, iterations: int,
                   burn_in: int, rng: np.random.Generator, batches: int = 1,
                   progress: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """Posterior-mean topic proportions (D, K) of the documents given as token arrays.

    Topics are initialised uniformly at random; after ``burn_in`` sweeps, the point estimate
    ``(n_dk + alpha_k) / (N_d + sum(alpha))`` is averaged over the remaining sweeps. Documents
    without tokens get the normalised prior. Returns ``(theta, batch_thetas)``: the average,
    and the averages over ``batches`` consecutive, equal-as-possible blocks of the kept sweeps
    (for a batch-means standard error).
    """
    iterations = _check_count("iterations", iterations, 1)
    burn_in = _check_count("burn_in", burn_in, 0)
    if burn_in >= iterations:
        raise LdacliError(f"burn-in must be smaller than iterations, found burn-in {burn_in} >= iterations {iterations}")
    K = model.n_topics
    D = doc_ptr.size - 1
    alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
    phi_wk = np.ascontiguousarray(model.phi.T, dtype=np.float64)
    words = np.ascontiguousarray(words, dtype=np.int32)
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    z = rng.integers(0, K, size=words.size, dtype=np.int32)
    docs = np.repeat(np.arange(D, dtype=np.int64), np.diff(doc_ptr))
    ndk = np.bincount(docs * K + z, minlength=D * K).astype(np.int32).reshape(D, K)
    denom = (np.diff(doc_ptr) + alpha.sum())[:, None]
    kept = iterations - burn_in
    n_batches = min(_check_count("batches", batches, 1), kept)
    theta_sum = np.zeros((D, K))
    batch_sums = [np.zeros((D, K)) for _ in range(n_batches)] if n_batches > 1 else []
    batch_sizes = np.zeros(n_batches, dtype=np.int64)
    work = np.zeros(K)
    for it in tqdm(range(iterations), disable=not progress, file=sys.stderr, unit="sweep", leave=False):
        fixed_topics_sweep(words, doc_ptr, z, ndk, phi_wk, alpha, work, rng)
        if it >= burn_in:
            current = (ndk + alpha) / denom
            theta_sum += current
            if batch_sums:
                b = (it - burn_in) * n_batches // kept
                batch_sums[b] += current
                batch_sizes[b] += 1
    theta = theta_sum / kept
    return theta, ([s / n for s, n in zip(batch_sums, batch_sizes)] if batch_sums else [theta])


def infer(model: Model, corpus: Corpus, *, iterations: int = DEFAULT_ITERATIONS,
          burn_in: int = DEFAULT_BURN_IN, seed: int | None = None,
          progress: bool = False) -> tuple[Inference, int]:
    """Topic proportions of ``corpus``'s documents under ``model``.

    Words are matched to the model's vocabulary by string; returns the inference and the number
    of tokens dropped because the model does not know their word.
    """
    aligned, dropped = corpus.align(model.vocab)
    rng, entropy = make_rng(seed)
    words, doc_ptr = aligned.tokens()
    theta, _ = estimate_theta(model, words, doc_ptr, iterations=iterations, burn_in=burn_in,
                              rng=rng, progress=progress)
    params = {
        "iterations": iterations,
        "burn_in": burn_in,
        "seed": entropy,
        "corpus_source": corpus.source,
        "corpus_fingerprint": corpus.fingerprint(),
        "n_tokens": aligned.n_tokens,
        "dropped_tokens": dropped,
        "model_params": model.params,
        "ldacli_version": __version__,
    }
    return Inference(theta, list(corpus.doc_ids), params), dropped
