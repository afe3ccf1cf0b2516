"""The samplers: bit-for-bit equal to the NumPy oracle, consistent counts, the right posterior,
and the same result for any number of threads."""


import dataclasses
import itertools

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from ldacli._cgs import dense_sweep
from ldacli import random_streams
from ldacli.scoring import fixed_topics
from ldacli._fixed_topics import document_draws, theta_of_documents
from ldacli._update import renumbered_rows, root_overlaps
from ldacli.errors import LdacliError
from ldacli.methods.cgs.threads import ThreadsSampler
from ldacli.methods.cgs.sampler import SAMPLERS
from ldacli.methods.cgs.layouts import Priors, list_layout, unpack_entries
from ldacli.methods.cgs.shard import document_lists, slice_runs
from ldacli.partition import shard_bounds, word_slices
from ldacli.corpora.counts import doc_topic_counts, histogram
from ldacli.methods.base import word_topic_counts
from ldacli.topic_word_prior import extra_by_word, seed_prior, topic_sums


def tiny_corpus(seed, D=7, V=13, K=4, max_len=12):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, max_len, size=D)
    doc_ptr = np.zeros(D + 1, np.int64)
    doc_ptr[1:] = np.cumsum(lengths)
    words = rng.integers(0, V, size=doc_ptr[-1]).astype(np.int32)
    for d in range(D):  # as Corpus.tokens gives them: each document's words sorted
        words[doc_ptr[d]:doc_ptr[d + 1]].sort()
    z = rng.integers(0, K, size=words.size).astype(np.int32)
    return words, doc_ptr, z


def streams(seed, n):
    return [np.random.Generator(np.random.PCG64(s)) for s in np.random.SeedSequence(seed).spawn(n)]


@pytest.mark.parametrize("seeded", [False, True])
def test_dense_sweep_equals_numpy_oracle_bit_for_bit(seeded):
    V, K = 13, 4
    words, doc_ptr, z = tiny_corpus(5, V=V, K=K)
    prior = seed_prior({1: [2, 5, 7], 3: [5, 11]}, 4.5, V, K) if seeded else None
    z_oracle = z.copy()
    nwk, nk = word_topic_counts(words, z, V, K), np.bincount(z, minlength=K).astype(np.int32)
    nwk_o, nk_o = nwk.copy(), nk.copy()
    alpha = np.array([0.1, 0.2, 0.3, 0.05])
    beta = 0.01
    r1 = np.random.Generator(np.random.PCG64(3))
    r2 = np.random.Generator(np.random.PCG64(3))
    runs = slice_runs(words, doc_ptr, np.array([0, V]))  # one slice: the documents whole
    start = z.copy()
    beta_sum = topic_sums(prior, beta, V, K)
    rows = Priors.of(alpha, beta, beta_sum, extra_by_word(prior, V)).rows  # (the prior by word, as the kernel reads it)
    for _ in range(5):
        dense_sweep(words, runs, z, nwk, nk, alpha, beta, beta_sum, *rows, np.zeros(K, np.int32), np.zeros(2 * K), r1)
        oracle.dense_sweep(words, doc_ptr, z_oracle, nwk_o, nk_o, alpha, beta, beta_sum, r2, prior=prior)
        np.testing.assert_array_equal(z, z_oracle)
        np.testing.assert_array_equal(nwk, nwk_o)
        np.testing.assert_array_equal(nk, nk_o)
    assert np.count_nonzero(z != start) > 0  # the sweeps did something
    assert r1.bit_generator.state == r2.bit_generator.state  # one draw per token, both sides


