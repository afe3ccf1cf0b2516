"""The tokenizer, text in and tokens out: the token pattern, case, length, numbers, and mail and web
addresses, which are not split into words; and its settings as a corpus and a model record them."""

import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.errors import SettingError
from ldacli.corpora.tokenizer import LEGACY, Tokenizer, address_spans

PROSE = "Don't re-use X11, the_end; CAFÉ naïve 3rd Straße! 1993 486 3.14 ab abc 日本語 ЖУК"
MAIL = ("From: keith@cco.caltech.edu (Keith Allan Schneider)\n"
        "In article <1993Apr5.123456.7890@cs.cmu.edu>, uunet!cbnewsl!jim writes:\n"
        "see http://www.x.org/pub/R5/fix-12.html, ftp.uu.net or mailto:xpert@expo.lcs.mit.edu;\n"
        "NNTP-Posting-Host: mahler.cs.unc.edu [128.2.1.1] and www.foo.com/bar. Bye.")


def test_the_default_rule_letters_and_digits_three_or_more_no_numbers():
    assert Tokenizer()(PROSE) == ["don", "use", "x11", "the", "end", "café", "naïve", "3rd", "straße", "abc", "日本語",
                                  "жук"]


def test_numbers_kept_or_dropped_and_words_with_digits_are_words_either_way():
    assert Tokenizer(numbers="keep")(PROSE) == ["don", "use", "x11", "the", "end", "café", "naïve", "3rd", "straße",
                                                "1993", "486", "abc", "日本語", "жук"]
    # a number: a digit and no letter, whatever the pattern lets through
    assert Tokenizer(token_pattern=r"\S+", min_token_length=1)("1,000 3.14 +49 x86 ½ --") == ["x86", "½", "--"]


def test_the_legacy_rule_is_ldaclis_0_2_tokenizer():
    assert Tokenizer(**LEGACY)(PROSE) == ["don", "use", "the", "end", "café", "naïve", "straße", "abc", "日本語", "жук"]
    assert Tokenizer(**LEGACY)("keith@cco.caltech.edu") == ["keith", "cco", "caltech", "edu"]


def test_case_and_length():
    assert Tokenizer(lowercase=False)("The CAT sat") == ["The", "CAT", "sat"]
    assert Tokenizer(min_token_length=1)("a bc def") == ["a", "bc", "def"]
    assert Tokenizer(min_token_length=4)("a bc def ghij") == ["ghij"]


def test_a_token_pattern_of_ones_own_with_a_group_takes_the_group():
    assert Tokenizer(token_pattern=r"[a-z]+(?:'[a-z]+)?")("Don't re-use it") == ["don't", "use"]
    assert Tokenizer(token_pattern=r"#(\w+)", min_token_length=1)("tags #nlp and #lda!") == ["nlp", "lda"]
    assert Tokenizer(token_pattern=r"\S+")("c++ and c# are") == ["c++", "and", "are"]


@pytest.mark.parametrize("pattern, message", [
    ("(a)(b)", "token_pattern must have at most one capturing group (the token), found 2"),
    ("[a-", "token_pattern must be a valid regular expression, found '[a-'"),
    ("a*", "token_pattern must not match the empty string, found 'a*'"),
    ("", "token_pattern must be a non-empty regular expression"),
    # issue 49: patterns whose ways to match a word grow without bound
    ("(?:[a-z]+)+[0-9]", "token_pattern must not backtrack without bound, found '(?:[a-z]+)+[0-9]', which repeats "
                         "a part that itself repeats: a word of a few dozen letters could take hours"),
    ("(a|ab)+c", "token_pattern must not backtrack without bound, found '(a|ab)+c', which repeats an alternation"),
    (r"(?:\w+-?\w+)*!", "token_pattern must not backtrack without bound"),
    (r"\w*\w*\w*!", "token_pattern must not backtrack without bound, found '\\\\w*\\\\w*\\\\w*!', which could "
                     "try 2.7e+05 ways to match at one place of a word of 64 letters"),
    ("a?" * 13 + "a" * 13, "token_pattern must not backtrack without bound"),
    (r"(?=(?:\d+)+x)\w+", "token_pattern must not backtrack without bound"),
])
def test_a_bad_pattern_is_refused_when_the_tokenizer_is_made(pattern, message):
    with pytest.raises(SettingError) as info:
        Tokenizer(token_pattern=pattern)
    assert info.value.name == "token_pattern" and str(info.value).startswith(message)


@pytest.mark.parametrize("pattern", [
    r"[^\W_]+", r"[^\W\d_]+", r"(?u)\b\w\w+\b", r"\w+(?:[-']\w+)*", r"[a-z]+(?:-[a-z]+)*(?:'[a-z]+)?",
    r"(?:\d+[.,])*\d+", r"\$?\d+(?:\.\d+)?%?", r"(?:[A-Z]\.)+", r"\w*\w*!", r"(?:[a-z]+)++[0-9]", r"(?>[a-z]+)+!",
])
def test_patterns_that_backtrack_within_bounds_are_kept(pattern):
    """Repeats whose turns a character only they hold delimits, repeats at the end, and at most
    two repeats over the same letters before something that can fail (issue 49)."""
    assert Tokenizer(token_pattern=pattern).token_pattern == pattern


def test_addresses_are_dropped_by_default_not_split_into_words():
    assert Tokenizer()(MAIL) == ["from", "keith", "allan", "schneider", "article", "writes", "see", "nntp", "posting",
                                 "host", "and", "bye"]


