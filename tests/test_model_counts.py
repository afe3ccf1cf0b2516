"""A collapsed Gibbs model's file holds the whole numbers its phi and theta are computed from
(issue 45, item 4): read back, they give the very float64 bytes the run computed, for every kind
of run; a file of phi and theta (older ldacli, vem and gibbs) reads as before; commands read only
the members they need; the word-topic counts are there for a later update of the model."""

import os
import tracemalloc
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.corpora.synthetic import generate
from ldacli.diff import prevalence
from ldacli.model import Model
from ldacli.topic_counts import SparseRows, TopicCounts, cell_parts
from ldacli.files.npz import StreamedArray, write_npz
from ldacli.topic_word_prior import seed_prior
from test_topic_word_prior import cgs

HERE = os.path.dirname(os.path.abspath(__file__))


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def corpus():
    """300 documents of 8 topics over 120 words (about 24,000 tokens)."""
    return generate(300, 8, 120, doc_length=(40, 120), alpha=0.2, beta=0.05, seed=6).corpus


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float64 and a.shape == b.shape and np.array_equal(a, b) and a.tobytes() == b.tobytes()


def written_before(state):
    """phi and theta as ldacli computed them before format 3 (methods/cgs/method.py and
    snapshots.py at 5ba4f05, which wrote them whole), from the state of a run whose model is
    made: the final state's counts, or the snapshots' sums."""
    s, snaps, prior, beta, alpha = state.sampler, state.snapshots, state.prior, state.beta, state.alpha
    phi, theta = np.empty((s.K, s.V)), np.empty((s.n_docs, s.K))
    if not snaps.sweeps:
        phi.fill(beta)
        s.counts.add_to(phi, 0)
        if prior is not None:
            phi[prior.topics, prior.words] = s.counts.counts_at(prior.words, prior.topics) + (beta + prior.extra)
        phi /= (s.counts.nk + s.priors.beta_sum)[:, None]
        for first, block in s.doc_topic_blocks(1 << 16):
            rows = theta[first:first + block.shape[0]]
            rows[...] = block
            lengths = rows.sum(axis=1)
            rows += alpha
            rows /= (lengths + alpha.sum())[:, None]
        return phi, theta
    n = len(snaps.taken)
    snaps.cells.mean_columns(phi, 0, n)  # kept by word: (V, K)
    phi += beta
    if prior is not None:
        phi[prior.topics, prior.words] += prior.extra
    phi /= (snaps.topic / n + s.priors.beta_sum)[:, None]
    snaps.doc_cells.mean_rows(theta, 0, n)
    theta += alpha
    theta /= (snaps.lengths + alpha.sum())[:, None]
    return phi, theta