@pytest.mark.parametrize("kind", SAMPLERS)
@pytest.mark.parametrize("seeded", [False, True])
@pytest.mark.parametrize("shards, threads, K", [(1, 1, 6), (4, 1, 6), (4, 2, 6), (4, 3, 6), (1, 1, 37), (3, 2, 37)])
def test_every_sampler_equals_its_numpy_oracle_bit_for_bit_for_any_thread_count(kind, seeded, shards, threads, K):
    # the oracles (tests/oracle.py) are the kernels' steps in plain Python on dense counts; with
    # several shards, the partition scheme's blocks and rounds as well; seeded: under a
    # non-uniform topic-word prior (extra mass on a few words of two topics, one word in both)
    V = 11 if K < 10 else 30
    words, doc_ptr, z = tiny_corpus(9, D=12 if K < 10 else 30, V=V, K=K, max_len=12 if K < 10 else 30)
    alpha = np.random.default_rng(K).uniform(0.05, 0.4, K)
    prior = seed_prior({0: [1, 4, 9], K - 2: [4, 6]}, 2.5, V, K) if seeded else None
    bounds = shard_bounds(doc_ptr, shards)
    assert bounds.size == shards + 1
    slices = word_slices(np.bincount(words, minlength=V), shards)
    assert np.all(np.diff(slices) > 0)  # every slice has words
    z_oracle = z.copy()
    sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, alpha, 0.05, bounds, streams(1, shards), threads,
                             prior=prior)
    np.testing.assert_array_equal(sampler.slices, slices)
    oracle_rngs = streams(1, shards)
    start = z.copy()
    for _ in range(4):
        sampler.sweep()
        oracle.partition_sweep(words, doc_ptr, z_oracle, V, K, alpha, 0.05, bounds, slices, oracle_rngs, kind, prior)
        np.testing.assert_array_equal(z, z_oracle)
        np.testing.assert_array_equal(sampler.counts.word_topic_counts(), word_topic_counts(words, z, V, K))
        np.testing.assert_array_equal(sampler.counts.nk, np.bincount(z, minlength=K))
        # what learning alpha reads of the state (off the sparse sampler's document lists, else
        # off the topics): the histograms of the document-topic counts and the lengths
        ndk = doc_topic_counts(doc_ptr, z, K)
        for got, expected in zip(sampler.doc_histograms(), (histogram(ndk), histogram(np.diff(doc_ptr)[:, None]))):
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)
    sampler.close()
    assert np.count_nonzero(z != start) > 0  # the sweeps did something
    assert [r.bit_generator.state for r in sampler.rngs] == [r.bit_generator.state for r in oracle_rngs]


def test_word_slices_cut_the_vocabulary_into_ranges_of_about_equal_token_counts():
    freq = np.array([50, 1, 1, 1, 30, 30, 1, 1, 40, 5])
    cuts = word_slices(freq, 3)
    assert cuts[0] == 0 and cuts[-1] == freq.size and np.all(np.diff(cuts) >= 0)
    mass = np.add.reduceat(freq, cuts[:-1])
    assert mass.sum() == freq.sum() and mass.max() <= freq.sum() / 3 + freq.max()
    assert word_slices(freq, 1).tolist() == [0, freq.size]
    assert word_slices(np.zeros(0, np.int64), 2).tolist() == [0, 0, 0]


def test_slice_runs_give_where_each_documents_tokens_of_each_slice_start():
    V = 13
    words, doc_ptr, _ = tiny_corpus(4, D=9, V=V)
    cuts = np.array([0, 3, 4, 9, V])
    runs = slice_runs(words, doc_ptr, cuts)
    assert runs.shape == (9, 5)
    for d in range(9):
        doc = words[doc_ptr[d]:doc_ptr[d + 1]]
        assert runs[d].tolist() == [doc_ptr[d] + int(np.count_nonzero(doc < c)) for c in cuts]
    assert runs[:, 0].tolist() == doc_ptr[:-1].tolist() and runs[:, -1].tolist() == doc_ptr[1:].tolist()


