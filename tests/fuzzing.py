"""Generated inputs for every format ldacli reads, valid and broken, and the one property they
must all satisfy: reading them either works (and gives a consistent corpus or file) or raises
the project's own error -- never another exception, never a traceback.

Used by ``tests/test_fuzz.py`` (a seeded sample, a few seconds) and ``benchmarks/fuzz.py``
(tens of thousands of inputs, with statistics). Each generator is a hypothesis strategy of
``(kind, payload)``; :func:`check` feeds one to the reader it is for.

The hostile-names family (:func:`hostile_name_inputs`) is a model whose words, document ids,
topic names and params hold control characters, escape sequences, bidi controls and line
separators; :func:`check` runs the commands that show them (topics, info, diff, export) on a real
terminal or into a pipe, and holds them to more: no raw control character on a terminal or in
text for people, JSON that parses, tables that parse back to the model's ids and words exactly.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import signal
import tempfile
import zipfile

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

import ldacli
from ldacli.corpora.corpus import MAX_TOKENS
from ldacli.corpora.formats.parsing import MAX_WORD_LENGTH
from ldacli.corpora.formats.read import read_corpus
from ldacli.corpora.formats.vocab import read_vocab
from ldacli.errors import LdacliError
from ldacli.files.npz import write_npz

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
    from ldacli.corpora.corpus import Corpus
    from ldacli.corpora.formats.write import write_shards

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
    """The arrays of a small valid model (of phi and theta, and of counts), checkpoint (each
    method) and inference file."""
    if not _TEMPLATES:
        from ldacli.corpora.synthetic import generate

        corpus, _ = generate(12, 2, 10, doc_length=8, seed=3).corpus.without_unused_words()
        with tempfile.TemporaryDirectory() as folder:
            for method in ("cgs", "vem", "gibbs"):
                ckpt = os.path.join(folder, f"{method}.npz")
                model = ldacli.train(corpus, 2, method=method, iterations=3, seed=1, checkpoint=ckpt)
                model.save(os.path.join(folder, "m.npz"))
                _TEMPLATES[f"checkpoint-{method}"] = dict(np.load(ckpt))
                if method == "cgs":  # its counts; the others' phi and theta
                    _TEMPLATES["model-cgs"] = dict(np.load(os.path.join(folder, "m.npz")))
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


# --- long words, compressed members, files that are not files (issue 32) ------------------------------

long_words = st.builds(lambda c, n: c * n, st.sampled_from(["a", "é", "中", "😀", "ab1"]),
                       st.sampled_from([1, 5, 199, 200, 201, 250, 1000, 20_000]))


@st.composite
def long_word_inputs(draw):
    """Text corpora (a file, a folder, standard input) and vocabularies with words around the
    longest a vocabulary holds, and lines around a line limit made small for the run (the
    readers' limit, 16 MiB, scaled down so that thousands of inputs stay quick)."""
    kind = draw(st.sampled_from(["text", "text", "textdir", "vocab", "ldac"]))
    lines = draw(st.lists(st.lists(words | long_words, max_size=5).map(" ".join), min_size=1, max_size=5))
    spec = {"line_cap": draw(st.sampled_from([64, 1024, 1 << 20]))}
    if kind == "textdir":
        return "textdir", {**spec, "files": {f"d{i}.txt": line.encode("utf-8") for i, line in enumerate(lines)}}
    if kind == "vocab":
        return "vocab", {**spec, "data": "\n".join(w for line in lines for w in line.split() or ["x"]).encode() + b"\n"}
    if kind == "ldac":
        vocab = list(dict.fromkeys(w for line in lines for w in line.split())) or ["x"]
        data = "".join(f"{len(vocab)} " + " ".join(f"{i}:1" for i in range(len(vocab))) + "\n" for _ in lines)
        return "ldac", {**spec, "data": data.encode(), "vocab": "".join(w + "\n" for w in vocab)}
    return "text", {**spec, "data": "\n".join(lines).encode("utf-8") + b"\n", "stdin": draw(st.booleans())}


def _recompressed(draw, data: bytes) -> tuple[bytes, bool]:
    """The archive ``data`` with some members compressed (deflate, bzip2, lzma) and, maybe, a
    member's declared size changed in the central directory (a bomb's or a liar's); and whether
    any member is compressed."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    compressed = False
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_DEFLATED,
                                           zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]))
            compressed = compressed or method != zipfile.ZIP_STORED
            dst.writestr(info.filename, src.read(info), compress_type=method)
    data = bytearray(out.getvalue())
    if draw(st.booleans()):
        entries = [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)]
        if entries:
            at = draw(st.sampled_from(entries))
            size = draw(st.sampled_from([0, 1, 2**31, 2**32 - 1, 10**6, 10**9]))
            data[at + 24:at + 28] = size.to_bytes(4, "little")
    return bytes(data), compressed


@st.composite
def compressed_member_inputs(draw):
    """ldacli's own files (which it never compresses) and scipy ``.npz`` corpora (which scipy
    may) with members compressed by every method zip knows, declared sizes changed."""
    if draw(st.booleans()):
        templates = own_file_templates()
        kind = draw(st.sampled_from(sorted(templates)))
        data, compressed = _recompressed(draw, npz_bytes(templates[kind]))
        return "own-" + kind.split("-")[0], {"data": data, "loader": kind.split("-")[0], "compressed": compressed}
    m = draw(count_matrix())
    buf = io.BytesIO()
    sp.save_npz(buf, sp.csr_matrix(m), compressed=draw(st.booleans()))
    return "npz", {"data": _recompressed(draw, buf.getvalue())[0], "vocab": vocab_text(m.shape[1])}


@st.composite
def non_regular_inputs(draw):
    """A path that is not a regular file where one is read: a pipe no one writes (opening it to
    read would wait for ever), a device (``/dev/zero`` never ends), a socket, a folder, a
    dangling link; as a corpus, a vocabulary, a stop list, a model or a folder's document."""
    what = draw(st.sampled_from(["fifo", "/dev/zero", "/dev/null", "/dev/urandom", "socket", "folder", "dangling"]))
    role = draw(st.sampled_from(["corpus", "vocab", "stop words", "model", "checkpoint", "textdir", "gzip corpus"]))
    return "special", {"what": what, "role": role, "link": draw(st.booleans())}


