"""The one seam between the collapsed Gibbs method and its engines (:class:`Sampler`): the
threads engine and the Dask engine, on a real LocalCluster over loopback, both implement every
call the method makes, and the same calls give the same bytes (those of a one-thread run)."""

import json

import numpy as np
import pytest

from ldacli import random_streams
from ldacli.methods.cgs.sampler import FirstTopics, Sampler
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.partition import shard_bounds, shard_ranges
from ldacli.corpora.synthetic import generate
from ldacli.topic_word_prior import seed_prior

K, SHARDS, SEED = 13, 3, 7
ALPHA, BETA = 0.1, 0.01


@pytest.fixture(scope="module")
def corpus():
    c, _ = generate(120, 6, 80, doc_length=(20, 70), alpha=0.3, seed=5).corpus.without_unused_words()
    return c


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed",
                                      reason="the dask extra is not installed: pip install 'ldacli[dask]'")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def start(engine: str, corpus, kind: str, request) -> Sampler:
    """A run's engine at its start, as the method makes it (seed :data:`SEED`, a seeded prior)."""
    words, doc_ptr = corpus.tokens()
    words = np.ascontiguousarray(words, dtype=np.int32)
    V = corpus.n_words
    bounds = shard_bounds(doc_ptr, SHARDS)
    rngs = random_streams.generators(SEED, bounds.size)
    prior = seed_prior({0: [1, 2, 3], 4: [3, 10]}, 30.0, V, K)
    alpha = np.full(K, ALPHA)
    if engine != "dask":
        z = FirstTopics(rngs[0], V, K).draw(words)
        threads = 1 if engine == "one thread" else 2
        return ThreadsSampler(kind, words, doc_ptr, z, V, K, alpha, BETA, bounds, rngs[1:], threads, prior=prior)
    from ldacli.methods.cgs.dask_client import DaskSampler, SyncPoint

    sync = SyncPoint(0, alpha, BETA, random_streams.states(rngs[1:]))
    return DaskSampler(kind, V, K, shard_ranges(bounds, doc_ptr[bounds]), np.bincount(words, minlength=V),
                       request.getfixturevalue("client"), sync, rngs[0].bit_generator.state, words=words,
                       doc_ptr=doc_ptr, prior=prior)