@pytest.mark.parametrize("kind", SAMPLERS)
def test_the_start_is_built_a_range_of_words_at_a_time_and_samples_the_same(monkeypatch, kind):
    # at 20 M tokens the start's word-topic codes are sorted a range of words at a time, its
    # document lists and checks made a chunk of tokens at a time: here with ranges of 20 tokens,
    # chunks of 7 and parts of 5 the sampler holds the same counts and samples the same topics
    from ldacli.corpora import counts
    from ldacli.methods.cgs import shard

    V, K = 30, 6
    words, doc_ptr, z0 = tiny_corpus(8, D=30, V=V, K=K, max_len=20)
    whole = []
    for small in (False, True):
        if small:
            for module, name, value in ((shard, "PAIR_RANGE_TOKENS", 20), (shard, "PAIR_CHUNK_TOKENS", 5),
                                        (shard, "COUNT_CHUNK_TOKENS", 7), (shard, "LIST_CHUNK_TOKENS", 7),
                                        (counts, "COUNT_CHUNK_TOKENS", 7)):
                monkeypatch.setattr(module, name, value)
        z = z0.copy()
        sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, np.full(K, 0.1), 0.05, shard_bounds(doc_ptr, 3),
                                 streams(6, 3), 1)
        assert sampler.counts.word_topic_counts().tolist() == word_topic_counts(words, z0, V, K).tolist()
        sampler.sweep()
        whole.append((z.tobytes(), sampler.counts.word_topic_counts().tobytes(), sampler.word_histogram()[2].tolist()))
        sampler.close()
    assert whole[0] == whole[1]
    assert not shard.sorted_within_documents(words[::-1].copy(), doc_ptr)


@pytest.mark.parametrize("K", [7, 1000])  # each token on any topic; each word's tokens on 16
def test_the_first_topics_drawn_a_chunk_at_a_time_are_those_drawn_at_once(monkeypatch, K):
    from ldacli.methods.cgs import sampler

    words = np.random.default_rng(2).integers(0, 50, 1001).astype(np.int32)
    at_once = sampler.FirstTopics(np.random.default_rng(9), 50, K).draw(words)
    monkeypatch.setattr(sampler, "SKIP_CHUNK", 7)
    first = sampler.FirstTopics(np.random.default_rng(9), 50, K)
    assert first.draw(words).tolist() == at_once.tolist()
    skipped = sampler.FirstTopics(np.random.default_rng(9), 50, K)
    skipped.skip(500)  # a cluster's worker passes over the tokens before its shards
    assert skipped.draw(words[500:]).tolist() == at_once[500:].tolist()


def test_the_sampler_refuses_documents_whose_words_are_not_sorted():
    words, doc_ptr = np.array([3, 1, 2, 0], np.int32), np.array([0, 2, 4], np.int64)
    with pytest.raises(LdacliError, match="increasing id order"):
        ThreadsSampler("sparse", words, doc_ptr, np.zeros(4, np.int32), 4, 2, np.ones(2), 0.1, np.array([0, 1, 2]),
                       streams(1, 2))


def fixed_topics_inputs(K, V=13, seed=2, counted=False):
    """Word-major topics and a prior; ``counted``: topics as a Gibbs sampler makes them, (n_kw +
    beta) / (n_k + V beta) of a few counts, so that each topic's least phi is the floor of most
    words (the kernel's lists by word)."""
    rng = np.random.default_rng(seed)
    if counted:
        n_kw = rng.poisson(0.4, size=(V, K)) * rng.integers(1, 6, size=(V, K))
        phi_wk = (n_kw + 0.05) / (n_kw.sum(axis=0) + V * 0.05)
    else:
        phi_wk = rng.dirichlet(np.full(V, 0.3), size=K).T.copy()
    alpha = np.linspace(0.1, 0.5, K)
    return phi_wk, alpha


