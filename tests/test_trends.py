"""ldacli trends and ldacli.trends: the dates reader (ISO 8601, corpus order or keyed by id, every
error naming the file and the line), periods, shares and standard errors against NumPy, an
inference file appended to a table night after night, every output format, and the page in a real
browser with hostile names."""

import datetime
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import docs_pages
import ldacli
from ldacli.cli import main
from ldacli.errors import InputError, SettingError
from ldacli.over_time.trends import parse_date, period_shares, periods, read_dates

THEMES = ["apples pears plums cherries orchard harvest fruit juice",
          "rivers lakes oceans water boats sailing harbour fishing",
          "engines wheels brakes motor garage driving petrol roads"]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def dated(tmp_path_factory):
    """A text corpus whose first theme grows month by month, its model, and its dates (one per line)."""
    folder = tmp_path_factory.mktemp("trends")
    rng = np.random.default_rng(5)
    lines, dates = [], []
    for month in range(1, 7):
        for i in range(40):
            theme = 0 if rng.random() < month / 8 else 1 + i % 2
            words = THEMES[theme].split()
            lines.append(" ".join(rng.choice(words, 12)))
            dates.append(f"2024-{month:02d}-{1 + i % 28:02d}")
    (folder / "notes.txt").write_text("\n".join(lines) + "\n")
    (folder / "dates.txt").write_text("\n".join(dates) + "\n")
    model = folder / "m.npz"
    r = run("train", folder / "notes.txt", "-k", 3, "--iterations", 100, "--seed", 1, "--stop-words", "none", "-q",
            "-o", model)
    assert r.exit_code == 0, r.stderr
    return folder, model, dates


@pytest.mark.parametrize("text, day", [
    ("2024-03-05", "2024-03-05"), ("20240305", "2024-03-05"), ("2024-03", "2024-03-01"), ("2024", "2024-01-01"),
    ("2024-W10-2", "2024-03-05"), ("2024W102", "2024-03-05"), ("2024-W10", "2024-03-04"), ("2024-065", "2024-03-05"),
    ("2024-03-05T23:30:00-05:00", "2024-03-05"), ("2024-03-05 23:30Z", "2024-03-05"),
    ("2024-03-05T10:30:00.123+02:00", "2024-03-05"), ("2024-03-05T24:00", "2024-03-05"), (" 2024-03-05\t", "2024-03-05"),
    ("2020-W53-7", "2021-01-03"), ("2024-366", "2024-12-31"),
])
def test_iso_8601_dates(text, day):
    assert parse_date(text).isoformat() == day


@pytest.mark.parametrize("text, why", [
    ("yesterday", "expected an ISO 8601 date"), ("2024-13-01", "month must be in 1..12"),
    ("2024-02-30", "day is out of range"), ("202403", "expected an ISO 8601 date"), ("2023-366", "outside 2023"),
    ("2021-W53", "week"), ("2024-03T10:00", "a time needs a whole date"), ("2024-03-05T25:00", "does not exist"),
    ("2024-03-05T10:00+25:00", "the offset +25:00 does not exist"), ("05/03/2024", "expected an ISO 8601 date"),
    ("", "expected an ISO 8601 date"),
])
def test_what_is_not_an_iso_8601_date_is_refused_saying_why(text, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        parse_date(text)


def test_periods_and_their_labels():
    days = np.array(["2024-12-30", "2025-01-05", "2025-01-06", "2021-01-03", "2024-02-29", "2024-03-31"],
                    dtype="datetime64[D]")
    codes, labels, starts, ends = periods(days, "week")
    assert labels == ["2020-W53", "2024-W09", "2024-W13", "2025-W01", "2025-W02"]
    assert starts == ["2020-12-28", "2024-02-26", "2024-03-25", "2024-12-30", "2025-01-06"]
    assert ends[0] == "2021-01-04" and codes.tolist() == [3, 3, 4, 0, 1, 2]
    assert periods(days, "month")[1] == ["2021-01", "2024-02", "2024-03", "2024-12", "2025-01"]
    codes, labels, starts, ends = periods(days, "quarter")
    assert labels == ["2021-Q1", "2024-Q1", "2024-Q4", "2025-Q1"] and starts[2] == "2024-10-01" and ends[2] == "2025-01-01"
    assert periods(days, "year")[1:3] == (["2021", "2024", "2025"], ["2021-01-01", "2024-01-01", "2025-01-01"])
    assert periods(days, "day")[1][0] == "2021-01-03"
    with pytest.raises(SettingError, match="by must be one of day, week, month, quarter, year"):
        periods(days, "fortnight")


def test_shares_and_standard_errors_are_numpys():
    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.ones(5), size=300)
    codes = rng.integers(0, 7, size=300)
    codes[codes == 6] = 5
    codes[0] = 6  # a period of one document
    shares = period_shares(theta, codes, [str(p) for p in range(7)], [""] * 7, [""] * 7)
    for p in range(7):
        rows = theta[codes == p]
        assert shares.documents[p] == len(rows)
        assert np.allclose(shares.share[p], rows.mean(axis=0), rtol=1e-12)
        if len(rows) > 1:
            assert np.allclose(shares.se[p], rows.std(axis=0, ddof=1) / np.sqrt(len(rows)), rtol=1e-9)
        else:
            assert np.isnan(shares.se[p]).all()


