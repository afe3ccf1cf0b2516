"""A corpus cut into shard files in one folder, so that each cluster worker reads only its own.

``ldacli convert CORPUS --shards N -o FOLDER`` (:func:`write_shard_folder`) writes::

    FOLDER/
      index.npz          what the training client reads (below)
      vocab.txt          the vocabulary, one word per line (word id = line number - 1)
      shard-00000.npz    the documents bounds[0]:bounds[1] as a scipy sparse CSR matrix
      shard-00001.npz    (documents x words, int32 counts, scipy.sparse.save_npz), ...
      tokenizer.json     only for a corpus made from text: how it was read (ldacli.corpora.formats.tokenizer_file)

Each shard file, with ``vocab.txt`` beside it, is an ordinary corpus in the ``npz`` format that
every command reads alone; every shard has the whole vocabulary's columns. Documents are cut by
:func:`~ldacli.partition.shard_bounds`, the rule the sampler's shards follow, so shard s of
the folder is shard s of a run with ``--shards N`` on the whole corpus, and the two runs give the
same bytes.

``index.npz`` (kind ``"shard index"``, format_version 1) holds ``params`` (JSON: ``n_docs``,
``n_words``, ``n_tokens``; ``fingerprint``, the whole corpus's
:meth:`~ldacli.corpora.corpus.Corpus.fingerprint`; ``source`` and ``format`` of the corpus it was made
from; ``files`` and ``sha256`` of the shard files), ``vocab`` (V,) text, ``doc_ids`` (D,) text,
``doc_lengths`` (D,) int64, ``word_freq`` (V,) int64 (tokens of each word) and ``bounds`` (S+1,)
int64 (the first document of each shard, then D). That is all a training client needs
(:class:`ShardFolder`): the workers read the shard files.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ldacli import checks
from ldacli.corpora.counts import doc_lengths, doc_pointers, word_totals
from ldacli.errors import InputError, LdacliError
from ldacli.corpora.formats.tokenizer_file import IN_SHARD_FOLDER, read_tokenizer_file
from ldacli.files.fileio import atomic_folder, open_regular
from ldacli.corpora.formats.matrix import read_scipy_npz, write_scipy_npz
from ldacli.corpora.formats.vocab import vocab_text
from ldacli.partition import ShardRange, shard_bounds, shard_ranges
from ldacli.files.npz import array, read_file, write_npz

INDEX = "index.npz"
VOCAB = "vocab.txt"
KIND = "shard index"
FORMAT_VERSION = 1


def shard_file(s: int) -> str:
    """The name of shard ``s``'s file in its folder."""
    return f"shard-{s:05d}.npz"


def is_shard_folder(path: str | os.PathLike[str]) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, INDEX))


def write_shard_folder(folder: str, counts: sp.csr_array, vocab: list[str], doc_ids: list[str], n_shards: int, *,
                       fingerprint: str, source: str, format: str, tokenizer: bytes | None = None) -> int:
    """Write the corpus ``counts`` (D, V) with its ``vocab`` and ``doc_ids`` as a shard folder
    of ``n_shards`` files (fewer when there are fewer documents), atomically
    (:func:`~ldacli.files.fileio.atomic_folder`: a shard folder already there is replaced, anything
    else is refused), with the bytes of its ``tokenizer`` file when it was made from text.
    Returns the number of shards written."""
    lengths = doc_lengths(counts)
    bounds = shard_bounds(doc_pointers(lengths), n_shards)
    parts = (counts[bounds[s]:bounds[s + 1]] for s in range(bounds.size - 1))
    return write_shard_files(folder, parts, bounds, lengths, word_totals(counts, len(vocab)), vocab, doc_ids,
                             fingerprint=lambda: fingerprint, source=source, format=format, tokenizer=tokenizer)


