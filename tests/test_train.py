"""Training through the Python API: recovery of planted topics, determinism, exact resume."""

import dataclasses
import time

import numpy as np
import pytest

import ldacli
from ldacli.errors import LdacliError, SettingError
from ldacli.corpora.synthetic import generate, recovery


def test_planted_topics_are_recovered(planted):
    model = ldacli.train(planted.corpus, 5, iterations=150, seed=1)
    _, distance = recovery(planted.phi, model.phi)
    # Mean total-variation distance between matched true and estimated topics.
    assert distance < 0.1
    # The likelihood trace rises from the random start.
    assert model.loglik_per_token[-1] > model.loglik_per_token[0]


def test_auto_sampler_follows_the_number_of_topics_and_the_document_length():
    """``auto`` (the default) picks the sampler measured fastest (benchmarks/auto_rules.py) and
    records it: dense for fewer than 12 topics on short documents, sparse on long ones."""
    short = generate(60, 3, 80, doc_length=20, seed=1).corpus
    long = generate(3, 3, 80, doc_length=1000, seed=1).corpus

    def picked(corpus, k):
        return ldacli.train(corpus, k, iterations=1, seed=1).params["sampler"]

    assert [picked(short, k) for k in (8, 11, 12, 32, 100)] == ["dense"] * 2 + ["sparse"] * 3
    assert [picked(long, k) for k in (8, 11, 12)] == ["sparse"] * 3


def test_model_shapes_and_normalisation(planted):
    model = ldacli.train(planted.corpus, 4, iterations=20, alpha=0.3, beta=0.05, seed=2)
    c = planted.corpus
    assert model.phi.shape == (4, c.n_words) and model.theta.shape == (c.n_docs, 4)
    np.testing.assert_allclose(model.phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(model.theta.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.alpha, np.full(4, 0.3))
    assert model.beta == 0.05
    assert model.params["seed"] == 2 and model.params["corpus_fingerprint"] == c.fingerprint()
    assert list(model.loglik_iterations) == [10, 20]


def test_empty_documents_get_the_prior():
    syn = generate(30, 3, 20, doc_length=(0, 10), seed=3)
    lengths = syn.corpus.doc_lengths
    assert (lengths == 0).any()
    model = ldacli.train(syn.corpus, 3, iterations=5, alpha=0.5, seed=4)
    np.testing.assert_allclose(model.theta[lengths == 0], 1 / 3)


def test_same_seed_same_bytes_and_fresh_entropy_is_recorded(planted, tmp_path):
    paths = []
    for name in ("a", "b"):
        m = ldacli.train(planted.corpus, 5, iterations=12, seed=99)
        m.save(str(tmp_path / f"{name}.npz"))
        paths.append(tmp_path / f"{name}.npz")
    assert paths[0].read_bytes() == paths[1].read_bytes()
    fresh = ldacli.train(planted.corpus, 5, iterations=12)
    again = ldacli.train(planted.corpus, 5, iterations=12, seed=fresh.params["seed"])
    np.testing.assert_array_equal(fresh.phi, again.phi)
    assert fresh.params["seed"] > 2**64  # 128 bits of fresh entropy


def test_resume_gives_the_same_bytes_as_an_uninterrupted_run(planted, tmp_path):
    full = tmp_path / "full.npz"
    ldacli.train(planted.corpus, 5, iterations=17, seed=5).save(str(full))
    ckpt = str(tmp_path / "run.ckpt.npz")
    ldacli.train(planted.corpus, 5, iterations=9, seed=5, checkpoint=ckpt, checkpoint_every=4)
    assert ldacli.Checkpoint.load(ckpt).iteration == 9
    resumed = tmp_path / "resumed.npz"
    ldacli.train(planted.corpus, iterations=17, resume=ckpt).save(str(resumed))
    assert full.read_bytes() == resumed.read_bytes()


def test_resume_refuses_another_corpus_or_changed_parameters(planted, tmp_path):
    ckpt = str(tmp_path / "c.npz")
    ldacli.train(planted.corpus, 5, iterations=3, seed=1, checkpoint=ckpt)
    other = generate(20, 2, 10, seed=1).corpus
    with pytest.raises(LdacliError, match="another corpus"):
        ldacli.train(other, iterations=5, resume=ckpt)
    with pytest.raises(LdacliError, match="n_topics"):
        ldacli.train(planted.corpus, 6, iterations=5, resume=ckpt)
    with pytest.raises(LdacliError, match="past the 2"):
        ldacli.train(planted.corpus, iterations=2, resume=ckpt)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_topics": 0}, "n_topics"),
    ({"alpha": -1.0}, "alpha"),
    ({"beta": float("nan")}, "beta"),
    ({"iterations": 0}, "iterations"),
])
def test_bad_parameters_are_refused_with_their_name(planted, kwargs, match):
    args = {"n_topics": 3, "iterations": 2, **kwargs}
    with pytest.raises(LdacliError, match=match):
        ldacli.train(planted.corpus, **args)


