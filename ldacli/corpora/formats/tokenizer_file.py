"""The tokenizer file: how the text a bag-of-words file was made from was read, kept beside it.

A bag-of-words file (LDA-C, UCI, Matrix Market, scipy ``.npz``) and its vocabulary say which
words a document holds, not how text became those words. :func:`ldacli.write_corpus` (``ldacli
convert``) of a corpus read from text therefore also writes ``X.tokenizer.json`` beside ``X.ext``
(``docs.ldac`` -> ``docs.tokenizer.json``; ``.gz`` ignored; :func:`tokenizer_file_path`): a JSON
object with ``kind`` (``"ldacli tokenizer"``), ``format_version`` (1), ``ldacli_version``,
``source`` (the text read, absolute) and ``input_format`` (``text`` or ``textdir``), the
tokenizer's settings (:data:`~ldacli.corpora.tokenizer.TOKENIZING`: ``lowercase``, ``addresses``,
``token_pattern``, ``min_token_length``, ``numbers``), the vocabulary rules convert applied
(``stop_words``, the lists' names; ``stop_list_size``, ``remove_top``, ``min_df``, ``max_df``,
``max_vocab``), ``vocab_sha256`` (the SHA-256 of the vocabulary file's bytes as written) and
``removed_words`` (the words the rules removed and those of the stop lists, sorted).

A shard folder written from text (``convert --shards``) holds it as ``tokenizer.json``
(:data:`IN_SHARD_FOLDER`). Reading a bag-of-words corpus that builds its own vocabulary (no fixed
vocabulary, not stdin), or a shard folder, finds the file by that name
(:func:`read_tokenizer_file`): the corpus's ``reading`` then holds
``tokenizer_file`` (the file's settings and its ``path``), which a model trained on it records
(``params.tokenizer_file``: ``infer`` and ``perplexity`` tokenize text with them), and its
``removed_words`` add the file's. The file may come from someone else: it is read only when it is
a regular file of at most :data:`MAX_BYTES`, every field is checked (the token pattern as
``--token-pattern`` is, :class:`~ldacli.corpora.tokenizer.Regex`, so that one that could backtrack
without bound never runs; words of at most
:data:`~ldacli.corpora.formats.parsing.MAX_WORD_LENGTH` characters), stop lists are names only
(never opened), and a file written for another vocabulary, or put there by another user than the
corpus's owner (:func:`read_tokenizer_file`), is refused: an
:class:`~ldacli.errors.InputError` names the file and what was wrong.
"""

from __future__ import annotations

import hashlib
import json
import os

from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.parsing import MAX_WORD_LENGTH
from ldacli.corpora.formats.vocab import vocab_text
from ldacli.corpora.tokenizer import TOKENIZING, Tokenizer
from ldacli.corpora.vocab_rules import MAX_DF, MAX_VOCAB, MIN_DF, REMOVE_TOP
from ldacli.errors import InputError, SettingError
from ldacli.files.fileio import open_regular, stranger
from ldacli.version import __version__

KIND = "ldacli tokenizer"
FORMAT_VERSION = 1
SUFFIX = ".tokenizer.json"
# Its name in a shard folder (``convert --shards`` of text), beside the folder's vocabulary.
IN_SHARD_FOLDER = "tokenizer.json"
# The largest tokenizer file read: about 6 million removed words of 10 letters.
MAX_BYTES = 64 << 20
# The formats of a corpus made by the tokenizer (as :data:`ldacli.model.TEXT_CORPUS_FORMATS`).
TEXT_INPUT_FORMATS = ("text", "textdir", "texts")
# Bounds of the fields that are not words: a path, a stop list's name, the number of lists.
MAX_PATH_LENGTH = 4096
MAX_STOP_LISTS = 100
_RULES = (REMOVE_TOP, MIN_DF, MAX_DF, MAX_VOCAB)
# What a model records of the file (params["tokenizer_file"]): all but the words and the vocabulary's digest.
RECORDED = ("path", "source", "input_format", *(s.name for s in TOKENIZING), "stop_words", "stop_list_size",
            *(s.name for s in _RULES))


def tokenizer_file_path(corpus_path: str | os.PathLike[str]) -> str:
    """The tokenizer file of the bag-of-words file ``corpus_path``: ``X.tokenizer.json`` for
    ``X.ext`` or ``X.ext.gz`` (``X`` when it has no extension), in the same folder."""
    folder, name = os.path.split(os.fspath(corpus_path))
    stem = name.removesuffix(".gz")
    stem = os.path.splitext(stem)[0] if "." in stem.lstrip(".") else stem
    return os.path.join(folder, stem + SUFFIX)


def vocab_sha256(vocab: list[str]) -> str:
    """The SHA-256 of the vocabulary file that holds ``vocab`` (:func:`vocab_text`)."""
    return hashlib.sha256(vocab_text(vocab)).hexdigest()


