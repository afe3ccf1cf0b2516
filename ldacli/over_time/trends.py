"""``ldacli trends``: each topic's share of the documents by their dates, from one model.

The documents are a model's training documents (their topic proportions, theta, are in the
model) or documents inferred under a model (``ldacli infer -o FILE.npz``, an inference file),
so that new documents are measured by the same model without retraining it. Each document
gets a date from a dates file, and the documents are grouped by period (day, ISO week starting
on Monday, month, quarter, year); for each period and topic: the number of documents, the
topic's share (the mean of its proportion over the period's documents) and the standard error
of that mean (the standard deviation over the documents, ``ddof=1``, over the square root of
their number; none for a period of one document). Periods without documents are left out.

The dates file (UTF-8, ``.gz`` read transparently, ``-`` for stdin) is one of:

* one date per line, a line per document in the corpus's order: line n is the date of the
  document whose id is n when the documents' ids are numbers (the line numbers of a text file,
  the documents of a UCI, LDA-C or matrix corpus: a model that held documents out still finds
  its own), else of the n-th document; a file with more dates than that (by id: more than the
  largest id and twice the documents) is refused at the first date too many;
* two columns, a document id and its date, separated by a tab (or by commas in a ``.csv``
  file; fields quoted as CSV quotes them), in any order; ids the documents lack are ignored
  (counted in the notes), and every document must have a date. A header line is allowed: its
  columns named ``date`` and ``id``/``doc_id`` are taken, and then other columns too.

Dates are ISO 8601: a calendar date (``2024-03-05``, ``20240305``), a year and month
(``2024-03``) or a year (``2024``, their first day), a week date (``2024-W10-2``,
``2024-W10``), an ordinal date (``2024-065``), each optionally followed by a time and an offset
(``2024-03-05T23:30:00-05:00``, ``2024-03-05 23:30Z``). The date is the one written: a time and
its offset are checked, then set aside (a message written at 23:30 on 5 March, New York time,
counts on 5 March). A line that cannot be read is an error naming the file and the line. The
file is read a line at a time (each at most the readers' longest line, 16 MiB), and only the
documents' dates are held: a file keyed by id may date many more documents than these.

Appending (:func:`merge_tables`): a table written before (TSV, CSV, JSON lines, Parquet) and new
documents' rows are combined: a period in only one is kept as it is; a period in both gets the
documents of both, its shares and standard errors those of all its documents together (exact,
from each side's counts, means and standard errors). A nightly job infers the day's new
documents and appends their shares; run it once per batch of documents (a batch merged twice
counts its documents twice; make's dependencies do this, see docs/guide/over-time.md).
"""

from __future__ import annotations

import csv
import datetime
import itertools
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ldacli import checks
from ldacli.errors import InputError, LdacliError, SettingError
from ldacli.files.fileio import Source, iter_lines, open_regular
from ldacli.model import Inference, Model, names_of_topics, pandas_module
from ldacli.files.npz import file_kind
from ldacli.settings import Choice, Flag, Setting, Text
from ldacli.signatures import takes_settings
from ldacli.files.tables import Table, pyarrow_modules
from ldacli.escaping import printable
from ldacli.over_time.history import sparkline

PERIODS = ("day", "week", "month", "quarter", "year")
BY = Setting("by", Choice(PERIODS), "month",
             "The periods the documents are grouped by: day, week (ISO weeks, from Monday), month, quarter or year.")
SETTINGS = (BY,)
# The command line's: the API takes the dates as an argument (a file's path, or the dates themselves).
DATES = Setting("dates", Text(path=True), None,
                "The documents' dates (ISO 8601): one per line in the corpus's order, or ID<TAB>DATE lines (CSV "
                "in a .csv file) keyed by document id; - for stdin.", required=True)
APPEND = Setting("append", Flag(), False,
                 "Merge into the table -o names (tsv, csv, jsonl, parquet) when it exists: its periods kept, the "
                 "new ones added, a period in both combined (documents added up; shares and standard errors of "
                 "all its documents). Once per batch of documents: a batch merged twice counts twice.")
COLUMNS = [("period", "str"), ("start", "str"), ("topic", "int"), ("name", "str"), ("documents", "int"),
           ("share", "float"), ("se", "float")]
