"""Topic diagnostics (ldacli.scoring.diagnostics): every measure against a plain NumPy reference on
a tiny model, the flags against their documented thresholds and on corpora built to hold a
junk topic, and what topics --diagnostics and export diagnostics write in every format."""

import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import ldacli
from ldacli.scoring import diagnostics as td
from ldacli.cli import main
from ldacli.corpora.corpus import Corpus

VOCAB = ["apple", "pear", "plum", "river", "lake", "boat", "engine", "wheel"]


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def tiny():
    """12 documents over 8 words and a 3-topic model of them (phi, theta and an asymmetric
    alpha made up, not trained), the documents the model's training corpus."""
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 4, size=(12, 8)) * (rng.random((12, 8)) < 0.6)
    counts[3] = 0  # an empty document
    counts[5] = counts[7]  # two copies
    corpus = Corpus(sp.csr_array(counts.astype(np.int32)), VOCAB, [f"d{i}" for i in range(12)], "tiny", "test")
    phi = rng.dirichlet(np.full(8, 0.5), size=3)
    theta = rng.dirichlet(np.full(3, 0.7), size=12)
    theta[0] = [0.96, 0.02, 0.02]
    model = ldacli.Model(phi=phi, theta=theta, alpha=np.array([0.1, 0.2, 0.3]), beta=0.01, vocab=VOCAB,
                         doc_ids=corpus.doc_ids, loglik_iterations=np.zeros(0, np.int64),
                         loglik_per_token=np.zeros(0), params={"corpus_fingerprint": corpus.fingerprint()})
    return model, corpus


def reference(model, corpus, n):
    """Every diagnostic computed the plain way: dense arrays, loops over topics, words, pairs."""
    phi, theta, alpha = model.phi, model.theta, model.alpha
    K, V = phi.shape
    X = corpus.counts.toarray().astype(float)
    L = X.sum(axis=1)
    nd = np.clip(theta * (L[:, None] + alpha.sum()) - alpha, 0, None)
    nd[L == 0] = 0
    B = (X > 0).astype(float)
    D = X.shape[0]
    freq = X.sum(axis=0) / X.sum()
    share = phi / phi.sum(axis=0)
    resp = X[:, None, :] * theta[:, :, None] * phi[None, :, :] / (theta @ phi)[:, None, :]  # (D, K, V)
    out = []
    for k in range(K):
        top = sorted(range(V), key=lambda w: (-phi[k, w], w))[:n]
        tokens = nd[:, k].sum()
        p = nd[:, k] / tokens
        has = nd[:, k] >= 0.5
        pairs_u, pairs_n = [], []
        for m in range(1, n):
            for l in range(m):
                dm, dl, dml = B[:, top[m]].sum(), B[:, top[l]].sum(), (B[:, top[m]] * B[:, top[l]]).sum()
                pairs_u.append(math.log((dml + 1) / dl))
                pj = dml / D
                pairs_n.append(math.log((pj + 1e-12) / (dm / D * dl / D)) / -math.log(pj + 1e-12))
        count = resp[:, k, top].sum(axis=0)
        docs = (resp[:, k, top] >= 0.5).sum(axis=0)
        pc, qc = count / count.sum(), docs / docs.sum()
        mc = (pc + qc) / 2
        tdd = sum(0.5 * a * math.log(a / c) for a, c in zip(pc, mc) if a > 0) + sum(
            0.5 * b * math.log(b / c) for b, c in zip(qc, mc) if b > 0)
        nonempty = L > 0
        rank1 = sum(1 for d in range(D) if nonempty[d] and np.argmax(nd[d]) == k)
        together = np.array([sum(nd[d, k] * nd[d, j] for d in range(D)) for j in range(K) if j != k])
        q = together / together.sum()
        best = sorted(np.where(has)[0], key=lambda d: (-theta[d, k], d))[:20]
        sims = [B[a] @ B[b] / math.sqrt(B[a].sum() * B[b].sum()) for a in best for b in best if a != b]
        out.append({
            "tokens": tokens, "documents": int(has.sum()),
            "document_entropy": -sum(x * math.log(x) for x in p if x > 0),
            "effective_documents": math.exp(-sum(x * math.log(x) for x in p if x > 0)),
            "word_length": np.mean([len(VOCAB[w]) for w in top]),
            "umass": sum(pairs_u), "npmi": np.mean(pairs_n),
            "uniform_dist": sum(x * math.log(x * V) for x in phi[k] if x > 0),
            "corpus_dist": sum(x * math.log(x / f) for x, f in zip(phi[k], freq) if x > 0),
            "eff_num_words": 1 / sum(x * x for x in phi[k]),
            "token_doc_diff": tdd,
            "rank_1_docs": rank1 / has.sum(),
            "allocation_ratio": (has & (theta[:, k] >= 0.5)).sum() / (has & (theta[:, k] >= 0.02)).sum(),
            "allocation_count": (has & (theta[:, k] >= 0.3)).sum() / has.sum(),
            "exclusivity": np.mean([share[k, w] for w in top]),
            "document_dist": sum(a * math.log(a / (b / L.sum())) for a, b in zip(p, L) if a > 0),
            "companion_topics": math.exp(-sum(x * math.log(x) for x in q if x > 0)),
            "top_docs_share": np.sort(nd[:, k])[::-1][:10].sum() / tokens,
            "top_doc_similarity": np.mean(sims),
            "words": {"count": count, "docs": docs, "prob": phi[k, top], "cumulative": np.cumsum(phi[k, top]),
                      "uniform_dist": [phi[k, w] * math.log(phi[k, w] * V) for w in top],
                      "corpus_dist": [phi[k, w] * math.log(phi[k, w] / freq[w]) for w in top],
                      "exclusivity": [share[k, w] for w in top],
                      "coherence": [min([0.0] + [math.log(((B[:, top[m]] * B[:, top[l]]).sum() + 1)
                                                          / B[:, top[l]].sum()) for l in range(m)])
                                    for m in range(n)]},
        })
    return out


