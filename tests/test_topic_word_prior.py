"""The topic-word prior of seeded topics (beta_kw = beta + extra_kw) in collapsed Gibbs sampling:
how it is built and checked, phi and the trace under it, checkpoints that resume under it, and
seeded topics that recover their planted topics at their ids. (The kernels under it are checked
against the NumPy oracle, the exact posterior and Geweke's test in test_kernel.py and
test_geweke.py; on Dask in test_dask.py.)"""

import numpy as np
import pytest

from ldacli import random_streams, settings
from ldacli.errors import LdacliError, SettingError
from ldacli.methods.cgs.method import CollapsedGibbs
from ldacli.methods.driver import settings_of
from ldacli.model import Checkpoint
from ldacli.corpora.synthetic import generate
from ldacli.topic_word_prior import TopicWordPrior, seed_prior


def cgs(corpus, prior, *, threads=1, checkpoint=None, source=None, client=None, **given):
    """A collapsed Gibbs state as the training driver builds it: the settings ``given`` resolved
    from their declarations, and the prior as the plan's ``topic_word_prior`` (with which the
    driver never learns the priors: a resumed run's recorded optimize_interval is 0)."""
    given = {"optimize_interval": 0, **given}
    values = settings.resolve(settings_of(CollapsedGibbs), {"n_topics": 10, "seed": 1, **given})
    values = {**values, "seed": random_streams.resolve(values["seed"])}
    values = {**values, **CollapsedGibbs.resolve(values, given, corpus)}
    return CollapsedGibbs(corpus, values, threads=threads, checkpoint=checkpoint, source=source, prior=prior,
                          **({"client": client} if client is not None else {}))


@pytest.fixture(scope="module")
def themed():
    """600 documents of 6 topics drawn from Dirichlet(0.05) over 300 words (about 48,000 tokens)."""
    return generate(600, 6, 300, doc_length=(50, 110), alpha=0.2, beta=0.05, seed=4)


def test_seed_prior_puts_the_strength_on_each_seed_word_of_its_topic():
    prior = seed_prior({2: [7, 3, 7], 0: [3]}, 25.0, n_words=10, n_topics=4)
    assert (prior.n_words, prior.n_topics, prior.n_cells) == (10, 4, 3)
    # sorted by word, then topic; a word listed twice for a topic counts once, a word may seed two topics
    assert prior.words.tolist() == [3, 3, 7] and prior.topics.tolist() == [0, 2, 2]
    dense = prior.dense(0.01)
    assert dense[2, 7] == dense[2, 3] == dense[0, 3] == 0.01 + 25.0
    assert np.count_nonzero(dense != 0.01) == 3
    np.testing.assert_array_equal(prior.topic_sums(0.01), [10 * 0.01 + 25, 10 * 0.01, 10 * 0.01 + 50, 10 * 0.01])
    ptr, topics, extra = prior.by_word()
    assert ptr.tolist() == [0, 0, 0, 0, 2, 2, 2, 2, 3, 3, 3] and topics.tolist() == [0, 2, 2]
    assert extra.tolist() == [25.0] * 3


@pytest.mark.parametrize("seed_words, strength, name, match", [
    ({4: [1]}, 1.0, "seed_words", "topics 0 to 3, found 4"),
    ({0: [10]}, 1.0, "seed_words", "word ids 0 to 9, found 10 for topic 0"),
    ({0: [-1]}, 1.0, "seed_words", "found -1"),
    ({0: [1]}, 0.0, "strength", "positive finite number, found 0.0"),
    ({0: [1]}, float("inf"), "strength", "positive finite number"),
])
def test_seed_prior_refuses_what_cannot_be_a_prior(seed_words, strength, name, match):
    with pytest.raises(SettingError, match=match) as error:
        seed_prior(seed_words, strength, n_words=10, n_topics=4)
    assert error.value.name == name


def test_the_prior_round_trips_through_checkpoint_arrays_and_model_params():
    prior = seed_prior({1: [0, 5], 3: [5]}, 12.5, n_words=8, n_topics=4)
    assert TopicWordPrior.from_arrays(prior.arrays(), 8, 4, "c.npz") == prior
    assert TopicWordPrior.from_params(prior.params(), 8, 4, "m.npz") == prior
    assert TopicWordPrior.from_arrays({}, 8, 4, "c.npz") is None
    with pytest.raises(LdacliError, match="c.npz: expected arrays prior_words, prior_topics, prior_extra"):
        TopicWordPrior.from_arrays({"prior_words": prior.words}, 8, 4, "c.npz")
    with pytest.raises(LdacliError, match="c.npz: expected word ids in \\[0, 5\\)"):
        TopicWordPrior.from_arrays(prior.arrays(), 5, 4, "c.npz")
    with pytest.raises(LdacliError, match="finite and > 0"):
        TopicWordPrior.of_cells(8, 4, [1], [1], [-2.0])


