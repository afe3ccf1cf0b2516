"""ldacli export: every table in every format parses back to what the model holds, words and ids
holding tabs, commas, quotes, line breaks, markup and right-to-left marks included; MALLET's
layouts as MALLET writes them; pyLDAvis.prepare accepts the pyldavis arguments."""

import csv
import io
import json

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import ldacli
from ldacli.cli import main

HOSTILE = ["plain", "comma,word", 'say "hi"', "tab\there", "line\nbreak", "</script><script>window.__pwned=1</script>",
           "<img src=x onerror=alert(1)>", "a & b", "\u202etxet", "x" * 300, "don't", "semi;colon", "back\\slash",
           "sep\u2028line"]
FORMATS = ("tsv", "csv", "jsonl", "parquet")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def hostile_model(tmp_path_factory):
    """A model whose words and document ids hold everything that breaks naive tables."""
    folder = tmp_path_factory.mktemp("export")
    rng = np.random.default_rng(2)
    D, V = 40, len(HOSTILE)
    counts = sp.csr_array(rng.poisson(1.5, size=(D, V)).astype(np.int32))
    ids = [f"doc {i}" if i % 3 else f'id,"{i}"\t<b>' for i in range(D)]
    corpus = ldacli.Corpus(counts, list(HOSTILE), ids)
    model = ldacli.train(corpus, 3, iterations=20, seed=1)
    model.params["topic_names"] = {"1": "fruit, \"ripe\" ones"}
    path = folder / "m.npz"
    model.save(str(path))
    return path, ldacli.load_model(str(path))


def parse(data: bytes, fmt: str) -> tuple[list[str], list[list]]:
    """Header and rows of an exported table, by the readers other tools use."""
    if fmt == "parquet":
        pq = pytest.importorskip("pyarrow.parquet", reason="the parquet extra is not installed")
        table = pq.read_table(io.BytesIO(data))
        return table.column_names, [list(r.values()) for r in table.to_pylist()]
    text = data.decode("utf-8")
    if fmt == "jsonl":
        lines = text.split("\n")
        assert lines[-1] == ""
        objects = [json.loads(line) for line in lines[:-1]]
        return list(objects[0]), [list(o.values()) for o in objects]
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t" if fmt == "tsv" else ","))
    return rows[0], rows[1:]


@pytest.mark.parametrize("fmt", FORMATS)
def test_doc_topics_round_trip(fmt, hostile_model, tmp_path):
    path, model = hostile_model
    r = run("export", path, "doc-topics", "--format", fmt, "-o", tmp_path / f"t.{fmt}")
    assert r.exit_code == 0, r.stderr
    header, rows = parse((tmp_path / f"t.{fmt}").read_bytes(), fmt)
    assert header == ["doc_id"] + [f"topic_{k}" for k in range(3)]
    assert [row[0] for row in rows] == model.doc_ids
    theta = np.array([[float(x) for x in row[1:]] for row in rows])
    assert np.allclose(theta, model.theta, atol=1e-6 if fmt in ("tsv", "csv") else 0)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_doc_topics(fmt, hostile_model):
    path, model = hostile_model
    r = run("export", path, "doc-topics", "--min-proportion", 0.3, "--top-topics", 2, "--format", fmt, "-o", "-")
    assert r.exit_code == 0, r.stderr
    header, rows = parse(r.stdout_bytes, fmt)
    assert header == ["doc_id", "rank", "topic", "proportion"]
    expected = []
    for d, row in zip(model.doc_ids, model.theta):
        order = np.argsort(-row, kind="stable")[:2]
        expected += [(d, r + 1, int(k), row[k]) for r, k in enumerate(order) if row[k] >= 0.3]
    assert [(x[0], int(x[1]), int(x[2])) for x in rows] == [e[:3] for e in expected]
    assert np.allclose([float(x[3]) for x in rows], [e[3] for e in expected], atol=1e-6)


@pytest.mark.parametrize("fmt", FORMATS)
def test_topic_words_and_keys_round_trip(fmt, hostile_model):
    path, model = hostile_model
    r = run("export", path, "topic-words", "--format", fmt, "-o", "-")
    assert r.exit_code == 0, r.stderr
    header, rows = parse(r.stdout_bytes, fmt)
    assert header == ["topic", "rank", "word", "probability"]
    assert len(rows) == model.n_topics * len(model.vocab)
    for row in rows:
        assert float(row[3]) == pytest.approx(model.phi[int(row[0]), model.vocab.index(row[2])], rel=1e-5)
    r = run("export", path, "topic-keys", "-n", 4, "--format", fmt, "-o", "-")
    header, rows = parse(r.stdout_bytes, fmt)
    assert header == ["topic", "name", "alpha", "prevalence", "words"]
    assert [row[1] for row in rows] == ["", "fruit, \"ripe\" ones", ""]  # a name, else empty (not the id)
    tops = model.top_words(4)
    for k, row in enumerate(rows):
        words = row[4] if fmt in ("jsonl", "parquet") else None
        if words is None:  # a text cell: the words space-separated (words holding spaces are ambiguous there)
            assert row[4] == " ".join(w for w, _ in tops[k])
        else:
            assert words == [w for w, _ in tops[k]]
        assert float(row[3]) == pytest.approx(model.theta.mean(axis=0)[k], rel=1e-5)


