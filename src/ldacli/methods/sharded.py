"""The collapsed Gibbs sampler state, split into blocks that threads sample in parallel.

The partition scheme (as tomotopy's default parallel scheme, and Yan et al. 2009 on GPUs):
documents are cut into P shards of about equal token counts and the vocabulary into P slices of
about equal token counts (both depend on the corpus and P only, never on the number of
threads). A sweep is P rounds; in round r, shard s samples its tokens of slice (s + r) mod P.
The P blocks of a round touch disjoint documents and disjoint words, so they sample one shared
set of word-topic counts in place, each exact for its words; only the topic totals are shared
by all blocks, so each block starts from its own copy of them as they were at the round's start,
and their changes are summed after the round (integer additions, in any order). Every shard has
its own random stream, spawned from the run's seed sequence, and draws from it in the same order
whatever the threads. So the same seed gives the same topics for any ``threads``; with one shard
this is the exact sequential sampler.

There is no copy of the counts per thread and nothing to merge after a sweep; what is serial is
adding P vectors of K totals after each round.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ldacli import _cgs
from ldacli.errors import LdacliError

SAMPLERS = ("dense", "sparse", "alias")
MH_STEPS = 2
MAX_DEFAULT_SHARDS = 4
TOKENS_PER_SHARD = 100_000


def default_shards(n_tokens: int) -> int:
    """One shard per 100,000 tokens, at most 4: small corpora get the exact sequential sampler.
    More shards allow more threads but cost more per sweep, since a document is visited once per
    slice it has tokens in: on 20NG, 4 shards cost 13% (K=100) and 6% (K=1000) over one, 16
    shards 78% and 58% (README, "Performance")."""
    return int(min(MAX_DEFAULT_SHARDS, max(1, n_tokens // TOKENS_PER_SHARD)))


def shard_bounds(doc_ptr: np.ndarray, n_shards: int) -> np.ndarray:
    """Document boundaries (n_shards + 1,) cutting the corpus into shards of ~equal tokens
    (fewer shards when there are fewer documents). Shard folders are cut by this rule too
    (:mod:`ldacli.formats.shards`), so that shard s of a folder is shard s of a run."""
    D = doc_ptr.size - 1
    n_shards = max(1, min(n_shards, D))
    targets = np.arange(1, n_shards) * (doc_ptr[-1] / n_shards)
    cuts = np.searchsorted(doc_ptr, targets, side="left")
    bounds = np.concatenate([[0], cuts, [D]]).astype(np.int64)
    return np.maximum.accumulate(bounds)


def word_slices(freq: np.ndarray, n_slices: int) -> np.ndarray:
    """Cut the word ids into ``n_slices`` ranges of about equal token counts: slice j is the
    words ``cuts[j] <= w < cuts[j + 1]`` of the returned (n_slices + 1,) int64 ``cuts``."""
    cum = np.cumsum(freq, dtype=np.int64)
    total = int(cum[-1]) if cum.size else 0
    cuts = [0] + [int(np.searchsorted(cum, total * j // n_slices, side="right")) for j in range(1, n_slices)]
    return np.maximum.accumulate(np.array(cuts + [freq.size], np.int64))


def sorted_within_documents(words: np.ndarray, doc_ptr: np.ndarray) -> bool:
    """Whether each document's words are in increasing id order (``Corpus.tokens`` gives them
    so), which the slices need: a document's tokens of a slice are then one run."""
    falls = words[1:] < words[:-1]
    starts = doc_ptr[1:-1]
    falls[starts[(starts > 0) & (starts < words.size)] - 1] = False
    return not falls.any()


# Where dense beats sparse (``benchmarks/auto_rules.py``, README "Performance", default shards):
# below 24 topics on documents of 20NG's or KOS's length (sparse ahead from 24 on both; on
# documents of 20 tokens from 16, by 4%); never on long documents (at 1,000 tokens a document,
# sparse won from 8 topics: dense rebuilds a document's counts at each of its visits).
DENSE_BELOW = 24
LONG_DOC_TOKENS = 400


