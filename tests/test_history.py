"""ldacli history and ldacli.history: a planted schedule (topics switching on and off at known steps,
trained as warm starts with --add-topics and --remove-topics where the truth says so) read back as
the truth made it; the order of the models; folders and patterns; models not warm-started from one
another; --max-drift; every output format; and the page in a real browser, hostile names included."""

import json
import os
import re
import shutil
import sys
import time
import weakref

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.errors import InputError, SettingError
from ldacli.model import Model
from ldacli.over_time.history import drifted, read_history

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from planted_schedule import planted_of, planted_schedule, train_schedule  # noqa: E402

# Four steps: topic 4 is born at step 1, topic 2 dies at step 2, topic 1 drifts from step 2 on (half its
# words' mass moves at each step: planted_schedule's DRIFTING topic).
SCHEDULE = [(0, 0, None), (1, 0, None), (2, 0, 2), (3, 0, None), (4, 1, None)]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def schedule(tmp_path_factory):
    """A small planted schedule trained as warm starts, its truth, and the models' paths."""
    folder = tmp_path_factory.mktemp("schedule")
    truth = planted_schedule(4, 200, 400, schedule=SCHEDULE, drift_from=2, drift_step=0.5, seed=3)
    paths = train_schedule(truth, str(folder), iterations=400, warm=60, seed=1)
    return truth, paths, folder


def test_history_reads_a_planted_schedule_as_the_truth_made_it(schedule):
    truth, paths, _ = schedule
    h = ldacli.history(paths)
    r = h.result
    assert [m["pairing"] for m in r["models"]] == [None, "descent", "descent", "descent"]
    events = [(e["step"], e["event"], e["how"]) for e in r["events"]]
    # the drifting topic ends as another distribution (JS 0.97 from where it began): its meaning changed at step 3,
    # though it descends from it (issue 49: not one topic from one subject to another)
    assert events == [(1, "born", "added"), (2, "died", "removed"), (3, "died", "meaning changed"),
                      (3, "born", "meaning changed")]
    born, died, _, _ = r["events"]
    # the topic added is the planted topic born, and the one removed the planted topic that died
    assert planted_of(ldacli.load_model(paths[1]), truth, 1)[0][born["id"]] == 4
    assert planted_of(ldacli.load_model(paths[1]), truth, 1)[0][died["id"]] == 2
    # ids of the history: the first model's, then the next free number; a removal moves later ids down
    topics = r["topics"]
    assert len(topics) == 6 and born["topic"] == 4 and topics[4]["ids"] == [None, 4, 3, 3]
    assert topics[died["topic"]]["died"] == 2 and topics[died["topic"]]["how_died"] == "removed"
    assert topics[died["topic"]]["ids"][2:] == [None, None]
    later = [t for t in topics[:4] if t["topic"] > died["topic"]]
    assert all(t["ids"][1] == t["topic"] and t["ids"][2] == t["topic"] - 1 for t in later)
    for step, path in enumerate(paths):  # each model's shares are its prevalence, summing to 1
        shares = [t["shares"][step] for t in topics if t["shares"][step] is not None]
        model = ldacli.load_model(path)
        assert len(shares) == model.n_topics and sum(shares) == pytest.approx(1.0)
    # drift: none where a topic is born; the planted drifting topic moved further than any other at
    # the steps it drifted, and the others no further than a warm start on new documents moves them
    drifting = next(t for t in topics if planted_of(ldacli.load_model(paths[0]), truth, 0)[0][t["ids"][0]] == 1)
    for t in topics:
        assert t["drifts"][t["born"]] is None
        if t is not drifting:
            assert all(d is None or 0 < d < 0.25 for d in t["drifts"])
    assert drifting["drifts"][1] < 0.25 and drifting["drifts"][2] > 0.3 and drifting["drifts"][3] is None
    became = topics[drifting["became"]]
    assert drifting["died"] == 3 and became["born"] == 3 and became["came_from"] == drifting["topic"] == 1
    assert planted_of(ldacli.load_model(paths[3]), truth, 3)[0][became["ids"][3]] == 1
    assert r["events"][2]["distance"] > 0.7 > r["events"][2]["drift"] > 0.3  # far from its words at birth
    # the tables
    assert len(h.topics) == sum(ldacli.load_model(p).n_topics for p in paths)
    assert list(h.events["how"]) == ["added", "removed", "meaning changed", "meaning changed"]
    assert list(h.models["pairing"]) == ["", "descent", "descent", "descent"]
    assert h.topics.dtypes["share"] == np.float64 and np.isnan(h.topics["drift"].iloc[0])
    assert repr(h) == "<TopicHistory: 4 models, 6 topics, 2 born and 2 died after the first model>"


