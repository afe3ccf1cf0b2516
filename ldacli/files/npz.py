"""``.npz`` archives, written deterministically and read without trusting them.

Writing: members in the given order, uncompressed, with fixed timestamps, so the same arrays
give the same bytes; atomically (:func:`ldacli.files.fileio.atomic_write`).

Reading checks everything before it allocates or believes anything: the file is a zip archive;
every member is a ``.npy`` array whose header is well formed, whose dtype holds no Python
objects (nothing is ever unpickled) and whose declared size is the number of bytes the member
really holds (a header may not declare 10^11 elements that the file does not contain); each
member's CRC is checked. Any failure is an :class:`~ldacli.errors.InputError` naming the file
and saying it is damaged or not an ``.npz``, never a suggestion to allow pickles.
"""

from __future__ import annotations

import json
import math
import mmap
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from ldacli.errors import InputError
from ldacli.files.fileio import atomic_write, open_regular
from ldacli.memory import check_fits

# What a damaged archive can raise while it is read.
_DAMAGE = (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError, RuntimeError, KeyError)
# The most that deflate can expand (258 bytes from about 2 bits): a member declaring more is lying.
MAX_DEFLATE_RATIO = 1032
# A 'kind' member is a short string; anything bigger is not an ldacli file's.
_MAX_KIND_BYTES = 4096
# The bytes of a mapped array read at a time by :func:`blocks`.
BLOCK_BYTES = 8 << 20


@dataclass(frozen=True)
class StreamedArray:
    """An array written from pieces of its bytes (C order, ``dtype``'s byte order) rather than
    held whole: what :func:`write_npz_members` writes exactly as :func:`numpy.save` would write
    the array they make up."""

    dtype: np.dtype
    shape: tuple[int, ...]
    pieces: Iterable[bytes | memoryview]


def write_npz(path: str, arrays: dict[str, Any], what: str = "file") -> None:
    """Write ``arrays`` to ``path`` as an ``.npz`` whose bytes depend only on the arrays;
    ``what`` names the file's content in errors (see :func:`ldacli.files.fileio.atomic_write`)."""
    write_npz_members(path, arrays, what)


def write_npz_members(path: str, members: dict[str, Any], what: str = "file") -> None:
    """:func:`write_npz` of ``members``, arrays or :class:`StreamedArray` (written piece by
    piece into the archive: the same bytes as the whole array would give)."""
    with atomic_write(path, what=what) as f:
        zf = zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        try:
            for name, value in members.items():
                info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                with zf.open(info, "w", force_zip64=True) as member:
                    if isinstance(value, StreamedArray):
                        header = {"descr": np.lib.format.dtype_to_descr(value.dtype), "fortran_order": False,
                                  "shape": tuple(value.shape)}
                        np.lib.format.write_array_header_1_0(member, header)
                        _write_pieces(member, value.pieces)
                    else:
                        np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
        except BaseException:
            # Left unfinished (atomic_write throws the file away): closing the archive would
            # write its directory, which fails while a member is still open (a signal that
            # arrived as a member was being closed) and would hide what stopped the writing.
            zf.fp = None
            raise
        zf.close()


def _write_pieces(member: IO[bytes], pieces: Iterable[bytes | memoryview]) -> None:
    """Write ``pieces`` in order; the last one is let go on return (a piece may be a view of
    a buffer that the next array should not find still held)."""
    for piece in pieces:
        member.write(piece)