def _special(spec: dict, folder: str) -> None:
    """Read the special file of :func:`non_regular_inputs` in its role; it must be refused (but a
    folder inside a folder of documents, which is skipped)."""
    import socket

    path = os.path.join(folder, "special.txt")
    target = os.path.join(folder, "target")
    what = spec["what"]
    made = path if not spec["link"] else target
    if what == "fifo":
        os.mkfifo(made)
    elif what == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(made)
        sock.close()
    elif what == "folder":
        os.mkdir(made)
    elif what == "dangling":
        made = target
        spec = {**spec, "link": True}
    else:
        made = what
    if spec["link"] or made == what:
        os.symlink(made, path)
    small = os.path.join(folder, "small.ldac")
    with open(small, "w") as f:
        f.write("2 0:1 1:2\n1 1:1\n")
    with open(os.path.join(folder, "small.vocab"), "w") as f:
        f.write("a\nb\n")
    role = spec["role"]
    if role == "corpus":
        read_corpus(path)
    elif role == "gzip corpus":
        read_corpus(path, format="text")
    elif role == "vocab":
        read_corpus(small, vocab=path)
    elif role == "stop words":
        read_corpus(small, stop_words=path)
    elif role == "model":
        ldacli.load_model(path)
    elif role == "checkpoint":
        ldacli.Checkpoint.load(path)
    else:
        docs = os.path.join(folder, "docs")
        os.mkdir(docs)
        with open(os.path.join(docs, "a.txt"), "w") as f:
            f.write("some words\n")
        os.rename(path, os.path.join(docs, "b.txt"))
        read_corpus(docs)
        if what == "folder":  # a folder's sub-folders are skipped, as documented
            return None
    raise NotOurError(f"special: {what} as {role} was read, not refused")


# --- history, trends, select-k folders, recorded token patterns (issue 49) ------------------------------

WORD_POOL = [f"w{i:02d}" for i in range(10)]
HEX = "0123456789abcdef"
# values a received file may hold where a number, a list or a text was written
ODD_JSON = st.sampled_from([None, "x", "", -1, 0, 1, 2, 7, 10**20, 1e308, -0.5, True, [], [0], [None], {}, {"a": 1},
                            [0, 0], [1, 0], [-1], ["0"], "0" * 300])


@st.composite
def model_arrays(draw, documents: bool = True):
    """A small valid model's arrays (own_file_templates' model, with K topics over V words of
    WORD_POOL and D documents) and its params, to be changed."""
    import json

    arrays = dict(own_file_templates()["model"])
    K, V, D = draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    ids = draw(st.sampled_from(["numbers", "names", "mixed"]))
    doc_ids = [str(d + 1) if ids == "numbers" or (ids == "mixed" and d % 2) else f"d{d}" for d in range(D)]
    arrays.update(phi=rng.dirichlet(np.ones(V), K), theta=rng.dirichlet(np.ones(K), D), alpha=np.full(K, 0.1),
                  vocab=np.array(draw(st.permutations(WORD_POOL))[:V]), doc_ids=np.array(doc_ids))
    params = json.loads(str(arrays["params"]))
    params.update(n_topics=K, n_words=V, n_docs=D)
    return arrays, params


def model_bytes(arrays: dict, params: dict) -> bytes:
    import json

    return npz_bytes({**arrays, "params": np.str_(json.dumps(params))})


