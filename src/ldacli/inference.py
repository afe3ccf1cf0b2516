"""Inference: topic proportions of new documents under a trained model (``ldacli infer``)."""

from __future__ import annotations

from ldacli import seeds
from ldacli.version import __version__
from ldacli.corpus import Corpus
from ldacli.heldout import DEFAULT_BURN_IN, DEFAULT_ITERATIONS, estimate_theta
from ldacli.model import Inference, Model
from ldacli.parallel import check_threads


def infer(model: Model, corpus: Corpus, *, iterations: int = DEFAULT_ITERATIONS,
          burn_in: int = DEFAULT_BURN_IN, seed: int | None = None, threads: int | None = None,
          client=None, progress: bool = False) -> tuple[Inference, int]:
    """Topic proportions of ``corpus``'s documents under ``model``, by Gibbs sampling with the
    model's topics fixed (:func:`ldacli.heldout.estimate_theta`).

    Words are matched to the model's vocabulary by string; returns the inference and the number
    of tokens dropped because the model does not know their word. Without ``seed``, fresh
    entropy is drawn and recorded in the inference's params. The documents run on ``threads``
    threads (all cores) or on the workers of a Dask ``client``; the result is the same.
    """
    aligned, dropped = corpus.align(model.vocab)
    entropy = seeds.resolve(seed)
    words, doc_ptr = aligned.tokens()
    theta, _ = estimate_theta(model.phi, model.alpha, words, doc_ptr, iterations=iterations, burn_in=burn_in,
                              seed=entropy, threads=check_threads(threads), client=client, progress=progress)
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
