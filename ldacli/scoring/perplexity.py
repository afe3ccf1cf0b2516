"""Evaluation: held-out log-likelihood and per-word perplexity, by three labelled estimators.

* ``completion`` -- document completion (Wallach et al. 2009, section 4): theta from half of
  each document's tokens, the other half scored; the default, comparable across tools.
* ``left-to-right`` -- p(w_d) = prod_n p(w_n | w_<n) (Wallach, Murray, Salakhutdinov & Mimno
  2009), every token scored; by default with independent particle filters (resampling
  particles by their predictive probability), linear in the document length, unbiased for
  p(w_d); the original algorithm, which re-draws earlier topics (quadratic), on request.
* ``importance`` -- importance sampling from the prior, theta ~ Dir(alpha): unbiased but of
  high variance on long documents; a reference for the others.

Each returns the natural-log log-likelihood, the tokens and documents scored, the perplexity
``exp(-log_likelihood / n_tokens)`` and a standard error of the log-likelihood.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Iterable

import numpy as np
from tqdm import tqdm

from ldacli import checks, random_streams, settings
from ldacli.api_input import as_corpus, as_model, checked_path, is_path, reading_of, stream_at
from ldacli._fixed_topics import left_to_right, loglik_given_theta, particle_filter
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.scoring.fixed_topics import BURN_IN, ITERATIONS, BlockSum, DocQueue, completion_split, theta_stream, token_logliks
from ldacli.cluster.connection import SCHEDULER, cluster
from ldacli.model import Model
from ldacli.parallel import THREADS, check_threads
from ldacli.random_streams import SEED
from ldacli.settings import Choice, Flag, Integer, Setting, owned_by
from ldacli.signatures import takes_settings
from ldacli.corpora.formats.read import READING_FOR_MODEL
from ldacli.version import __version__

log = logging.getLogger("ldacli")
# Topic weights computed per second by the left-to-right kernel (measured on one core, order of
# magnitude): what the warning about --resample's quadratic cost divides by.
RESAMPLE_RATE = 4e8
RESAMPLE_WARN_SECONDS = 60

ESTIMATOR = "document-completion"
METHODS = ("completion", "left-to-right", "importance")
ESTIMATORS = {"completion": ESTIMATOR, "left-to-right": "left-to-right", "importance": "importance-sampling"}
# Independent particle filters per document in the linear left-to-right estimator; the spread
# of their estimates gives the standard error.
FILTERS = 10
COMPLETION_BATCHES = 10
# Doubles of theta held at once by the importance sampler (32 MB).
_THETA_CHUNK = 1 << 22

# The settings of ``perplexity``; those of one estimator only are owned by it.
SETTINGS = (
    Setting("estimator", Choice(METHODS), "completion",
            "completion: document completion, theta from half of each document and the other half scored; "
            "left-to-right: particles; importance: samples of theta from the prior."),
    *owned_by("completion", (ITERATIONS, BURN_IN, THREADS, SCHEDULER)),
    *owned_by("left-to-right", (
        Setting("particles", Integer(2), 10,
                "Particles per filter (10 independent filters per document); with --resample, particles per "
                "document."),
        Setting("resample", Flag(), False,
                "Re-draw earlier topics at every position (the original algorithm, quadratic in document "
                "length) instead of the linear sequential one."),
    )),
    *owned_by("importance", (Setting("samples", Integer(2), 1000, "Draws of theta from the prior per document."),)),
    SEED,
)


def check_settings(given: dict) -> dict:
    """The settings of :func:`perplexity` from those ``given``: checked, with their defaults; a
    setting of another estimator than the one chosen is refused."""
    v = settings.resolve(SETTINGS, given)
    settings.refuse_elsewhere(SETTINGS, given, v["estimator"], "estimator")
    if v["estimator"] == "completion":
        checks.smaller("burn_in", v["burn_in"], "iterations", v["iterations"])
    return v


@takes_settings(SETTINGS, READING_FOR_MODEL)
def perplexity(model, corpus, *, progress: bool = False, **given) -> dict:
    """Held-out log-likelihood and perplexity of ``corpus`` under ``model``.

    ``model`` is a :class:`~ldacli.model.Model` or a model file's path; ``corpus`` what
    :func:`ldacli.api_input.as_corpus` takes (a path, with the reading settings below, a
    :class:`~ldacli.corpora.corpus.Corpus`, a list of strings, a SciPy sparse matrix with ``vocab``),
    read as the model read its training corpus (:meth:`~ldacli.model.Model.reading`).
    ``estimator`` (see the module docstring and :data:`SETTINGS`): ``"completion"`` (the
    default; uses ``iterations``, ``burn_in``, ``threads`` and ``scheduler``),
    ``"left-to-right"`` (``particles``, ``resample``) or ``"importance"`` (``samples``); a
    setting of another estimator is refused. The tokens of words the model has never seen are
    dropped first and counted in ``unknown_tokens`` (with those the reader dropped,
    ``corpus.dropped_tokens``), those of words its vocabulary rules removed
    (``model.removed_words``) in ``removed_tokens``, and both in ``dropped_tokens``.
    Returns a dict with ``estimator`` (its full name), ``log_likelihood`` (natural log),
    ``standard_error`` (of the log-likelihood), ``n_tokens`` and ``n_docs`` scored,
    ``perplexity = exp(-log_likelihood / n_tokens)``, ``unknown_tokens``, ``removed_tokens``,
    ``dropped_tokens``, ``seed`` and the settings used; for a corpus given by its path, also
    ``notes``, what the reader said of it for people (``Corpus.notes``). By document completion,
    a corpus given by its path is read, inferred and scored a block at a time
    (:func:`perplexity_stream`: the same numbers, in memory that does not grow with the corpus).
    """
    reading = reading_of(given, READING_FOR_MODEL)
    settings.check_names(SETTINGS, given)
    v = check_settings(given)
    model = as_model(model, documents=False)  # the topics alone: not the training documents' proportions
    method = v["estimator"]
    path = is_path(corpus)
    if method == "completion" and path:  # documents read, inferred and scored a block at a time
        stream = stream_at(checked_path(corpus), reading, model)
        result = perplexity_stream(model, stream, progress=progress,
                                   **{name: value for name, value in given.items() if name != "estimator"})
        return {**result, "notes": list(stream.notes)}
    corpus = as_corpus(corpus, reading=reading, model=model)
    aligned, _ = corpus.align(model.vocab, frozenset(model.removed_words))
    dropped = aligned.dropped_tokens
    entropy = random_streams.resolve(v["seed"])
    if method == "completion":
        with cluster(v["scheduler"]) as client:
            result = completion_blocks(model, [aligned], corpus.source, v["iterations"], v["burn_in"], entropy,
                                       v["threads"], client, progress)
    elif method == "left-to-right":
        result = _left_to_right(model, aligned, v["particles"], v["resample"], entropy, progress)
    else:
        result = _importance(model, aligned, v["samples"], entropy, progress)
    loglik, n = result["log_likelihood"], result["n_tokens"]
    if n == 0:
        raise LdacliError(f"{corpus.name}: expected at least one token known to the model, found none")
    return {
        "estimator": ESTIMATORS[method],
        **result,
        "perplexity": math.exp(-loglik / n) if n else float("nan"),
        **outside_counts(dropped, aligned.removed_tokens),
        "seed": entropy,
        "ldacli_version": __version__,
        **({"notes": list(corpus.notes)} if path else {}),
    }


def perplexity_stream(model: Model, stream, *, iterations: int | None = None, burn_in: int | None = None,
                      seed: int | None = None, threads: int | None = None, scheduler=None,
                      progress: bool = False) -> dict:
    """:func:`perplexity` by document completion of a corpus read a block at a time (a
    :class:`~ldacli.corpora.formats.stream.CorpusStream` over the model's vocabulary): the same result
    as over the corpus in memory, in memory that does not grow with it."""
    v = check_settings(dict(iterations=iterations, burn_in=burn_in, seed=seed, threads=threads, scheduler=scheduler))
    entropy = random_streams.resolve(v["seed"])
    with cluster(v["scheduler"]) as client:
        result = completion_blocks(model, stream.blocks(), stream.source, v["iterations"], v["burn_in"], entropy,
                                   v["threads"], client, progress)
    return {"estimator": ESTIMATOR, **result,
            "perplexity": math.exp(-result["log_likelihood"] / result["n_tokens"]),
            **outside_counts(stream.dropped_tokens, stream.removed_tokens), "seed": entropy,
            "ldacli_version": __version__}


def outside_counts(unknown: int, removed: int) -> dict:
    """The counts of the tokens not scored: ``unknown_tokens`` (words the model has never
    seen), ``removed_tokens`` (words its vocabulary rules remove) and their sum,
    ``dropped_tokens``."""
    return {"unknown_tokens": unknown, "removed_tokens": removed, "dropped_tokens": unknown + removed}


def completion_blocks(model: Model, blocks: Iterable[Corpus], source: str, iterations: int, burn_in: int, seed: int,
                      threads: int | None, client, progress: bool) -> dict:
    """Document completion of the documents of ``blocks`` (corpora over the model's vocabulary,
    in order), read a block at a time, with a batch-means standard error over the sweeps
    averaged: the observed halves' theta chunk by chunk (:func:`~ldacli.scoring.fixed_topics.theta_stream`),
    each chunk's scored halves scored as it comes, the sums added up as :func:`score` adds
    them, so the result is the same however the documents arrive."""
    scored = DocQueue()
    observed = 0

    def observed_halves():
        nonlocal observed
        for block in blocks:
            obs_words, obs_ptr, score_docs, score_words = completion_split(block)
            scored.push(np.bincount(score_docs, minlength=block.n_docs), score_words)
            observed += obs_words.size
            yield obs_words, obs_ptr

    phi_wk = np.ascontiguousarray(model.phi.T)
    total, batch_totals = BlockSum(), []
    n_tokens = n_docs = 0
    for theta, batch_thetas in theta_stream(model.phi, model.alpha, observed_halves(), iterations=iterations,
                                            burn_in=burn_in, seed=seed, batches=COMPLETION_BATCHES,
                                            threads=check_threads(threads), client=client, progress=progress):
        lengths, words = scored.pop(theta.shape[0])
        docs = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        total.add(token_logliks(theta, phi_wk, docs, words))
        batch_totals = batch_totals or [BlockSum() for _ in batch_thetas]
        for sums, t in zip(batch_totals, batch_thetas):
            sums.add(token_logliks(t, phi_wk, docs, words))
        n_tokens += words.size
        n_docs += int(np.count_nonzero(lengths))
    if n_tokens == 0:
        raise LdacliError(
            f"{source}: expected documents with at least 2 tokens known to the model "
            f"(one observed, one scored), found none"
        )
    batch_ll = np.array([b.result() for b in batch_totals])
    se = float(batch_ll.std(ddof=1) / math.sqrt(batch_ll.size)) if batch_ll.size > 1 else float("nan")
    return {
        "log_likelihood": total.result(),
        "standard_error": se,
        "n_tokens": n_tokens,
        "n_docs": n_docs,
        "observed_tokens": observed,
        "iterations": iterations,
        "burn_in": burn_in,
        "batches": int(batch_ll.size),
    }


def _log_mean_and_se(log_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``log_w`` (D, R): log of the mean of exp(log_w), and the standard error of
    that log by the delta method, ``std(W) / (sqrt(R) mean(W))``."""
    R = log_w.shape[1]
    top = log_w.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    w = np.exp(log_w - top)
    mean = w.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mean = np.log(mean) + top[:, 0]
        se = w.std(axis=1, ddof=1) / (math.sqrt(R) * mean)
    return log_mean, se


def resample_cost_warning(lengths: np.ndarray, particles: int, n_topics: int) -> str | None:
    """A warning when ``--resample``'s cost, R x K x N_d^2 / 2 per document, will take more
    than a minute (at :data:`RESAMPLE_RATE`), or None."""
    work = particles * n_topics * float(np.sum(np.asarray(lengths, dtype=np.float64) ** 2)) / 2
    seconds = work / RESAMPLE_RATE
    if seconds <= RESAMPLE_WARN_SECONDS:
        return None
    return (f"left-to-right with --resample is quadratic in document length: about {work:.2g} topic weights "
            f"to compute (the longest document has {int(np.max(lengths))} tokens), roughly "
            f"{f'{seconds / 3600:.1f} hours' if seconds > 3600 else f'{seconds / 60:.0f} minutes'} on one core; "
            f"without --resample the linear estimator scores the same tokens")


def _left_to_right(model: Model, aligned: Corpus, particles: int, resample: bool, entropy: int,
                   progress: bool) -> dict:
    """The left-to-right estimator over all tokens of every document (see the module docstring),
    each document on its own stream (:func:`ldacli.random_streams.document_generator`): its tokens in a
    random order drawn first, then its particles."""
    words, doc_ptr = aligned.tokens()
    keys, run_key = random_streams.content_keys(words, doc_ptr), random_streams.document_key(entropy)
    lengths = np.diff(doc_ptr)
    D, K, R = aligned.n_docs, model.n_topics, particles
    phi_wk = np.ascontiguousarray(model.phi.T, dtype=np.float64)
    alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
    docs = tqdm(range(D), disable=not progress, file=sys.stderr, unit="doc", leave=False)

    def document(d: int) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
        rng = random_streams.document_generator(run_key, keys[d])
        shuffled = np.ascontiguousarray(rng.permutation(words[doc_ptr[d]:doc_ptr[d + 1]]), dtype=np.int32)
        return shuffled, np.array([0, shuffled.size], dtype=np.int64), rng

    if resample:
        warning = resample_cost_warning(lengths, R, K)
        if warning:
            log.warning("%s", warning)
        # Wallach et al.'s algorithm: R particles whose earlier topics are re-drawn at every
        # position; log p = sum_n log mean_r p_n^r, a smooth function of R independent
        # particles, whose delta-method variance is var_r(sum_n p_n^r / mean p_n) / R.
        z = np.zeros((R, max(int(lengths.max(initial=0)), 1)), dtype=np.int32)
        ndk, p, cum = np.zeros((R, K), dtype=np.int32), np.zeros(R), np.zeros(K)
        log_weight, per_doc, ratio_sum = np.zeros((D, R)), np.zeros(D), np.zeros((D, R))
        for d in docs:
            shuffled, ptr, rng = document(d)
            left_to_right(shuffled, ptr, phi_wk, alpha, True, z, ndk, p, cum, log_weight[d:d + 1], per_doc[d:d + 1],
                          ratio_sum[d:d + 1], rng)
        se2 = ratio_sum.var(axis=1, ddof=1) / R
        settings = {"particles": R, "resample": True}
    else:
        # FILTERS independent particle filters of R particles; each gives an unbiased estimate
        # of p(w_d), their mean is the estimate and their spread its standard error.
        P = FILTERS * R
        ndk, ndk_next = np.zeros((P, K), dtype=np.int32), np.zeros((P, K), dtype=np.int32)
        p, cum = np.zeros(P), np.zeros(max(K, R))
        log_z = np.zeros((D, FILTERS))
        for d in docs:
            shuffled, ptr, rng = document(d)
            particle_filter(shuffled, ptr, phi_wk, alpha, FILTERS, ndk, ndk_next, p, cum, log_z[d:d + 1], rng)
        per_doc, se = _log_mean_and_se(log_z)
        se2 = se ** 2
        settings = {"particles": R, "filters": FILTERS, "resample": False}
    return {
        "log_likelihood": float(per_doc.sum()),
        "standard_error": float(math.sqrt(se2.sum())),
        "n_tokens": int(lengths.sum()),
        "n_docs": int(np.count_nonzero(lengths)),
        **settings,
        "token_order": "random permutation of each document's tokens, drawn from the seed and the document",
    }


def _importance(model: Model, aligned: Corpus, samples: int, entropy: int, progress: bool) -> dict:
    """Importance sampling from the prior: p(w_d) ~ mean_s p(w_d | theta_s), theta_s ~ Dir(alpha),
    each document's samples from its own stream (:func:`ldacli.random_streams.document_generator`)."""
    counts = aligned.counts
    D, K, S = aligned.n_docs, model.n_topics, samples
    indices = np.ascontiguousarray(counts.indices, dtype=np.int32)
    data = np.ascontiguousarray(counts.data, dtype=np.int32)
    indptr = np.ascontiguousarray(counts.indptr, dtype=np.int64)
    words, doc_ptr = aligned.tokens()
    keys, run_key = random_streams.content_keys(words, doc_ptr), random_streams.document_key(entropy)
    phi_wk = np.ascontiguousarray(model.phi.T, dtype=np.float64)
    alpha = np.asarray(model.alpha, dtype=np.float64)
    log_w = np.zeros((D, S))
    chunk = max(1, _THETA_CHUNK // (S * K))
    for s in tqdm(range(0, D, chunk), disable=not progress, file=sys.stderr, unit="chunk", leave=False):
        e = min(s + chunk, D)
        theta = np.ascontiguousarray(np.stack([random_streams.document_generator(run_key, keys[d]).dirichlet(alpha,
                                                                                                               size=S)
                                               for d in range(s, e)]))
        ptr = np.ascontiguousarray(indptr[s:e + 1] - indptr[s])
        loglik_given_theta(indices[indptr[s]:indptr[e]], data[indptr[s]:indptr[e]], ptr, theta,
                           phi_wk, log_w[s:e])
    per_doc, se = _log_mean_and_se(log_w)
    lengths = aligned.doc_lengths
    return {
        "log_likelihood": float(per_doc.sum()),
        "standard_error": float(math.sqrt(np.sum(se ** 2))),
        "n_tokens": int(lengths.sum()),
        "n_docs": int(np.count_nonzero(lengths)),
        "samples": S,
    }
