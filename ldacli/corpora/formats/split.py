"""Writing a corpus file as a shard folder (``ldacli convert --shards N``), a UCI file a shard
at a time, so that a corpus of more tokens than one process can count (2^31 - 1, the samplers'
32-bit counts), or hold, gets in: the shard folder carries 64-bit totals, and each shard is an
ordinary corpus.

A UCI file whose docIDs never fall (as UCI's own files, and ``convert --to uci``'s, are) is read
in passes, none of which holds more than one shard's entries:

1. every ``docID wordID count`` line, checked as :func:`~ldacli.corpora.formats.read.read_corpus` checks
   it, for 64-bit sums: each document's tokens, each word's tokens and documents, the lines;
   the vocabulary rules decide from the words' sums, and words that never occur are left out;
2. only when the rules removed words: the documents' tokens again, without them;
3. each shard's lines (consecutive, since the docIDs rise) gathered, checked for a repeated
   (docID, wordID) pair, and written as its file as soon as the shard is complete.

The folder is the bytes :func:`~ldacli.corpora.formats.write.write_shards` writes for the corpus read whole
(its fingerprint too: :class:`~ldacli.corpora.corpus.FingerprintBuilder` spools the shards' arrays beside the
folder and hashes them at the end). Any other file (another format, docIDs out of order, standard
input) is read whole as before, and then cannot hold more than 2^31 - 1 tokens.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from ldacli.corpora.corpus import MAX_TOKENS, FingerprintBuilder
from ldacli.corpora.counts import build_csr, doc_pointers
from ldacli.errors import InputError, SettingError
from ldacli.files.fileio import Source
from ldacli.corpora.formats.read import (bag_of_words_vocab, closing_notes, detected_note, no_words_left, open_source,
                                 read_corpus, refuse_tokenizing)
from ldacli.corpora.formats.shards import write_shard_files
from ldacli.corpora.formats.uci import FIRST_TRIPLE_LINE, check_distinct_pairs, check_nnz, uci_triples
from ldacli.corpora.formats.write import write_shards
from ldacli.partition import WIDE_SHARD_TOKENS, shard_bounds
from ldacli.corpora.tokenizer import TOKENIZING
from ldacli.corpora.vocab_rules import VocabRules


def split_corpus(path: str, folder: str, n_shards: int, *, format: str = "auto", vocab: str | None = None,
                 **reading) -> tuple[int, list[str]]:
    """Write the corpus at ``path`` (read with ``format``, ``vocab`` and the vocabulary rules and
    tokenizer settings ``reading`` of :func:`~ldacli.corpora.formats.read.read_corpus`) as a shard folder of
    ``n_shards`` files at ``folder``: a UCI file whose docIDs rise a shard at a time (see the module),
    any other read whole. Returns the number of shards written and the notes on reading it."""
    tokenizing = {k: reading.pop(k, None) for k in [s.name for s in TOKENIZING]}
    source, fmt = (None, None) if path == "-" else open_source(path, format, None)
    if fmt == "uci":
        refuse_tokenizing(tokenizing, fmt)
        written = _split_uci(path, source, folder, n_shards, vocab, VocabRules(**reading),
                             [detected_note(fmt)] if format == "auto" else [])
        if written is not None:
            return written
    corpus = read_corpus(path, format=format, vocab=vocab, **tokenizing, **reading)
    return write_shards(corpus, folder, n_shards), corpus.notes


def _split_uci(path: str, source: Source, folder: str, n_shards: int, vocab: str | None, rules: VocabRules,
               notes: list[str]) -> tuple[int, list[str]] | None:
    """The passes of the module's docstring; None when the docIDs fall somewhere and the file holds
    no more than MAX_TOKENS tokens (it is then read whole)."""
    name = source.name
    words, vocab_path = bag_of_words_vocab(source, vocab, None, notes)
    (n_docs, n_words, nnz), blocks = uci_triples(source, words, vocab_path)
    lengths = np.zeros(n_docs, dtype=np.int64)
    totals = np.zeros(n_words, dtype=np.int64)
    df = np.zeros(n_words, dtype=np.int64)
    lines, last, falls = 0, 0, None  # falls: the line of the first docID below the one before it
    for first, triples in blocks:
        doc, word, count = triples[:, 0] - 1, triples[:, 1] - 1, triples[:, 2]
        if falls is None:
            down = np.flatnonzero(np.diff(doc, prepend=last) < 0)
            if down.size:
                falls = (first + int(down[0]), int(doc[down[0]]) + 1, int((doc[down[0] - 1] if down[0] else last)) + 1)
        last = int(doc[-1])
        lengths += _sums(doc, count, n_docs)
        totals += _sums(word, count, n_words)
        df += np.bincount(word, minlength=n_words)
        lines += doc.size
    check_nnz(name, nnz, lines)
    n_tokens = int(lengths.sum())
    if falls is not None:
        if n_tokens <= MAX_TOKENS:
            return None
        line, doc_id, before = falls
        raise InputError(name, line, f"expected docIDs in increasing order, to split a corpus of {n_tokens} tokens "
                                     f"(more than {MAX_TOKENS}) a shard at a time, found docID {doc_id} after {before}")
    if n_docs == 0:
        raise InputError(name, None, "empty corpus: expected at least one document")
    keep, removed = rules.decide(df, totals, n_docs, words, text=False, fixed=False)
    notes += removed
    if not keep.any():
        raise no_words_left(name, text=False)
    if not keep.all():  # the documents' tokens without the words removed
        lengths[:] = 0
        for _, triples in uci_triples(source, words, vocab_path)[1]:
            kept = keep[triples[:, 1] - 1]
            lengths += _sums(triples[kept, 0] - 1, triples[kept, 2], n_docs)
    used = keep & (totals > 0)
    column = np.cumsum(used) - 1  # the new id of each word used
    notes += closing_notes(int(np.count_nonzero(lengths == 0)), int(np.count_nonzero(keep & ~used)))
    bounds = shard_bounds(doc_pointers(lengths), n_shards)
    _check_shard_sizes(name, lengths, bounds)
    vocab_kept = [words[w] for w in np.flatnonzero(used).tolist()]
    spool = FingerprintBuilder(os.path.dirname(os.path.abspath(folder)))
    try:
        shards = _shards(name, uci_triples(source, words, vocab_path)[1], bounds, n_words, used, column, spool)
        doc_ids = [str(d) for d in range(1, n_docs + 1)]
        written = write_shard_files(folder, shards, bounds, lengths, totals[used], vocab_kept, doc_ids,
                                    fingerprint=lambda: spool.hexdigest(vocab_kept), source=path, format="uci")
    finally:
        spool.close()
    return written, notes


def _sums(index: np.ndarray, count: np.ndarray, size: int) -> np.ndarray:
    """(size,) int64: ``count`` summed by ``index`` (exact: a block's sums stay far below 2^53)."""
    return np.bincount(index, weights=count, minlength=size).astype(np.int64)


def _check_shard_sizes(name: str, lengths: np.ndarray, bounds: np.ndarray) -> None:
    """Refuse shards that could not be trained on: more than MAX_TOKENS tokens in one (its file could
    not be read alone), or more than WIDE_SHARD_TOKENS in a corpus of more than MAX_TOKENS."""
    ptr = doc_pointers(lengths)
    n_tokens = int(ptr[-1])
    limit = WIDE_SHARD_TOKENS if n_tokens > MAX_TOKENS else MAX_TOKENS
    largest = int(np.diff(ptr[bounds]).max())
    if largest <= limit:
        return
    if int(lengths.max()) > limit:
        d = int(np.argmax(lengths))
        raise InputError(name, None, f"expected documents of at most {limit} tokens in a corpus of {n_tokens}, found "
                                     f"{int(lengths[d])} in docID {d + 1}: no shard can hold it")
    need = bounds.size - 1
    while int(np.diff(ptr[shard_bounds(ptr, need)]).max()) > limit:
        need = max(need + 1, int(need * 1.05))
    raise SettingError("shards", f"shards must be {need} or more for {name}: its {n_tokens} tokens in "
                                 f"{bounds.size - 1} shards put {largest} in one, and a shard of a corpus of this size "
                                 f"holds at most {limit}")


def _shards(name: str, blocks: Iterator[tuple[int, np.ndarray]], bounds: np.ndarray, n_words: int, used: np.ndarray,
            column: np.ndarray, spool: FingerprintBuilder) -> Iterator[sp.csr_array]:
    """Each shard's counts over the words ``used`` (renumbered by ``column``), from the triples of
    a file whose docIDs rise, as soon as its last line is read; each checked for a repeated pair and
    added to ``spool``."""
    s, parts, first_line, line = 0, [], FIRST_TRIPLE_LINE, FIRST_TRIPLE_LINE
    for _, triples in blocks:
        doc = triples[:, 0] - 1
        while True:
            end = int(np.searchsorted(doc, bounds[s + 1], side="left"))
            parts.append(triples[:end])
            if end == doc.size:
                break
            yield _shard(name, parts, bounds, s, first_line, n_words, used, column, spool)
            first_line = line + end
            s, parts, triples, doc, line = s + 1, [], triples[end:], doc[end:], line + end
        line += doc.size
    while s < bounds.size - 1:  # the last shard, and any whose documents had no lines
        yield _shard(name, parts, bounds, s, first_line, n_words, used, column, spool)
        s, parts, first_line = s + 1, [], line


def _shard(name: str, parts: list[np.ndarray], bounds: np.ndarray, s: int, first_line: int, n_words: int,
           used: np.ndarray, column: np.ndarray, spool: FingerprintBuilder) -> sp.csr_array:
    triples = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int64)
    docs, cols = triples[:, 0] - 1, triples[:, 1] - 1
    check_distinct_pairs(name, docs, cols, n_words, first_line)
    kept = used[cols]
    counts = build_csr(docs[kept] - bounds[s], column[cols[kept]], triples[kept, 2],
                       (int(bounds[s + 1] - bounds[s]), int(column[-1]) + 1))
    spool.add(counts)
    return counts
