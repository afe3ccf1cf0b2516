"""The Python API as people call it first: ldacli.train, infer, perplexity and select_k take a
path, a Corpus, a list of strings or a SciPy sparse matrix (with vocab=), refuse anything else
with a SettingError naming the argument, and show their settings as keyword parameters (the
signature and the docstring) built from the declarations."""

import inspect
import os
import pydoc

import numpy as np
import pytest
import scipy.sparse as sp

import ldacli
from ldacli import settings
from ldacli.errors import LdacliError, SettingError
from ldacli.corpora.formats.read import READING, READING_FOR_MODEL
from ldacli.methods import driver

DOCS = ["apples pears plums orchard fruit juice", "rivers lakes boats water sailing fish",
        "apples rivers fruit water orchard boats", "plums pears juice fruit apples", "sailing boats lakes fish water"] * 8
FAST = dict(iterations=6, seed=3)
INFER = dict(iterations=6, burn_in=2, seed=3)
FUNCTIONS = ("train", "infer", "perplexity", "select_k")


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text("\n".join(DOCS) + "\n")
    return str(path)


def same_model(a, b):
    assert a.vocab == b.vocab and np.array_equal(a.phi, b.phi) and np.array_equal(a.theta, b.theta)


def test_what_users_type_first_works(text_file):
    model = ldacli.train(text_file, 2, **FAST)             # MALLET's and tomotopy's users start here
    result, dropped = ldacli.infer(model, text_file, **INFER)
    assert result.theta.shape == (len(DOCS), 2) and dropped == 0
    scores = ldacli.perplexity(model, text_file, **INFER)
    assert scores["n_tokens"] > 0 and scores["perplexity"] > 1
    same_model(model, ldacli.train(ldacli.read_corpus(text_file), 2, **FAST))
    assert np.array_equal(result.theta, ldacli.infer(model, ldacli.read_corpus(text_file, fixed_vocab=model.vocab),
                                                     **INFER)[0].theta)


def test_a_path_a_list_of_strings_and_a_matrix_give_the_corpus_s_model(text_file, small_ldac, planted):
    from_path = ldacli.train(small_ldac, 3, **FAST)
    same_model(from_path, ldacli.train(planted.corpus, 3, **FAST))
    assert from_path.params["corpus_source"] == small_ldac
    same_model(ldacli.train(DOCS, 2, **FAST), ldacli.train(text_file, 2, **FAST))
    X, vocab = planted.corpus.counts, planted.corpus.vocab
    same_model(ldacli.train(sp.csr_matrix(X), 3, vocab=vocab, **FAST), from_path)     # any SciPy sparse type
    same_model(ldacli.train(X.toarray(), 3, vocab=vocab, **FAST), from_path)          # or a dense array
    assert ldacli.train(X, 3, **FAST).vocab[:3] == ["0", "1", "2"]                    # no vocab: column numbers


def test_infer_and_perplexity_take_every_kind_over_the_model_s_vocabulary(text_file, small_ldac, planted):
    model = ldacli.train(small_ldac, 3, **FAST)
    corpus = ldacli.read_corpus(small_ldac, fixed_vocab=model.vocab)
    theta = ldacli.infer(model, corpus, **INFER)[0].theta
    X, vocab = planted.corpus.counts, planted.corpus.vocab
    for given, extra in ((small_ldac, {}), (X, {"vocab": vocab}), (X.tocsc(), {"vocab": vocab})):
        assert np.array_equal(ldacli.infer(model, given, **INFER, **extra)[0].theta, theta)
        assert ldacli.perplexity(model, given, **INFER, **extra)["log_likelihood"] == \
            ldacli.perplexity(model, corpus, **INFER)["log_likelihood"]
    path = os.path.join(os.path.dirname(small_ldac), "m.npz")
    model.save(path)
    assert np.array_equal(ldacli.infer(path, small_ldac, **INFER)[0].theta, theta)   # a model's path too
    texts = ldacli.train(DOCS, 2, **FAST)
    result, unknown = ldacli.infer(texts, ["apples and unknown words", "water boats"], **INFER)
    # "unknown", "words": the model lacks them; "and": its stop list removed it
    assert result.theta.shape == (2, 2) and unknown == 2 and result.params["removed_tokens"] == 1
    with pytest.raises(SettingError, match="vocab must name the 50 columns of the matrix corpus") as error:
        ldacli.perplexity(model, X, **INFER)   # the model's words are strings, the columns only numbers
    assert error.value.name == "vocab"


def test_reading_settings_apply_to_what_is_read_here(text_file, planted):
    model = ldacli.train(text_file, 2, min_df=17, stop_words="none", **FAST)
    assert model.params["min_df"] == 17 and model.vocab == ["apples", "boats", "fruit", "water"]  # in 24 documents
    same_model(ldacli.train(DOCS, 2, min_df=17, stop_words="none", **FAST), model)
    with pytest.raises(SettingError, match="min_df applies to a corpus read here .* found a Corpus") as error:
        ldacli.train(planted.corpus, 2, min_df=2, **FAST)
    assert error.value.name == "min_df"
    with pytest.raises(SettingError, match="input_format applies to a corpus read here"):
        ldacli.train(DOCS, 2, input_format="text", **FAST)