def test_history_reads_models_one_at_a_time(schedule, monkeypatch):
    """Never every model's topics at once: when a model is read, only the previous one's
    topic-word array is still alive."""
    _, paths, _ = schedule
    loaded, alive_at_load = [], []
    load = Model.load

    def counting(path):
        alive_at_load.append(sum(ref() is not None for ref in loaded))
        model = load(path)
        loaded.append(weakref.ref(model.phi))
        return model

    monkeypatch.setattr(Model, "load", staticmethod(counting))
    read_history(paths * 1)
    assert len(loaded) == 4 and max(alive_at_load) <= 1


def test_models_are_ordered_by_lineage_and_a_copy_is_read_once(schedule, tmp_path):
    _, paths, _ = schedule
    copy = tmp_path / "copy-of-last.npz"
    shutil.copyfile(paths[3], copy)
    shuffled = [paths[2], str(copy), paths[0], paths[3], paths[1]]
    r = read_history(shuffled)
    assert [m["path"] for m in r["models"]] == [paths[0], paths[1], paths[2], str(copy)]
    assert r["notes"] == [f"{paths[3]}: skipped, the same file as {copy}"]
    assert [m["parent"] for m in r["models"]] == [None, 0, 1, 2]
    # as given: the steps whose model was not warm-started from the one before are matched, and say so
    given = read_history([paths[0], paths[2], paths[1]], order="given")
    assert [m["pairing"] for m in given["models"]] == [None, "matching", "matching"]
    assert "its nearest recorded ancestor here is the model of step 2" in given["models"][1]["note"]
    # a schedule whose middle model was deleted: its grandchild still follows its grandparent
    gap = read_history([paths[3], paths[0], paths[2]])
    assert [m["path"] for m in gap["models"]] == [paths[0], paths[2], paths[3]]
    assert [m["parent"] for m in gap["models"]] == [None, 0, 1]
    assert [m["pairing"] for m in gap["models"]] == [None, "matching", "descent"]
    # models not linked by lineage follow their modification times
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    shutil.copyfile(paths[0], b)
    shutil.copyfile(paths[2], a)  # a is the later model, by its content
    os.utime(b, (1_000_000, 1_000_000))
    os.utime(a, (2_000_000, 2_000_000))
    assert [m["path"] for m in read_history([str(a), str(b)])["models"]] == [str(b), str(a)]


def test_a_folder_and_a_pattern_take_the_models_in_them(schedule, tmp_path):
    _, paths, folder = schedule
    mixed = tmp_path / "models"
    mixed.mkdir()
    for p in paths:
        shutil.copyfile(p, mixed / os.path.basename(p))
    ldacli.Inference(np.full((1, 4), 0.25), ["d"], {}).save(str(mixed / "inferred.npz"))
    (mixed / ".model-03.npz.abc.tmp").write_bytes(b"half a file")
    (mixed / "notes.txt").write_text("not a model")
    r = read_history(str(mixed))
    assert [os.path.basename(m["path"]) for m in r["models"]] == [os.path.basename(p) for p in paths]
    assert r["notes"] == [f"{mixed}: skipped 1 file(s) that are not models: inferred.npz"]
    assert len(read_history(str(mixed / "model-0[0-2].npz"))["models"]) == 3
    result = run("history", str(mixed / "model-*.npz"), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["models"]) == 4
    with pytest.raises(InputError, match=r"expected ldacli model files \(\.npz\) matching this pattern, found none"):
        read_history(str(tmp_path / "nothing-*.npz"))
    with pytest.raises(InputError, match=r"expected ldacli model files \(\.npz\) in this folder, found none"):
        read_history(str(tmp_path / "models" / ".."))
    with pytest.raises(SettingError, match="models must be a model file's path"):
        read_history([])


