"""Updates: a night's documents added to a model (``train NIGHT --update MODEL``), at a cost set by
the night, not by the corpus the model has seen.

The parent model's topic-word evidence ``E_kw`` (the word-topic counts its phi was computed from,
averaged over the states it summed, plus the evidence it carried itself when it was an update) is
the prior of a collapsed Gibbs run on the night's documents alone: ``beta_kw = beta + d E_kw``,
``d`` the decay of an update (1, or ``2^(-1/H)`` with a half-life of ``H`` updates). That is the
topic-word posterior the parent's assignments give, so the night's tokens are drawn as a full run
would draw them with the old tokens' topics held where they are; the new model's phi is computed
from the night's counts under it, and its evidence (``d E`` plus the night's counts) is what the
next update starts from. On-line LDA (AlSumait, Barbara & Domeniconi, ICDM 2008) carries the
previous counts as the next prior in the same way; holding old assignments fixed is the
incremental Gibbs sampler of Canini, Shi & Griffiths (AISTATS 2009) without its rejuvenation.

Held so, the old evidence leaves a theme that is new in the night no topic of its own: every
topic holds thousands of old tokens that the night's few cannot move. So an update frees topics
for the night (``free_topics``, 1 by default): the pair of topics whose merging loses the least
evidence (:func:`cheapest_merges`: two halves of one theme, or a topic of little evidence, such
as one that faded under a half-life) is chosen, and the smaller one's evidence is left out of the
night's prior, so that the run may give the topic a new theme. At the end (:func:`merged`,
:func:`taken`) the freed topic is kept as a new topic when the birth gains, and more than the merge
loses, both in the collapsed joint likelihood ``log p(w, z)``, words and documents: the night's
tokens on it under a topic of their own (its phi integrated out) against the old topic that
explains them best, and the old evidence of the pair as one topic against two, each with what
its documents gain when two topics that share them become one (:func:`merged_documents`), a
birth and a merge judged together by the whole objective as in Hughes & Sudderth's memoized
online variational inference (NIPS 2013): its evidence joins the other topic of the pair, and
the old documents count it there; otherwise it gets its own evidence back. Canini et al.'s rejuvenation
(resampling a sample of old tokens with the night), more sweeps, and freeing the topics of least
evidence were measured against it: docs/guide/retraining.md gives the measurements that chose it
and the refresh schedule.

The new model continues the parent as a warm start does (topic ids and names, descent, lineage),
records ``params["update"]``, keeps the parent's priors (not learned: they would be learned from
the night alone) and describes every document seen so far: the parent's with the proportions it
gave them, then the night's. The driver (:mod:`ldacli.methods.driver`) calls these.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from ldacli._update import root_overlaps
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.counts import starts
from ldacli.corpora.formats.read import READING, READING_FOR_MODEL
from ldacli.errors import LdacliError, SettingError
from ldacli.files.fileio import file_sha256
from ldacli.files.npz import array, blocks, let_go, mapped, read_file
from ldacli.methods.base import Start
from ldacli.methods.priors import alpha_of_topic
from ldacli.methods.warm_start import FOLD_IN_STREAM, FOLD_IN_SWEEPS
from ldacli.model import DOCUMENTS, READABLE_VERSIONS, Model
from ldacli.scoring.fixed_topics import fold_in
from ldacli.settings import FIXED, Integer, Real, Setting, Text
from ldacli.topic_counts import DOC_MEMBERS, SEGMENTS, WORD_MEMBERS, SparseRows, TopicCounts
from ldacli.topic_names import with_names
from ldacli.topic_word_prior import TopicWordPrior

SETTINGS = (
    Setting("update", Text(path=True), None,
            "Add this night's documents (CORPUS holds only them) to this model, at a cost set by the night: its "
            "topics' evidence is the prior of a run on the night alone; the new model continues its topic ids and "
            "describes its documents and the night's. Its method, topics, seeds, priors, vocabulary and tokenizer "
            "apply.",
            FIXED),
    Setting("half_life", Real(0, min_open=True), None,
            "With --update: old evidence halves every this many updates (each update weighs it 2^(-1/H)), so that "
            "themes that stop coming fade.", FIXED, default_help="none: old evidence keeps its weight"),
    Setting("free_topics", Integer(0), lambda values: FREE_TOPICS if values.get("update") is not None else None,
            "With --update: free N topics for the night's new themes, each merged into another where that loses the "
            "least evidence (a theme split in two, or one faded); one the night does not take for a theme of its own "
            "gets its evidence back (0: none freed).", FIXED, default_help="1 with --update"),
)
# Topics an update frees for the night by default (measured: docs/guide/retraining.md).
FREE_TOPICS = 1
# An update's ``auto`` sampler is the dense one when the night's words have prior cells (old
# evidence) in at least this share of the K topics, averaged over the night's tokens: the sparse
# sampler then walks lists nearly K long, while the dense one reads each word's prior as a row,
# whatever its cells. Whole updates of a 200,009-token night, one thread, dense against sparse
# (docs/guide/retraining.md, "What an update costs"): share 0.86 (a model of 100 M tokens, K=100)
# 0.66x the time, 0.61 (2 M, K=100) 0.75x, 0.55 (2 M, K=200) 0.87x, 0.49 (2 M, K=400) 0.96x,
# 0.027 (2 M, K=1000) 4.4x.
DENSE_PRIOR_SHARE = 0.5

# Settings an update takes from its model, or which begin, align or seed a run otherwise: why each
# does not apply beside it.
REFUSED = {
    "warm_start": "the model it continues is its start",
    "add_topics": "it keeps its model's topics (retrain to add some)",
    "remove_topics": "it keeps its model's topics (retrain to remove some)",
    "align_to": "it keeps its model's topic ids",
    "seed_words": "it keeps its model's topics and their seeds",
    "seed_strength": "it keeps its model's seeds as they are",
    "alpha": "it keeps its model's priors",
    "beta": "it keeps its model's priors",
    "optimize_interval": "it keeps its model's priors (learned from the night alone they would drift)",
    "optimize_burn_in": "it keeps its model's priors",
    "holdout": "it trains on the whole night",
    "patience": "it trains on the whole night",
}
METHOD = "cgs"

log = logging.getLogger("ldacli")


def check_given(given: dict) -> None:
    """Refuse, before anything is read, what cannot go with an update (or a half-life without one)."""
    if given.get("update") is None:
        if given.get("half_life") is not None:
            raise SettingError("half_life", "half_life weighs the old evidence of update: give update too", ("update",))
        if given.get("free_topics") is not None:
            raise SettingError("free_topics", "free_topics frees topics of the model of update: give update too",
                               ("update",))
        return
    for name, why in REFUSED.items():
        if given.get(name) is not None:
            raise SettingError(name, f"{name} does not apply beside update: {why}", ("update",))
    for s in READING:
        if s not in READING_FOR_MODEL and given.get(s.name) is not None:
            raise SettingError(s.name, f"{s.name} does not apply beside update: the night is read as its model "
                                       f"reads documents (its vocabulary and tokenizer)", ("update",))
    if given.get("method") not in (None, METHOD):
        raise SettingError("method", f"method must be {METHOD} beside update (its model's), found {given['method']}",
                           ("update",))


def decay(half_life: float | None) -> float:
    """The weight an update gives its parent's evidence."""
    return 1.0 if half_life is None else float(2.0 ** (-1.0 / half_life))


