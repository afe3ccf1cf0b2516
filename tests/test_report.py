"""ldacli report: the HTML file is written offline and, opened in a real headless browser
(Debian's chromium through selenium), shows the map, reacts to the topic list, the mouse, the
table and the lambda control, with no JavaScript error; it fits a 390 px phone (chromium's device
emulation) and a desktop, and a corpus of hostile words and text runs nothing in it. Skipped with
a reason where no browser is installed."""

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


def chromium(phone: bool):
    """A headless chromium: a desktop window, or a 390 x 844 phone (device emulation: a headless
    window cannot be narrower than 500 px)."""
    if not (CHROMIUM and DRIVER):
        pytest.skip("no chromium and chromedriver here (Debian: apt-get install chromium chromium-driver; .ci/run does)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    if phone:
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {
            "width": 390, "height": 844, "pixelRatio": 3.0, "mobile": True, "touch": True}})
    else:
        options.add_argument("--window-size=1280,900")
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = chromium(phone=False)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def phone():
    driver = chromium(phone=True)
    yield driver
    driver.quit()


def open_report(browser, path):
    browser.get(f"file://{path}")
    for _ in range(200):
        if browser.execute_script("return window.ldacliReady === true"):
            return
        time.sleep(0.05)
    raise AssertionError("the report's charts did not render")