@pytest.mark.parametrize("chunk", [4096, 5])
@pytest.mark.parametrize("n", [3, 6])
def test_every_measure_matches_the_numpy_reference(chunk, n, monkeypatch):
    monkeypatch.setattr(td, "_CHUNK", chunk)  # documents in blocks of 5 as well as at once
    model, corpus = tiny()
    assert corpus.doc_lengths.min() == 0 and np.all(corpus.counts[[5]].toarray() == corpus.counts[[7]].toarray())
    result = td.diagnostics(model, corpus, top_words=n)
    expected = reference(model, corpus, n)
    assert result["top_words"] == n and result["corpus"] == {"source": "tiny", "n_docs": 12,
                                                             "n_tokens": corpus.n_tokens}
    for topic, want in zip(result["topics"], expected):
        for field in td.FIELD_NAMES:
            assert topic[field] == pytest.approx(want[field], rel=1e-9, abs=1e-12), field
        for field, values in want["words"].items():
            assert [w[field] for w in topic["words"]] == pytest.approx(list(values), rel=1e-9, abs=1e-12), field
        assert [w["rank"] for w in topic["words"]] == list(range(1, n + 1))


def test_the_model_alone_gives_what_needs_no_corpus():
    model, corpus = tiny()
    alone = td.diagnostics(model)
    full = td.diagnostics(model, corpus)
    assert alone["corpus"] is None
    for a, f in zip(alone["topics"], full["topics"]):
        for name, _, needs_corpus, _ in td.FIELDS:
            assert (a[name] is None) if needs_corpus else (a[name] == f[name]), name
        assert a["flags"] == [] and a["words"][0]["count"] is None and a["words"][0]["exclusivity"] is not None


def test_a_corpus_is_matched_by_string_and_another_ones_proportions_are_inferred():
    model, corpus = tiny()
    reversed_columns = Corpus(sp.csr_array(corpus.counts.toarray()[:, ::-1].astype(np.int32)), VOCAB[::-1],
                              corpus.doc_ids, "reversed", "test")
    # the same documents once their words are matched by string: the training corpus, its model's proportions
    a = td.diagnostics(model, corpus)["topics"]
    assert td.diagnostics(model, reversed_columns)["topics"] == a
    # other documents: their proportions inferred, whose estimated counts add up to their tokens
    part = Corpus(corpus.counts[:9], VOCAB, corpus.doc_ids[:9], "part", "test")
    b = td.diagnostics(model, part)
    assert b["corpus"]["n_tokens"] == part.n_tokens
    assert sum(t["tokens"] for t in b["topics"]) == pytest.approx(part.n_tokens, rel=0.05)
    assert [t["tokens"] for t in b["topics"]] != pytest.approx([t["tokens"] for t in a])


