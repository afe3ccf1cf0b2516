"""Generated inputs for every format ldacli reads, valid and broken, and the one property they
must all satisfy: reading them either works (and gives a consistent corpus or file) or raises
the project's own error -- never another exception, never a traceback.

Used by ``tests/test_fuzz.py`` (a seeded sample, a few seconds) and ``benchmarks/fuzz.py``
(tens of thousands of inputs, with statistics). Each generator is a hypothesis strategy of
``(kind, payload)``; :func:`check` feeds one to the reader it is for.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import tempfile
import zipfile

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

import ldacli
from ldacli.corpus import MAX_TOKENS
from ldacli.formats.read import read_corpus
from ldacli.formats.vocab import read_vocab
from ldacli.errors import LdacliError
from ldacli.npz import write_npz

# --- pieces ------------------------------------------------------------------------------------

small_ints = st.integers(0, 12)
weird_numbers = st.sampled_from(["-1", "0", "2147483647", "2147483648", "99999999999", "1e3", "3.5", "x", "",
                                 "٣", "+2", "0x10", "nan", "１"])
junk_bytes = st.binary(min_size=0, max_size=40)
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


@st.composite
def mutate_text(draw, text: str) -> bytes:
    """``text`` (UTF-8) with up to three corruptions at random places, or untouched."""
    data = bytearray(text.encode("utf-8"))
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["insert", "delete", "replace", "number", "newline", "bom", "crlf", "nul"]))
        at = draw(st.integers(0, len(data))) if data else 0
        if how == "insert":
            data[at:at] = draw(junk_bytes)
        elif how == "delete":
            data[at:at + draw(st.integers(1, 10))] = b""
        elif how == "replace" and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        elif how == "number":
            data[at:at] = draw(weird_numbers).encode()
        elif how == "newline":
            data[at:at] = b"\n" * draw(st.integers(1, 3))
        elif how == "bom":
            data[0:0] = b"\xef\xbb\xbf"
        elif how == "crlf":
            data = bytearray(bytes(data).replace(b"\n", b"\r\n"))
        else:
            data[at:at] = b"\0"
    return bytes(data)


@st.composite
def count_matrix(draw, max_docs: int = 6, max_words: int = 8):
    D = draw(st.integers(1, max_docs))
    V = draw(st.integers(1, max_words))
    cells = draw(st.lists(st.integers(0, 3) | st.sampled_from([1000, 2**31 - 1]), min_size=D * V, max_size=D * V))
    return np.array(cells, dtype=np.int64).reshape(D, V)


def vocab_text(n: int) -> str:
    return "".join(f"w{i}\n" for i in range(n))


# --- corpora -------------------------------------------------------------------------------------

@st.composite
def ldac_inputs(draw):
    m = draw(count_matrix())
    lines = []
    for row in m:
        nz = np.flatnonzero(row)
        lines.append(f"{nz.size}" + "".join(f" {w}:{row[w]}" for w in nz))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    return "ldac", {"data": draw(mutate_text(text)), "vocab": vocab_text(m.shape[1] + draw(st.integers(-1, 1)))}


@st.composite
def uci_inputs(draw):
    m = draw(count_matrix())
    rows, cols = np.nonzero(m)
    header = [m.shape[0], m.shape[1], rows.size]
    if draw(st.booleans()):
        header[draw(st.integers(0, 2))] += draw(st.integers(-2, 2))
    lines = [str(h) for h in header] + [f"{d + 1} {w + 1} {m[d, w]}" for d, w in zip(rows, cols)]
    if draw(st.booleans()) and len(lines) > 3:
        del lines[draw(st.integers(0, len(lines) - 1))]
    text = "\n".join(lines) + "\n"
    return "uci", {"data": draw(mutate_text(text)), "vocab": vocab_text(m.shape[1]), "name": "docword.f.txt"}


@st.composite
def text_inputs(draw):
    lines = draw(st.lists(st.text(max_size=60), min_size=0, max_size=8))
    data = draw(mutate_text("\n".join(lines)))
    return "text", {"data": data}


@st.composite
def textdir_inputs(draw):
    files = draw(st.dictionaries(st.sampled_from(["a.txt", "b.txt", ".hidden.txt", "c.md", "d.txt"]),
                                 st.text(max_size=50).map(lambda t: t.encode("utf-8")) | junk_bytes, max_size=4))
    return "textdir", {"files": files}


@st.composite
def mtx_inputs(draw):
    m = draw(count_matrix())
    rows, cols = np.nonzero(m)
    field = draw(st.sampled_from(["integer", "real", "pattern", "complex"]))
    banner = f"%%MatrixMarket matrix {draw(st.sampled_from(['coordinate', 'array']))} {field} " \
             f"{draw(st.sampled_from(['general', 'symmetric']))}"
    size = f"{m.shape[0]} {m.shape[1]} {rows.size + draw(st.integers(-1, 1))}"
    entries = [f"{d + 1} {w + 1}" + ("" if field == "pattern" else f" {m[d, w]}") for d, w in zip(rows, cols)]
    text = "\n".join([banner, "% comment", size] + entries) + "\n"
    return "mtx", {"data": draw(mutate_text(text)), "vocab": vocab_text(m.shape[1])}


@st.composite
def scipy_npz_inputs(draw):
    m = draw(count_matrix())
    fmt = draw(st.sampled_from(["csr", "csc", "coo"]))
    buf = io.BytesIO()
    sp.save_npz(buf, sp.csr_matrix(m).asformat(fmt), compressed=draw(st.booleans()))
    return "npz", {"data": draw(mutate_bytes(buf.getvalue())), "vocab": vocab_text(m.shape[1])}


@st.composite
def mutate_bytes(draw, data: bytes) -> bytes:
    """Binary corruption: flipped bytes, truncation, or none."""
    data = bytearray(data)
    how = draw(st.sampled_from(["none", "none", "flip", "truncate", "splice"]))
    if how == "flip" and data:
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
    elif how == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif how == "splice" and data:
        at = draw(st.integers(0, len(data)))
        data[at:at] = draw(junk_bytes)
    return bytes(data)


@st.composite
def vocab_inputs(draw):
    entries = draw(st.lists(words | st.sampled_from(["", " ", "dup", "dup", "\ufeffbom"]), max_size=8))
    return "vocab", {"data": draw(mutate_text("\n".join(entries) + "\n"))}


@st.composite
def shard_folder_inputs(draw):
    """A shard folder (convert --shards) of a small corpus, then maybe: its index's arrays
    replaced or dropped, a file's bytes corrupted, a file deleted, or two files swapped."""
    from ldacli.corpus import Corpus
    from ldacli.formats.write import write_shards

    m = np.minimum(draw(count_matrix()), 1000)
    corpus = Corpus(sp.csr_array(m.astype(np.int32)), [f"w{i}" for i in range(m.shape[1])],
                    [str(d + 1) for d in range(m.shape[0])])
    with tempfile.TemporaryDirectory() as tmp:
        if m.sum() == 0:
            return "shards", {"files": {}}
        write_shards(corpus, os.path.join(tmp, "f"), draw(st.integers(1, 4)))
        files = {}
        for name in sorted(os.listdir(os.path.join(tmp, "f"))):
            with open(os.path.join(tmp, "f", name), "rb") as f:
                files[name] = f.read()
    names = sorted(files)
    for _ in range(draw(st.integers(0, 2))):
        how = draw(st.sampled_from(["index", "bytes", "delete", "swap"]))
        name = draw(st.sampled_from(names))
        if how == "index" and "index.npz" in files:
            try:
                arrays = dict(np.load(io.BytesIO(files["index.npz"]), allow_pickle=False))
            except Exception:  # noqa: BLE001 - already corrupted by an earlier change: leave it
                continue
            if not arrays:
                continue
            key = draw(st.sampled_from(sorted(arrays)))
            if draw(st.booleans()):
                arrays[key] = draw(replacement_arrays)
            else:
                arrays.pop(key)
            files["index.npz"] = npz_bytes(arrays)
        elif how == "bytes" and name in files:
            files[name] = draw(mutate_bytes(files[name]))
        elif how == "delete":
            files.pop(name, None)
        elif how == "swap":
            other = draw(st.sampled_from(names))
            if name in files and other in files:
                files[name], files[other] = files[other], files[name]
    return "shards", {"files": files}


