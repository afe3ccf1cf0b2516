"""Every setting declared once: its type and constraint, default, help and role with a checkpoint.

A :class:`Setting` is declared where it belongs (the training driver's common settings, each
method's own in its class, each command's in the module that runs it) and everything else is
derived from the declarations: the command line's options (:mod:`ldacli.cli` builds them and
never lists a setting by hand), validation (:meth:`Setting.check`, one message form, raising
:class:`~ldacli.errors.SettingError`), the settings of a fresh run (:func:`resolve`) and of a
resumed one (:func:`resume`), the comparison of ``train --skip-unchanged`` (:func:`differences`)
and the ``params`` a model records (:func:`recorded`).

A setting's :class:`Role` says what a checkpoint does with it:

* ``FIXED``: the checkpoint owns it (the number of topics, the priors, the seed, the sampler,
  the shards, the vocabulary rules, ...). A resumed run takes the checkpoint's value; a
  different value given is refused.
* ``CONTINUED``: a resumed run takes the checkpoint's value unless one is given (the sweeps in
  all, the checkpoint's path and schedule, the trace interval, early stopping's patience, the
  time limit, the model to align to).
* ``FREE``: never taken from a checkpoint (threads, the cluster, progress, waiting for a lock).
"""

from __future__ import annotations

import enum
import math
import numbers
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ldacli import checks
from ldacli.errors import InputError, SettingError


class Role(enum.Enum):
    FIXED = "fixed by a checkpoint"
    CONTINUED = "continued from a checkpoint unless given"
    FREE = "free"


FIXED, CONTINUED, FREE = Role.FIXED, Role.CONTINUED, Role.FREE


# --- types and constraints ---------------------------------------------------------------------

@dataclass(frozen=True)
class Integer:
    """An integer in [minimum, maximum]."""

    minimum: int = 0
    maximum: int | None = None

    def check(self, name: str, value) -> int:
        value = checks.count(name, value, self.minimum)
        if self.maximum is not None and value > self.maximum:
            raise SettingError(name, f"{name} must be an integer from {self.minimum} to {self.maximum}, found {value!r}")
        return value

    def describe(self) -> str:
        return f"an integer >= {self.minimum}" if self.maximum is None else \
            f"an integer from {self.minimum} to {self.maximum}"


