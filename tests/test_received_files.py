"""Files received from someone else (issue 32, rows 3, 6 and 10): a checkpoint, a model, a
corpus sent by another person is data. It names no path that ldacli writes, decompresses to no
more than it says and no more than memory holds, and a doctored one is refused in one line."""

import json
import os
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.files.npz import write_npz
from users import as_attacker, need_a_second_user, remove, shared_folder


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_a_received_checkpoint_writes_where_the_command_line_says_not_where_it_says(tmp_path, small_ldac):
    sender = tmp_path / "sender"
    sender.mkdir()
    r = run("train", small_ldac, "-k", 3, "--iterations", 4, "--seed", 1, "--checkpoint", sender / "c.npz",
            "-q", "-o", sender / "m.npz")
    assert r.exit_code == 0 and (sender / "c.npz").exists(), r.stderr
    # what the sender's checkpoint records as its path is a file of ours, which it must not touch
    ours = tmp_path / "ours.npz"
    ckpt = ldacli.Checkpoint.load(str(sender / "c.npz"))
    ckpt.params["checkpoint"] = str(ours)
    ckpt.save(str(tmp_path / "received.npz"))
    ours.write_bytes(b"my own file")
    r = run("train", small_ldac, "--resume", tmp_path / "received.npz", "--iterations", 8, "-o", tmp_path / "m.npz")
    assert r.exit_code == 0, r.stderr
    assert ours.read_bytes() == b"my own file" and str(ours) not in r.stderr
    assert ldacli.Checkpoint.load(str(tmp_path / "received.npz")).iteration == 8  # --resume X writes X
    # and --checkpoint, when given, wins
    ckpt.save(str(tmp_path / "received2.npz"))
    r = run("train", small_ldac, "--resume", tmp_path / "received2.npz", "--iterations", 8, "--checkpoint",
            tmp_path / "mine.npz", "-o", tmp_path / "m2.npz")
    assert r.exit_code == 0, r.stderr
    assert ldacli.Checkpoint.load(str(tmp_path / "mine.npz")).iteration == 8 and ours.read_bytes() == b"my own file"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, planted):
    folder = tmp_path_factory.mktemp("received")
    ldacli.train(planted.corpus, 3, iterations=4, seed=1).save(str(folder / "m.npz"))
    ldacli.train(planted.corpus, 3, iterations=4, seed=1, checkpoint=str(folder / "c.npz"))
    return folder


# The child's own peak (VmHWM): ru_maxrss would count the large test process it was forked from.
PEAK = """
import sys
from ldacli.cli import main
try:
    main(sys.argv[1:])
finally:
    with open("/proc/self/status") as f:
        print(next(line.split()[1] for line in f if line.startswith("VmHWM:")), file=sys.stderr)
"""