@st.composite
def link(draw, shas: list[str]):
    """A params entry naming a parent file (a warm start's, an alignment's, a lineage's): often
    one of ``shas`` (files before it), with values right, wrong or missing."""
    sha = draw(st.sampled_from(shas)) if shas and draw(st.booleans()) else "".join(draw(st.lists(
        st.sampled_from(HEX), min_size=64, max_size=64)))
    entry = {"path": draw(st.sampled_from(["m0.npz", "gone.npz", "x"])), "sha256": sha, "method": "cgs",
             "n_topics": draw(st.integers(0, 5))}
    for key in draw(st.lists(st.sampled_from(["path", "sha256", "method", "n_topics"]), max_size=1)):
        entry.pop(key)
    return entry


@st.composite
def history_inputs(draw):
    """A folder of small models a schedule of retrains might leave (each maybe warm-started from,
    aligned to or descended from another, by SHA-256, with descents, orders and lists right or
    wrong), with other files beside them and modification times of any order, read by
    ``ldacli history`` as a folder, a pattern or a list of paths."""
    import hashlib

    files: dict[str, bytes] = {}
    shas: list[str] = []
    for i in range(draw(st.integers(1, 4))):
        arrays, params = draw(model_arrays())
        K = arrays["phi"].shape[0]
        if shas and draw(st.booleans()):
            ws = draw(link(shas))
            ws["descent"] = draw(st.lists(st.none() | st.integers(-1, 5), min_size=K, max_size=K) | st.lists(
                st.none() | st.integers(0, 4), max_size=6))
            ws["added"] = [k for k, d in enumerate(ws["descent"]) if d is None]
            ws["removed"] = draw(st.lists(st.integers(0, 5), max_size=3))
            for key in draw(st.lists(st.sampled_from(["descent", "added", "removed"]), max_size=1)):
                ws.pop(key)
            params["warm_start"] = ws
            params["lineage"] = [ws] + draw(st.lists(link(shas), max_size=2))
        if shas and draw(st.booleans()):
            aligned = draw(link(shas))
            aligned["order"] = draw(st.permutations(list(range(K))).map(list) | st.lists(st.integers(-1, 5), max_size=5)
                                    | ODD_JSON)
            params["aligned_to"] = aligned
        if draw(st.integers(0, 9)) == 0:
            params[draw(st.sampled_from(["warm_start", "aligned_to", "lineage", "topic_names"]))] = draw(ODD_JSON)
        data = model_bytes(arrays, params)
        if draw(st.integers(0, 9)) == 0:
            data = draw(mutate_bytes(data))
        files[f"m{i}.npz"] = data
        shas.append(hashlib.sha256(data).hexdigest())
    extras = {"notes.txt": b"not a model", ".m9.npz": files["m0.npz"], "x.npz": b"PK\x03\x04 not really",
              "inferred.npz": npz_bytes(own_file_templates()["inference"]), "copy.npz": files["m0.npz"]}
    for name in draw(st.lists(st.sampled_from(sorted(extras)), max_size=2, unique=True)):
        files[name] = extras[name]
    mtimes = {name: draw(st.integers(0, 3)) for name in files}
    given = draw(st.sampled_from(["folder", "pattern", "paths"]))
    paths = draw(st.lists(st.sampled_from(sorted(files)), min_size=1, max_size=5)) if given == "paths" else []
    options = draw(st.lists(st.sampled_from([("--order", "given"), ("--format", "json"), ("--format", "tsv"),
                                             ("--format", "csv"), ("--format", "jsonl"), ("--threshold", "0.2"),
                                             ("--max-drift", "0.05"), ("-n", "2")]), max_size=3))
    return "history", {"files": files, "mtimes": mtimes, "given": given, "paths": paths,
                       "options": [o for pair in options for o in pair]}


VALID_DATES = ("2024-01-05", "2024-02-29", "2024-W10-2", "2020-W53-7", "2024-065", "2024-366", "2024", "20240305",
               "2024-03-05T23:30:00-05:00", "2024-03-05T24:00", "2024-03-05 10:30Z", "9999-12-31", "0001-01-01")
DATE_POOL = ("2024-01-05", "2024-02-29", "2023-02-29", "2024-W10-2", "2024-W53", "2020-W53-7", "2024-065", "2024-366",
             "2024", "2024-13", "20240305", "2024-03-05T23:30:00-05:00", "2024-03-05T24:00", "2024-03-05T24:01",
             "2024-03-05 10:30Z", "9999-12-31", "0001-01-01", "0000-01-01", "yesterday", "", "１２３４", "2024-03-05T10:30:00+25:00")