def test_mallet_refuses_what_its_layout_cannot_hold(hostile_model, tmp_path):
    path, _ = hostile_model
    for what in ("doc-topics", "topic-words", "topic-keys"):
        r = run("export", path, what, "--format", "mallet", "-o", tmp_path / "x.txt")
        assert r.exit_code == 1 and "MALLET's layout cannot hold" in r.stderr, r.stderr
        assert not (tmp_path / "x.txt").exists()


def test_mallet_layouts(small_ldac, tmp_path):
    model_path = tmp_path / "m.npz"
    assert run("train", small_ldac, "-k", 4, "--iterations", 20, "--seed", 1, "-q", "-o", model_path).exit_code == 0
    model = ldacli.load_model(str(model_path))
    dense = run("export", model_path, "doc-topics", "--format", "mallet").stdout.splitlines()
    assert len(dense) == len(model.doc_ids)
    for i, line in enumerate(dense):
        fields = line.split("\t")
        assert fields[0] == str(i) and fields[1] == model.doc_ids[i]
        assert np.allclose([float(x) for x in fields[2:]], model.theta[i])
    sparse = run("export", model_path, "doc-topics", "--format", "mallet", "--top-topics", 2).stdout.split("\n")
    assert sparse[0] == "#doc name topic proportion ..."
    fields = sparse[1].split("\t")
    assert fields[:2] == ["0", model.doc_ids[0]] and fields[-1] == "" and len(fields) == 2 + 2 * 2 + 1
    assert int(fields[2]) == int(np.argmax(model.theta[0]))
    keys = run("export", model_path, "topic-keys", "--format", "mallet", "-n", 5).stdout.splitlines()
    k, alpha, words = keys[1].split("\t")
    assert k == "1" and alpha == "0.1" and words == " ".join(w for w, _ in model.top_words(5)[1]) + " "
    weights = run("export", model_path, "topic-words", "--format", "mallet").stdout.splitlines()
    assert len(weights) == 4 * len(model.vocab)
    t, w, p = weights[len(model.vocab) + 2].split("\t")
    assert (t, w) == ("1", model.vocab[2]) and float(p) == model.phi[1, 2]


def test_doc_topics_of_an_inference_file(small_ldac, tmp_path):
    """ldacli infer ... -o x.npz: its documents' proportions export as a model's do; the tables
    that need the topics are refused in one line naming them."""
    model_path, inferred = tmp_path / "m.npz", tmp_path / "x.npz"
    assert run("train", small_ldac, "-k", 4, "--iterations", 20, "--seed", 1, "-q", "-o", model_path).exit_code == 0
    assert run("infer", model_path, small_ldac, "--seed", 2, "-q", "-o", inferred).exit_code == 0
    inference = ldacli.Inference.load(str(inferred))
    r = run("export", inferred, "doc-topics", "--format", "csv")
    assert (r.exit_code, r.stderr) == (0, "")
    header, rows = parse(r.stdout.encode(), "csv")
    assert header == ["doc_id", "topic_0", "topic_1", "topic_2", "topic_3"]
    assert [row[0] for row in rows] == inference.doc_ids
    np.testing.assert_allclose([[float(x) for x in row[1:]] for row in rows], inference.theta, rtol=1e-5)
    mallet = run("export", inferred, "doc-topics", "--format", "mallet", "--top-topics", 1)
    assert mallet.exit_code == 0 and mallet.stdout.splitlines()[1].split("\t")[2] == str(inference.theta[0].argmax())
    for what in ("topic-words", "topic-keys", "diagnostics", "pyldavis"):
        r = run("export", inferred, what, "-o", tmp_path / "t.out")
        assert (r.exit_code, r.stdout) == (1, ""), r.stderr
        assert r.stderr == (f"Error: {inferred}: expected a model for {what}, found an inference file, which holds "
                            "documents' proportions only: export doc-topics from it (topic-words, topic-keys, "
                            "diagnostics, pyldavis need a model)\n")
    r = run("topics", inferred)
    assert r.exit_code == 1 and r.stderr == f"Error: {inferred}: expected an ldacli model, found an inference\n"
    assert not (tmp_path / "t.out").exists()


def test_options_that_do_not_apply_are_refused(hostile_model, tmp_path):
    path, _ = hostile_model
    for args, option in [(("doc-topics", "-n", 3), "--top-words"), (("topic-words", "--top-topics", 2), "--top-topics"),
                         (("topic-keys", "--min-proportion", 0.1), "--min-proportion"),
                         (("doc-topics", "--format", "json"), "--format"), (("pyldavis", "--format", "tsv"), "--format"),
                         (("topic-keys", "--corpus", path), "--corpus"), (("topic-keys", "--vocab", path), "--vocab")]:
        r = run("export", path, *args, "-o", tmp_path / "x")
        assert r.exit_code == 2 and option in r.stderr and len(r.stderr.splitlines()) == 1, (args, r.stderr)