def peak_run(*args):
    """The command in a process of its own: (exit code, stderr without the last line, peak RSS in MiB)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", PEAK, *map(str, args)], capture_output=True, text=True, timeout=300)
    *lines, peak = r.stderr.splitlines()
    return r.returncode, "\n".join(lines), int(peak) / 1024


@pytest.mark.slow
def test_a_compressed_member_in_a_model_is_refused_before_it_is_decompressed(model_file, tmp_path):
    # 800 MB of zeros as the topics' sums, deflated to under 1 MB: the zip declares its size truthfully
    bomb = tmp_path / "m.npz"
    with zipfile.ZipFile(model_file / "m.npz") as src, zipfile.ZipFile(bomb, "w") as dst:
        for info in src.infolist():
            if info.filename != "topic_word_sums.npy":
                dst.writestr(info, src.read(info))
        member_info = zipfile.ZipInfo("topic_word_sums.npy")
        member_info.compress_type = zipfile.ZIP_DEFLATED
        with dst.open(member_info, "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, {"descr": "<u8", "fortran_order": False,
                                                          "shape": (100_000_000,)})
            zeros = bytes(8 << 20)
            for _ in range(100):
                member.write(zeros)
    assert bomb.stat().st_size < 4 << 20
    for command in (["info", bomb], ["topics", bomb]):
        code, err, peak = peak_run(*command)
        assert code == 1 and "Traceback" not in err, err
        assert err == f"Error: {bomb}: expected uncompressed arrays, as ldacli writes them, found 'topic_word_sums' " \
                      "compressed (its size is only known once decompressed)"
        assert peak < 300, peak  # MiB: the 800 MB were never made


def test_a_compressed_corpus_is_read_within_what_deflate_and_memory_allow(tmp_path, planted):
    import scipy.sparse as sp
    from ldacli.corpora.formats.write import write_corpus
    write_corpus(planted.corpus, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab"), format="ldac")
    sp.save_npz(tmp_path / "c.npz", planted.corpus.counts, compressed=True)  # as scikit-learn pipelines save
    r = run("convert", tmp_path / "c.npz", "--vocab", tmp_path / "c.vocab", "-o", tmp_path / "back.ldac")
    assert r.exit_code == 0, r.stderr
    # a member whose zip entry declares more than deflate can give: damaged, refused unread
    data = bytearray((tmp_path / "c.npz").read_bytes())
    with zipfile.ZipFile(tmp_path / "c.npz") as zf:
        info = zf.getinfo("data.npy")
    lying = info.compress_size * 2000
    for at in [i for i in range(len(data)) if data.startswith(b"PK\x01\x02", i)]:  # the central directory's
        name_len = int.from_bytes(data[at + 28:at + 30], "little")
        if bytes(data[at + 46:at + 46 + name_len]) == b"data.npy":
            data[at + 24:at + 28] = lying.to_bytes(4, "little")
    (tmp_path / "lying.npz").write_bytes(bytes(data))
    r = run("convert", tmp_path / "lying.npz", "--vocab", tmp_path / "c.vocab", "-o", tmp_path / "x.ldac")
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert f"damaged: array 'data' declares {lying} bytes from {info.compress_size} compressed, more than deflate " \
           f"can give (1032:1)" in r.stderr, r.stderr


# A token pattern whose ways to match a word grow exponentially, doubling with each letter (issue 49).
BACKTRACKING = "(?:[a-z]+)+[0-9]"


def test_a_received_models_token_pattern_that_backtracks_without_bound_is_refused_not_run(model_file, tmp_path):
    import subprocess
    import sys
    with np.load(model_file / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    params = json.loads(str(arrays["params"]))
    params.update(token_pattern=BACKTRACKING, corpus_format="text")  # a model of a text corpus
    arrays["params"] = np.str_(json.dumps(params))
    m = tmp_path / "m.npz"
    write_npz(str(m), arrays)
    text = tmp_path / "new.txt"
    text.write_text("abcdefghijklmnopqrstuvwxyzabcdef!\n")  # 32 letters: minutes (28: 13 s)
    for args in (["infer", m, text, "-o", tmp_path / "theta.tsv"], ["perplexity", m, text]):
        # in a process of its own, so that a run that never ends fails the test and is killed
        r = subprocess.run([sys.executable, "-m", "ldacli", *map(str, args)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 1 and r.stderr.startswith(
            f"Error: {m}: expected the tokenizer settings a model records in params, found token_pattern must not "
            f"backtrack without bound, found '{BACKTRACKING}', which repeats a part that itself repeats"), r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""
    assert not (tmp_path / "theta.tsv").exists()


def test_a_token_pattern_that_backtracks_without_bound_is_refused_at_train_so_no_model_records_one(tmp_path):
    (tmp_path / "c.txt").write_text("apples1 pears2 plums3\npears2 plums3 figs4\n")  # words the pattern finds
    r = run("train", tmp_path / "c.txt", "-k", 2, "--token-pattern", BACKTRACKING, "-o", tmp_path / "m.npz")
    assert r.exit_code == 2 and r.stderr.startswith(f"Error: --token-pattern must not backtrack without bound, found "
                                                    f"'{BACKTRACKING}'"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("key, value", [
    ("n_docs", "x"), ("n_tokens", [1]), ("method", [1]), ("warm_start", 3), ("warm_start", {"path": 3}),
    ("lineage", None), ("lineage", "x"), ("lineage", -1), ("seeded", "x"), ("seeded", {"a": 1}),
    ("seeded", {"topics": [{"topic": "0"}]}), ("iterations_done", 1e308),
    ("aligned_to", "x"), ("aligned_to", {"sha256": "ab", "order": 5}), ("snapshot_sweeps", [-1]),
])
def test_params_of_the_wrong_shape_are_one_line_for_every_command(model_file, tmp_path, small_ldac, key, value):
    with np.load(model_file / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    params = json.loads(str(arrays["params"]))
    params[key] = value
    arrays["params"] = np.str_(json.dumps(params))
    write_npz(str(tmp_path / "m.npz"), arrays)
    m = tmp_path / "m.npz"
    for args in (["info", m], ["topics", m], ["diff", m, m], ["report", m, "-o", tmp_path / "r.html"],
                 ["train", small_ldac, "--warm-start", m, "--iterations", 2, "-o", tmp_path / "w.npz"]):
        r = run(*args)
        assert r.exit_code == 1 and "Traceback" not in r.stderr and r.exception is None or \
            isinstance(r.exception, SystemExit), (args, r.exception)
        assert f"{m}: expected params '{key}' as ldacli records it" in r.stderr, (args, r.stderr)


@pytest.mark.parametrize("key, value, why", [
    ("optimize_burn_in", "x", "expected the settings a model records in 'params', found optimize_burn_in must be an "
                              "integer >= 0, found 'x'"),
    ("snapshot_sweeps", -1, "expected params 'snapshot_sweeps' as ldacli records it, found -1"),
    ("optimize_interval", -3, "expected the settings a model records in 'params', found optimize_interval must be"),
    ("loglik_every", [2], "expected the settings a model records in 'params', found loglik_every must be"),
    ("sampler", "fastest", "expected the settings a model records in 'params', found sampler must be one of"),
    ("max_seconds", "never", "expected the settings a model records in 'params', found max_seconds must be"),
])
def test_a_models_recorded_settings_of_the_wrong_type_are_one_line_for_info(model_file, tmp_path, key, value, why):
    """info read the params it shows unchecked: optimize_burn_in "x" and snapshot_sweeps -1 were
    tracebacks (issue 49). Every declared setting a file records is checked against its
    declaration before use."""
    with np.load(model_file / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    params = json.loads(str(arrays["params"]))
    params[key] = value
    arrays["params"] = np.str_(json.dumps(params))
    m = tmp_path / "m.npz"
    write_npz(str(m), arrays)
    for args in (["info", m], ["info", m, "--format", "json"]):
        r = run(*args)
        assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (args, r.exception)
        assert r.stderr.startswith(f"Error: {m}: {why}") and len(r.stderr.splitlines()) == 1, r.stderr


@pytest.mark.parametrize("key, value", [
    ("checkpoint_every", "x"), ("loglik_every", None), ("max_seconds", "x"), ("seed", "x"), ("seed", -1),
    ("shards", None), ("shards", [1]), ("snapshots", None), ("seed_words", {"a": 1}), ("optimize_interval", "x"),
])
def test_a_checkpoints_settings_of_the_wrong_type_are_one_line(model_file, tmp_path, small_ldac, key, value):
    ckpt = ldacli.Checkpoint.load(str(model_file / "c.npz"))
    ckpt.params[key] = value
    ckpt.save(str(tmp_path / "c.npz"))
    r = run("train", small_ldac, "--resume", tmp_path / "c.npz", "--iterations", 6, "-o", tmp_path / "m.npz")
    assert r.exit_code == 1 and r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert f"{tmp_path / 'c.npz'}: expected the settings a checkpoint records in 'params', found {key}" in r.stderr


def test_json_nested_two_hundred_thousand_deep_is_damage(model_file, tmp_path):
    with np.load(model_file / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    arrays["params"] = np.str_("[" * 200_000 + "]" * 200_000)
    write_npz(str(tmp_path / "m.npz"), arrays)
    r = run("topics", tmp_path / "m.npz")
    assert r.exit_code == 1 and f"{tmp_path / 'm.npz'}: expected JSON in 'params', found values nested too deeply" \
        in r.stderr


@pytest.mark.parametrize("docs, topics, why", [
    ([0, 99], [1, 1], "expected snapshot cells within 3 documents and 4 topics, found others"),
    ([0, 0], [1, 1], "expected each snapshot cell once, found some twice"),
])
def test_a_shard_checkpoints_doctored_snapshot_sums_are_one_line(tmp_path, docs, topics, why):
    """A shard file whose SHA-256 its checkpoint records (someone sent both) still holds what
    it claims: each of its documents' snapshot sums within the shard, once."""
    from ldacli.methods.cgs.dask_checkpoints import read_shard_checkpoint, write_shard_checkpoint
    from ldacli.methods.cgs.snapshots import doc_cell_arrays

    path = str(tmp_path / "shard-00000-sweep-000004-0123abcd.npz")
    sums = {"snapshot_doc_cells": np.array([docs, topics], np.int32), "snapshot_doc_sums": np.array([2.0, 3.0])}
    params = {"shard": 0, "n_tokens": 10, "n_topics": 4, "corpus_fingerprint": "x"}
    digest = write_shard_checkpoint(path, np.zeros(10, np.int32), {}, params, sums)
    with pytest.raises(ldacli.LdacliError) as refused:
        read_shard_checkpoint(path, digest, 0, 10, 4, "x", 3)
    assert str(refused.value) == f"{path}: {why}"
    # as this version writes them: read back as they were
    good = doc_cell_arrays((np.array([1, 9]), np.array([2.0, 3.0])), 4)
    digest = write_shard_checkpoint(path, np.zeros(10, np.int32), {}, params, good)
    _, _, (codes, values) = read_shard_checkpoint(path, digest, 0, 10, 4, "x", 3)
    assert codes.tolist() == [1, 9] and values.tolist() == [2.0, 3.0]