def test_the_output_is_none_of_the_models_a_folder_or_a_pattern_stands_for(schedule, tmp_path):
    """-o FOLDER/model.npz wrote the history's table over a model of the folder, exit 0 (issue 49):
    an output must be none of the files the inputs expand to."""
    _, paths, _ = schedule
    folder = tmp_path / "models"
    folder.mkdir()
    for p in paths:
        shutil.copyfile(p, folder / os.path.basename(p))
    last = folder / os.path.basename(paths[-1])
    before = last.read_bytes()
    for given in (folder, folder / "model-*.npz"):
        for output in (last, f"{folder}/./{last.name}"):
            result = run("history", given, "-o", output, "--format", "tsv")
            assert result.exit_code == 2, (given, output, result.stderr)
            assert f"is one of the MODELS inputs ('{last}'): refusing to write over it" in result.stderr, result.stderr
            assert last.read_bytes() == before
    result = run("history", folder, "-o", folder / "history.tsv")  # a new file beside them is fine
    assert result.exit_code == 0 and (folder / "history.tsv").exists(), result.stderr


def test_models_trained_apart_are_paired_by_matching_and_aligned_ones_by_id(schedule, tmp_path):
    truth, paths, _ = schedule
    corpus = truth["corpora"][3]
    cold = tmp_path / "cold.npz"
    ldacli.train(corpus, 4, iterations=120, seed=7, threads=1, output=str(cold))
    aligned = tmp_path / "aligned.npz"
    ldacli.train(corpus, 5, iterations=120, seed=8, threads=1, output=str(aligned), align_to=str(cold))
    r = read_history([paths[3], str(cold), str(aligned)], order="given")
    assert [m["pairing"] for m in r["models"]] == [None, "matching", "aligned"]
    # the cold model finds the same planted topics: every topic continues, within diff's threshold
    assert r["models"][1]["born"] == [] and r["models"][1]["died"] == []
    assert r["models"][1]["max_drift"] < 0.7
    # the aligned model has one topic more: born, with no counterpart; its others keep their ids
    assert r["models"][2]["born"] == [4]
    assert [e["how"] for e in r["events"]] == ["no counterpart"]
    assert all(t["ids"][1] == t["ids"][2] for t in r["topics"] if t["ids"][1] is not None and t["ids"][2] is not None)
    text = run("history", paths[3], cold, aligned, "--order", "given")
    assert "step 1: not warm-started from the previous model: topics paired by diff's matching" in text.stdout
    assert "step 2: aligned to the previous model (--align-to): topic k continues topic k" in text.stdout


@pytest.mark.parametrize("change", [{"removed": [7]}, {"removed": None}, {"descent": "twice"}])
def test_a_recorded_descent_that_does_not_fit_the_two_models_is_not_followed(schedule, tmp_path, change):
    """A warm start's record naming a topic its parent lacks, or missing, was a KeyError (found by
    the fuzzing benchmark's history family, issue 49): such a pair is paired by diff's matching."""
    from ldacli.files.npz import read_npz, write_npz

    _, paths, _ = schedule
    child = tmp_path / "child.npz"
    arrays = read_npz(paths[1])
    params = json.loads(str(arrays["params"]))
    ws = params["warm_start"]
    if change.get("descent") == "twice":  # two topics continuing one
        ws["descent"] = [0] + ws["descent"][:-1]
    elif change["removed"] is None:
        del ws["removed"]
    else:
        ws["removed"] = change["removed"]
    arrays["params"] = np.str_(json.dumps(params))
    write_npz(str(child), arrays)
    result = run("history", paths[0], child, "--format", "json")
    assert result.exit_code == 0, result.exception
    assert [m["pairing"] for m in json.loads(result.stdout)["models"]] == [None, "matching"]


