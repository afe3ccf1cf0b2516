"""Tables leaving ldacli: one writer per format, every one streaming batches of rows.

A :class:`Table` is its columns (a name and a kind each) and an iterable of row batches, so a
table of millions of rows is written as it is produced, never held whole. The writers:

* ``tsv`` and ``csv``: a header, then one line per row, ``\n`` ended; a field holding the
  separator, a quote, ``\r``, ``\n`` or another character some reader takes for a line end
  (:data:`LINE_BREAKS`) is quoted as RFC 4180 says (in double quotes, quotes doubled), so every
  row parses back with every id and word exactly: ``csv.reader``, pandas, R's
  ``read.delim(quote='"')`` (Python's :mod:`csv` writer leaves ``\r`` unquoted with ``\n`` line
  ends, and pandas then starts a new row at it); floats with 6 significant digits.
  pandas reads ``null``, ``NA``, ``nan``, ``None``, ... as missing values, quoted or not, unless
  told ``keep_default_na=False`` (docs/guide/exports-and-report.md shows how each format reads back);
* ``jsonl``: one JSON object per row, UTF-8; U+2028 and U+2029, DEL, the C1 and bidi controls
  escaped too (:func:`ldacli.escaping.json_text`), so no reader takes them for line ends and no
  terminal acts on them; floats in full;
* ``parquet``: Apache Parquet through pyarrow (the ``parquet`` extra), one row group per batch,
  float64 and int64 columns, UTF-8 strings.

On a terminal the text formats are escaped (:func:`ldacli.escaping.printable`, tabs and line
ends kept) and Parquet is refused; to a pipe or a file they are written exactly.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from ldacli.errors import LdacliError
from ldacli.escaping import PrintableWriter, is_terminal, json_text

TABLE_FORMATS = ("tsv", "csv", "jsonl", "parquet")
# Column kinds and how each is stored in Parquet.
KINDS = ("str", "int", "float", "str_list")
PARQUET_EXTRA = "pip install 'ldacli[parquet]'"
# Rows per batch the table builders aim at.
BATCH_ROWS = 4096
# Characters a reader may take for the end of a line: a TSV/CSV field holding one is quoted
# (\r and \n for every CSV reader; the others for those that split with str.splitlines).
LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Formats that are bytes, not text: never written to a terminal.
BINARY_FORMATS = ("parquet", "npz")


@dataclass
class Table:
    """``columns``: ``(name, kind)`` pairs, kind one of :data:`KINDS`; ``batches``: an iterable
    of lists of rows (tuples in column order), consumed once."""

    columns: list[tuple[str, str]]
    batches: Iterable[list[tuple]]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def rows(self) -> Iterator[tuple]:
        for batch in self.batches:
            yield from batch


def batched(rows: Iterable[tuple], size: int = BATCH_ROWS) -> Iterator[list[tuple]]:
    """``rows`` in lists of ``size``."""
    batch: list[tuple] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def text_cell(value: Any, kind: str) -> str:
    """A value as a TSV/CSV cell: floats with 6 significant digits, lists space-separated,
    None (no value) empty."""
    if value is None:
        return ""
    if kind == "float":
        return f"{value:.6g}"
    if kind == "str_list":
        return " ".join(value)
    return str(value)


def json_line(obj: Any) -> str:
    """``obj`` as one line of JSON (UTF-8 text; U+2028, U+2029 and the controls escaped),
    newline ended."""
    return json_text(obj, ensure_ascii=False) + "\n"


def _needs_quotes(sep: str) -> re.Pattern:
    return re.compile("[" + re.escape(sep + '"' + LINE_BREAKS) + "]")


def quoted(cell: str, needs_quotes: re.Pattern) -> str:
    """``cell`` as it is, or in double quotes with its quotes doubled when ``needs_quotes``
    finds the separator, a quote or a line break in it (:data:`LINE_BREAKS`)."""
    return '"' + cell.replace('"', '""') + '"' if needs_quotes.search(cell) else cell


def delimited_line(cells: Iterable[str], sep: str) -> str:
    """One TSV/CSV row (no line end), each cell :func:`quoted`."""
    needs_quotes = _needs_quotes(sep)
    return sep.join(quoted(c, needs_quotes) for c in cells)


def write_delimited(table: Table, out: IO[str], sep: str) -> None:
    needs_quotes = _needs_quotes(sep)
    out.write(delimited_line(table.names, sep) + "\n")
    kinds = [kind for _, kind in table.columns]
    text = [i for i, kind in enumerate(kinds) if kind in ("str", "str_list")]  # numbers need no quotes
    # a row of no None and no list is one %-format, as text_cell gives its cells ("%.6g" is
    # f"{v:.6g}", "%s" is str(v)): a doc-topics table of 200,000 rows and 100 topics in 2 s, not 13
    line = sep.join("%.6g" if kind == "float" else "%s" for kind in kinds) + "\n"
    one_format = "str_list" not in kinds
    for batch in table.batches:
        for row in batch:  # a row at a time: one huge write that a closed pipe cuts short can pass for done
            whole = one_format and None not in row
            cells = list(row) if whole else [text_cell(v, k) for v, k in zip(row, kinds)]
            for i in text:
                cells[i] = quoted(str(cells[i]), needs_quotes)
            out.write(line % tuple(cells) if whole else sep.join(cells) + "\n")


def write_jsonl(table: Table, out: IO[str]) -> None:
    names = table.names
    for batch in table.batches:
        for row in batch:  # a row at a time, as write_delimited
            out.write(json_line(dict(zip(names, row))))


def pyarrow_modules():
    """pyarrow and pyarrow.parquet, or an error naming the extra that installs them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise LdacliError(f"parquet output needs pyarrow, which the parquet extra installs: {PARQUET_EXTRA}") from None
    return pyarrow, pyarrow.parquet


