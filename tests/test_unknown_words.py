"""Unknown means unknown: ``infer`` and ``perplexity`` read text as the model read its training
corpus (its tokenizer, its vocabulary rules) and count the tokens of words the model has never
seen (``unknown_tokens``) apart from those of words its rules removed (``removed_tokens``): on
the training file itself, no unknown token."""

import json

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.model import Model
from ldacli.corpora.vocab_rules import VocabRules

DOCS = [
    "The apple and the banana. keith@cco.caltech.edu wrote: apples are red",
    "A banana is yellow, and the cherry is red; rare1 once",
    "Cherry apple banana: the fruit of the year 1993",
    "apple banana cherry red yellow fruit rare2",
]


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture()
def trained(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text("\n".join(DOCS) + "\n")
    out = tmp_path / "m.npz"
    result = run("train", path, "-k", 2, "--iterations", 10, "--seed", 1, "--min-df", 2, "-o", out)
    assert result.exit_code == 0, result.output
    return path, out, ldacli.load_model(str(out))


def train_tokens(path, model):
    """Every token of the training file (its own tokenizer), and those of its vocabulary."""
    tokens = [t for line in open(path, encoding="utf-8") for t in model.tokenizer(line)]
    return len(tokens), sum(t in model.vocab for t in tokens)


def test_the_model_keeps_what_its_rules_removed(trained):
    _, _, model = trained
    english = VocabRules("english").words
    assert english <= set(model.removed_words)  # the whole list, found in the corpus or not
    assert {"apples", "rare1", "rare2", "year", "wrote"} <= set(model.removed_words)  # min_df=2
    assert not set(model.vocab) & set(model.removed_words)
    assert model.params["stop_list_size"] == len(english)


@pytest.mark.parametrize("command", ["infer", "perplexity"])
def test_on_its_own_training_file_no_token_is_unknown(trained, tmp_path, command):
    path, out, model = trained
    n_tokens, n_known = train_tokens(path, model)
    if command == "infer":
        result = run("infer", out, path, "-o", tmp_path / "t.npz", "--seed", 1)
        counts = ldacli.Inference.load(str(tmp_path / "t.npz")).params
    else:
        result = run("perplexity", out, path, "--format", "json", "--seed", 1)
        counts = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert counts["unknown_tokens"] == 0
    assert counts["removed_tokens"] == counts["dropped_tokens"] == n_tokens - n_known > 0
    note = f"left out: 0 tokens of words the model has never seen (unknown), {n_tokens - n_known} tokens of words"
    assert result.stderr.count(note) == 1 and result.stderr.count("left out") == 1  # said once


def test_unseen_words_are_unknown_and_stop_words_are_removed_even_unseen_in_training(trained, tmp_path):
    _, out, model = trained
    new = tmp_path / "new.txt"
    # zebra: never seen; whereupon: an English stop word that no training document holds;
    # rare1: removed by min_df; the: a stop word; an address: not a word at all
    new.write_text("zebra zebra whereupon rare1 the apple banana fruit jim@x.org\n")
    result = run("perplexity", out, new, "--format", "json", "--seed", 1, "--estimator", "importance")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["unknown_tokens"], data["removed_tokens"], data["n_tokens"]) == (2, 3, 3)  # all tokens scored
    assert any("left out: 2 tokens of words the model has never seen (unknown), 3 tokens" in n for n in data["notes"])
    text = run("perplexity", out, new, "--seed", 1)
    assert "unknown tokens:  2 (of words the model has never seen" in text.stdout
    assert "removed tokens:  3 (of words its vocabulary rules remove" in text.stdout
    # the Python API: the model's reading, then infer and perplexity
    corpus = ldacli.read_corpus(str(new), **model.reading())
    assert (corpus.dropped_tokens, corpus.removed_tokens, corpus.n_tokens) == (2, 3, 3)
    result, unknown = ldacli.infer(model, corpus, seed=1, iterations=20, burn_in=10)
    assert unknown == 2 and result.params["unknown_tokens"] == 2 and result.params["removed_tokens"] == 3
    scored = ldacli.perplexity(model, corpus, seed=1, estimator="importance", samples=50)
    assert (scored["unknown_tokens"], scored["removed_tokens"], scored["dropped_tokens"]) == (2, 3, 5)
    # a corpus read without the model: align tells the removed words from the unknown ones
    plain = ldacli.read_corpus(str(new), stop_words="none")
    result, unknown = ldacli.infer(model, plain, seed=1, iterations=20, burn_in=10)
    assert unknown == 2 and result.params["removed_tokens"] == 3
    texts = ldacli.Corpus.from_texts(new.read_text().splitlines(), vocab=model.vocab, tokenizer=model.tokenizer,
                                     removed_words=model.removed_words)
    assert (texts.dropped_tokens, texts.removed_tokens) == (2, 3)


