"""The collapsed Gibbs sampler state, split into shards that threads sweep in parallel.

Documents are cut into a fixed number of shards of about equal token counts (the layout depends
on the corpus and ``n_shards`` only, never on the number of threads). Every shard has its own
random stream, spawned from the run's seed sequence. One sweep (AD-LDA, Newman et al. 2009):

1. each shard is sampled against the topic-word counts as they were at the start of the sweep
   plus its own updates: a thread works on its own copy of the counts, into which the
   snapshot's counts of the shard's words are copied before the shard is sampled;
2. the snapshot then replays the moves of all shards, which gives the same integer counts
   whatever the order.

So the same seed gives the same topics for any ``threads``. With one shard this is the exact
sequential sampler.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ldacli import _cgs
from ldacli.errors import LdacliError
from ldacli.shard_folder import shard_bounds  # noqa: F401 - the rule shard folders are cut by, too

SAMPLERS = ("dense", "sparse", "alias")
MH_STEPS = 2
MAX_DEFAULT_SHARDS = 16
TOKENS_PER_SHARD = 100_000


def default_shards(n_tokens: int) -> int:
    """One shard per 100,000 tokens, at most 16: small corpora get the exact sequential
    sampler, large ones enough shards to keep 16 cores busy."""
    return int(min(MAX_DEFAULT_SHARDS, max(1, n_tokens // TOKENS_PER_SHARD)))


# Where dense beats sparse (``benchmarks/auto_rules.py``, README "Performance"): below 24 topics
# always; below 32 unless the documents are long (at 24 topics sparse won on documents of 1,000
# tokens and lost on 20NG, KOS and documents of 20 tokens).
DENSE_BELOW = 24
DENSE_BELOW_SHORT_DOCS = 32
LONG_DOC_TOKENS = 400


def choose_sampler(n_topics: int, tokens_per_doc: float) -> str:
    """The fastest sampler for this many topics and documents of this mean length."""
    if n_topics < DENSE_BELOW or (n_topics < DENSE_BELOW_SHORT_DOCS and tokens_per_doc < LONG_DOC_TOKENS):
        return "dense"
    return "sparse"


class Replica:
    """A copy of the topic-word counts (a thread's, a Dask worker's, or the snapshot), with its
    scratch arrays."""

    def __init__(self, kind: str, V: int, K: int, pairs: tuple[np.ndarray, np.ndarray],
                 layout: "ListLayout | None" = None):
        """The counts ``pairs`` (:func:`word_topic_pairs`) as the sampler ``kind`` keeps them;
        ``layout`` (:func:`list_layout`) for the word lists of ``sparse`` and ``alias``."""
        # "alias" keeps its word-topic counts in the same sorted word lists as "sparse"
        self.kind = kind
        codes, counts = pairs
        self.ndk = np.zeros(K, np.int32)
        self.nk = np.bincount(codes % K, weights=counts, minlength=K).astype(np.int32)
        if kind == "dense":
            self.nwk = np.zeros(V * K, np.int32)
            self.nwk[codes] = counts
            self.nwk = self.nwk.reshape(V, K)
            self.work = np.zeros(2 * K)
        else:
            self.word_ptr, self.bits = layout.word_ptr, layout.bits
            self.wt, self.wt_len = _word_lists(codes, counts, V, K, layout)
            self.doc_topics = np.zeros(K, np.int32)
            self.doc_pos = np.full(K, -1, np.int32)
            self.mark = np.zeros(K, np.int32)
            self.work = np.zeros(4 * K)
        if kind == "alias":
            self.iwork = np.zeros(5 * K, np.int32)
            self.work = np.zeros(3 * K)
            self.ndk_shard = np.zeros((0, K), np.int32)

    @classmethod
    def empty(cls, kind: str, V: int, K: int, layout: "ListLayout | None" = None) -> "Replica":
        """A replica with no counts yet: a worker's, which :meth:`restore` or :meth:`unpack`
        fills with the words of each shard before it samples the shard."""
        return cls(kind, V, K, (np.zeros(0, np.int64), np.zeros(0, np.int64)), layout)

    def sweep(self, words, doc_ptr, z, alpha, beta, beta_sum, rng, order=None, doc_of=None) -> None:
        if self.kind == "dense":
            _cgs.dense_sweep(words, doc_ptr, z, self.nwk, self.nk, alpha, beta, beta_sum,
                               self.ndk, self.work, rng)
        elif self.kind == "alias":
            if self.ndk_shard.shape[0] < doc_ptr.size - 1:
                self.ndk_shard = np.zeros((doc_ptr.size - 1, self.nk.size), np.int32)
            _cgs.alias_sweep(words, doc_ptr, z, order, doc_of, self.word_ptr, self.wt, self.wt_len, self.bits,
                             self.nk, alpha, beta, beta_sum, self.ndk_shard, self.ndk, self.mark, self.iwork,
                             self.work, MH_STEPS, rng)
        else:
            _cgs.sparse_sweep(words, doc_ptr, z, self.word_ptr, self.wt, self.wt_len, self.bits, self.nk, alpha,
                              beta, beta_sum, self.ndk, self.doc_topics, self.doc_pos, self.work, rng)

    def move(self, words, order, z_from, z_to) -> None:
        """Move tokens' counts from topics ``z_from`` to ``z_to`` (``order``: by word)."""
        if self.kind == "dense":
            _cgs.apply_dense(words, order, z_from, z_to, self.nwk, self.nk)
        else:
            _cgs.apply_sparse(words, order, z_from, z_to, self.word_ptr, self.wt, self.wt_len, self.bits, self.nk,
                              self.ndk, self.mark)

    def restore(self, source: "Replica", word_ids: np.ndarray) -> None:
        """Take ``source``'s counts for the words ``word_ids`` and all topic totals."""
        np.copyto(self.nk, source.nk)
        if self.kind == "dense":
            _cgs.restore_dense(word_ids, source.nwk, self.nwk)
        else:
            _cgs.restore_sparse(word_ids, self.word_ptr, source.wt, source.wt_len, self.wt, self.wt_len)

    def pack(self, word_ids: np.ndarray) -> dict:
        """The counts of the words ``word_ids`` and all topic totals, as arrays to send to
        another replica's :meth:`unpack` (what :meth:`restore` copies, but across processes)."""
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
    distinct ``word * K + topic`` codes (int64, sorted) and how many tokens have each."""
    codes, counts = np.unique(words.astype(np.int64) * n_topics + z, return_counts=True)
    return codes, counts.astype(np.int64)


def merge_pairs(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The sum of sets of word-topic counts of :func:`word_topic_pairs` (one per shard, say)."""
    codes, inverse = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    counts = np.bincount(inverse, weights=np.concatenate([p[1] for p in parts]), minlength=codes.size)
    return codes, counts.astype(np.int64)


