"""Topic diagnostics: numbers per topic that tell a usable topic from junk, and flags naming why.

The measures are MALLET's (``train-topics --diagnostics-file``, ``TopicModelDiagnostics``),
computed from a model file rather than from a sampler's state, plus NPMI and measures of how a
topic spreads over documents and over the other topics. MALLET counts the tokens each document
gives a topic from the sampler's assignments; a model file keeps the documents' proportions instead, and a
document ``d`` of length ``N_d`` gives topic ``k`` an estimated ``n_dk = theta_dk (N_d + sum(alpha))
- alpha_k`` tokens (clipped at 0; exact for one state of collapsed Gibbs, whose theta is ``(n_dk +
alpha_k) / (N_d + sum(alpha))``; the expected count for variational EM, whose theta is gamma
normalised; an average when theta averages several states). A document "has" the topic when
``n_dk >= 0.5``. Logarithms are natural.

From the model alone (phi, the top words):

* ``eff_num_words``: ``1 / sum_w phi_kw^2``, how many words the topic effectively spreads over;
* ``uniform_dist``: ``sum_w phi_kw log(phi_kw V)``, the KL divergence from the uniform
  distribution over the V words (MALLET sums over the words the topic was assigned; phi's
  smoothing gives every word a little weight here);
* ``exclusivity``: the mean over the top words of ``phi_kw / sum_j phi_jw``
  (:func:`ldacli.scoring.coherence.word_exclusivity`; MALLET's, which uses the same smoothed phi);
* ``word_length``: the mean number of characters of the top words.

From the corpus (the training corpus, or any corpus over the model's words, whose proportions
are then inferred as a report infers them, :func:`ldacli.scoring.inference.corpus_theta`):

* ``tokens``: ``sum_d n_dk``; ``documents``: how many documents have the topic;
* ``document_entropy``: the entropy of the topic's tokens over the documents, ``log(tokens) -
  sum_d n_dk log(n_dk) / tokens``; ``effective_documents`` is ``exp`` of it (a topic held by 3
  documents equally has 3);
* ``rank_1_docs``: the share of the documents having the topic in which it is the largest;
* ``allocation_ratio``: documents with proportion >= 0.5 over documents with >= 0.02 (of those
  having the topic); ``allocation_count``: documents with >= 0.3 over those having it (MALLET's
  names and thresholds);
* ``umass``, ``npmi``: coherence of the top words against the corpus's documents
  (:mod:`ldacli.scoring.coherence`; MALLET's "coherence" is UMass with co-document counts taken
  among the tokens assigned to the topic);
* ``corpus_dist``: the KL divergence of phi from the corpus's word frequencies (over the words
  the corpus has);
* ``token_doc_diff``: the Jensen-Shannon divergence between the top words' token counts in the
  topic and the numbers of documents in which each is the topic's (a word the topic takes many
  times from a few documents);
* ``document_dist``: the KL divergence of the topic's tokens over the documents from the
  documents' lengths (AlSumait et al. 2009's distance from the "background" over documents):
  0 for a topic that takes the same share of every document, ``log(1/f)`` for one spread evenly
  over a fraction f of the corpus;
* ``companion_topics``: how many other topics share its documents: ``exp`` of the entropy of
  ``sum_d n_dk n_dj`` over the other topics j (for every pair of tokens of a document, one of
  this topic's and one of another's, which the other is); a subject's companions are a few
  related subjects, boilerplate goes with every subject;
* ``top_docs_share``: the share of its tokens in its :data:`TOP_DOCS` largest documents;
* ``top_doc_similarity``: how alike its :data:`SIMILAR_DOCS` documents of largest proportion
  (among those having it) are: the mean over pairs of the cosine similarity of their sets of
  words, ``|A & B| / sqrt(|A| |B|)``.

Per top word (MALLET's ``<word>`` attributes): ``count`` (the expected number of its tokens in
the topic: each occurrence of word w in document d counts ``theta_dk phi_kw / sum_j theta_dj
phi_jw``), ``prob``, ``cumulative``, ``docs`` (documents in which at least half a token of it is
the topic's), ``word_length``, ``coherence`` (the worst UMass pair score with a higher-ranked
word, 0 for the first), ``uniform_dist``, ``corpus_dist``, ``token_doc_diff`` and ``exclusivity``
(each term of the topic's sum or mean).

Flags (:data:`FLAGS`): each names a way a topic may be junk. Only a *verdict* (:data:`VERDICTS`:
``background``) says that the topic is likely junk: its threshold was fitted with each of seven corpora
held out in turn and, held out, it met the bar (at most 1 good topic in 20 flagged, at least 3 in 4 of
the flagged junk, judged by reading: ``benchmarks/calibration.py``, docs/reference/calibration.md). The
others are *measurements*, named for what they measured (``many-companions``, ``low-npmi``,
``few-documents``, ``near-duplicates``, ``tiny``): held out, none flagged junk reliably, so the outputs
list them apart (``measured``), never as a verdict. A flag that needs the corpus is not raised without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ldacli import checks
from ldacli.api_input import as_corpus, as_model
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError
from ldacli.scoring.inference import corpus_theta
from ldacli.model import Model
from ldacli.settings import Flag, Setting
from ldacli.files.tables import Table
from ldacli.scoring.coherence import codocument_counts, scores, top_word_ids, word_exclusivity

DIAGNOSTICS = Setting("diagnostics", Flag(), False,
                      "Also measure each topic (MALLET's diagnostics: tokens, document entropy, coherence, "
                      "exclusivity, distances from the uniform and the corpus distributions, rank-1 documents, "
                      "allocation, ...; NPMI; how it spreads over documents and topics) against the reference "
                      "corpus, flag the topics that are likely junk (background) and name what else a topic "
                      "measured that junk often does (many-companions, low-npmi, few-documents, near-duplicates, "
                      "tiny: measurements, not verdicts), each with its reason.")

# Top words scored per topic (coherence, exclusivity, word length, token-document difference).
DIAGNOSTIC_WORDS = 10
# MALLET's document proportions for the allocation measures.
ALLOCATION_LOW, ALLOCATION_MID, ALLOCATION_HIGH = 0.02, 0.3, 0.5
# A topic's documents looked at: the most similar of its largest by proportion, and its largest by tokens.
SIMILAR_DOCS = 20
TOP_DOCS = 10
# Relative flags compare a topic with the model's median topic; with fewer topics there is no median to speak of.
RELATIVE_FROM_TOPICS = 10
# Documents whose theta rows are turned into counts at a time.
_CHUNK = 4096

# The per-topic fields, in the order tables show them: (name, kind, needs the corpus, what it is).
FIELDS = (
    ("tokens", "float", True, "estimated tokens of the topic in the corpus"),
    ("documents", "int", True, "documents with at least half a token of the topic"),
    ("document_entropy", "float", True, "entropy of the topic's tokens over documents (nats)"),
    ("effective_documents", "float", True, "exp(document_entropy)"),
    ("word_length", "float", False, "mean characters of the top words"),
    ("umass", "float", True, "UMass coherence of the top words (nearer 0 is better)"),
    ("npmi", "float", True, "NPMI coherence of the top words (-1 to 1, higher is better)"),
    ("uniform_dist", "float", False, "KL divergence from the uniform distribution over words"),
    ("corpus_dist", "float", True, "KL divergence from the corpus's word frequencies"),
    ("eff_num_words", "float", False, "1 / sum of squared word probabilities"),
    ("token_doc_diff", "float", True, "JS divergence of the top words' tokens and documents"),
    ("rank_1_docs", "float", True, "share of its documents in which the topic is the largest"),
    ("allocation_ratio", "float", True, "documents at >= 50% over documents at >= 2%"),
    ("allocation_count", "float", True, "share of its documents at >= 30%"),
    ("exclusivity", "float", False, "mean share of the top words' weight that is this topic's"),
    ("document_dist", "float", True, "KL divergence of its tokens over documents from the documents' lengths"),
    ("companion_topics", "float", True, "effective number of other topics sharing its documents"),
    ("top_docs_share", "float", True, f"share of its tokens in its {TOP_DOCS} largest documents"),
    ("top_doc_similarity", "float", True, f"how alike its {SIMILAR_DOCS} documents of largest proportion are "
                                          f"(mean cosine similarity of their sets of words)"),
)
FIELD_NAMES = tuple(f[0] for f in FIELDS)
NEEDS_CORPUS = tuple(f[0] for f in FIELDS if f[2])
WORD_FIELDS = ("rank", "word", "count", "prob", "cumulative", "docs", "word_length", "coherence", "uniform_dist",
               "corpus_dist", "token_doc_diff", "exclusivity")


@dataclass(frozen=True)
class JunkFlag:
    """A way a topic may be junk: its ``name`` (as the outputs list it), what it means, whether it
    is a ``verdict`` (the topic is likely junk: held out, at most 1 good topic in 20 was flagged and
    at least 3 in 4 flagged were junk) or a measurement (the topic measured so, which junk often
    does and good topics sometimes do), and
    ``rule(topic, model, thresholds)`` on the topic's fields, the model's (``model``: ``n_topics``,
    ``n_tokens``, ``mean_length`` (the corpus's tokens per document) and the medians over topics
    of the fields, ``median_<field>``: :func:`context_of`) and the thresholds (:data:`THRESHOLDS`'
    keys; a flag whose threshold is None is off); a rule that needs a value that is None is False."""

    name: str
    meaning: str
    rule: Callable[[dict, dict, dict], bool]
    verdict: bool = False  # a junk verdict, backed on held-out corpora; else a measurement, named for what it measured

    def test(self, topic: dict, model: dict, thresholds: dict | None = None) -> bool:
        """Whether the flag is raised on ``topic`` (with :data:`THRESHOLDS`, or ``thresholds``)."""
        return self.rule(topic, model, THRESHOLDS if thresholds is None else thresholds)


def _relative(t: dict, m: dict, field: str) -> float | None:
    """A topic's ``field`` over the model's median of it (None where either is missing, the
    median is not positive or the model has too few topics for a median)."""
    median = m.get(f"median_{field}")
    if t[field] is None or median is None or median <= 0 or m["n_topics"] < RELATIVE_FROM_TOPICS:
        return None
    return t[field] / median


def _below(value: float | None, threshold: float | None) -> bool:
    return value is not None and threshold is not None and value < threshold


def _at_least(value: float | None, threshold: float | None) -> bool:
    return value is not None and threshold is not None and value >= threshold


# Thresholds. background's is the one the leave-one-corpus-out protocol of benchmarks/calibration.py fitted (on six
# corpora, scored on the seventh: 1.0 in six folds of seven); the others were measured on raw 20 Newsgroups and KOS
# at K=50 (benchmarks/diagnostics_calibration.py) and are measurements, not verdicts: held out, no threshold of
# theirs flagged junk reliably (docs/reference/calibration.md).
THRESHOLDS = {
    "background": 1.0,       # document_dist below: spread over documents as one found evenly in 37% of the corpus
    "many_companions": 1.25,  # companion_topics at least this many times the model's median
    "many_companions_rank_1": 0.1,  # ... and rank_1_docs below
    "low_npmi": 0.4,         # npmi below this share of the model's median
    "few_documents": 0.45,   # top_docs_share at least
    "few_documents_fill": 0.75,  # ... and tokens per effective document at least this many mean document lengths
    "near_duplicates": 0.55,  # top_doc_similarity at least
    "tiny": 0.1,             # tokens below this share of an average topic's
}
T = THRESHOLDS

FLAGS = (
    JunkFlag("background", f"spread over the documents almost as the corpus is (document_dist below "
                           f"{T['background']:g}: as even as a topic found in every document of 37% of the "
                           f"corpus): general words that go with anything",
             lambda t, m, th: _below(t["document_dist"], th["background"]), verdict=True),
    JunkFlag("many-companions", f"its documents' other topics are {T['many_companions']:g} times as many as the "
                                f"median topic's (companion_topics) and it is the largest topic of fewer than "
                                f"{T['many_companions_rank_1']:.0%} of its documents (rank_1_docs): it goes with "
                                f"many subjects (signatures and headers do, and so do broad subjects)",
             lambda t, m, th: _at_least(_relative(t, m, "companion_topics"), th["many_companions"])
             and _below(t["rank_1_docs"], th["many_companions_rank_1"])),
    JunkFlag("low-npmi", f"its top words seldom share documents: NPMI below {T['low_npmi']:.0%} of the "
                         f"model's median topic's",
             lambda t, m, th: _below(_relative(t, m, "npmi"), th["low_npmi"])),
    JunkFlag("few-documents", f"held by a handful of documents that are mostly this topic: its {TOP_DOCS} largest "
                              f"hold {T['few_documents']:.0%} of its tokens or more, and its tokens per effective "
                              f"document are {T['few_documents_fill']:g} of the corpus's mean document length or "
                              f"more (an attachment, a long file, or a subject few documents have)",
             lambda t, m, th: _at_least(t["top_docs_share"], th["few_documents"]) and t["tokens"] is not None
             and t["effective_documents"] is not None
             and t["tokens"] / t["effective_documents"] >= th["few_documents_fill"] * m["mean_length"]),
    JunkFlag("near-duplicates", f"its {SIMILAR_DOCS} documents of largest proportion share most of their words "
                                f"(mean cosine similarity of their sets of words {T['near_duplicates']:g} or more): "
                                f"a template or a reposted text, or documents of one form",
             lambda t, m, th: _at_least(t["top_doc_similarity"], th["near_duplicates"])),
    JunkFlag("tiny", f"hardly used: fewer tokens than {T['tiny']:.0%} of an average topic's (a dead topic, for "
                     f"train --remove-topics)",
             lambda t, m, th: t["tokens"] is not None and th["tiny"] is not None
             and t["tokens"] < th["tiny"] * m["n_tokens"] / m["n_topics"]),
)
FLAG_NAMES = tuple(f.name for f in FLAGS)
VERDICTS = tuple(f.name for f in FLAGS if f.verdict)


def doc_topic_counts(theta: np.ndarray, lengths: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """(D, K): the tokens each document gives each topic, estimated from its proportions
    ``theta`` (D, K), its length and the prior: ``theta_dk (N_d + sum(alpha)) - alpha_k``,
    clipped at 0 (0 for an empty document)."""
    n = theta * (lengths.astype(np.float64) + alpha.sum())[:, None] - alpha[None, :]
    n[lengths == 0] = 0.0
    return np.clip(n, 0.0, None)


def _entropy(tokens: np.ndarray, sum_n_log_n: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tokens > 0, np.log(np.where(tokens > 0, tokens, 1.0)) - sum_n_log_n / np.where(
            tokens > 0, tokens, 1.0), np.nan)


def _top_rows(best: tuple[np.ndarray, np.ndarray], values: np.ndarray, first: int, m: int):
    """The ``m`` largest values of each column (and their rows) among ``best`` and a block of
    rows starting at row ``first``, largest first."""
    values_all = np.concatenate([best[0], values])
    rows = np.concatenate([best[1], np.broadcast_to(np.arange(first, first + values.shape[0])[:, None], values.shape)])
    keep = np.argsort(-values_all, axis=0, kind="stable")[:m]
    return np.take_along_axis(values_all, keep, axis=0), np.take_along_axis(rows, keep, axis=0)


def _document_side(model: Model, theta: np.ndarray, lengths: np.ndarray) -> dict:
    """The per-topic sums over documents, a block of rows at a time: tokens, ``sum n log n``,
    ``sum n log N_d``, documents having the topic, rank-1 documents, documents at the
    allocation proportions, the token co-occurrence of topics in documents (K, K), and each
    topic's largest documents by tokens and, of those having it, by proportion."""
    D, K = theta.shape
    alpha = np.asarray(model.alpha, dtype=np.float64)
    tokens, n_log_n, n_log_len = np.zeros(K), np.zeros(K), np.zeros(K)
    documents, rank_1 = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)
    at = {p: np.zeros(K, dtype=np.int64) for p in (ALLOCATION_LOW, ALLOCATION_MID, ALLOCATION_HIGH)}
    together = np.zeros((K, K))
    empty = (np.zeros((0, K)), np.zeros((0, K), dtype=np.int64))
    by_tokens, by_share = empty, empty
    for s in range(0, D, _CHUNK):
        th, ln = theta[s:s + _CHUNK], lengths[s:s + _CHUNK]
        n = doc_topic_counts(th, ln, alpha)
        tokens += n.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            n_log_n += np.where(n > 0, n * np.log(np.where(n > 0, n, 1.0)), 0.0).sum(axis=0)
        n_log_len += (n * np.log(np.maximum(ln, 1))[:, None]).sum(axis=0)
        has = n >= 0.5
        documents += has.sum(axis=0)
        for p, c in at.items():
            c += (has & (th >= p)).sum(axis=0)
        nonempty = ln > 0
        if nonempty.any():
            rank_1 += np.bincount(np.argmax(n[nonempty], axis=1), minlength=K)
        together += n.T @ n
        by_tokens = _top_rows(by_tokens, n, s, TOP_DOCS)
        by_share = _top_rows(by_share, np.where(has, th, -1.0), s, SIMILAR_DOCS)
    return {"tokens": tokens, "n_log_n": n_log_n, "n_log_len": n_log_len, "documents": documents,
            "rank_1": rank_1, "at": at, "together": together, "by_tokens": by_tokens, "by_share": by_share}