@dataclass(frozen=True)
class Real:
    """A finite number between ``minimum`` and ``maximum``, each end open or closed."""

    minimum: float | None = None
    maximum: float | None = None
    min_open: bool = False
    max_open: bool = False

    def check(self, name: str, value) -> float:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
        if ok and self.minimum is not None:
            ok = value > self.minimum if self.min_open else value >= self.minimum
        if ok and self.maximum is not None:
            ok = value < self.maximum if self.max_open else value <= self.maximum
        if not ok:
            raise SettingError(name, f"{name} must be {self.describe()}, found {value!r}")
        return float(value)

    def describe(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            if (lo, self.min_open) == (0, True) and hi != 1:
                return f"a positive number at most {hi:g}"
            if (lo, hi) == (0, 1):
                return "a number strictly between 0 and 1" if self.min_open and self.max_open else \
                    "a number in " + ("(" if self.min_open else "[") + "0, 1" + (")" if self.max_open else "]")
            return f"a number {'>' if self.min_open else '>='} {lo:g} and {'<' if self.max_open else '<='} {hi:g}"
        if lo is not None:
            return "a positive finite number" if (lo, self.min_open) == (0, True) else \
                f"a finite number {'>' if self.min_open else '>='} {lo:g}"
        return "a finite number"


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


@dataclass(frozen=True)
class Size:
    """An amount of memory or disk: bytes, or a number with a unit K, M, G or T (powers of
    1024; "KiB", "KB" and "K" alike): ``500M``, ``1.5G``, ``2GiB``."""

    def check(self, name: str, value) -> int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0:
            return int(value)
        text = value.strip().lower() if isinstance(value, str) else ""
        number = text.rstrip("kmgtib").strip()
        unit = text[len(text.rstrip("kmgtib")):].removesuffix("ib").removesuffix("b")
        try:
            amount = float(number) * _UNITS[unit]
        except (KeyError, ValueError):
            amount = float("nan")
        if not (math.isfinite(amount) and amount >= 1):
            raise SettingError(name, f"{name} must be {self.describe()}, found {value!r}")
        return int(amount)

    def describe(self) -> str:
        return "a size: bytes, or a number with K, M, G or T (500M, 1.5G)"


@dataclass(frozen=True)
class Choice:
    """One of ``options``."""

    options: tuple[str, ...]

    def check(self, name: str, value) -> str:
        return checks.choice(name, value, self.options)

    def describe(self) -> str:
        return "one of " + ", ".join(self.options)


@dataclass(frozen=True)
class Flag:
    """True or False."""

    def check(self, name: str, value) -> bool:
        return checks.flag(name, value)

    def describe(self) -> str:
        return "True or False"


@dataclass(frozen=True)
class Text:
    """A string: a file's path (``path``, compared by absolute path) or a name."""

    path: bool = False

    def check(self, name: str, value) -> str:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise SettingError(name, f"{name} must be a non-empty {'path' if self.path else 'string'}, found {value!r}")
        return value

    def describe(self) -> str:
        return "a path" if self.path else "a string"


@dataclass(frozen=True)
class Texts:
    """One or more strings, each one of the keywords ``names`` (any case) or a file's path: a
    string or a list of them (on the command line, an option given several times)."""

    names: tuple[str, ...] = ()

    def check(self, name: str, value) -> tuple[str, ...]:
        values = [value] if isinstance(value, (str, os.PathLike)) else value
        if not isinstance(values, (list, tuple)) or not values:
            raise SettingError(name, f"{name} must be {self.describe()}, found {value!r}")
        out = []
        for v in values:
            v = os.fspath(v) if isinstance(v, os.PathLike) else v
            if not isinstance(v, str) or not v:
                raise SettingError(name, f"{name} must be {self.describe()}, found {v!r}")
            out.append(v.lower() if v.lower() in self.names else v)
        return tuple(out)

    def comparable(self, value) -> list[str]:
        """The values as two runs compare them: keywords as they are, paths absolute."""
        values = [value] if isinstance(value, (str, os.PathLike)) else list(value)
        return [v.lower() if v.lower() in self.names else os.path.abspath(v) for v in map(os.fspath, values)]

    def describe(self) -> str:
        names = ", ".join(f"'{n}'" for n in self.names)
        return f"{names} or the path of a file, or a list of them" if self.names else "paths of files"


@dataclass(frozen=True)
class IntegerList:
    """One or more integers >= ``minimum``, given as a list or as ``"3,7"``."""

    minimum: int = 0

    def check(self, name: str, value) -> list[int]:
        if isinstance(value, str):
            try:
                value = [int(v) for v in value.split(",") if v.strip()]
            except ValueError:
                raise SettingError(name, f"{name} must be integers separated by commas, found {value!r}") from None
        if not isinstance(value, (list, tuple)) or not value:
            raise SettingError(name, f"{name} must be one or more integers, found {value!r}")
        return [checks.count(name, v, self.minimum) for v in value]

    def describe(self) -> str:
        return f"integers >= {self.minimum}, separated by commas"


@dataclass(frozen=True)
class Anything:
    """A value passed through as given (``what`` says what is expected), such as a Dask client."""

    what: str

    def check(self, name: str, value):
        return value

    def describe(self) -> str:
        return self.what


Type = Integer | Real | Choice | Flag | Text | Texts | IntegerList | Anything


# --- the declaration ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Setting:
    """One setting.

    ``name`` is its Python keyword; ``flags`` its command-line spellings (by default
    ``--name-with-dashes``), ``off`` the spelling that sets a :class:`Flag` to False
    (``--no-smoothed``). ``default`` is the value used when none is given: a value, None (not
    set, or decided later by what owns it: ``default_help`` then says how), or a function of the
    settings resolved before it (declaration order). ``result`` says whether the setting changes
    what a run produces (``--skip-unchanged`` compares those). ``owner`` names the method (or
    estimator) a setting belongs to ("" for settings of every one). ``required``: it has no
    default and must be given.
    """

    name: str
    type: Type
    default: Any
    help: str
    role: Role = FREE
    flags: tuple[str, ...] = ()
    off: str | None = None
    default_help: str | None = None
    result: bool = True
    owner: str = ""
    required: bool = False

    @property
    def spellings(self) -> tuple[str, ...]:
        """How the command line spells it: ``("-k", "--topics")``."""
        return self.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def option(self) -> str:
        """Its spellings joined, for messages: ``-k/--topics``, ``--smoothed/--no-smoothed``."""
        return "/".join(self.spellings + ((self.off,) if self.off else ()))

    @property
    def described(self) -> str:
        """The help, prefixed by its owner (``cgs: ...``) when it has one."""
        h = self.help
        return f"{self.owner}: {h[:1].lower() if h[1:2].islower() else h[:1]}{h[1:]}" if self.owner else h

    def check(self, value):
        """``value`` as the type the code uses, or :class:`SettingError`; None stays None."""
        return None if value is None else self.type.check(self.name, value)

    def default_for(self, values: dict):
        return self.default(values) if callable(self.default) else self.default

    def default_text(self) -> str | None:
        """The default as ``--help`` shows it, or None."""
        if self.default_help is not None:
            return self.default_help
        if callable(self.default) or self.default is None:
            return None
        if isinstance(self.type, Flag):
            return self.spellings[-1] if self.default else (self.off or "off")
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)

    def comparable(self, value):
        """The value in the form two runs compare it (a path: absolute)."""
        if isinstance(value, str) and isinstance(self.type, Text) and self.type.path and value != "-":
            return os.path.abspath(value)
        if isinstance(self.type, Texts) and value is not None:
            return self.type.comparable(value)
        return value