def _counts_of(model_file):
    with np.load(model_file / "m.npz", allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def _falling(a):
    ptr = a["topic_word_ptr"].astype(np.int64)
    ptr[1] = ptr[2] + 1
    return {"topic_word_ptr": ptr}


def _shuffled_row(a, at=0):
    words = a["topic_word_words"].copy()
    words[[at, at + 1]] = words[[at + 1, at]]
    return {"topic_word_words": words}


def _topic_without_tokens(a):
    sums, ptr = a["topic_word_sums"].copy(), a["topic_word_ptr"]
    sums[ptr[2]:ptr[3]] = 0
    return {"topic_word_sums": sums, "beta": np.float64(0.0)}


# A collapsed Gibbs model's counts (3 topics, 50 words, 200 documents) doctored: each refused in
# one line naming the file and the member, before phi or theta is made from them.
@pytest.mark.parametrize("doctor, message", [
    (_falling, "expected 'topic_word_ptr' to rise from 0 to the {C} cells of 'topic_word_words', found 0 to {C}, "
               "falling on the way"),
    (lambda a: {"topic_word_ptr": a["topic_word_ptr"][:-1]}, "expected 'topic_word_ptr' of shape (4,), found shape (3,)"),
    (lambda a: {"doc_topic_ptr": a["doc_topic_ptr"].astype(np.int64) - 1}, "expected 'doc_topic_ptr' >= 0, found -1"),
    (lambda a: {"topic_word_ptr": a["topic_word_ptr"].astype(np.float64)},
     "expected 'topic_word_ptr' as integers, found float64"),
    (lambda a: {"doc_topic_topics": a["doc_topic_topics"] + 1}, "expected ids below 3 in 'doc_topic_topics', found 3"),
    (_shuffled_row, "expected the ids of each row in 'topic_word_words' increasing, each once, found cell 1 out of order"),
    (lambda a: _shuffled_row(a, 2),
     "expected the ids of each row in 'topic_word_words' increasing, each once, found cell 3 out of order"),
    (lambda a: {"topic_word_sums": a["topic_word_sums"].astype(np.int64) - 2}, "expected 'topic_word_sums' >= 0, found -1"),
    (lambda a: {"doc_topic_sums": np.full(a["doc_topic_sums"].size, 2**60, np.uint64)},
     "expected the values of 'doc_topic_sums' to add up to less than 2^52"),
    (lambda a: {"topic_word_sums": np.maximum(a["topic_word_sums"], 255).astype(np.uint8)},
     "expected a value of at least 255 in 'topic_word_sums_large' for each 255 in 'topic_word_sums', found 0 values "
     "(the least 0) for {C}"),
    (lambda a: {"topic_word_sums": np.full(a["topic_word_sums"].size, 255, np.uint8),
                "topic_word_sums_large": np.arange(a["topic_word_sums"].size, dtype=np.uint16)},
     "expected a value of at least 255 in 'topic_word_sums_large' for each 255 in 'topic_word_sums', found {C} "
     "values (the least 0) for {C}"),
    (lambda a: {"snapshots_summed": np.int64(-1)}, "expected 'snapshots_summed' >= 0, found -1"),
    (lambda a: {"snapshots_summed": np.int64(7)},
     "expected each document's sums in 'doc_topic_sums' to be 7 times its length"),
    (lambda a: {"topic_order": np.array([0, 0, 1], np.uint8)}, "expected 'topic_order' to hold each of the 3 topic ids once"),
    (_topic_without_tokens, "expected every topic to hold tokens in 'topic_word_sums' or prior mass, found one with "
                            "neither under beta 0"),
    (lambda a: {"phi": np.full((3, 50), 1 / 50)}, "expected either the counts (topic_word_*, doc_topic_*) or 'phi' "
                                                   "and 'theta', found both (phi)"),
    (lambda a: {"topic_word_sums": None}, "expected an array 'topic_word_sums', found none"),
    (lambda a: {"params": np.str_(json.dumps({**json.loads(str(a["params"])),
                                              "topic_word_prior": {"words": [60], "topics": [0], "extra": [1.0]}}))},
     "params 'topic_word_prior': expected word ids in [0, 50), found 60 to 60"),
    (lambda a: {"params": np.str_(json.dumps({**json.loads(str(a["params"])), "seeded": {
        "topics": [{"topic": 3, "name": "space", "words": ["w1"], "unknown": []}]}}))},
     "expected the seeded topics in params to be topics 0 to 2, found topic 3"),
    # an update's model: the prior it carries in arrays, the seeds' in params (the next update reads both)
    (lambda a: {"prior_words": np.array([1], np.int32), "prior_topics": np.array([0], np.int32),
                "prior_extra": np.array([1.0]),
                "params": np.str_(json.dumps({**json.loads(str(a["params"])),
                                              "topic_word_prior": {"words": [60], "topics": [0], "extra": [1.0]}}))},
     "params 'topic_word_prior': expected word ids in [0, 50), found 60 to 60"),
    # its cells by word then topic, each once, as written: an update maps them from the file again
    (lambda a: {"prior_words": np.array([2, 1], np.int32), "prior_topics": np.array([0, 0], np.int32),
                "prior_extra": np.array([1.0, 1.0])},
     "the prior it carries: expected the cells of prior_words, prior_topics, prior_extra each once, by word then "
     "topic"),
    (lambda a: {"prior_words": np.array([1, 1], np.int32), "prior_topics": np.array([2, 2], np.int32),
                "prior_extra": np.array([1.0, 1.0])},
     "the prior it carries: expected the cells of prior_words, prior_topics, prior_extra each once, by word then "
     "topic"),
])
@pytest.mark.parametrize("part", [None, 2])  # the cells checked SPREAD_CELLS at a time: as they are, then 2
def test_a_models_doctored_counts_are_one_line(model_file, tmp_path, monkeypatch, doctor, message, part):
    if part:
        monkeypatch.setattr(ldacli.topic_counts, "SPREAD_CELLS", part)
    arrays = _counts_of(model_file)
    for name, value in doctor(arrays).items():
        if value is None:
            del arrays[name]
        else:
            arrays[name] = value
    path = str(tmp_path / "m.npz")
    write_npz(path, arrays)
    with pytest.raises(ldacli.errors.InputError) as refused:
        ldacli.load_model(path)
    expected = message.format(C=int(_counts_of(model_file)["topic_word_ptr"][-1]))
    assert str(refused.value).startswith(f"{path}: {expected}"), str(refused.value)
    # topics reads the topics' members only, export doc-topics the documents' too
    documents = "doc_topic" in expected or "snapshots_summed" in expected
    r = run(*(["export", path, "doc-topics"] if documents else ["topics", path]))
    assert r.exit_code == 1 and r.stderr == f"Error: {refused.value}\n" and r.stdout == "", r.stderr


@pytest.mark.slow
def test_a_model_declaring_topics_of_terabytes_is_refused_before_they_are_made(tmp_path):
    # 500,000 topics and 500,000 words in a file of 7 MB (every topic without a token, every
    # word one letter): phi would be 2 TB; refused from what the file declares, nothing made
    K = V = 500_000
    arrays = {"format_version": np.int64(3), "kind": np.str_("model"), "params": np.str_('{"method": "cgs"}'),
              "topic_word_ptr": np.zeros(K + 1, np.uint8), "topic_word_words": np.zeros(0, np.uint8),
              "topic_word_sums": np.zeros(0, np.uint8), "topic_word_sums_large": np.zeros(0, np.uint8),
              "doc_topic_ptr": np.zeros(1, np.uint8), "doc_topic_topics": np.zeros(0, np.uint8),
              "doc_topic_sums": np.zeros(0, np.uint8), "doc_topic_sums_large": np.zeros(0, np.uint8),
              "snapshots_summed": np.int64(0), "alpha": np.full(K, 0.1), "beta": np.float64(0.01),
              "vocab": np.full(V, "w"), "doc_ids": np.zeros(0, "<U1"), "loglik_iterations": np.zeros(0, np.int64),
              "loglik_per_token": np.zeros(0)}
    path = tmp_path / "m.npz"
    write_npz(str(path), arrays)
    assert path.stat().st_size < 8 << 20
    code, err, peak = peak_run("topics", path)
    assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"Error: {path}: the topics of a model of 500000 topics and 500000 words needs about "
                          f"1862.6 GiB of memory"), err
    assert peak < 300, peak  # MiB