def tokenizer_record(corpus: Corpus) -> dict | None:
    """What the tokenizer file of ``corpus`` written as a bag-of-words file holds (see the module
    docstring), or None when it was not made from text: read from text (its ``reading`` holds
    the tokenizer's settings) or from a bag-of-words file that had a tokenizer file."""
    reading = corpus.reading
    if corpus.format in TEXT_INPUT_FORMATS and all(s.name in reading for s in TOKENIZING):
        source = corpus.source
        record = {"source": os.path.abspath(source) if source not in ("", "-") else source,
                  "input_format": corpus.format, **{s.name: reading[s.name] for s in TOKENIZING},
                  "stop_words": list(reading.get("stop_words") or []),
                  "stop_list_size": reading.get("stop_list_size", 0),
                  **{s.name: reading.get(s.name, s.default) for s in _RULES}}
    elif isinstance(reading.get("tokenizer_file"), dict):
        record = {k: v for k, v in reading["tokenizer_file"].items() if k != "path"}
    else:
        return None
    return {"kind": KIND, "format_version": FORMAT_VERSION, "ldacli_version": __version__, **record,
            "vocab_sha256": vocab_sha256(corpus.vocab), "removed_words": sorted(corpus.removed_words)}


def tokenizer_file_bytes(record: dict) -> bytes:
    """The file's bytes: ``record`` as JSON (one key a line, sorted), UTF-8."""
    return (json.dumps(record, ensure_ascii=False, indent=0, sort_keys=True) + "\n").encode("utf-8")


def read_tokenizer_file(path: str, vocab: list[str], corpus: str) -> tuple[dict, list[str]] | None:
    """The tokenizer file at ``path`` (beside a bag-of-words file, :func:`tokenizer_file_path`, or
    in a shard folder, :data:`IN_SHARD_FOLDER`) of the corpus at ``corpus``, checked as input
    someone sent (see the module docstring) against ``vocab``, the vocabulary the corpus was read
    with: ``(settings, removed_words)``, ``settings`` being what a model records
    (:data:`RECORDED`, ``path`` absolute). None when there is none. A file of another user than
    this one, root, the folder's owner (:func:`~ldacli.files.fileio.stranger`) and the corpus's
    owner is refused: in a folder others can write, anyone could put one beside a corpus."""
    if not os.path.lexists(path):
        return None
    with open_regular(path) as f:
        uid = stranger(os.fstat(f.fileno()), os.path.dirname(path))
        if uid is not None and uid != os.stat(corpus).st_uid:
            raise InputError(path, None, f"expected a tokenizer file of this user's or of the corpus's owner, found "
                                         f"one of another user (uid {uid}), who may have put it there: remove it, or "
                                         f"convert the text again in a folder of your own")
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise InputError(path, None, f"expected a tokenizer file of at most {MAX_BYTES:,} bytes, found a larger one")
    try:
        record = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise InputError(path, None, "expected a JSON object (an ldacli tokenizer file), found values nested too "
                                     "deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, None, f"expected a JSON object (an ldacli tokenizer file), found invalid text "
                                     f"({exc})") from None
    if not isinstance(record, dict) or record.get("kind") != KIND:
        raise InputError(path, None, f"expected an ldacli tokenizer file (kind {KIND!r}), found "
                                     f"{json.dumps(record.get('kind') if isinstance(record, dict) else record)[:60]}")
    if record.get("format_version") != FORMAT_VERSION:
        raise InputError(path, None, f"expected format_version {FORMAT_VERSION} (this ldacli's), found "
                                     f"{json.dumps(record.get('format_version'))[:40]}")

    def wrong(key: str, expected: str):
        return InputError(path, None, f"expected {key} {expected}, found {json.dumps(record.get(key))[:80]}")

    for key in ("source", "input_format", "vocab_sha256"):
        if not isinstance(record.get(key), str) or len(record[key]) > MAX_PATH_LENGTH:
            raise wrong(key, f"as a string of at most {MAX_PATH_LENGTH} characters")
    if record["input_format"] not in TEXT_INPUT_FORMATS:
        raise wrong("input_format", f"as one of {', '.join(TEXT_INPUT_FORMATS)}")
    try:
        Tokenizer(**{s.name: record.get(s.name) if record.get(s.name) is not None else _missing(s.name)
                     for s in TOKENIZING})
        for s in _RULES:
            s.check(record.get(s.name))
    except SettingError as exc:
        raise InputError(path, None, f"expected the settings ldacli records, found {exc}") from None
    lists = record.get("stop_words")
    if not (isinstance(lists, list) and len(lists) <= MAX_STOP_LISTS
            and all(isinstance(x, str) and 0 < len(x) <= MAX_PATH_LENGTH for x in lists)):
        raise wrong("stop_words", f"as a list of at most {MAX_STOP_LISTS} names")
    size = record.get("stop_list_size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise wrong("stop_list_size", "as a whole number of words")
    words = record.get("removed_words")
    if not (isinstance(words, list) and all(isinstance(w, str) and 0 < len(w) <= MAX_WORD_LENGTH for w in words)):
        raise InputError(path, None, f"expected removed_words as a list of words of 1 to {MAX_WORD_LENGTH} "
                                     f"characters, found another value")
    if record["vocab_sha256"] != vocab_sha256(vocab):
        raise InputError(path, None, "expected the tokenizer file of this corpus's vocabulary (vocab_sha256), found "
                                     "one written with another: convert the text again, or remove the file")
    settings = {key: record[key] for key in RECORDED if key != "path"}
    return {"path": os.path.abspath(path), **settings}, sorted(set(words))


def _missing(name: str):
    raise SettingError(name, f"{name} must be given, found none")
