"""Exceptions raised for users' mistakes: bad files, bad parameters, mismatched inputs.

The CLI turns every :class:`LdacliError` into a one-line message on stderr and exit code 1;
anything else escaping is a bug in ldacli.
"""

from __future__ import annotations


class LdacliError(Exception):
    """A problem with what the user gave us (a file, a parameter), not a bug."""


class InputError(LdacliError):
    """A file that cannot be read as expected.

    The message reads ``PATH:LINE: what was expected, what was found`` (``PATH: ...`` when no
    single line is to blame), so editors and terminals can jump to the place.
    """

    def __init__(self, path: str, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        self.detail = message
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {message}")

    def __reduce__(self):  # pickled, to come back from a Dask worker whole
        return type(self), (self.path, self.line, self.detail)


class SettingError(LdacliError):
    """A setting (a parameter of the library, an option of the command line) with a value that
    is not allowed, or that does not apply; ``name`` is the setting's name in the library.

    The message names settings as Python does (``warm_start``); ``mentions`` lists the other
    settings it names, so that the command line can say each as it spells it (``--warm-start``).
    """

    def __init__(self, name: str, message: str, mentions: tuple[str, ...] = ()):
        self.name = name
        self.mentions = tuple(mentions)
        super().__init__(message)

    def __reduce__(self):
        return type(self), (self.name, str(self), self.mentions)


class OutputError(LdacliError):
    """An output that could not be written: ``path`` is the file the user named, ``what`` what
    it holds (model, checkpoint, ...), ``reason`` the system's reason (a full disk, a missing
    folder, no permission)."""

    def __init__(self, path: str, what: str, exc: OSError | str):
        self.path = str(path)
        self.what = what
        self.reason = exc if isinstance(exc, str) else (exc.strerror or str(exc))
        super().__init__(f"{self.path}: cannot write the {what}: {self.reason}")

    def __reduce__(self):
        return type(self), (self.path, self.what, self.reason)


class LockedError(LdacliError):
    """Another run holds the lock on an output (exit code 75, EX_TEMPFAIL, for cron)."""


class RunStopped(LdacliError):
    """A training run that stopped before its end; ``checkpoint`` names the checkpoint written
    as it stopped, from which ``resume`` continues it (None when none was written)."""

    def __init__(self, message: str, checkpoint: str | None = None):
        self.checkpoint = checkpoint
        super().__init__(message)


class TrainingInterrupted(RunStopped):
    """Training stopped on SIGINT or SIGTERM (``signum``) after finishing the step under way."""

    def __init__(self, message: str, signum: int, checkpoint: str | None = None):
        self.signum = signum
        super().__init__(message, checkpoint)