def test_a_resumed_run_from_a_path_reads_it_as_its_checkpoint_did(text_file, tmp_path):
    ckpt = str(tmp_path / "c.npz")
    full = ldacli.train(text_file, 2, min_df=9, iterations=8, seed=1)
    ldacli.train(text_file, 2, min_df=9, iterations=4, seed=1, checkpoint=ckpt)
    same_model(ldacli.train(text_file, iterations=8, resume=ckpt), full)
    with pytest.raises(SettingError, match="the checkpoint has min_df=9, which cannot change on resume"):
        ldacli.train(text_file, iterations=8, resume=ckpt, min_df=2)


class Opaque:
    pass


WRONG = [5, None, 2.5, True, b"docs.txt", "", {"a": 1}, {"a", "b"}, [1, 2], ["text", 3], Opaque(),
         np.arange(5)]


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("wrong", WRONG, ids=[f"{i}-{type(w).__name__}" for i, w in enumerate(WRONG)])
def test_anything_else_is_a_setting_error_naming_the_argument(function, wrong, tmp_path, planted):
    model = ldacli.train(planted.corpus, 2, iterations=2, seed=1)
    call = {"train": lambda c: ldacli.train(c, 2, **FAST),
            "infer": lambda c: ldacli.infer(model, c, **INFER),
            "perplexity": lambda c: ldacli.perplexity(model, c, **INFER),
            "select_k": lambda c: ldacli.select_k(c, [2], seeds=1, iterations=2, output=str(tmp_path / "k"))}
    with pytest.raises(SettingError) as error:   # never an AttributeError from deep inside
        call[function](wrong)
    assert error.value.name == "corpus"
    message = str(error.value)
    assert message.startswith("corpus must be a path (any format read_corpus reads), a Corpus, a list of strings")
    assert "SciPy sparse matrix" in message and "found" in message
    assert not (tmp_path / "k").exists()


@pytest.mark.parametrize("function", ("infer", "perplexity"))
def test_a_model_that_is_not_one_is_refused_naming_it(function, planted):
    f = getattr(ldacli, function)
    for wrong, hint in ((planted.corpus, "wrong order"), (3, "found 3"), (None, "found None")):
        with pytest.raises(SettingError, match=f"model must be a Model or the path of a model file, .*{hint}") as e:
            f(wrong, planted.corpus, **INFER)
        assert e.value.name == "model"


def test_the_arguments_in_the_wrong_order_say_so(planted):
    model = ldacli.train(planted.corpus, 2, iterations=2, seed=1)
    with pytest.raises(SettingError, match="found a Model .the arguments in the wrong order"):
        ldacli.train(model, 2)


def test_an_in_memory_corpus_s_error_names_it():
    with pytest.raises(LdacliError) as error:
        ldacli.train(["", "   "], 2, **FAST)
    assert str(error.value) == "<corpus in memory>: expected a corpus with at least one token, found none"


def test_conflicting_settings_are_refused_before_the_corpus_is_read(tmp_path):
    missing = str(tmp_path / "no-such-corpus.txt")   # reading it would fail: the conflict must come first
    for given, name, message in [
        (dict(remove_topics=[1]), "remove_topics", "remove_topics changes the topics of a warm start: give "
                                                   "warm_start too"),
        (dict(patience=3), "holdout", "holdout and patience go together"),  # the one missing
        (dict(seed_strength=0.5), "seed_strength", "give seed_words too"),
        (dict(warm_start="a.npz", resume="b.npz"), "warm_start", "warm_start begins a run and resume continues one"),
        (dict(method="vem", scheduler="local:2"), "scheduler", "scheduler applies to method cgs only"),
        (dict(seed_words=missing, optimize_interval=10), "optimize_interval", "optimize_interval learns a symmetric"),
    ]:
        with pytest.raises(SettingError) as error:
            ldacli.train(missing, 3, **given)
        assert error.value.name == name and message in str(error.value), str(error.value)
        assert "--" not in str(error.value)   # Python's names from Python


# --- the signatures -------------------------------------------------------------------------------------

def declared(function):
    return {"train": driver.SETTINGS + driver.method_settings() + READING,
            "infer": ldacli.scoring.inference.SETTINGS + READING_FOR_MODEL,
            "perplexity": ldacli.scoring.perplexity.SETTINGS + READING_FOR_MODEL,
            "select_k": ldacli.model_selection.SETTINGS + ldacli.model_selection.SETTINGS_OF_TRAIN + READING}[function]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_signature_shows_every_setting_with_its_declared_default(function):
    f = getattr(ldacli, function)
    parameters = inspect.signature(f).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    settings_of = settings.by_name(declared(function))
    assert set(settings_of) <= set(parameters)
    for name, s in settings_of.items():
        p = parameters[name]
        if s.required:
            assert p.default is p.empty
        else:
            assert p.default == (None if callable(s.default) else s.default), name
        assert p.annotation is not p.empty
    own = set(parameters) - set(settings_of)   # the function's own: the inputs, progress, callback, ...
    assert own <= {"corpus", "model", "progress", "callback", "stop", "output", "page"}
    # what the signature promises, the function takes: none of its names is an unknown setting
    assert f.settings == tuple(settings_of.values())


