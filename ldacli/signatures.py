"""The keyword parameters of a Python API function, from the settings' declarations.

``ldacli.train``, ``select_k``, ``infer`` and ``perplexity`` take their settings as keyword
arguments that travel on as a dict (``**given``: None or left out means not given, so that a
resumed run can tell). :func:`takes_settings` shows them as what they are, from the same
:class:`~ldacli.settings.Setting` declarations the command line's options are built from,
once, at import time: the function's ``__signature__`` (what ``help()``, ``inspect.signature``,
IPython and Jupyter, and the docs show) gets one keyword parameter per setting with its
declared default and a type from its constraint, and its docstring a ``Settings`` section
listing each with its constraint, default and help. The help is written for the command line;
here its option spellings (``--burn-in``, ``--no-smoothed``) read as the Python names
(``burn_in``, ``smoothed=False``).
"""

from __future__ import annotations

import inspect
import os
import re
import textwrap
import typing
from collections.abc import Callable, Iterable

from ldacli import settings
from ldacli.settings import Choice, Flag, Integer, IntegerList, Real, Setting, Text

# A long option as help text spells it.
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# The docstring's width (help() shows it as written).
WIDTH = 96
ROLES = {settings.FIXED: "fixed by a checkpoint", settings.CONTINUED: "continued from a checkpoint unless given",
         settings.FREE: None}


def annotation(s: Setting):
    """The Python type of ``s``'s values, from its constraint (``typing.Any`` for a kind this
    does not know)."""
    t = s.type
    if isinstance(t, Flag):
        return bool
    if isinstance(t, Integer):
        return int
    if isinstance(t, Real):
        return float
    if isinstance(t, Choice):
        return typing.Literal[t.options]
    if isinstance(t, Text):
        return typing.Union[str, os.PathLike] if t.path else str
    if isinstance(t, IntegerList):
        return typing.Union[list[int], str]
    return typing.Any


def shown_default(s: Setting):
    """The default a signature shows: the declared value, or None where it is decided later
    (the docstring says how)."""
    return None if callable(s.default) else s.default


def python_spelling(declared: Iterable[Setting]) -> Callable[[str], str]:
    """A function that rewrites the command line's spellings of ``declared`` in a text as
    their Python names (``--warm-start`` -> ``warm_start``, ``--resample`` -> ``resample=True``,
    ``--no-smoothed`` -> ``smoothed=False``); another option reads as the name its spelling
    says by the convention (``--shards`` -> ``shards``)."""
    names: dict[str, str] = {}
    for s in declared:
        flag = isinstance(s.type, Flag)
        for spelling in s.spellings:
            names[spelling] = f"{s.name}=True" if flag else s.name
        if s.off:
            names[s.off] = f"{s.name}=False"

    def rewrite(text: str) -> str:
        return OPTION.sub(lambda m: names.get(m.group(0)) or m.group(0)[2:].replace("-", "_"), text)

    return rewrite


def settings_section(declared: list[Setting], *, roles: bool = False, spelled: Callable[[str], str] | None = None) -> str:
    """The docstring's list of ``declared``: name, constraint and default, then the help (and
    with ``roles`` what a resumed run does with it)."""
    spelled = spelled or python_spelling(declared)
    lines = ["Settings", "--------",
             textwrap.fill("Keyword arguments, each declared once (ldacli.settings.Setting) with its option of "
                           "the command line; None, or leaving it out, means not given: its default applies.", WIDTH),
             ""]
    for s in declared:
        if callable(s.default) or s.default is None:
            default = spelled(s.default_help) if s.default_help else "not set"
        else:
            default = repr(s.default)
        role = ROLES[s.role] if roles else None
        lines.append(textwrap.fill(f"{s.name} : {s.type.describe()}; default {default}" + (f" ({role})" if role else ""),
                                   WIDTH, subsequent_indent="        "))
        lines.append(textwrap.fill(spelled(s.described), WIDTH, initial_indent="    ", subsequent_indent="    "))
    return "\n".join(lines)


def takes_settings(*groups: Iterable[Setting], roles: bool = False):
    """Decorate an API function whose settings (the declarations of ``groups``, in order) it
    takes as keyword arguments: its signature and docstring show them (see the module
    docstring). A parameter the function names itself keeps its place, with the declared
    default; the others become keyword-only, before the function's own keyword-only ones;
    ``**given`` leaves the signature. ``roles``: the docstring says what a checkpoint does
    with each setting."""
    declared = list(settings.by_name(s for group in groups for s in group).values())

    def decorate(f):
        own = inspect.signature(f)
        by_name = {s.name: s for s in declared}
        kept, keyword = [], []
        for p in own.parameters.values():
            if p.kind is p.VAR_KEYWORD:
                continue
            s = by_name.get(p.name)
            if s is not None:
                p = p.replace(default=p.default if s.required else shown_default(s), annotation=annotation(s))
            (keyword if p.kind is p.KEYWORD_ONLY else kept).append(p)
        positional = {p.name for p in kept}
        named = {p.name: p for p in keyword}
        from_settings = [named.get(s.name) or inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY,
                                                                default=shown_default(s), annotation=annotation(s))
                         for s in declared if s.name not in positional]
        own_keywords = [p for p in keyword if p.name not in by_name]
        f.__signature__ = own.replace(parameters=kept + from_settings + own_keywords)
        f.__doc__ = inspect.cleandoc(f.__doc__ or "") + "\n\n" + settings_section(declared, roles=roles)
        f.settings = tuple(declared)
        return f

    return decorate
