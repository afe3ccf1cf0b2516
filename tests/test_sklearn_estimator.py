"""ldacli.LatentDirichletAllocation: scikit-learn's estimator checks, a Pipeline after
CountVectorizer, and the same numbers as the library's own train, infer and perplexity; the
corpus constructors, short reprs and pandas output."""

import numpy as np
import pytest
import scipy.sparse as sp

import ldacli

sklearn = pytest.importorskip("sklearn", reason="the sklearn extra is not installed: pip install 'ldacli[sklearn]'")
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

THEMES = ["apples pears plums cherries orchard harvest fruit juice",
          "rivers lakes oceans water boats sailing harbour fishing",
          "guitars drums pianos music concert melody songs rhythm"]


def texts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        words = THEMES[i % 3].split()
        out.append(" ".join(rng.choice(words, size=12)) + " " + rng.choice(THEMES[(i + 1) % 3].split()))
    return out


@parametrize_with_checks([ldacli.LatentDirichletAllocation(4, max_iter=10, infer_iterations=10, infer_burn_in=5,
                                                           fractional_counts="round")])
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_in_a_pipeline_after_count_vectorizer():
    docs = texts()
    pipe = Pipeline([("counts", CountVectorizer()),
                     ("lda", ldacli.LatentDirichletAllocation(3, max_iter=100, random_state=1))])
    theta = pipe.fit_transform(docs)
    assert theta.shape == (60, 3) and np.allclose(theta.sum(axis=1), 1)
    # each theme's documents share one dominant topic, a different one per theme
    dominant = [int(np.bincount(theta[i::3].argmax(axis=1)).argmax()) for i in range(3)]
    assert sorted(dominant) == [0, 1, 2]
    assert list(pipe.get_feature_names_out()) == [f"latentdirichletallocation{k}" for k in range(3)]
    lda = pipe.named_steps["lda"]
    assert lda.components_.shape == (3, len(pipe.named_steps["counts"].vocabulary_))
    assert np.allclose(lda.components_.sum(axis=1), 1)
    assert lda.perplexity(pipe.named_steps["counts"].transform(texts(seed=5))) < 30


def test_the_estimator_runs_the_library_path():
    X = CountVectorizer().fit_transform(texts())
    est = ldacli.LatentDirichletAllocation(3, max_iter=30, random_state=7, doc_topic_prior=0.2,
                                           topic_word_prior=0.05).fit(X)
    corpus = ldacli.Corpus.from_matrix(X)
    model = ldacli.train(corpus, 3, iterations=30, seed=7, alpha=0.2, beta=0.05)
    assert np.array_equal(est.model_.phi, model.phi) and est.n_iter_ == 30
    theta, _ = ldacli.infer(model, corpus, seed=7)
    assert np.array_equal(est.transform(X), theta.theta)
    heldout = CountVectorizer(vocabulary=None).fit(texts()).transform(texts(seed=3))
    scores = ldacli.perplexity(model, ldacli.Corpus.from_matrix(heldout), seed=7)
    assert est.score(heldout) == scores["log_likelihood"] and est.perplexity(heldout) == scores["perplexity"]


def test_partial_fit_adds_a_batch_to_what_was_learned_keeping_topic_ids():
    vectorizer = CountVectorizer().fit(texts())
    est = ldacli.LatentDirichletAllocation(3, max_iter=60, random_state=2)
    est.partial_fit(vectorizer.transform(texts()))
    before = est.components_.copy()
    batch = vectorizer.transform(texts(seed=9)[:5])
    est.partial_fit(batch)
    assert est.model_.params["update"] is not None and est.model_.n_docs == len(texts()) + 5
    same = [int(np.argmin([np.abs(before[k] - after).sum() for after in est.components_])) for k in range(3)]
    assert same == [0, 1, 2]
    # a word absent from the batch keeps its probability (scikit-learn's partial_fit adds a batch to
    # what was learned; a warm start on the batch alone gave every such word probability 0)
    absent = np.asarray(batch.sum(axis=0)).ravel() == 0
    assert absent.any() and np.all(est.components_[:, absent] > 0)
    assert np.allclose(est.components_[:, absent], before[:, absent], rtol=0.5)
    with pytest.raises(ValueError, match="partial_fit adds documents to a model of method cgs, found method vem"):
        vem = ldacli.LatentDirichletAllocation(3, max_iter=5, method="vem").fit(vectorizer.transform(texts()))
        vem.partial_fit(batch)


def test_fractional_counts_and_bad_settings_are_value_errors():
    X = np.array([[1.5, 2.0], [0.0, 3.0]])
    with pytest.raises(ValueError, match="whole-number counts"):
        ldacli.LatentDirichletAllocation(2, max_iter=5).fit(X)
    with pytest.raises(ValueError, match="n_topics must be an integer >= 1, found 0"):
        ldacli.LatentDirichletAllocation(0, max_iter=5).fit(np.array([[1, 2], [0, 3]]))


def test_corpus_from_texts_reads_as_a_text_file_does(tmp_path):
    docs = texts(20) + ["", "The THE the don't and_more x11 naïve"]
    (tmp_path / "d.txt").write_text("\n".join(docs) + "\n")
    for rules in ({}, {"min_df": 2, "max_df": 0.9}, {"stop_words": "none", "max_vocab": 10}):
        whole = ldacli.read_corpus(str(tmp_path / "d.txt"), **rules)
        made = ldacli.Corpus.from_texts(docs, **rules)
        assert made.vocab == whole.vocab and made.doc_ids == whole.doc_ids
        assert (made.counts != whole.counts).nnz == 0
        assert made.notes == [n for n in whole.notes if "empty" not in n and "detected" not in n]
    fixed = ldacli.Corpus.from_texts(["apples and bananas"], vocab=["apples", "pears"], doc_ids=["a"])
    assert fixed.vocab == ["apples", "pears"] and fixed.doc_ids == ["a"] and fixed.dropped_tokens == 2


def test_corpus_from_matrix_checks_counts():
    c = ldacli.Corpus.from_matrix(sp.csr_matrix(np.array([[1, 0], [2, 3]])), ["a", "b"])
    assert c.doc_ids == ["1", "2"] and c.n_tokens == 6
    with pytest.raises(ldacli.InputError, match="positive whole numbers"):
        ldacli.Corpus.from_matrix(np.array([[1.5, 0]]))
    with pytest.raises(ldacli.SettingError, match="vocab must be 2 distinct words"):
        ldacli.Corpus.from_matrix(np.array([[1, 0]]), ["a", "a"])


def test_short_reprs_and_pandas(tmp_path):
    pd = pytest.importorskip("pandas", reason="the pandas extra is not installed")
    corpus = ldacli.Corpus.from_texts(texts() * 20)
    model = ldacli.train(corpus, 3, iterations=10, seed=1)
    result, _ = ldacli.infer(model, corpus, seed=1)
    for obj in (corpus, model, result):
        assert len(repr(obj)) < 200, repr(obj)
    assert repr(model).startswith("<Model: cgs, 3 topics,") and "seed 1" in repr(model)
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame.index.name == "doc_id"
    assert list(frame.columns) == ["topic_0", "topic_1", "topic_2"] and np.array_equal(frame.values, result.theta)
    assert model.to_pandas().shape == (1200, 3)
    from ldacli.exporting import topic_keys
    from ldacli.files.tables import to_pandas

    keys = to_pandas(topic_keys(model, top_words=3))
    assert list(keys.columns) == ["topic", "name", "alpha", "prevalence", "words"] and len(keys) == 3