def test_cells_given_twice_are_added_and_cells_given_in_order_are_kept_as_they_are():
    # an update's prior: a freed topic's evidence moved onto the topic merged into, millions of cells
    words, topics = np.array([4, 0, 4, 2, 0]), np.array([1, 3, 1, 0, 2])
    prior = TopicWordPrior.added(6, 4, words, topics, np.array([1.0, 2.0, 0.5, 3.0, 4.0]))
    assert prior == TopicWordPrior.of_cells(6, 4, [0, 0, 2, 4], [2, 3, 0, 1], [4.0, 2.0, 3.0, 1.5])
    given = (np.array([0, 0, 2, 4], np.int32), np.array([2, 3, 0, 1], np.int32), np.array([4.0, 2.0, 3.0, 1.5]))
    kept = TopicWordPrior.added(6, 4, *given)
    assert all(np.shares_memory(a, b) for a, b in zip((kept.words, kept.topics, kept.extra), given))
    with pytest.raises(LdacliError, match="finite and > 0"):
        TopicWordPrior.added(6, 4, [1], [1], [0.0])


@pytest.mark.parametrize("sampler", ["dense", "sparse", "alias"])
def test_phi_and_the_trace_follow_the_non_uniform_prior(themed, sampler):
    from scipy.special import gammaln

    from ldacli.corpora.counts import doc_topic_counts
    from ldacli.methods.base import word_topic_counts

    corpus = themed.corpus
    V, K, beta = corpus.n_words, 10, 0.01
    prior = seed_prior({0: [1, 2, 3], 7: [3, 40]}, 30.0, V, K)
    state = cgs(corpus, prior, sampler=sampler, shards=2, beta=beta, alpha=0.1)
    for it in range(3):
        state.step(it + 1)
    s = state.sampler
    nwk = word_topic_counts(s.words, s.z, V, K).T  # (K, V)
    B = prior.dense(beta)
    np.testing.assert_allclose(state.phi(), (nwk + B) / (nwk.sum(axis=1) + B.sum(axis=1))[:, None], rtol=1e-13)
    np.testing.assert_allclose(state.phi().sum(axis=1), 1.0)
    # log p(w, z): Dirichlet-multinomials with parameter B_k per topic, alpha per document
    ndk, lengths = doc_topic_counts(s.doc_ptr, s.z, K), np.diff(s.doc_ptr)
    expected = (np.sum(gammaln(B.sum(axis=1)) - gammaln(B).sum(axis=1)) + gammaln(nwk + B).sum()
                - gammaln(nwk.sum(axis=1) + B.sum(axis=1)).sum()
                + ndk.shape[0] * (gammaln(0.1 * K) - K * gammaln(0.1)) + gammaln(ndk + 0.1).sum()
                - gammaln(lengths + 0.1 * K).sum())
    assert np.isclose(state.loglik() * corpus.n_tokens, expected, rtol=1e-11)
    _, _, params = state.result(3)
    assert TopicWordPrior.from_params(params["topic_word_prior"], V, K, "model") == prior
    state.close()


@pytest.mark.parametrize("sampler", ["dense", "sparse", "alias"])
def test_a_checkpoint_resumes_under_its_prior_exactly(themed, tmp_path, sampler):
    corpus = themed.corpus
    V, K = corpus.n_words, 10
    prior = seed_prior({0: [1, 2, 3], 7: [3, 40]}, 30.0, V, K)
    given = {"sampler": sampler, "shards": 3, "iterations": 12}
    whole = cgs(corpus, prior, threads=2, **given)
    for it in range(12):
        whole.step(it + 1)
    first = cgs(corpus, prior, **given)
    for it in range(5):
        first.step(it + 1)
    path = str(tmp_path / "c.npz")
    Checkpoint({"method": "cgs", "n_topics": K, "iterations": 12}, 5, first.rng_states(), np.zeros(0, np.int64),
               np.zeros(0), first.alpha, first.beta, first.arrays()).save(path)
    first.close()
    ckpt = Checkpoint.load(path)
    assert set(TopicWordPrior.ARRAYS) <= set(ckpt.arrays)
    resumed = cgs(corpus, None, checkpoint=ckpt, source=path, **given)  # the prior comes from the checkpoint
    assert resumed.prior == prior
    for it in range(5, 12):
        resumed.step(it + 1)
    np.testing.assert_array_equal(resumed.sampler.z, whole.sampler.z)
    assert resumed.phi().tobytes() == whole.phi().tobytes()
    assert resumed.loglik() == whole.loglik()
    other = seed_prior({0: [1, 2]}, 30.0, V, K)
    with pytest.raises(SettingError, match="c.npz: the checkpoint was written under another topic-word prior"):
        cgs(corpus, other, checkpoint=ckpt, source=path, **given)
    for state in (whole, resumed):
        state.close()


