"""Inference: topic proportions of new documents under a trained model (``ldacli infer``)."""

from __future__ import annotations

from ldacli import checks, seeds, settings
from ldacli.version import __version__
from ldacli.corpus import Corpus
from ldacli.heldout import BURN_IN, ITERATIONS, estimate_theta
from ldacli.methods.distributed import SCHEDULER, cluster
from ldacli.model import Inference, Model
from ldacli.parallel import THREADS, check_threads
from ldacli.seeds import SEED

# The settings of ``infer``.
SETTINGS = (ITERATIONS, BURN_IN, SEED, THREADS, SCHEDULER)


def check_settings(given: dict) -> dict:
    """The settings of :func:`infer` from those ``given``: checked, with their defaults."""
    v = settings.resolve(SETTINGS, given)
    checks.smaller("burn_in", v["burn_in"], "iterations", v["iterations"])
    return v


def infer(model: Model, corpus: Corpus, *, iterations: int | None = None, burn_in: int | None = None,
          seed: int | None = None, threads: int | None = None, scheduler=None,
          progress: bool = False) -> tuple[Inference, int]:
    """Topic proportions of ``corpus``'s documents under ``model``, by Gibbs sampling with the
    model's topics fixed (:func:`ldacli.heldout.estimate_theta`): after ``burn_in`` sweeps (50)
    the estimate is averaged over the rest of ``iterations`` (100).

    Words are matched to the model's vocabulary by string; returns the inference and the number
    of tokens dropped because the model does not know their word (those the reader dropped,
    ``corpus.dropped_tokens``, included). Without ``seed``, fresh entropy is drawn and recorded
    in the inference's params. The documents run on ``threads`` threads (all cores) or on the
    workers of a Dask ``scheduler`` (see :data:`~ldacli.methods.distributed.SCHEDULER`); the
    result is the same.
    """
    v = check_settings(dict(iterations=iterations, burn_in=burn_in, seed=seed, threads=threads, scheduler=scheduler))
    aligned, _ = corpus.align(model.vocab)
    dropped = aligned.dropped_tokens
    entropy = seeds.resolve(v["seed"])
    words, doc_ptr = aligned.tokens()
    with cluster(v["scheduler"]) as client:
        theta, _ = estimate_theta(model.phi, model.alpha, words, doc_ptr, iterations=v["iterations"],
                                  burn_in=v["burn_in"], seed=entropy, threads=check_threads(v["threads"]),
                                  client=client, progress=progress)
    params = {
        "iterations": v["iterations"],
        "burn_in": v["burn_in"],
        "seed": entropy,
        "corpus_source": corpus.source,
        "corpus_fingerprint": corpus.fingerprint(),
        "n_tokens": aligned.n_tokens,
        "dropped_tokens": dropped,
        "model_params": model.params,
        "ldacli_version": __version__,
    }
    return Inference(theta, list(corpus.doc_ids), params), dropped
