"""Streaming inference: every format read a block at a time gives the corpus read whole, and
infer and perplexity over the stream give the bytes and numbers they give over the corpus in
memory, for any thread count (chunks and random streams as before). Memory staying flat is
measured by benchmarks/bench_stream.py, not here."""

import gzip
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.scoring import fixed_topics
from ldacli.cli import main
from ldacli.scoring.perplexity import perplexity_stream
from ldacli.corpora.formats import stream as stream_module
from ldacli.corpora.formats.stream import stream_corpus
from ldacli.corpora.formats.write import write_corpus, write_shards
from ldacli.scoring.inference import infer_chunks, write_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# where the ldacli under test is (a checkout's src or an install), for the processes a test starts
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(ldacli.__file__)))
WORDS = "apple banana cherry dates elder figs grape honey kiwi lemon mango nectar olive".split()


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 7 documents and theta chunks of 300 tokens, so a small corpus crosses many of each."""
    monkeypatch.setattr(stream_module, "DOCS_PER_BLOCK", 7)
    monkeypatch.setattr(fixed_topics, "THETA_CHUNK_TOKENS", 300)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stream")
    rng = np.random.default_rng(4)
    lines = [" ".join(rng.choice(WORDS, size=rng.integers(0, 30))) for _ in range(90)]
    lines[5] = ""
    lines[17] = "zzzunknown " + lines[17]
    (folder / "docs.txt").write_text("\n".join(lines) + "\n")
    r = run("train", folder / "docs.txt", "-k", 3, "--iterations", 30, "--seed", 1, "--stop-words", "none", "-q",
            "-o", folder / "m.npz")
    assert r.exit_code == 0, r.stderr
    model = ldacli.load_model(str(folder / "m.npz"))
    corpus = ldacli.read_corpus(str(folder / "docs.txt"), stop_words="none")
    write_corpus(corpus, str(folder / "docs.ldac"), str(folder / "docs.vocab"))
    write_corpus(corpus, str(folder / "docword.d.txt"), str(folder / "vocab.d.txt"), format="uci")
    write_corpus(corpus, str(folder / "docs.mtx"), str(folder / "docs.mtx.vocab"), format="mtx")
    (folder / "docs.mtx.vocab").rename(folder / "docs.vocab2")
    with gzip.open(folder / "docs.txt.gz", "wb") as f:
        f.write((folder / "docs.txt").read_bytes())
    (folder / "dir").mkdir()
    for i, line in enumerate(lines[:20]):
        (folder / "dir" / f"d{i:02d}.txt").write_text(line)
    write_shards(corpus, str(folder / "shards"), 3)
    return folder, model


CASES = [("docs.txt", {}), ("docs.txt.gz", {}), ("docs.ldac", {}), ("docword.d.txt", {}),
         ("docs.mtx", {"vocab": "docs.vocab2"}), ("dir", {}), ("shards", {}),
         ("docs.txt", {"stop_words": "english"}), ("docs.ldac", {"min_df": 3, "remove_top": 1}),
         ("docs.txt", {"max_vocab": 5, "max_df": 0.9})]


@pytest.mark.parametrize("name, reading", CASES)
def test_a_stream_gives_the_corpus_read_whole(name, reading, setup, small_blocks):
    folder, model = setup
    reading = {k: (str(folder / v) if k == "vocab" else v) for k, v in reading.items()}
    read = ldacli.read_corpus(str(folder / name), fixed_vocab=None if "vocab" in reading else model.vocab, **reading)
    whole, _ = read.align(model.vocab)
    stream = stream_corpus(str(folder / name), fixed_vocab=model.vocab, fingerprint=True, **reading)
    blocks = list(stream.blocks())
    assert len(blocks) > 1
    counts = np.vstack([b.counts.toarray() for b in blocks])
    assert np.array_equal(counts, whole.counts.toarray())
    assert [d for b in blocks for d in b.doc_ids] == whole.doc_ids
    assert stream.dropped_tokens == whole.dropped_tokens
    assert stream.n_docs == whole.n_docs and stream.n_tokens == whole.n_tokens
    assert stream.fingerprint() == whole.fingerprint()
    # (a corpus read over its own vocabulary says which words never occur, and which tokenizer file it found)
    assert sorted(n for n in stream.notes if "read the" not in n) == \
        sorted(n for n in read.notes if "read the" not in n and "never occur" not in n and "tokenizer read" not in n)


def test_stdin_is_read_as_it_comes(setup, small_blocks):
    folder, model = setup
    data = (folder / "docs.txt.gz").read_bytes()
    stream = stream_corpus("-", fixed_vocab=model.vocab, stdin=io.BytesIO(data))
    whole = ldacli.read_corpus(str(folder / "docs.txt"), fixed_vocab=model.vocab)
    counts = np.vstack([b.counts.toarray() for b in stream.blocks()])
    assert np.array_equal(counts, whole.counts.toarray())
    with pytest.raises(ldacli.SettingError, match="min_df judges words by their counts.*standard input"):
        stream_corpus("-", fixed_vocab=model.vocab, min_df=2, stdin=io.BytesIO(data))


def test_uci_whose_doc_ids_go_back(setup, tmp_path, small_blocks):
    folder, model = setup
    (tmp_path / "vocab.u.txt").write_text("\n".join(model.vocab) + "\n")
    V = len(model.vocab)
    (tmp_path / "docword.u.txt").write_text(f"3\n{V}\n3\n2 1 4\n1 2 1\n3 1 2\n")
    stream = stream_corpus(str(tmp_path / "docword.u.txt"), fixed_vocab=model.vocab)
    counts = np.vstack([b.counts.toarray() for b in stream.blocks()])
    assert counts[:, :2].tolist() == [[0, 1], [4, 0], [2, 0]]
    assert any("not in order: read whole" in n for n in stream.notes)
    stream = stream_corpus("-", fixed_vocab=model.vocab, vocab=str(tmp_path / "vocab.u.txt"),
                           stdin=io.BytesIO((tmp_path / "docword.u.txt").read_bytes()))
    with pytest.raises(ldacli.InputError, match="<stdin>:5: expected docIDs that never go down"):
        list(stream.blocks())


@pytest.mark.parametrize("name", ["docs.txt", "docs.ldac", "shards"])
def test_streamed_theta_equals_the_whole_for_any_thread_count(name, setup, small_blocks):
    folder, model = setup
    whole = ldacli.read_corpus(str(folder / name), fixed_vocab=model.vocab)
    words, doc_ptr = whole.tokens()
    assert len(fixed_topics.theta_chunks(doc_ptr)) > 3
    expected, _ = fixed_topics.estimate_theta(model.phi, model.alpha, words, doc_ptr, iterations=20, burn_in=5, seed=9)
    for threads in (1, 2, 3):
        stream = stream_corpus(str(folder / name), fixed_vocab=model.vocab)
        parts = list(infer_chunks(model, stream.blocks(), iterations=20, burn_in=5, seed=9, threads=threads))
        assert [d for ids, _ in parts for d in ids] == whole.doc_ids
        assert np.array_equal(np.concatenate([t for _, t in parts]), expected)


def test_infer_writes_the_same_bytes_as_the_whole_inference(setup, tmp_path, small_blocks):
    folder, model = setup
    corpus = str(folder / "docword.d.txt")
    whole, _ = ldacli.infer(model, ldacli.read_corpus(corpus, fixed_vocab=model.vocab), iterations=20, burn_in=5,
                            seed=3)
    whole.save(str(tmp_path / "whole.npz"))
    for threads in (1, 2):
        out = tmp_path / f"t{threads}.npz"
        r = run("infer", folder / "m.npz", corpus, "--iterations", 20, "--burn-in", 5, "--seed", 3, "--threads",
                threads, "-q", "-o", out)
        assert r.exit_code == 0, r.stderr
        assert out.read_bytes() == (tmp_path / "whole.npz").read_bytes()
    assert [f for f in os.listdir(tmp_path) if f.startswith(".")] == []  # no temporary file left
    # tables: the rows of theta, in every format
    r = run("infer", folder / "m.npz", corpus, "--iterations", 20, "--burn-in", 5, "--seed", 3, "-q", "-o", "-")
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert rows[0] == ["doc_id"] + [f"topic_{k}" for k in range(3)]
    assert [r[0] for r in rows[1:]] == whole.doc_ids
    assert np.allclose(np.array([[float(x) for x in r[1:]] for r in rows[1:]]), whole.theta, atol=1e-6)


@pytest.mark.parametrize("fmt", ["npz", "csv", "mallet"])
def test_write_inference_of_a_path_is_what_infer_writes(setup, tmp_path, small_blocks, fmt):
    """The command's one call, from Python: a model's path and a corpus's path (its reading
    settings as keywords) give the command's bytes and the reader's notes."""
    folder, _ = setup
    ending = "txt" if fmt == "mallet" else fmt
    sparse = {} if fmt == "npz" else {"top_topics": 2}
    r = run("infer", folder / "m.npz", folder / "docs.ldac", "--seed", 3, *(["--top-topics", 2] if sparse else []),
            "--format", fmt, "--input-format", "ldac", "-o", tmp_path / f"cli.{ending}")
    assert r.exit_code == 0, r.stderr
    written = write_inference(str(folder / "m.npz"), str(folder / "docs.ldac"), str(tmp_path / f"api.{ending}"), fmt,
                              seed=3, input_format="ldac", **sparse)
    if fmt == "npz":
        api, cli = (ldacli.Inference.load(str(tmp_path / f"{side}.npz")) for side in ("api", "cli"))
        assert np.array_equal(api.theta, cli.theta) and api.doc_ids == cli.doc_ids and api.params == cli.params
    else:
        assert (tmp_path / f"api.{ending}").read_bytes() == (tmp_path / f"cli.{ending}").read_bytes()
    assert written.n_docs == 90 and written.notes and all(f"docs.ldac: {n}" in r.stderr for n in written.notes)
    with pytest.raises(ldacli.SettingError, match="min_df"):
        write_inference(str(folder / "m.npz"), str(folder / "docs.ldac"), str(tmp_path / "x.tsv"), "tsv", min_df=0)
    assert not (tmp_path / "x.tsv").exists()


def test_infer_and_perplexity_leave_the_training_documents_unread(setup, tmp_path):
    """A model of a large corpus carries D x K proportions that inferring other documents does
    not need: reading the topics alone costs the topics' memory, whatever D."""
    import tracemalloc

    folder, model = setup
    big = ldacli.Model(model.phi, np.full((200_000, model.n_topics), 1 / model.n_topics), model.alpha, model.beta,
                       model.vocab, [f"d{i}" for i in range(200_000)], model.loglik_iterations,
                       model.loglik_per_token, model.params, model.removed_words)
    big.save(str(tmp_path / "big.npz"))
    tracemalloc.start()
    try:
        topics = ldacli.Model.load(str(tmp_path / "big.npz"), documents=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < big.theta.nbytes / 4 and topics.theta.shape == (0, model.n_topics) and topics.doc_ids == []
    assert np.array_equal(topics.phi, model.phi) and np.array_equal(topics.alpha, model.alpha)
    assert (topics.vocab, topics.params, topics.removed_words) == (big.vocab, big.params, big.removed_words)
    corpus = str(folder / "docword.d.txt")
    for command in (["infer", "-o", tmp_path / "a.npz"], ["perplexity"]):
        outs = [run(command[0], folder / name, corpus, "--seed", 3, "-q", *command[1:]) for name in ("m.npz",)]
        outs.append(run(command[0], tmp_path / "big.npz", corpus, "--seed", 3, "-q",
                        *[str(c).replace("a.npz", "b.npz") for c in command[1:]]))
        assert all(r.exit_code == 0 for r in outs) and outs[0].stdout == outs[1].stdout
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()


def test_infer_reads_stdin_as_it_comes_and_writes_sparse_tables(setup, tmp_path):
    folder, model = setup
    text = (folder / "docs.txt").read_bytes() + b"qqqunseen apple\n"
    r = run("infer", folder / "m.npz", "-", "--seed", 2, "--top-topics", 2, "--min-proportion", 0.2, "-o", "-",
            "--format", "jsonl", input=text)
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert set(rows[0]) == {"doc_id", "rank", "topic", "proportion"}
    by_doc = {}
    for row in rows:
        by_doc.setdefault(row["doc_id"], []).append(row)
    assert all(len(v) <= 2 and all(x["proportion"] >= 0.2 for x in v) for v in by_doc.values())
    assert all([x["rank"] for x in v] == list(range(1, len(v) + 1)) for v in by_doc.values())
    assert "left out: 1 token of words the model has never seen (unknown)" in r.stderr and "91" in by_doc
    r = run("infer", folder / "m.npz", folder / "docs.txt", "--top-topics", 2, "-o", tmp_path / "t.npz")
    assert r.exit_code == 2 and "--top-topics" in r.stderr and not (tmp_path / "t.npz").exists()


def test_perplexity_of_a_path_is_streamed_as_the_command_streams_it(setup, small_blocks):
    """ldacli.perplexity of a path by document completion reads it a block at a time, as the
    command (which calls it) does: the numbers of the corpus in memory, and the reader's notes."""
    folder, model = setup
    path = str(folder / "docs.txt")
    given = dict(seed=4, iterations=30, burn_in=10)
    got = ldacli.perplexity(str(folder / "m.npz"), path, **given)
    notes = got.pop("notes")
    assert got == ldacli.perplexity(model, ldacli.read_corpus(path, **model.reading()), **given)
    assert notes, "the reader says what it did"
    r = run("perplexity", folder / "m.npz", path, "--seed", 4, "--iterations", 30, "--burn-in", 10, "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == {"model": str(folder / "m.npz"), "corpus": path, **got, "notes": notes}
    assert all(f"{path}: {note}" in r.stderr for note in notes)


def test_perplexity_streamed_equals_the_whole(setup, small_blocks):
    folder, model = setup
    corpus = ldacli.read_corpus(str(folder / "docs.ldac"), fixed_vocab=model.vocab)
    expected = ldacli.perplexity(model, corpus, seed=4, iterations=30, burn_in=10)
    for threads in (1, 2):
        got = perplexity_stream(model, stream_corpus(str(folder / "docs.ldac"), fixed_vocab=model.vocab), seed=4,
                                iterations=30, burn_in=10, threads=threads)
        assert got == expected


@pytest.mark.slow   # whole processes in a shell pipe
def test_infer_in_a_pipe_end_to_end(setup, tmp_path):
    """A real process reading stdin from a pipe and writing parquet to a file."""
    pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
    import pyarrow.parquet as pq

    folder, model = setup
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT}
    with open(folder / "docs.txt.gz", "rb") as f:
        p = subprocess.run([sys.executable, "-m", "ldacli", "infer", str(folder / "m.npz"), "-", "--seed", "1", "-q",
                            "-o", str(tmp_path / "t.parquet")], stdin=f, env=env, capture_output=True)
    assert p.returncode == 0, p.stderr
    table = pq.read_table(tmp_path / "t.parquet").to_pandas()
    assert list(table.columns) == ["doc_id"] + [f"topic_{k}" for k in range(3)]
    assert len(table) == 90 and np.allclose(table.iloc[:, 1:].sum(axis=1), 1)
