"""Corpus readers and writers: formats, detection, vocabularies, errors, round trips."""

from __future__ import annotations

import gzip
import io
import os
import re
import stat

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldacli.corpora.corpus import MAX_TOKENS, Corpus
from ldacli.errors import InputError, LdacliError
from ldacli.files.fileio import Source, atomic_write
from ldacli.corpora.formats.detect import FORMAT_NAMES, detect
from ldacli.corpora.formats.read import read_corpus
from ldacli.corpora.formats.vocab import read_vocab, vocab_candidates
from ldacli.corpora.formats.write import write_corpus
from ldacli.corpora.tokenizer import Tokenizer
from ldacli.corpora.vocab_rules import load_stop_words

# ---------------------------------------------------------------------------------------------
# helpers


def put(folder, name: str, content: bytes | str) -> str:
    """Write ``content`` to ``folder/name`` and return the path as a string."""
    path = folder / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def dense(corpus: Corpus) -> list[list[int]]:
    return corpus.counts.toarray().tolist()


def check_invariants(corpus: Corpus) -> None:
    c = corpus.counts
    assert isinstance(c, sp.csr_array)
    assert c.dtype == np.int32
    assert c.has_sorted_indices
    assert c.shape == (len(corpus.doc_ids), len(corpus.vocab))
    assert (c.data > 0).all()
    assert len(set(corpus.vocab)) == len(corpus.vocab)


def expect_error(path, line, *fragments, **kwargs) -> InputError:
    """Read ``path`` expecting an InputError at ``path:line`` whose message holds ``fragments``."""
    with pytest.raises(InputError) as info:
        read_corpus(path, **kwargs)
    err = info.value
    assert err.line == line, str(err)
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(err).startswith(prefix), str(err)
    for fragment in fragments:
        assert fragment in str(err), str(err)
    return err


VOCAB5 = "alpha\nbeta\ngamma\ndelta\nepsilon\n"
UCI = "3\n5\n4\n1 1 2\n1 3 1\n3 2 5\n3 5 1\n"
LDAC = "2 0:2 2:1\n0\n2 1:5 4:1\n"
EXPECTED = [[2, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 5, 0, 0, 1]]


# ---------------------------------------------------------------------------------------------
# UCI


def test_uci_reads_counts_vocab_ids_and_keeps_empty_documents(tmp_path):
    path = put(tmp_path, "docword.toy.txt", UCI)
    put(tmp_path, "vocab.toy.txt", VOCAB5)
    corpus = read_corpus(path)
    check_invariants(corpus)
    assert corpus.format == "uci"
    assert corpus.source == path
    assert dense(corpus) == EXPECTED
    assert corpus.vocab == ["alpha", "beta", "gamma", "delta", "epsilon"]
    assert corpus.doc_ids == ["1", "2", "3"]
    assert corpus.n_tokens == 9
    assert "1 empty document kept (theta = prior)" in corpus.notes
    assert any("vocab.toy.txt" in n and "found beside" in n for n in corpus.notes)


def test_uci_gzip_is_detected_by_magic_bytes_not_name(tmp_path):
    plain = put(tmp_path, "docword.toy.txt.gz", gzip.compress(UCI.encode()))
    put(tmp_path, "vocab.toy.txt", VOCAB5)
    assert dense(read_corpus(plain)) == EXPECTED
    disguised = put(tmp_path, "whatever.bin", gzip.compress(UCI.encode()))
    vocab = put(tmp_path, "words", gzip.compress(VOCAB5.encode()))
    assert dense(read_corpus(disguised, vocab=vocab)) == EXPECTED


def test_uci_accepts_crlf_tabs_bom_and_trailing_blank_lines(tmp_path):
    content = "\ufeff3\r\n5\r\n4\r\n1\t1 2\r\n1 3 1\r\n3 2   5\r\n3 5 1\r\n\r\n\n"
    path = put(tmp_path, "docword.toy.txt", content)
    put(tmp_path, "vocab.toy.txt", VOCAB5.replace("\n", "\r\n"))
    corpus = read_corpus(path)
    assert dense(corpus) == EXPECTED
    assert corpus.vocab[0] == "alpha"


def test_uci_unsorted_triples_give_sorted_csr(tmp_path):
    path = put(tmp_path, "docword.toy.txt", "3\n5\n4\n3 5 1\n1 3 1\n3 2 5\n1 1 2\n")
    put(tmp_path, "vocab.toy.txt", VOCAB5)
    corpus = read_corpus(path)
    check_invariants(corpus)
    assert dense(corpus) == EXPECTED


def test_uci_large_file_crosses_blocks_and_reports_late_lines(tmp_path):
    n_docs, n_words = 400, 500
    docs, words = np.divmod(np.arange(n_docs * n_words), n_words)
    lines = [f"{d + 1} {w + 1} {1 + (d + w) % 7}\n" for d, w in zip(docs.tolist(), words.tolist())]
    vocab = put(tmp_path, "v.txt", "".join(f"w{i}\n" for i in range(n_words)))
    head = f"{n_docs}\n{n_words}\n{len(lines)}\n"
    path = put(tmp_path, "big.txt", head + "".join(lines))
    corpus = read_corpus(path, vocab=vocab)
    assert corpus.counts.nnz == len(lines)
    assert corpus.counts[399, 499] == 1 + (399 + 499) % 7
    bad = list(lines)
    bad[150_000] = "1 1 x\n"
    path = put(tmp_path, "bad.txt", head + "".join(bad))
    expect_error(path, 150_004, "count", "'x'", vocab=vocab)
    dup = list(lines)
    dup[180_000] = lines[5]
    path = put(tmp_path, "dup.txt", head + "".join(dup))
    expect_error(path, 180_004, "again", "first on line 9", vocab=vocab)


