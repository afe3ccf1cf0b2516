"""Writing a corpus: as one file of a bag-of-words format plus its vocabulary file, and its
tokenizer file when it was made from text (:func:`write_corpus`), or as a shard folder for a
cluster (:func:`write_shards`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import IO

import scipy.sparse as sp

from ldacli import checks
from ldacli.corpora.corpus import Corpus
from ldacli.errors import LdacliError, SettingError
from ldacli.files.fileio import atomic_write
from ldacli.corpora.formats.ldac import ldac_lines
from ldacli.corpora.formats.matrix import write_mtx, write_scipy_npz
from ldacli.corpora.formats.shards import write_shard_folder
from ldacli.corpora.formats.tokenizer_file import (MAX_BYTES, tokenizer_file_bytes, tokenizer_file_path,
                                                   tokenizer_record)
from ldacli.corpora.formats.uci import uci_lines
from ldacli.corpora.formats.vocab import check_writable_vocab, vocab_text

WRITE_FORMATS = ("ldac", "uci", "mtx", "npz")


def check_corpus(corpus) -> None:
    """What is written must be a :class:`~ldacli.corpora.corpus.Corpus` (read or made first)."""
    if not isinstance(corpus, Corpus):
        found = repr(corpus) if isinstance(corpus, (str, int, float, type(None))) else f"a {type(corpus).__name__}"
        raise SettingError("corpus", f"corpus must be a Corpus (ldacli.read_corpus, Corpus.from_texts, "
                                     f"Corpus.from_matrix), found {found}")


def write_corpus(corpus: Corpus, path: str | os.PathLike[str], vocab_path: str | os.PathLike[str],
                 format: str = "ldac") -> None:
    """Write ``corpus`` as ``format`` (``"ldac"``, 0-based ids; ``"uci"``; ``"mtx"``, Matrix
    Market; ``"npz"``, ``scipy.sparse.save_npz``) plus its vocabulary, and, for a corpus made
    from text (or read with a tokenizer file), how the text was read: the tokenizer file beside
    ``path`` (:mod:`ldacli.corpora.formats.tokenizer_file`, ``docs.ldac`` -> ``docs.tokenizer.json``),
    which reading it back finds, so that a model trained on it tokenizes text as this corpus was.

    The files are written atomically (see :func:`ldacli.files.fileio.atomic_write`): after an error
    none is left half-written. Document ids are not stored by these formats; reading the
    files back gives ids ``"1"`` to ``"D"``.
    """
    checks.choice("format", format, WRITE_FORMATS)
    check_corpus(corpus)
    check_writable_vocab(corpus.vocab)
    counts = sp.csr_array(corpus.counts, copy=True)
    counts.eliminate_zeros()
    counts.sum_duplicates()
    counts.sort_indices()
    if counts.nnz and counts.data.min() < 0:
        raise LdacliError("counts: expected non-negative counts, found a negative one")
    recorded = _tokenizer_bytes(corpus)
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(atomic_write(path, what="corpus"))
        voc = stack.enter_context(atomic_write(vocab_path, what="vocabulary"))
        if recorded is not None:
            stack.enter_context(atomic_write(tokenizer_file_path(path), what="tokenizer file")).write(recorded)
        if format == "mtx":
            write_mtx(out, counts)
        elif format == "npz":
            write_scipy_npz(out, counts)
        else:
            _write_lines(out, ldac_lines(counts) if format == "ldac" else uci_lines(counts))
        voc.write(vocab_text(corpus.vocab))


def _tokenizer_bytes(corpus: Corpus) -> bytes | None:
    """The bytes of ``corpus``'s tokenizer file, None when it was not made from text."""
    record = tokenizer_record(corpus)
    recorded = None if record is None else tokenizer_file_bytes(record)
    if recorded is not None and len(recorded) > MAX_BYTES:
        raise LdacliError(f"tokenizer file: expected at most {MAX_BYTES:,} bytes (what reading one takes), found "
                          f"{len(recorded):,} for {len(record['removed_words']):,} removed words")
    return recorded


def _write_lines(out: IO[bytes], lines: Iterator[str]) -> None:
    """Write ``lines`` to ``out`` as UTF-8, about a megabyte at a time."""
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size > 1 << 20:
            out.write("".join(buffer).encode("utf-8"))
            buffer, size = [], 0
    out.write("".join(buffer).encode("utf-8"))


def write_shards(corpus: Corpus, folder: str | os.PathLike[str], n_shards: int) -> int:
    """Write ``corpus`` as a shard folder of ``n_shards`` files (see :mod:`ldacli.corpora.formats.shards`),
    atomically; words that never occur are left out first (a model has no row for them).
    Returns the number of shards written (fewer when there are fewer documents)."""
    checks.count("n_shards", n_shards, 1)
    check_corpus(corpus)
    check_writable_vocab(corpus.vocab)
    trimmed, _ = corpus.without_unused_words()
    counts = sp.csr_array(trimmed.counts, copy=True)
    counts.sort_indices()
    return write_shard_folder(os.fspath(folder), counts, trimmed.vocab, trimmed.doc_ids, n_shards,
                              fingerprint=trimmed.fingerprint(), source=corpus.source, format=corpus.format,
                              tokenizer=_tokenizer_bytes(trimmed))