def corpus_inputs():
    return st.one_of(ldac_inputs(), uci_inputs(), text_inputs(), textdir_inputs(), mtx_inputs(),
                     scipy_npz_inputs(), vocab_inputs())


@st.composite
def transported(draw, inputs):
    """An input, maybe gzipped (maybe a truncated gzip), maybe given on standard input."""
    kind, spec = draw(inputs)
    if "data" in spec and kind != "vocab":
        how = draw(st.sampled_from(["file", "file", "gzip", "gzip-truncated", "stdin"]))
        if how.startswith("gzip"):
            packed = gzip.compress(spec["data"], mtime=0)
            spec = {**spec, "data": packed[:len(packed) // 2] if how == "gzip-truncated" else packed}
        spec = {**spec, "stdin": how == "stdin"}
    return kind, spec


# --- ldacli's own files ------------------------------------------------------------------------------

_TEMPLATES: dict[str, dict[str, np.ndarray]] = {}


def own_file_templates() -> dict[str, dict[str, np.ndarray]]:
    """The arrays of a small valid model, checkpoint (each method) and inference file."""
    if not _TEMPLATES:
        from ldacli.synthetic import generate

        corpus, _ = generate(12, 2, 10, doc_length=8, seed=3).corpus.without_unused_words()
        with tempfile.TemporaryDirectory() as folder:
            for method in ("cgs", "vem", "gibbs"):
                ckpt = os.path.join(folder, f"{method}.npz")
                model = ldacli.train(corpus, 2, method=method, iterations=3, seed=1, checkpoint=ckpt)
                model.save(os.path.join(folder, "m.npz"))
                _TEMPLATES[f"checkpoint-{method}"] = dict(np.load(ckpt))
            _TEMPLATES["model"] = dict(np.load(os.path.join(folder, "m.npz")))
            result, _ = ldacli.infer(model, corpus, iterations=2, burn_in=1, seed=1)
            result.save(os.path.join(folder, "i.npz"))
            _TEMPLATES["inference"] = dict(np.load(os.path.join(folder, "i.npz")))
    return _TEMPLATES


replacement_arrays = st.sampled_from([
    np.float64(np.nan), np.float64(-1.0), np.int64(-5), np.int64(10**12), np.str_("x"), np.str_("[1, 2]"),
    np.str_('{"method": "bogus"}'), np.zeros(0), np.zeros((2, 3)), np.full((2, 10), np.inf), -np.ones(2),
    np.array(["a", "b"]), np.array([[0.5, 0.5], [1.0, 0.0]]), np.ones(3, dtype=np.int32), np.bool_(True),
])


@st.composite
def own_file_inputs(draw):
    templates = own_file_templates()
    kind = draw(st.sampled_from(sorted(templates)))
    arrays = dict(templates[kind])
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(sorted(arrays)))
        if draw(st.booleans()):
            arrays[name] = draw(replacement_arrays)
        else:
            arrays.pop(name)
    return "own-" + kind.split("-")[0], {"data": draw(mutate_bytes(npz_bytes(arrays))), "loader": kind.split("-")[0]}


def npz_bytes(arrays: dict) -> bytes:
    """``arrays`` as an ``.npz`` in memory, laid out as ``write_npz`` writes them."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, value in arrays.items():
            with zf.open(name + ".npy", "w") as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buf.getvalue()


def all_inputs():
    return st.one_of(transported(corpus_inputs()), own_file_inputs())


# --- the property ------------------------------------------------------------------------------------

class NotOurError(AssertionError):
    """A reader raised something other than the project's own error."""


def template(message: str) -> str:
    """An error message with its particulars (paths, numbers, quoted values) blanked out."""
    message = re.sub(r"/\S+", "PATH", message)
    message = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
    return re.sub(r"\d+", "#", message)


def check(kind: str, spec: dict) -> str | None:
    """Feed one input to its reader; returns None when it was read (and the result is
    consistent) or the error's template; raises :class:`NotOurError` for anything else."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            try:
                return _read(kind, spec, folder)
            except LdacliError as exc:
                return template(str(exc))
        except Exception as exc:  # noqa: BLE001 - what this check exists to catch
            raise NotOurError(f"{kind}: {type(exc).__name__}: {exc}") from exc


def _read(kind: str, spec: dict, folder: str) -> None:
    if kind == "shards":  # as `train` reads it whole, and as a worker reads it shard by shard
        path = os.path.join(folder, "f")
        os.mkdir(path)
        for name, data in spec["files"].items():
            with open(os.path.join(path, name), "wb") as f:
                f.write(data)

        def by_shard():
            index = ldacli.open_shard_folder(path)
            for s in range(index.n_shards):
                index.shard_counts(s)

        refused = []
        for read in (by_shard, lambda: _consistent(read_corpus(path))):
            try:
                read()
            except LdacliError as exc:  # anything else propagates: what the check is for
                refused.append(exc)
        if refused:
            raise refused[0]
        return
    if kind == "textdir":
        path = os.path.join(folder, "docs")
        os.mkdir(path)
        for name, data in spec["files"].items():
            with open(os.path.join(path, name), "wb") as f:
                f.write(data)
        _consistent(read_corpus(path, min_df=1))
        return
    name = spec.get("name", f"input.{kind.replace('own-', '')}")
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(spec["data"])
    if kind == "vocab":
        read_vocab(path)
        return
    if kind.startswith("own-"):
        loader = {"model": ldacli.load_model, "checkpoint": ldacli.Checkpoint.load,
                  "inference": ldacli.Inference.load}[spec["loader"]]
        loader(path)
        return
    vocab = None
    if "vocab" in spec:
        vocab = os.path.join(folder, "vocab.txt")
        with open(vocab, "w", encoding="utf-8") as f:
            f.write(spec["vocab"])
    fmt = "auto" if kind == "text" else kind
    if spec.get("stdin"):
        corpus = read_corpus("-", format=fmt, vocab=vocab, stdin=io.BytesIO(spec["data"]))
    else:
        corpus = read_corpus(path, format=fmt, vocab=vocab)
    _consistent(corpus)


def _consistent(corpus) -> None:
    c = corpus.counts
    assert c.shape == (len(corpus.doc_ids), len(corpus.vocab)), "shape disagrees with ids and vocabulary"
    assert c.nnz == 0 or c.data.min() > 0, "a stored count is not positive"
    assert corpus.n_tokens <= MAX_TOKENS, "more tokens than the samplers can count"
