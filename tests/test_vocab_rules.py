"""The vocabulary rules (stop words, remove_top, min_df, max_df, max_vocab) on every input format,
over a fixed vocabulary, and their defaults; an ldacli file given as a corpus."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ldacli
from ldacli.corpora.corpus import Corpus
from ldacli.errors import InputError, SettingError
from ldacli.corpora.formats.read import read_corpus
from ldacli.corpora.formats.write import write_corpus, write_shards
from ldacli.corpora.tokenizer import LEGACY
from ldacli.corpora.vocab_rules import VocabRules

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Six words in an order that is not alphabetical; "the" and "and" are English stop words.
VOCAB = ["zeta", "the", "omega", "alpha", "and", "beta"]
COUNTS = [  # documents x words, in VOCAB's order; the last document is empty
    [1, 3, 0, 2, 2, 0],
    [0, 2, 4, 0, 1, 1],
    [0, 1, 0, 1, 1, 0],
    [0, 0, 0, 0, 0, 0],
]
# tokens: zeta 1, the 6, omega 4, alpha 3, and 4, beta 1; documents: 1, 3, 1, 2, 3, 1
FORMATS = ["uci", "ldac", "mtx", "npz", "shards", "text"]


def corpus_file(folder, fmt: str) -> str:
    """The corpus COUNTS over VOCAB written as ``fmt`` in ``folder`` (its vocabulary beside it)."""
    corpus = Corpus(sp.csr_array(np.array(COUNTS, dtype=np.int32)), list(VOCAB), ["1", "2", "3", "4"])
    if fmt == "text":
        path = folder / "docs.txt"
        lines = [" ".join(w for j, w in reversed(list(enumerate(VOCAB))) for _ in range(row[j])) for row in COUNTS]
        path.write_text("\n".join(lines) + "\n")
        return str(path)
    if fmt == "shards":
        write_shards(corpus, folder / "shards", 2)
        return str(folder / "shards")
    path = folder / ("docword.c.txt" if fmt == "uci" else f"c.{fmt}")
    write_corpus(corpus, path, folder / ("vocab.c.txt" if fmt == "uci" else "c.vocab"), format=fmt)
    return str(path)


def order(fmt: str, words: list[str]) -> list[str]:
    """``words`` in the vocabulary order of ``fmt``: the file's, or alphabetical for text."""
    return sorted(words) if fmt == "text" else [w for w in VOCAB if w in words]


def column(corpus: Corpus, word: str) -> list[int]:
    return corpus.counts.toarray()[:, corpus.vocab.index(word)].tolist()


def expect(corpus: Corpus, fmt: str, kept: list[str], notes: list[str]) -> None:
    """``corpus`` holds the words ``kept`` (in the format's order) with their counts untouched,
    and the rules' notes are ``notes``, each once."""
    assert corpus.vocab == order(fmt, kept)
    for word in kept:
        assert column(corpus, word) == [row[VOCAB.index(word)] for row in COUNTS]
    assert rule_notes(corpus) == notes


def rule_notes(corpus: Corpus) -> list[str]:
    """The notes of the vocabulary rules, checked to be there once each with the others."""
    assert len(set(corpus.notes)) == len(corpus.notes)
    return [n for n in corpus.notes if n.startswith(("stop words", "remove_top", "min_df", "max_df", "max_vocab"))]


