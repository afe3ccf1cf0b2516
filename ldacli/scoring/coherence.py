"""Topic coherence of a model's top words against a reference corpus: UMass and NPMI.

Both measures count documents, not tokens: ``D(w)`` is the number of reference documents that
contain word ``w`` and ``D(w, v)`` the number that contain both. Only the top-N words of each
topic are looked at, in the order of the model's ``top_words`` (decreasing probability, ties by
word id), and only their co-occurrences are computed, from a binary document-term matrix kept
sparse; nothing of size V x V is formed.

* **UMass** (Mimno, Wallach, Talley, Leenders & McCallum 2011), per topic, with ``eps = 1``::

      sum_{m=2..N} sum_{l=1..m-1} log((D(v_m, v_l) + eps) / D(v_l))

  the sum over the N(N-1)/2 ordered pairs, each word conditioned on a higher-ranked one.
  Always <= about 0; closer to 0 is more coherent. (gensim's ``u_mass`` is this divided by
  the number of pairs.) A pair whose higher-ranked word occurs in no reference document is
  skipped and counted in ``skipped_pairs``.
* **NPMI** (Bouma 2009) with document probabilities ``P(w) = D(w) / D``, per topic the mean
  over the N(N-1)/2 unordered pairs of::

      log((P(w, v) + eps) / (P(w) P(v))) / -log(P(w, v) + eps),   eps = 1e-12

  in [-1, 1] (1: the words always occur together, 0: independent, about -1: never together),
  the epsilon convention of Roeder et al. (2015) and gensim's ``c_npmi``. A pair with a word
  that occurs in no reference document is skipped.

The average over topics is the plain mean of the per-topic values (skipped topics, whose every
pair was skipped, are left out and are ``nan``).

Two measures of how distinct the topics are, from the model alone: :func:`diversity`, the share of
distinct words among all topics' top words (Dieng, Ruiz & Blei 2020), and :func:`exclusivity`, the
mean over topics and their top words of ``phi_kw / sum_j phi_jw`` (how much of a word's weight is
its topic's; the exclusivity half of Roberts et al.'s FREX).
"""

from __future__ import annotations

import math
import os

import numpy as np
import scipy.sparse as sp

from ldacli import checks
from ldacli.api_input import as_corpus, as_model
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.detect import FORMATS
from ldacli.corpora.formats.read import read_corpus
from ldacli.errors import LdacliError
from ldacli.model import TOP_WORDS, Model
from ldacli.settings import Choice, Setting, Text

MEASURES = ("umass", "npmi")
EPSILON = {"umass": 1.0, "npmi": 1e-12}

MEASURE = Setting("coherence", Choice(MEASURES), None,
                  "Also score each topic's top words by how often they occur in the same documents: umass "
                  "(Mimno et al. 2011; the sum over the N(N-1)/2 rank-ordered pairs of log((D(w_m, w_l) + 1) / "
                  "D(w_l)), D = document counts; nearer 0 is better) or npmi (Bouma 2009; the mean over pairs of "
                  "log((P(w,v) + eps) / (P(w) P(v))) / -log(P(w,v) + eps), eps 1e-12; in [-1, 1], higher is better).")


def top_word_ids(phi: np.ndarray, n: int) -> np.ndarray:
    """(K, n) int64: each topic's ``n`` most probable word ids, ties broken by word id."""
    n = min(n, phi.shape[1])
    ids = np.arange(phi.shape[1])
    return np.array([np.lexsort((ids, -row))[:n] for row in phi], dtype=np.int64).reshape(phi.shape[0], n)


def _pair_scores(measure: str, co: np.ndarray, df: np.ndarray, n_docs: int, eps: float) -> tuple[float, int]:
    """One topic's score from its words' co-document counts ``co`` (N, N) and ``df`` (N,)."""
    N = df.size
    values = []
    skipped = 0
    for m in range(1, N):
        for l in range(m):
            if measure == "umass":
                if df[l] == 0:
                    skipped += 1
                    continue
                values.append(math.log((co[m, l] + eps) / df[l]))
            else:
                if df[l] == 0 or df[m] == 0:
                    skipped += 1
                    continue
                p_joint = co[m, l] / n_docs
                p_m, p_l = df[m] / n_docs, df[l] / n_docs
                values.append(math.log((p_joint + eps) / (p_m * p_l)) / -math.log(p_joint + eps))
    if not values:
        return float("nan"), skipped
    return (float(sum(values)) if measure == "umass" else float(np.mean(values))), skipped