def parent_of(path: str) -> Model:
    """The model at ``path``, which an update continues, checked for what an update needs: a
    collapsed Gibbs model that records its counts. Its documents' ids are a NumPy text array, as
    its file holds them (:func:`document_ids`: a list of a million ids would hold 60 MB more);
    what it says of its documents is read and checked once the update is settled
    (:func:`record`), and mapped from the file at the end (:func:`merged`), so that the run does
    not hold it (at 100 M tokens and K=1000, 56 M cells, 168 MB, beside the night's first draw)."""
    parent = Model.load(path, documents=False)
    method = parent.params.get("method")
    if method != METHOD:
        raise LdacliError(f"{path}: an update continues a model of method {METHOD}, found one of method {method}: "
                          f"retrain with warm_start")
    if parent.counts is None:
        raise LdacliError(f"{path}: expected a model that records its word-topic counts (written by ldacli 0.3 or "
                          f"later), found one without: retrain it once, then update it")
    parent.doc_ids = document_ids(path)
    return parent


# A model file's members that an update reads apart from its topics (:func:`read_documents`)
DOCUMENT_MEMBERS = ("kind", "format_version", "params", *(m for m in DOCUMENTS if m != "doc_ids"), SEGMENTS)
# Document ids compared with a night's at a time (:func:`repeated`)
ID_CHUNK = 1 << 16


def released(parent: Model, path: str) -> None:
    """Let go of what an update's run does not use of ``parent`` (:func:`parent_of`, read from
    ``path``) once its evidence is taken (:func:`settle`; a resumed run's once it is recorded):
    its word-topic counts, the evidence it carried and its documents' ids (18, 60 and 19 MB at 100
    M tokens) become memory maps of its file (the same arrays: its reader keeps them as the file
    holds them), not read into memory until :func:`merged` uses them, once :func:`restored` has
    checked that the file is still the one read (beside the night's run, which does not grow with
    the model)."""
    counts = parent.counts
    names = WORD_MEMBERS + (TopicWordPrior.ARRAYS if counts.carried else ()) + ("doc_ids",)
    held = mapped(path, names)
    prior = counts.prior
    if counts.carried:
        prior = TopicWordPrior(prior.n_words, prior.n_topics, *(held[n] for n in TopicWordPrior.ARRAYS))
    parent.counts = dataclasses.replace(counts, words=SparseRows(*(held[n] for n in WORD_MEMBERS), counts.n_words),
                                        prior=prior)
    parent.doc_ids = held["doc_ids"]


def restored(path: str, sha256: str) -> None:
    """Refuse, in one line, an update whose model's file at ``path`` is no longer the one the
    update recorded (``sha256``) at its end, before anything is read from it again
    (:func:`released`): another run wrote it."""
    if file_sha256(path) != sha256:
        raise LdacliError(f"{path}: the model changed while it was updated (another run wrote it?): update it again")


def read_through(counts: TopicCounts) -> None:
    """Let go of the pages of ``counts``' word-topic counts and carried prior, mapped from the
    model's file (:func:`released`), once :func:`evidence` has read them: nothing reads them
    again, and held they would count in the update's memory beside its documents (60 MB of
    prior, after updates of a model of 100 M tokens)."""
    words = counts.words
    arrays = [words.ptr, words.columns, words.sums, words.large]
    if counts.carried:
        arrays += counts.prior.arrays().values()
    for a in arrays:
        let_go(np.asarray(a))


