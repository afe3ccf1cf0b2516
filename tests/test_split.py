"""``ldacli convert --shards``: a UCI file split into a shard folder a shard at a time, so that a corpus
of more tokens than the samplers count in 32 bits (the issue's 3,000,000,005) gets in."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import ldacli
from ldacli.corpora.corpus import MAX_TOKENS, Corpus
from ldacli.corpora.formats.shards import INDEX, open_shard_folder
from ldacli.partition import WIDE_SHARD_TOKENS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPORA = os.environ.get("LDACLI_CORPORA", os.path.join(REPO, "..", "shared", "corpora"))

# 6 documents of 4 words, 3,000,000,005 tokens in 7 lines: three documents of a billion tokens
BIG = [(1, 1, 1_000_000_000), (2, 2, 1_000_000_000), (3, 3, 500_000_000), (3, 4, 500_000_000), (4, 1, 1),
       (5, 2, 2), (6, 3, 2)]


def ldacli_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ldacli", *map(str, args)], cwd=cwd, capture_output=True, text=True)


def write_uci(folder, name, n_docs, vocab, triples):
    with open(folder / f"docword.{name}.txt", "w") as f:
        f.write(f"{n_docs}\n{len(vocab)}\n{len(triples)}\n")
        f.writelines(f"{d} {w} {c}\n" for d, w, c in triples)
    (folder / f"vocab.{name}.txt").write_text("".join(w + "\n" for w in vocab))
    return folder / f"docword.{name}.txt"


def test_a_uci_file_of_three_billion_tokens_becomes_a_shard_folder(tmp_path):
    path = write_uci(tmp_path, "big", 6, ["alpha", "beta", "gamma", "delta"], BIG)
    r = ldacli_cli("convert", path, "--shards", 4, "-o", "f", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "6 documents, 4 words, 3,000,000,005 tokens in 4 shard files" in r.stderr
    folder = open_shard_folder(tmp_path / "f")
    assert folder.n_tokens == 3_000_000_005 > MAX_TOKENS
    np.testing.assert_array_equal(folder.doc_lengths, [10**9, 10**9, 10**9, 1, 2, 2])
    np.testing.assert_array_equal(folder.word_freq, [10**9 + 1, 10**9 + 2, 5 * 10**8 + 2, 5 * 10**8])
    # every shard is within what a cluster samples in 32 bits, and is an ordinary corpus read alone
    ranges = folder.shard_ranges()
    assert max(r.hi - r.lo for r in ranges) <= WIDE_SHARD_TOKENS and ranges[-1].hi == 3_000_000_005
    rows = []
    for s in range(folder.n_shards):
        part = ldacli.read_corpus(str(tmp_path / "f" / f"shard-{s:05d}.npz"))
        assert part.vocab == ["alpha", "beta", "gamma", "delta"]
        rows.append(part.counts.toarray())
    expected = np.zeros((6, 4), dtype=np.int64)
    for d, w, c in BIG:
        expected[d - 1, w - 1] = c
    np.testing.assert_array_equal(np.vstack(rows), expected)
    # its fingerprint is the whole corpus's, as a folder written from memory records it
    whole = Corpus(folder.all_counts(), folder.vocab, folder.doc_ids.tolist())
    assert folder.fingerprint() == whole.fingerprint()


def test_shards_too_large_to_train_are_refused_with_the_number_that_fits(tmp_path):
    path = write_uci(tmp_path, "big", 6, ["alpha", "beta", "gamma", "delta"], BIG)
    r = ldacli_cli("convert", path, "--shards", 2, "-o", "f", cwd=tmp_path)
    assert r.returncode == 2
    assert "--shards must be 4 or more" in r.stderr and "Traceback" not in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["docword.big.txt", "vocab.big.txt"]  # nothing half-written
    assert ldacli_cli("convert", path, "--shards", 4, "-o", "f", cwd=tmp_path).returncode == 0  # as it said
    # a document larger than any shard may be
    path = write_uci(tmp_path, "one", 2, ["a", "b"], [(1, 1, 2_000_000_000), (1, 2, 2_000_000_000), (2, 1, 1)])
    r = ldacli_cli("convert", path, "--shards", 8, "-o", "g", cwd=tmp_path)
    assert r.returncode == 1 and "found 4000000000 in docID 1: no shard can hold it" in r.stderr


def test_docids_out_of_order_are_read_whole_or_named_when_too_many_tokens(tmp_path):
    small = write_uci(tmp_path, "small", 3, ["a", "b"], [(2, 1, 3), (1, 2, 4), (3, 1, 1)])
    assert ldacli_cli("convert", small, "--shards", 2, "-o", "s", cwd=tmp_path).returncode == 0
    assert open_shard_folder(tmp_path / "s").n_tokens == 8  # read whole, as before
    big = write_uci(tmp_path, "big", 6, ["alpha", "beta", "gamma", "delta"], BIG[:4] + [BIG[5], BIG[4], BIG[6]])
    r = ldacli_cli("convert", big, "--shards", 4, "-o", "f", cwd=tmp_path)
    assert r.returncode == 1
    assert (f"docword.big.txt:9: expected docIDs in increasing order, to split a corpus of 3000000005 tokens "
            f"(more than {MAX_TOKENS}) a shard at a time, found docID 4 after 5") in r.stderr


def test_a_repeated_pair_is_named_by_its_line_in_any_shard(tmp_path):
    triples = BIG[:5] + [(5, 2, 2), (5, 3, 9), (5, 2, 1), (6, 3, 2)]
    path = write_uci(tmp_path, "rep", 6, ["alpha", "beta", "gamma", "delta"], triples)
    r = ldacli_cli("convert", path, "--shards", 4, "-o", "f", cwd=tmp_path)
    assert r.returncode == 1
    assert ("docword.rep.txt:11: expected each (docID, wordID) pair once, found docID 5 wordID 2 again "
            "(first on line 9)") in r.stderr
    assert not (tmp_path / "f").exists()


def _same_folders(a, b):
    fa, fb = open_shard_folder(a), open_shard_folder(b)
    assert fa.sha256 == fb.sha256 and fa.files == fb.files  # the same shard files, byte for byte
    assert fa.fingerprint() == fb.fingerprint() and fa.vocab == fb.vocab
    np.testing.assert_array_equal(fa.doc_ids, fb.doc_ids)
    np.testing.assert_array_equal(fa.bounds, fb.bounds)
    np.testing.assert_array_equal(fa.doc_lengths, fb.doc_lengths)
    np.testing.assert_array_equal(fa.word_freq, fb.word_freq)


@pytest.mark.parametrize("rules", [(), ("--min-df", 3, "--remove-top", 5, "--max-df", 0.5)])
def test_a_uci_file_split_a_shard_at_a_time_is_the_folder_written_from_memory(tmp_path, planted, rules,
                                                                              monkeypatch):
    """The same folder as the corpus read whole gives (write_shards), with and without the
    vocabulary rules, which decide from the whole file's sums; the same notes."""
    corpus = planted.corpus
    counts = corpus.counts.tolil()
    counts[5, :] = 0  # an empty document, and a word that never occurs
    counts[:, 7] = 0
    corpus = Corpus(counts.tocsr(), corpus.vocab, corpus.doc_ids)
    ldacli.write_corpus(corpus, tmp_path / "docword.p.txt", tmp_path / "vocab.p.txt", format="uci")
    r = ldacli_cli("convert", "docword.p.txt", "--shards", 3, "-o", "streamed", *rules, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    kwargs = dict(zip((a.lstrip("-").replace("-", "_") for a in rules[::2]), rules[1::2]))
    monkeypatch.chdir(tmp_path)
    whole = ldacli.read_corpus("docword.p.txt", **kwargs)
    ldacli.write_shards(whole, tmp_path / "memory", 3)
    _same_folders(tmp_path / "streamed", tmp_path / "memory")
    notes = [line.split(": ", 1)[1] for line in r.stderr.splitlines()[:-1]]
    assert notes == whole.notes and any("empty document" in n for n in notes)


def test_kos_split_a_shard_at_a_time_is_the_folder_written_from_memory(tmp_path):
    kos = os.path.join(CORPORA, "docword.kos.txt.gz")
    if not os.path.exists(kos):
        pytest.skip(f"the benchmark corpora are not in {CORPORA} (set LDACLI_CORPORA to their folder)")
    r = ldacli_cli("convert", kos, "--shards", 5, "--min-df", 2, "-o", tmp_path / "streamed", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ldacli.write_shards(ldacli.read_corpus(kos, min_df=2), tmp_path / "memory", 5)
    _same_folders(tmp_path / "streamed", tmp_path / "memory")
    assert os.listdir(tmp_path / "streamed").count(INDEX) == 1