def test_the_signature_reads_as_a_call(small_ldac):
    sig = inspect.signature(ldacli.train)
    bound = sig.bind(small_ldac, 3, iterations=5, burn_in=2, method="gibbs", min_df=2)
    assert bound.arguments["n_topics"] == 3
    with pytest.raises(TypeError):
        sig.bind(small_ldac, 3, iteration=5)   # a misspelt setting: the IDE and bind() say so
    assert str(sig.parameters["alpha"]) == "alpha: float = 0.1"
    assert str(sig.parameters["method"]) == "method: Literal['cgs', 'vem', 'gibbs'] = 'cgs'"
    assert list(inspect.signature(ldacli.infer).parameters)[:2] == ["model", "corpus"]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_the_docstring_lists_every_setting_in_python_s_words(function):
    f = getattr(ldacli, function)
    doc = inspect.getdoc(f)
    listed = doc.split("\nSettings\n--------\n", 1)[1]
    for s in settings.by_name(declared(function)).values():
        assert f"\n{s.name} : {s.type.describe()}; default " in "\n" + listed, s.name
    for s in settings.by_name(declared(function)).values():   # no option of the command line in it
        for spelling in s.spellings + ((s.off,) if s.off else ()):
            if spelling.startswith("--"):
                assert f"{spelling} " not in listed and f"{spelling})" not in listed, spelling
    shown = pydoc.render_doc(f, renderer=pydoc.plaintext)   # what help() shows
    heading = shown.splitlines()[2]   # the signature line
    assert heading.startswith(f"{function}(")
    for s in settings.by_name(declared(function)).values():
        assert f" {s.name}: " in heading and f"\n    {s.name} : " in shown, s.name


def test_the_docstring_says_what_decides_a_default_that_depends():
    doc = inspect.getdoc(ldacli.train)
    assert "iterations : an integer >= 1; default 1000; vem: 100 (continued from a checkpoint unless given)" in doc
    assert "burn_in : an integer >= 0; default half of iterations (fixed by a checkpoint)" in doc
    assert "resample=True" in inspect.getdoc(ldacli.perplexity)   # a flag's option as its Python value


def test_select_k_takes_a_path_texts_and_a_matrix(text_file, tmp_path):
    def table(corpus, name, **extra):
        result = ldacli.select_k(corpus, [2, 3], seeds=1, iterations=4, seed=1, threads=1, output=str(tmp_path / name),
                                 **extra)
        return [(row["k"], row["perplexity"], row["npmi"]) for row in result["table"]]

    corpus = ldacli.read_corpus(text_file)
    expected = table(corpus, "corpus")
    assert table(text_file, "path") == expected
    assert table(DOCS, "texts") == expected
    assert table(corpus.counts, "matrix", vocab=corpus.vocab) == expected


def test_the_other_documented_calls_take_paths_and_refuse_the_wrong_kind(text_file, tmp_path):
    model = ldacli.train(text_file, 2, **FAST)
    path = str(tmp_path / "m.npz")
    model.save(path)
    # a model's path and a corpus's path where a Model and a Corpus were taken
    assert ldacli.coherence(path, text_file, measure="npmi")["mean"] == \
        ldacli.coherence(model, ldacli.read_corpus(text_file), measure="npmi")["mean"]
    assert ldacli.diff_models(path, model)["max_distance"] == 0
    assert ldacli.match_topics(path, path).pairs == [(0, 0), (1, 1)]
    assert ldacli.to_pyldavis(path, DOCS)["vocab"] == model.vocab
    wrong = [
        (lambda: ldacli.coherence(model, 5), "reference"), (lambda: ldacli.diff_models(5, model), "a"),
        (lambda: ldacli.align(model, None), "reference"), (lambda: ldacli.describe(5), "path"),
        (lambda: ldacli.read_corpus(5), "path"), (lambda: ldacli.load_model(model), "path"),
        (lambda: ldacli.Checkpoint.load(3.5), "path"), (lambda: ldacli.Inference.load(None), "path"),
        (lambda: model.save(5), "path"), (lambda: ldacli.open_shard_folder(5), "path"),
        (lambda: ldacli.name_topic(model, 0, "x"), "path"),
        (lambda: ldacli.write_corpus(text_file, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab")), "corpus"),
        (lambda: ldacli.write_shards(DOCS, str(tmp_path / "shards"), 2), "corpus"),
        (lambda: ldacli.Corpus.from_texts("one document, not a list"), "texts"),
    ]
    for call, name in wrong:
        with pytest.raises(SettingError) as error:   # not an AttributeError or a TypeError
            call()
        assert error.value.name == name, str(error.value)
    assert sorted(os.listdir(tmp_path)) == ["m.npz", "small.txt"]   # nothing written