def document_ids(path: str) -> np.ndarray:
    """The document ids of the model at ``path``, a NumPy text array, as the file holds them."""
    arrays, _ = read_file(path, "model", READABLE_VERSIONS, members=("kind", "format_version", "params", "doc_ids"))
    return array(path, arrays, "doc_ids", "U", (None,))


def read_documents(path: str, parent: Model, n_docs: int, checked: bool = True) -> TopicCounts:
    """``parent``'s counts with its ``n_docs`` documents', read from its file at ``path``, checked
    as :meth:`Model.load` checks them (:meth:`TopicCounts.with_documents`); ``checked=False``: as
    they are, memory maps of a file whose sha256 says it is the one checked (the new model's file
    takes them from the page cache, not from a copy: 0.5 s at 100 M tokens and K=1000)."""
    if not checked:
        arrays = mapped(path, DOC_MEMBERS, optional=(SEGMENTS,))
    else:
        arrays, _ = read_file(path, "model", READABLE_VERSIONS, members=DOCUMENT_MEMBERS)
    return parent.counts.with_documents(path, arrays, n_docs, checked=checked)


def repeated(night_ids: list[str], ids: np.ndarray) -> str | None:
    """The first of ``night_ids`` that is among ``ids`` (a model's, a NumPy text array, compared a
    chunk at a time: a set of them would grow with the corpus), or None."""
    ours = set(night_ids)
    found = set()
    for lo in range(0, ids.size, ID_CHUNK):
        found.update(d for d in ids[lo:lo + ID_CHUNK].tolist() if d in ours)
    return next((d for d in night_ids if d in found), None)


def model_topic(held) -> np.ndarray:
    """(K,) int64: the model's id of each of the run's topics (``held``, a model's counts, keeps
    the run's ids; an alignment renumbered the model's)."""
    return np.arange(held.n_topics, dtype=np.int64) if held.order is None else np.argsort(held.order)


def model_ids(held, prior: TopicWordPrior) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of ``prior`` (in the run's topic ids, as ``held``, a model's counts, keeps
    them) as ``(words, topics, values)``, int64 and float64, in the model's topic ids."""
    return prior.words.astype(np.int64), model_topic(held)[prior.topics], prior.extra


def seeds(parent: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The topic-word prior the parent's run was given (its seeded topics' seed words,
    ``params["topic_word_prior"]``), as cells in its model ids; None without one. An update
    samples under it at full weight, beside the evidence, and records it again, so that seeds
    neither fade with a half-life nor count as evidence."""
    recorded = parent.params.get("topic_word_prior")
    if recorded is None:
        return None
    given = TopicWordPrior.from_params(recorded, len(parent.vocab), parent.n_topics, "params 'topic_word_prior'")
    return model_ids(parent.counts, given)


def summed(V: int, *parts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of ``parts`` (each ``(words, topics, values)``) with each cell's values added
    (in the order given), sorted by topic then word."""
    words, topics, values = (np.concatenate(x) for x in zip(*parts))
    cells, where = np.unique(topics.astype(np.int64) * V + words, return_inverse=True)
    return cells % V, cells // V, np.bincount(where, weights=values, minlength=cells.size)