def test_model_round_trips_through_its_file(planted, tmp_path):
    m = ldacli.train(planted.corpus, 5, iterations=10, seed=8)
    m.save(str(tmp_path / "m.npz"))
    back = ldacli.load_model(str(tmp_path / "m.npz"))
    np.testing.assert_array_equal(back.phi, m.phi)
    np.testing.assert_array_equal(back.theta, m.theta)
    assert back.vocab == m.vocab and back.doc_ids == m.doc_ids and back.params == m.params
    with np.load(tmp_path / "m.npz", allow_pickle=False) as f:
        assert str(f["kind"]) == "model" and int(f["format_version"]) == 3


def test_inference_recovers_the_proportions_of_planted_documents(planted):
    model = ldacli.train(planted.corpus, 5, iterations=100, seed=3)
    perm, _ = recovery(planted.phi, model.phi)
    new = generate(40, 5, 50, doc_length=200, alpha=0.2, seed=70, planted=True)
    result, dropped = ldacli.infer(model, new.corpus, iterations=60, burn_in=20, seed=1)
    assert dropped == 0
    theta = result.theta[:, perm]  # estimated topics in the order of the true ones
    assert np.abs(theta - new.theta).sum(axis=1).mean() / 2 < 0.1


def test_perplexity_of_a_trained_model_matches_the_true_model(planted):
    model = ldacli.train(planted.corpus, 5, iterations=100, seed=3)
    held = generate(50, 5, 50, doc_length=60, alpha=0.2, seed=71, planted=True).corpus
    result = ldacli.perplexity(model, held, seed=2)
    assert result["estimator"] == "document-completion"
    assert result["n_tokens"] == 50 * 30 and result["n_docs"] == 50
    assert np.isclose(result["perplexity"], np.exp(-result["log_likelihood"] / result["n_tokens"]))
    # Scored with the topics that generated the data, the same documents give the floor; a
    # model that knows nothing (uniform topics) scores 50, the vocabulary size.
    truth = dataclasses.replace(model, phi=planted.phi, alpha=np.full(5, 0.2))
    floor = ldacli.perplexity(truth, held, seed=2)["perplexity"]
    assert floor <= result["perplexity"] < 1.02 * floor < 25


def test_a_time_limit_stops_training_and_says_so(planted):
    model = ldacli.train(planted.corpus, 5, iterations=10**7, seed=1, max_seconds=0.2)
    assert model.params["stopped"] == "time limit"
    assert 0 < model.params["iterations_done"] < 10**7
    assert model.loglik_iterations[-1] == model.params["iterations_done"]
    full = ldacli.train(planted.corpus, 5, iterations=3, seed=1)
    assert full.params["stopped"] == "iterations" and full.params["iterations_done"] == 3


