"""Limits a cron job can hit: memory that cannot fit, priors beyond double precision, words that
never occur, estimators that would run for hours. Each is refused or announced up front."""

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.scoring.perplexity import resample_cost_warning


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.slow   # runs training under an address-space limit
def test_training_that_cannot_fit_in_memory_is_refused_before_allocating(small_ldac, tmp_path):
    r = run("train", small_ldac, "-k", 10**9, "--iterations", 1, "-o", tmp_path / "m.npz")
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert "training cgs with 1000000000 topics on 50 words" in r.stderr and "of memory, and" in r.stderr
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.slow
def test_a_model_written_as_it_is_assembled_is_not_counted_whole(tmp_path, monkeypatch):
    # `train -o` writes the model's counts a part at a time (never phi or theta), so a machine
    # with room for the sampler but not for a whole (K, V) phi trains it; a run that returns the
    # whole model (the Python API without output) is refused there, and so is reading the model
    # (whose phi is made whole when it is read), until there is room for it
    import ldacli.memory
    from ldacli.corpora.synthetic import generate

    corpus, _ = generate(2000, 50, 20000, doc_length=(80, 120), seed=1).corpus.without_unused_words()
    ldacli.write_corpus(corpus, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab"))
    K = 2000
    whole = 8.0 * K * (corpus.n_words + corpus.n_docs)
    monkeypatch.setattr(ldacli.memory, "available_bytes", lambda: int(0.75 * whole))
    r = run("train", tmp_path / "c.ldac", "-k", K, "--iterations", 2, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    with pytest.raises(ldacli.LdacliError, match="of memory, and"):
        ldacli.train(corpus, K, iterations=2)
    with pytest.raises(ldacli.LdacliError, match=f"{tmp_path / 'm.npz'}: the topics of a model of 2000 topics"):
        ldacli.Model.load(str(tmp_path / "m.npz"))
    monkeypatch.undo()
    assert ldacli.Model.load(str(tmp_path / "m.npz")).phi.shape == (K, corpus.n_words)


def test_a_uci_header_declaring_billions_of_documents_is_refused_before_allocating(tmp_path):
    (tmp_path / "docword.x.txt").write_text("2000000000\n2\n1\n1 1 3\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\n")
    r = run("convert", tmp_path / "docword.x.txt", "-o", tmp_path / "x.ldac")
    assert r.exit_code == 1 and "the 2000000000 documents its header declares (line 1) needs about" in r.stderr


@pytest.mark.parametrize("option", ["--alpha", "--beta"])
def test_priors_beyond_what_double_precision_handles_are_refused(small_ldac, tmp_path, option):
    r = run("train", small_ldac, "-k", 3, option, "1e300", "-o", tmp_path / "m.npz")
    assert r.exit_code == 2 and "at most 1e+06, found 1e+300" in r.stderr


def test_words_that_never_occur_take_no_row_in_the_model(tmp_path):
    (tmp_path / "docword.x.txt").write_text("2\n200000\n3\n1 5 2\n1 70000 1\n2 199999 3\n")
    (tmp_path / "vocab.x.txt").write_text("".join(f"w{i}\n" for i in range(200000)))
    r = run("train", tmp_path / "docword.x.txt", "-k", 20, "--iterations", 5, "--seed", 1, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    assert "199,997 words of the vocabulary never occur" in r.stderr
    m = ldacli.load_model(str(tmp_path / "m.npz"))
    assert m.vocab == ["w4", "w69999", "w199998"] and m.phi.shape == (20, 3)
    r = run("topics", tmp_path / "m.npz", "--coherence", "npmi")  # the training corpus is found again
    assert r.exit_code == 0, r.stderr


def test_a_quadratic_estimator_on_long_documents_warns_with_its_cost():
    assert resample_cost_warning(np.array([100, 50]), 10, 20) is None
    text = resample_cost_warning(np.array([1_000_000, 10]), 10, 50)
    assert text.startswith("left-to-right with --resample is quadratic in document length: about 2.5e+14")
    assert "hours on one core" in text and "longest document has 1000000 tokens" in text


def test_the_format_picked_by_content_is_said_and_quiet_hides_it(small_ldac, tmp_path):
    r = run("convert", small_ldac, "-o", tmp_path / "x.ldac", "--vocab-out", tmp_path / "x.vocab")
    assert r.exit_code == 0 and "read as LDA-C (detected from the content; --input-format uci|ldac|text|mtx|npz forces one)" in r.stderr
    r = run("convert", small_ldac, "-q", "-o", tmp_path / "y.ldac", "--vocab-out", tmp_path / "y.vocab")
    assert r.exit_code == 0 and r.stderr == ""


# --- memory a token costs (issue 45) ------------------------------------------------------------------

MEASURED = """
import json, sys
import ldacli
from ldacli.methods.driver import memory_needed

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

path, K, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
base = status("VmRSS")
reset_peak()
corpus, _ = ldacli.read_corpus(path).without_unused_words()
read_peak, held = status("VmHWM"), status("VmRSS") - base
need = memory_needed(corpus, K, iterations=2, seed=1, threads=1)
reset_peak()
ldacli.train(corpus, K, iterations=2, seed=1, threads=1, output=out)
print(json.dumps({"base": base, "read_peak": read_peak, "held": held, "need": need, "train_peak": status("VmHWM")}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/clear_refs"), reason="reads Linux's peak RSS")
def test_reading_is_never_the_peak_and_a_run_stays_within_its_estimate(tmp_path):
    # a 3 M-token corpus as scipy.sparse.save_npz writes one: reading it (the file's bytes, the
    # count matrix) costs less than training on it (the sampler, the model written to a file),
    # which costs no more than its memory estimate beyond the corpus read
    import json
    import subprocess
    import sys
    from ldacli.corpora.synthetic import generate

    lengths = np.random.default_rng(1).integers(20, 400, 15_000)
    corpus = generate(lengths.size, 50, 30_000, doc_length=lengths, seed=1).corpus
    ldacli.write_corpus(corpus, str(tmp_path / "c.npz"), str(tmp_path / "c.vocab"), format="npz")
    r = subprocess.run([sys.executable, "-c", MEASURED, str(tmp_path / "c.npz"), "500", str(tmp_path / "m.npz")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["read_peak"] < m["train_peak"], m
    assert m["train_peak"] <= m["base"] + m["held"] + m["need"], m


# --- under a limit the process is given (issue 32, rows 7, 11 and 12) ----------------------------------

LIMITED = """
import resource, sys
from ldacli.cli import main
main.commands  # the commands and the library they import, loaded before the room is measured
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
room = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (size + room, size + room))  # as ulimit -v, SGE's h_vmem
sys.exit(main(sys.argv[2:]))
"""


def run_limited(room, *args, env=None):
    """The command ``args`` in a process whose address space may grow by ``room`` bytes at most."""
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", LIMITED, str(int(room)), *map(str, args)], capture_output=True,
                          text=True, timeout=300, env={**__import__("os").environ, **(env or {})})


def test_the_memory_check_honours_an_address_space_limit(small_ldac, tmp_path):
    # a run that fits in the machine's memory but not under ulimit -v: refused up front, in one line
    import re
    r = run_limited(300 << 20, "train", small_ldac, "-k", 30_000_000, "--iterations", 1, "-q", "-o", tmp_path / "m.npz")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "training cgs with 30000000 topics" in r.stderr
    assert re.search(r"and (0\.[0-3] GiB|\d+ MiB) is available", r.stderr), r.stderr  # the limit's, not the machine's
    assert len(r.stderr.splitlines()) == 1 and not (tmp_path / "m.npz").exists()


def test_a_billion_topics_are_refused_before_anything_of_their_size_is_made(small_ldac, tmp_path):
    # 500 MiB of room: a list of 10^9 topic names (8 GB) was made before the check
    r = run_limited(500 << 20, "train", small_ldac, "-k", 10**9, "--iterations", 1, "-q", "-o", tmp_path / "m.npz")
    assert r.returncode == 1 and r.stderr.startswith("Error: training cgs with 1000000000 topics"), r.stderr


def test_memory_that_runs_out_where_no_estimate_foresaw_is_one_line(small_ldac, tmp_path):
    r = run_limited(500 << 20, "train", small_ldac, "-k", 10**9, "--iterations", 1, "-q", "-o", tmp_path / "m.npz",
                    env={"LDACLI_NO_MEMORY_CHECK": "1"})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("Error: ldacli train: out of memory (") and len(r.stderr.splitlines()) == 1


def test_a_25_byte_header_declaring_30_million_documents_is_counted_as_they_cost(tmp_path):
    (tmp_path / "docword.x.txt").write_text("30000000\n2\n1\n1 1 3\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\n")
    r = run_limited(2 << 30, "convert", tmp_path / "docword.x.txt", "-q", "-o", tmp_path / "x.ldac")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "the 30000000 documents its header declares (line 1) needs about 3.4 GiB" in r.stderr


@pytest.fixture
def three_million_empty(tmp_path):
    """A 25-byte UCI header declaring three million documents (one word in the first), and a model
    of its two words."""
    (tmp_path / "docword.x.txt").write_text("3000000\n2\n1\n1 1 3\n")
    (tmp_path / "vocab.x.txt").write_text("a\nb\n")
    (tmp_path / "small.ldac").write_text("2 0:3 1:1\n1 1:2\n")
    (tmp_path / "small.vocab").write_text("a\nb\n")
    r = run("train", tmp_path / "small.ldac", "-k", 2, "--iterations", 5, "--seed", 1, "-q", "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    return tmp_path / "docword.x.txt", tmp_path / "m.npz"


# more than the stream of three million documents takes, less than they took
ROOM = 400 << 20


# A command in a process of its own: its peak RSS above what it holds once the commands and the
# library are loaded, in bytes, on stdout.
GROWTH = """
import sys
from ldacli.cli import main
main.commands
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))
before = status("VmRSS")
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print(status("VmHWM") - before)
"""


@pytest.mark.slow   # whole processes, or a run long enough to time
def test_documents_a_header_declares_are_counted_at_what_train_makes_of_them(three_million_empty, tmp_path):
    """Empty documents declared in 25 bytes passed the check at 100 bytes a document and then took
    more in train (165 each, issue 49; 105 once the corpus is held once): the check counts at least
    what train takes for them, so that one that cannot fit is refused before they are read."""
    import subprocess
    import sys

    from ldacli.corpora.formats.parsing import BYTES_PER_DOC

    corpus, _ = three_million_empty
    r = subprocess.run([sys.executable, "-c", GROWTH, "train", str(corpus), "-k", "2", "--iterations", "1", "-q",
                        "-o", str(tmp_path / "t.npz")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.splitlines()[-1]) <= 3_000_000 * BYTES_PER_DOC
    r = run_limited(3_000_000 * BYTES_PER_DOC * 0.9, "train", corpus, "-k", 2, "--iterations", 1, "-q", "-o",
                    tmp_path / "u.npz")
    assert r.returncode == 1 and r.stderr.startswith(f"Error: {corpus}: the 3000000 documents its header declares "
                                                     f"(line 1) needs about 0.3 GiB"), r.stderr


@pytest.mark.slow   # whole processes, or a run long enough to time
def test_infer_and_perplexity_hold_a_few_chunks_of_documents_a_header_declares(three_million_empty, tmp_path):
    """They took 280 and 230 bytes for each empty document (chunks were cut by tokens only, so
    empty documents never closed one) and ran out of memory (issue 49); they stream them."""
    corpus, model = three_million_empty
    r = run_limited(ROOM, "infer", model, corpus, "-q", "-o", tmp_path / "theta.tsv")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "theta.tsv") as f:
        assert sum(1 for _ in f) == 3_000_001
    r = run_limited(ROOM, "perplexity", model, corpus, "--format", "json", "-q")
    assert r.returncode == 0 and "2,999,999 empty documents kept" in r.stdout, r.stderr


def test_a_word_longer_than_a_vocabulary_holds_is_refused_with_its_line(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("first document words\nsecond " + "x" * 100_000 + " words\nthird\n")
    r = run("train", text, "-k", 2, "--iterations", 1, "-o", tmp_path / "m.npz")
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert f"{text}:2: expected words of at most 200 characters, found one of 100,000 ('xxxxxxxxxxxxxxxxxxxx'" \
           in r.stderr and not (tmp_path / "m.npz").exists()
    # a vocabulary file too, with its line; over a model's vocabulary such a token is just unknown
    (tmp_path / "c.ldac").write_text("1 0:2\n")
    (tmp_path / "c.vocab").write_text("a\n" + "y" * 5000 + "\n")
    r = run("convert", tmp_path / "c.ldac", "-o", tmp_path / "x.ldac")
    assert r.exit_code == 1 and f"{tmp_path / 'c.vocab'}:2: expected words of at most 200 characters" in r.stderr
    text.write_text("first document words\nsecond words\n")
    assert run("train", text, "-k", 2, "--iterations", 1, "--seed", 1, "-o", tmp_path / "m.npz").exit_code == 0
    (tmp_path / "new.txt").write_text("second " + "x" * 100_000 + "\n")
    r = run("infer", tmp_path / "m.npz", tmp_path / "new.txt", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0 and "1 token of words the model has never seen" in r.stderr, r.stderr


@pytest.mark.slow
def test_a_line_longer_than_any_document_is_refused_before_it_is_held(tmp_path):
    import gzip
    big = tmp_path / "one-line.txt.gz"
    with gzip.open(big, "wb", compresslevel=1) as f:
        f.write(b"a short first line\n")
        for _ in range(40):
            f.write(b"word " * 200_000)  # 40 MB without a line break, 80 KB compressed
    r = run_limited(400 << 20, "train", big, "-k", 2, "--iterations", 1, "-o", tmp_path / "m.npz")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{big}:2: expected lines of at most 16 MiB, found a longer one" in r.stderr
    pairs = tmp_path / "c.ldac"  # an LDA-C document of 3 million pairs
    pairs.write_bytes(b"3000000 " + b" ".join(b"%d:1" % i for i in range(3_000_000)) + b"\n")
    (tmp_path / "c.vocab").write_text("a\n")
    r = run("convert", pairs, "-o", tmp_path / "x.ldac")
    assert r.exit_code == 1 and f"{pairs}:1: expected lines of at most 16 MiB" in r.stderr


def test_a_matrix_market_size_line_of_spaces_is_refused_before_it_is_held(tmp_path):
    """A size line of 1 GiB of spaces took 2 GB before it was refused (issue 49): the header's
    lines are read within the readers' bound, before the rest of the file."""
    import gzip
    mtx = tmp_path / "c.mtx.gz"
    with gzip.open(mtx, "wb", compresslevel=1) as f:
        f.write(b"%%MatrixMarket matrix coordinate integer general\n")
        for _ in range(100):
            f.write(b" " * (1 << 20))  # 100 MiB of spaces, 100 KB compressed
        f.write(b"2 2 1\n1 1 1\n")
    (tmp_path / "c.vocab").write_text("a\nb\n")
    r = run_limited(150 << 20, "convert", mtx, "--vocab", tmp_path / "c.vocab", "-q", "-o", tmp_path / "x.ldac")
    assert r.returncode == 1 and r.stderr == f"Error: {mtx}:2: expected lines of at most 16 MiB, found a longer one " \
                                            f"(a file without line breaks?)\n", r.stderr