def write_parquet(table: Table, out: IO[bytes]) -> None:
    pa, pq = pyarrow_modules()
    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "str_list": pa.list_(pa.string())}
    schema = pa.schema([(name, types[kind]) for name, kind in table.columns])
    with pq.ParquetWriter(pa.PythonFile(out, mode="w"), schema) as writer:
        wrote = False
        for batch in table.batches:
            columns = list(zip(*batch)) if batch else [[] for _ in table.columns]
            writer.write_table(pa.table([pa.array(list(c), type=t) for c, t in zip(columns, schema.types)],
                                        schema=schema))
            wrote = True
        if not wrote:
            writer.write_table(schema.empty_table())


def text_writer(out: IO[bytes], write: Callable[[IO[str]], None]) -> None:
    """Run ``write`` on a UTF-8 text stream over the binary ``out`` (left open), escaped
    (tabs and line ends kept) when ``out`` is a terminal. A lone surrogate (a file name that is
    not UTF-8, in a corpus built through the Python API) is written as ``\\udcff``, as on a
    terminal."""
    text = io.TextIOWrapper(out, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=False)
    try:
        write(PrintableWriter(text) if is_terminal(out) else text)
        text.flush()
    finally:
        text.detach()


def write_lines(lines: Iterable[str], out: IO[bytes]) -> None:
    """Write text ``lines`` (each with its line end) to the binary ``out`` (:func:`text_writer`)."""
    text_writer(out, lambda t: [t.write(line) for line in lines])


def check_stream(format: str, out: IO[bytes]) -> None:
    """Refuse a binary ``format`` (:data:`BINARY_FORMATS`) for a terminal ``out``."""
    if format in BINARY_FORMATS and is_terminal(out):
        raise LdacliError(f"{format} is binary: not written to a terminal; send stdout to a file or a pipe, or "
                          f"give -o FILE")


def write_table(table: Table, out: IO[bytes], format: str) -> None:
    """Write ``table`` to the binary stream ``out`` as ``format`` (one of :data:`TABLE_FORMATS`)."""
    check_stream(format, out)
    if format == "parquet":
        write_parquet(table, out)
    elif format == "jsonl":
        text_writer(out, lambda t: write_jsonl(table, t))
    elif format in ("tsv", "csv"):
        text_writer(out, lambda t: write_delimited(table, t, "\t" if format == "tsv" else ","))
    else:
        raise ValueError(f"format: expected one of {', '.join(TABLE_FORMATS)}, found {format!r}")


def to_pandas(table: Table):
    """``table`` as a pandas DataFrame (the ``pandas`` extra)."""
    try:
        import pandas
    except ImportError:
        raise LdacliError("to_pandas needs pandas, which the pandas extra installs: pip install 'ldacli[pandas]'") from None
    return pandas.DataFrame(list(table.rows()), columns=table.names)