UCI_ERRORS = [
    # (content, line, fragments)
    ("x\n5\n0\n", 1, ["number of documents D", "'x'"]),
    ("3\n-5\n0\n", 2, ["vocabulary size W", "'-5'"]),
    ("3\n5\n2.0\n", 3, ["NNZ", "'2.0'"]),
    ("3\n5\n", 3, ["NNZ", "end of the file"]),
    ("3\n\n5\n1\n", 2, ["W", "empty line"]),
    ("3\n5\n1\n1 2\n", 4, ["3 fields", "found 2"]),
    ("3\n5\n1\n1 2 3 4\n", 4, ["3 fields", "found 4"]),
    ("3\n5\n1\n0 2 3\n", 4, ["docID", "1..3", "'0'"]),
    ("3\n5\n1\n4 2 3\n", 4, ["docID", "1..3", "'4'"]),
    ("3\n5\n1\n1 6 3\n", 4, ["wordID", "1..5", "'6'"]),
    ("3\n5\n1\n1 0 3\n", 4, ["wordID", "'0'"]),
    ("3\n5\n2\n1 1 1\n1 2 0\n", 5, ["count", "positive integer", "'0'"]),
    ("3\n5\n1\n1 2 -1\n", 4, ["count", "'-1'"]),
    ("3\n5\n1\n1 2 2.5\n", 4, ["count", "'2.5'"]),
    ("3\n5\n1\n1 2 abc\n", 4, ["count", "'abc'"]),
    ("3\n5\n1\n1 2 99999999999\n", 4, ["count", "at most 2147483647"]),
    ("3\n5\n2\n1 2 1\n\n2 2 1\n", 5, ["empty line"]),
    ("3\n5\n3\n1 2 1\n2 2 1\n1 2 4\n", 6, ["again", "docID 1 wordID 2", "first on line 4"]),
    ("3\n5\n3\n1 2 1\n", 3, ["expected NNZ = 3", "found 1"]),
    ("3\n5\n1\n1 2 1\n2 2 1\n", 3, ["expected NNZ = 1", "found 2"]),
    ("0\n5\n0\n", None, ["empty corpus"]),
]


@pytest.mark.parametrize(("content", "line", "fragments"), UCI_ERRORS)
def test_uci_errors_name_file_and_line(tmp_path, content, line, fragments):
    vocab = put(tmp_path, "vocab.txt", VOCAB5)
    path = put(tmp_path, "docword.bad.txt", content)
    expect_error(path, line, *fragments, format="uci", vocab=vocab)


def test_uci_vocabulary_size_mismatch_names_the_vocab_file(tmp_path):
    vocab = put(tmp_path, "vocab.txt", "alpha\nbeta\n")
    path = put(tmp_path, "docword.toy.txt", UCI)
    with pytest.raises(InputError) as info:
        read_corpus(path, vocab=vocab)
    assert info.value.path == vocab
    assert "expected 5 words" in str(info.value) and "found 2" in str(info.value)
    assert path in str(info.value)