def shard_layout(kind: str, words: np.ndarray, doc_ptr: np.ndarray, bounds: np.ndarray) -> list[dict]:
    """The shards of a corpus cut at document ``bounds``: each one's token range ``lo:hi``,
    its document pointers ``ptr`` (from 0), its distinct words, and for the alias sampler its
    tokens grouped by word and each token's document."""
    shards = []
    for s in range(len(bounds) - 1):
        lo, hi = int(doc_ptr[bounds[s]]), int(doc_ptr[bounds[s + 1]])
        ptr = np.ascontiguousarray(doc_ptr[bounds[s]:bounds[s + 1] + 1] - lo)
        shard = {"lo": lo, "hi": hi, "ptr": ptr, "word_ids": np.unique(words[lo:hi]).astype(np.int32)}
        if kind == "alias":
            shard.update(alias_arrays(words[lo:hi], ptr))
        shards.append(shard)
    return shards


def alias_arrays(words: np.ndarray, ptr: np.ndarray) -> dict:
    """What the alias sampler needs of a shard besides its tokens: ``order``, the tokens grouped
    by word, and ``doc_of``, each token's document."""
    return {"order": np.argsort(words, kind="stable").astype(np.int32),
            "doc_of": np.repeat(np.arange(ptr.size - 1, dtype=np.int32), np.diff(ptr))}


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
    """Collapsed Gibbs sampling of ``z`` for a corpus's token arrays, in shards and threads.

    ``words`` (N,) int32 and ``doc_ptr`` (D+1,) int64 as from ``Corpus.tokens()``; ``z`` (N,)
    int32 is updated in place; ``rngs`` one generator per shard (``len(bounds) - 1``).
    """

    def __init__(self, kind: str, words, doc_ptr, z, n_words: int, n_topics: int, alpha, beta: float,
                 bounds: np.ndarray, rngs: list, threads: int = 1):
        if kind not in SAMPLERS:
            raise LdacliError(f"sampler must be one of {', '.join(SAMPLERS)}, found {kind!r}")
        self.kind = kind
        self.words, self.doc_ptr, self.z = words, doc_ptr, z
        self.V, self.K = n_words, n_topics
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)
        self.rngs = rngs
        self.shards = shard_layout(kind, words, doc_ptr, bounds)
        threads = max(1, min(threads, len(self.shards)))
        layout = None if kind == "dense" else list_layout(np.bincount(words, minlength=n_words), n_topics)
        pairs = word_topic_pairs(words, z, n_topics)
        # The snapshot holds the counts after the last sweep; with one shard it is also the
        # only working copy (the exact sequential sampler).
        self.snapshot = Replica(kind, n_words, n_topics, pairs, layout)
        if len(self.shards) == 1:
            self.workers = [self.snapshot]
            self.order = None
        else:
            # each shard's topics at the sweep's start (see _run_shard); 2 bytes a token when K allows
            self.z_before = z.astype(np.int16 if n_topics <= 1 << 15 else np.int32)
            self.workers = [Replica.empty(kind, n_words, n_topics, layout) for _ in range(threads)]
            # all tokens grouped by word, for merging the moves into the snapshot word by word
            # (the dense counts need no order on one thread)
            grouped = kind != "dense" or threads > 1
            self.order = np.argsort(words, kind="stable").astype(np.int32) if grouped else None
        # With threads, the moves merge in parallel: each thread takes a range of ``order``
        # holding whole words, of about equal token mass.
        self.merge_chunks = []
        if self.order is not None and threads > 1 and words.size:
            sorted_words = words[self.order]
            cuts = [0]
            for t in range(1, threads):
                c = int(np.searchsorted(sorted_words, sorted_words[t * words.size // threads], side="left"))
                cuts.append(max(c, cuts[-1]))
            cuts.append(words.size)
            self.merge_chunks = [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        for r in self.workers:
            self._free.put(r)
        self._pool = ThreadPoolExecutor(threads) if threads > 1 else None

    @property
    def counts(self) -> Replica:
        """The topic-word counts after the last sweep."""
        return self.snapshot

    def set_priors(self, alpha, beta: float) -> None:
        """New priors for the following sweeps (learned ones, say)."""
        self.alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        self.beta = float(beta)

    def _run_shard(self, s: int) -> None:
        shard = self.shards[s]
        lo, hi = shard["lo"], shard["hi"]
        worker = self._free.get()
        try:
            if worker is not self.snapshot:
                np.copyto(self.z_before[lo:hi], self.z[lo:hi])  # the shard's topics before, to merge its moves
                worker.restore(self.snapshot, shard["word_ids"])
            worker.sweep(self.words[lo:hi], shard["ptr"], self.z[lo:hi], self.alpha, self.beta,
                         self.V * self.beta, self.rngs[s], shard.get("order"), shard.get("doc_of"))
        finally:
            self._free.put(worker)

    def sweep(self) -> None:
        if len(self.shards) == 1:
            self._run_shard(0)
            return
        if self._pool is None:
            for s in range(len(self.shards)):
                self._run_shard(s)
        else:
            list(self._pool.map(self._run_shard, range(len(self.shards))))
        if self.merge_chunks:
            deltas = list(self._pool.map(self._merge_words, self.merge_chunks))
            self.snapshot.nk += np.sum(deltas, axis=0, dtype=np.int32)
        else:
            self.snapshot.move(self.words, self.order, self.z_before, self.z)

    def _merge_words(self, chunk: tuple[int, int]) -> np.ndarray:
        """Merge the moves of the words in ``order[chunk]`` into the snapshot; returns the
        change of the topic totals (summed over chunks by the caller)."""
        a, b = chunk
        delta = np.zeros(self.K, np.int32)
        snap = self.snapshot
        if self.kind == "dense":
            _cgs.apply_dense(self.words, self.order[a:b], self.z_before, self.z, snap.nwk, delta)
            return delta
        worker = self._free.get()  # for its scratch arrays
        try:
            _cgs.apply_sparse(self.words, self.order[a:b], self.z_before, self.z, snap.word_ptr,
                                snap.wt, snap.wt_len, snap.bits, delta, worker.ndk, worker.mark)
        finally:
            self._free.put(worker)
        return delta

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