def blocks(a: np.ndarray, nbytes: int = BLOCK_BYTES) -> Iterator[np.ndarray]:
    """``a`` (1-D) as consecutive slices of about ``nbytes``, each let go (:func:`let_go`) once
    the next is asked for: an array :func:`mapped` made read through once, without the process
    holding every page of it by the end."""
    step = max(1, nbytes // max(a.itemsize, 1))
    for lo in range(0, a.shape[0], step):
        piece = a[lo:lo + step]
        yield piece
        let_go(piece)


def let_go(a: np.ndarray) -> None:
    """Unmap from this process the whole pages of ``a``, a contiguous view of an array
    :func:`mapped` made (nothing for another array, nor for a writable map, whose changes this
    would lose): a map holds each page it has read until it is closed, so an array read once
    through it would count whole in the process's memory. The pages stay in the page cache,
    shared and reclaimable, and are read again if ``a`` is."""
    if a.flags.writeable or not a.flags.c_contiguous or not a.nbytes or not hasattr(mmap, "MADV_DONTNEED"):
        return
    base = a
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    if base is None:
        return
    lo = a.ctypes.data - np.frombuffer(base, np.uint8, count=1).ctypes.data
    first, end = -(-lo // mmap.PAGESIZE) * mmap.PAGESIZE, (lo + a.nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > first:
        base.madvise(mmap.MADV_DONTNEED, first, end - first)


def mapped(path: str, names: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Read-only memory maps of the arrays ``names`` (and of those of ``optional`` that it holds)
    of the uncompressed ``.npz`` at ``path`` (one :func:`write_npz` wrote, or one read and
    checked already whose sha256 says it is unchanged): nothing is read into memory until it is
    used, and then only the pages used. Trusts the file (use :func:`read_npz` for one from
    elsewhere)."""
    out = {}
    with open(path, "rb") as f, zipfile.ZipFile(f) as zf:
        held = set(zf.namelist())
        for name in names + tuple(n for n in optional if n + ".npy" in held):
            info = zf.getinfo(name + ".npy")
            f.seek(info.header_offset)
            local = f.read(zipfile.sizeFileHeader)
            name_length, extra_length = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
            f.seek(info.header_offset + zipfile.sizeFileHeader + name_length + extra_length)
            shape, fortran, dtype = _header(f)
            if math.prod(shape) == 0:
                out[name] = np.zeros(shape, dtype)
                continue
            out[name] = np.memmap(f, dtype=dtype, mode="r", offset=f.tell(), shape=shape, order="F" if fortran else "C")
    return out


def _header(member) -> tuple[tuple[int, ...], bool, np.dtype]:
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(member)
    if version in ((2, 0), (3, 0)):
        return np.lib.format.read_array_header_2_0(member)
    raise ValueError(f"unknown .npy version {version}")


def read_npz(path: str, what: str = "an .npz file", file: IO[bytes] | None = None,
             members: tuple[str, ...] | None = None, compressed: bool = False,
             leave_out: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """All arrays of the ``.npz`` at ``path`` (or in ``file``, then ``path`` only names it), or
    only those named in ``members``, but those in ``leave_out`` (never read), each checked as the module docstring says; ``what`` is what
    errors say was expected. A compressed member is refused (ldacli writes none: its size could
    not be known before it is decompressed), or with ``compressed`` (a corpus another tool
    wrote, ``scipy.sparse.save_npz``) read when deflate could have made it (a ratio of at most
    :data:`MAX_DEFLATE_RATIO`) and what all the members declare fits in memory."""
    if file is None:
        with open_regular(path) as f:
            return read_npz(path, what, f, members, compressed, leave_out)
    try:
        zf = zipfile.ZipFile(file)
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    except _DAMAGE:
        raise InputError(path, None, f"expected {what} (a zip archive of arrays), found another kind of "
                                     f"file, or a truncated or damaged one") from None
    def read(key: str) -> bool:
        return (members is None or key in members) and key not in leave_out

    arrays = {}
    with zf:
        _check_compression(path, [info for info in zf.infolist() if read(info.filename[:-4])], compressed)
        for info in zf.infolist():
            name = info.filename
            if not name.endswith(".npy"):
                raise InputError(path, None, f"expected only .npy arrays in the archive, found {name!r}")
            key = name[:-4]
            if not read(key):
                continue
            try:
                with zf.open(info) as member:
                    shape, fortran, dtype = _header(member)
                    held = info.file_size - member.tell()
                if dtype.hasobject:
                    raise InputError(path, None, f"expected '{key}' as numbers or text, found an array of Python "
                                                 f"objects, which ldacli never loads")
                declared = math.prod(shape) * dtype.itemsize
                if declared != held:
                    raise InputError(path, None, f"damaged: array '{key}' declares shape {shape} of {dtype} "
                                                 f"({declared} bytes) but holds {held} bytes")
                with zf.open(info) as member:
                    arrays[key] = np.lib.format.read_array(member, allow_pickle=False)
                    member.read()  # to the end, where the CRC is checked
            except InputError:
                raise
            except OSError as exc:
                raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
            except _DAMAGE as exc:
                raise InputError(path, None, f"damaged: array '{key}' cannot be read ({_reason(exc)})") from None
    return arrays


def _check_compression(path: str, infos: list[zipfile.ZipInfo], compressed: bool) -> None:
    """Refuse what the members ``infos`` could decompress to before any is read (see
    :func:`read_npz`)."""
    for info in infos:
        key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        if info.compress_type == zipfile.ZIP_STORED:
            continue
        if not compressed:
            raise InputError(path, None, f"expected uncompressed arrays, as ldacli writes them, found '{key}' "
                                         f"compressed (its size is only known once decompressed)")
        if info.compress_type != zipfile.ZIP_DEFLATED:
            raise InputError(path, None, f"expected arrays stored or deflated (as numpy writes them), found "
                                         f"'{key}' compressed by method {info.compress_type}")
        if info.file_size > MAX_DEFLATE_RATIO * max(info.compress_size, 1):
            raise InputError(path, None, f"damaged: array '{key}' declares {info.file_size} bytes from "
                                         f"{info.compress_size} compressed, more than deflate can give "
                                         f"({MAX_DEFLATE_RATIO}:1)")
    if any(info.compress_type != zipfile.ZIP_STORED for info in infos):  # a stored one holds what it declares
        check_fits(f"{path}: the arrays it declares", sum(info.file_size for info in infos))


def file_kind(file: IO[bytes]) -> str | None:
    """The ``kind`` of the ldacli file (model, checkpoint, inference, shard index) in the
    seekable ``file``; None for any other archive or file. Reads only the archive's member list
    and the small ``kind`` member, never the arrays."""
    try:
        with zipfile.ZipFile(file) as zf:
            try:
                info = zf.getinfo("kind.npy")
            except KeyError:
                return None
            if info.file_size > _MAX_KIND_BYTES:
                return None
            with zf.open(info) as member:
                value = np.lib.format.read_array(member, allow_pickle=False)
    except (*_DAMAGE, OSError):
        return None
    return str(value.item()) if value.ndim == 0 and value.dtype.kind == "U" else None


def kind_at(path: str) -> str | None:
    """:func:`file_kind` of the file at ``path``, or None when it cannot be told (a missing file,
    a folder: the loader then reports what is wrong with it)."""
    try:
        with open_regular(path) as f:
            return file_kind(f)
    except InputError:
        return None


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return "its checksum does not match: bytes were changed" if "CRC" in text else text


def read_file(path: str, kind: str, versions: tuple[int, ...], members: tuple[str, ...] | None = None,
              leave_out: tuple[str, ...] = ()) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays (those in ``members``, or all, but those in ``leave_out``) and the parsed ``params`` of an ldacli file of
    ``kind`` in one of ``versions``.

    Checks ``kind`` (a string), ``format_version`` (an integer among ``versions``) and
    ``params`` (a JSON object); the arrays themselves are the caller's to check.
    """
    arrays = read_npz(path, f"an ldacli {kind} (.npz)", members=members, leave_out=leave_out)
    if "kind" not in arrays or "format_version" not in arrays:
        raise InputError(path, None, f"expected an ldacli {kind} (.npz with 'kind' and 'format_version'), "
                                     f"found another .npz")
    found = scalar(path, arrays, "kind", "U")
    if found != kind:
        raise InputError(path, None, f"expected an ldacli {kind}, found {'an' if found[:1] in 'aeiou' else 'a'} "
                                     f"{found}")
    version = scalar(path, arrays, "format_version", "iu")
    if version not in versions:
        raise InputError(path, None, f"expected format version {' or '.join(map(str, versions))}, "
                                     f"found {version} (written by another ldacli version)")
    if "params" not in arrays:
        raise InputError(path, None, f"expected arrays params in this {kind}, found none")
    return arrays, json_object(path, arrays, "params", dict)


def scalar(path: str, arrays: dict, name: str, kinds: str):
    """The 0-d array ``name`` as a Python value, checked to be of a dtype kind in ``kinds``
    (``"U"`` text, ``"iu"`` integers, ``"f"`` floats; integers are accepted as floats)."""
    if name not in arrays:
        raise InputError(path, None, f"expected an array '{name}', found none")
    value = arrays[name]
    ok = value.ndim == 0 and (value.dtype.kind in kinds or (kinds == "f" and value.dtype.kind in "iu"))
    if not ok:
        what = {"U": "text", "iu": "an integer", "f": "a number"}[kinds]
        raise InputError(path, None, f"expected '{name}' as {what}, found {value.dtype} of shape {value.shape}")
    return value.item()


def json_object(path: str, arrays: dict, name: str, kind: type):
    """The JSON text in the 0-d array ``name``, parsed, checked to be a ``kind`` (dict or list)."""
    text = scalar(path, arrays, name, "U")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"expected JSON in '{name}', found invalid text ({exc})") from None
    except RecursionError:
        raise InputError(path, None, f"expected JSON in '{name}', found values nested too deeply") from None
    if not isinstance(value, kind):
        raise InputError(path, None, f"expected a JSON {'object' if kind is dict else 'list'} in '{name}', "
                                     f"found {type(value).__name__}")
    return value


def array(path: str, arrays: dict, name: str, kinds: str, shape: tuple, *, minimum: float | None = None,
          positive: bool = False) -> np.ndarray:
    """The array ``name``: its dtype kind in ``kinds``, its shape ``shape`` (None entries: any
    size), and for numbers finite and at least ``minimum`` (above 0 with ``positive``)."""
    if name not in arrays:
        raise InputError(path, None, f"expected an array '{name}', found none")
    value = arrays[name]
    if value.ndim != len(shape) or any(s is not None and s != v for s, v in zip(shape, value.shape)):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + (",)" if len(shape) == 1 else ")")
        raise InputError(path, None, f"expected '{name}' of shape {want}, found shape {value.shape}")
    if value.dtype.kind not in kinds and not (kinds == "f" and value.dtype.kind in "iu"):
        what = {"U": "text", "iu": "integers", "f": "numbers"}[kinds]
        raise InputError(path, None, f"expected '{name}' as {what}, found {value.dtype}")
    if kinds in ("f", "iu") and value.size:
        if kinds == "f" and not np.all(np.isfinite(value)):
            raise InputError(path, None, f"expected finite numbers in '{name}', found NaN or infinity")
        low = float(value.min())
        if positive and low <= 0:
            raise InputError(path, None, f"expected '{name}' > 0, found {low:g}")
        if minimum is not None and low < minimum:
            raise InputError(path, None, f"expected '{name}' >= {minimum:g}, found {low:g}")
    if kinds == "U" and value.size:
        _check_text(path, name, value)
    return value


# Entries of a text array checked at a time (_check_text)
TEXT_CHUNK = 1 << 16


def _check_text(path: str, name: str, value: np.ndarray) -> None:
    """Refuse text that no UTF-8 output can carry (a lone surrogate: ldacli never writes one)."""
    flat = value.ravel()
    for lo in range(0, flat.size, TEXT_CHUNK):  # (a chunk at a time: a list of a million ids holds 60 MB)
        try:
            "".join(flat[lo:lo + TEXT_CHUNK].tolist()).encode("utf-8")
        except UnicodeEncodeError:
            at = lo + next(i for i, t in enumerate(flat[lo:lo + TEXT_CHUNK].tolist()) if not _is_utf8(t))
            raise InputError(path, None, f"expected text in '{name}', found a lone surrogate in entry {at}") from None


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