def test_uci_gzip_errors_name_the_file(tmp_path):
    put(tmp_path, "vocab.txt", VOCAB5)
    data = gzip.compress(UCI.encode() * 50)
    truncated = put(tmp_path, "docword.trunc.txt.gz", data[: len(data) // 2])
    with pytest.raises(InputError) as info:
        read_corpus(truncated, vocab=str(tmp_path / "vocab.txt"))
    assert info.value.path == truncated
    garbage = put(tmp_path, "docword.junk.txt.gz", b"\x1f\x8b" + b"not really gzip" * 3)
    with pytest.raises(InputError) as info:
        read_corpus(garbage, vocab=str(tmp_path / "vocab.txt"))
    assert info.value.path == garbage and "gzip" in str(info.value)


# ---------------------------------------------------------------------------------------------
# LDA-C


def test_ldac_reads_with_sibling_tokens_file(tmp_path):
    path = put(tmp_path, "toy.ldac", LDAC)
    put(tmp_path, "toy.tokens", VOCAB5)
    corpus = read_corpus(path)
    check_invariants(corpus)
    assert corpus.format == "ldac"
    assert dense(corpus) == EXPECTED
    assert corpus.doc_ids == ["1", "2", "3"]
    assert "1 empty document kept (theta = prior)" in corpus.notes


@pytest.mark.parametrize(("corpus_name", "vocab_name"), [
    ("toy.ldac", "toy.vocab"), ("toy.dat", "toy.tokens"), ("toy.dat", "vocab.txt"),
    ("toy.ldac.gz", "toy.tokens"), ("docword.toy.txt", "vocab.toy.txt"),
    ("docword.toy.txt.gz", "vocab.toy.txt"),
])
def test_sibling_vocabulary_conventions(tmp_path, corpus_name, vocab_name):
    content = LDAC.encode()
    if corpus_name.startswith("docword"):
        content = UCI.encode()
    if corpus_name.endswith(".gz"):
        content = gzip.compress(content)
    path = put(tmp_path, corpus_name, content)
    put(tmp_path, vocab_name, VOCAB5)
    assert dense(read_corpus(path)) == EXPECTED


def test_sibling_vocabulary_order_prefers_tokens(tmp_path):
    path = str(tmp_path / "x.ldac")
    assert [os.path.basename(p) for p in vocab_candidates(path)] == ["x.tokens", "x.vocab", "vocab.txt"]
    uci = str(tmp_path / "docword.kos.txt.gz")
    assert os.path.basename(vocab_candidates(uci)[0]) == "vocab.kos.txt"


def test_missing_vocabulary_is_an_input_error(tmp_path):
    path = put(tmp_path, "toy.ldac", LDAC)
    expect_error(path, None, "needs a vocabulary file", "--vocab FILE")
    with pytest.raises(InputError, match="needs a vocabulary file"):
        read_corpus("-", stdin=io.BytesIO(LDAC.encode()))


def test_ldac_unsorted_ids_and_extra_whitespace(tmp_path):
    vocab = put(tmp_path, "v.txt", VOCAB5)
    path = put(tmp_path, "toy.ldac", "2  2:1\t0:2 \r\n0\n2 4:1 1:5\n\n")
    corpus = read_corpus(path, vocab=vocab)
    check_invariants(corpus)
    assert dense(corpus) == EXPECTED


LDAC_ERRORS = [
    ("2 0:2 2:1\n3 1:1 2:1\n", 2, ["N = 3", "found 2"]),
    ("1 0:2 2:1\n", 1, ["N = 1", "found 2"]),
    ("1 5:1\n", 1, ["word id in 0..4", "'5'"]),
    ("1 0:0\n", 1, ["positive integer count", "'0'"]),
    ("1 0:-1\n", 1, ["positive integer count", "'-1'"]),
    ("1 0:1.5\n", 1, ["count", "'1.5'"]),
    ("0\n1 0-1\n", 2, ["'id:count' pair", "'0-1'"]),
    ("2 3:1 3:2\n", 1, ["once per line", "id 3"]),
    ("1 0:1\n\n1 1:1\n", 2, ["empty line", "0 for an empty document"]),
    ("1 0:99999999999\n", 1, ["at most 2147483647"]),
    ("x 0:1\n", 1, ["number of pairs N", "'x'"]),
]


@pytest.mark.parametrize(("content", "line", "fragments"), LDAC_ERRORS)
def test_ldac_errors_name_file_and_line(tmp_path, content, line, fragments):
    vocab = put(tmp_path, "v.txt", VOCAB5)
    path = put(tmp_path, "bad.ldac", content)
    expect_error(path, line, *fragments, format="ldac", vocab=vocab)


# ---------------------------------------------------------------------------------------------
# Vocabulary files


@pytest.mark.parametrize(("content", "line", "fragment"), [
    ("alpha\n\nbeta\n", 2, "empty line"),
    ("alpha\nbeta\nalpha\n", 3, "first on line 1"),
    (b"alpha\nbe\xfata\n", 2, "UTF-8"),
    ("", None, "empty vocabulary"),
])
def test_vocabulary_file_errors(tmp_path, content, line, fragment):
    vocab = put(tmp_path, "vocab.txt", content)
    with pytest.raises(InputError) as info:
        read_vocab(vocab)
    assert info.value.path == vocab and info.value.line == line
    assert fragment in str(info.value)


def test_vocabulary_trailing_whitespace_and_blank_end_lines(tmp_path):
    vocab = put(tmp_path, "vocab.txt", "alpha  \r\nnew york\t\n\n\n")
    assert read_vocab(vocab) == ["alpha", "new york"]


# ---------------------------------------------------------------------------------------------
# Plain text and the tokenizer


def test_shipped_stop_words_look_right():
    words = load_stop_words("english")
    assert 250 <= len(words) <= 400
    assert {"the", "and", "of", "which", "would", "themselves"} <= words
    assert all(w == w.lower() and w.strip() == w and w for w in words)
    assert load_stop_words(None) == frozenset() == load_stop_words("none")


def test_text_file_one_document_per_line(tmp_path):
    path = put(tmp_path, "docs.txt", "The cat sat on the mat.\n\nCats and dogs; dog DOG!\n")
    corpus = read_corpus(path)
    check_invariants(corpus)
    assert corpus.format == "text"
    assert corpus.doc_ids == ["1", "2", "3"]
    assert corpus.vocab == ["cat", "cats", "dog", "dogs", "mat", "sat"]
    assert dense(corpus) == [[1, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0], [0, 1, 2, 1, 0, 0]]
    assert "1 empty document kept (theta = prior)" in corpus.notes


def test_text_stop_words_none_and_custom_file(tmp_path):
    path = put(tmp_path, "docs.txt", "the cat and the hat\n")
    assert read_corpus(path, stop_words=None).vocab == ["and", "cat", "hat", "the"]
    stop = put(tmp_path, "stop.txt", "# my list\nCAT\n\nhat\n")
    assert read_corpus(path, stop_words=stop).vocab == ["and", "the"]


def test_text_directory_sorted_files(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    put(folder, "b.txt", "zebra zebra\nlion")
    put(folder, "a.txt", "lion tiger")
    put(folder, "c.txt.gz", "ignored, not .txt")
    put(folder, ".hidden.txt", "ignored too")
    put(folder, "notes.md", "ignored too")
    put(folder, "e.txt", gzip.compress(b"tiger"))
    (folder / "sub.txt").mkdir()
    corpus = read_corpus(str(folder))
    check_invariants(corpus)
    assert corpus.format == "textdir"
    assert corpus.doc_ids == ["a.txt", "b.txt", "e.txt"]
    assert corpus.vocab == ["lion", "tiger", "zebra"]
    assert dense(corpus) == [[1, 1, 0], [1, 0, 2], [0, 1, 0]]


def test_text_directory_errors(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    expect_error(str(folder), None, "empty corpus", "no .txt files")
    bad = put(folder, "x.txt", b"fine line\nbad \xff byte\n")
    with pytest.raises(InputError) as info:
        read_corpus(str(folder))
    assert info.value.path == bad and info.value.line == 2
    with pytest.raises(InputError, match="directory"):
        read_corpus(str(folder), format="uci")


def test_text_invalid_utf8_line_number(tmp_path):
    path = put(tmp_path, "docs.txt", b"good words here\nmore good words\nbad \xc3\x28 here\n")
    expect_error(path, 3, "neither UCI, LDA-C nor UTF-8 text", "0xc3")
    expect_error(path, 3, "expected UTF-8 text", "column 5", format="text")


def test_text_fixed_vocabulary_list_and_file(tmp_path):
    path = put(tmp_path, "docs.txt", "the zebra and the lion\nlion lion tiger\n")
    corpus = read_corpus(path, fixed_vocab=["the", "lion", "zebra"])
    assert corpus.vocab == ["the", "lion", "zebra"]
    assert dense(corpus) == [[2, 1, 1], [0, 2, 0]]
    assert any("2 tokens outside the fixed vocabulary dropped" in n for n in corpus.notes)
    vocab = put(tmp_path, "v.txt", "zebra\nthe\n")
    corpus = read_corpus(path, vocab=vocab)
    assert corpus.vocab == ["zebra", "the"]
    assert dense(corpus) == [[1, 2], [0, 0]] and corpus.dropped_tokens == 5
    # the rules still apply: their words' tokens go, the columns stay
    corpus = read_corpus(path, vocab=vocab, min_df=2)
    assert corpus.vocab == ["zebra", "the"] and dense(corpus) == [[0, 0], [0, 0]]
    assert "min_df=2: removed 2 words, 3 tokens" in corpus.notes
    with pytest.raises(LdacliError):
        read_corpus(path, vocab=vocab, fixed_vocab=["x"])


def test_pruning_min_df_max_df_max_vocab(tmp_path):
    lines = ["apple banana cherry", "apple banana", "apple date", "apple banana elder elder elder"]
    path = put(tmp_path, "docs.txt", "\n".join(lines) + "\n")
    assert read_corpus(path).vocab == ["apple", "banana", "cherry", "date", "elder"]
    assert read_corpus(path, min_df=2).vocab == ["apple", "banana"]
    assert read_corpus(path, max_df=0.9).vocab == ["banana", "cherry", "date", "elder"]
    assert read_corpus(path, max_df=0.75).vocab == ["banana", "cherry", "date", "elder"]
    assert read_corpus(path, max_df=0.5).vocab == ["cherry", "date", "elder"]
    # totals: apple 4, banana 3, elder 3, cherry 1, date 1 -- ties go to the smaller word
    assert read_corpus(path, max_vocab=2).vocab == ["apple", "banana"]
    assert read_corpus(path, max_vocab=4).vocab == ["apple", "banana", "cherry", "elder"]
    corpus = read_corpus(path, min_df=2, max_vocab=1)
    assert corpus.vocab == ["apple"] and dense(corpus) == [[1], [1], [1], [1]]
    assert corpus.notes[-2:] == ["min_df=2: removed 3 words, 5 tokens", "max_vocab=1: removed 1 word, 3 tokens"]


@pytest.mark.parametrize("kwargs", [
    {"min_df": 0}, {"max_df": 0.0}, {"max_df": 1.5}, {"max_vocab": 0}, {"format": "csv"},
])
def test_bad_parameters(tmp_path, kwargs):
    path = put(tmp_path, "docs.txt", "apple banana\n")
    with pytest.raises(LdacliError):
        read_corpus(path, **kwargs)


def test_pruning_applies_to_uci_in_file_order(tmp_path):
    path = put(tmp_path, "docword.toy.txt", UCI)
    put(tmp_path, "vocab.toy.txt", VOCAB5)
    corpus = read_corpus(path, max_vocab=2)
    assert corpus.vocab == ["alpha", "beta"]
    assert dense(corpus) == [[2, 0], [0, 0], [0, 5]]


def test_fixed_vocab_for_uci_aligns_or_supplies_the_ids(tmp_path):
    path = put(tmp_path, "docword.toy.txt", UCI)
    put(tmp_path, "vocab.toy.txt", VOCAB5)
    corpus = read_corpus(path, fixed_vocab=["beta", "alpha", "zeta"])
    assert corpus.vocab == ["beta", "alpha", "zeta"]
    assert dense(corpus) == [[0, 2, 0], [0, 0, 0], [5, 0, 0]]
    lonely = put(tmp_path, "lonely.ldac", LDAC)
    corpus = read_corpus(lonely, fixed_vocab=VOCAB5.split())
    assert dense(corpus) == EXPECTED


# ---------------------------------------------------------------------------------------------
# stdin, detection, files


def test_stdin_text_uci_and_gzip(tmp_path):
    corpus = read_corpus("-", stdin=io.BytesIO(b"hello world\nhello planet\n"))
    assert corpus.vocab == ["hello", "planet", "world"] and corpus.source == "-"
    vocab = put(tmp_path, "v.txt", VOCAB5)
    assert dense(read_corpus("-", vocab=vocab, stdin=io.BytesIO(UCI.encode()))) == EXPECTED
    gz = io.BytesIO(gzip.compress(LDAC.encode()))
    assert dense(read_corpus("-", vocab=vocab, stdin=gz)) == EXPECTED
    with pytest.raises(InputError) as info:
        read_corpus("-", vocab=vocab, format="uci", stdin=io.BytesIO(b"3\n5\nx\n"))
    assert str(info.value).startswith("<stdin>:3: ")


@pytest.mark.parametrize(("content", "expected"), [
    (UCI, "uci"),
    (LDAC, "ldac"),
    ("0\n0\n0\n2 0:1 1:1\n", "ldac"),
    ("3\n5\n0\n", "uci"),
    ("hello world\n", "text"),
    ("\n\n12\n7\n3\n1 1 1\n", "uci"),
    ("2 0:1 1:1\ntext after\n", "ldac"),
    ("", "text"),
])
def test_the_format_is_detected_by_content(tmp_path, content, expected):
    path = put(tmp_path, "c", content)
    assert sniffed(path) == expected
    assert sniffed(put(tmp_path, "c.gz", gzip.compress(content.encode()))) == expected


def sniffed(path) -> str:
    """The format ``read_corpus(path)`` reads a file in (``format="auto"``)."""
    return detect(Source.open(str(path)))


def test_missing_empty_and_unreadable_files(tmp_path):
    missing = str(tmp_path / "nope.txt")
    expect_error(missing, None, "cannot read", "No such file")
    empty = put(tmp_path, "empty.txt", "")
    expect_error(empty, None, "empty corpus: expected at least one document")
    expect_error(put(tmp_path, "empty.gz", gzip.compress(b"")), None, "empty corpus")
    no_words = put(tmp_path, "short.txt", "a b 12 of\n")
    expect_error(no_words, None, "at least one word")


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The shared benchmark corpora: $LDACLI_CORPORA, else beside the repository (never copied into it).
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(REPO, "..", "shared", "corpora"))


def test_real_corpora_if_present():
    folder = CORPORA
    kos = os.path.join(folder, "docword.kos.txt.gz")
    if not os.path.exists(kos):
        pytest.skip(f"the benchmark corpora are not in {folder} (set LDACLI_CORPORA to their folder)")
    corpus = read_corpus(kos)
    assert corpus.counts.shape == (3430, 6906) and corpus.n_tokens == 467_714
    reuters = read_corpus(os.path.join(folder, "reuters.ldac"))
    assert reuters.counts.shape == (395, 4258) and reuters.n_tokens == 84_010


# ---------------------------------------------------------------------------------------------
# writing


@pytest.mark.parametrize("fmt", ["ldac", "uci"])
def test_write_then_read_round_trip(tmp_path, fmt):
    path = put(tmp_path, "docword.toy.txt", UCI)
    put(tmp_path, "vocab.toy.txt", VOCAB5)
    corpus = read_corpus(path)
    out, vocab_out = str(tmp_path / f"out.{fmt}"), str(tmp_path / "out.vocab")
    write_corpus(corpus, out, vocab_out, format=fmt)
    again = read_corpus(out)
    assert again.format == fmt
    assert again.fingerprint() == corpus.fingerprint()
    assert again.doc_ids == corpus.doc_ids
    assert sorted(os.listdir(tmp_path)) == sorted(["docword.toy.txt", "vocab.toy.txt", f"out.{fmt}", "out.vocab"])


def test_write_rejects_unwritable_vocabulary(tmp_path):
    corpus = Corpus(sp.csr_array(np.ones((1, 2), dtype=np.int32)), ["ok", "bad\nword"], ["1"])
    with pytest.raises(LdacliError):
        write_corpus(corpus, str(tmp_path / "x.ldac"), str(tmp_path / "x.vocab"))
    assert os.listdir(tmp_path) == []


def test_atomic_write_replaces_or_leaves_untouched(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(str(target)) as f:
            f.write(b"half")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.bin"]
    with atomic_write(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["out.bin"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~umask
    with atomic_write(tmp_path / "t.txt", mode="w") as f:
        f.write("héllo\n")
    assert (tmp_path / "t.txt").read_bytes() == "héllo\n".encode()


# ---------------------------------------------------------------------------------------------
# property tests

FORMATS_TO_TRY = ["auto", "uci", "ldac", "text"]
PIECES = [b"0", b"1", b"2", b"3", b"5", b"9", b"10", b" ", b"\t", b"\n", b"\r\n", b":", b"-", b".",
          b"x", b"word", b"\xff", b"\xc3", b"\x00", b"\x1f\x8b", "é".encode()]
chunky_bytes = st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join)
any_bytes = st.one_of(st.binary(max_size=200), chunky_bytes)

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


def read_or_input_error(path: str, fmt: str, vocab: str | None) -> None:
    """Reading must succeed with a well-formed corpus or raise InputError -- nothing else."""
    try:
        corpus = read_corpus(path, format=fmt, vocab=vocab if fmt != "text" else None)
    except InputError as err:
        assert str(err).startswith(err.path)
        return
    check_invariants(corpus)


@PROPERTY_SETTINGS
@given(data=any_bytes, compress=st.booleans())
def test_random_bytes_never_escape_as_other_errors(tmp_path, data, compress):
    vocab = put(tmp_path, "vocab.txt", VOCAB5)
    path = put(tmp_path, "corpus.dat", gzip.compress(data) if compress else data)
    for fmt in FORMATS_TO_TRY:
        read_or_input_error(path, fmt, vocab)
    try:
        read_corpus("-", vocab=vocab, stdin=io.BytesIO(data))
    except InputError:
        pass


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 5)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.one_of(st.binary(min_size=1, max_size=5),
                                                                   st.sampled_from(PIECES))),
    st.tuples(st.just("dupline"), st.integers(0, 10**6), st.just(0)),
)


def mutate(data: bytes, ops) -> bytes:
    buf = bytearray(data)
    for kind, pos, arg in ops:
        if kind == "dupline":
            lines = bytes(buf).split(b"\n")
            i = pos % len(lines)
            lines.insert(i, lines[i])
            buf = bytearray(b"\n".join(lines))
            continue
        pos = pos % (len(buf) + 1)
        if kind == "flip" and pos < len(buf):
            buf[pos] = arg
        elif kind == "delete":
            del buf[pos:pos + arg]
        elif kind == "insert":
            buf[pos:pos] = arg
    return bytes(buf)


@PROPERTY_SETTINGS
@given(base=st.sampled_from([UCI, LDAC]), ops=st.lists(mutation, min_size=1, max_size=4),
       compress=st.booleans())
def test_mutated_valid_files_never_escape_as_other_errors(tmp_path, base, ops, compress):
    vocab = put(tmp_path, "vocab.txt", VOCAB5)
    data = mutate(base.encode(), ops)
    path = put(tmp_path, "corpus.dat", gzip.compress(data) if compress else data)
    for fmt in FORMATS_TO_TRY:
        read_or_input_error(path, fmt, vocab)


def _writable(word: str) -> bool:
    return bool(word) and word == word.rstrip() and "\n" not in word and "\r" not in word \
        and not word.startswith("\ufeff")


@st.composite
def small_corpora(draw) -> Corpus:
    n_docs = draw(st.integers(1, 6))
    vocab = draw(st.lists(st.text(min_size=1, max_size=6).filter(_writable), min_size=1, max_size=6,
                          unique=True))
    cells = draw(st.lists(st.integers(0, 4) | st.integers(5, 2**31 - 1), min_size=n_docs * len(vocab),
                          max_size=n_docs * len(vocab)).filter(lambda c: sum(c) <= MAX_TOKENS))
    matrix = np.array(cells, dtype=np.int64).reshape(n_docs, len(vocab))
    counts = sp.csr_array(matrix.astype(np.int32))
    counts.eliminate_zeros()
    counts.sort_indices()
    return Corpus(counts, vocab, [str(i) for i in range(1, n_docs + 1)])


@pytest.mark.slow
@PROPERTY_SETTINGS
@given(corpus=small_corpora(), fmt=st.sampled_from(["ldac", "uci"]))
def test_write_read_round_trip_property(tmp_path, corpus, fmt):
    out, vocab = str(tmp_path / "c.out"), str(tmp_path / "c.words")
    write_corpus(corpus, out, vocab, format=fmt)
    again = read_corpus(out, format=fmt, vocab=vocab)
    assert again.vocab == corpus.vocab
    assert again.counts.shape == corpus.counts.shape
    assert (again.counts != corpus.counts).nnz == 0
    assert again.fingerprint() == corpus.fingerprint()


@pytest.mark.parametrize("text, name", [
    ("2 0:2147483647 1:2147483647\n1 2:2147483647\n", "big.ldac"),
    ("2\n3\n3\n1 1 2147483647\n1 2 2147483647\n2 3 2147483647\n", "docword.big.txt"),
])
def test_a_token_total_beyond_the_samplers_limit_is_refused_before_allocating(tmp_path, text, name):
    path = tmp_path / name
    path.write_text(text)
    (tmp_path / ("big.vocab" if name.endswith(".ldac") else "vocab.big.txt")).write_text("a\nb\nc\n")
    with pytest.raises(InputError, match=f"expected at most {MAX_TOKENS} tokens in all .* found 6442450941"):
        read_corpus(str(path))


@pytest.mark.parametrize("text, fmt, fragment", [
    # a malformed first line of LDA-C stays LDA-C, reported in its terms, not text
    ("2 0:-2 1:1\n1 0:3\n", "ldac", "expected a positive integer count, found '-2'"),
    ("2 0:x 1:1\n", "ldac", "found 'x'"),
    # a UCI file missing a header line stays UCI
    ("3\n5\n1 1 2\n2 3 1\n", "uci", "expected the number of docID wordID count lines NNZ"),
    # LDA-C starting with empty documents, and UCI, as before
    ("0\n0\n0\n2 0:1 1:1\n", "ldac", None),
    ("2\n5\n2\n1 1 2\n2 3 1\n", "uci", None),
])
def test_content_sniffing_never_turns_a_malformed_file_into_text(tmp_path, text, fmt, fragment):
    path = tmp_path / "c.dat"
    path.write_text(text)
    (tmp_path / "vocab.txt").write_text("a\nb\nc\nd\ne\n")
    assert sniffed(path) == fmt
    if fragment is None:
        corpus = read_corpus(str(path), vocab=str(tmp_path / "vocab.txt"))
        assert corpus.format == fmt and corpus.notes[0].startswith(f"read as {FORMAT_NAMES[fmt]} (detected")
    else:
        with pytest.raises(InputError, match=re.escape(fragment)):
            read_corpus(str(path), vocab=str(tmp_path / "vocab.txt"))


def test_unused_words_are_noted_and_dropped_for_training(tmp_path, planted):
    path = tmp_path / "c.ldac"
    path.write_text("2 0:1 2:3\n1 2:1\n")
    (tmp_path / "c.vocab").write_text("a\nb\nc\nd\n")
    corpus = read_corpus(str(path))
    assert "2 words of the vocabulary never occur in it" in corpus.notes
    trimmed, dropped = corpus.without_unused_words()
    assert dropped == 2 and trimmed.vocab == ["a", "c"] and trimmed.counts.toarray().tolist() == [[1, 3], [0, 1]]
    assert corpus.without_unused_words()[0].without_unused_words()[1] == 0


# --- Matrix Market and scipy .npz ---------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["mtx", "npz"])
def test_matrix_formats_round_trip_through_convert_and_are_detected(tmp_path, planted, fmt):
    out = tmp_path / f"c.{fmt}"
    write_corpus(planted.corpus, str(out), str(tmp_path / "c.vocab"), format=fmt)
    assert sniffed(out) == fmt
    again = read_corpus(str(out))
    assert again.format == fmt and again.fingerprint() == planted.corpus.fingerprint()
    assert again.notes[0].startswith(f"read as {FORMAT_NAMES[fmt]}")


def test_a_gensim_matrix_market_file_is_read(tmp_path):
    """What gensim's MmCorpus writes: real values, 1-based, a padded size line."""
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                    "3 4 4                                             \n"
                                    "1 1 1.0\n1 3 2.0\n2 2 1.0\n3 4 5.0\n")
    (tmp_path / "g.vocab").write_text("a\nb\nc\nd\n")
    corpus = read_corpus(str(tmp_path / "g.mtx"))
    assert corpus.counts.toarray().tolist() == [[1, 0, 2, 0], [0, 1, 0, 0], [0, 0, 0, 5]]
    assert corpus.doc_ids == ["1", "2", "3"]


def test_a_scikit_learn_count_matrix_is_read(tmp_path):
    matrix = sp.csr_matrix(np.array([[0, 2, 1], [3, 0, 0]], dtype=np.int64))
    sp.save_npz(str(tmp_path / "x.npz"), matrix)
    (tmp_path / "x.vocab").write_text("a\nb\nc\n")
    corpus = read_corpus(str(tmp_path / "x.npz"))
    assert corpus.counts.toarray().tolist() == [[0, 2, 1], [3, 0, 0]] and corpus.format == "npz"


@pytest.mark.parametrize("text, line, fragment", [
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "expected '%%MatrixMarket matrix coordinate"),
    ("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 1\n", 1, "general"),
    ("%%MatrixMarket matrix coordinate integer general\n% c\n2 x 1\n1 1 1\n", 3, "expected the size line"),
    ("%%MatrixMarket matrix coordinate integer general\n2 4 1\n1 1 1\n", None, "expected 4 words (the columns of"),
    ("%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 1 1\n", None, "malformed"),
    ("%%MatrixMarket matrix coordinate integer general\n2 3 1\n1 1 -4\n", None, "found -4 for document 1, word 1"),
    ("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 0.5\n", None, "found 0.5"),
    ("%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 1 1\n1 1 2\n", None, "document 1, word 1 twice"),
    # scipy's reader takes "1x" for 1 and crashes the process on a NUL byte: checked first
    ("%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 1 1\n2 2 1x\n", 4, "found the byte b'x'"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 1\x00\n2 2\n", 3, "found the byte b'\\x00'"),
    ("%%MatrixMarket matrix coordinate integer general\n2 3 2\n1 1 1 1\n2 2 1\n", 3, "found 4"),
])
def test_malformed_matrix_market_files_are_reported(tmp_path, text, line, fragment):
    (tmp_path / "m.mtx").write_text(text)
    with pytest.raises(InputError, match=re.escape(fragment)) as e:
        read_corpus(str(tmp_path / "m.mtx"), vocab=_vocab(tmp_path, 3))
    assert e.value.line == line


def test_a_matrix_market_file_declaring_billions_of_documents_is_refused_before_allocating(tmp_path):
    (tmp_path / "m.mtx").write_text("%%MatrixMarket matrix coordinate integer general\n2000000000 3 1\n1 1 1\n")
    with pytest.raises(LdacliError, match="the 2000000000 documents it declares needs about"):
        read_corpus(str(tmp_path / "m.mtx"), vocab=_vocab(tmp_path, 3))


def _vocab(folder, n):
    path = folder / "v.txt"
    path.write_text("".join(f"w{i}\n" for i in range(n)))
    return str(path)


def test_malformed_scipy_npz_files_are_reported(tmp_path, planted):
    good = sp.csr_matrix(np.array([[0, 2, 1], [3, 0, 0]]))
    sp.save_npz(str(tmp_path / "g.npz"), good)
    with np.load(tmp_path / "g.npz") as f:
        arrays = dict(f)
    cases = {
        "indices": ({**arrays, "indices": np.array([0, 7, 0], dtype=np.int32)}, "do not fit together"),
        "format": ({**arrays, "format": np.array(b"dia")}, "format csr, csc or coo"),
        "negative": ({**arrays, "data": np.array([-1, 1, 3])}, "found -1"),
        "shape": ({**arrays, "shape": np.array([2, 5])}, "expected 5 words (the columns of"),
    }
    for name, (content, fragment) in cases.items():
        np.savez(tmp_path / f"{name}.npz", **content)
        with pytest.raises(InputError, match=re.escape(fragment)):
            read_corpus(str(tmp_path / f"{name}.npz"), vocab=_vocab(tmp_path, 3))


@pytest.mark.parametrize("form", ["csr", "csr int64 float", "csr unsorted", "csr explicit zero", "csc", "coo"])
def test_every_scipy_npz_form_reads_to_the_same_corpus(tmp_path, monkeypatch, form):
    # a sorted CSR is kept as read, checked a few rows at a time (here 3 entries, so that rows
    # straddle the chunks); the other forms go through the general reader: the same corpus
    import ldacli.corpora.counts as counts
    monkeypatch.setattr(counts, "COUNT_CHUNK_TOKENS", 3)
    rng = np.random.default_rng(5)
    cells = (rng.random((40, 9)) < 0.3) * rng.integers(1, 6, size=(40, 9))
    cells[7] = 0  # an empty document
    matrix = sp.csr_matrix(cells.astype(np.int32))
    if form == "csr int64 float":
        matrix = sp.csr_matrix((matrix.data.astype(np.float64), matrix.indices.astype(np.int64),
                                matrix.indptr.astype(np.int64)), shape=matrix.shape)
    elif form == "csr unsorted":  # the first two entries of a row swapped
        row = next(r for r in range(40) if matrix.indptr[r + 1] - matrix.indptr[r] >= 2)
        a = matrix.indptr[row]
        matrix.indices[[a, a + 1]], matrix.data[[a, a + 1]] = matrix.indices[[a + 1, a]], matrix.data[[a + 1, a]]
        matrix.has_sorted_indices = False
    elif form == "csr explicit zero":  # a stored 0 at the end of the last row
        matrix = sp.csr_matrix((np.append(matrix.data, 0), np.append(matrix.indices, 8),
                                np.append(matrix.indptr[:-1], [matrix.indptr[-1] + 1])), shape=matrix.shape)
    elif form in ("csc", "coo"):
        matrix = matrix.asformat(form)
    sp.save_npz(str(tmp_path / "x.npz"), matrix, compressed=True)
    corpus = read_corpus(str(tmp_path / "x.npz"), vocab=_vocab(tmp_path, 9))
    assert dense(corpus) == cells.tolist()
    assert corpus.counts.data.dtype == np.int32 and corpus.counts.indices.dtype == np.int32
    assert corpus.fingerprint() == Corpus.from_matrix(cells, corpus.vocab).fingerprint()


def test_a_corpus_holding_its_tokens_answers_as_the_matrix_did(monkeypatch, planted):
    # the sampler keeps a corpus's tokens, which the corpus then holds instead of its counts:
    # its sizes, frequencies, fingerprint and counts are the same, and the matrix made again is
    # held instead of the tokens (a chunk of 7 tokens at a time, so that documents straddle them)
    import ldacli.corpora.counts as counts
    monkeypatch.setattr(counts, "COUNT_CHUNK_TOKENS", 7)
    cells = planted.corpus.counts.toarray()
    cells[3] = 0
    corpus = Corpus.from_matrix(cells, planted.corpus.vocab)
    before = (corpus.shape, corpus.n_tokens, corpus.doc_lengths.tolist(), corpus.word_frequencies().tolist(),
              corpus.fingerprint(), corpus.tokens()[0].tolist(), corpus.tokens()[1].tolist())
    words, doc_ptr = corpus.as_tokens()
    assert corpus.as_tokens()[0] is words and corpus.tokens()[0] is words  # held, not made again
    assert not words.flags.writeable and not doc_ptr.flags.writeable  # a sampler shares them
    after = (corpus.shape, corpus.n_tokens, corpus.doc_lengths.tolist(), corpus.word_frequencies().tolist(),
             corpus.fingerprint(), words.tolist(), doc_ptr.tolist())
    assert after == before
    again = corpus.counts  # made again from the tokens, held instead of them
    assert again.toarray().tolist() == cells.tolist() and corpus.tokens()[0] is not words
    assert again.has_sorted_indices and corpus.fingerprint() == before[4]


# ---------------------------------------------------------------------------------------------
# shard folders (ldacli convert --shards N): the layout cluster workers read shard by shard


def test_convert_shards_writes_files_each_readable_alone_that_together_are_the_corpus(tmp_path, small_ldac):
    from click.testing import CliRunner

    from ldacli.cli import main
    from ldacli.corpora.formats.shards import INDEX, VOCAB, open_shard_folder

    whole = read_corpus(small_ldac)
    folder = tmp_path / "shards"
    r = CliRunner().invoke(main, ["convert", small_ldac, "--shards", "3", "-o", str(folder)])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(folder)) == [INDEX, "shard-00000.npz", "shard-00001.npz", "shard-00002.npz", VOCAB]
    index = open_shard_folder(folder)
    assert (index.n_docs, index.n_words, index.n_tokens, index.n_shards) == (whole.n_docs, whole.n_words,
                                                                            whole.n_tokens, 3)
    # each shard file is an ordinary corpus (its vocabulary beside it), holding its documents
    for s in range(3):
        part = read_corpus(str(folder / f"shard-{s:05d}.npz"))
        lo, hi = index.bounds[s], index.bounds[s + 1]
        assert part.vocab == whole.vocab
        assert (part.counts != whole.counts[lo:hi]).nnz == 0
    # read whole: the same corpus (the same fingerprint, so resume and --skip-unchanged agree)
    again = read_corpus(str(folder))
    assert again.vocab == whole.vocab and again.doc_ids == whole.doc_ids
    assert again.fingerprint() == whole.fingerprint() == index.fingerprint()
    assert again.n_shards == 3


