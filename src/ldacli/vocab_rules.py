"""Which words a corpus keeps: stop words and pruning.

Stop words
----------
``"english"`` is the list shipped in ``ldacli/data/stopwords_en.txt``; ``None`` or ``"none"``
disables stop-word removal; any other string is the path of a UTF-8 file with one word per
line (blank lines and lines starting with ``#`` are ignored; words are lowercased).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp

from ldacli.counts import word_totals
from ldacli.errors import InputError, LdacliError
from ldacli.fileio import Source, iter_lines

ENGLISH = "english"
STOPWORDS_RESOURCE = "stopwords_en.txt"


def _parse_word_list(lines: Iterable[tuple[int, bytes]], name: str) -> frozenset[str]:
    words = set()
    for lineno, raw in lines:
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise InputError(name, lineno, f"expected UTF-8 text, found invalid byte "
                                           f"0x{raw[exc.start]:02x} at column {exc.start + 1}") from None
        if line and not line.startswith("#"):
            words.add(line.lower())
    return frozenset(words)


def load_stop_words(spec: str | None) -> frozenset[str]:
    """The stop-word set named by ``spec``: ``"english"``, ``None``/``"none"``, or a file path."""
    if spec is None or spec.lower() == "none":
        return frozenset()
    if spec.lower() == ENGLISH:
        resource = importlib.resources.files("ldacli").joinpath("data", STOPWORDS_RESOURCE)
        data = resource.read_bytes()
        return _parse_word_list(enumerate(data.split(b"\n"), start=1), STOPWORDS_RESOURCE)
    source = Source.open(spec)
    return _parse_word_list(iter_lines(source), source.name)


def check_pruning(min_df: int, max_df: float, max_vocab: int | None) -> None:
    """Validate the pruning parameters, raising :class:`LdacliError` with the expected range."""
    if isinstance(min_df, bool) or not isinstance(min_df, (int, np.integer)) or min_df < 1:
        raise LdacliError(f"min_df: expected an integer >= 1, found {min_df!r}")
    if isinstance(max_df, bool) or not isinstance(max_df, (int, float, np.number)) or not 0 < max_df <= 1:
        raise LdacliError(f"max_df: expected a fraction of documents in (0, 1], found {max_df!r}")
    if max_vocab is not None and (
        isinstance(max_vocab, bool) or not isinstance(max_vocab, (int, np.integer)) or max_vocab < 1
    ):
        raise LdacliError(f"max_vocab: expected None or an integer >= 1, found {max_vocab!r}")


def prune_vocabulary(
    counts: sp.csr_array, vocab: list[str], *, min_df: int = 1, max_df: float = 1.0,
    max_vocab: int | None = None,
) -> tuple[sp.csr_array, list[str], str | None]:
    """Drop rare, ubiquitous and surplus words; keeps the remaining columns in their order.

    In turn: words in fewer than ``min_df`` documents go; words in more than ``max_df * D``
    documents go; of the rest, only the ``max_vocab`` with the largest total count stay (ties
    go to the alphabetically smaller word). Returns the new matrix, its vocabulary and a note
    describing what was dropped (``None`` when nothing was).
    """
    check_pruning(min_df, max_df, max_vocab)
    n_docs, n_words = counts.shape
    df = np.bincount(counts.indices, minlength=n_words)
    total = word_totals(counts, n_words)
    keep = np.ones(n_words, dtype=bool)
    rare = df < min_df
    keep &= ~rare
    common = keep & (df > max_df * n_docs)
    keep &= ~common
    surplus = 0
    if max_vocab is not None and keep.sum() > max_vocab:
        kept = np.flatnonzero(keep)
        ranked = sorted(kept.tolist(), key=lambda j: (-int(total[j]), vocab[j]))
        keep[:] = False
        keep[ranked[:max_vocab]] = True
        surplus = len(kept) - max_vocab
    if keep.all():
        return counts, vocab, None
    columns = np.flatnonzero(keep)
    pruned = sp.csr_array(counts[:, columns])
    pruned.eliminate_zeros()
    pruned.sort_indices()
    pruned = sp.csr_array(pruned, dtype=np.int32)
    parts = []
    if rare.any():
        parts.append(f"{int(rare.sum())} in fewer than min_df={min_df} documents")
    if common.any():
        parts.append(f"{int(common.sum())} in more than max_df={max_df:g} of the documents")
    if surplus:
        parts.append(f"{surplus} beyond max_vocab={max_vocab}")
    dropped_tokens = int(total[~keep].sum())
    note = (f"pruning kept {len(columns)} of {n_words} words, dropping " + ", ".join(parts)
            + f" ({dropped_tokens} tokens)")
    return pruned, [vocab[j] for j in columns.tolist()], note