@pytest.mark.parametrize("role", ["corpus", "vocab", "stop-words", "model", "textdir-file"])
def test_devices_and_pipes_are_refused_where_a_file_is_read(tmp_path, small_ldac, role):
    import os
    m = tmp_path / "m.npz"
    ldacli.train(ldacli.read_corpus(small_ldac), 2, iterations=1, seed=1).save(str(m))
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)  # nobody writes it: opening it to read would wait for ever
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("some words here\n")
    os.symlink("/dev/zero", folder / "b.txt")
    args = {"corpus": ["train", "/dev/zero", "-k", 2, "-o", tmp_path / "o.npz"],
            "vocab": ["train", small_ldac, "--vocab", "/dev/zero", "-k", 2, "-o", tmp_path / "o.npz"],
            "stop-words": ["train", small_ldac, "--stop-words", fifo, "-k", 2, "-o", tmp_path / "o.npz"],
            "model": ["topics", "/dev/zero"],
            "textdir-file": ["train", folder, "-k", 2, "-o", tmp_path / "o.npz"]}[role]
    r = run_limited(1 << 30, *args)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "expected a file, found a character device (give - to read standard input)" in r.stderr \
        or "expected a file, found a pipe (give - to read standard input)" in r.stderr, r.stderr


def test_a_received_file_naming_a_device_gets_it_refused_not_read(tmp_path, small_ldac):
    import json
    import os

    from ldacli.errors import InputError
    from ldacli.methods.cgs.dask_checkpoints import read_shard_checkpoint
    from ldacli.files.npz import write_npz

    ldacli.train(ldacli.read_corpus(small_ldac), 2, iterations=1, seed=1).save(str(tmp_path / "m.npz"))
    with np.load(tmp_path / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    params = json.loads(str(arrays["params"]))
    params["corpus_source"] = "/dev/zero"  # the training corpus report and topics read again
    arrays["params"] = np.str_(json.dumps(params))
    write_npz(str(tmp_path / "z.npz"), arrays)
    r = run_limited(1 << 30, "report", tmp_path / "z.npz", "-o", tmp_path / "z.html")
    assert r.returncode == 0 and "cannot re-read the training corpus: /dev/zero: expected a file, found a " \
                                  "character device" in r.stderr, r.stderr
    # a shard checkpoint that a checkpoint names, made a link to /dev/zero: hashed for ever before
    os.symlink("/dev/zero", tmp_path / "shard-00000-sweep-000004-0123abcd.npz")
    with pytest.raises(InputError, match="expected a file, found a character device"):
        read_shard_checkpoint(str(tmp_path / "shard-00000-sweep-000004-0123abcd.npz"), "0" * 64, 0, 10, 2, "x")