@pytest.fixture
def converted(tmp_path):
    """A text converted to LDA-C, with the tokenizer file convert writes beside it: (corpus, file)."""
    text = tmp_path / "docs.txt"
    text.write_text("apple banana cherry\nbanana cherry date\ncherry date apple\n")
    r = run("convert", text, "-o", tmp_path / "docs.ldac")
    assert r.exit_code == 0, r.output
    return tmp_path / "docs.ldac", tmp_path / "docs.tokenizer.json"


def _doctored(side, **changes):
    record = json.loads(side.read_text())
    record.update(changes)
    side.write_text(json.dumps(record))


@pytest.mark.parametrize("doctor, message", [
    (lambda s: _doctored(s, token_pattern=BACKTRACKING),
     f"expected the settings ldacli records, found token_pattern must not backtrack without bound, found "
     f"'{BACKTRACKING}'"),
    (lambda s: _doctored(s, min_token_length="3"), "expected the settings ldacli records, found min_token_length"),
    (lambda s: _doctored(s, lowercase=None), "expected the settings ldacli records, found lowercase must be given"),
    (lambda s: _doctored(s, removed_words=["x" * 201]), "expected removed_words as a list of words of 1 to 200"),
    (lambda s: _doctored(s, stop_words="/etc/shadow"), "expected stop_words as a list of at most 100 names"),
    (lambda s: _doctored(s, kind="ldacli model"), "expected an ldacli tokenizer file (kind 'ldacli tokenizer'), "
                                                   "found \"ldacli model\""),
    (lambda s: _doctored(s, vocab_sha256="0" * 64), "expected the tokenizer file of this corpus's vocabulary"),
    (lambda s: s.write_text("[" * 200_000 + "]" * 200_000), "expected a JSON object (an ldacli tokenizer file), "
                                                            "found values nested too deeply"),
    (lambda s: s.write_bytes(b"\xff{}"), "expected a JSON object (an ldacli tokenizer file), found invalid text"),
    (lambda s: (s.unlink(), os.mkfifo(s)), "expected a file, found a pipe"),
])
def test_a_doctored_tokenizer_file_is_refused_in_one_line(converted, tmp_path, doctor, message):
    """A tokenizer file beside a corpus someone sent is input like the corpus: its token pattern
    is checked before it can run, its words and lists are bounded, it never names a file that is
    opened, and one written for another vocabulary is not taken for this one's."""
    corpus, side = converted
    doctor(side)
    r = run("train", corpus, "-k", 2, "--iterations", 2, "-o", tmp_path / "m.npz")
    assert r.exit_code == 1 and r.stderr.startswith(f"Error: {side}: {message}"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "m.npz").exists()


