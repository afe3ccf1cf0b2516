"""The README and the docs site are true: the site builds strictly (no broken link, anchor or
reference), and what the README shows a user runs as written on the shipped sample corpus."""

import os
import re
import shutil
import subprocess
import sys

import pytest

import docs_pages
import ldacli
from ldacli.cli import main as cli_main

SAMPLE = os.path.join(docs_pages.ROOT, "sample_corpora")
# The venv's scripts (ldacli) first, as after `pip install .`.
ENV = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}


def sample_folder(tmp_path):
    """A folder like the repository's root for the README's commands: the sample corpus in
    sample_corpora/."""
    shutil.copytree(SAMPLE, tmp_path / "sample_corpora")
    return tmp_path


def bash(script: str, cwd, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.slow
def test_the_docs_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install '.[docs]'")
    # (run away from the root, where python -m would import the source tree, without its kernels)
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                        os.path.join(docs_pages.ROOT, "mkdocs.yml"), "-d", str(tmp_path / "site")],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    for command in ("train", "select-k", "history", "export"):   # generated from the commands
        assert f"ldacli {command}" in cli
    assert "--iterations" in cli and "--stop-words" in cli
    # every command's examples (and export's WHAT) one to a line, in a code block; no default of click's own
    # shown as its sentinel (-h/--help, --version, the required -o)
    examples = re.findall(r"<p>Examples:</p>\s*<pre><code>ldacli ", cli)
    assert len(examples) == len(cli_main.commands) + 1 == cli.count("Examples:")
    assert re.search(r"<p>WHAT:</p>\s*<pre><code>doc-topics ", cli) and "Sentinel" not in cli
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert 'id="ldacli.train"' in api and 'id="ldacli.Model"' in api
    # the reference shows each function's settings with their defaults, as help() does, and no
    # Sphinx role of a docstring raw (docs/hooks.py)
    text = re.sub(r"<[^>]+>", "", api)
    assert "iterations=None, alpha=0.1, beta=0.01" in text and "snapshots=5" in text
    assert "diff_models(a, b, *, top_words=10, threshold=0.7" in text
    assert not re.search(r":(func|class|mod|meth|attr|data|exc):", api)


def test_the_readme_is_short_and_its_links_lead_to_pages():
    readme = docs_pages.read("README.md")
    assert len(readme.splitlines()) < 300
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert "docs/reference/cli.md" in links
    missing = [link for link in links if "://" not in link and not os.path.exists(os.path.join(docs_pages.ROOT, link))]
    assert missing == []


def test_the_pages_name_no_folder_of_the_machine_they_were_measured_on():
    # data folders are $LDACLI_DATA, ../shared/corpora or a name: never this machine's own paths
    pages = ["README.md"] + [os.path.relpath(os.path.join(d, f), docs_pages.ROOT)
                             for d, _, files in os.walk(os.path.join(docs_pages.ROOT, "docs")) for f in files
                             if f.endswith(".md")]
    found = [(page, m.group(0)) for page in pages
             for m in re.finditer(r"(?<![\w.$])/(work|home|root|srv/ldacli)/[\w./-]+", docs_pages.read(page))]
    assert found == []


def test_the_readme_says_what_its_test_command_costs_and_claims_no_output_pip_hides():
    setup = docs_pages.read("README.md").split("## Set-up", 1)[1].split("\n## ", 1)[0]
    said = setup.split("```sh\npip install '.[test]' && pytest -n auto\n```", 1)[0].rstrip().rsplit("\n\n", 1)[1]
    assert re.search(r"about \d+ minutes on two\s+cores", said), said   # what the command before it costs
    assert "prints on the terminal" not in setup and "pip install -v" in setup


def test_the_readme_and_the_docs_give_the_same_exit_codes():
    def table(text):
        return re.search(r"\| code \| meaning \|\n(?:\|.*\|\n)+", text).group(0)

    assert table(docs_pages.read("README.md")) == table(docs_pages.read("docs/conventions.md"))


def test_the_readme_set_up_command_trains_on_the_sample_corpus(tmp_path):
    (block,) = docs_pages.code_blocks(docs_pages.read("README.md").split("## Set-up", 1)[1], "sh")[:1]
    assert block.startswith("pip install . && ldacli train sample_corpora/")
    r = bash(block.split("&&", 1)[1], sample_folder(tmp_path))   # the package is installed already
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 20   # one line per topic


@pytest.mark.slow
def test_the_readme_tour_runs_as_written(tmp_path):
    pytest.importorskip("vl_convert", reason="the report extra is not installed")
    folder = sample_folder(tmp_path)
    r = bash(docs_pages.marked_block("tour", "README.md"), folder)
    assert r.returncode == 3, r.stderr   # select-k, the last command: the sample does not determine K
    for output in ("sample.npz", "sample.ckpt.npz", "new-topics.csv", "keys.tsv", "sample.html",
                   "sample-k/select-k.json", "sample-k/select-k.html"):
        assert (folder / output).stat().st_size > 0, output
    assert "K not determined: quality per perplexity is best at the largest K tried, 40" in r.stdout
    assert "a grid up to K=80 (one doubling more) would tell" in r.stdout
    rows = (folder / "new-topics.csv").read_text().splitlines()
    assert rows[0].startswith("doc_id,topic_0,") and len(rows) == 201


@pytest.mark.slow
def test_the_readme_cron_line_adds_tonights_documents_to_yesterdays_model(tmp_path):
    line = docs_pages.marked_block("cron", "README.md").strip()
    schedule, command = line[:len("15 2 * * *")], line[len("15 2 * * *"):].strip()
    assert schedule == "15 2 * * *" and command.startswith("cd /srv/topics && ")
    command = command.replace("cd /srv/topics", f"cd {tmp_path}", 1)
    lines = open(os.path.join(SAMPLE, "numpy_scipy_docs.txt"), encoding="utf-8").read().splitlines()
    (tmp_path / "notes.txt").write_text("\n".join(lines[:800]) + "\n")
    r = bash("ldacli train notes.txt -k 8 --iterations 50 --seed 1 -q -o model.npz && wc -l < notes.txt > seen", tmp_path)
    assert r.returncode == 0, r.stderr
    yesterday = ldacli.load_model(str(tmp_path / "model.npz"))
    (tmp_path / "notes.txt").write_text("\n".join(lines[:1000]) + "\n")   # the corpus grew
    r = subprocess.run(["sh", "-c", command], env=ENV, capture_output=True, text=True, timeout=600)   # as cron runs it
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" or r.stderr.startswith("drift: ")   # -q: only a drift past 0.6 is said (and mailed)
    today = ldacli.load_model(str(tmp_path / "model.npz"))
    assert today.params["update"]["night_docs"] == 200 and today.n_docs == 1000 and yesterday.n_docs == 800
    assert today.doc_ids == yesterday.doc_ids + [str(i) for i in range(801, 1001)]
    assert (tmp_path / "seen").read_text().strip() == "1000"
    assert not (tmp_path / "next.npz").exists() and "B was updated from A" in (tmp_path / "diff.txt").read_text()


def test_the_readme_python_lines_run(tmp_path, monkeypatch):
    folder = sample_folder(tmp_path)
    lines = open(os.path.join(SAMPLE, "numpy_scipy_docs.txt"), encoding="utf-8").read().splitlines()
    (folder / "new.txt").write_text("\n".join(lines[-200:]) + "\n")
    monkeypatch.chdir(folder)
    code = docs_pages.marked_block("python: api", "README.md")
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["result"].theta.shape == (1, 20)
    assert (folder / "sample.npz").exists()