def test_trends_of_a_model_by_month(dated):
    pd = pytest.importorskip("pandas")
    folder, model, dates = dated
    frame = ldacli.trends(str(model), str(folder / "dates.txt"), by="month")
    assert list(frame.columns) == ["period", "start", "topic", "name", "documents", "share", "se"]
    assert frame["start"].dtype.kind == "M" and len(frame) == 6 * 3 and (frame["documents"] == 40).all()
    m = ldacli.load_model(str(model))
    first = frame[frame["period"] == "2024-01"]
    assert np.allclose(first["share"], m.theta[:40].mean(axis=0))
    # the growing theme's topic rises, as the corpus was made
    fruit = int(np.argmax([dict(m.top_words(8)[k]).get("apples", 0) for k in range(3)]))
    rising = frame[frame["topic"] == fruit]["share"].to_numpy()
    assert rising[-1] > rising[0] + 0.3
    # the same from a list of dates, a mapping and the CLI's table
    arrays = ldacli.trends(m, dates, by="month", as_frame=False)
    assert np.array_equal(arrays["share"], frame["share"].to_numpy())
    assert arrays["start"].dtype == np.dtype("datetime64[D]")
    keyed = ldacli.trends(m, dict(zip(m.doc_ids, dates)), by="quarter", as_frame=False)
    assert keyed["period"].tolist() == ["2024-Q1"] * 3 + ["2024-Q2"] * 3
    tsv = run("trends", model, "--dates", folder / "dates.txt", "--format", "tsv")
    assert tsv.exit_code == 0, tsv.stderr
    assert np.allclose(pd.read_csv(io.StringIO(tsv.stdout), sep="\t")["share"], frame["share"], atol=1e-6)
    text = run("trends", model, "--dates", folder / "dates.txt", "--by", "month")
    lines = text.stdout.splitlines()
    assert lines[0] == f"{model}: 240 documents from 2024-01-01 to 2024-06-28, by month: 6 periods"
    assert lines[2] == "2024-01         40" and any(line.startswith(f"  topic {fruit}: ") for line in lines)
    assert lines[-1].startswith(f"rose most: {fruit} (+")
    js = json.loads(run("trends", model, "--dates", folder / "dates.txt", "--format", "json").stdout)
    assert js["by"] == "month" and len(js["periods"]) == 6 and js["topics"][fruit]["words"].startswith("apples") is not None