def _ratio(a, b) -> float | None:
    return float(a / b) if b > 0 else None


def _similarity(counts, docs: np.ndarray) -> float | None:
    """The mean cosine similarity of the sets of words (counts above 0, each 1) of every pair of
    the documents ``docs``: ``|A & B| / sqrt(|A| |B|)`` (None for fewer than two). Sets, not
    counts: a topic's most frequent word would make its documents look alike by itself."""
    if docs.size < 2:
        return None
    rows = (counts[docs] > 0).astype(np.float64)
    sizes = np.sqrt(np.asarray(rows.sum(axis=1)).ravel())
    sim = (rows @ rows.T).toarray() / np.maximum(np.outer(sizes, sizes), 1e-300)
    return float((sim.sum() - np.trace(sim)) / (docs.size * (docs.size - 1)))


def _spread(weights: np.ndarray) -> float | None:
    """``exp`` of the entropy of ``weights`` normalised (None when they are all 0)."""
    total = weights.sum()
    if total <= 0:
        return None
    p = weights[weights > 0] / total
    return float(np.exp(-(p * np.log(p)).sum()))


def _word_side(phi: np.ndarray, theta: np.ndarray, counts, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K, N) the expected tokens of each top word in its topic and the documents in which at
    least half a token of it is the topic's: each occurrence of w in d counts ``theta_dk phi_kw
    / sum_j theta_dj phi_jw``."""
    K, N = top.shape
    csc = counts.tocsc()
    count, docs = np.zeros((K, N)), np.zeros((K, N), dtype=np.int64)
    where: dict[int, list[tuple[int, int]]] = {}
    for k in range(K):
        for r, w in enumerate(top[k].tolist()):
            where.setdefault(w, []).append((k, r))
    for w, places in where.items():
        lo, hi = csc.indptr[w], csc.indptr[w + 1]
        if lo == hi:
            continue
        d, c = csc.indices[lo:hi], csc.data[lo:hi].astype(np.float64)
        th = theta[d]
        denominator = np.maximum(th @ phi[:, w], 1e-300)
        for k, r in places:
            share = c * th[:, k] * phi[k, w] / denominator
            count[k, r] = share.sum()
            docs[k, r] = int(np.count_nonzero(share >= 0.5))
    return count, docs


def _js_terms(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The per-position terms of the Jensen-Shannon divergence (nats) of ``p`` and ``q``
    (normalised here)."""
    p = p / p.sum() if p.sum() > 0 else p
    q = q / q.sum() if q.sum() > 0 else q
    m = 0.5 * (p + q)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (np.where(p > 0, 0.5 * p * np.log(p / m), 0.0) + np.where(q > 0, 0.5 * q * np.log(q / m), 0.0))