@pytest.mark.parametrize("sampler", ["dense", "sparse", "alias"])
def test_learned_priors_resume_exactly_with_any_thread_count(planted, tmp_path, sampler):
    common = dict(iterations=24, seed=4, sampler=sampler, shards=3, optimize_interval=5, optimize_burn_in=6)
    straight = ldacli.train(planted.corpus, 5, threads=1, **common)
    assert straight.params["optimize_interval"] == 5
    assert not np.allclose(straight.alpha, 0.1) and np.ptp(straight.alpha) > 0  # learned, asymmetric
    assert straight.beta != 0.01 and straight.params["beta"] == 0.01  # params keep the start
    ckpt = str(tmp_path / "c.npz")
    ldacli.train(planted.corpus, 5, threads=2, checkpoint=ckpt, **{**common, "iterations": 13})
    resumed = ldacli.train(planted.corpus, iterations=24, resume=ckpt, threads=3)
    straight.save(str(tmp_path / "a.npz"))
    resumed.save(str(tmp_path / "b.npz"))
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_learned_priors_fit_held_out_documents_better_than_a_poor_fixed_prior():
    syn = generate(300, 6, 60, doc_length=80, alpha=0.05, seed=9)
    train_part = dataclasses.replace(syn.corpus, counts=syn.corpus.counts[:250], doc_ids=syn.corpus.doc_ids[:250])
    held = dataclasses.replace(syn.corpus, counts=syn.corpus.counts[250:], doc_ids=syn.corpus.doc_ids[250:])
    fixed = ldacli.train(train_part, 6, iterations=150, alpha=2.0, beta=0.5, seed=1)
    learned = ldacli.train(train_part, 6, iterations=150, alpha=2.0, beta=0.5, seed=1,
                           optimize_interval=10, optimize_burn_in=20)
    assert learned.alpha.sum() < 6 * 2.0 and learned.beta < 0.5  # moved toward the truth (0.05, 0.01)
    p_fixed = ldacli.perplexity(fixed, held, seed=1)["perplexity"]
    p_learned = ldacli.perplexity(learned, held, seed=1)["perplexity"]
    assert p_learned < p_fixed


def test_priors_are_learned_by_default_and_kept_as_given_when_someone_chose_them(planted, tmp_path):
    by_default = ldacli.train(planted.corpus, 5, iterations=70, seed=1)
    assert (by_default.params["optimize_interval"], by_default.params["optimize_burn_in"]) == (10, 50)
    assert np.ptp(by_default.alpha) > 0 and by_default.beta != 0.01  # learned at sweeps 60 and 70
    for chosen in (dict(alpha=0.1), dict(beta=0.01), dict(alpha=0.2, beta=0.05)):
        m = ldacli.train(planted.corpus, 5, iterations=70, seed=1, **chosen)
        assert m.params["optimize_interval"] == 0 and np.all(m.alpha == chosen.get("alpha", 0.1))
        assert m.beta == chosen.get("beta", 0.01)
    both = ldacli.train(planted.corpus, 5, iterations=70, seed=1, alpha=0.2, optimize_interval=10)
    assert np.ptp(both.alpha) > 0 and both.params["alpha"] == 0.2  # asked for: 0.2 is where learning starts
    # a run that ends before the first learning says its priors are the ones set
    short = ldacli.train(planted.corpus, 5, iterations=30, seed=1)
    assert np.all(short.alpha == 0.1) and short.params["optimize_interval"] == 10
    short.save(str(tmp_path / "short.npz"))
    assert ldacli.describe(str(tmp_path / "short.npz"))["priors"]["alpha"]["source"] == "set"
    # a burn-in for priors that are not learned cannot apply: refused, naming why
    for given, why in ((dict(alpha=0.2), "alpha, beta or seed_words given"), (dict(optimize_interval=0), "is 0")):
        with pytest.raises(SettingError, match=f"optimize_burn_in applies where the priors are learned.*{why}"):
            ldacli.train(planted.corpus, 5, iterations=3, seed=1, optimize_burn_in=20, **given)
    # a warm start learns as its parent did, unless told otherwise
    for parent, learns in ((by_default, 10), (m, 0)):
        parent.save(str(tmp_path / "p.npz"))
        child = ldacli.train(planted.corpus, iterations=5, seed=2, warm_start=str(tmp_path / "p.npz"))
        assert child.params["optimize_interval"] == learns