def test_the_dates_file_in_its_forms(dated, tmp_path):
    folder, model, dates = dated
    m = ldacli.load_model(str(model))
    expected = np.array(dates, dtype="datetime64[D]")
    forms = {
        "header.txt": "date\n" + "\n".join(dates) + "\n",
        "keyed.tsv": "".join(f"{d}\t{day}\n" for d, day in reversed(list(zip(m.doc_ids, dates)))),
        "header.tsv": "doc_id\tauthor\tdate\n" + "".join(f"{d}\tme\t{day}T12:00:00Z\n" for d, day in zip(m.doc_ids, dates)),
        "keyed.csv": "id,date\n" + "".join(f'"{d}",{day}\n' for d, day in zip(m.doc_ids, dates)) + "999,2024-01-01\n",
        "crlf.txt": "\r\n".join(dates) + "\r\n",
        "bom.txt": "\ufeff" + "\n".join(dates) + "\n\n\n",
    }
    for name, content in forms.items():
        (tmp_path / name).write_text(content, encoding="utf-8", newline="")
        days, notes = read_dates(str(tmp_path / name), m.doc_ids)
        assert np.array_equal(days, expected), name
        assert notes == ([f"{tmp_path / name}: 1 dates of documents these proportions do not have, ignored"]
                         if name == "keyed.csv" else []), name
    with gzip.open(tmp_path / "dates.txt.gz", "wt") as f:
        f.write("\n".join(dates) + "\n")
    assert np.array_equal(read_dates(str(tmp_path / "dates.txt.gz"), m.doc_ids)[0], expected)
    piped = run("trends", model, "--dates", "-", "--format", "json", input="\n".join(dates) + "\n")
    assert piped.exit_code == 0 and len(json.loads(piped.stdout)["periods"]) == 6
    # a model that held documents out: line n is still the document of id n
    held = ldacli.train(str(folder / "notes.txt"), 3, iterations=20, seed=1, holdout=0.25, patience=1000, stop_words="none")
    days, notes = read_dates(str(folder / "dates.txt"), held.doc_ids)
    assert days.tolist() == [expected[int(d) - 1] for d in held.doc_ids]
    assert "dates of documents these proportions do not have" in notes[0]


@pytest.mark.parametrize("content, where, message", [
    ("2024-01-01\nyesterday\n", 2, "expected an ISO 8601 date (2024-03-05, 2024-03, 2024, 2024-W10-2, 2024-065, "
                                   "optionally with a time and an offset: 2024-03-05T10:30:00+02:00), found 'yesterday'"),
    ("2024-01-01\n\n2024-01-03\n", 2, "expected a date (one per document, in the corpus's order), found an empty line"),
    ("2024-01-01\n2024-02-30\n", 2, "day is out of range for month, found '2024-02-30'"),
    ("1\t2024-01-01\n2\t2024-01-01\n2\t2024-01-02\n", 3, "expected one date per document, found document '2' again "
                                                         "(first on line 2)"),
    ("1\t2024-01-01\t3\n", 1, "expected two columns, a document id and its date (or a header naming the columns id "
                              "and date), found 3"),
    ("1\t2024-01-01\n2\n", 2, "expected a document id and its date, found '2'"),
    ("2024-01-01\n\xff\n", 2, "expected UTF-8 text"),
])
def test_a_dates_file_it_cannot_read_is_named_with_its_line(tmp_path, content, where, message):
    path = tmp_path / "dates.txt"
    path.write_bytes(content.encode("utf-8") if "\xff" not in content else content.encode("latin-1"))
    with pytest.raises(InputError) as info:
        read_dates(str(path), ["1", "2", "3"])
    assert info.value.line == where and message in str(info.value), str(info.value)
    assert str(info.value).startswith(f"{path}:{where}: ")


def test_a_csv_dates_file_whose_header_names_only_the_date_is_named_with_its_line(tmp_path):
    """A StopIteration traceback (found by the fuzzing benchmark's trends family, issue 49)."""
    path = tmp_path / "dates.csv"
    path.write_text("date\n2024-01-01\n")
    with pytest.raises(InputError) as info:
        read_dates(str(path), ["1"])
    assert str(info.value) == (f"{path}:1: expected two columns, a document id and its date (or a header naming the "
                               f"columns id and date), found 1")


def test_dates_that_do_not_cover_the_documents_are_refused(dated, tmp_path):
    folder, model, dates = dated
    short = tmp_path / "short.txt"
    short.write_text("\n".join(dates[:-1]) + "\n")
    result = run("trends", model, "--dates", short)
    assert result.exit_code == 1 and len(result.stderr.splitlines()) == 1
    assert (f"{short}: expected a date for each of the 240 documents, line n for the document of id n, found 239 "
            f"dates (document 240 has none)") in result.stderr
    keyed = tmp_path / "keyed.tsv"
    keyed.write_text("1\t2024-01-01\n")
    result = run("trends", model, "--dates", keyed)
    assert result.exit_code == 1 and "found none for 239 of the 240 (the first: '2')" in result.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(dates[:9] + ["9/10/2024"] + dates[10:]) + "\n")
    result = run("trends", model, "--dates", bad)
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {bad}:10: expected an ISO 8601 date")
    assert run("trends", model).exit_code == 2  # --dates is required
    with pytest.raises(SettingError, match="dates must give one date per document, 240 in all, found 2"):
        ldacli.trends(str(model), ["2024-01-01", "2024-01-02"])
    with pytest.raises(SettingError, match="dates must be ISO 8601 text or dates: item 1"):
        ldacli.trends(str(model), [datetime.date(2024, 1, 1), 3.5] + ["2024-01-01"] * 238)