def test_a_tokenizer_file_larger_than_reading_one_takes_is_refused_unread(converted, tmp_path, monkeypatch):
    from ldacli.corpora.formats import tokenizer_file
    corpus, side = converted
    monkeypatch.setattr(tokenizer_file, "MAX_BYTES", side.stat().st_size - 1)
    r = run("train", corpus, "-k", 2, "--iterations", 2, "-o", tmp_path / "m.npz")
    assert r.exit_code == 1 and r.stderr.startswith(
        f"Error: {side}: expected a tokenizer file of at most {side.stat().st_size - 1:,} bytes, found a larger "
        f"one"), r.stderr


def test_a_received_models_recorded_tokenizer_file_is_checked_as_its_own_tokenizer(model_file, tmp_path):
    with np.load(model_file / "m.npz") as f:
        arrays = {k: f[k] for k in f.files}
    params = json.loads(str(arrays["params"]))
    params["tokenizer_file"] = {"path": "/x/docs.tokenizer.json", "token_pattern": BACKTRACKING}
    arrays["params"] = np.str_(json.dumps(params))
    write_npz(str(tmp_path / "m.npz"), arrays)
    with pytest.raises(ldacli.InputError, match="expected the tokenizer settings a model records in params, found "
                                                "token_pattern must not backtrack without bound"):
        ldacli.load_model(str(tmp_path / "m.npz"))