@pytest.mark.parametrize("K", [1, 2, 5, 30])
def test_the_prior_alias_tables_equal_numpy_oracle_bit_for_bit_and_give_the_prior(K):
    phi_wk, alpha = fixed_topics_inputs(K, V=40, seed=K)
    phi_wk[3] = 0.0  # a word without prior mass
    tables = fixed_topics.PriorTables.of(phi_wk, alpha)
    prob, alias = tables.tables["prob"], tables.tables["alias"]
    for ours, theirs in zip((prob, alias, tables.total), oracle.prior_alias_tables(phi_wk, alpha)):
        np.testing.assert_array_equal(ours, theirs)
    # the probability of topic k by the table, summed over its cells, is alpha_k phi_kw / total
    # (to float32's rounding of each cell's probability)
    for w in range(40):
        if tables.total[w] == 0:
            continue
        p = prob[w].astype(np.float64)
        np.add.at(p, alias[w], 1 - p)
        np.testing.assert_allclose(p / K, alpha * phi_wk[w] / tables.total[w], atol=1e-7)


def run_theta_kernel(words, doc_ptr, doc_keys, run_key, phi_wk, alpha, batch_of_sweep, batch_sweeps,
                     density=fixed_topics.LIST_DENSITY, by_word_from=0):
    K, D, B = phi_wk.shape[1], doc_ptr.size - 1, batch_sweeps.size
    z = np.zeros(words.size, np.int32)
    theta = np.zeros((B + 1 if B > 1 else B, D, K))
    scratch, work = np.zeros(3 * K, np.int32), np.zeros(K * (B + 1))
    t = fixed_topics.PriorTables.of(phi_wk, alpha, density, by_word_from)
    theta_of_documents(words, doc_ptr, doc_keys, run_key, phi_wk, t.tables, t.total, t.floor, t.list_ptr,
                       t.list_topics, t.excess, t.by_word_from, alpha,
                       float(alpha.sum()), batch_of_sweep, batch_sweeps, z, theta, scratch,
                       np.zeros(max(1, int(np.diff(doc_ptr).max())), np.int32), work)
    assert not scratch[:K].any() and not work[K:].any()  # left as found
    return z, theta


@pytest.mark.parametrize("K, iterations, burn_in, batches", [(1, 3, 1, 1), (4, 6, 2, 3), (9, 5, 0, 1), (9, 4, 4, 1),
                                                              (6, 7, 3, 10)])
@pytest.mark.parametrize("counted, density", [(False, fixed_topics.LIST_DENSITY), (True, 1.0)])
def test_theta_of_documents_equals_numpy_oracle_bit_for_bit(K, iterations, burn_in, batches, counted, density):
    # counted: topics with a floor and each word's list of the rest, read when shorter than the
    # document's topics (documents of up to 40 tokens)
    words, doc_ptr, _ = tiny_corpus(9, V=13, K=K, max_len=40 if counted else 12)
    phi_wk, alpha = fixed_topics_inputs(K, counted=counted)
    doc_keys = random_streams.content_keys(words, doc_ptr)
    batch_of_sweep, batch_sweeps = fixed_topics.sweep_batches(iterations, burn_in, batches)
    run_key = random_streams.document_key(5)
    ours = run_theta_kernel(words, doc_ptr, doc_keys, run_key, phi_wk, alpha, batch_of_sweep, batch_sweeps, density)
    lists = oracle.word_lists(phi_wk, density, by_word_from=0)
    assert (lists[-1] == 0) == counted
    theirs = oracle.theta_of_documents(words, doc_ptr, doc_keys, run_key, phi_wk, oracle.prior_alias_tables(phi_wk, alpha),
                                       lists, alpha, float(alpha.sum()), batch_of_sweep, batch_sweeps)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    if burn_in < iterations:
        np.testing.assert_allclose(ours[1][0].sum(axis=1), 1.0)