def owned_by(owner: str, settings: Iterable[Setting]) -> tuple[Setting, ...]:
    """``settings`` marked as a method's own."""
    return tuple(replace(s, owner=owner) for s in settings)


def by_name(settings: Iterable[Setting]) -> dict[str, Setting]:
    """Name -> setting; a name declared twice must be the same declaration."""
    out: dict[str, Setting] = {}
    for s in settings:
        if s.name in out and replace(out[s.name], owner="") != replace(s, owner=""):
            raise ValueError(f"setting {s.name!r} is declared twice, differently")
        out.setdefault(s.name, s)
    return out


def check_names(settings: Iterable[Setting], given: dict, *, others: dict[str, str] | None = None) -> None:
    """Every name in ``given`` must be one of ``settings``; ``others`` maps the names of
    settings that exist but do not apply here to the reason (``applies to method gibbs only``)."""
    known = {s.name for s in settings}
    for name, value in given.items():
        if name in known or value is None:
            continue
        if others and name in others:
            raise SettingError(name, f"{name} {others[name]}")
        raise SettingError(name, f"unknown setting {name!r}")


def refuse_elsewhere(settings: Iterable[Setting], given: dict, chosen: str, what: str) -> None:
    """Refuse a setting given (not None) that belongs to another ``what`` (a method, an
    estimator) than ``chosen``: it cannot apply, and is never silently ignored."""
    for s in settings:
        if s.owner and s.owner != chosen and given.get(s.name) is not None \
                and not any(o.name == s.name and o.owner in ("", chosen) for o in settings):
            raise SettingError(s.name, f"{s.name} applies to {what} {s.owner} only, found {what} {chosen}")