def test_a_shard_folder_trains_on_threads_as_the_whole_corpus_with_as_many_shards(tmp_path, planted):
    import ldacli

    ldacli.write_shards(planted.corpus, tmp_path / "f", 3)
    folder = ldacli.read_corpus(str(tmp_path / "f"))
    a = ldacli.train(folder, 5, iterations=4, seed=1, threads=2)  # shards: the folder's files
    b = ldacli.train(planted.corpus, 5, iterations=4, seed=1, shards=3, threads=1)
    assert a.params["shards"] == 3
    np.testing.assert_array_equal(a.phi, b.phi)
    np.testing.assert_array_equal(a.theta, b.theta)


def test_a_changed_or_missing_shard_file_is_named(tmp_path, planted):
    import ldacli

    ldacli.write_shards(planted.corpus, tmp_path / "f", 3)
    first = (tmp_path / "f" / "shard-00000.npz").read_bytes()
    (tmp_path / "f" / "shard-00002.npz").write_bytes(first)
    with pytest.raises(InputError, match=r"shard-00002\.npz: expected the shard file index\.npz describes.*changed"):
        read_corpus(str(tmp_path / "f"))
    os.unlink(tmp_path / "f" / "shard-00001.npz")
    with pytest.raises(InputError, match=r"shard-00001\.npz: cannot read shard 1"):
        read_corpus(str(tmp_path / "f"))
    os.unlink(tmp_path / "f" / "index.npz")  # now a folder of .npz, not of .txt documents
    with pytest.raises(InputError):
        ldacli.open_shard_folder(str(tmp_path / "f"))


