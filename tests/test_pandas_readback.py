"""Every table ``ldacli export`` writes reads back with pandas exactly as written, by the lines
the docs show: words and document ids that pandas takes for missing values (``null``, ``NA``,
``nan``, ``None``, ...) or for numbers (``007``) stay the strings they are."""


import numpy as np
import pytest
from click.testing import CliRunner

import docs_pages
import ldacli
from ldacli import exporting as export
from ldacli.cli import main

pd = pytest.importorskip("pandas")
# Strings pandas' read_csv takes for missing values by default (its STR_NA_VALUES), numbers and
# dates it converts, and the characters that need quoting.
HOSTILE = ["null", "NULL", "NA", "N/A", "n/a", "nan", "NaN", "-nan", "-NaN", "None", "none", "<NA>", "#N/A",
           "#N/A N/A", "#NA", "-1.#IND", "1.#IND", "-1.#QNAN", "1.#QNAN", "True", "FALSE", "007", "1e5", "inf", "-Inf",
           "2020-01-01", "a,b", 'q"u', "tab\tx", "line\nbreak", " spaced", "=1+1"]
FORMATS = ("parquet", "jsonl", "tsv", "csv")


def readme_lines() -> dict[str, str]:
    """The docs' pandas lines: the preamble, and the line reading each format."""
    block = docs_pages.marked_block("pandas: read back", "docs/guide/exports-and-report.md")
    lines = {"preamble": "\n".join(line for line in block.splitlines() if "words." not in line)}
    for fmt in FORMATS:
        (line,) = [line for line in block.splitlines() if f'"words.{fmt}"' in line]
        lines[fmt] = line
    return lines


@pytest.fixture(scope="module")
def hostile_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 4, size=(len(HOSTILE), len(HOSTILE)))
    corpus = ldacli.Corpus.from_matrix(counts, vocab=HOSTILE, doc_ids=HOSTILE)
    model = ldacli.train(corpus, 3, iterations=10, seed=1, threads=1)
    path = folder / "m.npz"
    model.save(str(path))
    return folder, ldacli.load_model(str(path))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("what", ["doc-topics", "topic-words", "topic-keys"])
def test_every_export_of_hostile_words_reads_back_with_pandas_as_the_docs_show(hostile_model, what, fmt, tmp_path,
                                                                                   monkeypatch):
    folder, model = hostile_model
    result = CliRunner().invoke(main, ["export", str(folder / "m.npz"), what, "--format", fmt, "-o",
                                       str(tmp_path / f"words.{fmt}")])
    assert result.exit_code == 0, result.output
    lines = readme_lines()
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(lines["preamble"], scope)
    exec(lines[fmt], scope)
    got = scope["words"]
    expected = ldacli.files.tables.to_pandas(export.table(model, what))
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for column, kind in export.table(model, what).columns:
        mine, theirs = got[column].tolist(), expected[column].tolist()
        if kind == "str":
            assert mine == theirs, column
        elif kind == "str_list":  # a list in Parquet and JSON lines, space-separated in TSV and CSV
            assert [list(x) for x in mine] == theirs if fmt in ("parquet", "jsonl") else \
                mine == [" ".join(x) for x in theirs]
        elif kind == "float":
            assert np.allclose(np.asarray(mine, dtype=float), np.asarray(theirs, dtype=float), rtol=1e-5)
        else:
            assert mine == theirs, column
    if what == "topic-words":
        assert sorted(got["word"].tolist()) == sorted(HOSTILE * model.n_topics)


def test_pandas_without_the_options_loses_the_words_which_is_why_the_readme_gives_them(hostile_model, tmp_path):
    """The failure the options prevent, so that this file tests something real: pandas' defaults
    turn the words into NaN and 007 into 7."""
    folder, _ = hostile_model
    out = tmp_path / "words.tsv"
    assert CliRunner().invoke(main, ["export", str(folder / "m.npz"), "topic-words", "-o", str(out)]).exit_code == 0
    words = pd.read_csv(out, sep="\t")["word"].tolist()
    assert sum(1 for w in words if not isinstance(w, str)) >= 3 * 13
