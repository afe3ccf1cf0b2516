"""Validation of settings given to the library: one message form, the project's own error.

Every check takes the setting's name and value and returns the value as the type the code uses,
or raises :class:`~ldacli.errors.SettingError` (a :class:`~ldacli.errors.LdacliError`) whose
message reads ``NAME must be WHAT, found VALUE`` and which carries the name, so the command line
can point at the option.
"""

from __future__ import annotations

import math
import numbers
import os

from ldacli.errors import SettingError


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def path(name: str, value, what: str) -> str:
    """A file's or folder's path, ``what`` (a non-empty string or ``os.PathLike``), as a string."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        found = repr(value) if value is None or isinstance(value, (str, bytes, bool, int, float)) else \
            f"a {type(value).__name__}"
        raise SettingError(name, f"{name} must be {what}, found {found}")
    return value


def count(name: str, value, minimum: int) -> int:
    """An integer >= ``minimum`` (bools are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise SettingError(name, f"{name} must be an integer >= {minimum}, found {value!r}")
    return int(value)


def positive(name: str, value, maximum: float | None = None) -> float:
    """A finite number > 0 (and at most ``maximum``)."""
    if not (_is_real(value) and math.isfinite(value) and value > 0):
        raise SettingError(name, f"{name} must be a positive finite number, found {value!r}")
    if maximum is not None and value > maximum:
        raise SettingError(name, f"{name} must be a positive number at most {maximum:g}, found {value!r}")
    return float(value)


def non_negative(name: str, value) -> float:
    """A finite number >= 0."""
    if not (_is_real(value) and math.isfinite(value) and value >= 0):
        raise SettingError(name, f"{name} must be a finite number >= 0, found {value!r}")
    return float(value)


def fraction(name: str, value, *, open_ends: bool = False) -> float:
    """A number in [0, 1], or in (0, 1) with ``open_ends``."""
    ok = _is_real(value) and (0 < value < 1 if open_ends else 0 <= value <= 1)
    if not ok:
        where = "strictly between 0 and 1" if open_ends else "in [0, 1]"
        raise SettingError(name, f"{name} must be a number {where}, found {value!r}")
    return float(value)


def flag(name: str, value) -> bool:
    """True or False (numpy bools included)."""
    if value is True or value is False or type(value).__name__ == "bool_":
        return bool(value)
    raise SettingError(name, f"{name} must be True or False, found {value!r}")


def choice(name: str, value, options) -> str:
    """One of ``options``."""
    if value not in options:
        raise SettingError(name, f"{name} must be one of {', '.join(options)}, found {value!r}")
    return str(value)


def smaller(name: str, value: int, other: str, limit: int) -> None:
    """``value`` (of setting ``name``) must be smaller than ``limit`` (of setting ``other``): the
    burn-in rule of every sampler that averages after a burn-in."""
    if value >= limit:
        raise SettingError(name, f"{name} must be smaller than {other} ({limit}), found {value}", (other,))