def test_max_drift_exits_3_naming_the_topics_and_steps(schedule):
    _, paths, _ = schedule
    r = read_history(paths)
    drifts = sorted([d for t in r["topics"] for d in t["drifts"] if d is not None]
                    + [e["drift"] for e in r["events"] if e["event"] == "died" and e["drift"] is not None])
    calm = run("history", *paths, "--max-drift", f"{drifts[-1] + 0.01:.3f}")
    assert calm.exit_code == 0 and calm.stderr == ""
    limit = (drifts[-1] + drifts[-2]) / 2
    moved = run("history", *paths, "--max-drift", f"{limit:.6f}", "--format", "json")
    assert moved.exit_code == 3, moved.stderr
    worst = drifted(r, limit)
    assert len(worst) == 1
    assert f"topic {worst[0]['topic']} at step {worst[0]['step']} ({worst[0]['drift']:.3f}, became topic " \
           f"{worst[0]['became']})" in moved.stderr
    assert len(moved.stderr.splitlines()) == 1 and json.loads(moved.stdout)["models"]
    # the planted drift is what moved further than 0.25, at the two steps it drifted (at the second its
    # meaning changed: it became another topic); births and deaths by --add-topics and --remove-topics are
    # never drift
    moved = drifted(r, 0.25)
    assert [m["step"] for m in moved] == [2, 3] and len({m["topic"] for m in moved}) == 1
    assert [m["became"] for m in moved] == [None, r["topics"][moved[0]["topic"]]["became"]]
    assert run("history", *paths, "--max-drift", "0.25").exit_code == 3
    assert run("history", *paths, "--max-drift", "2").exit_code == 2


def test_every_format_of_history(schedule, tmp_path):
    pd = pytest.importorskip("pandas")
    _, paths, _ = schedule
    text = run("history", *paths)
    assert text.exit_code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == "4 models, 6 topics over the history (ordered by lineage and modification time)"
    assert any(re.match(r"\s+step\s+1\s+\+ topic 4 \(id 4, added\): ", line) for line in lines)
    assert any(re.match(r"\s+step\s+2\s+- topic \d \(id \d, removed\): ", line) for line in lines)
    assert any(line.startswith("  topic 4:") and "born at step 1 (added)" in line for line in lines)
    # a change of meaning on every summary line: the event and both topics' lines name each other
    assert any(re.match(r"\s+step\s+3\s+- topic 1 \(id \d, meaning changed, JS 0\.\d+: became topic 5\): ", line)
               for line in lines)
    assert any(line.startswith("  topic 1:") and "died at step 3 (meaning changed: became topic 5)" in line
               for line in lines)
    assert any(line.startswith("  topic 5:") and "born at step 3 (meaning changed: was topic 1)" in line
               for line in lines)
    tsv = run("history", *paths, "--format", "tsv")
    frame = pd.read_csv(__import__("io").StringIO(tsv.stdout), sep="\t")
    assert list(frame.columns) == ["step", "model", "topic", "id", "name", "share", "drift", "event", "top_words"]
    assert len(frame) == 4 + 5 + 4 + 4 and frame["drift"].isna().sum() == 6
    assert frame[(frame["step"] == 3) & (frame["topic"] == 5)]["event"].tolist() == ["meaning changed"]
    for fmt in ("csv", "jsonl", "parquet", "json", "html"):
        if fmt == "parquet":
            pytest.importorskip("pyarrow")
        if fmt == "html":
            pytest.importorskip("vl_convert")
        out = tmp_path / f"h.{fmt}"
        result = run("history", *paths, "-o", out, "-q")
        assert result.exit_code == 0 and result.stdout == "" and result.stderr == "", (fmt, result.stderr)
        if fmt == "parquet":
            assert len(pd.read_parquet(out)) == 17
        elif fmt == "jsonl":
            assert len(pd.read_json(out, lines=True)) == 17
        elif fmt == "csv":
            assert pd.read_csv(out)["topic"].max() == 5
        elif fmt == "json":
            assert [e["how"] for e in json.loads(out.read_text())["events"]] == ["added", "removed", "meaning changed",
                                                                                 "meaning changed"]
        else:
            assert "Content-Security-Policy" in out.read_text()
    wrong = run("history", *paths, "-o", tmp_path / "h.tsv", "--format", "csv")
    assert wrong.exit_code == 2 and "expected a file name ending in .csv for --format csv" in wrong.stderr