def test_addresses_kept_whole_or_split_as_before():
    kept = Tokenizer(addresses="keep")(MAIL)
    assert kept == ["from", "keith@cco.caltech.edu", "keith", "allan", "schneider", "article",
                    "1993apr5.123456.7890@cs.cmu.edu", "uunet!cbnewsl!jim", "writes", "see",
                    "http://www.x.org/pub/r5/fix-12.html", "ftp.uu.net", "mailto:xpert@expo.lcs.mit.edu", "nntp",
                    "posting", "host", "mahler.cs.unc.edu", "128.2.1.1", "and", "www.foo.com/bar", "bye"]
    split = Tokenizer(addresses="split")(MAIL)
    assert {"cco", "caltech", "edu", "cmu", "uunet", "cbnewsl", "http", "www", "mahler", "unc"} <= set(split)
    assert Tokenizer(addresses="keep", lowercase=False)("Mail Keith@CCO.Caltech.EDU") == ["Mail",
                                                                                       "Keith@CCO.Caltech.EDU"]


@pytest.mark.parametrize("text", [
    "e.g. the U.S.A. and i.e. this", "end.It was", "x11r5.tar.gz and readme.txt", "version 3.1.2 of it",
    "Wow! Great! Yes!", "Note: see below", "ratio 3:1 at 10:30", "pi is 3.14159", "a-b.c_d",
])
def test_prose_punctuation_file_names_and_versions_are_not_addresses(text):
    assert list(address_spans(text.lower())) == []
    assert Tokenizer(addresses="drop")(text) == Tokenizer(addresses="split")(text)


def test_an_address_at_the_edges_and_beside_other_whitespace():
    for text in ("keith@cco.caltech.edu", "\tkeith@cco.caltech.edu\r", "(keith@cco.caltech.edu)",
                 "x\u00a0keith@cco.caltech.edu\u3000y"):
        assert [text[a:b] for a, b in address_spans(text)] == ["keith@cco.caltech.edu"], repr(text)


def test_text_files_are_read_with_the_tokenizer_settings_and_record_them(tmp_path):
    path = tmp_path / "mail.txt"
    path.write_text(MAIL.replace("\n", " ") + "\n" + "the cat and keith@cco.caltech.edu\n")
    corpus = ldacli.read_corpus(str(path), stop_words="none")
    assert not {"cco", "caltech", "edu", "cmu", "uunet", "mahler"} & set(corpus.vocab)
    assert {k: corpus.reading[k] for k in ("lowercase", "addresses", "token_pattern", "min_token_length",
                                           "numbers")} == Tokenizer().settings()
    kept = ldacli.read_corpus(str(path), stop_words="none", addresses="keep")
    assert "keith@cco.caltech.edu" in kept.vocab and kept.reading["addresses"] == "keep"
    # Corpus.from_texts tokenizes as a file's lines are read
    again = ldacli.Corpus.from_texts(path.read_text().splitlines(), stop_words="none", addresses="keep")
    assert again.fingerprint() == kept.fingerprint() and again.reading["addresses"] == "keep"


def test_tokenizer_settings_for_input_that_is_not_text_are_refused(tmp_path):
    (tmp_path / "c.ldac").write_text("2 0:1 1:2\n")
    (tmp_path / "c.vocab").write_text("a\nb\n")
    with pytest.raises(SettingError) as info:
        ldacli.read_corpus(str(tmp_path / "c.ldac"), numbers="keep")
    assert info.value.name == "numbers" and str(info.value) == "numbers applies to text input only, found LDA-C input"
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "c.ldac"), "--no-lowercase", "-o",
                                       str(tmp_path / "o.ldac")])
    assert result.exit_code == 2 and "--lowercase/--no-lowercase applies to text input only" in result.output
    assert not (tmp_path / "o.ldac").exists()
    # a model's tokenizer (not given by the user) is simply not needed by a bag of words
    assert ldacli.read_corpus(str(tmp_path / "c.ldac"), tokenizer=Tokenizer(numbers="keep")).vocab == ["a", "b"]


def test_the_model_keeps_the_tokenizer_and_infer_tokenizes_new_text_with_it(tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("Apple apple x11 keith@cco.caltech.edu 1993\nbanana Banana 486 x11\n" * 3)
    out = tmp_path / "m.npz"
    result = CliRunner().invoke(main, ["train", str(train), "-k", "2", "--iterations", "5", "--seed", "1",
                                       "--no-lowercase", "--addresses", "keep", "--numbers", "keep", "-o", str(out)])
    assert result.exit_code == 0, result.output
    model = ldacli.load_model(str(out))
    assert model.tokenizer == Tokenizer(lowercase=False, addresses="keep", numbers="keep")
    assert model.vocab == ["1993", "486", "Apple", "Banana", "apple", "banana", "keith@cco.caltech.edu", "x11"]
    new = tmp_path / "new.txt"
    new.write_text("APPLE Apple keith@cco.caltech.edu 486\n")
    corpus = ldacli.read_corpus(str(new), **model.reading())
    assert corpus.counts.toarray().tolist() == [[0, 1, 1, 0, 0, 0, 1, 0]] and corpus.dropped_tokens == 1  # APPLE
    # the infer command has no tokenizer options: the model's applies
    result = CliRunner().invoke(main, ["infer", str(out), str(new), "--numbers", "drop", "-o", str(tmp_path / "t.tsv")])
    assert result.exit_code == 2 and "No such option '--numbers'" in result.output


def test_a_model_of_ldacli_0_2_tokenizes_as_0_2_did():
    model = ldacli.Model.__new__(ldacli.Model)
    model.params = {"corpus_format": "text"}
    assert model.tokenizer == Tokenizer(**LEGACY)
    model.params = {"corpus_format": "uci"}
    assert model.tokenizer == Tokenizer()