def test_topic_keys_with_coherence(tmp_path):
    text = tmp_path / "docs.txt"
    text.write_text("\n".join(["apples pears plums orchard fruit", "rivers lakes boats water sailing"] * 20) + "\n")
    model = tmp_path / "m.npz"
    assert run("train", text, "-k", 2, "--iterations", 20, "--seed", 1, "-q", "-o", model).exit_code == 0
    r = run("export", model, "topic-keys", "--coherence", "npmi", "-n", 3, "--format", "jsonl")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert list(rows[0]) == ["topic", "name", "alpha", "prevalence", "npmi", "words"]
    scores = ldacli.coherence(ldacli.load_model(str(model)), ldacli.read_corpus(str(text)), measure="npmi", top_words=3)
    assert [row["npmi"] for row in rows] == pytest.approx(scores["per_topic"])


def test_pyldavis_arguments(tmp_path):
    text = tmp_path / "docs.txt"
    text.write_text("\n".join(["apples pears plums orchard fruit juice", "rivers lakes boats water sailing fish",
                               "apples rivers fruit water"] * 15) + "\n")
    model_path = tmp_path / "m.npz"
    assert run("train", text, "-k", 3, "--iterations", 30, "--seed", 1, "-q", "-o", model_path).exit_code == 0
    model = ldacli.load_model(str(model_path))
    args = ldacli.to_pyldavis(model)
    assert args["topic_term_dists"] is model.phi and args["doc_topic_dists"] is model.theta  # the training corpus
    assert list(args["doc_lengths"]) == [6, 6, 4] * 15 and args["vocab"] == model.vocab
    r = run("export", model_path, "pyldavis", "-o", tmp_path / "lv.json")
    assert r.exit_code == 0, r.stderr
    written = json.loads((tmp_path / "lv.json").read_text())
    assert sorted(written) == sorted(args)
    for key, value in args.items():
        assert np.array_equal(np.asarray(written[key]), np.asarray(value)), key
    other = tmp_path / "other.txt"
    other.write_text("apples fruit juice\nboats water\n")
    inferred = ldacli.to_pyldavis(model, ldacli.read_corpus(str(other)))
    assert inferred["doc_topic_dists"].shape == (2, 3) and list(inferred["doc_lengths"]) == [3, 2]
    pyLDAvis = pytest.importorskip("pyLDAvis", reason="pyLDAvis is not installed (the test extra has it)")
    prepared = pyLDAvis.prepare(**written, mds="pcoa", sort_topics=False)
    assert len(prepared.topic_coordinates) == 3


@pytest.fixture
def trained(tmp_path, small_ldac):
    """A model trained on a corpus file it records (its reference for coherence and diagnostics)."""
    r = run("train", small_ldac, "-k", 5, "--iterations", 20, "--seed", 1, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    return str(tmp_path / "m.npz"), small_ldac


@pytest.mark.parametrize(("what", "args", "keywords"), [
    ("topic-keys", ["-n", 4, "--coherence", "npmi"], {"top_words": 4, "coherence": "npmi"}),
    ("doc-topics", ["--top-topics", 2, "--format", "mallet"], {"top_topics": 2, "format": "mallet"}),
    ("diagnostics", [], {}),
    ("pyldavis", [], {}),
])
def test_ldacli_export_writes_what_the_command_writes(trained, tmp_path, what, args, keywords):
    """ldacli.export is the command's one call: the same file from a model object as the command
    writes from its path, against the training corpus or one given (whose reader's notes both say)."""
    path, corpus = trained
    model = ldacli.load_model(path)
    ending = {"pyldavis": "json", "diagnostics": "csv"}.get(what, "txt")
    for given in ([], ["--corpus", corpus]):
        if given and what == "doc-topics":
            continue  # (its table takes no corpus)
        r = run("export", path, what, *args, *given, "-o", tmp_path / f"cli.{ending}")
        assert r.exit_code == 0, r.stderr
        written = ldacli.export(model, what, str(tmp_path / f"api.{ending}"), **keywords,
                                **({"corpus": corpus} if given else {}))
        assert written["output"] == str(tmp_path / f"api.{ending}")
        assert (tmp_path / f"api.{ending}").read_bytes() == (tmp_path / f"cli.{ending}").read_bytes()
        assert bool(written["notes"]) == bool(given)
        assert all(f"{corpus}: {note}" in r.stderr for note in written["notes"])


def test_ldacli_export_refuses_what_the_table_does_not_take(trained, tmp_path):
    path, _ = trained
    model = ldacli.load_model(path)
    before = set(tmp_path.iterdir())
    with pytest.raises(ldacli.SettingError, match="top_topics applies to doc-topics only"):
        ldacli.export(path, "topic-words", str(tmp_path / "w.tsv"), top_topics=2)
    with pytest.raises(ldacli.SettingError, match="vocab applies with corpus only"):
        ldacli.export(model, "topic-keys", str(tmp_path / "k.tsv"), vocab="v.txt")
    with pytest.raises(ldacli.SettingError, match="output_format must be json for pyldavis"):
        ldacli.export(model, "pyldavis", str(tmp_path / "p.tsv"), format="tsv")
    assert set(tmp_path.iterdir()) == before