def choose_sampler(n_topics: int, tokens_per_doc: float) -> str:
    """The fastest sampler for this many topics and documents of this mean length."""
    if n_topics < DENSE_BELOW and tokens_per_doc < LONG_DOC_TOKENS:
        return "dense"
    return "sparse"


class Replica:
    """A set of topic-word counts (the shared one, or a Dask worker's copy) with its own topic
    totals and scratch arrays."""

    def __init__(self, kind: str, V: int, K: int, pairs: tuple[np.ndarray, np.ndarray],
                 layout: "ListLayout | None" = None):
        """The counts ``pairs`` (:func:`word_topic_pairs`) as the sampler ``kind`` keeps them;
        ``layout`` (:func:`list_layout`) for the word lists of ``sparse`` and ``alias``."""
        # "alias" keeps its word-topic counts in the same sorted word lists as "sparse"
        self.kind = kind
        codes, counts = pairs
        self.nk = np.bincount(codes % K, weights=counts, minlength=K).astype(np.int32)
        if kind == "dense":
            self.nwk = np.zeros(V * K, np.int32)
            self.nwk[codes] = counts
            self.nwk = self.nwk.reshape(V, K)
        else:
            self.word_ptr, self.bits = layout.word_ptr, layout.bits
            self.wt, self.wt_len = _word_lists(codes, counts, V, K, layout)
        self._scratch(K)

    def _scratch(self, K: int) -> None:
        self.ndk = np.zeros(K, np.int32)
        if self.kind == "dense":
            self.work = np.zeros(2 * K)
        elif self.kind == "sparse":
            self.doc_topics = np.zeros(K + 1, np.int32)
            self.doc_pos = np.full(K, -1, np.int32)
            self.mark = np.zeros(K, np.int32)
            self.work = np.zeros(4 * K)
        else:
            self.mark = np.zeros(K, np.int32)
            self.iwork = np.zeros(5 * K, np.int32)
            self.work = np.zeros(3 * K)
            self.ndk_shard = np.zeros((0, K), np.int32)

    @classmethod
    def empty(cls, kind: str, V: int, K: int, layout: "ListLayout | None" = None) -> "Replica":
        """A replica with no counts yet: a Dask worker's, which :meth:`unpack` fills with the
        words of each block before it is sampled."""
        return cls(kind, V, K, (np.zeros(0, np.int64), np.zeros(0, np.int64)), layout)

    @classmethod
    def sharing(cls, source: "Replica") -> "Replica":
        """A replica that samples ``source``'s word-topic counts in place, with its own topic
        totals and scratch: a thread's, for the blocks of a round."""
        replica = cls.__new__(cls)
        replica.kind = source.kind
        replica.nk = source.nk.copy()
        if source.kind == "dense":
            replica.nwk = source.nwk
        else:
            replica.word_ptr, replica.bits, replica.wt, replica.wt_len = (source.word_ptr, source.bits, source.wt,
                                                                          source.wt_len)
        replica._scratch(source.nk.size)
        return replica

    def sweep(self, words, runs, z, alpha, beta, beta_sum, rng, part=0, order=None, doc_of=None) -> None:
        """Sample one shard's tokens of word slice ``part`` (``runs``: :func:`slice_runs`); the
        alias sampler visits the tokens ``order`` (those tokens, grouped by word)."""
        if self.kind == "dense":
            _cgs.dense_sweep(words, runs, z, self.nwk, self.nk, alpha, beta, beta_sum, self.ndk, self.work, rng,
                             part)
        elif self.kind == "alias":
            if self.ndk_shard.shape[0] < runs.shape[0]:
                self.ndk_shard = np.zeros((runs.shape[0], self.nk.size), np.int32)
            _cgs.alias_sweep(words, runs, z, order, doc_of, self.word_ptr, self.wt, self.wt_len, self.bits,
                             self.nk, alpha, beta, beta_sum, self.ndk_shard, self.ndk, self.mark, self.iwork,
                             self.work, MH_STEPS, rng)
        else:
            _cgs.sparse_sweep(words, runs, z, self.word_ptr, self.wt, self.wt_len, self.bits, self.nk, alpha,
                              beta, beta_sum, self.ndk, self.doc_topics, self.doc_pos, self.work, rng, part)

    def move(self, words, order, z_from, z_to) -> None:
        """Move tokens' counts from topics ``z_from`` to ``z_to`` (``order``: by word)."""
        if self.kind == "dense":
            _cgs.apply_dense(words, order, z_from, z_to, self.nwk, self.nk)
        else:
            _cgs.apply_sparse(words, order, z_from, z_to, self.word_ptr, self.wt, self.wt_len, self.bits, self.nk,
                              self.ndk, self.mark)

    def pack(self, word_ids: np.ndarray) -> dict:
        """The counts of the words ``word_ids`` and all topic totals, as arrays to send to
        another replica's :meth:`unpack` (a Dask worker's, for one block)."""
        if self.kind == "dense":
            return {"nk": self.nk.copy(), "rows": self.nwk[word_ids]}
        idx, lens = _list_slots(self.word_ptr, self.wt_len, word_ids)
        return {"nk": self.nk.copy(), "lens": lens, "entries": self.wt[idx]}

    def unpack(self, word_ids: np.ndarray, packed: dict) -> None:
        """Take the counts :meth:`pack` sent for ``word_ids``, and the topic totals."""
        np.copyto(self.nk, packed["nk"])
        if self.kind == "dense":
            self.nwk[word_ids] = packed["rows"]
            return
        self.wt_len[word_ids] = packed["lens"]
        idx, _ = _list_slots(self.word_ptr, self.wt_len, word_ids)
        self.wt[idx] = packed["entries"]

    def word_topic_counts(self) -> np.ndarray:
        """Dense (V, K) int32 counts."""
        if self.kind == "dense":
            return self.nwk.copy()
        V, K = self.wt_len.size, self.nk.size
        nwk = np.zeros((V, K), np.int32)
        rows, idx = self._entries()
        topics, counts = unpack_entries(self.wt[idx], self.bits)
        nwk[rows, topics] = counts
        return nwk

    def nonzero_word_topic_counts(self) -> np.ndarray:
        if self.kind == "dense":
            return self.nwk[self.nwk > 0]
        return unpack_entries(self.wt[self._entries()[1]], self.bits)[1]

    def _entries(self):
        lengths = self.wt_len.astype(np.int64)
        rows = np.repeat(np.arange(lengths.size), lengths)
        starts = np.repeat(self.word_ptr[:-1], lengths)
        within = np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return rows, starts + within