def severe(browser):
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


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
        walk(window.ldacli.words.scenegraph().root);
        return out.sort((a, b) => a[0] - b[0]).map(x => x[1]);""")


def selected(browser):
    return browser.execute_script("return window.ldacli.selected()")


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
    assert severe(browser) == []
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(not name.startswith("http") for name in resources), resources
    # the map has one mark per topic
    assert browser.execute_script("return document.querySelectorAll('#map .mark-symbol path').length") == 4
    first = words_shown(browser)
    assert selected(browser) == 0 and len(first) > 5
    # the keyboard: the topic list, another topic with the arrow keys
    topic_list = browser.find_element(By.CSS_SELECTOR, "#topic-select")
    topic_list.send_keys(Keys.ARROW_DOWN)
    time.sleep(0.1)
    assert selected(browser) == 1
    second = words_shown(browser, other_than=first)
    assert second != first
    # the documents of the selected topic are the ones shown
    shown = browser.execute_script("return Array.from(document.querySelectorAll('.docs')).filter(e => !e.hidden)"
                                   ".map(e => e.dataset.topic)")
    assert shown == ["1"]
    # lambda from 0.6 to 1 with the keyboard reorders the words (by probability, then)
    slider = browser.find_element(By.CSS_SELECTOR, "#lambda")
    for _ in range(8):
        slider.send_keys(Keys.ARROW_RIGHT)
    assert browser.execute_script("return window.ldacli.words.signal('lambda')") == pytest.approx(1.0)
    by_probability = words_shown(browser, other_than=second)
    assert by_probability != second
    model = ldacli.load_model(str(paths[method]))
    top = [w for w, _ in model.top_words(len(by_probability))[1]]
    assert by_probability[:5] == top[:5]
    # the mouse: clicking topic 3's circle selects it
    browser.execute_script(
        "const m = document.querySelectorAll('#map .mark-symbol path')[3];"
        "const r = m.getBoundingClientRect();"
        "m.dispatchEvent(new MouseEvent('click', {bubbles: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2}));")
    time.sleep(0.2)
    assert selected(browser) == 3
    # the table: sorted by prevalence with a click, a row selects its topic
    browser.execute_script("document.querySelectorAll('#topic-table th button')[2].click()")
    prevalences = browser.execute_script(
        "return Array.from(document.querySelectorAll('#topic-table tbody tr')).map(r => parseFloat(r.cells[2].dataset.value))")
    assert prevalences == sorted(prevalences)
    browser.execute_script("document.querySelector('#topic-table tbody tr[data-topic=\"2\"]').click()")
    time.sleep(0.2)
    assert selected(browser) == 2 and browser.find_element(By.CSS_SELECTOR, "#topic-select").get_attribute("value") == "2"
    assert severe(browser) == []
    browser.save_screenshot(str(tmp_path / "report.png"))
    assert (tmp_path / "report.png").stat().st_size > 10_000


def first_screen(browser, selector):
    """Whether the element is drawn within the first screen (top inside the viewport)."""
    return browser.execute_script(
        f"const r = document.querySelector('{selector}').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight && r.height > 0")


def fits(browser):
    return browser.execute_script("return [document.documentElement.scrollWidth, screen.width]")


def test_the_report_fits_a_desktop_and_a_phone(models, browser, phone, tmp_path):
    folder, paths = models
    out = tmp_path / "report.html"
    assert run("report", paths["cgs"], "-o", out).exit_code == 0
    open_report(browser, out)
    width, _ = fits(browser)
    assert width <= browser.execute_script("return innerWidth")
    # the map, the selected topic's words and its documents, side by side on the first screen
    for part in ("#map svg", "#words svg", ".docs:not([hidden])"):
        assert first_screen(browser, part), part
    tops = [browser.execute_script(f"return document.querySelector('{p}').getBoundingClientRect().top")
            for p in ("#map", "#words", ".docs:not([hidden])")]
    assert max(tops) - min(tops) < 80
    open_report(phone, out)
    assert phone.execute_script("return screen.width") == 390
    scroll_width, screen_width = fits(phone)
    assert scroll_width <= screen_width, "the page is wider than the phone"
    # stacked: the words below the map, each as wide as the screen allows
    boxes = phone.execute_script("return ['#map', '#words'].map(s => document.querySelector(s).getBoundingClientRect())"
                                 ".map(r => [r.left, r.top, r.width])")
    assert boxes[1][1] > boxes[0][1] and all(0 <= left and left + w <= 390 for left, _, w in boxes)
    assert phone.execute_script("return document.querySelector('#map svg').getBoundingClientRect().width") > 300
    assert severe(phone) == []
    phone.save_screenshot(str(tmp_path / "phone.png"))


def test_a_page_without_a_viewport_tag_would_fail_the_phone_check(models, phone, tmp_path):
    """The check above can fail: the same page without its viewport meta tag gets chromium's
    980 px layout viewport on a phone."""
    folder, paths = models
    out = tmp_path / "report.html"
    assert run("report", paths["cgs"], "-o", out).exit_code == 0
    page = out.read_text()
    stripped = tmp_path / "stripped.html"
    stripped.write_text(page.replace("<meta name='viewport' content='width=device-width, initial-scale=1'>", ""))
    open_report(phone, stripped)
    scroll_width, screen_width = fits(phone)
    assert scroll_width > screen_width


HOSTILE = ["</script><script>window.__pwned=1</script>", "<img src=x onerror=window.__pwned=2>",
           "\" onmouseover=\"window.__pwned=3", "' onfocus='window.__pwned=4' autofocus='", "a & b &amp; c",
           "\u202eevil\u202c", "<!--", "]]>", "\u2028sep\u2029", "x" * 200, "javascript:window.__pwned=5",
           "{{constructor.constructor('window.__pwned=6')()}}", "tab\tand,comma \"quote\""]


def test_hostile_words_and_text_run_nothing(tmp_path, browser, phone):
    """A bag-of-words vocabulary of hostile words, document text holding markup: the report
    draws, nothing in it runs, and it still fits a phone."""
    V = len(HOSTILE)
    (tmp_path / "hostile.vocab").write_text("\n".join(HOSTILE) + "\n")
    lines = [f"{V} " + " ".join(f"{w}:{1 + (d * 7 + w) % 4}" for w in range(V)) for d in range(30)]
    (tmp_path / "hostile.ldac").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.npz"
    r = run("train", tmp_path / "hostile.ldac", "-k", 3, "--iterations", 20, "--seed", 1, "-q", "-o", model)
    assert r.exit_code == 0, r.stderr
    out = tmp_path / "r.html"
    assert run("report", model, "-o", out, "-q").exit_code == 0
    page = out.read_text()
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    csp = re.search(r"http-equiv='Content-Security-Policy' content=\"([^\"]+)\"", page).group(1)
    assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
    # and document text: a text corpus whose lines hold markup (shown as the documents' first words)
    text = tmp_path / "notes.txt"
    text.write_text("\n".join([f"apples pears plums <script>window.__pwned=7</script> {HOSTILE[1]} {HOSTILE[2]}",
                                f"rivers lakes boats <b onclick=window.__pwned=8>x</b> {HOSTILE[5]} {HOSTILE[9]}"] * 15)
                    + "\n")
    text_model = tmp_path / "t.npz"
    assert run("train", text, "-k", 2, "--iterations", 20, "--seed", 1, "-q", "-o", text_model).exit_code == 0
    text_out = tmp_path / "t.html"
    assert run("report", text_model, "-o", text_out, "-q").exit_code == 0
    assert "&lt;script&gt;window.__pwned=7" in text_out.read_text()
    for driver in (browser, phone):
        for report in (out, text_out):
            open_report(driver, report)
            for element in driver.find_elements(By.CSS_SELECTOR, "#map .mark-symbol path, #topic-table tbody tr"):
                driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));"
                                      "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", element)
            time.sleep(0.2)
            assert driver.execute_script("return window.__pwned") is None
            assert driver.execute_script("return document.querySelectorAll('#map .mark-symbol path').length") > 1
            assert driver.execute_script("return document.querySelectorAll('img').length") == 0
            assert severe(driver) == []
            if driver is phone:
                scroll_width, screen_width = fits(driver)
                assert scroll_width <= screen_width
    open_report(browser, out)
    words = words_shown(browser)  # the hostile words themselves, drawn as text
    assert sorted(words) == sorted(ldacli.load_model(str(model)).vocab)


def test_the_report_has_coherence_documents_and_the_diff(models, tmp_path):
    folder, paths = models
    out = tmp_path / "r.html"
    r = run("report", paths["cgs"], "-o", out, "--diff", paths["vem"])
    assert r.exit_code == 0, r.stderr
    page = out.read_text()
    assert "Mean NPMI coherence" in page and "Most representative documents" in page
    assert "apples pears" in page or "rivers lakes" in page  # the documents' first words, from the text file
    assert "Changes since the old model" in page and "renumbered" in page
    data = json.loads(re.search(r"<script type='application/json' id='ldacli-data'>(.*?)</script>", page, re.S).group(1))
    assert len(data["topics"]) == 4 and len(data["charts"]["map"]["data"]["values"]) == 4
    assert [t["name"] for t in data["topics"]] == [""] * 4   # unnamed topics: no name, not their ids


def with_corpus(path) -> bool:
    """Whether the report at ``path`` shows a corpus's coherence (a reference was read)."""
    return "Mean NPMI coherence" in open(path, encoding="utf-8").read()