THETA_KINDS = "a Model, an Inference, or the path of a model file or of an inference file (ldacli infer -o FILE.npz)"
DATES_KINDS = ("the path of a dates file, a sequence of dates (one per document, in order) or a mapping of "
               "document ids to dates")
# How each period is written, to read a table back.
PERIOD_FORMS = {"day": re.compile(r"\d{4}-\d{2}-\d{2}$"), "week": re.compile(r"\d{4}-W\d{2}$"),
                "month": re.compile(r"\d{4}-\d{2}$"), "quarter": re.compile(r"\d{4}-Q[1-4]$"),
                "year": re.compile(r"\d{4}$")}
# Rows of theta squared at a time (bounded memory for many documents).
_BLOCK_ROWS = 1 << 14


# --- dates -------------------------------------------------------------------------------------------

_DATE = re.compile(
    r"(?P<y>\d{4})(?:"
    r"-(?P<m>\d{2})(?:-(?P<d>\d{2}))?"        # 2024-03-05, 2024-03
    r"|(?P<bm>\d{2})(?P<bd>\d{2})"            # 20240305
    r"|-?W(?P<w>\d{2})(?:-?(?P<wd>[1-7]))?"   # 2024-W10-2, 2024W102, 2024-W10
    r"|-?(?P<o>\d{3})"                        # 2024-065, 2024065
    r")?"
    r"(?:[T ](?P<h>\d{2})(?::?(?P<mi>\d{2})(?::?(?P<s>\d{2})(?:[.,]\d+)?)?)?"
    r"(?P<tz>Z|[+-](?P<tzh>\d{2})(?::?(?P<tzm>\d{2}))?)?)?$")
EXPECTED = ("expected an ISO 8601 date (2024-03-05, 2024-03, 2024, 2024-W10-2, 2024-065, optionally with a time "
            "and an offset: 2024-03-05T10:30:00+02:00)")


def parse_date(text: str) -> datetime.date:
    """The calendar date an ISO 8601 date or date and time names (see the module docstring);
    ValueError saying what is wrong otherwise."""
    m = _DATE.match(text.strip())
    if m is None:
        raise ValueError(EXPECTED)
    g = m.groupdict()
    year = int(g["y"])
    try:
        if g["w"] is not None:
            date = datetime.date.fromisocalendar(year, int(g["w"]), int(g["wd"] or 1))
            precise = g["wd"] is not None
        elif g["o"] is not None:
            day = int(g["o"])
            date = datetime.date(year, 1, 1) + datetime.timedelta(days=day - 1)
            if not 1 <= day or date.year != year:
                raise ValueError(f"day {day} of the year is outside {year}")
            precise = True
        else:
            month, day = g["m"] or g["bm"], g["d"] or g["bd"]
            date = datetime.date(year, int(month or 1), int(day or 1))
            precise = day is not None
    except ValueError as exc:
        raise ValueError(f"{EXPECTED}: {exc}") from None
    if g["h"] is not None:
        if not precise:
            raise ValueError(f"{EXPECTED}: a time needs a whole date")
        h, mi, s = int(g["h"]), int(g["mi"] or 0), int(g["s"] or 0)
        if h > 24 or mi > 59 or s > 60 or (h == 24 and (mi or s)):
            raise ValueError(f"{EXPECTED}: the time {h:02d}:{mi:02d}:{s:02d} does not exist")
        if g["tzh"] is not None and (int(g["tzh"]) > 23 or int(g["tzm"] or 0) > 59):
            raise ValueError(f"{EXPECTED}: the offset {g['tz']} does not exist")
    return date


def _numbered(doc_ids: Sequence[str]) -> dict[int, int] | None:
    """Line number -> document, when every id is a positive decimal number (else None)."""
    out = {}
    for d, doc in enumerate(doc_ids):
        if not (doc.isascii() and doc.isdigit()) or int(doc) == 0:
            return None
        out[int(doc)] = d
    return out