def test_early_stopping_stops_records_why_and_resumes_exactly(planted, tmp_path):
    common = dict(iterations=400, seed=2, loglik_every=5, holdout=0.2, patience=3)
    model = ldacli.train(planted.corpus, 5, **common)
    assert model.params["stopped"] == "early stopping" and model.params["stopped_early"]
    assert model.params["iterations_done"] < 400 and "did not improve" in model.params["stop_reason"]
    assert model.theta.shape[0] == planted.corpus.n_docs - round(0.2 * planted.corpus.n_docs)
    ckpt = str(tmp_path / "c.npz")
    ldacli.train(planted.corpus, 5, checkpoint=ckpt, **{**common, "iterations": 10})
    resumed = ldacli.train(planted.corpus, iterations=400, resume=ckpt)
    np.testing.assert_array_equal(resumed.phi, model.phi)
    assert resumed.params == model.params


@pytest.mark.parametrize("sampler, snapshots", [("dense", 1), ("sparse", 1), ("sparse", 2)])
def test_the_model_is_assembled_without_dense_copies_of_phi_and_theta(sampler, snapshots):
    # phi (K, V) and theta (D, K) are built in place: the peak of the memory numpy allocates
    # over the whole run stays near their own size (the sampler's state is small here), where
    # assembling them from dense count arrays and temporaries took 1.65 to 1.76 times it
    import tracemalloc

    corpus = generate(4000, 8, 3000, doc_length=20, seed=2).corpus
    tracemalloc.start()
    try:
        # two snapshots: their sums, allocated at sweep 3, become phi and theta in place
        model = ldacli.train(corpus, 500, iterations=4, seed=1, sampler=sampler, snapshots=snapshots,
                             snapshot_interval=1)
        assert len(model.params.get("snapshot_sweeps", [4])) == snapshots
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert model.phi.flags.c_contiguous and model.theta.flags.c_contiguous  # saved without a copy
    assert peak < 1.35 * (model.phi.nbytes + model.theta.nbytes)


