r"""The tokenizer: plain text to the words a text corpus counts, by settings a model records.

Each document (a line of a text file, a whole ``.txt`` file of a folder, or a string given to
:meth:`ldacli.Corpus.from_texts`) goes through these steps, each a setting of
:class:`Tokenizer` (and a ``train``/``convert``/``select-k`` option):

1. ``lowercase`` (default True): the text is lowercased with Python's :meth:`str.lower`.
2. ``addresses`` (default ``"drop"``): e-mail addresses (``keith@cco.caltech.edu``, message ids
   ``<1993Apr5.1234@cs.cmu.edu>``, ``user%host@relay``), URLs (``http://...``, ``ftp://...``,
   ``www.x.org/...``, ``mailto:`` and ``news:``), UUCP bang paths (``uunet!cbnewsl!jim``),
   host names (a dotted name ending in a generic top-level domain, ``cs.cmu.edu``,
   ``netcom.com``, or in a country's after at least two dots, ``cs.tu-berlin.de``) and IPv4
   addresses are found first (:data:`ADDRESS`). ``"drop"``: they are removed, so that the
   hosts and user names of mail and news headers and signatures do not become words;
   ``"keep"``: each is one token, whole (``keith@cco.caltech.edu``); ``"split"``: they are
   ordinary text, split by the token pattern as any other (ldacli 0.2's tokenizer did that).
3. ``token_pattern`` (default ``[^\W_]+``: runs of Unicode letters and digits; digits no longer
   split words, so ``x11``, ``mp3`` and ``486dx`` are tokens): the tokens are the matches of
   this regular expression (Python :mod:`re`), as scikit-learn's ``token_pattern`` and MALLET's
   ``--token-regex``; a pattern with one capturing group takes the group (more than one group is
   refused). Everything else separates tokens: ``_``, punctuation, whitespace, apostrophes,
   hyphens: ``"Don't re-use X11"`` gives ``don``, ``t``, ``re``, ``use``, ``x11``. A pattern
   that could backtrack without bound is refused (:func:`backtracking`): a model records it.
4. ``min_token_length`` (default 3): shorter tokens (in code points) are dropped; above,
   ``don``, ``use`` and ``x11`` remain.
5. ``numbers`` (default ``"drop"``): a token with a digit and no letter (``1993``, ``486``,
   ``3.14`` under a pattern that keeps the dot) is a number, dropped unless ``"keep"``. Words
   with letters and digits (``x11``, ``2nd``) are not numbers.

Stop words and the other vocabulary rules come after, on the words, for every input format
(:mod:`ldacli.corpora.vocab_rules`). Addresses kept whole are words too: a stop-word list may name them.

No Unicode normalisation is applied: a letter followed by a combining accent (``e`` + U+0301)
ends the token there, while the precomposed ``é`` is part of it. Lines end at ``\n``; a ``\r``
before it is simply a separator.

A model records the settings (:meth:`Tokenizer.settings`, in its ``params``), and ``infer``,
``perplexity`` and ``topics --coherence`` tokenize text with them. A model written before these
settings existed (ldacli 0.2) tokenized with :data:`LEGACY`: letter runs only, addresses split.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from dataclasses import dataclass, field

from ldacli.errors import SettingError
from ldacli.settings import FIXED, Choice, Flag, Integer, Setting

ADDRESS_CHOICES = ("drop", "keep", "split")
NUMBER_CHOICES = ("drop", "keep")
DEFAULT_PATTERN = r"[^\W_]+"

# Generic top-level domains: a dotted name ending in one of these is a host name.
_GTLD = "com|edu|gov|mil|net|org|int|arpa|uucp|bitnet|info|biz"
# Country domains (ISO 3166-1 alpha-2, with uk, su, eu): a name of three or more parts ending in
# one is a host name (cs.tu-berlin.de), while x11r5.tar.gz is not.
_CCTLD = ("ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by "
          "bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj "
          "fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io "
          "iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg "
          "mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph "
          "pk pl pm pn pr ps pt pw py qa re ro rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st su sv sx sy "
          "sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za "
          "zm zw").replace(" ", "|")
# URL characters; a URL does not end with sentence punctuation.
_URL_CHAR = r"[^\s<>\"'()\[\]{}]"
ADDRESS = re.compile(r"""
    (?:\b(?:https?|s?ftp|gopher|news|nntp|telnet|wais|file|mailto):(?://)?|\bwww\d*\.)
        (?:""" + _URL_CHAR + r"""*[^\s<>"'()\[\]{}.,;:!?])?               # URL
  | (?<![\w.!%+=-])[\w.!%+=-]*\w@[\w-]+(?:\.[\w-]+)*                         # e-mail address
  | (?<![\w.!-])[\w.-]*\w(?:![\w-]+(?:\.[\w-]+)*){2,}                         # UUCP bang path
  | (?<![\w.-])[\w-]+(?:\.[\w-]+)*\.(?:""" + _GTLD + r""")\b                 # host, generic domain
  | (?<![\w.-])[\w-]+(?:\.[\w-]+)+\.(?:""" + _CCTLD + r""")\b                   # host, country domain
  | (?<![\w.])\d{1,3}(?:\.\d{1,3}){3}\b                                       # IPv4 address
""", re.VERBOSE | re.IGNORECASE)
# Where an address may be: every one holds one of these. The text between two whitespace
# characters around each is searched for addresses, rather than the whole text (5x faster).
_ADDRESS_HINT = re.compile(r"[@!:]|\.(?=\w)")
_SPACE = re.compile(r"\s")
# A token with a digit and no letter.
_NUMBER = re.compile(r"[\W\d_]*\d[\W\d_]*")


# --- how far a pattern can backtrack -------------------------------------------------------------------

# Python's re backtracks: where a part of a pattern can match a word in several ways and what
# follows it fails, each way is tried. A model records its token pattern and infer runs it on
# every document, so a pattern is refused where the ways it could try at one place of a word of
# PROBE_LETTERS characters (a long word) are more than MOST_WAYS: a repeat of a part that can
# itself match in several ways ((?:[a-z]+)+[0-9], (?:a|ab)*c: their ways grow exponentially with
# the word, 28 letters took minutes), or more than two repeats one after another before something
# that can fail (\w*\w*\w*!: their ways grow as the cube of the word, and with each place of a
# word it is tried at, its fourth power). Counted on the parsed pattern, from above: the repeats
# after the last part that can fail are never tried again (what follows them always matches), nor
# is a repeat whose every turn begins or ends with a character nothing else in the turn matches
# (\w+(?:-\w+)*), nor what an atomic group or a possessive repeat took.
PROBE_LETTERS = 64
MOST_WAYS = 5000

try:  # the parser of Python's re (the standard library's only one; a public module before 3.11)
    from re import _parser as _re_parser
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _re_parser

_SINGLE = ("LITERAL", "NOT_LITERAL", "ANY", "IN")  # what matches one character, in one way
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_CATEGORIES = {"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
               "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}


class _Unbounded(Exception):
    """A part that could backtrack without bound: ``why`` says how."""

    def __init__(self, why: str):
        self.why = why


@functools.lru_cache(maxsize=256)
def backtracking(pattern: str) -> str | None:
    """Why the valid regular expression ``pattern`` could backtrack without bound, as a phrase
    (``"which repeats a part that itself repeats"``); None when the ways it could try at one
    place of a word of :data:`PROBE_LETTERS` characters are at most :data:`MOST_WAYS` (see
    above)."""
    parsed = _re_parser.parse(pattern)
    try:
        _bounded(list(parsed), parsed.state.flags & (re.IGNORECASE | re.ASCII), "")
    except _Unbounded as exc:
        return exc.why
    return None


def _bounded(items: list, flags: int, where: str) -> float:
    """The ways of the part ``items``, when what follows it always matches (the end of the
    pattern, of an atomic group); :class:`_Unbounded` when more than :data:`MOST_WAYS`."""
    ways = _ways(items, flags, free_end=True)
    if ways > MOST_WAYS:
        raise _Unbounded(f"which could try {ways:.2g} ways to match at one place of a word of {PROBE_LETTERS} "
                         f"letters{where} (repeats one after another), more than {MOST_WAYS:,}")
    return ways


def _ways(items: list, flags: int, free_end: bool = False) -> float:
    """The ways the sequence ``items`` of a parsed pattern could try to match at one place of a
    word (an upper bound): those of its parts multiplied, but, when what follows it always matches
    (``free_end``), those of the parts after the last that can fail, which are added."""
    last = len(items) - 1
    if free_end:
        while last >= 0 and _can_skip([items[last]]):
            last -= 1
    total = 1.0
    for i, (op, av) in enumerate(items[:last + 1]):
        total *= _part_ways(op.name, av, flags, free_end and i == last)
    for op, av in items[last + 1:]:
        total += _part_ways(op.name, av, flags, True)
    return total


def _part_ways(kind: str, av, flags: int, free_end: bool) -> float:
    if kind == "SUBPATTERN":
        return _ways(list(av[-1]), flags, free_end)
    if kind == "BRANCH":
        return sum(_ways(list(alt), flags, free_end) for alt in av[1])
    if kind == "GROUPREF_EXISTS":
        return _ways(list(av[1]), flags, free_end) + (_ways(list(av[2]), flags, free_end) if av[2] else 1)
    if kind in ("ASSERT", "ASSERT_NOT"):  # tried anew wherever it is reached, then never again
        return _bounded(list(av[1]), flags, " inside a lookaround")
    if kind == "ATOMIC_GROUP":  # what it holds is tried until it first matches, never again
        _bounded(list(av), flags, " inside an atomic group")
        return 1.0
    if kind in _REPEATS:
        return _repeat_ways(kind, *av, flags)
    return 1.0  # one character, an anchor, a back reference


def _can_skip(items: list) -> bool:
    """Whether the part ``items`` can match nothing wherever it is, so that it never fails."""
    for op, av in items:
        kind = op.name
        if kind in _REPEATS:
            ok = av[0] == 0 or _can_skip(list(av[2]))
        elif kind in ("SUBPATTERN", "ATOMIC_GROUP"):
            ok = _can_skip(list(av[-1] if kind == "SUBPATTERN" else av))
        elif kind == "BRANCH":
            ok = any(_can_skip(list(alt)) for alt in av[1])
        else:
            ok = False
        if not ok:
            return False
    return True


def _repeat_ways(kind: str, low: int, high: int, body, flags: int) -> float:
    """The ways a repeat of ``body`` from ``low`` to ``high`` times could try."""
    items = list(body)
    if kind == "POSSESSIVE_REPEAT":  # never given back, but the turns up to `low` are tried within it
        inner = _bounded(items, flags, " inside a possessive repeat")
        return _power(inner, min(low, PROBE_LETTERS)) if low > 1 else 1.0
    inner = _ways(items, flags)
    if high <= 1:
        return inner + (1 if low == 0 else 0)
    turns = max(1, min(high, PROBE_LETTERS) - min(low, PROBE_LETTERS) + 1)  # how many times it matched
    if inner <= 1 or _delimited(items, flags):
        return float(turns)
    if high != _re_parser.MAXREPEAT:
        return _power(inner, min(high, PROBE_LETTERS))
    raise _Unbounded("which repeats a part that itself repeats" if _repeats_in(items) else
                     "which repeats an alternation of parts that can match the same letters")


def _power(ways: float, turns: int) -> float:
    """``ways`` to the power ``turns``, infinite rather than too large for a float."""
    return math.inf if turns * math.log10(ways) > 300 else ways ** turns


def _repeats_in(items: list) -> bool:
    """Whether the parsed part ``items`` holds a repeat, at any depth."""
    return any(op.name in _REPEATS or any(_repeats_in(list(part)) for part in _parts(op.name, av))
               for op, av in items)


def _parts(kind: str, av) -> list:
    """The parsed parts a group, an alternation, a condition or an assertion holds."""
    if kind == "SUBPATTERN":
        return [av[-1]]
    if kind == "BRANCH":
        return list(av[1])
    if kind == "GROUPREF_EXISTS":
        return [a for a in av[1:] if a is not None]
    if kind in ("ASSERT", "ASSERT_NOT"):
        return [av[1]]
    return [av] if kind == "ATOMIC_GROUP" else []


def _flat(items: list) -> list:
    """``items`` with the groups without flags of their own opened (a group changes no match)."""
    out = []
    for op, av in items:
        if op.name == "SUBPATTERN" and not av[1] and not av[2]:
            out += _flat(list(av[-1]))
        else:
            out.append((op, av))
    return out


def _delimited(items: list, flags: int) -> bool:
    """Whether each turn of a repeat of ``items`` begins or ends with a character that nothing
    else in it can match, around single characters and at most one repeat of one that varies
    (``-\\w+`` in ``\\w+(?:-\\w+)*``, ``\\d+,`` in ``(?:\\d+,)*``): where each turn ends is then
    fixed by the text, and a failure after the repeat tries each ending once."""
    items = _flat(items)
    if not items:
        return False
    for edge in (0, -1):
        if items[edge][0].name not in _SINGLE:
            continue
        varying = 0
        for op, av in items[1:] if edge == 0 else items[:-1]:
            if op.name == "AT":
                continue
            if op.name in _REPEATS and len(av[2]) == 1 and av[2][0][0].name in _SINGLE:
                varying += av[0] != av[1]
                other = av[2][0]
            elif op.name in _SINGLE:
                other = (op, av)
            else:
                break
            if not _disjoint(items[edge], other, flags):
                break
        else:
            if varying <= 1:
                return True
    return False


def _source(node) -> str | None:
    """The pattern of the one-character part ``node`` (None for a kind not listed here)."""
    op, av = node
    kind = op.name
    if kind == "ANY":
        return "(?s:.)"
    if kind in ("LITERAL", "NOT_LITERAL"):
        return ("[^" if kind == "NOT_LITERAL" else "[") + f"\\U{av:08x}]"
    parts = []
    for item, value in av:
        name = item.name
        if name == "NEGATE":
            parts.append("^")
        elif name == "LITERAL":
            parts.append(f"\\U{value:08x}")
        elif name == "RANGE":
            parts.append(f"\\U{value[0]:08x}-\\U{value[1]:08x}")
        elif name == "CATEGORY" and value.name in _CATEGORIES:
            parts.append(_CATEGORIES[value.name])
        else:
            return None
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=1)
def _every_character() -> str:
    return "".join(map(chr, range(sys.maxunicode + 1)))


def _disjoint(a, b, flags: int) -> bool:
    """Whether no character matches both one-character parts ``a`` and ``b``."""
    first, second = _source(a), _source(b)
    if first is None or second is None:
        return False
    return re.compile(f"(?={first}){second}", flags).search(_every_character()) is None


@dataclass(frozen=True)
class Regex:
    """A regular expression (Python :mod:`re`) with at most one capturing group, that cannot
    backtrack without bound (:func:`backtracking`)."""

    def check(self, name: str, value) -> str:
        if not isinstance(value, str) or not value:
            raise SettingError(name, f"{name} must be a non-empty regular expression, found {value!r}")
        try:
            compiled = re.compile(value)
        except re.error as exc:
            raise SettingError(name, f"{name} must be a valid regular expression, found {value!r} ({exc})") from None
        if compiled.groups > 1:
            raise SettingError(name, f"{name} must have at most one capturing group (the token), found "
                                     f"{compiled.groups} in {value!r}; use (?:...) for the others")
        if compiled.match(""):
            raise SettingError(name, f"{name} must not match the empty string, found {value!r}")
        why = backtracking(value)
        if why is not None:
            raise SettingError(name, f"{name} must not backtrack without bound, found {value!r}, {why}: a word of a "
                                     f"few dozen letters could take hours; use a character class, a possessive "
                                     f"repeat (*+, ++) or an atomic group (?>...)")
        return value

    def describe(self) -> str:
        return "a regular expression"


TOKEN_PATTERN = Setting("token_pattern", Regex(), DEFAULT_PATTERN,
                        "Tokens are the matches of this regular expression (Python re; with one group, the group); "
                        "the default is runs of letters and digits.", FIXED)
LOWERCASE = Setting("lowercase", Flag(), True, "Lowercase the text before it is tokenized.", FIXED,
                    flags=("--lowercase",), off="--no-lowercase")
MIN_TOKEN_LENGTH = Setting("min_token_length", Integer(1), 3, "Drop tokens shorter than this (in characters).",
                           FIXED)
NUMBERS = Setting("numbers", Choice(NUMBER_CHOICES), "drop",
                  "Tokens with a digit and no letter (1993, 486): drop or keep; x11 and mp3 are words either way.",
                  FIXED)
ADDRESSES = Setting("addresses", Choice(ADDRESS_CHOICES), "drop",
                    "E-mail addresses, URLs and host names: drop them, keep each as one token, or split them into "
                    "words as other text.", FIXED)
# The tokenizer's settings, in the order of its steps; what ``read_corpus`` takes and a model records.
TOKENIZING = (LOWERCASE, ADDRESSES, TOKEN_PATTERN, MIN_TOKEN_LENGTH, NUMBERS)
# How ldacli 0.2 tokenized: what a model that records no tokenizer settings was trained with.
LEGACY = {"lowercase": True, "addresses": "split", "token_pattern": r"[^\W\d_]+", "min_token_length": 3,
          "numbers": "drop"}


@dataclass(frozen=True)
class Tokenizer:
    """Text to tokens by the settings of the module docstring, checked when made (a bad pattern
    is a :class:`~ldacli.errors.SettingError` before any text is read). Call it on a string."""

    lowercase: bool = LOWERCASE.default
    addresses: str = ADDRESSES.default
    token_pattern: str = TOKEN_PATTERN.default
    min_token_length: int = MIN_TOKEN_LENGTH.default
    numbers: str = NUMBERS.default
    _pattern: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for s in TOKENIZING:
            value = getattr(self, s.name)
            object.__setattr__(self, s.name, s.default if value is None else s.check(value))
        object.__setattr__(self, "_pattern", re.compile(self.token_pattern))

    @classmethod
    def of(cls, params: dict) -> "Tokenizer":
        """The tokenizer recorded in a model's (or corpus reading's) ``params``; settings it
        lacks are :data:`LEGACY`'s (a model of ldacli 0.2)."""
        return cls(**{s.name: params.get(s.name, LEGACY[s.name]) for s in TOKENIZING})

    def settings(self) -> dict:
        """The settings, as a model records them."""
        return {s.name: getattr(self, s.name) for s in TOKENIZING}

    def __call__(self, text: str) -> list[str]:
        """The tokens of ``text``, in order."""
        if self.lowercase:
            text = text.lower()
        if self.addresses == "split":
            return self._words(text, 0, len(text))
        tokens: list[str] = []
        keep = self.addresses == "keep"
        pos = 0
        for start, end in address_spans(text):
            tokens += self._words(text, pos, start)
            if keep:  # whole, whatever its length or digits
                tokens.append(text[start:end])
            pos = end
        tokens += self._words(text, pos, len(text))
        return tokens

    def _words(self, text: str, start: int, end: int) -> list[str]:
        """The tokens of ``text[start:end]`` by the pattern, the length and the numbers rules."""
        found = self._pattern.findall(text, start, end)
        n = self.min_token_length
        if self.numbers == "keep":
            return [t for t in found if len(t) >= n]
        number = _NUMBER.fullmatch
        return [t for t in found if len(t) >= n and not number(t)]


def address_spans(text: str):
    """The ``(start, end)`` of each address in ``text`` (:data:`ADDRESS`), in order."""
    searched = 0  # the text before this has been searched
    for hint in _ADDRESS_HINT.finditer(text):
        i = hint.start()
        if i < searched:
            continue
        # the address, if any, lies between the whitespace before the hint and the one after it
        start = max(text.rfind(" ", searched, i), text.rfind("\n", searched, i), text.rfind("\t", searched, i),
                    searched - 1) + 1
        space = _SPACE.search(text, i)
        end = space.start() if space else len(text)
        for m in ADDRESS.finditer(text, start, end):
            yield m.span()
        searched = end


def chosen_tokenizer(tokenizer: Tokenizer | None, settings: dict) -> Tokenizer:
    """``tokenizer`` (a model's, :attr:`ldacli.Model.tokenizer`), or the one the tokenizer
    ``settings`` make (a setting None: its default); a setting given beside ``tokenizer`` is
    refused, naming it."""
    given = {name: value for name, value in settings.items() if value is not None}
    if tokenizer is None:
        return Tokenizer(**given)
    if not isinstance(tokenizer, Tokenizer):
        raise SettingError("tokenizer", f"tokenizer must be an ldacli.corpora.tokenizer.Tokenizer, found {tokenizer!r:.80}")
    for name, value in given.items():
        raise SettingError(name, f"{name} must not be given with tokenizer (whose own settings apply), found {value!r}")
    return tokenizer