def test_the_python_api_without_pandas_and_its_signature(schedule, without_module):
    import inspect

    _, paths, _ = schedule
    h = ldacli.history(paths, as_frame=False, top_words=3)
    assert isinstance(h.topics, dict) and h.topics["share"].dtype == np.float64
    assert h.topics["top_words"][0] == h.result["topics"][0]["words"][0] and len(h.topics["top_words"][0]) == 3
    assert h.events["how"].tolist() == ["added", "removed", "meaning changed", "meaning changed"]
    assert h.models["parent"].tolist() == [-1, 0, 1, 2]
    parameters = inspect.signature(ldacli.history).parameters
    assert {"order", "top_words", "threshold", "as_frame"} <= set(parameters)
    assert parameters["order"].default == "lineage"
    with pytest.raises(SettingError, match="order must be one of lineage, given"):
        ldacli.history(paths, order="time")
    without_module("pandas")
    assert isinstance(ldacli.history(paths).topics, dict)
    with pytest.raises(ldacli.LdacliError, match=r"pip install 'ldacli\[pandas\]'"):
        ldacli.history(paths, as_frame=True)


def test_a_file_that_is_not_a_model_is_named(schedule, tmp_path):
    _, paths, _ = schedule
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not really")
    result = run("history", paths[0], bad)
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {bad}: ") and len(result.stderr.splitlines()) == 1
    result = run("history", paths[0], tmp_path / "missing.npz")
    assert result.exit_code == 1 and "missing.npz" in result.stderr


# --- the page, in a browser ----------------------------------------------------------------------------

# Topic names (ldacli name refuses control characters) and file names (which may hold them).
HOSTILE_NAMES = ["<img src=x onerror=window.__pwned=1>", "</script><script>window.__pwned=2</script>",
                 "\" onmouseover=\"window.__pwned=3", "a & b &amp; c", "x" * 100]
HOSTILE_FILES = ["<img src=x onerror=window.__pwned=4>", "\u202eevil", "' onfocus='window.__pwned=5' autofocus='"]


# Hover over and click every element the selector finds (found again each time: a click redraws).
POKE_EVERYTHING = """
const selector = arguments[0];
const n = document.querySelectorAll(selector).length;
for (let i = 0; i < n; i++) {
  const el = document.querySelectorAll(selector)[i];
  if (!el) continue;
  el.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
  el.dispatchEvent(new MouseEvent('click', {bubbles: true}));
}
"""


