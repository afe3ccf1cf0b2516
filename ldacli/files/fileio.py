"""Low-level file handling shared by the readers and writers.

* :func:`atomic_write` writes a file so that readers see either the old file or the complete
  new one, never a half-written file, and leaves no temporary file behind when it fails;
  :func:`atomic_folder` does the same for a folder of files; :func:`stale_temporaries` finds
  those of runs that were killed.
* :class:`Source` opens a named input (a path, or ``-`` for standard input) as a binary stream,
  decompressing gzip transparently (recognised by its magic bytes, whatever the name).
* :func:`iter_blocks` and :func:`iter_lines` stream a :class:`Source` in whole lines with their
  1-based line numbers, turning every read or decompression failure into an
  :class:`~ldacli.errors.InputError` that names the file and the line being read;
  :func:`read_line` reads one line of a stream within the same bound.
* :func:`open_regular` opens an input that must be a regular file (never a device or a pipe:
  ``/dev/zero`` as a corpus or a model would be read until memory runs out); :func:`stranger`
  tells a file another user put in a folder (not one given by name) from a file of one's own.
* :func:`file_sha256` names a file by its bytes (how a model names its parent).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, BinaryIO

from ldacli.errors import InputError, OutputError

GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
BLOCK_SIZE = 1 << 20

# What can go wrong while reading a (possibly gzipped) stream: OSError covers I/O errors and
# gzip.BadGzipFile; EOFError a truncated gzip stream; zlib.error corrupt compressed data.
READ_ERRORS = (OSError, EOFError, zlib.error)

_umask: int | None = None


def _current_umask() -> int:
    """The process umask, read without changing it where the platform allows."""
    global _umask
    if _umask is None:
        try:
            with open("/proc/self/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("Umask:"):
                        _umask = int(line.split()[1], 8)
                        break
        except (OSError, ValueError, IndexError):
            pass
        if _umask is None:
            _umask = os.umask(0o022)
            os.umask(_umask)
    return _umask


def _fsync_directory(folder: str) -> None:
    """Best effort: make a rename in ``folder`` durable (not supported everywhere)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The longest line a reader holds (a document of a text corpus, an LDA-C document): a file of one
# 200 MB line took 4 GB to read. 16 MiB is a few million words, more than any document.
MAX_LINE_BYTES = 16 << 20

# Temporary files are named ".NAME.<8 random characters>.tmp" beside the target NAME.
TEMP_PATTERN = r"\.{name}\.[a-z0-9_]{{8}}\.tmp"


def _replaced_mode(target: str, default: int) -> int:
    """The permission bits a file written over ``target`` gets: those of the regular file there
    now (a 0600 model stays 0600 when it is retrained or renamed), else ``default``."""
    try:
        st = os.lstat(target)
    except OSError:
        return default
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else default