def test_a_bag_of_words_model_keeps_its_rules_too(tmp_path):
    (tmp_path / "c.ldac").write_text("3 0:2 1:1 2:2\n2 3:2 2:1\n2 0:1 3:1\n")
    (tmp_path / "c.vocab").write_text("header\nalpha\nbeta\ngamma\n")
    (tmp_path / "stop.txt").write_text("header\nfooter\n")
    out = tmp_path / "m.npz"
    result = run("train", tmp_path / "c.ldac", "--stop-words", tmp_path / "stop.txt", "-k", 2, "--iterations", 5,
                 "--seed", 1, "-o", out)
    assert result.exit_code == 0, result.output
    model = ldacli.load_model(str(out))
    assert model.removed_words == ["footer", "header"] and model.vocab == ["alpha", "beta", "gamma"]
    (tmp_path / "new.vocab").write_text("header\nalpha\nnovel\nfooter\n")
    (tmp_path / "new.ldac").write_text("4 0:3 1:1 2:2 3:1\n")
    data = json.loads(run("perplexity", out, tmp_path / "new.ldac", "--format", "json", "--seed", 1,
                          "--estimator", "importance").stdout)
    assert (data["unknown_tokens"], data["removed_tokens"]) == (2, 4)


def test_a_model_without_the_record_of_its_rules_calls_every_outside_word_unknown(trained, tmp_path):
    """A model written before models kept ``removed_words`` (ldacli 0.2) still loads and scores."""
    path, out, model = trained
    old = Model(model.phi, model.theta, model.alpha, model.beta, model.vocab, model.doc_ids, model.loglik_iterations,
                model.loglik_per_token, {k: v for k, v in model.params.items() if k != "stop_list_size"})
    old.save(str(tmp_path / "old.npz"))
    loaded = ldacli.load_model(str(tmp_path / "old.npz"))
    assert loaded.removed_words == []
    n_tokens, n_known = train_tokens(path, model)
    data = json.loads(run("perplexity", tmp_path / "old.npz", path, "--format", "json", "--seed", 1).stdout)
    assert (data["unknown_tokens"], data["removed_tokens"]) == (n_tokens - n_known, 0)


def test_a_damaged_record_of_removed_words_is_named(trained, tmp_path):
    import numpy as np

    from ldacli.files.npz import read_npz, write_npz

    _, out, _ = trained
    arrays = dict(read_npz(str(out)))
    arrays["removed_words"] = np.frombuffer(b'{"not": "a list"}', dtype=np.uint8)
    write_npz(str(tmp_path / "bad.npz"), arrays)
    with pytest.raises(ldacli.InputError, match="expected a JSON list of words .strings. in 'removed_words'"):
        ldacli.load_model(str(tmp_path / "bad.npz"))


def test_a_model_whose_recorded_tokenizer_is_not_valid_is_refused_when_loaded(trained, tmp_path):
    _, _, model = trained
    model.params["token_pattern"] = "(a)(b)"
    model.save(str(tmp_path / "bad.npz"))
    with pytest.raises(ldacli.InputError, match="bad.npz: expected the tokenizer settings a model records in params, "
                                                "found token_pattern must have at most one capturing group"):
        ldacli.load_model(str(tmp_path / "bad.npz"))


# Text whose words convert's settings keep apart from the defaults: capitals (--no-lowercase), a word
# joined by a hyphen to a number (the pattern keeps letters only), and English stop words.
CONVERTED = [
    "The Apple and the Banana grow in the orchard; apple-2 pie",
    "A Banana is yellow and the Cherry is red, the Apple too",
    "Cherry Apple Banana: the fruit of the orchard, ripe-3 red",
    "Apple Banana Cherry red yellow fruit orchard ripe",
]