def values(**given):
    topic = dict.fromkeys(td.FIELD_NAMES)
    topic.update(given)
    return topic


MODEL = {"n_topics": 20, "n_tokens": 20_000.0, "mean_length": 100.0, "median_companion_topics": 8.0,
         "median_npmi": 0.2}
# Values that satisfy a flag's other condition, when it has two.
BOILERPLATE = {"rank_1_docs": 0.05, "companion_topics": 20.0}
FEW = {"top_docs_share": 0.9, "tokens": 5000.0, "effective_documents": 10.0}


@pytest.mark.parametrize("flag, others, field, low, high", [
    ("background", {}, "document_dist", 0.99, 1.01),
    ("many-companions", BOILERPLATE, "companion_topics", 8.0 * 1.24, 8.0 * 1.26),
    ("many-companions", BOILERPLATE, "rank_1_docs", 0.09, 0.11),
    ("low-npmi", {}, "npmi", 0.2 * 0.39, 0.2 * 0.41),
    ("few-documents", FEW, "top_docs_share", 0.44, 0.46),
    ("few-documents", FEW, "effective_documents", 5000.0 / 74.0, 5000.0 / 76.0),
    ("near-duplicates", {}, "top_doc_similarity", 0.54, 0.56),
    ("tiny", {}, "tokens", 99.0, 101.0),
])
def test_each_flag_is_raised_exactly_beyond_its_documented_thresholds(flag, others, field, low, high):
    junk = {f.name: f for f in td.FLAGS}[flag]
    below_is_junk = field in ("document_dist", "npmi", "tokens", "rank_1_docs")
    assert junk.test(values(**{**others, field: low}), MODEL) is below_is_junk
    assert junk.test(values(**{**others, field: high}), MODEL) is not below_is_junk
    assert junk.test(values(), MODEL) is False  # without the values (no corpus), never
    if flag in ("many-companions", "low-npmi"):  # relative to the model's median: not with a handful of topics
        assert junk.test(values(**{**others, field: low if below_is_junk else high}), {**MODEL, "n_topics": 5}) is False
    # the meaning names the thresholds
    for key, threshold in td.THRESHOLDS.items():
        if key.split("_")[0] == flag.split("-")[0]:
            assert f"{threshold:g}" in junk.meaning or f"{threshold:.0%}" in junk.meaning, key


def planted_junk():
    """Documents of four clear themes (words fruita ..., rivera ..., motora ..., musica ...), and
    30 near copies of one footer text (words footera ...) that also ends 40 of the others: a
    template topic."""
    rng = np.random.default_rng(2)
    letters = "abcdefghijklmnop"
    themes = [[f"{theme}{a}{b}" for a in letters for b in letters[:10]]
              for theme in ("fruit", "river", "motor", "music")]
    zipf = 1.0 / np.arange(1, 161)
    zipf /= zipf.sum()
    footer = [f"footer{c}" for c in "abcdefghij"]
    lines = []
    for d in range(200):
        words = list(rng.choice(themes[d % 4], size=40, p=zipf)) + list(rng.choice(themes[(d + 1) % 4], size=5, p=zipf))
        if d % 5 == 0:
            words += footer
        lines.append(" ".join(words))
    for d in range(30):
        lines.append(" ".join(footer * 3 + list(rng.choice(themes[d % 4], size=2, p=zipf))))
    return lines


def train_junk(folder):
    """Write :func:`planted_junk` to ``folder/notes.txt`` and a K=5 model of it to ``folder/m.npz``."""
    (folder / "notes.txt").write_text("\n".join(planted_junk()) + "\n")
    r = run("train", folder / "notes.txt", "-k", 5, "--iterations", 100, "--seed", 1, "--threads", 1,
            "--stop-words", "none", "-q", "-o", folder / "m.npz")
    assert r.exit_code == 0, r.stderr
    return folder / "m.npz"


@pytest.fixture(scope="module")
def junk_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("junk")
    train_junk(folder)
    return folder


def footer_topic(model):
    return int(np.argmax(model.phi[:, model.vocab.index("footera")]))