def _list_slots(word_ptr: np.ndarray, wt_len: np.ndarray, word_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the entries of the words ``word_ids``'s lists, and the lists' lengths."""
    lens = wt_len[word_ids].astype(np.int64)
    starts = word_ptr[word_ids]
    within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    return np.repeat(starts, lens) + within, lens.astype(np.int32)


@dataclass(frozen=True)
class ListLayout:
    """Where the packed word lists live: ``word_ptr`` (V+1,) int64, word w's list starting at
    ``word_ptr[w]`` with capacity ``word_ptr[w+1] - word_ptr[w]``; each entry
    ``(count << bits) | (2**bits - 1 - topic)`` of ``dtype`` (see ``ext/_cgs.pyx``)."""

    word_ptr: np.ndarray
    bits: int
    dtype: type


def list_layout(freq: np.ndarray, n_topics: int) -> ListLayout:
    """The layout of the word lists for word frequencies ``freq`` (V,): capacity min(K, the
    word's frequency), fixed for the run; uint32 entries when the largest frequency fits beside
    the topic bits, else uint64."""
    word_ptr = np.zeros(freq.size + 1, np.int64)
    np.cumsum(np.minimum(freq, n_topics), out=word_ptr[1:])
    bits = max(1, int(n_topics - 1).bit_length())
    largest = int(freq.max()) if freq.size else 0
    return ListLayout(word_ptr, bits, np.uint32 if largest < 1 << (32 - bits) else np.uint64)


def pack_entries(topics: np.ndarray, counts: np.ndarray, layout: ListLayout) -> np.ndarray:
    """Word-list entries of these topics and counts."""
    dtype = layout.dtype
    return (counts.astype(dtype) << dtype(layout.bits)) | (dtype((1 << layout.bits) - 1) - topics.astype(dtype))


def unpack_entries(entries: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(topics, counts)`` (int32) of word-list entries."""
    mask = entries.dtype.type((1 << bits) - 1)
    return ((mask - (entries & mask)).astype(np.int32), (entries >> entries.dtype.type(bits)).astype(np.int32))


def word_topic_pairs(words: np.ndarray, z: np.ndarray, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """The word-topic counts of tokens ``words`` with topics ``z`` as ``(codes, counts)``: the
    distinct ``word * K + topic`` codes (int64, sorted) and how many tokens have each. The N
    codes are sorted in place, as int32 when they fit: this is the start-up's peak of memory."""
    largest = (int(words.max()) + 1) * n_topics if words.size else 0
    codes = words.astype(np.int32 if largest < 2**31 else np.int64)
    codes *= n_topics
    codes += z
    codes.sort()  # in place: np.unique would sort a copy
    starts = np.flatnonzero(np.concatenate(([codes.size > 0], codes[1:] != codes[:-1])))
    return codes[starts].astype(np.int64), np.diff(np.append(starts, codes.size)).astype(np.int64)


def merge_pairs(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The sum of sets of word-topic counts of :func:`word_topic_pairs` (one per shard, say)."""
    codes, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([p[1] for p in parts]), minlength=codes.size)
    return codes, counts.astype(np.int64)


def shard_layout(doc_ptr: np.ndarray, bounds: np.ndarray) -> list[dict]:
    """The shards of a corpus cut at document ``bounds``: each one's token range ``lo:hi`` and
    its document pointers ``ptr`` (from 0)."""
    shards = []
    for s in range(len(bounds) - 1):
        lo, hi = int(doc_ptr[bounds[s]]), int(doc_ptr[bounds[s + 1]])
        shards.append({"lo": lo, "hi": hi, "ptr": np.ascontiguousarray(doc_ptr[bounds[s]:bounds[s + 1] + 1] - lo)})
    return shards


def slice_runs(words: np.ndarray, ptr: np.ndarray, slices: np.ndarray) -> np.ndarray:
    """Where each document's tokens of each word slice start: (d, P+1) int64, row j the
    positions in ``words`` of document j's first token of slice 0, 1, ..., P-1, then its end
    (each document's words sorted; see ``ext/_cgs.pyx``)."""
    runs = np.empty((ptr.size - 1, slices.size), np.int64)
    _cgs.slice_runs(words, np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(slices, dtype=np.int64),
                    runs)
    return runs


def shard_arrays(kind: str, words: np.ndarray, ptr: np.ndarray, slices: np.ndarray) -> dict:
    """What a sampler ``kind`` needs of a shard besides its tokens and topics: ``runs``
    (:func:`slice_runs`); for the alias sampler also ``order``, the tokens grouped by word,
    ``order_cuts``, where each word slice's tokens start in ``order``, and ``doc_of``, each
    token's document."""
    arrays = {"runs": slice_runs(words, ptr, slices)}
    if kind == "alias":
        order = np.argsort(words, kind="stable").astype(np.int32)
        arrays.update(order=order, order_cuts=np.searchsorted(words[order], slices),
                      doc_of=np.repeat(np.arange(ptr.size - 1, dtype=np.int32), np.diff(ptr)))
    return arrays


def sample_block(replica: Replica, shard: dict, words, z, rng, j: int, alpha, beta: float, beta_sum: float) -> None:
    """Sample shard ``shard``'s tokens ``words`` (topics ``z``) of word slice ``j`` against
    ``replica``: the one call of a block, for threads and Dask workers alike."""
    order = doc_of = None
    if "order" in shard:
        cuts = shard["order_cuts"]
        order, doc_of = shard["order"][cuts[j]:cuts[j + 1]], shard["doc_of"]
    replica.sweep(words, shard["runs"], z, alpha, beta, beta_sum, rng, j, order, doc_of)


def _word_lists(codes, counts, V: int, K: int, layout: ListLayout):
    """Per-word packed (topic, count) lists sorted by count (largest first), then topic, from
    the counts of :func:`word_topic_pairs`."""
    w, t = codes // K, (codes % K).astype(np.int32)
    order = np.lexsort((t, -counts, w))
    w, t, counts = w[order], t[order], counts[order].astype(np.int32)
    lengths = np.bincount(w, minlength=V).astype(np.int32)
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    slot = layout.word_ptr[w] + (np.arange(w.size) - first[w])
    wt = np.zeros(layout.word_ptr[-1], layout.dtype)
    wt[slot] = pack_entries(t, counts, layout)
    return wt, lengths


class ShardedSampler:
    """Collapsed Gibbs sampling of ``z`` for a corpus's token arrays, in blocks and threads.

    ``words`` (N,) int32 and ``doc_ptr`` (D+1,) int64 as from ``Corpus.tokens()`` (each
    document's words sorted); ``z`` (N,) int32 is updated in place; ``rngs`` one generator per
    shard (``len(bounds) - 1``).
    """

    def __init__(self, kind: str, words, doc_ptr, z, n_words: int, n_topics: int, alpha, beta: float,
                 bounds: np.ndarray, rngs: list, threads: int = 1):
        if kind not in SAMPLERS:
            raise LdacliError(f"sampler must be one of {', '.join(SAMPLERS)}, found {kind!r}")
        n_shards = len(bounds) - 1
        if n_shards > 1 and not sorted_within_documents(words, doc_ptr):
            raise LdacliError("the sampler's shards need each document's words in increasing id order")
        self.kind = kind
        self.words, self.doc_ptr, self.z = words, doc_ptr, z
        self.V, self.K = n_words, n_topics
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)
        self.rngs = rngs
        freq = np.bincount(words, minlength=n_words)
        self.slices = word_slices(freq, n_shards)
        self.shards = shard_layout(doc_ptr, bounds)
        for shard in self.shards:
            shard.update(shard_arrays(kind, words[shard["lo"]:shard["hi"]], shard["ptr"], self.slices))
        threads = max(1, min(threads, n_shards))
        layout = None if kind == "dense" else list_layout(freq, n_topics)
        self.shared = Replica(kind, n_words, n_topics, word_topic_pairs(words, z, n_topics), layout)
        # each thread samples the shared counts with its own totals and scratch
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(threads):
            self._free.put(Replica.sharing(self.shared))
        self._pool = ThreadPoolExecutor(threads) if threads > 1 else None

    @property
    def counts(self) -> Replica:
        """The topic-word counts after the last sweep."""
        return self.shared

    def set_priors(self, alpha, beta: float) -> None:
        """New priors for the following sweeps (learned ones, say)."""
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)

    def _run_block(self, s: int, j: int, start: np.ndarray) -> np.ndarray:
        """Sample block (shard ``s``, slice ``j``) from the round's topic totals ``start``;
        returns the change of the totals."""
        shard = self.shards[s]
        lo, hi = shard["lo"], shard["hi"]
        worker = self._free.get()
        try:
            np.copyto(worker.nk, start)
            sample_block(worker, shard, self.words[lo:hi], self.z[lo:hi], self.rngs[s], j, self.alpha, self.beta,
                         self.V * self.beta)
            return worker.nk - start
        finally:
            self._free.put(worker)

    def sweep(self) -> None:
        P = len(self.shards)
        for r in range(P):
            start = self.shared.nk.copy()
            blocks = [(s, (s + r) % P, start) for s in range(P)]
            if self._pool is None:
                deltas = [self._run_block(*b) for b in blocks]
            else:
                deltas = list(self._pool.map(lambda b: self._run_block(*b), blocks))
            self.shared.nk += np.sum(deltas, axis=0, dtype=np.int32)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