def test_the_report_is_one_call_that_finds_its_reference_and_says_when_it_cannot(models, tmp_path):
    """ldacli report calls write_report, which reads the corpus given for the model or finds the
    training corpus, and says in a note when it cannot (the report is then written without)."""
    from ldacli.pages.report import write_report

    folder, paths = models
    written = write_report(str(paths["cgs"]), str(tmp_path / "api.html"))
    assert written["notes"] == [] and with_corpus(tmp_path / "api.html")
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.copy(paths["cgs"], moved / "m.npz")
    os.rename(folder / "notes.txt", folder / "notes.moved")
    try:
        r = run("report", moved / "m.npz", "-o", tmp_path / "cli.html")
        written = write_report(str(moved / "m.npz"), str(tmp_path / "api.html"))
        given = write_report(str(moved / "m.npz"), str(tmp_path / "given.html"), corpus=str(folder / "notes.moved"),
                             input_format="text")
    finally:
        os.rename(folder / "notes.moved", folder / "notes.txt")
    assert r.exit_code == 0, r.stderr
    assert len(written["notes"]) == 1 and "no coherence or documents in the report" in written["notes"][0]
    assert written["notes"][0] in r.stderr and not with_corpus(tmp_path / "cli.html")
    assert with_corpus(tmp_path / "given.html") and given["notes"] == []
    with pytest.raises(ldacli.SettingError, match="vocab applies with corpus only"):
        write_report(str(paths["cgs"]), str(tmp_path / "no.html"), vocab="v.txt")
    assert not (tmp_path / "no.html").exists()