@pytest.mark.browser
def test_the_history_page_in_a_browser_at_desktop_and_phone_widths(schedule, tmp_path):
    pytest.importorskip("vl_convert")
    from test_report import chromium, fits, open_report, severe

    _, paths, _ = schedule
    out = tmp_path / "history.html"
    assert run("history", *paths, "-o", out).exit_code == 0
    for phone in (False, True):
        driver = chromium(phone)
        try:
            open_report(driver, out)
            assert severe(driver) == []
            scroll_width, screen_width = fits(driver)
            assert scroll_width <= driver.execute_script("return innerWidth")
            lines = "return document.querySelectorAll('#shares-chart .mark-line path').length"
            chosen = driver.execute_script("return window.ldacli.chosen.length")
            assert chosen == 6 and driver.execute_script(lines) == 6  # every topic moved: all six shown
            driver.execute_script("document.getElementById('shares-none').click()")
            time.sleep(0.3)
            assert driver.execute_script(lines) == 0
            box = driver.find_elements("css selector", "#shares-picker input")[4]
            driver.execute_script("arguments[0].click()", box)
            time.sleep(0.3)
            assert driver.execute_script(lines) == 1 and driver.execute_script("return window.ldacli.chosen") == [4]
            # the drift heat map: a cell per topic and model; a click shows its topic at every step
            cells = driver.execute_script("return document.querySelectorAll('#drift-chart .mark-rect path').length")
            assert cells >= 17
            driver.execute_script("window.ldacli.showTopic(4)")
            rows = driver.execute_script("return Array.from(document.querySelectorAll('#topic-steps tbody tr'))"
                                         ".map(r => r.cells[0].textContent + ' ' + r.cells[2].textContent)")
            assert rows == ["1 4", "2 3", "3 3"]
            assert "born at step 1 (added)" in driver.find_element("css selector", "#topic-life").text
            # a change of meaning, on the page too: the topic that died and the one it became name each other
            driver.execute_script("window.ldacli.showTopic(1)")
            assert "died at step 3 (meaning changed: became topic 5)" in \
                driver.find_element("css selector", "#topic-life").text
            driver.execute_script("window.ldacli.showTopic(5)")
            assert "born at step 3 (meaning changed: was topic 1)" in \
                driver.find_element("css selector", "#topic-life").text
            events = driver.find_element("css selector", "#events-table").text
            assert events.count("meaning changed") == 2
            driver.save_screenshot(str(tmp_path / f"history-{'phone' if phone else 'desktop'}.png"))
            assert severe(driver) == []
        finally:
            driver.quit()


@pytest.mark.browser
def test_hostile_names_and_file_names_run_nothing_on_the_history_page(schedule, tmp_path):
    pytest.importorskip("vl_convert")
    from test_report import chromium, fits, open_report, severe

    from test_report import HOSTILE

    truth, _, _ = schedule
    # the schedule's corpora over a hostile vocabulary: every word holds markup, quotes or controls
    words = [f"{HOSTILE[i % len(HOSTILE)]}{i}" for i in range(len(truth["vocab"]))]
    copies = []
    for step in range(3):
        corpus = truth["corpora"][step]
        hostile = ldacli.Corpus(corpus.counts, words, corpus.doc_ids, "hostile", "synthetic")
        path = str(tmp_path / f"{HOSTILE_FILES[step]}-{step}.npz")
        if step == 0:
            ldacli.train(hostile, 4, iterations=100, seed=1, threads=1, output=path)
        else:
            ldacli.train(hostile, warm_start=copies[-1], add_topics=1 if step == 1 else None,
                         remove_topics=[2] if step == 2 else None, iterations=30, seed=1, threads=1, output=path)
        for k in ([0, 1, 2, 3] if step == 0 else [4] if step == 1 else []):  # warm starts keep the names
            ldacli.name_topic(path, k, HOSTILE_NAMES[k])
        copies.append(path)
    out = tmp_path / "h.html"
    result = run("history", *copies, "--order", "given", "-o", out)
    assert result.exit_code == 0, result.stderr
    page = out.read_text()
    assert "<img src=x" not in page and "<script>window.__pwned" not in page
    csp = re.search(r"http-equiv='Content-Security-Policy' content=\"([^\"]+)\"", page).group(1)
    assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
    text = run("history", *copies, "--order", "given")
    assert "\u202e" not in text.stdout and "\\u202e" in text.stdout  # escaped on a terminal's text
    for phone in (False, True):
        driver = chromium(phone)
        try:
            open_report(driver, out)
            driver.execute_script(POKE_EVERYTHING, "#drift-chart .mark-rect path, #shares-chart path, "
                                                   "#shares-picker input, table.sortable th button")
            for k in range(4):
                driver.execute_script(f"window.ldacli.showTopic({k})")
            time.sleep(0.2)
            assert driver.execute_script("return window.__pwned") is None
            assert driver.execute_script("return document.querySelectorAll('img').length") == 0
            labels = driver.execute_script("return Array.from(document.querySelectorAll('#shares-picker span'))"
                                           ".map(s => s.textContent)")
            assert any(HOSTILE_NAMES[0] in label for label in labels)  # shown as text
            # a label's top words (after its name), whichever of the hostile words they are, shown as text
            words_shown = [label.split(": ", 1)[1] for label in labels if ": " in label]
            assert any(h in shown for h in HOSTILE for shown in words_shown), labels
            steps = driver.execute_script("return Array.from(document.querySelectorAll('#topic-steps td'))"
                                          ".map(c => c.textContent).join(' ')")
            assert HOSTILE_FILES[0] in steps and HOSTILE[1] in steps
            assert severe(driver) == []
            if phone:
                scroll_width, screen_width = fits(driver)
                assert scroll_width <= screen_width
        finally:
            driver.quit()