@st.composite
def trends_inputs(draw):
    """A model (or an inference file) and a dates file for it, in every form (one a line, keyed
    by id with tabs or commas, a header or none), with dates right and wrong, too few or too
    many, maybe corrupted or gzipped; and maybe a table written before to --append to."""
    arrays, params = draw(model_arrays())
    if draw(st.integers(0, 4)) == 0:
        source = npz_bytes(own_file_templates()["inference"])
        ids = [str(d) for d in own_file_templates()["inference"]["doc_ids"]]
    else:
        source = model_bytes(arrays, params)
        ids = [str(d) for d in arrays["doc_ids"]]
    form = draw(st.sampled_from(["lines", "lines", "tsv", "csv"]))
    n = max(0, len(ids) + draw(st.sampled_from([0, 0, 0, 0, 0, -1, 1, 3, len(ids) + 1])))
    dates = [draw(st.sampled_from(VALID_DATES)) if draw(st.integers(0, 19)) else draw(st.sampled_from(DATE_POOL))
             for _ in range(n)]
    if form == "lines":
        text = ("date\n" if draw(st.booleans()) else "") + "\n".join(dates) + "\n"
        name = "dates.txt"
    else:
        sep = "\t" if form == "tsv" else ","
        keyed = [draw(st.sampled_from(ids + ["zz", "0", "x" * 300])) if draw(st.integers(0, 19)) == 0 else
                 (ids[i] if i < len(ids) else f"extra{i}") for i in range(n)]
        head = draw(st.sampled_from(["", f"id{sep}date\n", f"doc_id{sep}author{sep}date\n", f"date{sep}id\n"]))
        rows = [f"{d}{sep}me{sep}{t}" if "author" in head else f"{t}{sep}{d}" if head.startswith("date") else f"{d}{sep}{t}"
                for d, t in zip(keyed, dates)]
        text = head + "\n".join(rows) + "\n"
        name = "dates.csv" if form == "csv" else "dates.tsv"
    data = draw(mutate_text(text)) if draw(st.integers(0, 3)) == 0 else text.encode("utf-8")
    if draw(st.integers(0, 4)) == 0:
        data, name = gzip.compress(data, mtime=0), name + ".gz"
    by = draw(st.sampled_from(["day", "week", "month", "quarter", "year"]))
    table = None
    if draw(st.integers(0, 2)) == 0:
        fmt = draw(st.sampled_from(["tsv", "csv", "jsonl"]))
        rows = draw(st.lists(st.sampled_from(["2024-03\t2024-03-01\t0\t\t3\t0.5\t0.1", "2024-03-05\t2024-03-05\t1\tn\t1\t0.5\t",
                                              "2024-Q1\t2024-01-01\t0\t\tmany\t0.5\t", "x" * 200_000,
                                              "2024\t2024-01-01\t0\t\t2\tnan\t0.1", "[" * 3000 + "]" * 3000]),
                             max_size=3))
        header = "period\tstart\ttopic\tname\tdocuments\tshare\tse"
        if fmt == "jsonl":
            import json
            body = "\n".join(json.dumps(dict(zip(header.split("\t"), r.split("\t")))) if "\t" in r else r for r in rows)
        else:
            body = "\n".join([header] + rows)
            body = body.replace("\t", ",") if fmt == "csv" else body
        table = (f"shares.{fmt}", draw(mutate_text(body + "\n")) if draw(st.booleans()) else (body + "\n").encode())
    return "trends", {"source": source, "dates": (name, data), "by": by, "table": table,
                      "format": draw(st.sampled_from(["text", "json", "tsv", "csv", "jsonl"]))}


_SELECT_K: dict[str, bytes] = {}
SELECT_K_SETTINGS = {"iterations": 2, "threads": 1}


def select_k_corpus():
    from ldacli.corpora.synthetic import generate

    return generate(12, 2, 10, doc_length=8, seed=3).corpus.without_unused_words()[0]


def select_k_templates() -> dict[str, bytes]:
    """The files a finished select-k leaves in its folder (one pair, K=2), and a checkpoint of
    that pair under way."""
    if not _SELECT_K:
        from ldacli.scoring.fixed_topics import holdout_split

        corpus = select_k_corpus()
        with tempfile.TemporaryDirectory() as folder:
            ldacli.select_k(corpus, [2], seeds=1, seed=1, output=folder, **SELECT_K_SETTINGS)
            train, _, _ = holdout_split(corpus, 0.1, seed=1)
            ldacli.train(train, 2, seed=1, iterations=1, threads=1, checkpoint=os.path.join(folder, "k2-s1.checkpoint.npz"))
            for name in os.listdir(folder):
                with open(os.path.join(folder, name), "rb") as f:
                    _SELECT_K[name] = f.read()
    return _SELECT_K