def write_shard_files(folder: str, shards: Iterable[sp.csr_array], bounds: np.ndarray, lengths: np.ndarray,
                      word_freq: np.ndarray, vocab: list[str], doc_ids: list[str], *, fingerprint: Callable[[], str],
                      source: str, format: str, tokenizer: bytes | None = None) -> int:
    """Write a shard folder whose shard ``s`` is the ``s``-th matrix ``shards`` gives (the documents
    ``bounds[s]:bounds[s + 1]``, each made only when it is written, so a corpus can be written a shard
    at a time), atomically as :func:`write_shard_folder`. ``lengths`` (D,) and ``word_freq`` (V,) are
    the whole corpus's tokens by document and by word, 64-bit; ``fingerprint()`` its fingerprint,
    asked once every shard is written. Returns the number of shards written."""
    files, digests = [], []
    with atomic_folder(folder, what="shard folder", replaces=INDEX) as tmp:
        for s, part in enumerate(shards):
            buffer = io.BytesIO()
            write_scipy_npz(buffer, part)
            data = buffer.getvalue()
            files.append(shard_file(s))
            digests.append(hashlib.sha256(data).hexdigest())
            with open(os.path.join(tmp, files[-1]), "wb") as f:
                f.write(data)
        with open(os.path.join(tmp, VOCAB), "wb") as f:
            f.write(vocab_text(vocab))
        if tokenizer is not None:
            with open(os.path.join(tmp, IN_SHARD_FOLDER), "wb") as f:
                f.write(tokenizer)
        params = {"n_docs": int(lengths.size), "n_words": len(vocab), "n_tokens": int(lengths.sum(dtype=np.int64)),
                  "fingerprint": fingerprint(), "source": source, "format": format, "files": files, "sha256": digests}
        write_npz(os.path.join(tmp, INDEX), {
            "kind": np.array(KIND), "format_version": np.array(FORMAT_VERSION), "params": np.array(json.dumps(params)),
            "vocab": np.array(vocab, dtype=str), "doc_ids": np.array(doc_ids, dtype=str),
            "doc_lengths": np.asarray(lengths, dtype=np.int64), "word_freq": np.asarray(word_freq, dtype=np.int64),
            "bounds": bounds,
        }, what="shard index")
    return len(files)


@dataclass
class ShardFolder:
    """A shard folder as its index describes it, the shard files unread: what the training
    client of a cluster needs of a corpus it never loads. It answers the questions the driver
    asks a :class:`~ldacli.corpora.corpus.Corpus` (sizes, vocabulary, document ids and lengths, word
    frequencies, fingerprint); :meth:`shard_counts` reads one shard, checked against the index.
    ``doc_ids`` is the index's NumPy text array (D,), as narrow as its longest id, not a list:
    4 bytes a character of the longest id a document, where a list of Python strings takes
    about 60 bytes more, and the client of a corpus of millions of documents holds nothing
    else of each (the model writes the array as it is)."""

    path: str
    vocab: list[str]
    doc_ids: np.ndarray
    doc_lengths: np.ndarray
    word_freq: np.ndarray
    bounds: np.ndarray
    files: list[str]
    sha256: list[str]
    corpus_fingerprint: str
    format: str = "shards"
    notes: list[str] = field(default_factory=list)
    # read as written: no vocabulary rules (a Corpus's ``reading``), nothing they removed; what
    # its tokenizer file says when it was made from text
    reading: dict = field(default_factory=dict)
    removed_words: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return self.path

    @property
    def name(self) -> str:
        """What messages call it (as :attr:`ldacli.corpora.corpus.Corpus.name`)."""
        return self.path

    @property
    def n_docs(self) -> int:
        return int(self.doc_lengths.size)

    @property
    def n_words(self) -> int:
        return len(self.vocab)

    @property
    def n_tokens(self) -> int:
        return int(self.doc_lengths.sum())

    @property
    def n_shards(self) -> int:
        return len(self.files)

    def fingerprint(self) -> str:
        return self.corpus_fingerprint

    def __repr__(self) -> str:
        return (f"<ShardFolder {self.path!r}: {self.n_shards} shards, {self.n_docs:,} documents, {self.n_words:,} words, "
                f"{self.n_tokens:,} tokens>")

    def word_frequencies(self) -> np.ndarray:
        return self.word_freq

    def doc_ptr(self) -> np.ndarray:
        return doc_pointers(self.doc_lengths)

    def shard_ranges(self) -> list[ShardRange]:
        """Each shard's documents and tokens in the corpus
        (:func:`~ldacli.partition.shard_ranges`), 64-bit sums of the index's lengths."""
        offsets = np.concatenate([[0], np.cumsum([int(self.doc_lengths[a:b].sum(dtype=np.int64))
                                                  for a, b in zip(self.bounds[:-1], self.bounds[1:])])])
        return shard_ranges(self.bounds, offsets)

    def without_unused_words(self) -> tuple["ShardFolder", int]:
        """This folder (a model gives unused words no row: a folder written by ``convert`` has
        none, and one with some cannot drop them without rewriting its files)."""
        unused = int(np.count_nonzero(self.word_freq == 0))
        if unused:
            raise LdacliError(f"{self.path}: {unused} words of the vocabulary never occur in the shard folder; "
                              f"write it again with ldacli convert, which leaves them out")
        return self, 0

    def shard_counts(self, s: int) -> sp.csr_array:
        """Shard ``s``'s counts (documents x words), after checking the file is the one the
        index names (its SHA-256) and holds the documents it says."""
        name = os.path.join(self.path, self.files[s])
        try:
            with open_regular(name) as f:
                data = f.read()
        except OSError as exc:
            raise InputError(name, None, f"cannot read shard {s} of {self.path}: {exc.strerror or exc}") from None
        except InputError as exc:  # missing, or not a regular file
            reason = exc.detail.removeprefix("cannot read: ")
            raise InputError(name, None, f"cannot read shard {s} of {self.path}: {reason}") from None
        if hashlib.sha256(data).hexdigest() != self.sha256[s]:
            raise InputError(name, None, f"expected the shard file {INDEX} describes (SHA-256 {self.sha256[s][:12]}...), "
                                         f"found another: the folder was changed after it was written")
        counts = read_scipy_npz(name, data, self.n_words, os.path.join(self.path, VOCAB))
        lo, hi = int(self.bounds[s]), int(self.bounds[s + 1])
        if counts.shape[0] != hi - lo or not np.array_equal(doc_lengths(counts), self.doc_lengths[lo:hi]):
            raise InputError(name, None, f"expected documents {lo} to {hi - 1} as {INDEX} describes them, found "
                                         f"{counts.shape[0]} documents of other lengths")
        return counts

    def all_counts(self) -> sp.csr_array:
        """The whole corpus's counts, shard after shard."""
        parts = [self.shard_counts(s) for s in range(self.n_shards)]
        return sp.csr_array(sp.vstack(parts, format="csr", dtype=np.int32))