def _counts_of(checkpoint_path: str, corpus, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The word-topic (K, V) and document-topic (D, K) counts of a checkpoint's state."""
    words, doc_ptr = corpus.tokens()
    z = ldacli.Checkpoint.load(checkpoint_path).arrays["z"]
    nkw = np.zeros((K, corpus.n_words))
    np.add.at(nkw, (z, words), 1)
    ndk = np.zeros((corpus.n_docs, K))
    np.add.at(ndk, (np.repeat(np.arange(corpus.n_docs), np.diff(doc_ptr)), z), 1)
    return nkw, ndk


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("part_cells", [1 << 18, 64])
def test_snapshot_sums_merge_cells_as_a_dense_sum_would(monkeypatch, part_cells, threads):
    # the snapshots' sums (cells in any order, or a shard's at a time: parts in increasing
    # order, some empty), merged a part of the sums at a time (parts of 64 cells cut them into
    # many; on two threads, while the next parts are read), equal the dense sum of the same
    # states, by rows and by columns; a state handed out stays as it was while later snapshots
    # are added; and they take 4 bytes a cell or less
    from ldacli.methods.cgs import snapshots
    from ldacli.methods.cgs.snapshots import CellSums, joined
    from ldacli.parallel import Pool

    pool = Pool(threads)

    monkeypatch.setattr(snapshots, "PART_CELLS", part_cells)
    rng = np.random.default_rng(2)
    dense, sums, states = np.zeros((200, 50)), CellSums(200, 50), []
    for i in range(6):
        codes = rng.choice(dense.size, size=rng.integers(1, 3000), replace=False)
        if i % 2 == 0:
            codes.sort()
        values = rng.integers(1, 50, size=codes.size).astype(np.int32)
        dense.reshape(-1)[codes] += values
        if i % 2:
            sums.add_cells(codes, values)
        else:
            cuts = np.sort(rng.choice(codes.size + 1, size=4))
            sums.add_parts(((codes[a:b], values[a:b]) for a, b in zip([0, *cuts], [*cuts, codes.size])), pool)
        states.append((sums.state(), dense.copy()))
    codes, running = sums.sparse()
    assert codes.dtype == np.int64 and running.dtype == np.float64
    assert np.array_equal(codes, np.flatnonzero(dense)) and np.array_equal(running, dense[dense > 0])
    codes, running = joined(sums.column_parts(), sums.n_cells)
    assert np.array_equal(codes, np.flatnonzero(dense.T)) and np.array_equal(running, dense.T[dense.T > 0])
    for first, rows in [(0, 200), (37, 20)]:
        out = np.empty((rows, 50))
        sums.mean_rows(out, first, 6)
        assert out.tobytes() == (dense[first:first + rows] / 6).tobytes()
    for first, columns in [(0, 50), (7, 5)]:
        out = np.empty((columns, 200))
        sums.mean_columns(out, first, 6)
        assert out.tobytes() == (dense.T[first:first + columns] / 6).tobytes()
    assert (len(sums.rows) > 10) == (part_cells == 64)
    # 50 columns in a byte, sums of 6 x 49 at most in a byte, those of 255 or more kept apart
    held = sum(a.nbytes for p in sums.rows for a in vars(p).values() if isinstance(a, np.ndarray))
    assert held < 2.1 * sums.n_cells + 8 * (200 + len(sums.rows))
    for state, then in states:
        sums.restore(state)
        assert np.array_equal(sums.sparse()[1], then[then > 0])
    sums.restore(CellSums.EMPTY)
    assert sums.n_cells == 0 and sums.sparse()[0].size == 0
    # sums that could pass 65,535, then 2^32 - 1, widen first: the same whole numbers
    kinds = []
    for _ in range(5):
        sums.add_cells(np.arange(50), np.full(50, 2**30, np.int32))
        kinds.append(sums.rows[0].sums.dtype)
    assert kinds == [np.uint32] * 3 + [np.uint64] * 2 and sums.sparse()[1].tolist() == [5.0 * 2**30] * 50
    pool.close()


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_pool_gives_results_in_order_reading_items_only_as_far_ahead_as_its_threads(threads):
    from ldacli.parallel import Pool

    read = []

    def items():
        for i in range(10):
            read.append(i)
            yield i
    with Pool(threads) as pool:
        out = pool.ahead(lambda i: i * i, items())
        assert next(out) == 0 and len(read) == threads  # (the first taken, the others under way)
        assert list(out) == [i * i for i in range(1, 10)] and read == list(range(10))


def test_snapshots_average_the_states_of_their_sweeps_and_resume_exactly(planted, tmp_path):
    # phi and theta of --snapshots 3 --snapshot-interval 2 over 20 sweeps are those of the mean
    # counts of sweeps 16, 18 and 20 (each the final state of a run that long: the chain does not
    # depend on how long it will run)
    corpus, K, beta, alpha = planted.corpus, 10, 0.01, 0.1
    given = dict(seed=3, alpha=alpha, beta=beta, threads=1)
    model = ldacli.train(corpus, K, iterations=20, snapshots=3, snapshot_interval=2, **given)
    assert model.params["snapshot_sweeps"] == [16, 18, 20] and model.params["snapshots"] == 3
    from ldacli.info import describe, format_text

    model.save(str(tmp_path / "m.npz"))
    assert "phi, theta:       the mean of the states of sweeps 16, 18, 20" in format_text(describe(str(tmp_path / "m.npz")))
    states = []
    for n in (16, 18, 20):
        ldacli.train(corpus, K, iterations=n, snapshots=1, checkpoint=str(tmp_path / f"c{n}.npz"), **given)
        states.append(_counts_of(str(tmp_path / f"c{n}.npz"), corpus, K))
    nkw = np.mean([s[0] for s in states], axis=0)
    ndk = np.mean([s[1] for s in states], axis=0)
    np.testing.assert_allclose(model.phi, (nkw + beta) / (nkw.sum(axis=1) + corpus.n_words * beta)[:, None], rtol=1e-12)
    np.testing.assert_allclose(model.theta, (ndk + alpha) / (ndk.sum(axis=1) + K * alpha)[:, None], rtol=1e-12)
    # stopped between two snapshots and resumed: the sums travel in the checkpoint
    ckpt = str(tmp_path / "run.npz")

    def interrupt(iteration):
        if iteration == 17:
            import os
            import signal
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(ldacli.TrainingInterrupted):
        ldacli.train(corpus, K, iterations=20, snapshots=3, snapshot_interval=2, checkpoint=ckpt,
                     callback=interrupt, **given)
    assert list(ldacli.Checkpoint.load(ckpt).arrays["snapshot_taken"]) == [16]
    resumed = ldacli.train(corpus, iterations=20, resume=ckpt, threads=2)
    assert resumed.phi.tobytes() == model.phi.tobytes() and resumed.theta.tobytes() == model.theta.tobytes()
    # a run stopped before its snapshots (here by a time limit, after its first sweep) is its final state
    short = ldacli.train(corpus, K, iterations=20, snapshots=3, snapshot_interval=2, max_seconds=1e-9, **given)
    first = ldacli.train(corpus, K, iterations=1, snapshots=1, **given)
    assert short.params["stopped"] == "time limit" and short.params["snapshot_sweeps"] == [1]
    np.testing.assert_allclose(short.phi, first.phi, rtol=1e-12)
    np.testing.assert_allclose(short.theta, first.theta, rtol=1e-12)


@pytest.mark.slow   # whole processes, or a run long enough to time
def test_a_time_limited_run_averages_the_states_of_its_end(planted, tmp_path):
    # --max-seconds with more sweeps than the time allows: the snapshots are taken where the
    # pace says the run will end, not at the end of --iterations, which it never reaches
    ckpt = str(tmp_path / "c.npz")
    # sweeps of tens of milliseconds (960,000 tokens), not the planted corpus's 0.2 ms: a loaded
    # machine pauses a process for a scheduler tick or more, and slows it for longer when another
    # test starts, which must not be most of the 20 sweeps the snapshots span; the time limit is
    # that of about 150 sweeps at this machine's pace now (at least 3 s), so that a loaded machine
    # (CI's parallel workers, a busy laptop) still runs enough. The pace can still change within
    # the last sweeps there, so at least one snapshot besides the final state is asked for.
    corpus = generate(16000, 5, 50, doc_length=60, alpha=0.2, seed=7, planted=True).corpus
    started = time.perf_counter()
    ldacli.train(corpus, 5, iterations=30, seed=1, threads=1)
    budget = max(3.0, 5 * (time.perf_counter() - started))
    model = ldacli.train(corpus, 5, iterations=10**7, seed=1, snapshots=4, snapshot_interval=5,
                         max_seconds=budget, threads=1, checkpoint=ckpt)
    done, taken = model.params["iterations_done"], model.params["snapshot_sweeps"]
    assert model.params["stopped"] == "time limit" and done > 40
    assert len(taken) >= 2 and taken[-1] == done and taken[0] > done // 4
    assert all(b - a >= 5 for a, b in zip(taken[:-2], taken[1:-1]))  # the last is the final state
    # resumed for as long again: the states of the first run's end are not the second's
    more = ldacli.train(corpus, resume=ckpt, max_seconds=budget, threads=1)
    again = more.params["snapshot_sweeps"]
    assert more.params["iterations_done"] > done + 40 and len(again) >= 2 and again[0] > done
    # the same run without a time limit: the schedule of --iterations
    fixed = ldacli.train(planted.corpus, 5, iterations=40, seed=1, snapshots=4, snapshot_interval=5, threads=1)
    assert fixed.params["snapshot_sweeps"] == [25, 30, 35, 40]


@pytest.mark.parametrize("sampler", ["dense", "sparse"])
@pytest.mark.parametrize("seeded", [False, True])
@pytest.mark.parametrize("snapshots", [1, 3])
def test_a_model_written_as_it_is_assembled_is_the_model_saved_whole(tmp_path, monkeypatch, sampler, seeded,
                                                                     snapshots):
    # train(output=...) writes the model's counts a part at a time as they are made (here five
    # cells at a time, and the final state's document cells a shard at a time, so that many part
    # edges are crossed): the same bytes as the model made whole and saved; the model returned
    # maps that file, and computes the same phi and theta from it
    import ldacli.topic_counts

    corpus = generate(60, 7, 40, doc_length=15, seed=3).corpus
    seeds = {"a": corpus.vocab[2:5], "b": corpus.vocab[5:9]} if seeded else None
    # with snapshots: the mean of sweeps 4, 5 and 6, from their sums
    common = dict(iterations=6, seed=4, sampler=sampler, shards=2, seed_words=seeds, snapshots=snapshots,
                  snapshot_interval=1)
    whole = ldacli.train(corpus, 7, **common)
    whole.save(str(tmp_path / "whole.npz"))
    monkeypatch.setattr(ldacli.topic_counts, "SPREAD_CELLS", 5)
    streamed = ldacli.train(corpus, 7, output=str(tmp_path / "streamed.npz"), **common)
    assert (tmp_path / "streamed.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()
    assert isinstance(streamed.counts.docs.values, np.memmap) and not streamed.counts.docs.values.flags.writeable
    np.testing.assert_array_equal(streamed.phi, whole.phi)
    np.testing.assert_array_equal(streamed.theta, whole.theta)
    assert streamed.params == whole.params


def test_a_model_written_as_it_is_assembled_never_holds_phi_or_theta_whole(tmp_path):
    # with output, the peak of what numpy allocates over the run is the sampler's state (5.5 MB
    # here) and a part of the counts at a time, well under phi and theta (4.5 and 16 MB), which
    # a model assembled whole holds at once
    import tracemalloc

    corpus = generate(4000, 8, 3000, doc_length=20, seed=2).corpus
    tracemalloc.start()
    try:
        model = ldacli.train(corpus, 500, iterations=2, seed=1, sampler="sparse", output=str(tmp_path / "m.npz"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.4 * (model.phi.nbytes + model.theta.nbytes)


def test_default_shards_keep_small_corpora_as_they_were_and_are_at_most_16():
    # below 5 M tokens the default is what it always was (one shard per 100,000 tokens, at most
    # 4), so those runs keep their bytes; from 5 M on, a power of two (each round's blocks split
    # evenly over 2, 4, 8, 16 threads), 16 from 10 M tokens, at most 16: 32 cost 10-25% more
    # work a sweep (each document visited once per slice)
    from ldacli.partition import default_shards

    for n in [*range(0, 5_000_000, 9_973), 399_999, 400_000, 2_408_812, 4_999_999]:
        assert default_shards(n) == min(4, max(1, n // 100_000))
    assert [default_shards(n) for n in (5_000_000, 10_000_000, 20_000_000, 40_000_000, 10**10)] == [8, 16, 16, 16, 16]
    assert all(default_shards(n) <= default_shards(n + 1_000_003) for n in range(0, 60_000_000, 1_000_003))


def test_first_topics_put_each_word_on_few_topics_and_a_worker_draws_the_threads_topics():
    # from RESTRICTED_START_FROM topics, a word's tokens start on at most START_TOPICS topics
    # (so the sparse sampler's first sweeps cost what later ones do); below, every token on any
    # topic, as always (those runs keep their bytes); a cluster's worker skips the draws before
    # its shard and draws that shard's topics alike
    from ldacli.methods.cgs.sampler import RESTRICTED_START_FROM, START_TOPICS, FirstTopics

    rng = np.random.default_rng(4)
    words = rng.integers(0, 300, size=50_000).astype(np.int32)
    for K in (3, START_TOPICS, RESTRICTED_START_FROM - 1):
        assert np.array_equal(FirstTopics(np.random.default_rng(9), 300, K).draw(words),
                              np.random.default_rng(9).integers(0, K, size=words.size, dtype=np.int32))
    K = RESTRICTED_START_FROM
    z = FirstTopics(np.random.default_rng(9), 300, K).draw(words)
    per_word = np.bincount(np.unique(words.astype(np.int64) * K + z) // K, minlength=300)
    assert per_word.max() <= START_TOPICS and per_word.min() >= 10  # ~166 tokens a word
    assert np.unique(z).size > 0.95 * K
    worker = FirstTopics(np.random.default_rng(9), 300, K)
    worker.skip(31_337)
    assert np.array_equal(worker.draw(words[31_337:40_000]), z[31_337:40_000])