def test_a_tokenizer_file_another_user_put_beside_a_corpus_is_refused_unless_the_corpus_is_theirs(tmp_path):
    """In a folder others can write, anyone can put a tokenizer file beside a corpus converted
    before there were any, or one whose file was removed: it would decide how a model reads text."""
    need_a_second_user()
    folder = shared_folder()
    try:
        text = os.path.join(folder, "docs.txt")
        with open(text, "w") as f:
            f.write("apple banana cherry\nbanana cherry date\ncherry date apple\n")
        ours = os.path.join(folder, "docs.ldac")
        assert run("convert", text, "-q", "-o", ours).exit_code == 0
        side = os.path.join(folder, "docs.tokenizer.json")
        record = open(side).read()
        os.remove(side)
        write = "import sys\nfor i in range(1, len(sys.argv), 2): open(sys.argv[i], 'w').write(sys.argv[i + 1])"
        assert as_attacker(write, side, record).returncode == 0
        r = run("train", ours, "-k", 2, "--iterations", 2, "-o", tmp_path / "m.npz")
        assert r.exit_code == 1 and r.stderr.startswith(
            f"Error: {side}: expected a tokenizer file of this user's or of the corpus's owner, found one of another "
            f"user (uid {os.stat(side).st_uid})"), r.stderr
        assert not (tmp_path / "m.npz").exists()
        # a colleague's corpus, converted by them: their tokenizer file goes with it
        theirs = os.path.join(folder, "theirs.ldac")
        assert as_attacker(write, theirs, open(ours).read(), os.path.join(folder, "theirs.vocab"),
                           open(os.path.join(folder, "docs.vocab")).read(),
                           os.path.join(folder, "theirs.tokenizer.json"), record).returncode == 0
        r = run("train", theirs, "-k", 2, "--iterations", 2, "-o", tmp_path / "m.npz")
        assert r.exit_code == 0 and "tokenizer read from" in r.stderr, r.stderr
    finally:
        remove(folder)