def test_a_documents_stream_is_numpys_sfc64_seeded_from_its_key_and_the_runs():
    fixed_topics.check_document_streams()  # what every estimate checks first
    out = np.zeros(7)
    document_draws(np.array([3, 2**64 - 1], np.uint64), 2**63 + 5, out)
    bit_generator = np.random.SFC64()
    bit_generator.state = {"bit_generator": "SFC64", "has_uint32": 0, "uinteger": 0,
                           "state": {"state": np.array([3, 2**64 - 1, 2**63 + 5, 1], np.uint64)}}
    bit_generator.random_raw(12)  # as numpy's own seeding of an SFC64 from three words
    np.testing.assert_array_equal(out, np.random.Generator(bit_generator).random(7))


@pytest.mark.slow
@pytest.mark.parametrize("density", [fixed_topics.LIST_DENSITY, 1.0])  # 1.0: by the words' lists where shorter
def test_theta_of_documents_visits_assignments_with_the_exact_posterior_probabilities(density):
    # one document of 4 tokens, 3 topics fixed: p(z | w, phi, alpha) over the 81 assignments,
    # theta integrated out, by enumeration; the kernel's state after 12 sweeps of 60,000 copies
    # of the document, each on its own stream
    words, doc_ptr = np.array([0, 1, 2, 1], np.int32), np.array([0, 4], np.int64)
    phi_wk = np.array([[0.5, 0.2, 0.3], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]])
    alpha = np.array([0.3, 0.5, 0.8])
    states = list(itertools.product(range(3), repeat=4))
    logp = []
    for zs in states:
        n = np.bincount(zs, minlength=3)
        logp.append(sum(np.log(phi_wk[w, k]) for w, k in zip(words, zs)) + np.sum(gammaln(n + alpha)))
    exact = np.exp(np.array(logp) - max(logp))
    exact /= exact.sum()
    copies = 60000
    many_words = np.tile(words, copies)
    many_ptr = np.arange(copies + 1, dtype=np.int64) * 4
    keys = np.random.default_rng(5).integers(0, 2**63, size=(copies, 2)).astype(np.uint64)
    z, theta = run_theta_kernel(many_words, many_ptr, keys, 7, phi_wk, alpha, np.array([-1] * 10 + [0, 0], np.int32),
                                np.array([2.0]), density)
    index = {s: i for i, s in enumerate(states)}
    seen = np.bincount([index[tuple(row)] for row in z.reshape(copies, 4).tolist()], minlength=len(states))
    assert 0.5 * np.abs(seen / seen.sum() - exact).sum() < 0.02
    # theta: the posterior mean of (n_k + alpha_k) / (4 + sum alpha), within its noise
    mean_counts = sum(p * np.bincount(s, minlength=3) for p, s in zip(exact, states))
    np.testing.assert_allclose(theta[0].mean(axis=0), (mean_counts + alpha) / (4 + alpha.sum()), atol=0.005)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), D=st.integers(1, 8), V=st.integers(1, 9), K=st.integers(1, 7),
       sweeps=st.integers(1, 3), shards=st.integers(1, 4), threads=st.integers(1, 3),
       kind=st.sampled_from(SAMPLERS), strength=st.sampled_from([None, 1e-3, 5.0, 1e4]))