def test_a_template_topic_is_measured_as_near_duplicates_and_the_themes_are_not(junk_model):
    model = ldacli.load_model(str(junk_model / "m.npz"))
    result = td.diagnostics(model, ldacli.read_corpus(str(junk_model / "notes.txt"), fixed_vocab=model.vocab))
    k = footer_topic(model)
    # near-duplicates is a measurement, not a verdict: held out, no threshold of it flagged junk reliably
    assert result["topics"][k]["measured"] == ["near-duplicates"] and result["topics"][k]["flags"] == []
    assert result["topics"][k]["top_doc_similarity"] > 0.8
    assert all(t["flags"] == [] and t["measured"] == [] for t in result["topics"] if t["topic"] != k)


def test_only_the_flags_backed_on_held_out_corpora_are_verdicts():
    """Issue 49: a flag names what it measured rather than a verdict it cannot back. Fitted with each
    of seven corpora held out (benchmarks/calibration.py), only background met the bar (at most 1 good
    topic in 20 flagged, at least 3 in 4 flagged junk) and its threshold was 1.0 in six folds of seven."""
    assert td.VERDICTS == ("background",) and td.THRESHOLDS["background"] == 1.0
    topic = values(document_dist=0.5, top_doc_similarity=0.9, tokens=10.0, top_docs_share=0.9,
                   effective_documents=0.1, npmi=0.0, companion_topics=20.0, rank_1_docs=0.0)
    assert td.raised(topic, MODEL) == list(td.FLAG_NAMES)
    shown = {f["name"]: f for f in td.diagnostics(*tiny())["flags"]}
    assert [n for n, f in shown.items() if f["verdict"]] == ["background"]
    for name in ("many-companions", "low-npmi", "few-documents", "near-duplicates", "tiny"):
        assert shown[name]["verdict"] is False and "junk" not in name


def test_topics_diagnostics_in_every_format(junk_model):
    model = junk_model / "m.npz"
    k = footer_topic(ldacli.load_model(str(model)))
    text = run("topics", model, "--diagnostics")
    assert text.exit_code == 0, text.stderr
    line = next(line for line in text.stdout.splitlines() if line.startswith(f"topic {k} "))
    assert "[measured: near-duplicates]: footer" in line and "junk?" not in text.stdout
    assert "top_doc_similarity" in text.stdout
    assert f"flagged none of 5 topics as likely junk (against {junk_model / 'notes.txt'}, 230 documents); " \
           f"measured, not a verdict (junk often is, good topics sometimes are): {k} (near-duplicates)" in text.stdout
    assert "  near-duplicates: its 20 documents of largest proportion share most of their words" in text.stdout
    data = json.loads(run("topics", model, "--diagnostics", "--format", "json").stdout)
    assert [t["measured"] for t in data["topics"]] == [["near-duplicates"] if t["topic"] == k else []
                                                       for t in data["topics"]]
    assert all(t["flags"] == [] for t in data["topics"])
    assert set(data["topics"][0]["diagnostics"]) == set(td.FIELD_NAMES)
    assert {"count", "docs", "coherence", "exclusivity"} <= set(data["topics"][0]["words"][0])
    assert data["diagnostics"]["thresholds"] == td.THRESHOLDS and data["diagnostics"]["corpus"]["n_docs"] == 230
    tsv = run("topics", model, "--diagnostics", "--format", "tsv", "-n", 4)
    rows = [line.split("\t") for line in tsv.stdout.splitlines()]
    assert rows[0][:4] == ["topic", "rank", "word", "probability"] and rows[0][-2:] == ["flags", "measured"]
    assert len(rows) == 1 + 5 * 4 and all(len(r) == len(rows[0]) for r in rows)
    assert [r[-2:] for r in rows[1:] if r[0] == str(k)] == [["", "near-duplicates"]] * 4
    assert "flagged none of 5 topics" in tsv.stderr and f"{k} (near-duplicates)" in tsv.stderr