@st.composite
def select_k_inputs(draw):
    """select-k's folder as a killed or finished run left it, or as someone changed it: each
    pair's scores, model and checkpoint and the manifest kept, removed, corrupted, swapped for
    JSON of other shapes (nested deeply, with values of the wrong type) or for a pipe, a device
    or a folder; then select-k runs in it again, with the same settings or others."""
    import json

    templates = select_k_templates()
    files: dict[str, bytes | str] = {}
    for name in sorted(templates):
        how = draw(st.sampled_from(["keep", "keep", "keep", "drop", "bytes", "json", "special"]))
        if how == "keep":
            files[name] = templates[name]
        elif how == "bytes":
            files[name] = draw(mutate_bytes(templates[name]))
        elif how == "json" and name.endswith(".json"):
            value = json.loads(templates[name])
            if isinstance(value, dict) and value and draw(st.booleans()):
                for key in draw(st.lists(st.sampled_from(sorted(value)), min_size=1, max_size=3)):
                    value[key] = draw(ODD_JSON)
            else:
                value = draw(ODD_JSON)
            text = json.dumps(value) if draw(st.integers(0, 5)) else "[" * 100_000 + "]" * 100_000
            files[name] = text.encode()
        elif how == "special":
            files[name] = draw(st.sampled_from(["fifo", "/dev/zero", "folder"]))
    run = draw(st.sampled_from([{"n_topics": [2], "seeds": 1, "seed": 1}, {"n_topics": [2], "seeds": 1, "seed": None},
                                {"n_topics": [2, 3], "seeds": 1, "seed": 1}, {"n_topics": [2], "seeds": 2, "seed": 1}]))
    return "selectk", {"files": files, "run": run}


@st.composite
def regexes(draw):
    """Regular expressions of the parts token patterns are made of, nested: classes, groups
    (capturing, atomic, lookarounds), alternations and every kind of repeat."""
    atoms = st.sampled_from(["a", "b", "-", "'", "!", ".", r"\w", r"\d", r"\s", r"\S", "[a-z]", "[^\\W_]", "[ab]",
                             "[^a]", r"\b", "^", "$", r"\.", "[-']"])
    quantifiers = st.sampled_from(["", "", "*", "+", "?", "{1,3}", "{2,}", "{0,5}", "*?", "+?", "*+", "++", "{3}"])

    def extend(inner):
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map("|".join),
            st.tuples(st.sampled_from(["(?:", "(", "(?>", "(?=", "(?!"]), inner).map(lambda t: t[0] + t[1] + ")"),
            st.tuples(inner, quantifiers).map(lambda t: (f"(?:{t[0]})" if len(t[0]) > 1 else t[0]) + t[1]))

    return draw(st.recursive(st.tuples(atoms, quantifiers).map("".join), extend, max_leaves=8))


@st.composite
def token_pattern_inputs(draw):
    """A received model whose recorded token pattern is any regular expression of
    :func:`regexes`, and texts it must tokenize quickly when the model is not refused: words
    of the letters, digits and punctuation the patterns name, long runs of them, and runs that
    end in a character nothing matches (where backtracking shows)."""
    pattern = draw(st.sampled_from(["{}", "{}", "{}!", "{}[a-z]", "[a-z]{}", "(?:{})+!"])).format(draw(regexes()))
    probes = draw(st.lists(st.text(alphabet="ab1-'!. \n", max_size=40), max_size=3))
    probes += ["a" * 32 + "!", "ab" * 16 + "!", "1" * 32 + "x", "a-" * 16 + "!", "aa'" * 10 + "-", " ".join(["ab"] * 20)]
    return "pattern", {"pattern": pattern, "probes": probes, "lowercase": draw(st.booleans()),
                       "addresses": draw(st.sampled_from(["drop", "keep", "split"]))}