def _lines(path: str) -> Iterable[tuple[int, str]]:
    """The lines of ``path`` as text, numbered from 1 (a BOM and a final ``\\r`` dropped)."""
    source = Source.open(path)
    for lineno, raw in iter_lines(source):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(source.name, lineno, f"expected UTF-8 text, found the bytes {raw[:40]!r}") from None
        if lineno == 1:
            line = line.lstrip("\ufeff")
        yield lineno, line.rstrip("\r")


def _fields(name: str, lineno: int, line: str, separator: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=separator))
    except csv.Error as exc:  # a field longer than the csv module's limit, a stray quote
        raise InputError(name, lineno, f"expected {'CSV' if separator == ',' else 'tab-separated'} fields, found "
                                       f"{exc}") from None


def read_dates(path: str, doc_ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The date (``datetime64[D]``) of each document of ``doc_ids``, from the dates file at
    ``path`` (see the module docstring), and notes. An :class:`~ldacli.errors.InputError`
    names the file and the line of anything it cannot read. Read a line at a time (each at most
    the readers' longest line), holding only the documents' dates: a file of one date per line
    with more than the documents can have is refused at the line where that is known."""
    path = checks.path("dates", path, "the path of a dates file")
    name = "<stdin>" if path == "-" else path
    separator = "," if path.lower().removesuffix(".gz").endswith(".csv") else None
    lines = _lines(path)
    first = next(lines, None)
    if first is None:
        raise InputError(name, None, "expected one date per document, found no date")
    lines = itertools.chain([first], lines)
    if separator is None and "\t" in first[1]:
        separator = "\t"
    if separator is not None:
        return _keyed(name, lines, separator, doc_ids)
    return _one_per_line(name, lines, doc_ids)


def _one_per_line(name: str, lines, doc_ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The dates of a file of one date per line (the first may be a header such as "date"): line
    n (n-th date) is the document of id n when the ids are numbers, else the n-th document."""
    numbered = _numbered(doc_ids)
    # the most dates the file may hold: one per document; by id, those of documents held out too,
    # at most as many as the documents (a model holds out less than it keeps)
    most = len(doc_ids) if numbered is None else max(max(numbered), 2 * len(doc_ids))
    out = np.empty(len(doc_ids), dtype="datetime64[D]")
    dated = np.zeros(len(doc_ids), dtype=bool)
    n = 0  # dates read
    blank = None  # the first of the empty lines read since the last date
    for lineno, line in lines:
        if not line.strip():
            blank = blank or lineno
            continue
        if blank is not None:  # empty lines at the end are fine, not between dates
            raise InputError(name, blank, "expected a date (one per document, in the corpus's order), found an "
                                          "empty line")
        if lineno == 1 and not any(c.isdigit() for c in line):  # a header such as "date"
            continue
        try:
            date = parse_date(line)
        except ValueError as exc:
            raise InputError(name, lineno, f"{exc}, found {line.strip()[:60]!r}") from None
        n += 1
        if n > most:
            raise InputError(name, lineno, f"expected one date per document, {len(doc_ids):,} in all"
                             + (f" (line n for the document of id n: at most {most:,})" if numbered is not None else "")
                             + ", found more: give one per document in the corpus's order, or key them by "
                               "document id (ID<TAB>DATE)")
        d = n - 1 if numbered is None else numbered.get(n)
        if d is not None:
            out[d], dated[d] = date, True
    if n == 0:
        raise InputError(name, None, "expected one date per document, found no date")
    if numbered is not None:  # line n is document n (the model may have held some out)
        if not dated.all():
            first = doc_ids[int(np.argmin(dated))]
            raise InputError(name, None, f"expected a date for each of the {len(doc_ids):,} documents, line n for the "
                                         f"document of id n, found {n:,} dates (document {first} has none): give one "
                                         f"date per document, or key them by document id (ID<TAB>DATE)")
        notes = [] if n == len(doc_ids) else \
            [f"{name}: {n - len(doc_ids):,} dates of documents these proportions do not have (held out?)"]
        return out, notes
    if n != len(doc_ids):
        raise InputError(name, None, f"expected one date per document, {len(doc_ids):,} in all, found {n:,}: "
                                     f"give one per document in the corpus's order, or key them by document id "
                                     f"(ID<TAB>DATE)")
    return out, []


def _keyed(name: str, lines, separator: str, doc_ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The dates of a file of ``ID<separator>DATE`` lines, maybe under a header naming them. The
    ids the documents lack are counted, not held: a file may date many more documents."""
    lines = ((n, line) for n, line in lines if line.strip())
    first = next(lines, None)
    if first is None:
        raise InputError(name, None, "expected one date per document, found no date")
    head = [f.strip().lower() for f in _fields(name, first[0], first[1], separator)]
    id_col, date_col = 0, 1
    if "date" in head and len(head) > 1:  # a header: its columns named
        date_col = head.index("date")
        ids = [i for i, h in enumerate(head) if h in ("id", "doc_id", "document", "document_id")]
        id_col = ids[0] if ids else next(i for i in range(len(head)) if i != date_col)
    elif len(head) != 2:
        raise InputError(name, first[0], f"expected two columns, a document id and its date (or a header naming "
                                         f"the columns id and date), found {len(head)}")
    else:
        lines = itertools.chain([first], lines)
    index = {d: i for i, d in enumerate(doc_ids)}
    out = np.empty(len(doc_ids), dtype="datetime64[D]")
    seen = np.zeros(len(doc_ids), dtype=np.int64)  # the line of each document's date (0: none yet)
    unknown = 0
    width = max(id_col, date_col) + 1
    for lineno, line in lines:
        fields = _fields(name, lineno, line, separator)
        if len(fields) < width:
            raise InputError(name, lineno, f"expected a document id and its date, found {line.strip()[:60]!r}")
        doc, text = fields[id_col], fields[date_col]
        try:
            date = parse_date(text)
        except ValueError as exc:
            raise InputError(name, lineno, f"{exc}, found {text.strip()[:60]!r}") from None
        d = index.get(doc)
        if d is None:
            unknown += 1
            continue
        if seen[d]:
            raise InputError(name, lineno, f"expected one date per document, found document {doc[:60]!r} again "
                                           f"(first on line {seen[d]})")
        seen[d] = lineno
        out[d] = date
    if not seen.all():
        missing = np.flatnonzero(seen == 0)
        raise InputError(name, None, f"expected a date for every document, found none for {missing.size:,} of the "
                                     f"{len(doc_ids):,} (the first: {doc_ids[int(missing[0])][:60]!r})")
    notes = [f"{name}: {unknown:,} dates of documents these proportions do not have, ignored"] if unknown else []
    return out, notes


def as_dates(dates, doc_ids: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """``dates`` as one ``datetime64[D]`` per document of ``doc_ids``: a dates file's path
    (:func:`read_dates`), a mapping of document ids to dates, or a sequence of dates in the
    documents' order; a date is ISO 8601 text, a ``datetime.date``/``datetime`` or a
    ``numpy.datetime64``."""
    if isinstance(dates, (str, os.PathLike)):
        return read_dates(os.fspath(dates), doc_ids)
    if isinstance(dates, Mapping):
        missing = [d for d in doc_ids if d not in dates]
        if missing:
            raise SettingError("dates", f"dates must give a date for every document, found none for "
                                        f"{len(missing):,} (the first: {missing[0]!r})")
        values = [dates[d] for d in doc_ids]
    elif isinstance(dates, (Sequence, np.ndarray)) or type(dates).__name__ in ("Series", "Index", "DatetimeIndex"):
        values = list(np.asarray(dates)) if not isinstance(dates, Sequence) else list(dates)
        if len(values) != len(doc_ids):
            raise SettingError("dates", f"dates must give one date per document, {len(doc_ids):,} in all, found "
                                        f"{len(values):,}")
    else:
        raise SettingError("dates", f"dates must be {DATES_KINDS}, found {type(dates).__name__}")
    out = np.empty(len(values), dtype="datetime64[D]")
    for i, v in enumerate(values):
        try:
            if isinstance(v, str):
                out[i] = parse_date(v)
            elif isinstance(v, (datetime.date, np.datetime64)) or type(v).__name__ == "Timestamp":
                day = np.datetime64(v, "D") if not isinstance(v, datetime.datetime) else np.datetime64(v.date(), "D")
                if np.isnat(day):
                    raise ValueError("found no date (NaT)")
                out[i] = day
            else:
                raise ValueError(f"found {type(v).__name__}")
        except ValueError as exc:
            raise SettingError("dates", f"dates must be ISO 8601 text or dates: item {i} ({v!r:.60}): {exc}") from None
    return out, []


# --- periods -----------------------------------------------------------------------------------------

def periods(days: np.ndarray, by: str) -> tuple[np.ndarray, list[str], list[str], list[str]]:
    """The period of each date of ``days`` (``datetime64[D]``): ``(codes, labels, starts,
    ends)``, codes indexing the sorted periods present, each period's label (``2024-03-05``,
    ``2024-W10``, ``2024-03``, ``2024-Q1``, ``2024``), first day and the day after its last
    (ISO)."""
    by = BY.check(by)
    day = days.astype("datetime64[D]").astype(np.int64)
    if by == "day":
        key = day
    elif by == "week":
        key = day - (day + 3) % 7  # the Monday (1970-01-01 was a Thursday)
    elif by in ("month", "quarter"):
        key = days.astype("datetime64[M]").astype(np.int64)
        if by == "quarter":
            key = key - key % 3
    else:
        key = days.astype("datetime64[Y]").astype(np.int64)
    unique, codes = np.unique(key, return_inverse=True)
    labels, starts, ends = [], [], []
    for k in unique.tolist():
        if by in ("day", "week"):
            start = np.datetime64(k, "D")
            end = start + (1 if by == "day" else 7)
        elif by in ("month", "quarter"):
            start = np.datetime64(k, "M").astype("datetime64[D]")
            end = (np.datetime64(k, "M") + (1 if by == "month" else 3)).astype("datetime64[D]")
        else:
            start = np.datetime64(k, "Y").astype("datetime64[D]")
            end = (np.datetime64(k, "Y") + 1).astype("datetime64[D]")
        ends.append(str(end))
        first = start.astype(datetime.date)
        if by == "day":
            label = first.isoformat()
        elif by == "week":
            year, week, _ = first.isocalendar()
            label = f"{year}-W{week:02d}"
        elif by == "month":
            label = f"{first.year:04d}-{first.month:02d}"
        elif by == "quarter":
            label = f"{first.year:04d}-Q{(first.month - 1) // 3 + 1}"
        else:
            label = f"{first.year:04d}"
        labels.append(label)
        starts.append(first.isoformat())
    return codes.reshape(-1), labels, starts, ends


@dataclass
class Shares:
    """Per period (P) and topic (K): ``documents`` (P,), ``share`` and ``se`` (P, K; se NaN for
    a period of one document), with the periods' ``labels``, ``starts`` and ``ends`` (the day
    after each period's last)."""

    labels: list[str]
    starts: list[str]
    ends: list[str]
    documents: np.ndarray
    share: np.ndarray
    se: np.ndarray


def period_shares(theta: np.ndarray, codes: np.ndarray, labels: list[str], starts: list[str],
                  ends: list[str]) -> Shares:
    """Each topic's mean proportion over the documents of each period and its standard error."""
    P, K = len(labels), theta.shape[1]
    n = np.bincount(codes, minlength=P).astype(np.int64)
    sums, squares = np.zeros((P, K)), np.zeros((P, K))
    for first in range(0, theta.shape[0], _BLOCK_ROWS):
        block, c = theta[first:first + _BLOCK_ROWS], codes[first:first + _BLOCK_ROWS]
        np.add.at(sums, c, block)
        np.add.at(squares, c, block * block)
    mean = sums / n[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.clip(squares - n[:, None] * mean * mean, 0.0, None) / (n[:, None] - 1)
        se = np.where(n[:, None] > 1, np.sqrt(var / n[:, None]), np.nan)
    return Shares(labels, starts, ends, n, mean, se)


# --- what is measured ----------------------------------------------------------------------------------

@dataclass
class Proportions:
    """Documents' topic proportions and where they come from: ``theta`` (D, K), ``doc_ids``,
    the topics' ``names`` and ``source`` (what the outputs call it)."""

    theta: np.ndarray
    doc_ids: list[str]
    names: list[str | None]
    source: str
    kind: str
    model: Model | None = None


def _inference_names(params: dict, n_topics: int) -> list[str | None]:
    """The topic names an inference file records of its model (unchecked there: only a list
    or mapping of strings is taken)."""
    try:
        names = names_of_topics(params.get("model_params") or {}, n_topics)
    except (TypeError, ValueError, IndexError, AttributeError):
        return [None] * n_topics
    if len(names) != n_topics or any(n is not None and not isinstance(n, str) for n in names):
        return [None] * n_topics
    return names


def as_proportions(given) -> Proportions:
    """``given`` (see :data:`THETA_KINDS`) as the proportions trends measures."""
    if isinstance(given, (str, os.PathLike)) and isinstance(os.fspath(given), str) and os.fspath(given):
        path = os.fspath(given)
        try:
            with open_regular(path) as f:
                kind = file_kind(f)
        except (OSError, InputError):  # a folder, a missing file: the loader says which
            kind = "model"
        if kind is None:
            raise InputError(path, None, "expected a model or an inference file (.npz, as ldacli infer -o FILE.npz "
                                         "writes it), found another kind of file, or a damaged one")
        given = Inference.load(path) if kind == "inference" else Model.load(path)
        source = path
    else:
        source = "the model" if isinstance(given, Model) else "the inference"
    if isinstance(given, Model):
        return Proportions(given.theta, list(given.doc_ids), given.topic_names, source, "model", given)
    if isinstance(given, Inference):
        return Proportions(given.theta, list(given.doc_ids), _inference_names(given.params, given.theta.shape[1]),
                           source, "inference")
    raise SettingError("model", f"model must be {THETA_KINDS}, found {type(given).__name__}")


def shares_table(shares: Shares, names: list[str | None]) -> Table:
    """One row per period and topic: ``period``, ``start``, ``topic``, ``name``, ``documents``,
    ``share``, ``se`` (empty for a period of one document)."""
    rows = []
    for p, label in enumerate(shares.labels):
        for k in range(shares.share.shape[1]):
            se = shares.se[p, k]
            rows.append((label, shares.starts[p], k, names[k] or "", int(shares.documents[p]),
                         float(shares.share[p, k]), None if math.isnan(se) else float(se)))
    return Table(COLUMNS, [rows])


def measure(model, dates, by: str = BY.default) -> tuple[Proportions, np.ndarray, Shares, list[str]]:
    """The proportions of ``model`` (see :data:`THETA_KINDS`), their documents' dates, the
    shares by period and notes."""
    by = BY.check(by)
    props = as_proportions(model)
    if not props.doc_ids:
        raise LdacliError(f"{props.source}: no documents to measure (a model written without its documents' "
                          f"proportions?)")
    days, notes = as_dates(dates, props.doc_ids)
    return props, days, period_shares(props.theta, *periods(days, by)), notes


@takes_settings(SETTINGS)
def trends(model, dates, *, as_frame: bool | None = None, **given):
    """Each topic's share of the documents by period of their dates (``ldacli trends``).

    ``model``: a model (its training documents) or an inference (documents inferred under a
    model: ``ldacli.infer``'s result, or the file ``ldacli infer -o FILE.npz`` writes), or the
    path of either file. ``dates``: the path of a dates file (one ISO 8601 date per document in
    the corpus's order, or ``ID<TAB>DATE`` lines), a sequence of dates in the documents' order,
    or a mapping of document ids to dates.

    Returns one row per period and topic (``period``, ``start``, ``topic``, ``name``,
    ``documents``, ``share``: the mean proportion, ``se``: its standard error): a pandas
    DataFrame (``start`` as datetime64; the default when pandas is installed) or, with
    ``as_frame=False`` or without pandas, a dict of NumPy arrays.

    >>> t = ldacli.trends("model.npz", "dates.txt", by="month")                  # doctest: +SKIP
    >>> t.pivot(index="start", columns="topic", values="share").plot()            # doctest: +SKIP
    """
    props, _, shares, _ = measure(model, dates, given.get("by") or BY.default)
    table = shares_table(shares, props.names)
    if as_frame is None:
        try:
            pandas_module()
            as_frame = True
        except LdacliError:
            as_frame = False
    checks.flag("as_frame", as_frame)
    rows = list(table.rows())
    columns = {name: [r[i] for r in rows] for i, (name, _) in enumerate(COLUMNS)}
    arrays = {"period": np.array(columns["period"], dtype=np.str_),
              "start": np.array(columns["start"], dtype="datetime64[D]"),
              "topic": np.array(columns["topic"], dtype=np.int64), "name": np.array(columns["name"], dtype=np.str_),
              "documents": np.array(columns["documents"], dtype=np.int64),
              "share": np.array(columns["share"], dtype=np.float64),
              "se": np.array([np.nan if v is None else v for v in columns["se"]], dtype=np.float64)}
    if not as_frame:
        return arrays
    pd = pandas_module()
    return pd.DataFrame(arrays)


# --- appending to a table ------------------------------------------------------------------------------

def _number(path: str, line: int | None, column: str, value, kind: str):
    try:
        if kind == "int":
            if isinstance(value, bool) or isinstance(value, float):
                raise ValueError
            out = int(value)
            if out < 0:
                raise ValueError
            return out
        if value is None or value == "":
            return None
        out = float(value)
        if not math.isfinite(out):
            raise ValueError
        return out
    except (TypeError, ValueError):
        raise InputError(path, line, f"expected {'a count' if kind == 'int' else 'a number'} in column {column}, "
                                     f"found {value!r:.60}") from None


def read_table(path: str, format: str) -> list[dict]:
    """The rows of a trends table written before (``format`` tsv, csv, jsonl or parquet),
    checked: its columns are :data:`COLUMNS`, every value of its kind."""
    names = [n for n, _ in COLUMNS]
    raw: list[tuple[int | None, dict]] = []
    try:
        if format == "parquet":
            _, pq = pyarrow_modules()
            try:
                table = pq.read_table(path)
            except Exception as exc:  # pyarrow raises its own kinds for a damaged file
                raise InputError(path, None, f"expected a Parquet table, found another kind of file ({exc})") from None
            if table.column_names != names:
                raise InputError(path, None, f"expected the columns {', '.join(names)}, found "
                                             f"{', '.join(table.column_names)}")
            raw = [(None, r) for r in table.to_pylist()]
        elif format == "jsonl":
            for lineno, line in _lines(path):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(path, lineno, f"expected a JSON object, found invalid JSON ({exc})") from None
                except RecursionError:
                    raise InputError(path, lineno, "expected a JSON object, found values nested too deeply") from None
                if not isinstance(row, dict) or list(row) != names:
                    raise InputError(path, lineno, f"expected an object of {', '.join(names)}, found {line[:80]!r}")
                raw.append((lineno, row))
        else:  # each line whole (at most the readers' longest), as csv reads a file: with its line end
            reader = csv.reader((line + "\n" for _, line in _lines(path)), delimiter="\t" if format == "tsv" else ",")
            try:
                header = next(reader, None)
                if header is None:
                    return []
                if header != names:
                    raise InputError(path, 1, f"expected the header {','.join(names)}, found {','.join(header)[:80]}")
                for row in reader:
                    if len(row) != len(names):
                        raise InputError(path, reader.line_num, f"expected {len(names)} fields, found {len(row)}")
                    raw.append((reader.line_num, dict(zip(names, row))))
            except csv.Error as exc:  # a field longer than the csv module's limit, a stray quote
                raise InputError(path, reader.line_num, f"expected {format.upper()} fields, found {exc}") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    rows = []
    for line, r in raw:
        if not isinstance(r["period"], str) or not isinstance(r["start"], str):
            raise InputError(path, line, f"expected a period and its first day, found {r['period']!r:.40}")
        rows.append({"period": r["period"], "start": r["start"], "topic": _number(path, line, "topic", r["topic"], "int"),
                     "name": r["name"] or "", "documents": _number(path, line, "documents", r["documents"], "int"),
                     "share": _number(path, line, "share", r["share"], "float"),
                     "se": _number(path, line, "se", r["se"], "float"), "line": line})
    return rows


def _combined(n1: int, m1: float, se1: float | None, n2: int, m2: float, se2: float | None):
    """The count, mean and standard error of two groups together, from each group's."""
    def squares(n, m, se):  # the sum of squares of a group
        return m * m if n == 1 else (n - 1) * n * (se or 0.0) ** 2 + n * m * m

    n = n1 + n2
    mean = (n1 * m1 + n2 * m2) / n
    var = max(0.0, squares(n1, m1, se1) + squares(n2, m2, se2) - n * mean * mean) / (n - 1)
    return n, mean, math.sqrt(var / n)


def merge_tables(path: str, old: list[dict], new: Table, by: str) -> tuple[Table, list[str], list[str]]:
    """``new``'s rows merged into the table ``old`` read from ``path`` (see the module
    docstring): the merged table, the periods added and the periods merged."""
    form = PERIOD_FORMS[BY.check(by)]
    for r in old:
        if not form.match(r["period"]):
            raise InputError(path, r["line"], f"expected periods by {by} like those written now, found "
                                              f"{r['period']!r:.40}")
    new_rows = list(new.rows())
    topics_old, topics_new = sorted({r["topic"] for r in old}), sorted({r[2] for r in new_rows})
    if old and topics_old != topics_new:
        raise LdacliError(f"{path}: holds topics {_ids(topics_old)}, these proportions have {_ids(topics_new)}: "
                          f"shares of another set of topics go in a table of their own")
    merged: dict[tuple[str, int], tuple] = {(r["period"], r["topic"]): (r["period"], r["start"], r["topic"], r["name"],
                                                                         r["documents"], r["share"], r["se"])
                                            for r in old}
    periods_old = {r["period"] for r in old}
    added, combined = [], []
    for row in new_rows:
        period, start, topic, name, n2, m2, se2 = row
        key = (period, topic)
        if key in merged:
            _, _, _, _, n1, m1, se1 = merged[key]
            n, mean, se = _combined(n1, m1, se1, n2, m2, se2)
            merged[key] = (period, start, topic, name, n, mean, se)
        else:
            merged[key] = row
        (combined if period in periods_old else added).append(period)
    rows = sorted(merged.values(), key=lambda r: (r[1], r[0], r[2]))
    return Table(COLUMNS, [rows]), sorted(set(added)), sorted(set(combined))


def _ids(ids: list[int]) -> str:
    return f"0 to {ids[-1]}" if ids == list(range(len(ids))) and ids else ", ".join(map(str, ids[:10]))


# --- text for people ----------------------------------------------------------------------------------

def text_lines(props: Proportions, days: np.ndarray, shares: Shares, by: str, *,
               words: dict[int, str] | None = None) -> Iterable[str]:
    """The shares for people: the periods and their documents, then each topic's share by
    period as a sparkline, its first and last share and the change, and the topics that rose
    and fell most."""
    P = len(shares.labels)
    yield (f"{printable(props.source)}: {len(props.doc_ids):,} documents from {days.min()} to {days.max()}, "
           f"by {by}: {P} period{'s' if P != 1 else ''}")
    width = max(len(label) for label in shares.labels)
    yield f"{'period':<{width}}  documents"
    for label, n in zip(shares.labels, shares.documents):
        yield f"{label:<{width}}  {n:>9,}"
    K = shares.share.shape[1]
    high = float(shares.share.max()) if shares.share.size else 0.0
    yield (f"each topic's share (mean proportion) by period, one mark per period on a common scale (0 to "
           f"{100 * high:.1f}%), first -> last period:")
    tw = len(str(K - 1))
    change = shares.share[-1] - shares.share[0]
    for k in range(K):
        name = props.names[k]
        yield (f"  topic {k:>{tw}}{(' ' + printable(name)) if name else ''}: "
               f"{sparkline(list(shares.share[:, k]), 0.0, high)}  {100 * shares.share[0, k]:.1f}% -> "
               f"{100 * shares.share[-1, k]:.1f}% ({100 * change[k]:+.1f} points)"
               + (f": {printable(words[k])}" if words and k in words else ""))
    if P > 1 and K > 1:
        order = np.argsort(change, kind="stable")
        rose = [f"{k} ({100 * change[k]:+.1f})" for k in order[::-1][:3] if change[k] > 0]
        fell = [f"{k} ({100 * change[k]:+.1f})" for k in order[:3] if change[k] < 0]
        yield f"rose most: {', '.join(rose) or 'none'}; fell most: {', '.join(fell) or 'none'} (points of share)"