def test_counts_stay_consistent_with_assignments(seed, D, V, K, sweeps, shards, threads, kind, strength):
    words, doc_ptr, z = tiny_corpus(seed, D=D, V=V, K=K)
    # with or without extra topic-word prior mass (seeds of topics 0 and K - 1)
    prior = seed_prior({0: [0, V - 1], K - 1: [V // 2]}, strength, V, K) if strength else None
    sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, np.full(K, 0.1), 0.05,
                             shard_bounds(doc_ptr, shards), streams(seed, shards), threads, prior=prior)
    for _ in range(sweeps):
        sampler.sweep()
    sampler.close()
    assert z.size == 0 or (z.min() >= 0 and z.max() < K)
    expected = word_topic_counts(words, z, V, K)
    counts = sampler.counts
    np.testing.assert_array_equal(counts.word_topic_counts(), expected)
    np.testing.assert_array_equal(counts.nk, np.bincount(z, minlength=K))
    if kind == "sparse":  # each word's list is sorted by count, then topic
        for w in range(V):
            lo = counts.word_ptr[w]
            topics, n = unpack_entries(counts.wt[lo:lo + counts.wt_len[w]], counts.bits)
            pairs = list(zip(-n, topics))
            assert pairs == sorted(pairs) and n.min(initial=1) > 0
        for shard in sampler.shards:  # each document's list: its topics in increasing order, its counts
            if shard.lists is not None:
                fresh = document_lists(shard.ptr, shard.z, K)
                np.testing.assert_array_equal(shard.lists.length, fresh.length)
                (topics, n), (fresh_topics, fresh_n) = shard.lists.topics_and_counts(), fresh.topics_and_counts()
                for d, n_d in enumerate(fresh.length):
                    at = slice(fresh.ptr[d], fresh.ptr[d] + n_d)
                    np.testing.assert_array_equal(topics[at], fresh_topics[at])
                    np.testing.assert_array_equal(n[at], fresh_n[at])
                    assert n_d == 0 or (np.all(np.diff(topics[at]) > 0) and n[at].min() > 0)
    assert expected.sum() == words.size


@pytest.mark.parametrize("kind", SAMPLERS)
def test_every_sampler_gives_the_same_bytes_for_any_thread_count(kind):
    V, K = 30, 5
    words, doc_ptr, z0 = tiny_corpus(4, D=40, V=V, K=K, max_len=30)
    results = []
    for threads in (1, 2, 3):
        z = z0.copy()
        sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, np.full(K, 0.1), 0.01,
                                 shard_bounds(doc_ptr, 6), streams(2, 6), threads)
        for _ in range(5):
            sampler.sweep()
        sampler.close()
        results.append(z.tobytes())
    assert results[0] == results[1] == results[2]


def test_word_lists_take_64_bit_entries_only_when_a_count_could_overflow_32():
    for K, bits in ((2, 1), (100, 7), (1000, 10), (1024, 10), (1025, 11)):
        assert list_layout(np.array([1, 2**(32 - bits) - 1]), K).dtype == np.uint32
        assert list_layout(np.array([2**(32 - bits)]), K).dtype == np.uint64
        assert list_layout(np.array([3]), K).bits == bits


@pytest.mark.parametrize("kind", ["sparse", "alias"])
def test_64_bit_word_list_entries_give_the_same_chain(kind, monkeypatch):
    from ldacli.methods.cgs import layouts

    V, K = 30, 37
    words, doc_ptr, z0 = tiny_corpus(5, D=40, V=V, K=K, max_len=30)
    results = []
    for wide in (False, True):
        if wide:
            narrow = layouts.list_layout
            monkeypatch.setattr(layouts, "list_layout", lambda f, k: dataclasses.replace(narrow(f, k), dtype=np.uint64))
        z = z0.copy()
        sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, np.full(K, 0.1), 0.01, shard_bounds(doc_ptr, 3),
                                 streams(3, 3), 2)
        for _ in range(6):
            sampler.sweep()
        sampler.close()
        assert sampler.counts.wt.dtype == (np.uint64 if wide else np.uint32)
        results.append((z.tobytes(), sampler.counts.word_topic_counts().tobytes()))
    assert results[0] == results[1]