def test_a_checkpoint_without_a_prior_refuses_one(themed, tmp_path):
    corpus = themed.corpus
    state = cgs(corpus, None, iterations=4)
    state.step(1)
    path = str(tmp_path / "c.npz")
    Checkpoint({"method": "cgs", "n_topics": 10, "iterations": 4}, 1, state.rng_states(), np.zeros(0, np.int64),
               np.zeros(0), state.alpha, state.beta, state.arrays()).save(path)
    assert set(Checkpoint.load(path).arrays) == {"z"}  # nothing new in a checkpoint without seeds
    with pytest.raises(SettingError, match="written under no topic-word prior") as error:
        cgs(corpus, seed_prior({0: [1]}, 5.0, corpus.n_words, 10), checkpoint=Checkpoint.load(path), source=path,
            iterations=4)
    assert error.value.name == "topic_word_prior"


def test_what_cannot_go_with_the_prior_is_refused(themed):
    corpus = themed.corpus
    with pytest.raises(SettingError, match="optimize_interval learns a symmetric beta") as error:
        cgs(corpus, seed_prior({0: [1]}, 5.0, corpus.n_words, 10), optimize_interval=5)
    assert error.value.name == "optimize_interval"
    with pytest.raises(SettingError, match=f"must be one of {corpus.n_words} words and 10 topics, found one of "
                                           f"{corpus.n_words} words and 8 topics"):
        cgs(corpus, seed_prior({0: [1]}, 5.0, corpus.n_words, 8))
    with pytest.raises(SettingError, match="must be a TopicWordPrior"):
        cgs(corpus, {0: [1]})


def test_no_seeds_is_the_symmetric_sampler(themed):
    # an empty prior is no prior: the same chain, the same phi, and nothing added to checkpoints
    corpus = themed.corpus
    plain, empty = cgs(corpus, None), cgs(corpus, seed_prior({}, 5.0, corpus.n_words, 10))
    for it in range(3):
        plain.step(it + 1)
        empty.step(it + 1)
    assert plain.phi().tobytes() == empty.phi().tobytes() and set(empty.arrays()) == {"z"}
    assert plain.result(3)[2] == empty.result(3)[2] and "topic_word_prior" not in plain.result(3)[2]


def _top(phi_row, n=10):
    return set(np.argsort(-phi_row, kind="stable")[:n].tolist())


@pytest.mark.parametrize("sampler", ["dense", "sparse", "alias"])
def test_seeded_topics_recover_their_planted_topics_at_their_ids(themed, sampler):
    # seed topic ids 0 and 1 with five top words each of planted topics 4 and 2
    corpus, truth = themed.corpus, themed.phi
    K = truth.shape[0]
    planted = {0: 4, 1: 2}
    seeds_of = {k: sorted(np.argsort(-truth[p], kind="stable")[:5].tolist()) for k, p in planted.items()}
    prior = seed_prior(seeds_of, 200.0, corpus.n_words, K)
    found = {}
    for name, p in (("seeded", prior), ("unseeded", None)):
        state = cgs(corpus, p, n_topics=K, sampler=sampler, seed=3, alpha=0.1, beta=0.01)
        for it in range(60):
            state.step(it + 1)
        phi = state.phi()
        found[name] = {k: len(_top(phi[k]) & _top(truth[planted_k])) for k, planted_k in planted.items()}
        state.close()
    # each seeded topic's top 10 words hold most of its planted topic's top 10
    assert min(found["seeded"].values()) >= 7, found
    # which the same run without seeds does not give at those ids
    assert min(found["unseeded"].values()) < 7, found
