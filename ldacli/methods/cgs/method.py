"""Collapsed Gibbs sampling (Griffiths & Steyvers 2004): the default method.

The state is the topic of every token; counts are derived from it. One step is one sweep of
the run's engine (a :class:`~ldacli.methods.cgs.sampler.Sampler`: on threads,
:mod:`ldacli.methods.cgs.threads`, or on a Dask cluster, :mod:`ldacli.methods.cgs.dask_client`;
dense, sparse or alias kernels, blocks of document shards and word slices sampled in parallel)
followed, every ``optimize_interval`` sweeps after ``optimize_burn_in``, by learning an
asymmetric alpha and a symmetric beta from the counts (:mod:`ldacli.methods.priors`). The trace is the
joint log-likelihood ``log p(w, z)`` per token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from ldacli import random_streams
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError, SettingError
from ldacli.methods.base import Method, Start
from ldacli.methods.cgs.dask_client import DaskSampler, ShardsRebuilt, SyncPoint
from ldacli.methods.cgs.dask_checkpoints import ARRAY, ShardFiles, read_topics
from ldacli.methods.cgs.disk import DiskSampler
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.methods.cgs.sampler import SAMPLERS, FirstTopics, Sampler, choose_sampler
from ldacli.methods.cgs.layouts import ENTRY_CHUNK
from ldacli.methods.cgs.shard import document_list_bytes, pair_part_bytes
from ldacli.partition import default_shards, shard_bounds, shard_ranges
from ldacli.corpora.counts import doc_pointers, value_counts
from ldacli.corpora.formats.shards import ShardFolder
from ldacli.methods.seed_words import DEFAULT_SEED_STRENGTH, SeedWords
from ldacli.settings import FIXED, Choice, Integer, Real, Setting, owned_by
from ldacli.model import Checkpoint
from ldacli.methods.cgs.snapshots import MERGE_BYTES, Snapshots, doc_sum_bytes, snapshot_sweeps, sum_cell_bytes
from ldacli.methods.priors import alpha_from_histograms, beta_from_histogram
from ldacli.topic_counts import SPREAD_CELLS, SparseRows, TopicCounts, cell_parts, phi_rows, sorted_cells, theta_rows
from ldacli.topic_word_prior import TopicWordPrior

log = logging.getLogger("ldacli")

# Cells of theta assembled at a time (whole documents, at least one): the scratch is their
# counts (int32, and int64 as they are counted), whatever D and K.
THETA_CHUNK_CELLS = 1 << 16
# The priors' learning by default (--optimize-interval, --optimize-burn-in): every 10 sweeps as
# tomotopy and MALLET's documentation do, after 50, the counts of the first sweeps being far from
# the posterior's. Measured: benchmarks/heldout.py, docs/performance.md.
LEARN_EVERY = 10
LEARN_FROM = 50
# Why learning beta and a seeded topic-word prior cannot go together (refused when seed_words is
# given, before anything is read, and for a prior kept from a seeded warm start or given in Python).
OPTIMIZE_WITH_PRIOR = ("optimize_interval learns a symmetric beta, and the topic-word prior of seeded topics "
                       "(seed_words) is not one: leave one of them out")


def learns_first(every: int | None, after: int) -> int | None:
    """The first sweep that learns the priors of a run learning them every ``every`` sweeps
    after sweep ``after`` (None: never); every ``every``-th sweep from it learns them too. The
    schedule is written here only: the sampler keeps it and ``info`` tells it from the params."""
    return (after // every + 1) * every if every else None


def log_likelihood(sampler: Sampler, alpha: np.ndarray, beta: float) -> float:
    """Joint log-likelihood log p(w, z | alpha, beta_kw) with theta and phi integrated out; the
    topic-word prior ``beta_kw`` is ``beta`` plus the sampler's extra mass (``sampler.prior``).
    Taken from what the sampler answers (a histogram of the word-topic counts, the K totals, a
    sum per shard), which a Dask cluster's workers answer with the same numbers: the same
    bytes on threads and on a cluster."""
    V, K = sampler.V, sampler.K
    # log p(w | z) = sum_k [lgamma(B_k) - lgamma(n_k + B_k) + sum_w (lgamma(n_kw + beta_kw) - lgamma(beta_kw))],
    # B_k = sum_w beta_kw: first as if every cell's prior were beta (a zero count contributes
    # lgamma(beta) - lgamma(beta) = 0), then the cells and topics with extra mass put right
    _, values, times = sampler.word_histogram()
    ll = K * gammaln(V * beta)
    ll += float(np.sum(times * (gammaln(values + beta) - gammaln(beta))))
    prior = sampler.prior
    if prior is not None:
        ll += float(np.sum(gammaln(prior.topic_sums(beta)) - gammaln(V * beta)))
        # a cell without tokens adds 0 (exactly: the same bytes as summing them all), so only
        # the cells with tokens are computed: an update's prior is every old cell, its tokens the night's
        n = sampler.counts_at(prior.words, prior.topics)
        has = np.flatnonzero(n)
        cell, n_has = beta + prior.extra[has], n[has]
        terms = np.zeros(n.size)
        terms[has] = (gammaln(n_has + cell) - gammaln(cell)) - (gammaln(n_has + beta) - gammaln(beta))
        ll += float(np.sum(terms))
    ll -= float(np.sum(gammaln(sampler.topic_totals() + sampler.priors.beta_sum)))
    for part in sampler.doc_log_priors(alpha):  # log p(z | alpha), shard by shard
        ll += part
    return float(ll)


def rows_from_blocks(blocks):
    """``fill(out, first)`` that copies rows ``first`` to ``first + len(out)`` out of
    ``blocks``, an iterator of ``(first row, block)`` covering the rows in order, for
    consecutive calls (each block is read once, whatever sizes the calls ask for)."""
    blocks = iter(blocks)
    pending = [0, np.zeros((0, 0))]

    def fill(out: np.ndarray, first: int) -> None:
        done = 0
        while done < out.shape[0]:
            lo, block = pending
            at = first + done - lo
            if at >= block.shape[0]:
                pending[:] = next(blocks)
                continue
            take = min(block.shape[0] - at, out.shape[0] - done)
            out[done:done + take] = block[at:at + take]
            done += take
    return fill


class CollapsedGibbs(Method):
    """Collapsed Gibbs sampling of every token's topic, theta and phi integrated out.

    Options: ``sampler`` (``dense``, ``sparse``, ``alias`` or ``auto``: by K), ``shards``
    (document shards and word slices, default :func:`~ldacli.partition.default_shards`, or the files of the shard
    folder the corpus was read from; 1 is the exact sequential sampler), ``optimize_interval``
    and ``optimize_burn_in`` (learned priors; 0: off). Random streams: stream 0 draws the
    first topics (:class:`~ldacli.methods.cgs.threads.FirstTopics`), stream 1 + s samples shard s.

    ``prior`` (not a setting: built by the caller, e.g. by
    :func:`~ldacli.topic_word_prior.seed_prior` from seed words, and carried by the run's
    :class:`~ldacli.methods.driver.Plan`; None: the symmetric beta) is extra topic-word prior mass, ``beta_kw = beta + extra_kw``, under which every sampler
    samples the exact posterior; phi and the trace use it. A checkpoint holds it (arrays
    ``prior_words``, ``prior_topics``, ``prior_extra``) and a resumed run samples under it; the
    model records it in ``params["topic_word_prior"]``. It cannot go with ``optimize_interval``,
    which learns a symmetric beta.
    """

    name = "cgs"
    title = "collapsed Gibbs sampling"
    DISTRIBUTED = True
    unit = "sweep"
    trace = "log_p_w_z_per_token"
    trace_label = "log p(w, z) per token"
    DEFAULT_ITERATIONS = 1000
    DEFAULT_LOGLIK_EVERY = 10
    SETTINGS = owned_by("cgs", (
        Setting("sampler", Choice(("auto", *SAMPLERS)), "auto",
                "dense: O(K) per token; sparse: SparseLDA, exact, O(topics of the document and word); alias: "
                "Metropolis-Hastings with alias tables, O(1) per token; auto picks by K and document length "
                "(dense below 12 topics on documents under 400 tokens, else sparse: measured by "
                "benchmarks/auto_rules.py), and for an update by how full its model's evidence is (dense where the "
                "night's words have some in half the topics or more). Recorded in the model.", FIXED),
        Setting("shards", Integer(1), None,
                "Document shards (and as many word slices) that threads sample in parallel, the most threads "
                "that help; each sweep is N rounds of disjoint blocks. The output depends on the seed and the "
                "shards, never on --threads; 1 is the exact sequential sampler.", FIXED,
                default_help="one per 100,000 tokens, at most 4; from 5 M tokens one per 625,000 rounded down to a "
                             "power of two, at most 32 (from 20 M tokens); a shard folder's files"),
        Setting("optimize_interval", Integer(0), None,
                "Learn an asymmetric alpha and a symmetric beta from the counts every N sweeps (Minka's fixed "
                "point; Wallach, Mimno & McCallum 2009): a lower held-out perplexity, the more so the more "
                "topics (see docs/performance.md); --alpha/--beta are then starting values; 0: off, the "
                "priors as given.", FIXED,
                default_help=f"{LEARN_EVERY}, or 0 when --alpha, --beta or --seed-words is given (the priors "
                             f"as given)"),
        Setting("optimize_burn_in", Integer(0), LEARN_FROM,
                "Sweeps before the first optimisation (refused where the priors are not learned).", FIXED),
        Setting("snapshots", Integer(1), 5,
                "Average phi and theta over N states of the chain, --snapshot-interval sweeps apart, the last "
                "one the final sweep, those in the second half of the run (within --iterations: no sweep is "
                "added; with --max-seconds, where the pace so far says the run will end), instead of the final "
                "state alone: less Monte Carlo noise in the topics, a lower "
                "held-out perplexity for the same sweeps (see docs/performance.md). 1: the final state.",
                FIXED),
        Setting("snapshot_interval", Integer(1), 10, "Sweeps between two of the averaged --snapshots.", FIXED),
        Setting("seed_words", SeedWords(), None,
                "A file of seeded topics, one a line, 'name: word word ...': they become topics 0, 1, ... in the "
                "file's order, carry their names, and their topic-word prior favours their seed words (beta plus "
                "--seed-strength times the word's count), in every sampler; words the corpus lacks are reported. "
                "A warm start from a seeded model keeps its seeds without it.", FIXED),
        Setting("seed_strength", Real(0, 1e6, min_open=True),
                lambda values: DEFAULT_SEED_STRENGTH if values.get("seed_words") is not None else None,
                "The extra topic-word prior of each seed word in its topic, as a share of the word's count in the "
                "corpus: 0.25 weighs as if a quarter of its occurrences were in the topic already, whatever the "
                "corpus's size.", FIXED,
                default_help="0.25; a warm start's, when it keeps its seeds"),
    ))

    @classmethod
    def prior_sources(cls, params: dict) -> dict[str, str]:
        every, after = params.get("optimize_interval"), params.get("optimize_burn_in") or 0
        first = learns_first(every, after)
        if first is None or params.get("iterations_done", first) < first:  # off, or the run ended before
            update = params.get("update")
            kept = [str(f["topic"]) for f in (update.get("freed") or ()) if f.get("kept")] \
                if isinstance(update, dict) else []
            if kept:  # (methods.update.kept_alpha)
                return {"alpha": f"its model's, but topic {', '.join(kept)}'s, learned from the night's documents, "
                                 f"and the topic merged into's, the pair's sum", "beta": "set"}
            return super().prior_sources(params)
        how = f"learned every {every} sweeps after {after}"
        return {"alpha": how, "beta": how}

    @classmethod
    def check(cls, values: dict) -> None:
        if values.get("seed_words") is not None and values["optimize_interval"]:
            raise SettingError("optimize_interval", OPTIMIZE_WITH_PRIOR, ("seed_words",))

    @classmethod
    def settle_given(cls, values: Mapping, given: dict) -> dict:
        chosen = any(given.get(name) is not None for name in ("alpha", "beta", "seed_words"))
        interval = values["optimize_interval"]
        if given.get("optimize_interval") is None:  # priors someone chose are kept, others learned
            if chosen:
                interval = 0
            elif interval is None:  # (a warm start's is its parent's)
                interval = LEARN_EVERY
        if not interval and given.get("optimize_burn_in") is not None:
            why = ("optimize_interval is 0" if given.get("optimize_interval") is not None else
                   "alpha, beta or seed_words given keep the priors as given" if chosen else
                   "the warm start's were not learned")
            raise SettingError("optimize_burn_in", f"optimize_burn_in applies where the priors are learned, and here "
                                                   f"{why}: give optimize_interval N to learn them",
                               ("optimize_interval", "alpha", "beta", "seed_words"))
        return {"optimize_interval": interval}

    @classmethod
    def resolve(cls, values: Mapping, given: dict, corpus: Corpus) -> dict:
        settled = cls.settle_given(values, given)
        sampler, shards = values["sampler"], values["shards"]
        if sampler == "auto" and isinstance(corpus, ShardFolder) and values.get("scheduler") is None:
            sampler = "sparse"  # from disk, the one sampler that keeps each document's topics
        elif sampler == "auto":
            sampler = choose_sampler(values["n_topics"], corpus.n_tokens / max(1, corpus.n_docs))
        if isinstance(corpus, ShardFolder):  # its workers read one file per shard
            if shards is not None and shards != corpus.n_shards:
                raise SettingError("shards", f"shards must be the {corpus.n_shards} files of the shard folder "
                                             f"{corpus.path} (its workers read one file per shard), found {shards}")
            return {**settled, "sampler": sampler, "shards": corpus.n_shards}
        wanted = shards or corpus.n_shards or default_shards(corpus.n_tokens)
        # as many as the documents allow: a tiny corpus gets fewer
        shards = shard_bounds(doc_pointers(corpus.doc_lengths), wanted).size - 1
        return {**settled, "sampler": sampler, "shards": shards}

    @classmethod
    def estimate_bytes(cls, corpus: Corpus, settings: Mapping, threads: int, streamed: bool = False,
                       read_whole: bool = False, prior: TopicWordPrior | None = None) -> float:
        """As :meth:`Method.estimate_bytes`; a shard folder's run is a cluster's client (with a
        scheduler) or trains from disk, unless ``read_whole``: the estimate of the same run on the
        folder read whole; ``prior``: the run's topic-word prior, as the constructor takes it."""
        K, V, D, N = int(settings["n_topics"]), corpus.n_words, corpus.n_docs, corpus.n_tokens
        cells = float(np.minimum(corpus.word_frequencies(), K).sum())  # at most, word-topic cells
        if settings["sampler"] == "dense":
            counts = 4.0 * V * K
        else:  # a sorted list of min(K, frequency) packed (count, topic) entries per word
            counts = 8.0 * cells + 12.0 * V
        if prior is not None:  # its cells, by word for the kernels too
            counts += 32.0 * prior.n_cells + 8.0 * V
            if settings["sampler"] == "dense":  # the dense one's: a row of K for each word with cells
                counts += 8.0 * K * np.unique(prior.words).size
        # tokens (words and z, which the corpus then holds instead of its counts; the alias
        # sampler's orders too), and the larger of the start's sorted word-topic codes (a range
        # of words at a time) and the sparse sampler's lists of each document's topics (made at
        # the first sweep, the codes gone); where each document's slices start;
        # one copy of the counts, which every thread samples; vectors of K (the totals, each
        # block's copy of them, the priors, the snapshots' and the histograms'); the snapshots'
        # sums (a column and a sum of each word-topic and document-topic cell, kept by rows, and
        # the scratch of a part's merge); the model: its counts, written a part at a time (the
        # final state's word-topic cells sorted by topic on the way, 48 bytes a cell; a shard's
        # document cells, 20 bytes each), or held (16 bytes a cell at most) and phi and theta
        # computed from them whole (the scratch: a chunk of theta's counts, the word lists'
        # entries spread out)
        tokens = 16.0 * N if settings["sampler"] == "alias" else 8.0 * N
        start = pair_part_bytes(N, V, K)
        if settings["sampler"] == "sparse":  # each document's list of topics and counts, min(K, N_d) long
            start = max(start, document_list_bytes(corpus.doc_lengths, K))
        shards = int(settings.get("shards") or 1)
        tokens += start
        runs = 4.0 * D * (shards + 1)
        vectors = 8.0 * K * (8 + shards)
        word_sums, doc_sums = sum_cell_bytes(K, 2) * cells + 8.0 * V + MERGE_BYTES, doc_sum_bytes(N, D, K)
        if isinstance(corpus, ShardFolder) and settings.get("scheduler"):  # a cluster's client: the workers hold
            # the tokens, each document's slices and snapshot sums (and check their own memory); the client each
            # document's length and id
            tokens, runs, doc_sums = 0.0, 64.0 * D, 0.0
        elif isinstance(corpus, ShardFolder) and not read_whole:  # from disk: the blocks in flight, and the start's
            # one shard's tokens (as read, with their topics and slices), the document lists of all (held from
            # then on)
            blocks = 12.0 * N / shards ** 2 * (threads + 2)
            shard_tokens = (16.0 + 12.0) * N / shards + 4.0 * D / shards * (shards + 1)
            tokens = blocks + 8.0 * D + shard_tokens + document_list_bytes(corpus.doc_lengths, K)
            runs, doc_sums = 0.0, doc_sums / shards  # the documents' sums on disk, a shard's at a time here
        snapshots = word_sums + doc_sums if settings.get("snapshots", 1) > 1 else 0.0
        doc_cells = min(float(N), float(K) * D)
        words_written = 48.0 * cells if settings.get("snapshots", 1) <= 1 else 24.0 * SPREAD_CELLS
        model = 16.0 * (K + D) + words_written + 20.0 * doc_cells / shards
        if not streamed:
            model += 16.0 * (cells + doc_cells) + 8.0 * K * V + 8.0 * D * K
        scratch = 12.0 * max(THETA_CHUNK_CELLS, K) + 48.0 * ENTRY_CHUNK
        return tokens + runs + counts + vectors + snapshots + model + scratch

    def __init__(self, corpus: Corpus, settings: Mapping, *, threads: int, checkpoint: Checkpoint | None,
                 source: str | None = None, start: Start | None = None, client=None,
                 prior: TopicWordPrior | None = None):
        K = int(settings["n_topics"])
        folder = corpus if isinstance(corpus, ShardFolder) else None
        if folder is not None:  # its workers read the tokens, or this process from disk
            if client is None and settings["sampler"] != "sparse":
                raise SettingError("sampler", f"{folder.path}: training from disk samples with the sparse sampler, "
                                              f"found sampler {settings['sampler']!r}: give --sampler sparse, or "
                                              f"read the shard folder whole (a memory limit it fits under)")
            words, doc_ptr, ranges = None, None, folder.shard_ranges()
        else:
            words, doc_ptr = corpus.as_tokens()  # kept by the sampler, and by the corpus instead of its counts
            bounds = shard_bounds(doc_ptr, settings["shards"])
            ranges = shard_ranges(bounds, doc_ptr[bounds])
        n_tokens, n_shards = int(ranges[-1].hi), len(ranges)
        self.rngs = random_streams.generators(settings["seed"], n_shards + 1)
        z, files, doc_cells, disk_files = None, None, None, None
        if start is not None:
            z = np.array(start.z, dtype=np.int32)
            self.alpha, self.beta = np.array(start.alpha, dtype=np.float64), float(start.beta)
        elif checkpoint is None:
            # (a value per topic where the settings come from a model: an update's)
            self.alpha = np.broadcast_to(np.asarray(settings["alpha"], dtype=np.float64), (K,)).copy()
            self.beta = float(settings["beta"])
        else:
            random_streams.restore(self.rngs, checkpoint.rng_states, source)
            self.alpha, self.beta = checkpoint.alpha, checkpoint.beta
            if ARRAY in checkpoint.arrays:  # written on a cluster: the workers wrote the topics beside the folder
                files = ShardFiles.from_checkpoint(checkpoint.arrays, source, n_shards, checkpoint.iteration)
                if folder is None:  # read here
                    z, doc_cells = read_topics(files, ranges, K, corpus.fingerprint())
                    files = None
                elif client is None:  # read shard by shard by the engine that trains from disk
                    disk_files, files = files, None
            else:
                z = self.checkpoint_arrays(checkpoint, source, {"z": (n_tokens,)})["z"]
                if z.size and (z.min() < 0 or z.max() >= K):
                    raise LdacliError(f"{source}: expected topic assignments in [0, {K}), found some outside")
        self.interval = settings["optimize_interval"]
        self.learns_from = learns_first(self.interval, settings["optimize_burn_in"])
        self.n_tokens = n_tokens
        self.done = checkpoint.iteration if checkpoint is not None else 0  # sweeps the sampler's state has had
        self.snapshots = Snapshots(snapshot_sweeps(settings["iterations"], settings["snapshots"],
                                                   settings["snapshot_interval"]),
                                   K, corpus.n_words, np.diff(doc_ptr) if doc_ptr is not None else folder.doc_lengths, checkpoint,
                                   source, paced=None if settings.get("max_seconds") is None else
                                   (settings["snapshots"], settings["snapshot_interval"]),
                                   doc_cells=doc_cells, workers_read_docs=files is not None or disk_files is not None)
        self.prior = self._topic_word_prior(prior, corpus.n_words, K, checkpoint, source)
        # an update's prior is the evidence it carries: too large for params, kept in the model's arrays
        self.prior_in_params = self.prior is not None and settings.get("update") is None
        if client is None and folder is not None:  # from disk, shard by shard
            self.sampler = DiskSampler(folder, K, self.alpha, self.beta, self.rngs[1:], threads=threads,
                                       prior=self.prior, files=disk_files, z=z, scratch=settings.get("scratch"),
                                       first=None if disk_files or z is not None else
                                       FirstTopics(self.rngs[0], corpus.n_words, K),
                                       keeps_doc_sums=bool(self.snapshots.sweeps))
            if self.snapshots.sweeps:  # the sampler keeps the documents' sums on disk, from those restored here
                self.sampler.start_doc_sums(self.snapshots.docs_to_send())
                self.snapshots.keep_docs_on(self.sampler)
        elif client is None:  # the corpus is here: its bounds above
            if z is None:
                z = FirstTopics(self.rngs[0], corpus.n_words, K).draw(words)
            if threads > n_shards > 1:
                log.info("%d shards keep at most %d threads busy (--shards N for more; each sweep then costs "
                         "more, see docs/performance.md)", n_shards, n_shards)
            self.sampler: Sampler = ThreadsSampler(settings["sampler"], words, doc_ptr, z, corpus.n_words, K,
                                                   self.alpha, self.beta, bounds, self.rngs[1:], threads,
                                                   prior=self.prior)
        else:  # the first topics (without z) are drawn on the workers, from stream 0 as above
            what = "the start" if checkpoint is None else f"the checkpoint of sweep {checkpoint.iteration}"
            sync = SyncPoint(self.done, self.alpha.copy(), self.beta, random_streams.states(self.rngs[1:]), z=z,
                             files=files, what=what,
                             doc_cells=self.snapshots.docs_to_send() if folder is not None else None)
            freq = folder.word_frequencies() if folder is not None else value_counts(words, corpus.n_words)
            self.sampler = DaskSampler(settings["sampler"], corpus.n_words, K, ranges, freq, client, sync,
                                       self.rngs[0].bit_generator.state, words=words, doc_ptr=doc_ptr,
                                       folder=folder, fingerprint=corpus.fingerprint(), prior=self.prior,
                                       keeps_doc_sums=folder is not None and bool(self.snapshots.sweeps))
            if folder is not None:  # the client holds nothing per document but its length
                self.snapshots.keep_docs_on(self.sampler)
        # the sums as of the sync point a cluster's run goes back to when a worker is lost, and as
        # of the checkpoint being written (which becomes the sync point once written); only a
        # cluster's run goes back, and a run elsewhere would keep a second copy of the sums
        self._goes_back = isinstance(self.sampler, DaskSampler)
        self._snapshots_at = [self.snapshots.state() if self._goes_back else None, None]

    def _topic_word_prior(self, given, V: int, K: int, checkpoint: Checkpoint | None, source: str | None
                          ) -> TopicWordPrior | None:
        """The run's topic-word prior: the one given, or a resumed run's from its checkpoint
        (one given must then be the same); None for the symmetric beta."""
        if given is not None and not isinstance(given, TopicWordPrior):
            raise SettingError("topic_word_prior", f"topic_word_prior must be a TopicWordPrior "
                                                   f"(ldacli.topic_word_prior.seed_prior), found {type(given).__name__}")
        if given is not None and (given.n_words, given.n_topics) != (V, K):
            raise SettingError("topic_word_prior", f"topic_word_prior must be one of {V} words and {K} topics, "
                                                   f"found one of {given.n_words} words and {given.n_topics} topics")
        prior = given if given is not None and given.n_cells else None
        if checkpoint is not None:
            stored = TopicWordPrior.from_arrays(checkpoint.arrays, V, K, source)
            if prior is not None and prior != stored:
                raise SettingError("topic_word_prior", f"{source}: the checkpoint was written under "
                                                       f"{'another' if stored else 'no'} topic-word prior, which "
                                                       f"cannot change on resume")
            prior = stored
        if prior is not None and self.interval:
            raise SettingError("optimize_interval", OPTIMIZE_WITH_PRIOR, ("seed_words",))
        return prior

    def step(self, iteration: int) -> None:
        while True:
            try:
                for it in range(self.done + 1, iteration + 1):
                    self._sweep(it)
                    self.done = it
                return
            except ShardsRebuilt as back:  # a lost worker: the state is back at an earlier sweep
                self.done, self.alpha, self.beta = back.iteration, back.alpha, back.beta
                self.snapshots.restore(self._snapshots_at[0])  # those since are taken again

    def _sweep(self, iteration: int) -> None:
        """Sweep number ``iteration``, then learn the priors when it is their turn."""
        s = self.sampler
        s.sweep()
        if self.learns_from is not None and iteration >= self.learns_from and iteration % self.interval == 0:
            self.alpha = alpha_from_histograms(*s.doc_histograms(), self.alpha)
            self.beta = beta_from_histogram(s.word_histogram(), s.topic_totals(), self.beta, s.V)
            s.set_priors(self.alpha, self.beta)
            log.info("sweep %d: learned sum(alpha) %.4g, beta %.4g", iteration, self.alpha.sum(), self.beta)
        if self.snapshots.due(iteration):
            self.snapshots.take(iteration, s)

    def expect_last(self, iteration: int) -> None:
        self.snapshots.expect_last(iteration)

    def loglik(self) -> float:
        return log_likelihood(self.sampler, self.alpha, self.beta) / self.n_tokens

    def phi(self) -> np.ndarray:
        """(K, V) float64 in C order: the final state's phi (:func:`~ldacli.topic_counts.phi_rows`),
        assembled in place (no dense copy of the counts on the way)."""
        s = self.sampler
        phi = np.zeros((s.K, s.V))
        s.counts.add_to(phi, 0)
        phi_rows(phi, 0, 0, s.counts.nk, self.beta, s.priors.beta_sum, self.prior)
        return phi

    def rng_states(self) -> list:
        return random_streams.states(self.rngs[:1]) + self.sampler.rng_states()

    def checkpoint_state(self, path: str, iteration: int) -> tuple[list, dict[str, np.ndarray]]:
        states, arrays = self.sampler.checkpoint(path, iteration)
        self._snapshots_at[1] = self.snapshots.state() if self._goes_back else None
        return random_streams.states(self.rngs[:1]) + states, {**arrays, **self._own_arrays()}

    def checkpoint_written(self, path: str, iteration: int) -> None:
        self.sampler.committed()
        if self._snapshots_at[1] is not None:
            self._snapshots_at = [self._snapshots_at[1], None]

    def arrays(self) -> dict[str, np.ndarray]:
        """The checkpoint's arrays of a run on threads (on a cluster, :meth:`checkpoint_state`
        gathers the topics from the workers)."""
        return {"z": self.sampler.z, **self._own_arrays()}

    def _own_arrays(self) -> dict[str, np.ndarray]:
        """The method's checkpoint arrays besides the sampler's: the topic-word prior, the
        snapshots' sums."""
        return {**(self.prior.arrays() if self.prior is not None else {}), **self.snapshots.arrays()}

    def result(self, iterations_done: int) -> tuple[np.ndarray, np.ndarray, dict]:
        """phi and theta computed from the run's state as it is (the sampler's counts, or the
        snapshots' sums), each built in place: what :meth:`model_counts` stores, and a model file
        gives back from it, bit for bit."""
        sums, params = self._final(iterations_done)
        s = self.sampler
        phi, theta = np.empty((s.K, s.V)), np.empty((s.n_docs, s.K))
        sums.word_rows(phi, 0)
        phi_rows(phi, 0, sums.snapshots, sums.totals, self.beta, s.priors.beta_sum, self.prior)
        sums.doc_rows(theta, 0)
        theta_rows(theta, sums.snapshots, self.snapshots.lengths, self.alpha)
        return phi, theta, params

    def model_counts(self, iterations_done: int) -> tuple[TopicCounts, dict]:
        """The whole numbers the model's phi and theta are computed from (the final state's
        counts, or the snapshots' sums), by topic and by document, and the params to add."""
        sums, params = self._final(iterations_done)
        return TopicCounts(sums.words(), sums.docs(), sums.snapshots, self.prior), params

    def _final(self, done: int) -> tuple["_Sums", dict]:
        """What the model is computed from, and the params to add: the final state, or the
        snapshots' sums (the final state taken too when the run stopped before its last)."""
        params = {"topic_word_prior": self.prior.params()} if self.prior_in_params else {}
        snaps, s = self.snapshots, self.sampler
        if not snaps.sweeps:  # the final state alone
            def word_rows(out, first):
                out.fill(0.0)
                s.counts.add_to(out, first)

            def words():
                w, t, n = s.counts.cells()
                codes, n = sorted_cells(t.astype(np.int64) * s.V + w, n)
                return SparseRows.streamed(cell_parts(codes, n), s.K, s.V)

            return _Sums(0, s.counts.nk, word_rows, rows_from_blocks(s.doc_topic_blocks(THETA_CHUNK_CELLS)), words,
                         lambda: SparseRows.streamed(s.doc_topic_cell_parts, s.n_docs, s.K)), params
        if not snaps.taken or snaps.taken[-1] != done:
            snaps.take(done, s)
        params["snapshot_sweeps"] = list(snaps.taken)
        return _Sums(len(snaps.taken), snaps.topic, snaps.word_sum_rows, snaps.doc_sum_rows, snaps.word_sums,
                     snaps.doc_sums), params

    def close(self) -> None:
        self.sampler.close()


@dataclass(frozen=True)
class _Sums:
    """What a run's model is computed from: ``snapshots`` (the number of states summed; 0: the
    final state's counts), ``totals`` (K,) each topic's; ``word_rows(out, first)`` and
    ``doc_rows(out, first)`` fill rows of the dense word-topic (K, V) and document-topic (D, K)
    sums (``doc_rows`` for consecutive blocks from 0); ``words()`` and ``docs()`` the same kept
    sparse (:class:`~ldacli.topic_counts.SparseRows`, made as a file takes them)."""

    snapshots: int
    totals: np.ndarray
    word_rows: Callable[[np.ndarray, int], None]
    doc_rows: Callable[[np.ndarray, int], None]
    words: Callable[[], SparseRows]
    docs: Callable[[], SparseRows]