@pytest.mark.parametrize("seeded", [False, True])
def test_the_dense_draw_by_lanes_equals_its_oracle_and_visits_the_exact_posterior(seeded):
    # the dense sampler adds its masses up by lanes from 32 topics (dense_lanes_from); forced
    # from 1, the few topics of the oracle's and the exact posterior's corpora are drawn that way
    from ldacli._cgs import dense_lanes_from

    before = dense_lanes_from()
    try:
        dense_lanes_from(1)
        test_every_sampler_equals_its_numpy_oracle_bit_for_bit_for_any_thread_count("dense", seeded, 4, 2, 6)
        test_sampler_visits_states_with_the_exact_posterior_probabilities("dense", seeded)
        # 12 topics: lanes of two topics, so the draw walks within a lane too; each token's
        # topic against its exact marginal posterior (12^4 states enumerated)
        words, doc_ptr = np.array([0, 1, 1, 2], np.int32), np.array([0, 2, 4], np.int64)
        V, K, alpha = 3, 12, np.linspace(0.2, 0.9, 12)
        states, exact = oracle.exact_posterior(words, doc_ptr, V, K, alpha, 0.3)
        marginals = np.zeros((words.size, K))
        for z, p in zip(states, exact):
            marginals[np.arange(words.size), z] += p
        z = np.zeros(words.size, np.int32)
        sampler = ThreadsSampler("dense", words, doc_ptr, z, V, K, alpha, 0.3, shard_bounds(doc_ptr, 1),
                                 streams(7, 1))
        seen = np.zeros((words.size, K))
        for _ in range(40000):
            sampler.sweep()
            seen[np.arange(words.size), z] += 1
        assert 0.5 * np.abs(seen / 40000 - marginals).sum(axis=1).max() < 0.02
    finally:
        dense_lanes_from(before)
    assert dense_lanes_from() == before == 32


@pytest.mark.parametrize("kind", SAMPLERS)
@pytest.mark.parametrize("seeded", [False, True])
def test_sampler_visits_states_with_the_exact_posterior_probabilities(kind, seeded):
    # 2 documents, 5 tokens, 3 words, 2 topics: 32 states, posterior computed exactly; seeded:
    # under a non-uniform topic-word prior (topic 0 seeded with word 0, topic 1 with words 1, 2)
    words = np.array([0, 0, 1, 2, 2], np.int32)
    doc_ptr = np.array([0, 3, 5], np.int64)
    V, K, beta = 3, 2, 0.3
    alpha = np.array([0.4, 0.7])
    prior = seed_prior({0: [0], 1: [1, 2]}, 1.2, V, K) if seeded else None
    states, exact = oracle.exact_posterior(words, doc_ptr, V, K, alpha, beta if prior is None else prior.dense(beta).T)
    if seeded:  # the prior matters: the symmetric posterior is far from this one
        assert 0.5 * np.abs(exact - oracle.exact_posterior(words, doc_ptr, V, K, alpha, beta)[1]).sum() > 0.1
    index = {z: i for i, z in enumerate(states)}
    z = np.zeros(5, np.int32)
    sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, alpha, beta, shard_bounds(doc_ptr, 1), streams(2024, 1),
                             prior=prior)
    sweeps = 60000
    seen = np.zeros(len(states))
    for _ in range(sweeps):
        sampler.sweep()
        seen[index[tuple(z)]] += 1
    empirical = seen / sweeps
    # Total-variation distance: Monte Carlo error here is about 0.005; a wrong conditional
    # (e.g. the token's own count left in) moves it by well over 0.05.
    assert 0.5 * np.abs(empirical - exact).sum() < 0.02


@pytest.mark.parametrize("kind", SAMPLERS)
def test_log_likelihood_equals_the_dense_formula(kind):
    from ldacli.methods.cgs.method import log_likelihood

    V, K = 9, 4
    words, doc_ptr, z = tiny_corpus(12, D=6, V=V, K=K)
    alpha, beta = np.array([0.1, 0.5, 0.2, 0.3]), 0.07
    sampler = ThreadsSampler(kind, words, doc_ptr, z, V, K, alpha, beta, shard_bounds(doc_ptr, 2), streams(1, 2))
    sampler.sweep()
    nwk, ndk = word_topic_counts(words, z, V, K), doc_topic_counts(doc_ptr, z, K)
    lengths = np.diff(doc_ptr)
    expected = (K * (gammaln(V * beta) - V * gammaln(beta)) + gammaln(nwk + beta).sum()
                - gammaln(nwk.sum(axis=0) + V * beta).sum()
                + len(lengths) * (gammaln(alpha.sum()) - gammaln(alpha).sum()) + gammaln(ndk + alpha).sum()
                - gammaln(lengths + alpha.sum()).sum())
    assert np.isclose(log_likelihood(sampler, alpha, beta), expected, rtol=1e-12)


