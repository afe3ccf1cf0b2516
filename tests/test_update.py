"""Nightly updates (``train NIGHT --update MODEL``): a night's documents added to a model at a
cost set by the night, the new model continuing the old one's topics and describing every
document seen; the same bytes at any thread count and on resume; refusals in one line."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.corpora.corpus import Corpus
from ldacli.corpora.formats.write import write_corpus
from ldacli.corpora.synthetic import generate, planted_topics
from ldacli.errors import LdacliError
from ldacli.files.npz import write_npz
from ldacli.methods import update as updating
from ldacli.topic_names import seed_ranks


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def world():
    """Old documents of 4 planted topics over 40 words, two nights of new ones, held-out ones."""
    syn = generate(420, 4, 40, doc_length=50, alpha=0.2, seed=41, planted=True)
    c = syn.corpus
    part = lambda lo, hi, prefix: Corpus(c.counts[lo:hi], list(c.vocab), [f"{prefix}{i}" for i in range(lo, hi)],
                                         prefix, "ldac")
    return {"old": part(0, 300, "d"), "night": part(300, 330, "n"), "night2": part(330, 360, "m"),
            "held": part(360, 420, "h")}


@pytest.fixture(scope="module")
def files(world, tmp_path_factory):
    folder = tmp_path_factory.mktemp("update")
    paths = {}
    for name, corpus in world.items():
        paths[name] = str(folder / f"{name}.ldac")
        write_corpus(corpus, paths[name], str(folder / f"{name}.vocab"), format="ldac")
    paths["old_model"] = str(folder / "old.npz")
    ldacli.train(paths["old"], 4, iterations=100, seed=1).save(paths["old_model"])
    return paths


def test_an_update_continues_the_model_and_describes_every_document_seen(world, files, tmp_path):
    old = ldacli.load_model(files["old_model"])
    out = tmp_path / "next.npz"
    r = run("train", files["night"], "--update", files["old_model"], "--iterations", 30, "--seed", 2, "-q", "-o", out)
    assert r.exit_code == 0, r.output
    new = ldacli.load_model(str(out))
    assert new.vocab == old.vocab and new.n_topics == 4
    # the old documents first, with the proportions the old model gave them; then the night's,
    # numbered after them (LDA-C documents are numbered by their position, as if appended)
    assert new.doc_ids == [str(i) for i in range(1, 331)] and old.doc_ids == new.doc_ids[:300]
    assert new.theta[:300].tobytes() == old.theta.tobytes()
    assert np.allclose(new.theta[300:].sum(axis=1), 1)
    # the topics continue: each is nearest the old topic of its id, and stays near it
    compared = ldacli.diff_models(old, new)
    assert [(t["a"], t["b"]) for t in compared["topics"]] == [(k, k) for k in range(4)]
    assert compared["max_distance"] < 0.2
    u = new.params["update"]
    assert u["path"] == os.path.abspath(files["old_model"]) and u["night_docs"] == 30 and u["since_full"] == 1
    assert len(u["freed"]) == 1 and not u["freed"][0]["kept"]  # a night of the old themes keeps no freed topic
    assert new.params["warm_start"]["descent"] == [0, 1, 2, 3]
    r = run("info", out)
    assert r.exit_code == 0 and "update:           of old.npz: a night of 30 documents" in r.stdout
    assert "1 update since a full training" in r.stdout
    assert new.alpha.tobytes() == old.alpha.tobytes() and new.beta == old.beta  # its priors, not learned
    # an update of the update: evidence carried on, counted from the last full run
    out2 = tmp_path / "next2.npz"
    r = run("train", files["night2"], "--update", out, "--iterations", 30, "--seed", 3, "-q", "-o", out2)
    assert r.exit_code == 0, r.output
    newer = ldacli.load_model(str(out2))
    assert newer.doc_ids == [str(i) for i in range(1, 361)]
    assert newer.params["update"]["since_full"] == 2
    assert newer.theta[:330].tobytes() == new.theta.tobytes()


def test_an_update_is_as_good_as_the_retrain_on_documents_like_the_old_ones(world, files, tmp_path):
    update = ldacli.train(files["night"], iterations=50, seed=2, update=files["old_model"])
    # the retrain of old + night, warm-started, as the README's cron line does
    grown = Corpus(sp.vstack([world["old"].counts, world["night"].counts]).tocsr(), list(world["old"].vocab),
                   world["old"].doc_ids + world["night"].doc_ids, "grown", "ldac")
    retrain = ldacli.train(grown, iterations=100, seed=2, warm_start=files["old_model"])
    held = files["held"]
    p_update = ldacli.perplexity(update, held, seed=1)["perplexity"]
    p_retrain = ldacli.perplexity(retrain, held, seed=1)["perplexity"]
    assert p_update < 1.02 * p_retrain


def test_the_same_seed_gives_the_same_bytes_at_any_thread_count_and_on_resume(files, tmp_path):
    outs = []
    for threads in (1, 2):
        out = tmp_path / f"t{threads}.npz"
        r = run("train", files["night"], "--update", files["old_model"], "--iterations", 20, "--seed", 5,
                "--threads", threads, "-q", "-o", out)
        assert r.exit_code == 0, r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    # stopped at sweep 8 (a checkpoint), resumed to 20: the same model
    ckpt = tmp_path / "u.ckpt.npz"
    r = run("train", files["night"], "--update", files["old_model"], "--iterations", 8, "--seed", 5, "-q",
            "--checkpoint", ckpt, "-o", tmp_path / "part.npz")
    assert r.exit_code == 0, r.output
    out = tmp_path / "resumed.npz"
    r = run("train", files["night"], "--resume", ckpt, "--iterations", 20, "-q", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == outs[0]


def test_a_half_life_weighs_the_old_evidence_down(files):
    old = ldacli.load_model(files["old_model"])
    words, topics, values = updating.evidence(old)
    fading = ldacli.train(files["night"], iterations=10, seed=2, update=files["old_model"], half_life=1)
    carried = fading.counts.prior  # half of the old evidence, carried as the new model's prior
    assert fading.counts.carried and np.isclose(carried.extra.sum(), values.sum() / 2)
    assert "topic_word_prior" not in fading.params  # (in the model's arrays: too large for params)
    assert updating.decay(None) == 1.0 and updating.decay(2.0) == pytest.approx(2 ** -0.5)


@pytest.mark.parametrize("args, message", [
    (("--warm-start", "OLD"), "--warm-start does not apply beside --update: the model it continues is its start"),
    (("--alpha", "0.5"), "--alpha does not apply beside --update: it keeps its model's priors"),
    (("--method", "vem"), "--method must be cgs beside --update (its model's), found vem"),
    (("--add-topics", "1"), "--add-topics does not apply beside --update"),
])
def test_what_cannot_go_with_an_update_is_refused_before_anything_is_read(files, tmp_path, args, message):
    args = [a.replace("OLD", files["old_model"]) for a in args]
    out = tmp_path / "x.npz"
    r = run("train", files["night"], "--update", files["old_model"], *args, "-o", out)
    assert r.exit_code == 2 and message in r.stderr and not out.exists()


def test_a_half_life_without_an_update_is_refused(files, tmp_path):
    r = run("train", files["night"], "--half-life", 3, "-o", tmp_path / "x.npz")
    assert r.exit_code == 2 and "--half-life weighs the old evidence of --update: give --update too" in r.stderr


def test_a_night_that_repeats_a_document_or_a_model_that_cannot_be_updated_is_refused_in_one_line(world, files,
                                                                                                 tmp_path):
    # documents with ids of their own: a folder of text files, one already in the model
    days = {"old": ["apple banana cherry apple", "banana cherry melon", "cherry melon apple"],
            "night": ["melon banana apple", "apple cherry banana"]}
    for day, texts in days.items():
        (tmp_path / day).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / day / f"{day if i else 'old'}-{i}.txt").write_text(text)
    texts_model = tmp_path / "texts.npz"
    assert run("train", tmp_path / "old", "-k", 2, "--iterations", 10, "-q", "-o", texts_model).exit_code == 0
    out = tmp_path / "x.npz"
    r = run("train", tmp_path / "night", "--update", texts_model, "-q", "-o", out)
    assert r.exit_code == 1 and "document 'old-0.txt' is already in the model" in r.stderr and not out.exists()
    assert len(r.stderr.strip().splitlines()) == 1
    vem = tmp_path / "vem.npz"
    ldacli.train(world["old"], 4, method="vem", iterations=5, seed=1).save(str(vem))
    r = run("train", files["night"], "--update", vem, "-o", out)
    assert r.exit_code == 1 and "an update continues a model of method cgs, found one of method vem" in r.stderr
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(open(files["old_model"], "rb").read()[:5000])
    r = run("train", files["night"], "--update", damaged, "-o", out)
    assert r.exit_code == 1 and str(damaged) in r.stderr and "Traceback" not in r.output
    assert not out.exists()
    # its documents doctored: read and checked once the update is settled, before the night is
    # sampled, with topics freed for the night or none
    with np.load(files["old_model"], allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["doc_topic_topics"] = arrays["doc_topic_topics"] + 1
    doctored = tmp_path / "doctored.npz"
    write_npz(str(doctored), arrays)
    for free in (1, 0):
        r = run("train", files["night"], "--update", doctored, "--free-topics", free, "--checkpoint", tmp_path / "c.npz",
                "-q", "-o", out)
        assert r.exit_code == 1 and r.stderr == f"Error: {doctored}: expected ids below 4 in 'doc_topic_topics', " \
                                                f"found 4\n", r.stderr
        assert not out.exists() and not (tmp_path / "c.npz").exists()


def test_the_command_reads_a_night_of_text_as_its_model_reads_documents(tmp_path):
    # a model whose tokenizer keeps two-letter words: the command reads the night with it, as
    # ldacli.train does (it read the night with the default tokenizer, which drops them)
    rng = np.random.default_rng(1)
    words = ["ab", "cd", "ef", "apple", "melon", "grape", "river", "stone"]
    for name, n_docs in (("old", 40), ("night", 10)):
        (tmp_path / f"{name}.txt").write_text("".join(" ".join(rng.choice(words, 20)) + "\n" for _ in range(n_docs)))
    r = run("train", tmp_path / "old.txt", "-k", 3, "--iterations", 10, "--seed", 1, "--min-token-length", 2, "-q",
            "-o", tmp_path / "old.npz")
    assert r.exit_code == 0, r.output
    r = run("train", tmp_path / "night.txt", "--update", tmp_path / "old.npz", "--iterations", 5, "--seed", 2,
            "-o", tmp_path / "command.npz")
    assert r.exit_code == 0, r.output
    assert "night.txt: 10 documents, 8 words, 200 tokens" in r.stderr
    ldacli.train(str(tmp_path / "night.txt"), update=str(tmp_path / "old.npz"), iterations=5, seed=2,
                 output=str(tmp_path / "library.npz"))
    assert (tmp_path / "command.npz").read_bytes() == (tmp_path / "library.npz").read_bytes()


@pytest.fixture(scope="module")
def themes(tmp_path_factory):
    """A model (K=5) of old documents of 4 planted themes over 50 words, and a night of which
    half the documents are of a fifth theme, new (its words rare in the old themes)."""
    planted = planted_topics(5, 50)
    old_topics = 0.97 * planted[:4] + 0.03 / 50
    folder = tmp_path_factory.mktemp("themes")
    old = generate(400, 4, 50, doc_length=50, alpha=0.2, seed=7, topics=old_topics).corpus
    new = generate(40, 3, 50, doc_length=50, alpha=0.5, seed=8, topics=np.vstack([planted[4], old_topics[:2]])).corpus
    same = generate(40, 4, 50, doc_length=50, alpha=0.2, seed=9, topics=old_topics).corpus
    paths = {"model": str(folder / "old.npz")}
    for name, corpus, prefix in (("old", old, "d"), ("night", sp.vstack([new.counts, same.counts]).tocsr(), "n")):
        counts = corpus.counts if isinstance(corpus, Corpus) else corpus
        paths[name] = str(folder / f"{name}.ldac")
        write_corpus(Corpus(counts, list(old.vocab), [f"{prefix}{i}" for i in range(counts.shape[0])], name, "ldac"),
                     paths[name], str(folder / f"{name}.vocab"), format="ldac")
    ldacli.train(paths["old"], 5, iterations=150, seed=1).save(paths["model"])
    return {"planted": planted, **paths}


def test_a_new_theme_in_the_night_gets_a_topic_of_its_own(themes, tmp_path):
    out = tmp_path / "next.npz"
    r = run("train", themes["night"], "--update", themes["model"], "--iterations", 100, "--seed", 2, "--threads", 1,
            "-o", out)
    assert r.exit_code == 0, r.output
    # the same bytes on two threads, a topic freed and kept
    two = tmp_path / "two.npz"
    assert run("train", themes["night"], "--update", themes["model"], "--iterations", 100, "--seed", 2, "--threads", 2,
               "-q", "-o", two).exit_code == 0
    assert two.read_bytes() == out.read_bytes()
    new, old = ldacli.load_model(str(out)), ldacli.load_model(themes["model"])
    block = themes["planted"][4] > 0  # the new theme's words
    assert old.phi[:, block].sum(axis=1).max() < 0.5  # no topic of the old model has them
    assert new.phi[:, block].sum(axis=1).max() > 0.8  # one of the update's is theirs
    topic = int(np.argmax(new.phi[:, block].sum(axis=1)))
    # the topic freed for it is a new topic: its lineage says so (diff pairs it with nothing)
    freed = new.params["update"]["freed"]
    assert [f["topic"] for f in freed if f["kept"]] == [topic]
    assert new.params["warm_start"]["descent"][topic] is None and new.params["warm_start"]["added"] == [topic]
    into = next(f["into"] for f in freed if f["kept"])
    # its prior is learned from the night's documents (the freed topic's was the merged half's);
    # the topic merged into weighs both, as the old documents now count both there
    assert new.alpha[into] == pytest.approx(old.alpha[into] + old.alpha[topic])
    nights_docs = new.counts.doc_states.size - len(old.doc_ids)
    share = new.theta[-nights_docs:, topic]
    assert new.alpha[topic] != old.alpha[topic] and new.alpha[topic] / new.alpha.sum() == pytest.approx(
        share.mean(), rel=0.3)
    others = np.setdiff1d(np.arange(old.n_topics), [topic, into])
    np.testing.assert_array_equal(new.alpha[others], old.alpha[others])
    assert f"topic {topic} freed for a new theme of the night (its old evidence merged into topic {into})" in r.stderr
    shown = run("info", out)
    assert shown.exit_code == 0 and f"topic {topic} freed for a new theme of the night" in shown.stdout
    compared = run("diff", themes["model"], out)
    assert compared.exit_code == 0
    assert f"A   {topic} removed (merged, its id freed for the night)" in compared.stdout
    assert f"B   {topic} added (a new theme of the night)" in compared.stdout
    # the old themes are still there, each a topic of the update
    for k in range(4):
        assert new.phi[:, themes["planted"][k] > 0].sum(axis=1).max() > 0.8
    # none freed (--free-topics 0): the old topics keep every id and the new theme has none of its own
    none = ldacli.train(themes["night"], iterations=100, seed=2, update=themes["model"], free_topics=0)
    assert none.phi[:, block].sum(axis=1).max() < 0.6 and none.params["update"]["freed"] == []


def test_with_a_half_life_a_theme_that_stops_coming_fades(world, files, tmp_path):
    # topic 0's theme (the planted words of topic 0 of the old model) comes no more: three
    # nights without it, updated one after the other with and without a half-life of 1 update
    old = ldacli.load_model(files["old_model"])
    fading = int(np.argmax(old.phi[:, :10].sum(axis=1)))  # the topic of planted block 0
    syn = generate(90, 3, 40, doc_length=50, alpha=0.2, seed=43, topics=planted_topics(4, 40)[1:])
    shares = {}
    for half_life in (None, 1):
        model = files["old_model"]
        for n in range(3):
            night = Corpus(syn.corpus.counts[30 * n:30 * (n + 1)], list(syn.corpus.vocab),
                           [f"f{n}-{i}" for i in range(30)], "night", "ldac")
            path = str(tmp_path / f"{half_life}-{n}.npz")
            ldacli.train(night, iterations=30, seed=n, update=model, half_life=half_life).save(path)
            model = path
        _, topics, values = updating.evidence(ldacli.load_model(model))
        shares[half_life] = np.bincount(topics, weights=values, minlength=4)[fading] / values.sum()
    before = np.bincount(updating.evidence(old)[1], weights=updating.evidence(old)[2], minlength=4)[fading]
    before /= updating.evidence(old)[2].sum()
    # without a half-life the old evidence keeps its weight: the theme keeps most of its share;
    # halved at each update, the old evidence is an eighth of what it was after three, and the
    # theme's share falls below half of what it was
    assert shares[None] > 0.75 * before
    assert shares[1] < 0.5 * before


def test_free_topics_without_an_update_or_more_than_half_the_topics_are_refused(files, tmp_path):
    r = run("train", files["night"], "--free-topics", 1, "-o", tmp_path / "x.npz")
    assert r.exit_code == 2 and "--free-topics frees topics of the model of --update: give --update too" in r.stderr
    r = run("train", files["night"], "--update", files["old_model"], "--free-topics", 3, "-o", tmp_path / "x.npz")
    assert r.exit_code == 2 and "--free-topics must be at most 2 (half the 4 topics" in r.stderr
    assert not (tmp_path / "x.npz").exists()


def test_a_seeded_model_is_updated_with_its_seeds_at_full_weight_never_as_evidence(themes, tmp_path):
    old = ldacli.load_model(themes["model"])
    seed_words = {"first": [old.vocab[w] for w in np.flatnonzero(themes["planted"][0])[:5]]}
    seeded = tmp_path / "seeded.npz"
    ldacli.train(themes["old"], 5, iterations=150, seed=1, seed_words=seed_words).save(str(seeded))
    parent = ldacli.load_model(str(seeded))
    given = updating.seeds(parent)
    assert given is not None and set(given[1].tolist()) == {0}
    out = tmp_path / "next.npz"
    r = run("train", themes["night"], "--update", seeded, "--half-life", 1, "--iterations", 20, "--seed", 2,
            "-o", out)
    assert r.exit_code == 0, r.output
    assert "lost their seeds" not in r.stderr
    new = ldacli.load_model(str(out))
    # the seeded topic keeps its name and seeds, and the file says so for the next update
    assert new.params["seeded"] == parent.params["seeded"] and new.topic_names[0] == "first"
    assert not any(t["lost"] for t in seed_ranks(new))
    # the evidence carried on is the old evidence halved plus the night's tokens: no seed mass
    night = ldacli.read_corpus(themes["night"])
    tokens = night.n_tokens
    assert np.isclose(updating.evidence(new)[2].sum(), updating.evidence(parent)[2].sum() / 2 + tokens)
    # and the prior the night was sampled under holds each seed at its full weight
    prior = new.counts.prior
    words, topics, values = updating.evidence(parent)
    for w, k, s in zip(*given):
        at = (prior.words == w) & (prior.topics == k)
        old_cell = values[(words == w) & (topics == k)].sum() / 2
        assert np.isclose(prior.extra[at].sum(), s + old_cell)
    # an update of the update keeps them so: the seeds are not halved, nor counted twice
    again = tmp_path / "again.ldac"
    write_corpus(Corpus(night.counts, list(night.vocab), [f"m{i}" for i in range(night.n_docs)], "again", "ldac"),
                 str(again), str(tmp_path / "again.vocab"), format="ldac")
    newer = ldacli.train(str(again), iterations=20, seed=3, update=str(out), half_life=1)
    assert np.allclose(updating.seeds(newer)[2], given[2]) and newer.params["seeded"] == parent.params["seeded"]
    assert np.isclose(updating.evidence(newer)[2].sum(), updating.evidence(new)[2].sum() / 2 + tokens)


def test_a_seeded_update_gives_the_same_bytes_on_resume(themes, tmp_path):
    seeded = tmp_path / "seeded.npz"
    ldacli.train(themes["old"], 5, iterations=30, seed=1, seed_words={"first": ["w00000", "w00001"]}).save(str(seeded))
    whole = tmp_path / "whole.npz"
    args = ("train", themes["night"], "--update", seeded, "--seed", 5, "-q")
    assert run(*args, "--iterations", 12, "-o", whole).exit_code == 0
    ckpt = tmp_path / "u.ckpt.npz"
    assert run(*args, "--iterations", 5, "--checkpoint", ckpt, "-o", tmp_path / "part.npz").exit_code == 0
    resumed = tmp_path / "resumed.npz"
    r = run("train", themes["night"], "--resume", ckpt, "--iterations", 12, "-q", "-o", resumed)
    assert r.exit_code == 0, r.output
    assert resumed.read_bytes() == whole.read_bytes()
    assert ldacli.load_model(str(resumed)).params["topic_word_prior"] == ldacli.load_model(str(seeded)).params[
        "topic_word_prior"]


def test_no_seeded_topic_is_freed_or_merged_into(themes):
    model = ldacli.load_model(themes["model"])
    cells = updating.evidence(model)
    K, V = model.n_topics, len(model.vocab)
    pair = updating.cheapest_merges(*cells, K, V, 1)[0]
    for fixed in ([pair[0]], [pair[1]], list(pair)):
        pairs = updating.cheapest_merges(*cells, K, V, 2, fixed)
        assert pairs and not set(fixed) & {k for p in pairs for k in p}
    assert updating.cheapest_merges(*cells, K, V, 2, range(K - 1)) == []


def test_an_aligned_seeded_model_s_update_keeps_each_seeded_topic_where_its_model_has_it(themes, tmp_path):
    # --align-to renumbers the topics; the seeded topics' record keeps the run's ids and the
    # model maps them; the update (whose ids are its model's) records them mapped
    old = ldacli.load_model(themes["model"])
    # a theme whose topic in the reference (the model aligned to) is not topic 0, where it is seeded
    nearest = [int(np.argmax(old.phi[:, themes["planted"][k] > 0].sum(axis=1))) for k in range(4)]
    theme = next(k for k in range(4) if nearest[k] != 0)
    seed_words = {"fifth": [old.vocab[w] for w in np.flatnonzero(themes["planted"][theme])[:5]]}
    aligned = tmp_path / "aligned.npz"
    ldacli.train(themes["old"], 5, iterations=100, seed=4, seed_words=seed_words, align_to=themes["model"]).save(
        str(aligned))
    parent = ldacli.load_model(str(aligned))
    where = [(t["topic"], t["name"]) for t in seed_ranks(parent)]
    assert where == [(nearest[theme], "fifth")]  # (moved by the alignment)
    new = ldacli.train(themes["night"], iterations=20, seed=2, update=str(aligned))
    assert [(t["topic"], t["name"]) for t in seed_ranks(new)] == where
    assert new.topic_names == parent.topic_names and set(updating.seeds(new)[1].tolist()) == {where[0][0]}


def test_an_update_samples_densely_where_its_model_s_evidence_covers_most_topics(tmp_path):
    # 12 topics, where auto's rule for a whole run gives the sparse sampler: over 30 words, each
    # topic spread over all of them, the old evidence of the night's words is in nearly every
    # topic (the sparse sampler would walk lists K long); over 3,000 words in a few
    picked = {}
    for V, beta in ((30, 1.0), (3000, 0.01)):
        c = generate(220, 12, V, doc_length=40, alpha=0.3, beta=beta, seed=3).corpus
        old = Corpus(c.counts[:200], list(c.vocab), [f"d{i}" for i in range(200)], "old", "ldac")
        night = Corpus(c.counts[200:], list(c.vocab), [f"n{i}" for i in range(20)], "night", "ldac")
        path = str(tmp_path / f"old{V}.npz")
        model = ldacli.train(old, 12, iterations=30, seed=1)
        model.save(path)
        assert model.params["sampler"] == "sparse"
        share = updating.prior_share(updating.prior(model, 1.0), updating.night_over(night, model))
        picked[V] = (share, ldacli.train(night, iterations=5, seed=1, update=path).params["sampler"])
        # a sampler given is the one used
        assert ldacli.train(night, iterations=5, seed=1, update=path, sampler="alias").params["sampler"] == "alias"
    assert picked[30][0] > updating.DENSE_PRIOR_SHARE > picked[3000][0]
    assert picked[30][1] == "dense" and picked[3000][1] == "sparse"



def test_the_topics_overlaps_are_those_of_their_dense_distributions():
    rng = np.random.default_rng(4)
    E = rng.integers(0, 3, (7, 20)) * rng.integers(0, 50, (7, 20)).astype(float)
    E[5] = 0  # a topic without evidence
    topics, words = np.nonzero(E)
    with np.errstate(invalid="ignore"):
        p = np.nan_to_num(E / E.sum(axis=1, keepdims=True))
    cells = words.astype(np.int32), topics.astype(np.int32), E[topics, words]
    for given in (cells, updating.by_word(*cells, 7, 20)):  # by topic, then by word as the update gives them
        assert np.allclose(updating.overlaps(*given, 7, 20), np.triu(np.sqrt(p) @ np.sqrt(p).T, 1), rtol=0, atol=1e-12)


def test_a_model_rewritten_while_it_is_updated_is_refused_and_nothing_is_written(files, tmp_path):
    # the update reads its model's documents again at the end, from the file it recorded: another
    # run that writes the model meanwhile must not have its documents joined to this night's topics
    parent = tmp_path / "old.npz"
    parent.write_bytes(open(files["old_model"], "rb").read())
    other = ldacli.train(files["old"], 4, iterations=10, seed=9)

    def another_run_writes_it(iteration):
        if iteration == 3:
            other.save(str(parent))

    out = tmp_path / "next.npz"
    with pytest.raises(LdacliError, match="the model changed while it was updated"):
        ldacli.train(files["night"], iterations=5, seed=2, update=str(parent), callback=another_run_writes_it,
                     output=str(out))
    assert not out.exists()
    # unchanged, the same update runs
    parent.write_bytes(open(files["old_model"], "rb").read())
    assert ldacli.train(files["night"], iterations=5, seed=2, update=str(parent), output=str(out)).n_docs == 330


def test_a_birth_and_a_merge_are_judged_by_what_they_change_in_the_collapsed_joint_likelihood():
    # what merging topic 3 into topic 1 changes in log p(w, z) (phi and theta integrated out),
    # computed the slow way, a Dirichlet-multinomial density per topic's words and per
    # document's topics, is merged_words (the evidence's cells) plus merged_documents
    from scipy.special import gammaln

    rng = np.random.default_rng(4)
    V, K, D, beta = 12, 5, 9, 0.3
    alpha = rng.uniform(0.05, 0.5, K)
    docs = [rng.integers(0, V, rng.integers(5, 30)) for _ in range(D)]
    zs = [rng.integers(0, K, d.size) for d in docs]

    def counts(zs):
        nkw, ndk = np.zeros((K, V)), np.zeros((D, K))
        for d, (w, z) in enumerate(zip(docs, zs)):
            np.add.at(nkw, (z, w), 1)
            np.add.at(ndk[d], z, 1)
        return nkw, ndk

    def joint(zs):
        nkw, ndk = counts(zs)
        words = sum(gammaln(V * beta) - gammaln(n.sum() + V * beta) + np.sum(gammaln(n + beta) - gammaln(beta))
                    for n in nkw)
        return words + sum(gammaln(alpha.sum()) - gammaln(n.sum() + alpha.sum()) + np.sum(gammaln(n + alpha) -
                                                                                       gammaln(alpha)) for n in ndk)

    freed, into = 3, 1
    nkw, ndk = counts(zs)
    topics, words = np.nonzero(nkw)
    got = (updating.merged_words(words, topics, nkw[topics, words], into, freed, V, beta)
           + updating.merged_documents(ndk[:, into], ndk[:, freed], alpha[into], alpha[freed]))
    assert got == pytest.approx(joint([np.where(z == freed, into, z) for z in zs]) - joint(zs), abs=1e-9)


def test_a_merge_that_gains_by_itself_keeps_no_topic_that_explains_its_tokens_worse(world, tmp_path):
    # 8 topics for 4 themes: merging two halves of one gains more on the documents than it loses on
    # the words (a loss < 0); a night of the old themes gives the freed topic tokens that an old
    # topic explains better (a gain < 0): that is no birth, whatever the merge gains
    path = tmp_path / "k8.npz"
    ldacli.train(world["old"], 8, iterations=100, seed=1).save(str(path))
    new = ldacli.train(world["night"], iterations=30, seed=2, update=str(path))
    (freed,) = new.params["update"]["freed"]
    assert freed["loss"] < 0 and freed["gain"] < 0 and not freed["kept"]
    assert new.params["warm_start"]["descent"] == list(range(8))


@pytest.mark.parametrize("ids, base", [
    ([str(i) for i in range(1000)], 0), ([str(i) for i in range(1, 1001)], 1), ([], 0), (["0"], 0), (["1"], 1),
    (["0", "01", "2"], None), (["0", "1", "+2"], None), (["0", "1", " 2"], None), (["0", "1", "2x"], None),
    ([str(i) for i in range(12)][:-1] + ["1l"], None), (["0", "1", "٢"], None), (["1", "2", "4"], None),
    (["a", "b"], None), ([str(i) for i in range(9)] + ["90"], None)])
def test_ids_are_positional_only_when_each_is_its_position_in_plain_decimal(ids, base):
    assert updating.positional(ids) == base
    assert updating.positional(np.asarray(ids, dtype=np.str_)) == base