def test_a_model_of_converts_output_reads_text_as_convert_did(tmp_path):
    """Issue 49: a model trained on convert's .ldac knew neither the token pattern nor the stop
    list convert used, so that infer on the raw text called most of its tokens never seen."""
    text = tmp_path / "docs.txt"
    text.write_text("\n".join(CONVERTED) + "\n")
    r = run("convert", text, "--no-lowercase", "--token-pattern", "[A-Za-z]+", "--min-df", 2, "-o",
            tmp_path / "docs.ldac")
    side = tmp_path / "docs.tokenizer.json"
    assert r.exit_code == 0 and side.exists(), r.output
    assert f"how the text was tokenized in {side}" in r.stderr
    out = tmp_path / "m.npz"
    r = run("train", tmp_path / "docs.ldac", "-k", 2, "--iterations", 10, "--seed", 1, "-o", out)
    assert r.exit_code == 0, r.output
    assert f"tokenizer read from {side} (found beside the corpus)" in r.stderr
    model = ldacli.load_model(str(out))
    assert model.tokenizer == ldacli.corpora.tokenizer.Tokenizer(lowercase=False, token_pattern="[A-Za-z]+")
    assert model.params["tokenizer_file"]["source"] == str(text) and "The" in model.removed_words
    direct = tmp_path / "direct.npz"  # the same text trained on directly: the same reading of new text
    assert run("train", text, "--no-lowercase", "--token-pattern", "[A-Za-z]+", "--min-df", 2, "-k", 2,
               "--iterations", 10, "--seed", 1, "-o", direct).exit_code == 0
    for m in (out, direct):
        data = json.loads(run("perplexity", m, text, "--format", "json", "--seed", 1).stdout)
        assert data["unknown_tokens"] == 0 and data["removed_tokens"] > 0, data
    r = run("infer", out, text, "-o", tmp_path / "theta.tsv", "--seed", 1)
    assert r.exit_code == 0 and "left out: 0 tokens of words the model has never seen" in r.stderr, r.stderr
    assert ldacli.load_model(str(direct)).removed_words == model.removed_words


def test_converting_a_converted_corpus_keeps_how_its_text_was_read(tmp_path):
    text = tmp_path / "docs.txt"
    text.write_text("\n".join(CONVERTED) + "\n")
    assert run("convert", text, "--token-pattern", "[a-z]+", "-o", tmp_path / "docs.ldac").exit_code == 0
    r = run("convert", tmp_path / "docs.ldac", "--to", "uci", "--min-df", 2, "-o", tmp_path / "docword.docs.txt")
    assert r.exit_code == 0, r.output
    corpus = ldacli.read_corpus(str(tmp_path / "docword.docs.txt"))
    recorded = corpus.reading["tokenizer_file"]
    assert recorded["path"] == str(tmp_path / "docword.docs.tokenizer.json")
    assert recorded["token_pattern"] == "[a-z]+" and recorded["source"] == str(text)
    assert {"the", "pie"} <= set(corpus.removed_words)  # the first convert's stop words, the second's min_df
    # without a tokenizer file, a bag-of-words corpus is what it was
    (tmp_path / "docword.docs.tokenizer.json").unlink()
    assert "tokenizer_file" not in ldacli.read_corpus(str(tmp_path / "docword.docs.txt")).reading


def test_a_shard_folder_converted_from_text_keeps_how_its_text_was_read(tmp_path):
    text = tmp_path / "docs.txt"
    text.write_text("\n".join(CONVERTED) + "\n")
    folder = tmp_path / "shards"
    r = run("convert", text, "--token-pattern", "[a-z]+", "--shards", 2, "-o", folder)
    assert r.exit_code == 0 and f"how the text was tokenized in {folder / 'tokenizer.json'}" in r.stderr, r.output
    assert ldacli.open_shard_folder(str(folder)).reading["tokenizer_file"]["token_pattern"] == "[a-z]+"
    out = tmp_path / "m.npz"
    r = run("train", folder, "-k", 2, "--iterations", 10, "--seed", 1, "-o", out)
    assert r.exit_code == 0 and "tokenizer read from" in r.stderr, r.output
    assert ldacli.load_model(str(out)).tokenizer.token_pattern == "[a-z]+"
    data = json.loads(run("perplexity", out, text, "--format", "json", "--seed", 1).stdout)
    assert data["unknown_tokens"] == 0 and data["removed_tokens"] > 0, data
    # a run on the folder's index (from disk, on a cluster) records the same as a run on it read whole
    whole = ldacli.load_model(str(out))
    indexed = ldacli.train(ldacli.open_shard_folder(str(folder)), 2, iterations=10, seed=1)
    assert indexed.params["tokenizer_file"] == whole.params["tokenizer_file"]
    assert indexed.removed_words == whole.removed_words and "the" in whole.removed_words