def test_the_smoothing_bucket_draws_every_topic_of_every_block_with_its_probability():
    # one document of one token: with the token taken out every count is 0, so the whole mass is
    # the smoothing bucket's, a_k b / (V b): the sparse sampler draws topic k with probability
    # a_k / sum(a), found by the blocks' sums (40 topics: 3 blocks of 16 topics) and then within a block
    from scipy.stats import chisquare

    K, sweeps = 40, 20000
    alpha = np.linspace(0.05, 1.0, K)
    words, doc_ptr, z = np.zeros(1, np.int32), np.array([0, 1], np.int64), np.zeros(1, np.int32)
    sampler = ThreadsSampler("sparse", words, doc_ptr, z, 1, K, alpha, 0.01, shard_bounds(doc_ptr, 1), streams(5, 1))
    drawn = np.zeros(K, np.int64)
    for _ in range(sweeps):
        sampler.sweep()
        drawn[z[0]] += 1
    sampler.close()
    assert chisquare(drawn, sweeps * alpha / alpha.sum()).pvalue > 1e-4


@pytest.mark.parametrize("K", [1, 7, 300])
def test_root_overlaps_equal_numpy_oracle_bit_for_bit(K):
    # columns of 0 to K cells, their rows in any order (as a COO-made matrix may hold them)
    rng = np.random.default_rng(K)
    lengths = rng.integers(0, K + 1, 60)
    ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    rows = np.concatenate([rng.permutation(K)[:n] for n in lengths]).astype(np.int32)
    values = rng.random(rows.size) * 10.0 ** rng.integers(-8, 8, rows.size)
    totals = np.bincount(rows, weights=values, minlength=K)
    out = np.zeros((K, K))
    root_overlaps(ptr, rows, values, totals, np.zeros(K), out)
    assert out.tobytes() == oracle.root_overlaps(ptr, rows, values, totals, K).tobytes()
    assert not np.tril(out).any()


@pytest.mark.parametrize("fold, column_type, value_type", [(False, np.int64, np.int64), (True, np.int64, np.int64),
                                                          (True, np.uint8, np.uint16), (True, np.uint16, np.uint8),
                                                          (True, np.uint32, np.uint64), (True, np.uint64, np.uint32)])
def test_renumbered_rows_equal_numpy_oracle(fold, column_type, value_type):
    # rows of 0 to K cells in order of column, renumbered by a permutation (an aligned model's
    # topics), then with some topics folded into others (an update's freed topics kept); the
    # columns and values in the dtypes a model's file keeps them in, as the kernel reads them
    rng = np.random.default_rng(int(fold))
    K = 9
    lengths = rng.integers(0, K + 1, 200)
    ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    columns = np.concatenate([np.sort(rng.permutation(K)[:n]) for n in lengths]).astype(column_type)
    values = rng.integers(1, min(2 ** 40, np.iinfo(value_type).max), columns.size).astype(value_type)
    columns.setflags(write=False)  # (read-only, as a model's file mapped)
    values.setflags(write=False)
    to = rng.permutation(K).astype(np.int64)
    if fold:
        to[[1, 4, 7]] = to[[2, 0, 8]]
    codes, sums = np.empty(columns.size, np.int64), np.empty(columns.size, np.int64)
    n = renumbered_rows(ptr, columns, values, to, K, 5, codes, sums)
    want = oracle.renumbered_rows(ptr, columns.astype(np.int64), values.astype(np.int64), to, K, 5)
    assert np.array_equal(codes[:n], want[0]) and np.array_equal(sums[:n], want[1])
    assert np.all(np.diff(codes[:n]) > 0)