def test_topics_diagnostics_mistakes_are_one_line(junk_model, tmp_path):
    model = junk_model / "m.npz"
    r = run("topics", model, "--diagnostics", "-n", 1)
    assert r.exit_code == 2 and "--diagnostics scores pairs of top words" in r.stderr
    r = run("topics", model, "--corpus", junk_model / "notes.txt")
    assert r.exit_code == 2 and "applies with --coherence or --diagnostics only" in r.stderr
    moved = tmp_path / "m.npz"
    moved.write_bytes((junk_model / "m.npz").read_bytes())
    (junk_model / "notes.txt").rename(junk_model / "gone.txt")
    try:
        r = run("topics", moved, "--diagnostics")
        assert r.exit_code == 1 and "give the reference corpus with --corpus" in r.stderr
        r = run("topics", moved, "--diagnostics", "--corpus", junk_model / "gone.txt", "--format", "json")
        assert r.exit_code == 0 and json.loads(r.stdout)["diagnostics"]["corpus"]["n_docs"] == 230
    finally:
        (junk_model / "gone.txt").rename(junk_model / "notes.txt")


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl", "parquet"])
def test_export_diagnostics_as_a_table(junk_model, tmp_path, fmt):
    model = junk_model / "m.npz"
    k = footer_topic(ldacli.load_model(str(model)))
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="the parquet extra is not installed")
    out = tmp_path / f"d.{fmt}"
    r = run("export", model, "diagnostics", "-o", out)
    assert r.exit_code == 0, r.stderr
    pd = pytest.importorskip("pandas", reason="the pandas extra is not installed")
    frame = {"tsv": lambda p: pd.read_csv(p, sep="\t"), "csv": pd.read_csv,
             "jsonl": lambda p: pd.read_json(p, lines=True), "parquet": pd.read_parquet}[fmt](out)
    assert list(frame.columns) == ["topic", "name", *td.FIELD_NAMES, "flags", "measured", "words"]
    assert len(frame) == 5
    measured = frame["measured"].tolist()[k]
    assert (list(measured) if fmt in ("jsonl", "parquet") else measured.split()) == ["near-duplicates"]
    expected = td.diagnostics(ldacli.load_model(str(model)),
                                    ldacli.read_corpus(str(junk_model / "notes.txt"),
                                                       fixed_vocab=ldacli.load_model(str(model)).vocab))
    assert frame["npmi"].tolist() == pytest.approx([t["npmi"] for t in expected["topics"]], rel=1e-5)


def test_export_diagnostics_as_mallets_xml(junk_model, tmp_path):
    model = junk_model / "m.npz"
    k = footer_topic(ldacli.load_model(str(model)))
    out = tmp_path / "diagnostics.xml"
    r = run("export", model, "diagnostics", "--format", "mallet", "-n", 5, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert out.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<model>\n<topic id=\'0\' tokens=')
    root = ET.parse(out).getroot()
    topics = root.findall("topic")
    assert root.tag == "model" and [t.get("id") for t in topics] == ["0", "1", "2", "3", "4"]
    mallet_topic = ["tokens", "document_entropy", "word-length", "coherence", "uniform_dist", "corpus_dist",
                    "eff_num_words", "token-doc-diff", "rank_1_docs", "allocation_ratio", "allocation_count",
                    "exclusivity"]
    assert list(topics[0].attrib)[1:1 + len(mallet_topic)] == ["id"][1:] + mallet_topic
    assert topics[k].get("flags") == "" and topics[k].get("measured") == "near-duplicates"
    words = topics[0].findall("word")
    assert len(words) == 5 and list(words[0].attrib) == ["rank", "count", "prob", "cumulative", "docs", "word-length",
                                                          "coherence", "uniform_dist", "corpus_dist", "token-doc-diff",
                                                          "exclusivity"]
    assert float(words[-1].get("cumulative")) == pytest.approx(sum(float(w.get("prob")) for w in words), abs=1e-4)


def test_xml_cannot_hold_a_control_character_and_says_so(tmp_path):
    (tmp_path / "c.vocab").write_text("plain\nbell\x07word\nother\n")
    (tmp_path / "c.ldac").write_text("\n".join(["3 0:2 1:3 2:1"] * 6) + "\n")
    assert run("train", tmp_path / "c.ldac", "-k", 2, "--iterations", 5, "--seed", 1, "-q",
               "-o", tmp_path / "m.npz").exit_code == 0
    r = run("export", tmp_path / "m.npz", "diagnostics", "--format", "mallet", "-o", tmp_path / "d.xml")
    assert r.exit_code == 1 and "XML cannot hold the word 'bell\\x07word'" in r.stderr
    assert not (tmp_path / "d.xml").exists()
    r = run("export", tmp_path / "m.npz", "diagnostics", "--format", "jsonl")
    assert r.exit_code == 0 and "bell\\u0007word" in r.stdout