def evidence(parent: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parent's topic-word evidence as cells ``(words, topics, values)`` (int32, int32 and
    float64 > 0; topics are its ids), by word then topic (:func:`by_word`, the order of a
    prior and of the topics' roots): the word-topic counts its phi is computed from, averaged over the states summed
    (:meth:`~ldacli.model.Model.word_topic_counts`), plus the evidence it carried itself as its
    prior when it was an update (that prior less its seeds, :func:`seeds`): added as scipy adds
    sparse matrices, a pass over the cells of each (sorting the 7.4 M cells of an update's
    update at 100 M tokens took 1.2 s and 300 MB), each cell's values added in the order
    :func:`summed` adds them."""
    held = parent.counts
    K, V = parent.n_topics, len(parent.vocab)
    carried = held.carried and held.prior is not None
    words, topics, values = held.word_means()
    if not carried:
        keep = values > 0
        if not keep.all():
            words, topics, values = words[keep], topics[keep], values[keep]
        del keep
    total = topic_rows(words, topics, values, K, V)
    del words, topics, values  # (each copy let go as soon as it is not needed: the peak of settling)
    total = total.tocsc()  # (by word: as the prior, then the result)
    if not carried:
        return cells_by_word(total)
    at, run_topics, extra = held.prior.by_word()  # (topics in the run's ids: in the model's, put in order again)
    if held.order is None:
        before = sp.csc_matrix((extra, run_topics, at), shape=(K, V))
    else:  # (sorted in place: copies, not the prior's arrays)
        before = sp.csc_matrix((extra.copy(), model_topic(held)[run_topics], at), shape=(K, V))
        before.sort_indices()
    total = total + before
    del before
    given = seeds(parent)
    if given is not None:
        total = total - sp.csc_matrix((given[2], (given[1], given[0])), shape=(K, V))
    total.data[total.data < 0] = 0.0  # (what the seeds leave of a cell: none, but for rounding)
    total.eliminate_zeros()
    return cells_by_word(total)


def by_word(words: np.ndarray, topics: np.ndarray, values: np.ndarray, K: int, V: int
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells (each once) by topic then word, as a model's counts hold them, by word then topic,
    as a prior holds them: the (K, V) matrix's transpose, by scipy in one pass over the cells
    (sorting them took three times as long: 0.3 s at 100 M tokens). Cells in another order go
    through COO, which adds a cell given twice (:func:`prior`'s merged pairs: two values, whose
    sum is the same in either order)."""
    if topics.size > 1 and not bool(np.all(topics[1:] >= topics[:-1])):
        return cells_by_word(sp.csc_matrix((values, (topics, words)), shape=(K, V)))
    return cells_by_word(topic_rows(words, topics, values, K, V).tocsc())


def topic_rows(words, topics, values, K: int, V: int) -> sp.csr_matrix:
    """The (K, V) matrix of cells by topic then word (each once), as CSR on their own arrays."""
    return sp.csr_matrix((values, words, starts(topics, K)), shape=(K, V))


def cells_by_word(columns: sp.csc_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of a (K, V) CSC matrix (its rows in order in each column) as ``(words, topics,
    values)``, int32, int32 and float64, by word then topic."""
    V = columns.shape[1]
    return (np.repeat(np.arange(V, dtype=np.int32), np.diff(columns.indptr)),
            columns.indices.astype(np.int32, copy=False), columns.data)


def overlaps(words, topics, values, K: int, V: int, totals: np.ndarray | None = None) -> np.ndarray:
    """(K, K) float64: the topics' Bhattacharyya coefficients ``sum_w sqrt(p_iw p_jw)`` above the
    diagonal (each pair of topics once; 0 on and below it), their word distributions ``p`` from
    their evidence (cells, by word then topic as :func:`evidence` gives them, or by topic then
    word; each topic's ``totals`` when computed already; a topic without evidence has none): the
    products of each word's pairs of cells' roots, summed word by word
    (:func:`~ldacli._update.root_overlaps`, no array of the roots). scipy's sparse product of the
    roots took 1.2 s for the 4.4 M cells of 100 M tokens and K=1000, dense blocks of words 0.15 s
    at K=100; this takes 0.06 and 0.05."""
    in_order = (words[1:] > words[:-1]) | ((words[1:] == words[:-1]) & (topics[1:] > topics[:-1]))
    if not bool(np.all(in_order)):
        words, topics, values = by_word(words, topics, values, K, V)
    if totals is None:
        totals = np.bincount(topics, weights=values, minlength=K)
    out = np.zeros((K, K))
    root_overlaps(starts(words, V), topics.astype(np.int32, copy=False), np.ascontiguousarray(values, dtype=np.float64),
                  np.asarray(totals, dtype=np.float64), np.zeros(K), out)
    return out


def cheapest_merges(words, topics, values, K: int, V: int, n: int, fixed=()) -> list[tuple[int, int]]:
    """The ``n`` pairs of topics whose merging loses the least evidence (no topic in two pairs,
    none of the topics ``fixed``: seeded ones; ties: the lowest ids), each as ``(freed, into)``:
    the topic of less evidence, then the one it is merged into. What a merge of topics i and j
    loses is measured as the harmonic mean of their evidence, ``T_i T_j / (T_i + T_j)``, times
    the squared Hellinger distance of their word distributions, ``1 - sum_w sqrt(p_iw p_jw)``:
    small for two topics alike (a theme split in two) and for a topic of little evidence (a theme
    that faded, or one that never formed)."""
    totals = np.bincount(topics, weights=values, minlength=K)
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.nan_to_num(np.outer(totals, totals) / np.add.outer(totals, totals))
    cost = weight * (1.0 - overlaps(words, topics, values, K, V, totals))
    cost[np.tril_indices(K)] = np.inf  # each pair once, no topic with itself
    cost[list(fixed), :] = np.inf
    cost[:, list(fixed)] = np.inf
    pairs = []
    for _ in range(n):
        a, b = (int(x) for x in np.unravel_index(int(np.argmin(cost)), cost.shape))
        if not np.isfinite(cost[a, b]):
            break
        freed, into = (b, a) if totals[b] < totals[a] or (totals[b] == totals[a] and b > a) else (a, b)
        pairs.append((freed, into))
        cost[[a, b], :] = np.inf
        cost[:, [a, b]] = np.inf
    return pairs


def folding(pairs, K: int) -> np.ndarray:
    """(K,) int64: each topic's id once ``pairs`` (``(freed, into)``) are merged."""
    fold = np.arange(K, dtype=np.int64)
    for freed, into in pairs:
        fold[freed] = into
    return fold


def prior(parent: Model, weight: float, merged_pairs=(), *, freed=(), cells=None, meets=None) -> TopicWordPrior:
    """The prior of an update of ``parent``: its evidence (``cells``, when computed already)
    weighed ``weight`` (:func:`decay`); the topics ``freed`` without theirs (their prior is beta
    alone: the night's run is free to give them a theme); each pair ``(freed, into)`` of
    ``merged_pairs`` merged, the first topic's evidence moved to the second; plus the parent's
    seeds at their full weight (:func:`seeds`: no seeded topic is freed or merged).

    ``meets`` ((V,) bool: the words of the night), for the night's run: the cells of the other
    words summed, topic by topic, on one of them. The run never draws such a word, so their
    cells matter only through each topic's total, which the lumped cell keeps (and a cell
    without tokens adds nothing to the trace); the run holds the cells of the night's words
    alone, not the model's evidence, which grows with it. The model's prior is made again at
    the end, whole (:func:`merged`)."""
    words, topics, values = evidence(parent) if cells is None else cells
    V, K = len(parent.vocab), parent.n_topics
    given = seeds(parent)
    if meets is not None and given is None and not merged_pairs:
        return _night_prior(V, K, words, topics, values, weight, freed, meets)
    if freed:
        keep = ~np.isin(topics, np.asarray(freed, dtype=np.int64))
        words, topics, values = words[keep], topics[keep], values[keep]
    if merged_pairs:  # (a freed topic's cells moved to the one merged into)
        topics = folding(merged_pairs, K).astype(topics.dtype)[topics]
    if weight != 1.0:
        values = values * weight
    if merged_pairs:  # (in a prior's order again, a moved cell added to the one's own: scipy's, not a sort of them all)
        words, topics, values = by_word(words, topics, values, K, V)
    if given is not None:  # (a few cells: added here, before the night's absent words are lumped)
        words, topics, values = summed(V, (words, topics, values), given)
    if meets is not None:
        return _night_prior(V, K, words, topics, values, 1.0, (), meets)
    return TopicWordPrior.added(V, K, words, topics, values, source="update")


def _night_prior(V: int, K: int, words, topics, values, weight: float, freed, meets) -> TopicWordPrior:
    """:func:`prior` for the night's run (``meets``), from cells not yet weighed ``weight`` nor
    rid of the topics ``freed``: both done in the one pass that keeps the cells of the night's
    words and lumps the others, so that only those are copied (at 100 M tokens, 1.5 M of 3.3 M
    cells)."""
    on = meets[words]
    if freed:
        kept = ~np.isin(topics, np.asarray(freed, dtype=np.int64))
        off = ~on & kept
        on &= kept
        del kept
    else:
        off = ~on
    absent = np.flatnonzero(~meets)
    rest = np.bincount(topics[off], weights=values[off] * weight if weight != 1.0 else values[off], minlength=K) \
        if absent.size else np.zeros(K)
    del off
    words, topics, values = words[on], topics[on], values[on]
    if weight != 1.0:
        values *= weight
    lumped = np.flatnonzero(rest > 0)
    if lumped.size:  # (where their word's cells go in cells by word: then the prior need not sort them all)
        at = int(np.searchsorted(words, absent[0]))
        words = np.insert(words, at, np.full(lumped.size, absent[0], words.dtype))
        topics = np.insert(topics, at, lumped.astype(topics.dtype))
        values = np.insert(values, at, rest[lumped])
    return TopicWordPrior.added(V, K, words, topics, values, source="update")


def first_state(night: Corpus, values: Mapping, prior: TopicWordPrior, freed) -> Start:
    """The night's first topics, as a warm start draws them (:func:`~ldacli.methods.warm_start.warm_start_state`):
    :data:`~ldacli.methods.warm_start.FOLD_IN_SWEEPS` Gibbs sweeps under the topics as the run's
    prior has them, ``(beta + d E_kw) / (V beta + d E_k)``, a freed topic (no evidence) weighing
    the night's words by their frequency: a background that takes the tokens the old topics
    explain badly, where a new theme begins. Over the night's words alone (a (K, words of the
    night) array). ``prior`` and ``freed``: :func:`settle`'s. Deterministic given the run's seed."""
    K, beta = values["n_topics"], float(values["beta"])
    frequency = night.word_frequencies()
    present = np.flatnonzero(frequency)
    column = np.full(night.n_words, -1, np.int64)
    column[present] = np.arange(present.size)
    phi = np.full((K, present.size), beta)
    on = column[prior.words] >= 0
    np.add.at(phi, (prior.topics[on], column[prior.words[on]]), prior.extra[on])
    phi /= prior.topic_sums(beta)[:, None]
    freed = [j for j, _ in freed]
    if freed:
        background = frequency[present] + 1.0
        phi[freed] = background / background.sum()
    alpha = np.asarray(values["alpha"], dtype=np.float64)
    words, doc_ptr = night.tokens()
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(values["seed"], spawn_key=(FOLD_IN_STREAM,))))
    z = fold_in(phi, alpha, column[words].astype(np.int32), doc_ptr, sweeps=FOLD_IN_SWEEPS, rng=rng)
    return Start(z, alpha, beta)


def merged_words(words, topics, values, into: int, freed: int, V: int, beta: float) -> float:
    """What merging topic ``freed`` into ``into`` changes (nats) in the collapsed likelihood of
    the words of their evidence (``words, topics, values``, cells), ``log p(w | z)`` with phi
    integrated out under ``beta``: one Dirichlet-multinomial for both against one each (< 0:
    two topics fit their words better; near 0 for two alike, or a topic of little evidence)."""
    a = np.bincount(words[topics == into], weights=values[topics == into], minlength=V)
    b = np.bincount(words[topics == freed], weights=values[topics == freed], minlength=V)
    on = (a > 0) | (b > 0)
    a, b, vb = a[on], b[on], V * beta
    return float(np.sum(gammaln(a + b + beta) - gammaln(a + beta) - gammaln(b + beta)) + on.sum() * gammaln(beta)
                 - (gammaln(a.sum() + b.sum() + vb) - gammaln(a.sum() + vb) - gammaln(b.sum() + vb) + gammaln(vb)))


def merged_documents(into: np.ndarray, freed: np.ndarray, alpha_into: float, alpha_freed: float) -> float:
    """What putting each document's tokens of one topic (``freed``, (D,) counts) on another
    (``into``) changes (nats) in the collapsed likelihood of the documents' topics, ``log p(z |
    alpha)`` with theta integrated out: > 0 where documents hold both (two halves of a theme
    split their documents' tokens), about 0 where none does."""
    on = freed > 0  # (a document without tokens of it is unchanged)
    a, b = into[on], freed[on]
    return float(np.sum(gammaln(a + b + alpha_into) - gammaln(a + alpha_into) - gammaln(b + alpha_freed))
                 + on.sum() * gammaln(alpha_freed))


def documents_merged(held: TopicCounts, parent: Model, pairs, weight: float) -> list[float]:
    """:func:`merged_documents` of the parent's documents (``held``, its counts with them,
    :func:`read_documents`) for each pair ``(freed, into)``, their counts weighed ``weight`` as
    the evidence is: two columns taken for each."""
    run = np.arange(parent.n_topics) if held.order is None else np.asarray(held.order)  # (model id -> run id)
    states = held.doc_states.astype(np.float64)
    alpha = np.asarray(parent.alpha, dtype=np.float64)
    return [merged_documents(held.docs.column(int(run[i]), states) * weight,
                             held.docs.column(int(run[j]), states) * weight, float(alpha[i]), float(alpha[j]))
            for j, i in pairs]


def taken(model: Model, parent: Model, freed: list[dict], weight: float, cells=None) -> list[dict]:
    """Which freed topics the night's run took for a theme of its own, each judged by what it
    changes in the collapsed joint likelihood ``log p(w, z)``, words and documents, as Hughes &
    Sudderth judge a birth and a merge by the whole objective. For each of ``freed`` (the
    update's record, :func:`record`: the topic freed, the one it was merged into, what merging
    them gains on the parent's documents): the night's tokens on it; the old topic that explains
    them best (``best_old``, its phi from its evidence weighed ``weight``); ``gain``, what the
    freed topic gains on them against that topic: their likelihood under a topic of their own
    (phi integrated out under beta, so that a topic fitted to a few tokens is not credited with
    its fit) less that under the old topic's phi, less what the night's documents would gain
    holding them on the old topic (:func:`merged_documents`); ``loss``, what merging the pair
    loses of the old evidence, its words (:func:`merged_words`) less what its documents gain
    (``documents``). ``kept`` when the gain is positive and the larger: a theme the old topics
    explain badly, worth a merge of two topics its documents hardly tell apart. (A merge that
    gains by itself, as two halves of a theme in a model of a few sweeps do, is no reason to keep
    a topic that explains its tokens worse than an old one.)"""
    K, V, beta = parent.n_topics, len(parent.vocab), float(parent.beta)
    alpha = np.asarray(parent.alpha, dtype=np.float64)
    night = model.counts.word_topic_counts()
    values = night.sums / night.states
    words, topics, old = evidence(parent) if cells is None else cells
    if weight != 1.0:
        old = old * weight
    totals = np.bincount(topics, weights=old, minlength=K) + V * beta
    states = model.counts.doc_states.astype(np.float64)
    out = []
    for record in freed:
        topic, into = record["topic"], record["into"]
        on = night.topics == topic
        n_w, support = values[on], night.words[on]
        tokens = float(n_w.sum())
        gain, best = 0.0, topic
        if tokens > 0:
            own = float(np.sum(gammaln(n_w + beta) - gammaln(beta)) - (gammaln(tokens + V * beta) - gammaln(V * beta)))
            column = np.full(V, -1, np.int64)
            column[support] = np.arange(support.size)
            at = np.flatnonzero((column >= 0)[words])  # the old evidence of the words the freed topic took
            E = np.zeros((K, support.size))
            E[topics[at], column[words[at]]] = old[at]
            per_topic = np.log((E + beta) / totals[:, None]) @ n_w  # (K,)
            best = int(np.argmax(per_topic))
            docs = model.counts.docs
            on_best = 0.0 if best == topic else merged_documents(  # (the night's documents holding them on it)
                docs.column(best, states), docs.column(topic, states), alpha[best], alpha[topic])
            gain = own - float(per_topic[best]) - on_best
        loss = -(merged_words(words, topics, old, into, topic, V, beta) + float(record.get("documents", 0.0)))
        out.append({**record, "night_tokens": round(tokens, 1), "best_old": best, "gain": round(gain, 1),
                    "loss": round(loss, 1), "kept": bool(gain > max(loss, 0.0))})
    return out


def positional(ids) -> int | None:
    """The first number of ``ids`` (a list or a NumPy text array) that are their documents'
    positions (0, 1, 2, ... or 1, 2, 3, ...: formats whose documents have no ids of their own),
    or None."""
    ids = np.asarray(ids, dtype=np.str_)
    for base in (0, 1):
        if not ids.size or (ids[0] == str(base) and ids[-1] == str(ids.size - 1 + base) and numbered(ids, base)):
            return base
    return None


def numbered(ids: np.ndarray, base: int) -> bool:
    """Whether the NumPy text array ``ids`` holds ``base``, ``base + 1``, ... in decimal (no sign,
    no leading zero): its characters read as digits, a place at a time, :data:`ID_CHUNK` ids at a
    time (the positions made text took 0.1 s for 845,668 ids, and 24 bytes each)."""
    width = ids.dtype.itemsize // 4
    codes = ids.reshape(-1).view(np.uint32).reshape(ids.size, width)
    for lo in range(0, ids.size, ID_CHUNK):
        chunk = codes[lo:lo + ID_CHUNK]
        number = np.arange(lo + base, lo + base + chunk.shape[0], dtype=np.int64)
        digits = np.ones(number.size, np.int64)  # (how many each should have: 1 for 0 to 9, ...)
        for power in range(1, width):
            digits += number >= 10 ** power
        read = np.zeros(number.size, np.int64)
        for place in range(width):  # (a digit within its number's length, nothing after it)
            code = chunk[:, place].astype(np.int64) - 48
            inside = digits > place
            if not np.where(inside, (code >= 0) & (code <= 9), code == -48).all():
                return False
            read = np.where(inside, read * 10 + code, read)
        if not np.array_equal(read, number):
            return False
    return True


def night_over(night: Corpus, parent: Model, notes: bool = True) -> Corpus:
    """The night's documents over every word of the parent's vocabulary, in its order (the new
    model's phi has a row for each); tokens of words the parent never saw are left out, and said.
    Documents numbered by their position (LDA-C, UCI, Matrix Market, lines of text) are numbered
    after the parent's, as if appended to its corpus; ids of their own (a folder's file names)
    are kept."""
    if night.n_tokens == 0:
        raise LdacliError(f"{night.name}: expected a night with at least one token, found none")
    base = positional(night.doc_ids)
    before = None if base is None else positional(parent.doc_ids)
    if base is not None and before is not None:
        night = dataclasses.replace(night, doc_ids=[str(len(parent.doc_ids) + before + i)
                                                    for i in range(night.n_docs)])
    if list(night.vocab) == list(parent.vocab):  # (the model's list, not a second one of the same words)
        return dataclasses.replace(night, vocab=parent.vocab)
    aligned, dropped = night.align(list(parent.vocab), frozenset(parent.removed_words))
    if dropped and notes:
        log.warning("%s: %d tokens of words the model never saw are left out (an update keeps its model's "
                    "vocabulary; a full retrain takes new words in)", night.source, dropped)
    if aligned.n_tokens == 0:
        raise LdacliError(f"{night.name}: expected a night with tokens of the model's words, found none")
    return aligned


def settle(values: Mapping, given: dict, parent: Model, night: Corpus
           ) -> tuple[dict, tuple[tuple[int, int], ...], TopicWordPrior]:
    """An update's settings from its parent (its topics, priors; not learned), as the values of
    the settings it settles; the topics it frees for the night (``(freed, into)`` pairs,
    :func:`cheapest_merges`) and its topic-word prior (:func:`prior`). Refuse a night that repeats
    one of the parent's documents."""
    K = parent.n_topics
    if given.get("n_topics") is not None and values["n_topics"] != K:
        raise SettingError("n_topics", f"n_topics must be the {K} topics of the model of update, found "
                                       f"{values['n_topics']}", ("update",))
    again = repeated(list(night.doc_ids), np.asarray(parent.doc_ids, dtype=np.str_))
    if again is not None:
        raise LdacliError(f"{night.source}: document {again!r} is already in the model {values['update']} (an update "
                          f"adds new documents; retrain with warm_start to change old ones)")
    free = values["free_topics"]
    if free > K // 2:
        raise SettingError("free_topics", f"free_topics must be at most {K // 2} (half the {K} topics of the model of "
                                          f"update: a pair of topics frees one), found {free}", ("update",))
    cells = evidence(parent)
    released(parent, values["update"])  # (before the merge search and the prior: the peak of settling)
    given = seeds(parent)
    fixed = () if given is None else np.unique(given[1])
    freed = tuple(cheapest_merges(*cells, K, len(parent.vocab), free, fixed))
    settled = {"n_topics": K, "alpha": [float(a) for a in parent.alpha], "beta": float(parent.beta),
               "optimize_interval": 0}
    night_prior = prior(parent, decay(values["half_life"]), freed=[j for j, _ in freed], cells=cells,
                        meets=night.word_frequencies() > 0)
    if values["sampler"] == "auto" and prior_share(night_prior, night) >= DENSE_PRIOR_SHARE:
        settled["sampler"] = "dense"
    return settled, freed, night_prior


def prior_share(prior: TopicWordPrior, night: Corpus) -> float:
    """The share of the K topics in which the night's words have prior cells, averaged over its
    tokens (what :data:`DENSE_PRIOR_SHARE` weighs)."""
    frequency = night.word_frequencies()
    cells = np.bincount(prior.words, minlength=prior.n_words)
    return float(cells @ frequency) / max(1.0, float(frequency.sum())) / prior.n_topics


def record(parent: Model, values: Mapping, night: Corpus, freed, sha256: str) -> dict:
    """What an updated model records of its update (``params["update"]``): the model updated
    (its file's ``sha256``, as the lineage has it), the night's size, the weight of the old
    evidence, how many updates since a full run, and the topics freed for the night
    (``freed``: ``topic`` merged ``into`` another, and what that gains on the parent's
    documents, :func:`documents_merged`; which the night kept is said at the end,
    :func:`merged`); and the parent's seeded topics and their prior (:func:`seeds`, in its
    model's ids), which the next update keeps in turn."""
    before = parent.params.get("update") or {}
    path, half_life = values["update"], values["half_life"]
    given = seeds(parent)
    kept = {}
    seeded = parent.params.get("seeded")
    if seeded:  # (its topics in the parent's model ids, which the update keeps: an aligned parent's run ids mapped)
        ids = model_topic(parent.counts)
        kept["seeded"] = {**seeded, "topics": [{**t, "topic": int(ids[t["topic"]])} for t in seeded["topics"]]}
    if given is not None:
        kept["topic_word_prior"] = TopicWordPrior.of_cells(len(parent.vocab), parent.n_topics, *given).params()
    # (the model's documents read and checked here, once the update is settled, and let go: the
    # run does not hold them; a damaged or doctored file is refused before the night is sampled)
    merging = documents_merged(read_documents(path, parent, len(parent.doc_ids)), parent, freed, decay(half_life))
    return {**kept, "update": {"path": os.path.abspath(path), "sha256": sha256, "night_docs": night.n_docs,
                       "night_tokens": night.n_tokens, "half_life": half_life, "decay": decay(half_life),
                       "since_full": int(before.get("since_full", 0)) + 1,
                       "parent_docs": len(parent.doc_ids),
                       "freed": [{"topic": int(j), "into": int(i), "documents": round(g, 1)}
                                 for (j, i), g in zip(freed, merging)]}}


def kept_alpha(model: Model, parent: Model, kept) -> np.ndarray:
    """The document-topic prior of an update that kept freed topics (``(freed, into)`` pairs):
    the parent's, but for each pair the topic merged into weighs both (``alpha_into +
    alpha_freed``: the parent's documents count both there, and a Dirichlet's components summed
    are a Dirichlet's of their priors summed) and the new topic's prior is learned from the
    night's documents, the only ones that hold it (:func:`~ldacli.methods.priors.alpha_of_topic`,
    the others held). The freed topic's prior was the merged one's: kept, it would weigh a new
    theme as little as the half of a theme it replaced."""
    alpha = np.asarray(parent.alpha, dtype=np.float64).copy()
    for j, i in kept:
        alpha[i] += alpha[j]
    counts = model.counts
    states = counts.doc_states.astype(np.float64)
    for j, _ in kept:
        alpha[j] = alpha_of_topic(counts.docs.column(j, states), counts.doc_lengths, alpha, j)
    return alpha


def merged(model: Model, parent: Model) -> Model:
    """The model of an update: ``model`` (trained on the night) describing the parent's documents
    too, first, with the proportions the parent gave them, and keeping the evidence it carried
    (its prior) for the next update. A freed topic that the night took (:func:`taken`) is a new
    topic (its lineage and name say so; the parent's documents count it in the topic it was
    merged into); one it did not take gets its own evidence back, and the topic it was merged
    into its own. What the run let go of the parent is mapped from its file (:func:`released`); the
    model's ``doc_ids`` are a NumPy text array, written as it is."""
    p = model.params
    update = p["update"]
    restored(update["path"], update["sha256"])
    fold = None
    cells = evidence(parent)  # (in the prior's order: the prior takes them as they are)
    read_through(parent.counts)
    kept = []
    if update.get("freed"):
        update["freed"] = taken(model, parent, update["freed"], update["decay"], cells)
        kept = [(f["topic"], f["into"]) for f in update["freed"] if f["kept"]]
    # (the model's prior whole: the run's held the night's words alone)
    model.counts = dataclasses.replace(model.counts, prior=prior(parent, update["decay"], kept, cells=cells))
    del cells  # (before the older documents' counts are joined: the peak of an update)
    if kept:
        fold = folding(kept, parent.n_topics)
        new = {j for j, _ in kept}
        descent = [None if k in new else k for k in range(parent.n_topics)]
        p["warm_start"] = {**p["warm_start"], "descent": descent, "added": sorted(new), "removed": sorted(new)}
        names = [None if k in new else n for k, n in enumerate(model.topic_names)]
        model.params = p = with_names(p, names)
        model.alpha = kept_alpha(model, parent, kept)  # (params keep the run's, the parent's: the initial one)
        for j, i in kept:
            log.warning("topic %d freed for a new theme of the night (its old evidence merged into topic %d)", j, i)
    older = read_documents(update["path"], parent, update["parent_docs"], checked=False)
    model.counts = dataclasses.replace(model.counts.after(older, fold), carried=True)
    del older
    parent.counts = None  # (its maps let go: the pages read are not held beside the model written next)
    night_ids = np.asarray(model.doc_ids, dtype=np.str_)
    model.doc_ids = np.empty(parent.doc_ids.size + night_ids.size, np.result_type(parent.doc_ids, night_ids))
    at = 0
    for block in blocks(parent.doc_ids):  # (mapped: its pages let go as they are copied)
        model.doc_ids[at:at + block.size] = block
        at += block.size
    model.doc_ids[at:] = night_ids
    p["n_docs"] = len(model.doc_ids)
    p["n_tokens"] = int(parent.params.get("n_tokens", 0)) + int(p.get("n_tokens", 0))
    return model