def test_the_report_names_the_extra_when_it_is_missing(models, tmp_path, without_the_report_extra):
    r = run("report", models[1]["cgs"], "-o", tmp_path / "r.html")
    assert r.exit_code == 1 and "pip install 'ldacli[report]'" in r.stderr
    assert not os.path.exists(tmp_path / "r.html")


def test_the_report_shows_the_names_of_files_never_their_folders(models, tmp_path):
    """The training corpus and a warm start's parent are recorded with absolute paths, and
    --corpus and --diff may be given so: a page passed on shows none of the folders."""
    folder, paths = models
    child = tmp_path / "child.npz"
    assert run("train", folder / "notes.txt", "--warm-start", paths["cgs"], "--iterations", 5, "--seed", 2, "-q",
               "-o", child).exit_code == 0
    for args in ((), ("--corpus", folder / "notes.txt", "--diff", os.path.abspath(paths["cgs"]))):
        out = tmp_path / "r.html"
        r = run("report", child, *args, "-q", "-o", out)
        assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
        page = out.read_text()
        assert str(folder) not in page and str(tmp_path) not in page
        assert "notes.txt (text)" in page and f"{os.path.basename(paths['cgs'])} (sha256" in page


def test_prevalence_is_the_mean_proportion_that_export_and_diff_show(models, tmp_path):
    """One word, one meaning: the report's prevalence of a topic (the map's areas, the table) is
    export's and diff's, the mean of its proportion over the documents, not its share of tokens."""
    folder, paths = models
    out = tmp_path / "r.html"
    r = run("report", paths["cgs"], "-q", "-o", out)  # the training corpus, found: coherence, documents
    assert (r.exit_code, r.stderr) == (0, "")
    page = out.read_text()
    assert "Mean NPMI coherence" in page
    data = json.loads(re.search(r"<script type='application/json' id='ldacli-data'>(.*?)</script>", page, re.S).group(1))
    keys = run("export", paths["cgs"], "topic-keys", "--format", "jsonl")
    exported = [json.loads(line)["prevalence"] for line in keys.stdout.splitlines()]
    compared = json.loads(run("diff", paths["cgs"], paths["cgs"], "--format", "json").stdout)["topics"]
    assert [t["prevalence_a"] for t in sorted(compared, key=lambda t: t["a"])] == exported
    assert [t["prevalence"] for t in data["topics"]] == pytest.approx(exported, abs=1e-15)
    for p in exported:
        assert f"<td class='num' data-value='{p!r}'>{100 * p:.1f}%</td>" in page


@pytest.fixture(scope="module")
def junk(tmp_path_factory):
    """A model with one topic made of near copies of a footer (test_diagnostics.planted_junk)."""
    from test_diagnostics import footer_topic, train_junk

    path = train_junk(tmp_path_factory.mktemp("junk"))
    return path, footer_topic(ldacli.load_model(str(path)))