def as_bytes(value) -> bytes:
    """An answer as bytes: arrays by dtype, shape and content, tuples and lists part by part."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (tuple, list)):
        return b"(" + b",".join(as_bytes(v) for v in value) + b")"
    if isinstance(value, dict):  # arrays by name, or JSON (random streams' states)
        if all(isinstance(v, np.ndarray) for v in value.values()):
            return as_bytes([[k.encode() for k in sorted(value)], [value[k] for k in sorted(value)]])
        return json.dumps(value, sort_keys=True).encode()
    a = np.asarray(value)
    return f"{a.dtype.str}{a.shape}".encode() + a.tobytes()


def answers(s: Sampler, tmp_path) -> dict[str, bytes]:
    """Every call of the protocol, after three sweeps (new priors after the second), as bytes."""
    for sweep in range(3):
        s.sweep()
        if sweep == 1:
            s.set_priors(np.linspace(0.05, 0.2, K), 0.02)
    cells = np.arange(0, s.V, 3), np.arange(0, s.V, 3) % K
    blocks = list(s.doc_topic_blocks(40))
    parts = list(s.doc_topic_cell_parts())  # a shard at a time, each part's codes above those before
    assert len(parts) == len(s.rng_states())
    doc_cells = np.concatenate([c for c, _ in parts]), np.concatenate([v for _, v in parts])
    assert np.all(np.diff(doc_cells[0]) > 0) and doc_cells[1].dtype == np.int32
    dense = np.concatenate([b for _, b in blocks]).reshape(-1)  # the cells are the blocks' non-zero counts
    assert np.array_equal(doc_cells[0], np.flatnonzero(dense)) and np.array_equal(doc_cells[1], dense[dense > 0])
    counts = s.counts
    states, arrays = s.checkpoint(str(tmp_path / "c.npz"), 3)
    s.committed()
    out = {"kind, V, K, documents": as_bytes([s.kind, s.V, s.K, s.n_docs]),
           "priors": as_bytes([s.alpha, s.beta, s.priors.beta_sum, s.prior.arrays()]),
           "topic_totals": as_bytes(s.topic_totals()), "word_histogram": as_bytes(s.word_histogram()),
           "counts_at": as_bytes(s.counts_at(*cells)), "doc_log_priors": as_bytes(s.doc_log_priors(s.alpha)),
           "doc_histograms": as_bytes(s.doc_histograms()),
           "doc_topic_blocks": as_bytes(np.concatenate([b for _, b in blocks])), "doc_topic_cell_parts": as_bytes(doc_cells),
           "counts": as_bytes([counts.cells(), counts.nk.astype(np.int64)]),
           "rng_states": as_bytes([{"states": s.rng_states()}]),
           "checkpoint": as_bytes([{"states": states}, sorted(arrays), arrays["z"]])}
    assert [lo for lo, _ in blocks] == list(np.cumsum([0] + [b.shape[0] for _, b in blocks[:-1]]))
    return out


ENGINES = ["threads", pytest.param("dask", marks=[pytest.mark.slow, pytest.mark.dask])]


@pytest.mark.parametrize("kind", ["dense", "sparse", "alias"])
@pytest.mark.parametrize("engine", ENGINES)
def test_each_engine_answers_the_method_s_calls_with_the_same_bytes(engine, kind, corpus, request, tmp_path):
    reference = start("one thread", corpus, kind, request)
    expected = answers(reference, tmp_path)
    reference.close()
    s = start(engine, corpus, kind, request)
    try:
        assert isinstance(s, Sampler)
        # every call is the engine's own, not a default from elsewhere
        declared = [n for n in dir(Sampler) if not n.startswith("_")] + list(Sampler.__annotations__)
        assert [n for n in declared if not hasattr(type(s), n) and n not in vars(s)] == []
        found = answers(s, tmp_path)
        assert [k for k in expected if found[k] != expected[k]] == []
        assert found["counts"] != as_bytes([[], []])  # the chain moved: there were counts to compare
    finally:
        s.close()


@pytest.mark.parametrize("kind", ["dense", "sparse", "alias"])
def test_counts_at_answers_the_counts_of_any_cells_asked(kind, corpus, request):
    # the cells of a prior (in order, each once: the sparse lists' entries are looked up among
    # them) and cells in any order, some twice, some of words without tokens: each answer is
    # the word-topic count of the state, as the dense (V, K) array of its cells has it
    s = start("one thread", corpus, kind, request)
    for _ in range(2):
        s.sweep()
    words, topics, counts = s.counts.cells()
    dense = np.zeros((s.V, s.K), np.int64)
    dense[words, topics] = counts
    rng = np.random.default_rng(0)
    every = np.arange(s.V * s.K)
    for codes in (every, every[rng.random(every.size) < 0.3], rng.integers(0, s.V * s.K, 500)):
        w, t = codes // s.K, codes % s.K
        assert np.array_equal(s.counts_at(w, t), dense[w, t])
    s.close()


def test_dense_counts_read_whole_visit_only_the_words_with_tokens_and_miss_none():
    # an update's night has tokens of a fifth of its model's words: reading the counts whole
    # (the trace's histogram, the snapshots' cells) visits those rows only, on threads and in the
    # Dask client's copy filled slice by slice alike
    from ldacli.corpora.counts import histogram
    from ldacli.methods.base import word_topic_counts
    from ldacli.methods.cgs.layouts import DenseRows
    from ldacli.methods.cgs.shard import word_topic_pair_parts

    V, K = 40, 5
    rng = np.random.default_rng(0)
    words = np.sort(rng.choice([3, 7, 8, 20, 39], size=200)).astype(np.int32)
    z = rng.integers(0, K, size=words.size).astype(np.int32)
    freq = np.bincount(words, minlength=V)
    full = word_topic_counts(words, z, V, K)
    layout = DenseRows.layout_for(freq, K)
    replica = DenseRows(V, K, word_topic_pair_parts(words, z, K, freq), layout)
    copy = DenseRows.empty(V, K, layout)
    for lo, hi in [(0, 8), (8, V)]:
        copy.range(lo, hi).set_count_arrays(replica.range(lo, hi).count_arrays())
    w, t = np.nonzero(full)
    for counts in (replica, copy):
        cells = counts.cells()
        for got, expected in zip(cells, (w, t, full[w, t])):
            np.testing.assert_array_equal(got, expected)
        for got, expected in zip(counts.count_histogram(), histogram(full[full > 0].reshape(-1, 1))):
            np.testing.assert_array_equal(got, expected)
    part_w, part_t = np.nonzero(full[8:])
    np.testing.assert_array_equal(copy.range(8, V).cells()[0], part_w)
    np.testing.assert_array_equal(copy.range(8, V).cells()[1], part_t)
