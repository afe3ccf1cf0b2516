"""The page of select-k (DIR/select-k.html), opened in a real headless browser: it shows the
recommendation, the table (sortable) and a chart per measure with error bars, in the report's frame
(ldacli.pages.webpage: its Content-Security-Policy runs only the page's own scripts). Skipped with a reason where the report extra or a browser is missing."""

import json
import os

from click.testing import CliRunner

from ldacli.cli import main
from test_report import browser, open_report  # noqa: F401 - the fixture (skips where no browser is installed)
from selenium.webdriver.common.by import By


def test_the_select_k_page_shows_the_choice_the_table_and_the_curves(small_ldac, tmp_path, browser):  # noqa: F811
    out = tmp_path / "sk"
    result = CliRunner().invoke(main, ["select-k", small_ldac, "-k", "2,5,8", "--seeds", "2", "--iterations", "300",
                                       "--seed", "1", "-q", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    page = (out / "select-k.html").read_text()
    csp = page.split("Content-Security-Policy' content=\"", 1)[1].split("\"", 1)[0]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "unsafe" not in csp.split("style-src")[0]
    open_report(browser, out / "select-k.html")
    assert browser.find_element(By.CSS_SELECTOR, "#recommendation h2").text == "Recommended: K = 5"
    rows = browser.find_elements(By.CSS_SELECTOR, "#table tbody tr")
    assert [r.find_element(By.TAG_NAME, "td").text for r in rows] == ["2", "5", "8"]
    assert rows[1].get_attribute("class") == "selected"
    charts = browser.find_elements(By.CSS_SELECTOR, "#curves .chart svg")
    assert len(charts) == 7 and all(c.size["width"] > 250 for c in charts)
    titles = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#curves svg .role-title-text")]
    assert titles[0].startswith("Held-out perplexity") and titles[1].startswith("Topic quality per perplexity")
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    data = json.loads((out / "select-k.json").read_text())
    assert f"{data['table'][1]['perplexity']:.1f}" in rows[1].text
    browser.find_element(By.CSS_SELECTOR, "#table th:nth-child(2) button").click()  # sortable, as the report's
    assert [r.find_element(By.TAG_NAME, "td").text for r in
            browser.find_elements(By.CSS_SELECTOR, "#table tbody tr")] == ["5", "8", "2"]
    browser.save_screenshot(str(tmp_path / "select-k.png"))


def test_the_page_shows_the_corpus_s_name_never_its_folder(small_ldac, tmp_path):
    out = tmp_path / "sk"
    result = CliRunner().invoke(main, ["select-k", os.path.abspath(small_ldac), "-k", "2,3", "--seeds", "1",
                                       "--iterations", "20", "--seed", "1", "-q", "-o", str(out)])
    assert result.exit_code in (0, 3) and result.stderr == ""
    page = (out / "select-k.html").read_text()
    assert os.path.dirname(os.path.abspath(small_ldac)) not in page and "Corpus <bdi>small.ldac</bdi>:" in page


def test_the_page_says_when_k_is_not_determined(small_ldac, tmp_path, browser):  # noqa: F811
    out = tmp_path / "sk"
    result = CliRunner().invoke(main, ["select-k", small_ldac, "-k", "2,5", "--seeds", "2", "--iterations", "200",
                                       "--seed", "1", "-q", "-o", str(out)])
    assert result.exit_code == 3, result.stderr
    open_report(browser, out / "select-k.html")
    assert browser.find_element(By.CSS_SELECTOR, "#recommendation h2").text == "K not determined"
    assert "best at the largest K tried, 5" in browser.find_element(By.CSS_SELECTOR, "#recommendation p").text
    assert not browser.find_elements(By.CSS_SELECTOR, "#table tbody tr.selected")
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