def _kl_terms(phi: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(K, V) the terms ``phi_kw log(phi_kw / reference_w)`` (0 where phi is 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(phi > 0, phi * np.log(phi / reference[None, :]), 0.0)


def diagnostics(model: Model, corpus: Corpus | None = None, *, top_words: int = DIAGNOSTIC_WORDS) -> dict:
    """The diagnostics of every topic of ``model`` (see the module docstring), on ``corpus``
    (the training corpus, or another over its words, matched by string), or from the model
    alone (``corpus=None``: the fields of :data:`NEEDS_CORPUS` are None and the flags that need
    them are not raised).

    Returns a JSON-able dict: ``top_words``; ``corpus`` (``source``, ``n_docs``, ``n_tokens``,
    or None); ``flags`` (each flag's ``name``, ``meaning`` and whether it is a ``verdict``);
    ``topics``, one dict per topic with ``topic``, ``name``, the :data:`FIELD_NAMES`, ``flags``
    (the verdicts raised: likely junk), ``measured`` (the measurements raised) and ``words`` (per top
    word: the :data:`WORD_FIELDS`; those needing the corpus None without it). Undefined values
    (a topic with no tokens) are None."""
    top_words = checks.count("top_words", top_words, 2)
    model = as_model(model)
    if corpus is not None:
        corpus = as_corpus(corpus, argument="corpus", model=model)
    phi = np.asarray(model.phi, dtype=np.float64)
    K, V = phi.shape
    top = top_word_ids(phi, top_words)
    N = top.shape[1]
    words = [[model.vocab[w] for w in row] for row in top.tolist()]
    prob = np.take_along_axis(phi, top, axis=1)
    uniform_terms = _kl_terms(phi, np.full(V, 1.0 / V))
    word_excl = word_exclusivity(phi, N)
    lengths_of_words = np.array([[len(w) for w in row] for row in words], dtype=np.float64)
    topics = [{"topic": k, "name": model.topic_names[k], **dict.fromkeys(FIELD_NAMES)} for k in range(K)]
    for k, t in enumerate(topics):
        t.update(word_length=float(lengths_of_words[k].mean()), uniform_dist=float(uniform_terms[k].sum()),
                 eff_num_words=float(1.0 / np.square(phi[k]).sum()), exclusivity=float(word_excl[k].mean()))
    per_word = {"count": None, "docs": None, "coherence": None, "corpus_dist": None, "token_doc_diff": None}
    about = None
    if corpus is not None:
        aligned, _ = corpus.align(model.vocab)
        theta, _ = corpus_theta(model, aligned)
        lengths = aligned.doc_lengths
        side = _document_side(model, theta, lengths)
        totals = aligned.word_frequencies().astype(np.float64)
        n_tokens = float(totals.sum())
        present = totals > 0
        freq = totals / max(n_tokens, 1.0)
        phi_present = np.where(present[None, :], phi, 0.0)
        phi_present /= np.maximum(phi_present.sum(axis=1, keepdims=True), 1e-300)
        corpus_terms = _kl_terms(phi_present, np.where(present, freq, 1.0))
        codocs = codocument_counts(top, aligned)
        umass, _ = scores("umass", codocs, aligned.n_docs)
        npmi, _ = scores("npmi", codocs, aligned.n_docs)
        count, docs = _word_side(phi, theta, aligned.counts, top)
        per_word.update(count=count, docs=docs, coherence=np.array([_word_coherence(co, df) for co, df in codocs]),
                        corpus_dist=np.take_along_axis(corpus_terms, top, axis=1),
                        token_doc_diff=np.array([_js_terms(count[k], docs[k].astype(np.float64)) for k in range(K)]))
        total_length = float(lengths.sum())
        for k, t in enumerate(topics):
            tok = float(side["tokens"][k])
            has = int(side["documents"][k])
            others = np.delete(side["together"][k], k)
            share_values, share_docs = side["by_share"][0][:, k], side["by_share"][1][:, k]
            if tok > 0:
                entropy = math.log(tok) - side["n_log_n"][k] / tok
                t.update(document_entropy=entropy, effective_documents=math.exp(entropy),
                         document_dist=float((side["n_log_n"][k] - side["n_log_len"][k]) / tok - math.log(tok)
                                             + math.log(total_length)),
                         top_docs_share=float(side["by_tokens"][0][:, k].sum() / tok),
                         token_doc_diff=float(per_word["token_doc_diff"][k].sum()))
            t.update(
                tokens=tok, documents=has,
                umass=None if math.isnan(umass[k]) else float(umass[k]),
                npmi=None if math.isnan(npmi[k]) else float(npmi[k]),
                corpus_dist=float(corpus_terms[k].sum()),
                rank_1_docs=_ratio(side["rank_1"][k], has),
                allocation_ratio=_ratio(side["at"][ALLOCATION_HIGH][k], side["at"][ALLOCATION_LOW][k]),
                allocation_count=_ratio(side["at"][ALLOCATION_MID][k], has),
                companion_topics=_spread(others),
                top_doc_similarity=_similarity(aligned.counts, share_docs[share_values >= 0]),
            )
        about = {"source": corpus.source, "n_docs": aligned.n_docs, "n_tokens": int(n_tokens)}
    context = context_of({"corpus": about, "topics": topics})
    for k, t in enumerate(topics):
        names = raised(t, context)
        t["flags"] = [f for f in names if f in VERDICTS]
        t["measured"] = [f for f in names if f not in VERDICTS]
        cumulative = np.cumsum(prob[k])
        t["words"] = [{
            "rank": r + 1, "word": words[k][r],
            "count": None if per_word["count"] is None else float(per_word["count"][k, r]),
            "prob": float(prob[k, r]), "cumulative": float(cumulative[r]),
            "docs": None if per_word["docs"] is None else int(per_word["docs"][k, r]),
            "word_length": int(lengths_of_words[k, r]),
            "coherence": None if per_word["coherence"] is None else float(per_word["coherence"][k, r]),
            "uniform_dist": float(uniform_terms[k, top[k, r]]),
            "corpus_dist": None if per_word["corpus_dist"] is None else float(per_word["corpus_dist"][k, r]),
            "token_doc_diff": None if per_word["token_doc_diff"] is None else float(per_word["token_doc_diff"][k, r]),
            "exclusivity": float(word_excl[k, r]),
        } for r in range(N)]
    return {"top_words": N, "corpus": about,
            "flags": [{"name": f.name, "meaning": f.meaning, "verdict": f.verdict} for f in FLAGS],
            "topics": topics}


def context_of(result: dict) -> dict:
    """What the flags read of the whole model, from a :func:`diagnostics` result (its ``topics``
    and ``corpus``): ``n_topics``, ``n_tokens``, ``mean_length`` (None without a corpus) and the
    medians over topics ``median_companion_topics`` and ``median_npmi``."""
    topics, about = result["topics"], result["corpus"]
    context: dict = {"n_topics": len(topics), "n_tokens": None, "mean_length": None}
    if about is not None:
        context.update(n_tokens=float(about["n_tokens"]), mean_length=about["n_tokens"] / max(about["n_docs"], 1),
                       **{f"median_{f}": _median([t[f] for t in topics]) for f in ("companion_topics", "npmi")})
    return context


def raised(topic: dict, context: dict, thresholds: dict | None = None) -> list[str]:
    """The names of the :data:`FLAGS` raised on ``topic`` (a :func:`diagnostics` topic) in a model
    of ``context`` (:func:`context_of`), with :data:`THRESHOLDS` or ``thresholds``."""
    return [f.name for f in FLAGS if f.test(topic, context, thresholds)]


def _median(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.median(present)) if present else None


def _word_coherence(co: np.ndarray, df: np.ndarray) -> np.ndarray:
    """MALLET's per-word coherence, with UMass's counts: for word m, the smallest of 0 and
    ``log((D(w_m, w_l) + 1) / D(w_l))`` over the higher-ranked words l (those in no document
    skipped)."""
    N = df.size
    out = np.zeros(N)
    for m in range(1, N):
        values = [math.log((co[m, l] + 1.0) / df[l]) for l in range(m) if df[l] > 0]
        out[m] = min([0.0] + values)
    return out


# --- tables ---------------------------------------------------------------------------------------------

def table(result: dict) -> Table:
    """:func:`topic_diagnostics`'s result as a table, one row per topic: ``topic, name``, the
    :data:`FIELD_NAMES`, ``flags`` (verdicts), ``measured`` and ``words`` (the top words)."""
    columns = [("topic", "int"), ("name", "str"), *[(name, kind) for name, kind, _, _ in FIELDS],
               ("flags", "str_list"), ("measured", "str_list"), ("words", "str_list")]
    rows = [(t["topic"], t["name"] or str(t["topic"]), *[t[f] for f in FIELD_NAMES], t["flags"], t["measured"],
             [w["word"] for w in t["words"]]) for t in result["topics"]]
    return Table(columns, [rows])


# MALLET's attribute names and order (TopicModelDiagnostics.toXML), from ours; ours without a MALLET
# name follow, under their own.
MALLET_TOPIC = (("tokens", "tokens"), ("document_entropy", "document_entropy"), ("word-length", "word_length"),
                ("coherence", "umass"), ("uniform_dist", "uniform_dist"), ("corpus_dist", "corpus_dist"),
                ("eff_num_words", "eff_num_words"), ("token-doc-diff", "token_doc_diff"),
                ("rank_1_docs", "rank_1_docs"), ("allocation_ratio", "allocation_ratio"),
                ("allocation_count", "allocation_count"), ("exclusivity", "exclusivity"))
MALLET_WORD = (("word-length", "word_length"), ("coherence", "coherence"), ("uniform_dist", "uniform_dist"),
               ("corpus_dist", "corpus_dist"), ("token-doc-diff", "token_doc_diff"), ("exclusivity", "exclusivity"))
EXTRA_TOPIC = tuple(f for f in FIELD_NAMES if f not in {ours for _, ours in MALLET_TOPIC})


def _xml_number(x, fmt: str = ".4f") -> str:
    return "NaN" if x is None else format(float(x), fmt)


def _xml_text(value: str, what: str) -> str:
    """``value`` escaped for XML 1.0, which cannot hold most control characters at all."""
    if any((ord(c) < 32 and c not in "\t\n\r") or 0xD800 <= ord(c) <= 0xDFFF or ord(c) in (0xFFFE, 0xFFFF)
           for c in value):
        raise LdacliError(f"--format mallet: XML cannot hold the {what} {value!r} (a control character); use tsv, "
                          f"csv, jsonl or parquet")
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&apos;")


def mallet_xml_lines(result: dict):
    """MALLET's ``--diagnostics-file`` layout (``TopicModelDiagnostics.toXML``): ``<model>``, one
    ``<topic id='k' ...>`` per topic with MALLET's attributes (``coherence`` is UMass against
    the corpus's documents) then ours (npmi, document_dist, ...; ``flags`` and ``measured``
    space-separated), and
    one ``<word rank= count= prob= cumulative= docs= ...>`` per top word."""
    yield "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model>\n"
    for t in result["topics"]:
        attributes = "".join(f" {name}='{_xml_number(t[ours])}'" for name, ours in MALLET_TOPIC)
        attributes += "".join(f" {name}='{_xml_number(t[name])}'" for name in EXTRA_TOPIC)
        out = [f"<topic id='{t['topic']}'{attributes} flags='{' '.join(t['flags'])}' "
               f"measured='{' '.join(t['measured'])}'>\n"]
        for w in t["words"]:
            scores_ = "".join(f" {name}='{_xml_number(w[ours])}'" for name, ours in MALLET_WORD)
            out.append(f"<word rank='{w['rank']}' count='{_xml_number(w['count'], '.0f')}' prob='{w['prob']:.5f}' "
                       f"cumulative='{w['cumulative']:.5f}' docs='{w['docs'] if w['docs'] is not None else 'NaN'}'"
                       f"{scores_}>{_xml_text(w['word'], 'word')}</word>\n")
        out.append("</topic>\n")
        yield "".join(out)
    yield "</model>\n"