def open_shard_folder(path: str | os.PathLike[str]) -> ShardFolder:
    """The shard folder at ``path``, from its index (checked; the shard files are not read)."""
    path = checks.path("path", path, "the path of a shard folder")
    name = os.path.join(path, INDEX)
    if not os.path.isdir(path):
        raise InputError(path, None, "expected a shard folder (written by ldacli convert --shards N), found no folder")
    if not os.path.isfile(name):
        raise InputError(path, None, f"expected a shard folder (written by ldacli convert --shards N), found no {INDEX}")
    arrays, params = read_file(name, KIND, (FORMAT_VERSION,))
    for key, kind in (("n_docs", int), ("n_words", int), ("n_tokens", int), ("fingerprint", str), ("files", list),
                      ("sha256", list)):
        if not isinstance(params.get(key), kind):
            raise InputError(name, None, f"expected '{key}' in params, found {params.get(key)!r}")
    D, V, S = params["n_docs"], params["n_words"], len(params["files"])
    vocab = array(name, arrays, "vocab", "U", (V,))
    doc_ids = array(name, arrays, "doc_ids", "U", (D,))
    lengths = array(name, arrays, "doc_lengths", "iu", (D,), minimum=0).astype(np.int64)
    freq = array(name, arrays, "word_freq", "iu", (V,), minimum=0).astype(np.int64)
    bounds = array(name, arrays, "bounds", "iu", (S + 1,), minimum=0).astype(np.int64)
    if S < 1 or len(params["sha256"]) != S or bounds[0] != 0 or bounds[-1] != D or np.any(np.diff(bounds) < 0):
        raise InputError(name, None, f"expected {S} shard files with SHA-256s and bounds rising from 0 to {D}, found "
                                     f"{len(params['sha256'])} SHA-256s and bounds {bounds.tolist()[:8]}")
    if int(lengths.sum()) != params["n_tokens"] or int(freq.sum()) != params["n_tokens"]:
        raise InputError(name, None, f"expected document lengths and word frequencies summing to n_tokens "
                                     f"{params['n_tokens']}, found {int(lengths.sum())} and {int(freq.sum())}")
    bad = [f for f in params["files"] if not isinstance(f, str) or os.path.basename(f) != f or not f.endswith(".npz")]
    if bad:
        raise InputError(name, None, f"expected shard file names (.npz) inside the folder, found {bad[0]!r}")
    # as narrow as a list of the same ids would be written (the model's bytes do not depend on
    # the index's width), 4 bytes a character
    longest = int(np.char.str_len(doc_ids).max()) if doc_ids.size else 0
    doc_ids = doc_ids.astype(f"<U{max(1, longest)}", copy=False)
    folder = ShardFolder(path, [str(w) for w in vocab], doc_ids, lengths, freq, bounds,
                         list(params["files"]), [str(h) for h in params["sha256"]], params["fingerprint"])
    converted = read_tokenizer_file(os.path.join(path, IN_SHARD_FOLDER), folder.vocab, name)
    if converted is not None:
        folder.reading, folder.removed_words = {"tokenizer_file": converted[0]}, converted[1]
        folder.notes.append(f"tokenizer read from {converted[0]['path']}: a model trained on it reads text as "
                            f"{converted[0]['source']} was read")
    return folder