RUNS = {
    # name: (settings, the sweep the run stops at), 40 sweeps asked for
    "final state": (dict(snapshots=1), 40),
    "snapshots": (dict(snapshots=3, snapshot_interval=5), 40),
    "seeded, final state": (dict(snapshots=1, seeded=True), 40),
    "seeded, snapshots": (dict(snapshots=3, snapshot_interval=5, seeded=True), 40),
    # stopped before its first snapshot (a time limit, early stopping): the mean of one state, the last
    "seeded, stopped early": (dict(snapshots=3, snapshot_interval=5, seeded=True), 12),
    "learned priors": (dict(snapshots=3, snapshot_interval=5, optimize_interval=5, optimize_burn_in=10), 40),
    "learned priors, final state": (dict(snapshots=1, optimize_interval=5, optimize_burn_in=10), 40),
    "sparse sampler, 3 shards": (dict(snapshots=4, snapshot_interval=3, sampler="sparse", shards=3), 40),
    "alias sampler": (dict(snapshots=3, snapshot_interval=5, sampler="alias", shards=2), 40),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_model_file_gives_back_the_phi_and_theta_the_run_computed_bit_for_bit(corpus, tmp_path, name, threads):
    given, done = RUNS[name]
    given = {"iterations": 40, "shards": 2, "sampler": "dense", **given}
    prior = seed_prior({0: [3, 7, 11], 2: [5, 7]}, 40.0, corpus.n_words, 10) if given.pop("seeded", False) else None
    state = cgs(corpus, prior, threads=threads, **given)
    try:
        state.step(done)
        phi, theta, params = state.result(done)  # computed from the run's own state, as the model always was
        before = written_before(state)
        counts, _ = state.model_counts(done)
        model = Model(None, None, state.alpha.copy(), state.beta, list(corpus.vocab), list(corpus.doc_ids),
                      np.zeros(0, np.int64), np.zeros(0), params, counts=counts.materialized())
    finally:
        state.close()
    model.save(str(tmp_path / "m.npz"))
    with zipfile.ZipFile(tmp_path / "m.npz") as zf:
        assert not {"phi.npy", "theta.npy"} & set(zf.namelist())
    back = ldacli.load_model(str(tmp_path / "m.npz"))
    assert same_bytes(phi, before[0]) and same_bytes(theta, before[1])
    assert same_bytes(back.phi, phi) and same_bytes(back.theta, theta)
    if given.get("optimize_interval"):
        assert not np.all(back.alpha == back.alpha[0])  # learned: asymmetric
    # the documents' proportions a block at a time are the same rows, and so is their mean
    assert same_bytes(np.concatenate([b for _, b in back.theta_blocks(7)]), theta)
    assert same_bytes(prevalence(back), theta.mean(axis=0))


@pytest.mark.parametrize("learned", [False, True])
def test_a_model_renumbered_onto_another_gives_its_topics_in_the_new_order_bit_for_bit(tmp_path, learned):
    # train --align-to: the counts keep the run's ids (and a seeded prior its cells) and the file
    # the order, so that theta's denominators add alpha up in the run's order, as the run did
    # (which shows on documents of a few tokens: N_d + sum(alpha) keeps the last bits of the sum)
    corpus = generate(300, 8, 120, doc_length=(1, 4), alpha=0.2, beta=0.05, seed=6).corpus
    prior = None if learned else seed_prior({0: [3, 7, 11]}, 40.0, corpus.n_words, 10)
    given = dict(optimize_interval=2, optimize_burn_in=4) if learned else {}
    state = cgs(corpus, prior, threads=1, iterations=20, snapshots=3, snapshot_interval=4, shards=2, sampler="dense",
                **given)
    state.step(20)
    phi, theta, params = state.result(20)
    counts, _ = state.model_counts(20)
    state.close()
    model = Model(None, None, state.alpha.copy(), state.beta, list(corpus.vocab), list(corpus.doc_ids),
                  np.zeros(0, np.int64), np.zeros(0), params, counts=counts.materialized())
    rng = np.random.default_rng(2)
    order = next(o for o in (rng.permutation(10) for _ in range(100))  # one that adds alpha up otherwise
                 if not learned or model.alpha[o].sum() != model.alpha.sum())
    moved = Model(None, None, model.alpha[order], model.beta, model.vocab, model.doc_ids, model.loglik_iterations,
                  model.loglik_per_token, params, counts=model.counts.reordered(order))
    moved.save(str(tmp_path / "m.npz"))
    back = ldacli.load_model(str(tmp_path / "m.npz"))
    assert same_bytes(back.phi, phi[order]) and same_bytes(back.theta, np.ascontiguousarray(theta[:, order]))
    # and the counts an update adds to, in the model's ids
    cells = back.word_topic_counts()
    assert np.array_equal(cells.topic_totals, model.word_topic_counts().topic_totals[order])
    assert np.array_equal(np.bincount(cells.topics, weights=cells.sums, minlength=10), cells.topic_totals)
    assert np.all(np.diff(cells.topics * len(model.vocab) + cells.words) > 0)


def test_train_writes_counts_a_fraction_of_phi_and_theta_and_reads_them_back(corpus, tmp_path):
    model = ldacli.train(corpus, 10, iterations=30, seed=3, output=str(tmp_path / "m.npz"))
    V, D = len(model.vocab), model.n_docs
    with zipfile.ZipFile(tmp_path / "m.npz") as zf:
        sizes = {i.filename[:-4]: i.file_size for i in zf.infolist()}
    assert "phi" not in sizes and "theta" not in sizes
    counts = sum(sizes[n] for n in sizes if n.startswith(("topic_word_", "doc_topic_")))
    assert counts < (10 * V + D * 10) * 8 / 3  # phi and theta
    assert sizes["topic_word_words"] == 128 + int(model.counts.words.n_cells)  # a byte an id: V < 256
    back = ldacli.load_model(str(tmp_path / "m.npz"))
    assert same_bytes(back.phi, model.phi) and same_bytes(back.theta, model.theta)
    assert np.allclose(back.phi.sum(axis=1), 1) and np.allclose(back.theta.sum(axis=1), 1)
    # the word-topic counts of the model: each state's add up to the corpus's tokens
    cells = back.word_topic_counts()
    assert cells.states == len(back.params["snapshot_sweeps"]) == 2
    assert cells.sums.sum() == cells.topic_totals.sum() == 2 * corpus.n_tokens
    assert np.all(cells.sums > 0) and np.all(np.diff(cells.topics * V + cells.words) > 0)
    dense = np.zeros((10, V))
    dense[cells.topics, cells.words] = cells.sums
    assert np.allclose(back.phi, (dense / 2 + back.beta) / (cells.topic_totals[:, None] / 2 + V * back.beta),
                       rtol=1e-12, atol=0)
    # without its documents: no (D, K) array, the same topics
    topics_only = ldacli.load_model(str(tmp_path / "m.npz"), documents=False)
    assert topics_only.theta.shape == (0, 10) and topics_only.doc_ids == [] and topics_only.n_docs == 0
    assert same_bytes(topics_only.phi, model.phi)


@pytest.mark.parametrize("name", ["vem.model.npz", "gibbs.model.npz", "cgs.model.npz"])
def test_files_of_phi_and_theta_read_as_before(name):
    # format 1 (ldacli 0.1.0): dense phi and theta, every method; no counts to give
    path = os.path.join(HERE, "data", "format1", name)
    model = ldacli.load_model(path)
    with np.load(path, allow_pickle=False) as f:
        assert same_bytes(model.phi, f["phi"]) and same_bytes(model.theta, f["theta"])
    assert model.counts is None and model.n_docs == model.theta.shape[0]
    with pytest.raises(ldacli.LdacliError, match="holds phi itself, not the counts it was computed from"):
        model.word_topic_counts()


@pytest.mark.parametrize("method", ["vem", "gibbs"])
def test_vem_and_uncollapsed_gibbs_models_keep_dense_phi_and_theta(corpus, tmp_path, method):
    model = ldacli.train(corpus, 4, iterations=6, seed=1, method=method, output=str(tmp_path / "m.npz"))
    with zipfile.ZipFile(tmp_path / "m.npz") as zf:
        assert {"phi.npy", "theta.npy"} <= set(zf.namelist()) and "topic_word_sums.npy" not in zf.namelist()
    back = ldacli.load_model(str(tmp_path / "m.npz"))
    assert same_bytes(back.phi, np.asarray(model.phi)) and same_bytes(back.theta, np.asarray(model.theta))


def many_documents(path, D=400_000, K=100, V=50):
    """A model of D documents of K topics whose theta would be D x K x 8 bytes (320 MB), while its
    counts take a few MB: every document holds one token of topic d % K, each word of every topic."""
    rng = np.random.default_rng(1)
    words = np.arange(K * V, dtype=np.int64)
    word_sums = SparseRows.of_parts(cell_parts(words, rng.integers(1, 50, K * V)), K, V)
    doc_codes = np.arange(D, dtype=np.int64) * K + np.arange(D) % K
    counts = TopicCounts(word_sums, SparseRows.of_parts(cell_parts(doc_codes, np.ones(D, np.int64)), D, K), 0)
    Model(None, None, np.full(K, 0.1), 0.01, [f"w{i}" for i in range(V)], [f"d{i}" for i in range(D)],
          np.zeros(0, np.int64), np.zeros(0), {"method": "cgs", "n_topics": K}, counts=counts).save(str(path))
    return D * K * 8


@pytest.mark.slow   # whole processes, or a run long enough to time
def test_commands_that_need_the_topics_never_make_the_documents_proportions(tmp_path, small_ldac):
    theta_bytes = many_documents(tmp_path / "m.npz")
    assert os.path.getsize(tmp_path / "m.npz") < theta_bytes / 20
    tracemalloc.start()
    try:
        for args in (["topics", tmp_path / "m.npz"], ["export", tmp_path / "m.npz", "topic-words", "-n", 3],
                     ["export", tmp_path / "m.npz", "topic-keys"], ["info", tmp_path / "m.npz"]):
            r = run(*args)
            assert r.exit_code == 0, (args, r.stderr)
            peak = tracemalloc.get_traced_memory()[1]
            assert peak < theta_bytes / 4, (args, peak)  # theta was never made whole
            tracemalloc.reset_peak()
        model = ldacli.load_model(str(tmp_path / "m.npz"))
        rows = sum(block.shape[0] for _, block in model.theta_blocks())  # a block at a time
        assert rows == 400_000 and tracemalloc.get_traced_memory()[1] < theta_bytes / 4
    finally:
        tracemalloc.stop()
    # topic-keys' prevalence is the mean of theta's columns, to the bit
    assert np.array_equal(prevalence(model), model.theta.mean(axis=0))


def test_commands_read_only_the_members_they_need(corpus, tmp_path, small_ldac):
    # the documents' counts damaged (a flipped byte, caught by its CRC): the commands that need
    # only the topics never read them, those that need the documents say the file is damaged
    path = tmp_path / "m.npz"
    small = ldacli.read_corpus(small_ldac)
    ldacli.train(small, 3, iterations=4, seed=1, output=str(path))
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("doc_topic_sums.npy")
    local = info.header_offset  # its local header, then its name, extra field and bytes
    start = local + 30 + int.from_bytes(data[local + 26:local + 28], "little") + \
        int.from_bytes(data[local + 28:local + 30], "little")
    data[start + info.file_size - 1] ^= 0xFF  # the last document's last sum
    path.write_bytes(bytes(data))
    for args in (["topics", path], ["infer", path, small_ldac, "-o", tmp_path / "t.tsv"],
                 ["perplexity", path, small_ldac], ["export", path, "topic-words"], ["info", path]):
        r = run(*args)
        assert r.exit_code == 0, (args, r.stderr)
    for args in (["export", path, "doc-topics"], ["export", path, "topic-keys"]):
        r = run(*args)
        assert r.exit_code == 1 and "damaged: array 'doc_topic_sums' cannot be read" in r.stderr, (args, r.stderr)


def test_a_few_large_sums_do_not_widen_every_cell(tmp_path):
    # 10,000 cells of sums below 255 and three of thousands and millions: a byte a cell and the
    # three apart (uint32), not four bytes each; through a file and back, the same values
    values = np.ones(10_000, np.int64)
    values[[5, 500, 9_000]] = [300, 70_000, 5_000_000]
    codes = np.arange(10_000, dtype=np.int64) * 3  # rows of 10 columns, every third cell
    rows = SparseRows.of_parts(cell_parts(codes, values), 3_000, 10)
    assert rows.sums.dtype == np.uint8 and rows.large.dtype == np.uint32 and rows.large.tolist() == [300, 70_000,
                                                                                                        5_000_000]
    assert np.array_equal(rows.values, values) and rows.columns.dtype == np.uint8
    write_npz(str(tmp_path / "r.npz"), rows.members("rows", "columns"))
    with np.load(tmp_path / "r.npz") as f:
        back = SparseRows.read(str(tmp_path / "r.npz"), {k: f[k] for k in f.files}, "rows", "columns", 3_000, 10)
    assert np.array_equal(back.values, values) and np.array_equal(back.row_sums(), rows.row_sums())
    dense = np.zeros((3_000, 10))
    back.put(dense, 0)
    assert np.array_equal(dense.reshape(-1)[codes], values) and dense.sum() == values.sum()
    # most of them large: then every value is kept in the width they need (a quarter of them
    # large would still be smaller apart: a byte a cell and four a large one)
    values[values < 255] = 100_000
    values[::10] = 1
    wide = SparseRows.of_parts(cell_parts(codes, values), 3_000, 10)
    assert wide.sums.dtype == np.uint32 and wide.large.size == 0 and np.array_equal(wide.values, values)


def test_rows_stacked_are_kept_as_if_made_whole_and_summed_a_part_at_a_time(monkeypatch):
    # an update's older documents, then the night's, written part after part (SparseRows.stacked)
    # rather than made again or copied into one: the same arrays, dtypes and large values apart as
    # of_parts makes of all their cells, whatever widths the two have; and the rows' sums, taken
    # a few cells at a time (rows cut between parts), those of the dense array
    import ldacli.topic_counts as counts

    rng = np.random.default_rng(0)
    widths = set()
    for _ in range(300):
        monkeypatch.setattr(counts, "SPREAD_CELLS", int(rng.integers(1, 5)))
        halves = []
        for rows in (int(rng.integers(0, 30)), int(rng.integers(0, 10))):
            dense = rng.integers(0, 3, (rows, 6)) * rng.choice([1, 1, 1, 300, 70_000, 5_000_000], (rows, 6))
            codes = np.flatnonzero(dense)
            halves.append((dense, SparseRows.of_parts(cell_parts(codes, dense.ravel()[codes]), rows, 6)))
        (top, a), (bottom, b) = halves
        whole = np.vstack([top, bottom])
        codes = np.flatnonzero(whole)
        expected = SparseRows.of_parts(cell_parts(codes, whole.ravel()[codes]), whole.shape[0], 6)
        streamed = SparseRows.stacked(a, b)
        assert all(isinstance(getattr(streamed, name), StreamedArray) for name in ("columns", "sums", "large"))
        stacked = streamed.materialized()
        widths.add((a.sums.dtype.name, b.sums.dtype.name))
        for name in ("ptr", "columns", "sums", "large"):
            got, want = getattr(stacked, name), getattr(expected, name)
            assert got.dtype == want.dtype and np.array_equal(got, want), name
        assert np.array_equal(stacked.row_sums(), whole.sum(axis=1))
    assert len(widths) >= 6  # narrow on wide, wide on narrow, marked values on both sides


FORMAT2 = os.path.join(HERE, "data", "format2")


@pytest.mark.parametrize("name, given", [
    ("snapshots", dict(seed=5, snapshots=3, snapshot_interval=5)),
    ("seeded", dict(seed=6, snapshots=1, seed_words=os.path.join(FORMAT2, "seeds.txt"))),
    ("learned", dict(seed=7, snapshots=3, snapshot_interval=5, optimize_interval=2, optimize_burn_in=4)),
])
def test_a_run_gives_back_the_phi_and_theta_ldacli_wrote_before_format_3(tmp_path, name, given):
    # the same run, written by ldacli 5ba4f05 as phi and theta (tests/data/format2/README.md) and
    # by this version as counts: the same float64 bytes, and the old file still loads
    before = ldacli.load_model(os.path.join(FORMAT2, f"{name}.model.npz"))
    tiny = ldacli.read_corpus(os.path.join(FORMAT2, "tiny.ldac"))
    ldacli.train(tiny, 3, iterations=30, output=str(tmp_path / "m.npz"), **given)
    now = ldacli.load_model(str(tmp_path / "m.npz"))
    assert before.counts is None and now.counts is not None
    for array in ("phi", "theta", "alpha"):
        assert same_bytes(getattr(now, array), getattr(before, array)), array
    assert now.params["snapshot_sweeps"] == before.params["snapshot_sweeps"] if "snapshot_sweeps" in before.params \
        else "snapshot_sweeps" not in now.params


def test_a_column_of_rows_is_that_of_the_dense_array_large_values_included():
    # an update reads two topics of its model's documents (SparseRows.column), not every cell's value
    rng = np.random.default_rng(3)
    for _ in range(50):
        dense = rng.integers(0, 3, (40, 7)) * rng.choice([1, 1, 1, 300, 70_000], (40, 7))
        codes = np.flatnonzero(dense)
        rows = SparseRows.of_parts(cell_parts(codes, dense.ravel()[codes]), 40, 7)
        weights = rng.integers(1, 4, 40).astype(np.float64)
        for t in range(7):
            np.testing.assert_array_equal(rows.column(t), dense[:, t])
            np.testing.assert_array_equal(rows.column(t, weights), dense[:, t] / weights)
    assert rows.large.size  # (some values kept apart)
