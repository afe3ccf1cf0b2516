"""Tables leaving ldacli: one writer per format, every one streaming batches of rows.

A :class:`Table` is its columns (a name and a kind each) and an iterable of row batches, so a
table of millions of rows is written as it is produced, never held whole. The writers:

* ``tsv`` and ``csv``: a header, then one line per row (Python's :mod:`csv`, which quotes a
  field holding the separator, a quote or a line break, doubling quotes, so every row parses
  back: ``csv.reader``, pandas, R's ``read.delim(quote='"')``); floats with 6 significant digits;
* ``jsonl``: one JSON object per row, UTF-8; U+2028 and U+2029 escaped too, so no reader takes
  them for line ends; floats in full;
* ``parquet``: Apache Parquet through pyarrow (the ``parquet`` extra), one row group per batch,
  float64 and int64 columns, UTF-8 strings.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from ldacli.errors import LdacliError

TABLE_FORMATS = ("tsv", "csv", "jsonl", "parquet")
# Column kinds and how each is stored in Parquet.
KINDS = ("str", "int", "float", "str_list")
PARQUET_EXTRA = "pip install 'ldacli[parquet]'"
# Rows per batch the table builders aim at.
BATCH_ROWS = 4096


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
    """A value as a TSV/CSV cell: floats with 6 significant digits, lists space-separated, None
    (a missing value) empty."""
    if value is None:
        return ""
    if kind == "float":
        return f"{value:.6g}"
    if kind == "str_list":
        return " ".join(value)
    return str(value)


def json_line(obj: Any) -> str:
    """``obj`` as one line of JSON (UTF-8 text, U+2028 and U+2029 escaped), newline ended."""
    return json.dumps(obj, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n"


def write_delimited(table: Table, out: IO[str], sep: str) -> None:
    writer = csv.writer(out, delimiter=sep, lineterminator="\n")
    writer.writerow(table.names)
    kinds = [kind for _, kind in table.columns]
    for batch in table.batches:
        writer.writerows([text_cell(v, k) for v, k in zip(row, kinds)] for row in batch)


def write_jsonl(table: Table, out: IO[str]) -> None:
    names = table.names
    for batch in table.batches:
        out.write("".join(json_line(dict(zip(names, row))) for row in batch))


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
    """Run ``write`` on a UTF-8 text stream over the binary ``out`` (left open)."""
    text = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=False)
    try:
        write(text)
        text.flush()
    finally:
        text.detach()


def write_table(table: Table, out: IO[bytes], format: str) -> None:
    """Write ``table`` to the binary stream ``out`` as ``format`` (one of :data:`TABLE_FORMATS`)."""
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