def test_convert_shards_replaces_only_a_shard_folder_and_refuses_other_options(tmp_path, small_ldac):
    from click.testing import CliRunner

    from ldacli.cli import main

    def convert(*args):
        return CliRunner().invoke(main, ["convert", small_ldac, *map(str, args)])

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    r = convert("--shards", 2, "-o", mine)
    assert r.exit_code == 2 and "is not a shard folder: refusing to replace it" in r.output
    assert (mine / "notes.txt").read_text() == "keep me"
    assert convert("--shards", 4, "-o", tmp_path / "f").exit_code == 0
    assert convert("--shards", 2, "-o", tmp_path / "f").exit_code == 0  # replaced whole, atomically
    assert sorted(os.listdir(tmp_path / "f")) == ["index.npz", "shard-00000.npz", "shard-00001.npz", "vocab.txt"]
    assert [n for n in os.listdir(tmp_path) if n.endswith(".tmp")] == []
    r = convert("--shards", 2, "--to", "uci", "-o", tmp_path / "g")
    assert r.exit_code == 2 and "--to" in r.output


def test_a_shard_folder_read_from_its_index_trains_from_disk_and_only_as_cut(tmp_path, planted):
    import ldacli

    ldacli.write_shards(planted.corpus, tmp_path / "f", 3)
    index = ldacli.open_shard_folder(str(tmp_path / "f"))
    from_disk = ldacli.train(index, 15, iterations=2, seed=1)
    whole = ldacli.train(str(tmp_path / "f"), 15, iterations=2, seed=1)
    assert np.array_equal(from_disk.phi, whole.phi) and np.array_equal(from_disk.theta, whole.theta)
    with pytest.raises(ldacli.SettingError, match="shards must be the 3 files"):
        ldacli.train(index, 5, iterations=2, shards=4)
    with pytest.raises(ldacli.SettingError, match="holdout needs the documents in memory"):
        ldacli.train(index, 5, iterations=2, holdout=0.1, patience=2)