# trends in a process of its own, held to 2 GB of address space: what a file makes it hold shows.
LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from ldacli.cli import main
main(sys.argv[1:], prog_name="ldacli")
"""


def test_a_dates_file_of_ten_million_lines_is_refused_where_it_has_more_dates_than_documents(dated, tmp_path):
    """A 200 KB gzip of 10^7 dates for a model of 240 documents was held whole (2 GB, minutes,
    SIGTERM unanswered) and then accepted (issue 49): it is refused at the first date no document
    of the model can have (by id, at most twice as many dates as documents: those held out)."""
    _, model, _ = dated
    dates = tmp_path / "dates.txt.gz"
    with gzip.open(dates, "wb", compresslevel=9) as f:
        for _ in range(100):
            f.write(b"2024-01-01\n" * 100_000)
    assert dates.stat().st_size < 300_000
    r = subprocess.run([sys.executable, "-c", LIMITED, "trends", str(model), "--dates", str(dates)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout == "", r.stderr
    assert r.stderr == (f"Error: {dates}:481: expected one date per document, 240 in all (line n for the document of "
                        f"id n: at most 480), found more: give one per document in the corpus's order, or key them by "
                        f"document id (ID<TAB>DATE)\n")
    m = ldacli.load_model(str(model))
    (tmp_path / "unnumbered.txt").write_text("2024-01-01\n" * 241)
    with pytest.raises(InputError, match=r"unnumbered.txt:241: expected one date per document, 240 in all, found more"):
        read_dates(str(tmp_path / "unnumbered.txt"), [f"d{i}" for i in range(240)])
    (tmp_path / "held.txt").write_text("2024-01-01\n" * 480)  # as many held out as kept: still read
    assert read_dates(str(tmp_path / "held.txt"), m.doc_ids)[1] == [f"{tmp_path / 'held.txt'}: 240 dates of "
                                                                    f"documents these proportions do not have (held out?)"]


@pytest.mark.parametrize("name, content, where, message", [
    ("shares.tsv", "period\tstart\ttopic\tname\tdocuments\tshare\tse\n2024-06-30\t2024-06-30\t0\t" + "x" * 200_000
     + "\t3\t0.5\t0.1\n", 2, "expected TSV fields, found field larger than field limit (131072)"),
    ("shares.jsonl", "[" * 200_000 + "]" * 200_000 + "\n", 1, "expected a JSON object, found values nested too deeply"),
    ("ids.tsv", "x" * 200_000 + "\t2024-01-01\n", 1, "expected tab-separated fields, found field larger than field "
                                                     "limit (131072)"),
])
def test_a_field_of_200000_characters_or_json_nested_deeply_is_one_line(dated, tmp_path, name, content, where, message):
    """In the table --append merges into, and in a dates file's first line: a _csv.Error or a
    RecursionError traceback before (issue 49)."""
    _, model, dates = dated
    path = tmp_path / name
    path.write_text(content)
    if name.startswith("shares"):
        (tmp_path / "dates.txt").write_text("\n".join(dates) + "\n")
        r = run("trends", model, "--dates", tmp_path / "dates.txt", "-o", path, "--append")
    else:
        r = run("trends", model, "--dates", path)
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.exception
    assert r.stderr == f"Error: {path}:{where}: {message}\n"


def test_a_nightly_job_appends_todays_shares_without_retraining(dated, tmp_path):
    """infer the day's new documents with the same model, then trends --append: a new day is added,
    a day seen before is combined exactly, as if its documents had been measured together."""
    pd = pytest.importorskip("pandas")
    folder, model, _ = dated
    rng = np.random.default_rng(9)
    days = {}
    for day, n in (("2024-07-01", 30), ("2024-07-02", 25), ("2024-07-02b", 10)):
        texts = [" ".join(rng.choice(THEMES[i % 3].split(), 10)) for i in range(n)]
        (tmp_path / f"{day}.txt").write_text("\n".join(texts) + "\n")
        (tmp_path / f"{day}.dates").write_text(
            "".join(f"{i + 1}\t{day[:10]}T{8 + i % 10:02d}:00:00+02:00\n" for i in range(n)))
        r = run("infer", model, tmp_path / f"{day}.txt", "-o", tmp_path / f"{day}.npz", "--seed", 1, "-q")
        assert r.exit_code == 0, r.stderr
        days[day] = tmp_path / f"{day}.npz"
    for fmt in ("tsv", "csv", "jsonl", "parquet"):
        if fmt == "parquet":
            pytest.importorskip("pyarrow")
        table = tmp_path / f"shares.{fmt}"
        for day in days:
            r = run("trends", days[day], "--dates", tmp_path / f"{day}.dates", "--by", "day", "-o", table, "--append")
            assert r.exit_code == 0, r.stderr
        assert "1 merged with its rows (2024-07-02)" in r.stderr
        read = {"tsv": lambda p: pd.read_csv(p, sep="\t"), "csv": pd.read_csv,
                "jsonl": lambda p: pd.read_json(p, lines=True), "parquet": pd.read_parquet}[fmt]
        frame = read(table)
        assert frame["period"].astype(str).tolist() == ["2024-07-01"] * 3 + ["2024-07-02"] * 3
        assert frame["documents"].tolist() == [30] * 3 + [35] * 3
        # the merged day is what the 35 documents measured together give
        together = np.vstack([ldacli.Inference.load(str(days[d])).theta for d in ("2024-07-02", "2024-07-02b")])
        tol = 1e-5 if fmt in ("tsv", "csv") else 1e-12
        assert np.allclose(frame["share"][3:], together.mean(axis=0), rtol=tol)
        assert np.allclose(frame["se"][3:], together.std(axis=0, ddof=1) / np.sqrt(35), rtol=tol)
    # refused: appending to stdout or to a page; a table of other topics; a damaged table
    r = run("trends", days["2024-07-01"], "--dates", tmp_path / "2024-07-01.dates", "--append")
    assert r.exit_code == 2 and "--append merges into a table file" in r.stderr
    other = tmp_path / "other.tsv"
    other.write_text("period\tstart\ttopic\tname\tdocuments\tshare\tse\n2024-06-30\t2024-06-30\t7\t\t3\t0.5\t0.1\n")
    r = run("trends", days["2024-07-01"], "--dates", tmp_path / "2024-07-01.dates", "--by", "day", "-o", other,
            "--append")
    assert r.exit_code == 1 and "holds topics 7, these proportions have 0 to 2" in r.stderr
    assert other.read_text().count("\n") == 2  # left as it was
    damaged = tmp_path / "damaged.tsv"
    damaged.write_text("period\tstart\ttopic\tname\tdocuments\tshare\tse\n2024-06-30\t2024-06-30\t0\t\tmany\t0.5\t\n")
    r = run("trends", days["2024-07-01"], "--dates", tmp_path / "2024-07-01.dates", "--by", "day", "-o", damaged,
            "--append")
    assert r.exit_code == 1 and f"{damaged}:2: expected a count in column documents, found 'many'" in r.stderr
    monthly = tmp_path / "monthly.tsv"
    assert run("trends", days["2024-07-01"], "--dates", tmp_path / "2024-07-01.dates", "-o", monthly).exit_code == 0
    r = run("trends", days["2024-07-02"], "--dates", tmp_path / "2024-07-02.dates", "--by", "day", "-o", monthly,
            "--append")
    assert r.exit_code == 1 and "expected periods by day like those written now, found '2024-07'" in r.stderr


# --- the page ------------------------------------------------------------------------------------------

@pytest.mark.browser
def test_the_trends_page_in_a_browser_with_hostile_names(dated, tmp_path):
    pytest.importorskip("vl_convert")
    from test_history import HOSTILE_NAMES, POKE_EVERYTHING
    from test_report import chromium, fits, open_report, severe

    folder, model, _ = dated
    named = tmp_path / "named.npz"
    named.write_bytes(model.read_bytes())
    for k in range(3):
        ldacli.name_topic(str(named), k, HOSTILE_NAMES[k])
    out = tmp_path / "trends.html"
    r = run("trends", named, "--dates", folder / "dates.txt", "--by", "week", "-o", out)
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    assert "<img src=x" not in page and "<script>window.__pwned" not in page
    for phone in (False, True):
        driver = chromium(phone)
        try:
            open_report(driver, out)
            assert severe(driver) == []
            lines = "return document.querySelectorAll('#trends-chart .mark-line path').length"
            assert driver.execute_script(lines) == 3
            assert driver.execute_script("return document.querySelectorAll('#documents-chart .mark-rect path')"
                                         ".length") == 26
            driver.execute_script("document.getElementById('trends-none').click()")
            time.sleep(0.3)
            assert driver.execute_script(lines) == 0
            driver.execute_script(POKE_EVERYTHING, "#trends-picker input, #trends-chart path, table.sortable th button")
            time.sleep(0.3)
            assert driver.execute_script("return window.__pwned") is None
            assert driver.execute_script("return document.querySelectorAll('img').length") == 0
            labels = driver.execute_script("return Array.from(document.querySelectorAll('#trends-picker span'))"
                                           ".map(s => s.textContent)")
            assert labels[0].startswith("0 " + HOSTILE_NAMES[0])
            assert severe(driver) == []
            width, screen = fits(driver)
            assert width <= driver.execute_script("return innerWidth")
            driver.save_screenshot(str(tmp_path / f"trends-{'phone' if phone else 'desktop'}.png"))
        finally:
            driver.quit()


def test_what_trends_measures_is_a_model_or_an_inference_file(dated, tmp_path):
    folder, model, dates = dated
    table = tmp_path / "theta.tsv"
    assert run("infer", model, folder / "notes.txt", "-o", table, "-q").exit_code == 0
    r = run("trends", table, "--dates", folder / "dates.txt")
    assert r.exit_code == 1 and r.stderr == (f"Error: {table}: expected a model or an inference file (.npz, as ldacli "
                                             f"infer -o FILE.npz writes it), found another kind of file, or a damaged "
                                             f"one\n")
    inferred = tmp_path / "theta.npz"
    assert run("infer", model, folder / "notes.txt", "-o", inferred, "-q", "--seed", 1).exit_code == 0
    r = run("trends", inferred, "--dates", folder / "dates.txt", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["kind"] == "inference"
    with pytest.raises(SettingError, match="model must be a Model, an Inference, or the path"):
        ldacli.trends(42, dates)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed on this machine")
def test_the_docs_makefile_appends_each_days_shares_once(dated, tmp_path):
    folder, model, _ = dated
    (makefile,) = docs_pages.code_blocks(docs_pages.read("docs/guide/over-time.md"), "make")
    (tmp_path / "Makefile").write_text(makefile)
    shutil.copyfile(model, tmp_path / "model.npz")
    env = {**os.environ, "LDACLI": f"{sys.executable} -m ldacli"}
    rng = np.random.default_rng(3)
    for day, repeat in (("2024-07-01", 2), ("2024-07-02", 1)):
        texts = [" ".join(rng.choice(THEMES[i % 3].split(), 10)) for i in range(20)]
        (tmp_path / "today.txt").write_text("\n".join(texts) + "\n")
        (tmp_path / "today.dates").write_text("\n".join([day] * 20) + "\n")
        for _ in range(repeat):  # the same night twice: the second run does nothing
            r = subprocess.run(["make", "-s", "shares.tsv"], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
    lines = (tmp_path / "shares.tsv").read_text().splitlines()
    assert lines[0] == "period\tstart\ttopic\tname\tdocuments\tshare\tse"
    assert [line.split("\t")[0] for line in lines[1:]] == ["2024-07-01"] * 3 + ["2024-07-02"] * 3
    assert {line.split("\t")[4] for line in lines[1:]} == {"20"}


def test_the_page_names_this_command_and_the_extra_when_the_extra_is_missing(tmp_path, without_the_report_extra):
    """Before the model or the dates are read (neither exists here): the command run and the extra."""
    r = run("trends", tmp_path / "absent.npz", "--dates", tmp_path / "dates.txt", "-o", tmp_path / "t.html")
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr == ("Error: the HTML page of ldacli trends needs vl-convert-python, which the report extra "
                        "installs: pip install 'ldacli[report]'\n")
    assert os.listdir(tmp_path) == []