class _TookTooLong(BaseException):
    """The time a family's input may take is over (raised from a timer's signal)."""


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise :class:`_TookTooLong` in this (main) thread after ``seconds``: a reader that hangs, or
    a pattern that backtracks without bound, fails the input instead of the run."""
    def expired(signum, frame):
        raise _TookTooLong()

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# How long an input of these families may take (a pattern's texts are short; the rest run a command).
TIME_LIMITS = {"pattern": 5.0, "history": 60.0, "trends": 60.0, "selectk": 60.0}


def _cli(args: list) -> str | None:
    """Run ldacli with ``args`` (quiet); None when it succeeded (or exited 3), the template of its
    one-line error for exit 1 or 2; :class:`NotOurError` for a traceback, another exit code or
    an error of more than one line."""
    from click.testing import CliRunner

    from ldacli.cli import main

    result = CliRunner().invoke(main, [str(a) for a in args] + ["-q"])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise NotOurError(f"{args[0]}: {type(result.exception).__name__}: {result.exception} "
                          f"({_where(result.exc_info[2])})")
    err = result.stderr_bytes.decode("utf-8", "replace")
    if result.exit_code not in (0, 1, 2, 3):
        raise NotOurError(f"{args[0]}: exit code {result.exit_code}: {err[:300]}")
    if result.exit_code in (1, 2):
        if len(err.strip().splitlines()) != 1:
            raise NotOurError(f"{args[0]}: an error of {len(err.strip().splitlines())} lines: {err[:300]!r}")
        return template(err)
    return None


def _write_files(folder: str, files: dict) -> None:
    """``files`` (name -> bytes, or "fifo", "/dev/zero", "folder") into ``folder``."""
    for name, data in files.items():
        path = os.path.join(folder, name)
        if data == "fifo":
            os.mkfifo(path)
        elif data == "/dev/zero":
            os.symlink("/dev/zero", path)
        elif data == "folder":
            os.mkdir(path)
        else:
            with open(path, "wb") as f:
                f.write(data)


def _history(spec: dict, folder: str) -> str | None:
    models = os.path.join(folder, "models")
    os.mkdir(models)
    _write_files(models, spec["files"])
    for name, step in spec["mtimes"].items():
        os.utime(os.path.join(models, name), (1e9 + 86400 * step,) * 2)
    given = {"folder": [models], "pattern": [os.path.join(models, "m*.npz")],
             "paths": [os.path.join(models, p) for p in spec["paths"]]}[spec["given"]]
    return _cli(["history", *given, *spec["options"]])


def _trends(spec: dict, folder: str) -> str | None:
    source = os.path.join(folder, "m.npz")
    name, data = spec["dates"]
    _write_files(folder, {"m.npz": spec["source"], name: data})
    args = ["trends", source, "--dates", os.path.join(folder, name), "--by", spec["by"]]
    if spec["table"] is not None:
        table, content = spec["table"]
        if content is not None:
            _write_files(folder, {table: content})
        return _cli(args + ["-o", os.path.join(folder, table), "--append"])
    return _cli(args + ["--format", spec["format"]])


def _select_k(spec: dict, folder: str) -> None:
    output = os.path.join(folder, "sk")
    os.mkdir(output)
    _write_files(output, spec["files"])
    run = spec["run"]
    result = ldacli.select_k(select_k_corpus(), run["n_topics"], seeds=run["seeds"], seed=run["seed"], output=output,
                             **SELECT_K_SETTINGS)
    if len(result["table"]) != len(run["n_topics"]) or result["seed"] is None:
        raise NotOurError("select-k: a result without its table or seed")


def _pattern(spec: dict, folder: str) -> None:
    import json

    arrays = dict(own_file_templates()["model"])
    params = json.loads(str(arrays["params"]))
    params.update(token_pattern=spec["pattern"], corpus_format="text", lowercase=spec["lowercase"],
                  addresses=spec["addresses"], min_token_length=1, numbers="keep")
    path = os.path.join(folder, "m.npz")
    with open(path, "wb") as f:
        f.write(model_bytes(arrays, params))
    tokenizer = ldacli.load_model(path).tokenizer  # refused, or run on every text as infer runs it
    for text in spec["probes"]:
        tokens = tokenizer(text)
        if not all(isinstance(t, str) and t for t in tokens):
            raise NotOurError(f"pattern {spec['pattern']!r}: tokens {tokens!r:.100} of {text!r}")


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
        if kind == "names":
            return _show_names(spec, folder)
        if kind in TIME_LIMITS:
            return _within_time(kind, spec, folder)
        import ldacli.files.fileio

        cap = ldacli.files.fileio.MAX_LINE_BYTES
        ldacli.files.fileio.MAX_LINE_BYTES = spec.get("line_cap", cap)
        try:
            try:
                if kind == "special":
                    return _special(spec, folder)
                _read(kind, spec, folder)
                if spec.get("compressed"):
                    raise NotOurError(f"{kind}: an ldacli file with compressed members was read")
                return None
            except LdacliError as exc:
                return template(str(exc))
        except NotOurError:
            raise
        except Exception as exc:  # noqa: BLE001 - what this check exists to catch
            raise NotOurError(f"{kind}: {type(exc).__name__}: {exc}") from exc
        finally:
            ldacli.files.fileio.MAX_LINE_BYTES = cap


def _within_time(kind: str, spec: dict, folder: str) -> str | None:
    """An input of the families of issue 49, within its time (:data:`TIME_LIMITS`)."""
    try:
        with _time_limit(TIME_LIMITS[kind]):
            try:
                if kind == "history":
                    return _history(spec, folder)
                if kind == "trends":
                    return _trends(spec, folder)
                if kind == "selectk":
                    _select_k(spec, folder)
                else:
                    _pattern(spec, folder)
                return None
            except LdacliError as exc:
                return template(str(exc))
    except _TookTooLong:
        what = f"the pattern {spec['pattern']!r}" if kind == "pattern" else "an input"
        raise NotOurError(f"{kind}: {what} took more than {TIME_LIMITS[kind]:g} s") from None
    except NotOurError:
        raise
    except Exception as exc:  # noqa: BLE001 - what this check exists to catch
        raise NotOurError(f"{kind}: {type(exc).__name__}: {exc} ({_where(exc.__traceback__)})") from exc


def _where(tb) -> str:
    """Where a traceback ends: its last three frames, innermost first."""
    import traceback

    frames = traceback.extract_tb(tb)[-3:][::-1]
    return " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in frames)


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
        _short_words(read_vocab(path))
        return
    if kind.startswith("own-"):
        loader = {"model": ldacli.load_model, "checkpoint": ldacli.Checkpoint.load,
                  "inference": ldacli.Inference.load}[spec["loader"]]
        loaded = loader(path)
        if spec["loader"] == "model":  # what a model computes from its counts when read is as valid as it was
            for name in ("phi", "theta"):
                x = getattr(loaded, name)
                if not (np.all(np.isfinite(x)) and x.min(initial=0) >= 0 and np.allclose(x.sum(axis=1), 1)):
                    raise NotOurError(f"{path}: loaded, but its {name} is not a distribution")
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
    _short_words(corpus.vocab)


def _short_words(vocab) -> None:
    assert max(map(len, vocab), default=0) <= MAX_WORD_LENGTH, "a word longer than a vocabulary holds was read"


# --- hostile names: what a terminal, a pipe and a table get ---------------------------------------

# Characters a terminal acts on, or that break a line or a row, and their neighbours.
HOSTILE_CHARACTERS = ("\x1b", "\x07", "\x08", "\r", "\n", "\t", "\x00", "\x7f", "\x9b", "\x85", "\x9d", "\u202e",
                      "\u202d", "\u2066", "\u2069", "\u200e", "\u061c", "\u2028", "\u2029", "\x0b", "\x0c", "\x1c",
                      "\ufeff", "\u200d", "\udcff", '"', ",", ";", "=", "\\", "[", "]", "0", "1", "m", "J", "H", " ")
# Whole sequences: retitle the window, clear the screen, a hidden link, colour, a cursor move.
HOSTILE_SEQUENCES = ("\x1b]0;PWNED\x07", "\x1b[2J\x1b[H", "\x1b]8;;http://x.example/\x1b\\", "\x1b[31m",
                     "\x9b6n", "\x1b[1A\x1b[2K", "\x1bP+q\x1b\\")
BIDI_CONTROLS = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

hostile_texts = st.lists(st.sampled_from(HOSTILE_CHARACTERS) | st.sampled_from(HOSTILE_SEQUENCES) | words,
                         min_size=0, max_size=6).map("".join)


def raw_controls(text: str, allowed: str = "\n") -> list[str]:
    """The characters of ``text`` a terminal acts on (C0 and C1 controls, DEL, bidi controls,
    line and paragraph separators, lone surrogates), but those in ``allowed``."""
    import unicodedata

    return sorted({c for c in text if c not in allowed and (
        unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in BIDI_CONTROLS)})


def _drain(fd: int, into: list) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the slave end is closed
            return
        if not data:
            return
        into.append(data)


def on_a_terminal(main, args) -> tuple[int, str, str]:
    """Run the click command ``main`` with ``args`` with sys.stdout and sys.stderr on real
    terminals (pseudo-terminals in raw mode): (exit code, what stdout's terminal showed, what
    stderr's showed). An exception other than SystemExit propagates."""
    import pty
    import sys
    import threading
    import tty

    ends, threads, received, streams = {}, [], {}, {}
    for name in ("stdout", "stderr"):
        master, slave = pty.openpty()
        tty.setraw(slave)
        ends[name] = (master, slave)
        received[name] = []
        threads.append(threading.Thread(target=_drain, args=(master, received[name]), daemon=True))
        threads[-1].start()
        streams[name] = io.TextIOWrapper(io.FileIO(slave, "w", closefd=False), encoding="utf-8", line_buffering=True)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = streams["stdout"], streams["stderr"]
    code = 0
    try:
        main.main([str(a) for a in args], prog_name="ldacli")
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdout, sys.stderr = saved
        for name, (master, slave) in ends.items():
            streams[name].flush()
            os.close(slave)
        for t in threads:
            t.join(timeout=30)
        for master, _ in ends.values():
            os.close(master)
    shown = {name: b"".join(chunks).decode("utf-8", "replace") for name, chunks in received.items()}
    return code, shown["stdout"], shown["stderr"]


@st.composite
def hostile_name_inputs(draw):
    """A small model (own_file_templates' model) whose words, document ids, topic names and
    params hold :data:`hostile_texts`; shown on a terminal or into a pipe."""
    import json

    arrays = dict(own_file_templates()["model"])
    vocab, ids = [str(w) for w in arrays["vocab"]], [str(d) for d in arrays["doc_ids"]]
    for name, values in (("vocab", vocab), ("doc_ids", ids)):
        for i in draw(st.lists(st.integers(0, len(values) - 1), max_size=len(values), unique=True)):
            values[i] = draw(hostile_texts)
        arrays[name] = np.array(values, dtype=np.str_)
    params = json.loads(str(arrays["params"]))
    if draw(st.booleans()):
        K = arrays["phi"].shape[0]
        params["topic_names"] = draw(st.lists(st.none() | hostile_texts | words, min_size=K, max_size=K))
    for key in draw(st.lists(st.sampled_from(["corpus_source", "corpus_format", "corpus_fingerprint",
                                              "ldacli_version", "stopped", "seed_words"]), max_size=3, unique=True)):
        params[key] = draw(hostile_texts)
    if draw(st.booleans()):
        params[draw(hostile_texts)] = draw(hostile_texts)
    arrays["params"] = np.str_(json.dumps(params))
    return "names", {"data": npz_bytes(arrays), "terminal": draw(st.booleans()), "name": draw(hostile_texts)}


# The commands a hostile name reaches, and how their stdout is checked: text for people, json,
# a table of ids or words in tsv or csv, or MALLET's layout.
NAME_COMMANDS = (
    (("topics", "{m}"), "text"), (("topics", "{m}", "--format", "tsv", "-n", "50"), "tsv words"),
    (("topics", "{m}", "--format", "json"), "json"), (("info", "{m}"), "text"), (("info", "{m}", "--format", "json"), "json"),
    (("diff", "{m}", "{m}"), "text"), (("export", "{m}", "doc-topics", "-o", "-"), "tsv ids"),
    (("export", "{m}", "topic-words", "--format", "csv", "-o", "-"), "csv words"),
    (("export", "{m}", "topic-keys", "--format", "jsonl", "-o", "-"), "json lines"),
    (("export", "{m}", "doc-topics", "--format", "mallet", "-o", "-"), "mallet"),
    (("name", "{m}", "0", "{name}"), "text"),
)


def _show_names(spec: dict, folder: str) -> str | None:
    """Run :data:`NAME_COMMANDS` on the model of ``spec``; None when every one succeeded, else
    the first error's template; :class:`NotOurError` for a traceback or for what a terminal, a
    pipe or a table must not get."""
    import csv as csv_module
    import json

    from click.testing import CliRunner

    from ldacli.cli import main

    path = os.path.join(folder, "m.npz")
    with open(path, "wb") as f:
        f.write(spec["data"])
    try:
        model = ldacli.load_model(path)
    except LdacliError:
        model = None
    first_error = None
    for args, kind in NAME_COMMANDS:
        args = [a.format(m=path, name=spec["name"]) for a in args]
        where = f"{' '.join(args[:1])} ({kind}, {'terminal' if spec['terminal'] else 'pipe'})"
        if spec["terminal"]:
            try:
                code, out, err = on_a_terminal(main, args)
            except Exception as exc:  # noqa: BLE001 - a traceback: what this check exists to catch
                raise NotOurError(f"{where}: {type(exc).__name__}: {exc}") from exc
            if raw_controls(out, "\t\n") or raw_controls(err):
                raise NotOurError(f"{where}: a terminal got {raw_controls(out, chr(9) + chr(10)) + raw_controls(err)}")
        else:
            result = CliRunner().invoke(main, args)
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                raise NotOurError(f"{where}: {type(result.exception).__name__}: {result.exception}")
            # the bytes as written (Result.stdout turns \r\n into \n, inside a quoted field too)
            code, out, err = result.exit_code, result.stdout_bytes.decode("utf-8"), result.stderr_bytes.decode("utf-8")
            if raw_controls(err) or (kind in ("text", "json", "json lines") and raw_controls(out)):
                raise NotOurError(f"{where}: text for people or JSON got {raw_controls(out) + raw_controls(err)}")
        if code not in (0, 1, 2):
            raise NotOurError(f"{where}: exit code {code}")
        if code != 0:
            if len(err.strip().splitlines()) != 1:
                raise NotOurError(f"{where}: an error of {len(err.strip().splitlines())} lines: {err[:300]!r}")
            first_error = first_error or template(err)
            continue
        if model is None:
            raise NotOurError(f"{where}: succeeded on a model that does not load")
        if kind == "json":
            json.loads(out)
        elif kind == "json lines":
            [json.loads(line) for line in out.splitlines()]
        elif not spec["terminal"] and kind.startswith(("tsv", "csv")):  # a pipe: exact, every row parsing back
            rows = list(csv_module.reader(io.StringIO(out, newline=""), delimiter="\t" if kind[:3] == "tsv" else ","))
            column = rows[0].index("doc_id" if kind.endswith("ids") else "word")
            got = [row[column] for row in rows[1:]]
            if kind.endswith("ids") and got != model.doc_ids or kind.endswith("words") and not set(got) <= set(model.vocab):
                raise NotOurError(f"{where}: the table did not parse back to the model's "
                                  f"{'ids' if kind.endswith('ids') else 'words'}")
    return first_error