def _check_in_place(target: str, fd: int) -> None:
    """``target`` (a temporary file before it is renamed, the output after) must be the file
    open as ``fd``. Another user who can write the folder can rename or replace names in it: say
    so rather than give our file their permissions or report a success that is not ours."""
    try:
        there, ours = os.lstat(target), os.fstat(fd)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror} after it was written (another user may have removed it: "
                                 f"is the folder writable by others?)") from None
    if (there.st_dev, there.st_ino) != (ours.st_dev, ours.st_ino):
        raise OSError(0, "it was replaced by another file as it was written (another user can rename files in "
                         "its folder: write to a folder only you can write, or one with the sticky bit)")


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", what: str = "file") -> Iterator[IO]:
    """Open ``path`` for writing so that it appears complete or not at all.

    Yields a file object (binary for ``mode="wb"``, UTF-8 text with ``\\n`` line ends for
    ``mode="w"``) on a temporary file ``.NAME.XXXXXXXX.tmp`` in the target's folder, created
    with ``O_EXCL | O_NOFOLLOW`` (mode 0600). When the block ends normally the file is flushed,
    fsynced, given its permissions through its descriptor (those of the file it replaces, else
    0666 minus the umask; never by name: in a folder others can write, the name may have become
    a symbolic link by then) and renamed over ``path`` with :func:`os.replace`; the file at
    ``path`` is then checked to be ours, and the folder fsynced (best effort). When anything
    fails -- the block, the flush on a full disk, another user's renaming -- the temporary file
    is removed, ``path`` is left untouched (unless another user replaced it), and an
    :class:`OutputError` names ``path`` (never the temporary file) and ``what`` was being written
    (``"model"``, ``"checkpoint"``, ...); other exceptions from the block propagate unchanged.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode: expected 'wb' or 'w', found {mode!r}")
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    kwargs = {"encoding": "utf-8", "newline": "\n"} if mode == "w" else {}
    tmp, fd = None, -1
    held = _hold_stop_signals()
    try:
        try:
            tmp = tempfile.NamedTemporaryFile(mode, dir=folder, prefix=f".{os.path.basename(target)}.",
                                              suffix=".tmp", delete=False, **kwargs)
        except OSError as exc:
            raise OutputError(target, what, exc) from None
        finally:
            # a SIGTERM or Ctrl-C that came while the file was made, before its name was known
            # here, is raised from now on, where the name is removed
            _release_stop_signals(held)
        yield tmp
        tmp.flush()
        fd = os.dup(tmp.fileno())  # kept past the close: the file is checked by it after the rename
        os.fsync(fd)
        tmp.close()
        _check_in_place(tmp.name, fd)  # still 0600 if another user has moved it: readable by us alone
        os.fchmod(fd, _replaced_mode(target, 0o666 & ~_current_umask()))
        os.replace(tmp.name, target)
        _check_in_place(target, fd)
    except BaseException as exc:
        if tmp is None:
            raise
        with contextlib.suppress(OSError, ValueError):
            tmp.close()  # flushes again, which fails again on a full disk: never mind
        if not tmp.closed:  # the close failed half-way: release the descriptor anyway
            with contextlib.suppress(OSError):
                os.close(tmp.fileno())
        if fd < 0 or same_file(tmp.name, fd):  # never a file another user put at its name
            with contextlib.suppress(OSError):
                os.unlink(tmp.name)
        if fd >= 0:
            os.close(fd)
        if isinstance(exc, OSError):
            raise OutputError(target, what, exc.strerror or str(exc)) from None
        raise
    os.close(fd)
    _fsync_directory(folder)


def _hold_stop_signals():
    """Hold SIGINT and SIGTERM back from this thread (where the platform can): while a temporary
    file is made, a stop raised between its creation and its name reaching the caller would
    leave it behind. Returns what :func:`_release_stop_signals` restores."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _release_stop_signals(held) -> None:
    """Undo :func:`_hold_stop_signals`: a signal that came meanwhile is handled now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def same_file(name: str, fd: int) -> bool:
    """Whether the name ``name`` (not followed) is the file open as ``fd``: what is checked before
    removing a name that another user could have replaced."""
    try:
        there, held = os.lstat(name), os.fstat(fd)
    except OSError:
        return False
    return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike[str], what: str = "folder", replaces: str = "") -> Iterator[str]:
    """:func:`atomic_write` for a folder of files: yields a temporary folder
    ``.NAME.XXXXXXXX.tmp`` beside ``path`` (mode 0700 while it is written) to write the files
    into (each one fsynced by the caller's writes being closed); when the block ends normally it
    becomes ``path``, its permissions set through a descriptor opened with ``O_NOFOLLOW``. An
    existing ``path`` is replaced only if it holds the file ``replaces`` (a folder this writer made
    before); it is renamed away first and removed after, so a crash in between leaves the old
    folder as ``.NAME.XXXXXXXX.tmp``, swept by the next run that locks ``path``. On failure the
    temporary folder is removed and an :class:`OutputError` names ``path``."""
    target = os.fspath(path).rstrip(os.sep) or os.sep
    parent = os.path.dirname(os.path.abspath(target))
    name = os.path.basename(os.path.abspath(target))
    if os.path.lexists(target) and not (os.path.isdir(target) and not os.path.islink(target) and replaces
                                        and os.path.isfile(os.path.join(target, replaces))):
        raise OutputError(target, what, "it exists and is not one written by ldacli: "
                                        "refusing to replace it (remove it, or choose another name)")
    tmp, fd = None, -1
    held = _hold_stop_signals()
    try:
        try:
            tmp = tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=parent)
        except OSError as exc:
            raise OutputError(target, what, exc) from None
        finally:
            _release_stop_signals(held)  # a stop that came meanwhile is raised here: tmp is known
        fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        yield tmp
        for entry in os.listdir(fd):
            efd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                os.fsync(efd)
            finally:
                os.close(efd)
        os.fchmod(fd, 0o777 & ~_current_umask())
        old = None
        if os.path.lexists(target):
            old = tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=parent)
            os.replace(target, old)
        os.replace(tmp, target)
        _check_in_place(target, fd)
    except BaseException as exc:
        if tmp is None:
            raise
        if fd < 0 or same_file(tmp, fd):
            shutil.rmtree(tmp, ignore_errors=True)
        if fd >= 0:
            os.close(fd)
        if isinstance(exc, OSError):
            raise OutputError(target, what, exc.strerror or str(exc)) from None
        raise
    os.close(fd)
    _fsync_directory(parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def stale_temporaries(path: str | os.PathLike[str]) -> list[str]:
    """The temporary files of :func:`atomic_write` for ``path`` left in its folder by runs that
    died before renaming them (``kill -9``, a crash): this user's only. Only call this while holding the lock on
    ``path`` (:mod:`ldacli.files.locking`), so that no live run's temporary file is among them."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    pattern = re.compile(TEMP_PATTERN.format(name=re.escape(os.path.basename(target))))
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    mine = getattr(os, "geteuid", lambda: None)()
    found = []
    for n in names:
        if pattern.fullmatch(n):
            try:
                owner = os.lstat(os.path.join(folder, n)).st_uid
            except OSError:
                continue
            if mine is None or owner == mine:  # another user's file of that name is theirs
                found.append(os.path.join(folder, n))
    return sorted(found)


_FILE_TYPES = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket"))


def open_regular(path: str | os.PathLike[str], name: str | None = None) -> BinaryIO:
    """``path`` opened for reading, binary, once it is known to be a regular file (a symbolic
    link to one is fine): a device (``/dev/zero`` never ends), a pipe or a socket is refused with
    an :class:`InputError` naming ``name`` (default ``path``) before a byte is read -- standard
    input, given as ``-``, is the way to read a pipe. Opened without blocking (a pipe with no
    writer would hang the open), then checked by descriptor."""
    path = os.fspath(path)
    name = path if name is None else name
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            found = next((what for test, what in _FILE_TYPES if test(mode)), "a special file")
            hint = " (give - to read standard input)" if found in ("a pipe", "a character device") else ""
            raise InputError(name, None, f"expected a file, found {found}{hint}")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def stranger(st: os.stat_result, folder: str) -> int | None:
    """The owner (uid) of the file whose status is ``st``, found in ``folder``, when that is
    someone this user has no reason to trust with it: neither this user, nor root, nor the
    folder's owner (who could have put anything there anyway) -- as git's ``safe.directory`` and
    OpenSSH's checks of ``~/.ssh`` do. None when the file is trusted (or the platform has no owners).
    A file another user put in a folder others can write is not one of ours, whatever its name."""
    if not hasattr(os, "geteuid"):
        return None
    trusted = {os.geteuid(), 0}
    try:
        trusted.add(os.stat(folder or os.curdir).st_uid)
    except OSError:
        pass
    return None if st.st_uid in trusted else st.st_uid


def _read_error(name: str, line: int | None, exc: BaseException, compressed: bool) -> InputError:
    """An InputError for a failure while reading ``name`` (at ``line`` when known)."""
    if compressed and not (isinstance(exc, OSError) and exc.strerror):
        return InputError(name, line, f"expected valid gzip data, found corrupt or truncated data ({exc})")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return InputError(name, line, f"cannot read: {reason}")


@dataclass(frozen=True)
class Source:
    """An input file, or standard input buffered in memory.

    ``name`` is what error messages call it (the path, or ``<stdin>``); ``path`` the file to
    open, or ``None`` when ``data`` holds the bytes read from standard input.
    """

    name: str
    path: str | None = None
    data: bytes | None = None
    # standard input read as it comes (:meth:`open_stream`): ``data`` holds its first bytes
    pipe: "_Pipe | None" = field(default=None, compare=False, repr=False)

    @classmethod
    def open(cls, path: str | os.PathLike[str], stdin: IO | None = None) -> Source:
        """A source for ``path``; ``"-"`` reads all of ``stdin`` (default ``sys.stdin``) now.

        Standard input cannot be read twice, so it is buffered whole; files are only checked
        for readability here and streamed later.
        """
        path = os.fspath(path)
        if path == "-":
            stream = stdin if stdin is not None else sys.stdin
            stream = getattr(stream, "buffer", stream)
            try:
                data = stream.read()
            except READ_ERRORS as exc:
                raise _read_error("<stdin>", None, exc, False) from None
            if isinstance(data, str):
                data = data.encode("utf-8")
            return cls("<stdin>", None, bytes(data))
        open_regular(path).close()
        return cls(path, path, None)

    @classmethod
    def open_stream(cls, stdin: IO | None = None) -> Source:
        """Standard input to be read as it comes, never held whole: its first
        :data:`STREAM_HEAD` bytes are read now (:meth:`head`, from which the format is
        detected) and :meth:`stream` then reads it all, once."""
        stream = stdin if stdin is not None else sys.stdin
        stream = getattr(stream, "buffer", stream)
        try:
            head = stream.read(STREAM_HEAD)
        except READ_ERRORS as exc:
            raise _read_error("<stdin>", None, exc, False) from None
        if isinstance(head, str):
            head = head.encode("utf-8")
        return cls("<stdin>", None, bytes(head), _Pipe(stream))

    def head(self) -> Source:
        """A source of the bytes known so far (all of them, but for a stream)."""
        return self if self.pipe is None else Source(self.name, None, self.data)

    def buffered(self) -> Source:
        """This source with a stream read whole into memory."""
        if self.pipe is None:
            return self
        self.pipe.reader(b"")  # marks it used
        return Source(self.name, None, (self.data or b"") + self.pipe.rest())

    @property
    def is_stdin(self) -> bool:
        return self.path is None

    @contextlib.contextmanager
    def stream(self) -> Iterator[tuple[BinaryIO, bool]]:
        """Open a fresh binary stream from the start; yields ``(stream, is_gzip)``."""
        if self.pipe is not None:
            raw: BinaryIO = io.BufferedReader(self.pipe.reader(self.data or b""))
        elif self.path is None:
            raw = io.BytesIO(self.data or b"")
        else:
            raw = open_regular(self.path, self.name)
        try:
            try:
                head = raw.peek(2)[:2] if hasattr(raw, "peek") else raw.read(2)
                if not hasattr(raw, "peek"):
                    raw.seek(0)
            except READ_ERRORS as exc:
                raise _read_error(self.name, 1, exc, False) from None
            if head == GZIP_MAGIC:
                with gzip.GzipFile(fileobj=raw, mode="rb") as gz:
                    yield gz, True  # type: ignore[misc]
            else:
                yield raw, False
        finally:
            raw.close()


# Bytes of a streamed standard input read ahead, to detect its format from.
STREAM_HEAD = 1 << 20


class _Pipe:
    """A stream that can be read from its start once (standard input)."""

    def __init__(self, stream: IO[bytes]):
        self.stream = stream
        self.used = False

    def reader(self, head: bytes) -> io.RawIOBase:
        if self.used:
            raise InputError("<stdin>", None, "standard input can be read only once")
        self.used = True
        return _Joined(head, self.stream)

    def rest(self) -> bytes:
        try:
            return bytes(self.stream.read())
        except READ_ERRORS as exc:
            raise _read_error("<stdin>", None, exc, False) from None


class _Joined(io.RawIOBase):
    """``head`` followed by the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]):
        self.head = memoryview(head)
        self.stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head.nbytes:
            n = min(len(buffer), self.head.nbytes)
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.stream.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def iter_blocks(source: Source, block_size: int = BLOCK_SIZE) -> Iterator[tuple[int, bytes]]:
    """Stream ``source`` as ``(first_line_number, block)`` pairs.

    Each block holds whole lines, each ending in ``\\n`` except possibly the very last line of
    the input; line numbers start at 1. A UTF-8 byte-order mark at the start is dropped. A line
    longer than ``block_size`` is returned whole in a larger block; one longer than
    :data:`MAX_LINE_BYTES` is an :class:`InputError` naming it, before it is held whole.
    """
    with source.stream() as (stream, compressed):
        lineno = 1
        pending: list[bytes] = []  # pieces of a line not yet ended
        held = 0  # their bytes
        first = True
        while True:
            try:
                chunk = stream.read(block_size)
            except READ_ERRORS as exc:
                raise _read_error(source.name, lineno, exc, compressed) from None
            if first:
                first = False
                if chunk.startswith(UTF8_BOM):
                    chunk = chunk[len(UTF8_BOM):]
            if not chunk:
                break
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                pending.append(chunk)
                held += len(chunk)
                if held > MAX_LINE_BYTES:
                    raise _too_long(source.name, lineno)
                continue
            held = len(chunk) - cut
            block = b"".join(pending) + chunk[:cut] if pending else chunk[:cut]
            pending = [chunk[cut:]] if cut < len(chunk) else []
            yield lineno, block
            lineno += block.count(b"\n")
        tail = b"".join(pending)
        if tail:
            yield lineno, tail


def _too_long(name: str, lineno: int) -> InputError:
    return InputError(name, lineno, f"expected lines of at most {MAX_LINE_BYTES >> 20} MiB, found a longer one (a "
                                    f"file without line breaks?)")


def read_line(stream: IO[bytes], name: str, lineno: int) -> bytes:
    """The next line of the binary ``stream`` (with its ``\\n``; empty at the end), line
    ``lineno`` of the input ``name``: an :class:`InputError` naming it when it is longer than
    :data:`MAX_LINE_BYTES`, read no further than that."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if len(line) > MAX_LINE_BYTES:
        raise _too_long(name, lineno)
    return line


def iter_lines(source: Source) -> Iterator[tuple[int, bytes]]:
    """Stream ``source`` as ``(line_number, line)`` with 1-based numbers, ``\\n`` removed.

    A final ``\\n`` ends the last line (it does not start an empty one). ``\\r`` is kept.
    """
    for first, block in iter_blocks(source):
        lines = block.split(b"\n")
        if block.endswith(b"\n"):
            lines.pop()
        yield from enumerate(lines, start=first)


def file_sha256(path: str) -> str:
    """SHA-256 of a file's bytes: how a model names its parent. Hashed once a process for each
    file unchanged since (:data:`_HASHED`: an update checks at its end that its model's file is the
    one it began from, 120 MB at 100 M tokens)."""
    with open_regular(path) as f:
        started, before = time.time_ns(), _identity(os.fstat(f.fileno()))
        if before in _HASHED:
            return _HASHED[before]
        h = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
        digest = h.hexdigest()
        # (kept for a file not written to as it was read, nor in the last seconds: one written to
        # again within the clock's step, the same size, would keep its times; git's "racy" files)
        if _identity(os.fstat(f.fileno())) == before and before[4] < started - _SETTLED_NS:
            if len(_HASHED) >= _HASHED_FILES:
                _HASHED.pop(next(iter(_HASHED)))
            _HASHED[before] = digest
    return digest


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What changes when a file's bytes may have: another file (device and inode: an atomic
    replace is a new one), its size, its modification and change times (to the nanosecond; the
    change time cannot be set back by its owner)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


# file_sha256's digests, by the identity of the file they were taken of (the last few files)
_HASHED: dict[tuple[int, ...], str] = {}
_HASHED_FILES = 16
# How long before it is hashed a file must have been last changed for its digest to be kept
_SETTLED_NS = 2_000_000_000