def resolve(settings: Iterable[Setting], given: dict) -> dict:
    """The values of a fresh run: each given value checked, the others their defaults (in
    declaration order, so a default may depend on the settings before it)."""
    values: dict = {}
    for s in settings:
        v = given.get(s.name)
        values[s.name] = s.check(v) if v is not None else s.default_for(values)
    return values


def resume(settings: Iterable[Setting], given: dict, recorded: dict, source: str,
           fallback: Callable[[Setting, dict], Any] | None = None) -> dict:
    """The values of a run resumed from a checkpoint whose params are ``recorded``: FIXED
    settings from the checkpoint (a different value given is refused, naming the setting),
    CONTINUED ones from the checkpoint unless given, FREE ones as given. A value the checkpoint
    lacks (written by an older version) is ``fallback(setting, values)`` or the default."""
    values: dict = {}
    for s in settings:
        v = s.check(given.get(s.name))
        if s.role is FREE:
            values[s.name] = v if v is not None else s.default_for(values)
            continue
        if s.name in recorded:
            stored = _recorded_value(s, recorded[s.name], values, source)
        else:
            stored = fallback(s, values) if fallback is not None else s.default_for(values)
        if s.role is FIXED and v is not None and s.comparable(v) != s.comparable(stored) and not _auto(s, v):
            raise SettingError(s.name, f"{source}: the checkpoint has {s.name}={stored!r}, which cannot change on "
                                       f"resume (given {v!r})", (s.name,))
        values[s.name] = v if (v is not None and s.role is CONTINUED) else stored
    return values


def check_recorded(settings: Iterable[Setting], recorded: dict, source: str, kind: str) -> dict:
    """``recorded``, the params of the ``kind`` of file (model, checkpoint) read from ``source``,
    after checking the value of every one of ``settings`` it holds as :func:`resume` checks a
    checkpoint's: a file from elsewhere may hold anything there, and whatever reads it then gets
    what the declaration says. An :class:`~ldacli.errors.InputError` names the file and the
    setting."""
    for s in settings:
        if s.name in recorded:
            _recorded_value(s, recorded[s.name], recorded, source, kind)
    return recorded


def _recorded_value(s: Setting, value, values: dict, source: str, kind: str = "checkpoint"):
    """The value of ``s`` a checkpoint (or another ``kind`` of file; ``source``) records, checked
    as a given one is: a file from elsewhere may hold anything there. None only where the setting
    may be None."""
    try:
        if value is None and s.default_for(values) is not None:
            raise SettingError(s.name, f"{s.name} must be {s.type.describe()}, found None")
        if isinstance(value, list) and isinstance(s.type, (Integer, Real)) and len(value) == values.get("n_topics"):
            # one per topic (a warm start's alpha)
            for v in value:
                s.check(v)
        else:
            s.check(value)
    except SettingError as exc:
        raise InputError(source, None, f"expected the settings a {kind} records in 'params', found {exc}") from None
    return value


def _auto(s: Setting, value) -> bool:
    """A value that asks the setting to be chosen (``sampler auto``) matches any choice."""
    return value == "auto" and s.default == "auto"


def recorded(settings: Iterable[Setting], values: dict, *, results_only: bool = False) -> dict:
    """What a checkpoint records of ``values``: every setting that is not FREE (paths made
    absolute); with ``results_only``, what a model records: those that change its result."""
    return {s.name: s.comparable(values[s.name]) for s in settings
            if s.role is not FREE and s.name in values and (s.result or not results_only)}


def differences(settings: Iterable[Setting], wanted: dict, stored: dict) -> list[str]:
    """The settings that change a run's result whose values differ between ``wanted`` and
    what a model recorded (``stored``)."""
    return [s.name for s in settings if s.role is not FREE and s.result and s.name in wanted
            and s.comparable(wanted[s.name]) != s.comparable(stored.get(s.name, s.default_for(stored)))]