def codocument_counts(top: np.ndarray, reference: Corpus) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each row of ``top`` (word ids of ``reference``'s vocabulary, a topic's top words in
    order), ``(co, df)``: ``co`` (N, N) the number of ``reference``'s documents that contain both
    words (its diagonal: each word's), ``df`` (N,) each word's document count. Only the top
    words' columns are looked at, kept sparse."""
    used = np.unique(top)
    # Binary document-term matrix over the top words only, column-major for slicing.
    binary = sp.csc_array((reference.counts[:, used] > 0).astype(np.int64))
    column = {int(w): i for i, w in enumerate(used)}
    df_all = np.asarray(binary.sum(axis=0)).ravel()
    out = []
    for words in top:
        cols = [column[int(w)] for w in words]
        sub = binary[:, cols]
        out.append(((sub.T @ sub).toarray(), df_all[cols]))
    return out


def scores(measure: str, counts: list[tuple[np.ndarray, np.ndarray]], n_docs: int) -> tuple[list[float], list[int]]:
    """Each topic's ``measure`` and its skipped pairs, from :func:`codocument_counts`."""
    pairs = [_pair_scores(measure, co, df, n_docs, EPSILON[measure]) for co, df in counts]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def coherence(model: Model, reference: Corpus, *, measure: str = "umass", top_words: int = TOP_WORDS.default) -> dict:
    """Coherence of each of ``model``'s topics against ``reference`` (see the module docstring).

    ``model`` may be a model file's path, ``reference`` anything :func:`ldacli.api_input.as_corpus`
    takes (a path, a Corpus, texts, a matrix with its words). The reference corpus's words are
    matched to the model's vocabulary by string. Returns a
    dict: ``measure``, ``top_words``, ``epsilon``, ``per_topic`` (list of K floats, ``nan`` when
    every pair of a topic was skipped), ``mean`` (over the topics that have a value),
    ``skipped_pairs`` (list of K ints), ``reference_docs`` (D of the reference).
    """
    measure = checks.choice("measure", measure, MEASURES)
    top_words = checks.count("top_words", top_words, 2)
    model = as_model(model)
    reference = as_corpus(reference, argument="reference", model=model)
    aligned, _ = reference.align(model.vocab)
    top = top_word_ids(model.phi, top_words)
    per_topic, skipped = scores(measure, codocument_counts(top, aligned), aligned.n_docs)
    values = [v for v in per_topic if not math.isnan(v)]
    return {
        "measure": measure,
        "top_words": int(top.shape[1]),
        "epsilon": EPSILON[measure],
        "per_topic": per_topic,
        "mean": float(np.mean(values)) if values else float("nan"),
        "skipped_pairs": skipped,
        "reference_docs": aligned.n_docs,
    }


DIVERSITY_WORDS = 25
EXCLUSIVITY_WORDS = 10


def diversity(phi: np.ndarray, top_words: int = DIVERSITY_WORDS) -> float:
    """The share of distinct words among the ``top_words`` most probable words of every topic of
    ``phi`` (K, V): 1 when no two topics share a top word, 1/K when all have the same ones. A
    vocabulary of fewer than K x ``top_words`` words leaves each topic V // K words of its own
    at most: then each topic's V // K most probable words are counted, so that the measure
    still reaches 1 when no two topics share a top word."""
    top = top_word_ids(phi, max(1, min(top_words, phi.shape[1] // phi.shape[0])))
    return float(np.unique(top).size / top.size)


def word_exclusivity(phi: np.ndarray, top_words: int = EXCLUSIVITY_WORDS) -> np.ndarray:
    """(K, top_words): ``phi_kw / sum_j phi_jw`` of each topic's ``top_words`` most probable
    words, in their order: how much of a word's weight is its topic's."""
    top = top_word_ids(phi, top_words)
    share = phi / np.maximum(phi.sum(axis=0, keepdims=True), 1e-300)
    return np.take_along_axis(share, top, axis=1)


def exclusivity(phi: np.ndarray, top_words: int = EXCLUSIVITY_WORDS) -> float:
    """The mean over topics and their ``top_words`` most probable words of ``phi_kw / sum_j
    phi_jw`` (:func:`word_exclusivity`): 1 when each top word belongs to its topic alone, 1/K
    when every topic weighs it alike."""
    return float(np.mean(word_exclusivity(phi, top_words)))


REFERENCE = Setting("corpus", Text(path=True), None,
                    "Corpus whose documents are counted for coherence (a report also shows its prevalence and "
                    "representative documents).",
                    default_help="the training corpus recorded in the model, when it can be found unchanged")


def training_reference(model: Model, option: str = "--corpus") -> Corpus:
    """Re-read the corpus ``model`` was trained on, from ``params``, and check it is the same.

    The file is ``params["corpus_source"]`` (relative paths are taken from the current folder),
    read as ``params["corpus_format"]`` with the model's vocabulary fixed and text tokenized by its
    tokenizer (:meth:`~ldacli.model.Model.reading`), which reproduces the training counts for
    every format (the vocabulary rules, :mod:`ldacli.corpora.vocab_rules`, only ever removed words that
    are not in the vocabulary). Raises :class:`LdacliError` when there is no such file or its
    fingerprint is not ``params["corpus_fingerprint"]``: then the reference must be given (the
    message says with ``option``).
    """
    p = model.params
    source, fmt, fingerprint = p.get("corpus_source"), p.get("corpus_format"), p.get("corpus_fingerprint")
    hint = f"give the reference corpus with {option}"
    if not source or not fingerprint:
        raise LdacliError(f"the model does not record its training corpus; {hint}")
    if source == "-" or not os.path.exists(source):
        where = "standard input" if source == "-" else f"{source!r}, which does not exist here"
        raise LdacliError(f"the model was trained on {where}; {hint}")
    fmt = fmt if fmt in FORMATS else "auto"
    try:
        corpus = read_corpus(source, format=fmt, stop_words=None, **model.reading())
    except LdacliError as exc:
        raise LdacliError(f"cannot re-read the training corpus: {exc}; {hint}") from None
    if corpus.fingerprint() != fingerprint:
        raise LdacliError(f"{source}: expected the training corpus (fingerprint {fingerprint[:12]}...), "
                          f"found a different one (fingerprint {corpus.fingerprint()[:12]}...); the file "
                          f"changed or was read with another vocabulary; {hint}")
    return corpus
