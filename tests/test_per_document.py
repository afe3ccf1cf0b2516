"""Per-document inference: a document's topics (and its held-out score) depend only on the
model, its tokens and the seed: the same bytes inferred alone or among others, in any position,
block size or thread count, from a file or from stdin, through the API, the command line and
the scikit-learn estimator. (The cluster is in test_dask.py.)"""

import os

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.scoring import fixed_topics
from ldacli.cli import main
from ldacli.corpora.corpus import Corpus
from ldacli.scoring.perplexity import perplexity_stream
from ldacli.corpora.formats import stream as stream_module
from ldacli.corpora.formats.stream import stream_corpus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "sample_corpora", "numpy_scipy_docs.txt")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perdoc")
    corpus = ldacli.read_corpus(SAMPLE)
    model = ldacli.train(corpus, 8, iterations=40, seed=3)
    model.save(str(folder / "m.npz"))
    lines = [line for line in open(SAMPLE, encoding="utf-8").read().splitlines()][:120]
    (folder / "docs.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder, model


def rows(corpus: Corpus, order) -> Corpus:
    return Corpus(corpus.counts[order], corpus.vocab, [corpus.doc_ids[i] for i in order])


def test_a_documents_topics_are_the_same_alone_among_others_and_in_any_order(trained, monkeypatch):
    folder, model = trained
    corpus = ldacli.read_corpus(str(folder / "docs.txt"), fixed_vocab=model.vocab)
    whole, _ = ldacli.infer(model, corpus, iterations=30, burn_in=10, seed=5, threads=1)
    order = np.random.default_rng(0).permutation(corpus.n_docs)
    monkeypatch.setattr(fixed_topics, "THETA_CHUNK_TOKENS", 97)  # other chunks, other threads
    shuffled, _ = ldacli.infer(model, rows(corpus, order), iterations=30, burn_in=10, seed=5, threads=3)
    assert np.array_equal(shuffled.theta, whole.theta[order])
    for d in (0, 17, corpus.n_docs - 1):
        alone, _ = ldacli.infer(model, rows(corpus, [d]), iterations=30, burn_in=10, seed=5)
        assert alone.theta[0].tobytes() == whole.theta[d].tobytes()
    # the same tokens, the same row; another seed, other draws
    twice, _ = ldacli.infer(model, rows(corpus, [4, 9, 4]), iterations=30, burn_in=10, seed=5)
    assert np.array_equal(twice.theta[0], twice.theta[2])
    other, _ = ldacli.infer(model, corpus, iterations=30, burn_in=10, seed=6)
    assert not np.array_equal(other.theta, whole.theta)


def test_the_command_line_gives_a_document_alone_on_stdin_its_row_among_others(trained, monkeypatch):
    folder, _ = trained
    monkeypatch.setattr(stream_module, "DOCS_PER_BLOCK", 7)
    args = ["--iterations", "30", "--burn-in", "10", "--seed", "5", "-q", "-o", "-"]
    r = CliRunner().invoke(main, ["infer", str(folder / "m.npz"), str(folder / "docs.txt"), "--threads", "2", *args])
    assert r.exit_code == 0, r.stderr
    table = r.stdout.splitlines()
    lines = (folder / "docs.txt").read_text(encoding="utf-8").splitlines()
    for d in (3, 50, 119):
        r = CliRunner().invoke(main, ["infer", str(folder / "m.npz"), "-", *args], input=lines[d] + "\n")
        assert r.exit_code == 0, r.stderr
        header, row = r.stdout.splitlines()
        assert header == table[0]
        assert row.split("\t")[1:] == table[1 + d].split("\t")[1:]  # ids are positions; the numbers are the same


def test_held_out_scores_are_per_document(trained, monkeypatch):
    folder, model = trained
    corpus = ldacli.read_corpus(str(folder / "docs.txt"), fixed_vocab=model.vocab)
    order = np.random.default_rng(1).permutation(corpus.n_docs)
    for estimator, extra in (("completion", dict(iterations=20, burn_in=5)), ("left-to-right", dict(particles=3)),
                             ("importance", dict(samples=20))):
        first = ldacli.perplexity(model, corpus, estimator=estimator, seed=2, **extra)
        again = ldacli.perplexity(model, rows(corpus, order), estimator=estimator, seed=2, **extra)
        # the same draws for every document; only the order of the sum differs
        assert again["log_likelihood"] == pytest.approx(first["log_likelihood"], rel=1e-12)
        one = [ldacli.perplexity(model, rows(corpus, [d]), estimator=estimator, seed=2, **extra)["log_likelihood"]
               for d in range(5)]
        head = ldacli.perplexity(model, rows(corpus, list(range(5))), estimator=estimator, seed=2, **extra)
        assert sum(one) == pytest.approx(head["log_likelihood"], rel=1e-12)
    # streamed in blocks of 7 documents, the same figures as in memory
    monkeypatch.setattr(stream_module, "DOCS_PER_BLOCK", 7)
    streamed = perplexity_stream(model, stream_corpus(str(folder / "docs.txt"), fixed_vocab=model.vocab), seed=4,
                                 iterations=20, burn_in=5, threads=2)
    assert streamed == ldacli.perplexity(model, corpus, seed=4, iterations=20, burn_in=5)


@pytest.mark.slow
def test_the_estimators_transform_of_a_subset_is_the_subset_of_its_transform(trained):
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import CountVectorizer

    folder, _ = trained
    texts = (folder / "docs.txt").read_text(encoding="utf-8").splitlines()
    X = CountVectorizer().fit_transform(texts)
    est = ldacli.LatentDirichletAllocation(5, max_iter=20, random_state=0, infer_iterations=20, infer_burn_in=5)
    full = est.fit(X).transform(X)
    np.testing.assert_array_equal(est.transform(X[10:20]), full[10:20])
    np.testing.assert_array_equal(est.transform(X[::-1]), full[::-1])


def test_a_python_stream_of_one_document_gives_its_row(trained):
    folder, model = trained
    corpus = ldacli.read_corpus(str(folder / "docs.txt"), fixed_vocab=model.vocab)
    words, ptr = corpus.tokens()
    theta, _ = fixed_topics.estimate_theta(model.phi, model.alpha, words, ptr, iterations=12, burn_in=4, seed=8)
    d = 33
    alone, _ = fixed_topics.estimate_theta(model.phi, model.alpha, words[ptr[d]:ptr[d + 1]],
                                           np.array([0, ptr[d + 1] - ptr[d]]), iterations=12, burn_in=4, seed=8)
    assert np.array_equal(alone[0], theta[d])