def test_the_page_names_this_command_and_the_extra_when_the_extra_is_missing(tmp_path, without_the_report_extra):
    """Before any model is read (none exists here): the command run and the extra that writes its page."""
    for args in (("-o", tmp_path / "h.html"), ("--format", "html")):
        r = run("history", tmp_path / "absent.npz", *args)
        assert (r.exit_code, r.stdout) == (1, "")
        assert r.stderr == ("Error: the HTML page of ldacli history needs vl-convert-python, which the report extra "
                            "installs: pip install 'ldacli[report]'\n")
    assert os.listdir(tmp_path) == []


def test_the_page_shows_the_models_names_never_their_folders(schedule, tmp_path):
    pytest.importorskip("vl_convert")
    _, paths, folder = schedule
    out = tmp_path / "h.html"
    r = run("history", *[os.path.abspath(p) for p in paths], "-q", "-o", out)
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    page = out.read_text()
    assert str(folder) not in page and f"<td><bdi>{os.path.basename(paths[0])}</bdi></td>" in page


def test_every_topic_s_sparkline_is_drawn_on_one_scale():
    """Issue 49: each row had its own scale, so a topic steady at 2% drew the same full bars as one
    that went from 10% to 40%; on one scale (0 to the largest share of any) the rows compare."""
    from ldacli.over_time.history import SPARKS, text_lines

    models = [{"step": s, "path": f"m{s}.npz", "n_topics": 2, "pairing": "descent" if s else None,
               "max_drift": None, "median_drift": None, "born": [], "died": [], "note": ""} for s in range(3)]
    topic = lambda k, shares: {"topic": k, "shares": shares, "drifts": [None] * 3, "names": [None] * 3,
                               "words": [["w"]] * 3, "born": None, "died": None}
    result = {"models": models, "topics": [topic(0, [0.10, 0.25, 0.40]), topic(1, [0.02, 0.021, 0.019])],
              "events": [], "order": "lineage"}
    lines = list(text_lines(result))
    rows = {k: next(line for line in lines if line.startswith(f"  topic {k}:")) for k in (0, 1)}
    assert "one scale: 0 to 40.0%" in next(line for line in lines if line.startswith("topics:"))
    assert rows[0].split(": ")[1].startswith(SPARKS[1] + SPARKS[4] + SPARKS[7])
    assert rows[1].split(": ")[1].startswith(SPARKS[0] * 3)   # (a scale of its own drew it from the lowest to the highest)
