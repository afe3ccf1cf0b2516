"""ldacli report: the HTML file is written offline and, opened in a real headless browser
(Debian's chromium through selenium), shows the map, reacts to the topic list, the mouse and the
lambda control, with no JavaScript error. Skipped with a reason where no browser is installed."""

import json
import os
import re
import shutil
import time

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main

pytest.importorskip("vl_convert", reason="the report extra is not installed: pip install 'ldacli[report]'")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (the test extra has it)")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver")
METHODS = ("cgs", "vem", "gibbs")
SENTENCES = [
    "apples pears plums cherries orchard harvest fruit juice",
    "rivers lakes oceans water boats sailing harbour fishing",
    "engines wheels brakes motor garage driving petrol roads",
    "guitars drums pianos music concert melody songs rhythm",
]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A text corpus of four clear themes and a model of it by each method."""
    folder = tmp_path_factory.mktemp("report")
    # each line mostly one theme, its words in Zipf-like numbers, plus a word or two of another
    lines = []
    for i in range(160):
        theme, other = SENTENCES[i % 4].split(), SENTENCES[(i * 7 + 1) % 4].split()
        words = [w for r, w in enumerate(theme) for _ in range(max(1, 6 // (r + 1) + (i + r) % 2))]
        lines.append(" ".join(words + other[i % 8:i % 8 + 2]))
    (folder / "notes.txt").write_text("\n".join(lines) + "\n")
    paths = {}
    for method in METHODS:
        out = folder / f"{method}.npz"
        r = run("train", folder / "notes.txt", "-k", 4, "--method", method, "--iterations", 40, "--seed", 3,
                "--stop-words", "none", "-q", "-o", out)
        assert r.exit_code == 0, r.stderr
        paths[method] = out
    return folder, paths


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and DRIVER):
        pytest.skip("no chromium and chromedriver here (Debian: apt-get install chromium chromium-driver; .ci/run does)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1400",
                "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def open_report(browser, path):
    browser.get(f"file://{path}")
    for _ in range(200):
        if browser.execute_script("return window.ldacliReady === true"):
            return
        time.sleep(0.05)
    raise AssertionError("the report's charts did not render")


def words_shown(browser, other_than=None):
    """The words listed for the selected topic, once the view shows a list other than ``other_than``."""
    for _ in range(100):
        words = _words(browser)
        if words and words != other_than:
            return words
        time.sleep(0.02)
    return words


def _words(browser):
    """The words of the selected topic in the order shown (from the rendered scene: text marks
    of the words view, by the rank that places them)."""
    return browser.execute_script("""
        const out = [];
        const walk = (item) => {
          if (item.items) item.items.forEach(walk);
          if (item.mark && item.mark.marktype === 'text' && item.datum && item.datum.w !== undefined)
            out.push([item.datum.rank, item.datum.w]);
        };
        walk(window.ldacliView.scenegraph().root);
        return out.sort((a, b) => a[0] - b[0]).map(x => x[1]);""")


def selected(browser):
    return browser.execute_script("const s = window.ldacliView.signal('topic_topic'); return Array.isArray(s) ? s[0] : s")


@pytest.mark.parametrize("method", METHODS)
def test_the_report_opens_offline_and_reacts_to_topic_and_lambda(method, models, browser, tmp_path):
    folder, paths = models
    out = tmp_path / "report.html"
    r = run("report", paths[method], "-o", out, "--png", "--svg")
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']https?:""", page), "the page must not fetch anything"
    assert out.stat().st_size < 5_000_000
    for image in ("report-map.png", "report-trace.png", "report-map.svg", "report-trace.svg"):
        assert (tmp_path / image).stat().st_size > 1000
    open_report(browser, out)
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(not name.startswith("http") for name in resources), resources
    # the map has one mark per topic
    assert browser.execute_script("return document.querySelectorAll('#explorer .map_group .mark-symbol path').length") == 4
    first = words_shown(browser)
    assert selected(browser) == 0 and len(first) > 5
    # the keyboard: Tab to the topic list, pick another topic with the arrow keys
    topic_list = browser.find_element(By.CSS_SELECTOR, "#explorer select")
    topic_list.send_keys(Keys.ARROW_DOWN)
    assert selected(browser) == 1
    second = words_shown(browser, other_than=first)
    assert second != first
    # the documents of the selected topic are the ones shown
    shown = browser.execute_script("return Array.from(document.querySelectorAll('.docs')).filter(e => !e.hidden)"
                                   ".map(e => e.dataset.topic)")
    assert shown == ["1"]
    # lambda from 0.6 to 1 with the keyboard reorders the words (by probability, then)
    slider = browser.find_element(By.CSS_SELECTOR, "#explorer input[type=range]")
    for _ in range(8):
        slider.send_keys(Keys.ARROW_RIGHT)
    assert browser.execute_script("return window.ldacliView.signal('lambda')") == pytest.approx(1.0)
    by_probability = words_shown(browser, other_than=second)
    assert by_probability != second
    model = ldacli.load_model(str(paths[method]))
    top = [w for w, _ in model.top_words(len(by_probability))[1]]
    assert by_probability[:5] == top[:5]
    # and the mouse: clicking topic 3's circle selects it
    browser.execute_script(
        "const m = document.querySelectorAll('#explorer .map_group .mark-symbol path')[3];"
        "const r = m.getBoundingClientRect();"
        "m.dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2}));")
    time.sleep(0.2)
    assert selected(browser) == 3
    browser.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_the_report_has_coherence_documents_and_the_diff(models, tmp_path):
    folder, paths = models
    out = tmp_path / "r.html"
    r = run("report", paths["cgs"], "-o", out, "--diff", paths["vem"])
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    assert "Mean NPMI coherence" in page and "Most representative documents" in page
    assert "apples pears" in page or "rivers lakes" in page  # the documents' first words, from the text file
    assert "Changes since the old model" in page and "renumbered" in page
    charts = json.loads(re.search(r"const CHARTS = (\{.*?\});\n", page, re.S).group(1))
    assert len(charts["explorer"]["datasets"]["topics"]) == 4


def test_the_report_names_the_extra_when_it_is_missing(models, tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_vl_convert(name, *args, **kwargs):
        if name == "vl_convert":
            raise ImportError("not installed")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_vl_convert)
    r = run("report", models[1]["cgs"], "-o", tmp_path / "r.html")
    assert r.exit_code == 1 and "pip install 'ldacli[report]'" in r.stderr
    assert not os.path.exists(tmp_path / "r.html")