@pytest.mark.parametrize("fmt", FORMATS)
def test_stop_words_from_a_file_apply_to_every_format(tmp_path, fmt):
    stop = tmp_path / "stop.txt"
    stop.write_text("# mine\nthe\nand\nnot-in-the-vocabulary\n")
    corpus = read_corpus(corpus_file(tmp_path, fmt), stop_words=str(stop))
    # for text, whose default is the English list, the note says that a file alone replaces it
    hint = ", which replaces the English list; name english too to extend it" if fmt == "text" else ""
    expect(corpus, fmt, ["zeta", "omega", "alpha", "beta"], [f"stop words ({stop}{hint}): removed 2 words, 10 tokens"])
    english = read_corpus(corpus_file(tmp_path, fmt), stop_words="english")
    expect(english, fmt, ["zeta", "omega", "alpha", "beta"], ["stop words (english): removed 2 words, 10 tokens"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_remove_top_removes_the_most_frequent_ties_in_vocabulary_order(tmp_path, fmt):
    corpus = read_corpus(corpus_file(tmp_path, fmt), stop_words=None, remove_top=2)
    # the (6), then omega and "and" tie at 4: omega comes first in the file, "and" alphabetically
    second = "and" if fmt == "text" else "omega"
    kept = [w for w in VOCAB if w not in ("the", second)]
    expect(corpus, fmt, kept, ["remove_top=2: removed 2 words, 10 tokens"])


@pytest.mark.parametrize("fmt", FORMATS)
def test_min_df_max_df_and_max_vocab_apply_to_every_format_in_order(tmp_path, fmt):
    path = corpus_file(tmp_path, fmt)
    expect(read_corpus(path, stop_words=None, min_df=2), fmt, ["the", "alpha", "and"],
           ["min_df=2: removed 3 words, 6 tokens"])
    expect(read_corpus(path, stop_words=None, max_df=0.5), fmt, ["zeta", "omega", "alpha", "beta"],
           ["max_df=0.5: removed 2 words, 10 tokens"])
    second = "and" if fmt == "text" else "omega"
    expect(read_corpus(path, stop_words=None, max_vocab=2), fmt, ["the", second],
           ["max_vocab=2: removed 4 words, 9 tokens"])
    # all of them, in the documented order: stop words, remove_top, min_df, max_df, max_vocab
    corpus = read_corpus(path, stop_words="english", remove_top=1, min_df=2, max_df=0.5, max_vocab=1)
    expect(corpus, fmt, ["alpha"], ["stop words (english): removed 2 words, 10 tokens",
                                    "remove_top=1: removed 1 word, 4 tokens",
                                    "min_df=2: removed 2 words, 2 tokens"])
    assert read_corpus(path, stop_words="english", remove_top=1, min_df=2, max_df=0.5, max_vocab=1).fingerprint() \
        == corpus.fingerprint()


@pytest.mark.parametrize("fmt", FORMATS)
def test_over_a_fixed_vocabulary_the_rules_remove_tokens_and_keep_the_columns(tmp_path, fmt):
    stop = tmp_path / "stop.txt"
    stop.write_text("the\n")
    fixed = ["beta", "the", "new", "zeta", "alpha"]  # no omega, no "and"; "new" never occurs
    corpus = read_corpus(corpus_file(tmp_path, fmt), fixed_vocab=fixed, stop_words=str(stop), min_df=2)
    assert corpus.vocab == fixed
    assert corpus.dropped_tokens == 8  # omega's 4 and "and"'s 4
    assert corpus.counts.toarray().tolist() == [[0, 0, 0, 0, 2], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]
    assert "8 tokens outside the fixed vocabulary dropped" in corpus.notes
    assert rule_notes(corpus) == [f"stop words ({stop}): removed 1 word, 6 tokens", "min_df=2: removed 2 words, 2 tokens"]
    # the default over a fixed vocabulary: no stop words, nothing but the dropped tokens
    plain = read_corpus(corpus_file(tmp_path, fmt), fixed_vocab=fixed)
    assert plain.vocab == fixed and plain.dropped_tokens == 8 and column(plain, "the") == [3, 2, 1, 0]
    # align keeps the count: the tokens the final vocabulary lacks, whenever they were dropped
    aligned, dropped = plain.align(["alpha", "beta"])
    assert dropped == 7 and aligned.dropped_tokens == 15
    assert plain.without_unused_words()[0].dropped_tokens == 8


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_default_keeps_bag_of_words_as_written_and_text_as_before(tmp_path, fmt):
    path = corpus_file(tmp_path, fmt)
    default = read_corpus(path)
    assert read_corpus(path, stop_words="auto").fingerprint() == default.fingerprint()
    if fmt == "text":  # text building its own vocabulary: the English list, as before
        assert default.fingerprint() == read_corpus(path, stop_words="english").fingerprint()
        assert "the" not in default.vocab
    else:  # bag-of-words: the file's vocabulary and counts, byte for byte
        written = Corpus(sp.csr_array(np.array(COUNTS, dtype=np.int32)), list(VOCAB), ["1", "2", "3", "4"])
        assert default.fingerprint() == written.fingerprint() == read_corpus(path, stop_words=None).fingerprint()
        assert default.vocab == VOCAB and default.notes == read_corpus(path, stop_words="none").notes
        # while the English list, asked for, applies to them too
        assert read_corpus(path, stop_words="english").vocab == [w for w in VOCAB if w not in ("the", "and")]


def test_the_sample_corpus_reads_as_before():
    """Fingerprints recorded before the vocabulary rules existed (README's options, and none),
    with ldacli 0.2's tokenizer (letter runs, addresses split), which a model of 0.2 keeps."""
    path = os.path.join(REPO, "sample_corpora", "numpy_scipy_docs.txt")
    readme = read_corpus(path, min_df=5, max_df=0.5, **LEGACY,
                         stop_words=os.path.join(REPO, "sample_corpora", "stopwords_docstrings.txt"))
    assert readme.fingerprint() == "093b3294bdcbd3c4b243b51bc172ee48f66cdc182c595cabfda0bcf847ba1376"
    assert (readme.n_words, readme.n_tokens) == (2153, 73661)
    default = read_corpus(path, stop_words="auto", **LEGACY)
    assert default.fingerprint() == "d9d2ee207a681dc4f2a1aa9777ae2f4ce75620f2894373fbfc86bd3b35e9fbd4"


@pytest.mark.parametrize("kwargs, name, message", [
    ({"remove_top": -1}, "remove_top", "remove_top must be an integer >= 0, found -1"),
    ({"remove_top": 1.5}, "remove_top", "remove_top must be an integer >= 0, found 1.5"),
    ({"min_df": 0}, "min_df", "min_df must be an integer >= 1, found 0"),
    ({"max_df": 0.0}, "max_df", "max_df must be a number in (0, 1], found 0.0"),
    ({"max_df": 1.5}, "max_df", "max_df must be a number in (0, 1], found 1.5"),
    ({"max_vocab": 0}, "max_vocab", "max_vocab must be an integer >= 1, found 0"),
    ({"stop_words": 3}, "stop_words", "stop_words must be 'auto', 'english', 'none' or the path of a file"),
    ({"stop_words": ""}, "stop_words", "stop_words must be 'auto', 'english', 'none' or the path of a file"),
    ({"fixed_vocab": ["a", "b", "a"]}, "fixed_vocab", "fixed_vocab must hold distinct words, found 'a'"),
    ({"format": "csv"}, "format", "format must be one of auto, uci"),
])
def test_invalid_rules_are_setting_errors_of_one_form(tmp_path, kwargs, name, message):
    with pytest.raises(SettingError) as info:
        read_corpus(corpus_file(tmp_path, "ldac"), **kwargs)
    assert info.value.name == name and str(info.value).startswith(message)


def test_a_stop_word_file_is_read_first_and_its_errors_name_file_and_line(tmp_path):
    path = corpus_file(tmp_path, "uci")
    with pytest.raises(InputError, match="nope.txt: cannot read"):
        read_corpus(path, stop_words=str(tmp_path / "nope.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"the\nb\xffd\n")
    with pytest.raises(InputError) as info:
        read_corpus(path, stop_words=str(bad))
    assert info.value.path == str(bad) and info.value.line == 2 and "expected UTF-8 text" in str(info.value)


def test_bag_of_words_stop_words_match_the_vocabulary_as_spelled(tmp_path):
    (tmp_path / "c.ldac").write_text("2 0:1 1:2\n1 2:3\n")
    (tmp_path / "c.vocab").write_text("The\nthe\nNew York\n")
    stop = tmp_path / "stop.txt"
    stop.write_text("the\nNew York\n")
    corpus = read_corpus(str(tmp_path / "c.ldac"), stop_words=str(stop))
    assert corpus.vocab == ["The"]


# --- an ldacli file given as a corpus -----------------------------------------------------------

@pytest.mark.parametrize("name, kind", [("cgs.model.npz", "model"), ("vem.ckpt.npz", "checkpoint")])
def test_a_model_or_checkpoint_given_as_a_corpus_says_so_without_loading_it(monkeypatch, name, kind):
    import ldacli.corpora.formats.matrix
    import ldacli.files.npz

    def tripwire(*args, **kwargs):
        raise AssertionError("the arrays were loaded")

    monkeypatch.setattr(ldacli.files.npz, "read_npz", tripwire)
    monkeypatch.setattr(ldacli.corpora.formats.matrix, "read_npz", tripwire)
    path = os.path.join(HERE, "data", "format1", name)
    for fmt in ("auto", "npz"):
        with pytest.raises(InputError) as info:
            read_corpus(path, format=fmt)
        assert str(info.value) == f"{path}: expected a corpus, found an ldacli {kind}"


def test_an_inference_or_a_shard_index_given_as_a_corpus_says_so(tmp_path, planted):
    model = ldacli.train(planted.corpus, 5, iterations=2, seed=1)
    result, _ = ldacli.infer(model, planted.corpus, iterations=3, burn_in=1, seed=1)
    result.save(str(tmp_path / "theta.npz"))
    with pytest.raises(InputError, match="expected a corpus, found an ldacli inference$"):
        read_corpus(str(tmp_path / "theta.npz"))
    write_shards(planted.corpus, tmp_path / "f", 2)
    with pytest.raises(InputError, match=r"expected a corpus, found an ldacli shard index: read its folder, .*f$"):
        read_corpus(str(tmp_path / "f" / "index.npz"))


# --- property: the rules only remove -------------------------------------------------------------

@st.composite
def corpora_and_rules(draw):
    n_words = draw(st.integers(1, 8))
    vocab = [f"w{i}" for i in range(n_words)]
    n_docs = draw(st.integers(1, 6))
    cells = draw(st.lists(st.integers(0, 5), min_size=n_docs * n_words, max_size=n_docs * n_words))
    counts = sp.csr_array(np.array(cells, dtype=np.int32).reshape(n_docs, n_words))
    counts.eliminate_zeros()
    counts.sort_indices()
    rules = dict(remove_top=draw(st.integers(0, 3)), min_df=draw(st.integers(1, 4)),
                 max_df=draw(st.sampled_from([1.0, 0.9, 0.5, 0.2])), max_vocab=draw(st.none() | st.integers(1, 8)))
    stop = draw(st.sets(st.sampled_from(vocab + ["other"])))
    return counts, vocab, rules, stop, draw(st.booleans())


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=corpora_and_rules())
def test_the_rules_leave_no_word_of_a_removed_kind_and_counts_only_shrink(tmp_path_factory, case):
    counts, vocab, rules, stop, fixed = case
    folder = tmp_path_factory.mktemp("stop")
    (folder / "stop.txt").write_text("".join(w + "\n" for w in sorted(stop)))
    after, words, notes = VocabRules(str(folder / "stop.txt"), **rules).apply(counts, vocab, text=False, fixed=fixed)
    before = counts.toarray()
    now = after.toarray()
    assert after.dtype == np.int32 and after.has_sorted_indices and (after.data > 0).all()
    assert (words == vocab) if fixed else (words == [w for w in vocab if w in words])  # order kept
    assert now.shape == (before.shape[0], len(words))
    cols = [vocab.index(w) for w in words]
    assert ((now == before[:, cols]) | (now == 0)).all()  # counts only shrink (a word's go whole)
    present = [w for j, w in enumerate(words) if now[:, j].any()]
    assert not set(present) & stop
    df = (before > 0).sum(axis=0)
    assert all(df[vocab.index(w)] >= rules["min_df"] for w in present)
    assert all(df[vocab.index(w)] <= rules["max_df"] * before.shape[0] for w in present)
    if rules["max_vocab"] is not None:
        assert len(present) <= rules["max_vocab"]
    if rules["remove_top"]:  # none of the most frequent words that were not stop words is left
        total = before.sum(axis=0)
        candidates = [j for j in range(len(vocab)) if vocab[j] not in stop]
        top = sorted(candidates, key=lambda j: (-total[j], j))[:rules["remove_top"]]
        assert not {vocab[j] for j in top} & set(present)
    removed = int(before.sum() - now.sum())
    noted = sum(int(n.rsplit(", ", 1)[1].split()[0].replace(",", "")) for n in notes)
    assert removed == noted


# --- stop lists that add up ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_stop_lists_given_together_remove_their_union(tmp_path, fmt):
    mine = tmp_path / "mine.txt"
    mine.write_text("zeta\nomega\n")
    both = read_corpus(corpus_file(tmp_path, fmt), stop_words=["english", str(mine)])
    expect(both, fmt, ["alpha", "beta"], [f"stop words (english + {mine}): removed 4 words, 15 tokens"])
    assert read_corpus(corpus_file(tmp_path, fmt), stop_words=(str(mine), "english")).vocab == both.vocab
    assert both.reading["stop_words"] == ["english", str(mine)] and both.reading["stop_list_size"] == \
        len(VocabRules("english").words | {"zeta", "omega"})
    alone = read_corpus(corpus_file(tmp_path, fmt), stop_words=str(mine))  # a file alone replaces the English list
    assert set(alone.vocab) == {"the", "alpha", "and", "beta"}


def test_stop_lists_for_text_match_whatever_the_case(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("The cat and THE Dog\n")
    mine = tmp_path / "mine.txt"
    mine.write_text("DOG\n")
    corpus = read_corpus(str(path), stop_words=["english", str(mine)], lowercase=False)
    assert corpus.vocab == ["cat"] and {"The", "THE", "and", "Dog", "dog", "the"} <= set(corpus.removed_words)


@pytest.mark.parametrize("lists, message", [
    (["none", "english"], "stop_words 'none' must be given alone (it means no list), found 'none', 'english'"),
    (["auto", "x.txt"], "stop_words 'auto' must be given alone (name english to extend the English list)"),
    ([], "stop_words must be 'auto', 'english', 'none' or the path of a file, or a list of them, found []"),
    (["english", 3], "stop_words must be 'auto', 'english', 'none' or the path of a file, or a list of them, found 3"),
])
def test_stop_lists_that_cannot_go_together_are_refused(tmp_path, lists, message):
    with pytest.raises(SettingError) as info:
        read_corpus(corpus_file(tmp_path, "ldac"), stop_words=lists)
    assert info.value.name == "stop_words" and str(info.value).startswith(message)


def test_the_command_line_takes_stop_words_several_times_and_a_resumed_run_keeps_them(tmp_path):
    from click.testing import CliRunner

    from ldacli.cli import main

    text = tmp_path / "docs.txt"
    text.write_text("the subject lines organization apple banana\nsubject apple cherry and lines\n" * 4)
    mine = tmp_path / "mail.txt"
    mine.write_text("# mail headers\nsubject\nlines\norganization\n")
    run = CliRunner().invoke
    ckpt, out = tmp_path / "c.npz", tmp_path / "m.npz"
    result = run(main, ["train", str(text), "-k", "2", "--iterations", "4", "--seed", "1", "--stop-words", "english",
                        "--stop-words", str(mine), "--checkpoint", str(ckpt), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"stop words (english + {mine}): removed 5 words, 28 tokens" in result.stderr
    model = ldacli.load_model(str(out))
    assert model.vocab == ["apple", "banana", "cherry"]
    assert model.params["stop_words"] == ["english", str(mine)]
    assert model.params["stop_list_size"] == len(VocabRules("english").words) + 3
    result = run(main, ["train", str(text), "--resume", str(ckpt), "--iterations", "6", "-o", str(out)])
    assert result.exit_code == 0, result.output
    result = run(main, ["train", str(text), "--resume", str(ckpt), "--stop-words", "english", "-o", str(out)])
    assert result.exit_code == 2 and "--stop-words=" in result.output and "cannot change on resume" in result.output
    result = run(main, ["train", str(text), "--stop-words", "none", "--stop-words", str(mine), "-o", str(out)])
    assert result.exit_code == 2 and "--stop-words 'none' must be given alone" in result.output


def test_a_command_repeated_for_the_user_repeats_each_stop_list():
    """select-k's "continue with the same command" gives every list its own --stop-words."""
    from ldacli.cli import main
    from ldacli.cli.exits import command_line

    ctx = main.commands["select-k"].make_context("ldacli select-k", [
        "c.txt", "-k", "5,10", "-o", "out", "--stop-words", "english", "--stop-words", "my list.txt"])
    assert command_line(ctx).endswith("--stop-words english --stop-words 'my list.txt'")