@pytest.mark.browser
def test_the_topic_table_shows_the_diagnostics_and_what_the_flags_measured(junk, browser, phone, tmp_path):
    model, k = junk
    out = tmp_path / "r.html"
    assert run("report", model, "-o", out, "-q").exit_code == 0
    page = out.read_text()
    # near copies are measured, not a verdict (issue 49: held out, that flag did not tell junk reliably)
    assert "No topic flagged as likely junk." in page and "⚑" not in page.split("<body")[1].split("<script")[0]
    assert f"Measured, not a verdict (junk often measures so, and good topics sometimes do): {k}." in page
    assert "<b>near-duplicates</b> (measured, not a verdict): <bdi>its 20 documents of largest proportion" in page
    open_report(browser, out)
    assert browser.find_elements(By.CSS_SELECTOR, "#topic-table tbody tr.flagged") == []
    row = browser.find_element(By.CSS_SELECTOR, f"#topic-table tbody tr[data-topic='{k}']")
    assert "measured: near-duplicates" in row.text
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#topic-table th")]
    assert {"likely junk", "eff. docs", "UMass", "exclusivity", "top docs' similarity"} <= {h.replace("\n", " ")
                                                                                          for h in heads}
    # sorted by a diagnostic: the flagged topic, whose documents are near copies, comes first
    column = [h.replace("\n", " ") for h in heads].index("top docs' similarity")
    browser.execute_script(f"document.querySelectorAll('#topic-table th button')[{column}].click();"
                           f"document.querySelectorAll('#topic-table th button')[{column}].click()")
    first = browser.find_element(By.CSS_SELECTOR, "#topic-table tbody tr")
    assert first.get_attribute("data-topic") == str(k)
    options = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#topic-select option")]
    assert options[k].startswith(f"{k}:") and "likely junk" not in options[k]
    assert severe(browser) == []
    open_report(phone, out)
    scroll_width, screen_width = fits(phone)
    assert scroll_width <= screen_width  # the table scrolls in its own box
    assert severe(phone) == []


@pytest.mark.browser
def test_the_changes_table_lists_removed_and_added_topics(models, browser, tmp_path):
    folder, paths = models
    grown = tmp_path / "grown.npz"
    r = run("train", folder / "notes.txt", "--warm-start", paths["cgs"], "--remove-topics", 2, "--add-topics", 1,
            "--iterations", 20, "--seed", 4, "--stop-words", "none", "-q", "-o", grown)
    assert r.exit_code == 0, r.stderr
    out = tmp_path / "r.html"
    assert run("report", grown, "-o", out, "--diff", paths["cgs"], "-q").exit_code == 0
    open_report(browser, out)
    text = browser.find_element(By.ID, "diff").text
    assert "warm-started from" in text and "removed 2, added 3 (neither is drift)" in text
    rows = [[c.text for c in r.find_elements(By.TAG_NAME, "td")]
            for r in browser.find_elements(By.CSS_SELECTOR, "#diff tbody tr")]
    assert [(r[0], r[1]) for r in rows] == [("0", "0"), ("1", "1"), ("3", "2"), ("2", "removed"), ("added", "3")]
    assert severe(browser) == []


@pytest.mark.browser
def test_a_seeded_topic_that_lost_its_seeds_says_so_beside_its_name(small_ldac, browser, tmp_path):
    (tmp_path / "seeds.txt").write_text("first: w00000 w00001 w00002\nsecond: w00030 w00031 w00032\n"
                                        "twin: w00003 w00004\n")  # twin: more words of first's theme
    model, out = tmp_path / "m.npz", tmp_path / "r.html"
    assert run("train", small_ldac, "-k", 5, "--iterations", 100, "--seed", 1, "--seed-words",
               tmp_path / "seeds.txt", "-q", "-o", model).exit_code == 0
    assert run("report", model, "-o", out, "-q").exit_code == 0
    open_report(browser, out)
    said = browser.find_element(By.ID, "seeds-lost").text
    assert said.startswith("1 of 3 seeded topics lost their seeds: none of a topic's seed words is among its 10 "
                           "words of most tokens") and "2 twin (seeds lost: w00003, w00004 rank" in said
    names = {r.get_attribute("data-topic"): r.find_elements(By.TAG_NAME, "td")[1]
             for r in browser.find_elements(By.CSS_SELECTOR, "#topic-table tbody tr")}
    assert names["2"].text.replace("\n", " ") == "twin (seeds lost)" and names["0"].text == "first"
    assert names["2"].find_element(By.CLASS_NAME, "seeds-lost").get_attribute("title").startswith(
        "seeds lost: w00003, w00004 rank")
    browser.save_screenshot(str(tmp_path / "seeds-lost.png"))
    assert severe(browser) == []
