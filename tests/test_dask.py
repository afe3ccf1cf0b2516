"""Training, inference and perplexity on a real Dask LocalCluster (worker processes over
loopback): the same bytes as on local threads, a worker killed mid-run, a lost scheduler, and
checkpoints that resume anywhere."""

import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.corpora.synthetic import generate

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install 'ldacli[dask]'")
pytestmark = pytest.mark.dask   # a real LocalCluster of worker processes

SHARDS = 5


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def corpus():
    c, _ = generate(500, 10, 200, doc_length=(40, 120), alpha=0.2, seed=11).corpus.without_unused_words()
    return c


def _local_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c


client = pytest.fixture(scope="module")(_local_cluster)
# A test that kills a worker gets a cluster of its own: the tests after it do not wait on the
# nanny's restart of the worker, which Dask does not promise in any time (once, in CI, not in 120 s).
client_to_break = pytest.fixture(_local_cluster)


@pytest.fixture
def ldacli_log():
    """The records ldacli's logger emits at WARNING and above during the test (whatever an
    earlier test's command line set it to)."""
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("ldacli")
    level = logger.level
    logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


@pytest.fixture
def samplers(monkeypatch):
    """Every DaskSampler made during the test, in order (to read its rebuilds)."""
    from ldacli.methods.cgs.dask_client import DaskSampler

    init, seen = DaskSampler.__init__, []

    def keep(self, *args, **kwargs):
        seen.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(DaskSampler, "__init__", keep)
    return seen


def same_arrays(a, b):
    np.testing.assert_array_equal(a.phi, b.phi)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.loglik_per_token, b.loglik_per_token)


def same(a, b):
    same_arrays(a, b)
    assert a.params == b.params


@pytest.mark.parametrize("sampler", ["sparse", "dense", "alias"])
def test_a_cluster_gives_the_same_bytes_as_local_threads(corpus, client, sampler):
    # the priors learned at sweeps 3 and 6 (the documents' histograms from each worker's shards)
    given = dict(iterations=6, seed=3, shards=SHARDS, sampler=sampler, optimize_interval=3, optimize_burn_in=2,
                 snapshot_interval=1)
    local = ldacli.train(corpus, 25, threads=2, **given)
    remote = ldacli.train(corpus, 25, scheduler=client, **given)
    assert remote.params["snapshot_sweeps"] == [4, 5, 6]  # phi and theta averaged over the last three
    assert not np.allclose(remote.alpha, remote.alpha[0])  # (learned: asymmetric)
    same(local, remote)


@pytest.mark.parametrize("snapshots", [1, 3])
def test_a_model_file_written_on_a_cluster_is_the_file_written_on_threads(corpus, client, tmp_path, snapshots):
    # its counts a part at a time as the file takes them: the word-topic sums from the client,
    # each shard's documents' from its worker (which keeps their snapshot sums when it reads a
    # shard folder), in the same bytes
    given = dict(iterations=6, seed=3, snapshots=snapshots, snapshot_interval=1)
    ldacli.train(corpus, 25, threads=2, shards=SHARDS, output=str(tmp_path / "threads.npz"), **given)
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    remote = ldacli.train(folder, 25, scheduler=client, output=str(tmp_path / "cluster.npz"), **given)
    with np.load(tmp_path / "threads.npz") as a, np.load(tmp_path / "cluster.npz") as b:
        assert a.files == b.files and "phi" not in a.files
        for name in a.files:  # (the params say where the corpus was read from)
            if name != "params":
                assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), name
    np.testing.assert_array_equal(remote.theta, ldacli.load_model(str(tmp_path / "threads.npz")).theta)


@pytest.mark.parametrize("sampler", ["sparse", "dense", "alias"])
def test_a_seeded_topic_word_prior_gives_the_same_bytes_on_a_cluster_as_on_threads(corpus, client, sampler, tmp_path):
    from test_topic_word_prior import cgs

    from ldacli.topic_word_prior import seed_prior

    prior = seed_prior({0: [1, 2, 3], 4: [3, 10]}, 30.0, corpus.n_words, 25)
    given = {"n_topics": 25, "seed": 3, "shards": SHARDS, "sampler": sampler}
    local, remote = cgs(corpus, prior, threads=2, **given), cgs(corpus, prior, client=client, **given)
    for it in range(4):
        local.step(it + 1)
        remote.step(it + 1)
    _, arrays = remote.checkpoint_state(str(tmp_path / "c.npz"), 4)  # the client gathers the topics
    np.testing.assert_array_equal(local.sampler.z, arrays["z"])
    assert local.phi().tobytes() == remote.phi().tobytes() and local.loglik() == remote.loglik()
    local.close()
    remote.close()


def _die_in_round_3(sweep, rounds):
    """Run in a worker (client.run): its ShardHost dies (the process exits) in the third round
    of its ``sweep``-th sweep (``rounds`` a sweep), while the other worker waits for the slice it
    sends."""
    from ldacli.methods.cgs import dask_worker as d

    round_, calls = d.ShardHost.round, []

    async def dying(self, r, *args):
        calls.append(r)
        if len(calls) == (sweep - 1) * rounds + 3:
            os._exit(1)
        return await round_(self, r, *args)

    d.ShardHost.round = dying


@pytest.mark.parametrize("source, when", [("memory", "between sweeps"), ("shard folder", "between sweeps"),
                                          ("memory", "mid-sweep")])
def test_a_worker_killed_mid_run_is_replaced_and_the_result_is_unchanged(corpus, client_to_break, source, when,
                                                                        tmp_path, samplers, ldacli_log):
    client = client_to_break
    snapshots = dict(snapshots=3, snapshot_interval=2)
    local = ldacli.train(corpus, 20, iterations=8, seed=4, shards=SHARDS, threads=1, **snapshots)
    address, victim = sorted(client.run(os.getpid).items())[0]  # the first worker: it holds shards 0, 1 and 2
    written = {}
    if source == "shard folder":  # the workers read the shards' files again, and the topics the workers wrote
        ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
        corpus = ldacli.open_shard_folder(str(tmp_path / "f"))
        written = dict(checkpoint=str(tmp_path / "c.npz"), checkpoint_every=4)
    if when == "mid-sweep":  # in sweep 4: every shard goes back to the start and sweeps 1-4 are sampled again
        client.run(_die_in_round_3, 4, SHARDS, workers=[address])

    def kill(iteration):  # after sweep 6, whose state is one of the averaged snapshots (6 and 8)
        if iteration == 6 and when == "between sweeps":
            os.kill(victim, signal.SIGKILL)

    remote = ldacli.train(corpus, 20, iterations=8, seed=4, shards=SHARDS, scheduler=client, callback=kill,
                          **snapshots, **written)
    [rebuild] = samplers[0].rebuilds
    assert rebuild["dead"] == [address] and rebuild["lost_shards"] == [0, 1, 2]
    at = 6 if when == "between sweeps" else 3
    since = 4 if written else 0  # the checkpoint of sweep 4 (its shard files), or the start
    assert (rebuild["from"], rebuild["at"]) == (since, at)
    same_arrays(local, remote)  # snapshot 6 of the sweeps sampled again is not counted twice
    assert remote.params["snapshot_sweeps"] == [6, 8]
    said = [r.getMessage() for r in ldacli_log if "lost" in r.getMessage()]
    assert len(said) == 1 and f"worker {address} lost" in said[0]
    assert f"from {'the checkpoint of sweep 4' if written else 'the start'}: sweeps {since + 1}-{at + 1} sampled again" \
        in said[0]


def test_the_restricted_start_of_many_topics_is_drawn_alike_by_the_workers(corpus, client, tmp_path):
    # from RESTRICTED_START_FROM topics each word starts on a few topics; a worker draws them
    # for its shards whether the client sent it the tokens or it read them from a shard folder
    from ldacli.methods.cgs.sampler import RESTRICTED_START_FROM as K

    given = dict(iterations=2, seed=3, sampler="sparse")
    local = ldacli.train(corpus, K, shards=SHARDS, threads=2, **given)
    same_arrays(local, ldacli.train(corpus, K, shards=SHARDS, scheduler=client, **given))
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    same_arrays(local, ldacli.train(ldacli.open_shard_folder(str(tmp_path / "f")), K, scheduler=client, **given))


@pytest.mark.parametrize("given", ["ShardFolder", "path"])
def test_workers_read_a_shard_folder_and_the_client_never_does(corpus, client, tmp_path, monkeypatch, given):
    # the folder opened, or its path, as the command line gives it (ldacli.train read a path whole)
    import ldacli.corpora.formats.shards

    local = ldacli.train(corpus, 25, iterations=6, seed=3, shards=SHARDS, threads=2, optimize_interval=3)
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f")) if given == "ShardFolder" else str(tmp_path / "f")

    def tripwire(self, s):
        raise AssertionError(f"the client read shard {s}")

    # in this (the client's) process only: the workers are other processes and read the files
    monkeypatch.setattr(ldacli.corpora.formats.shards.ShardFolder, "shard_counts", tripwire)
    remote = ldacli.train(folder, 25, iterations=6, seed=3, scheduler=client, optimize_interval=3)
    same_arrays(local, remote)
    assert remote.params["shards"] == SHARDS and remote.doc_ids == local.doc_ids and remote.vocab == local.vocab
    assert remote.params["corpus_fingerprint"] == local.params["corpus_fingerprint"]


def test_a_worker_that_cannot_read_its_shard_stops_the_run_naming_the_file(corpus, client, tmp_path):
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    os.unlink(tmp_path / "f" / "shard-00003.npz")
    with pytest.raises(ldacli.LdacliError, match=r"worker tcp://127\.0\.0\.1:\d+: .*shard-00003\.npz: cannot read shard 3"):
        ldacli.train(folder, 5, iterations=2, seed=1, scheduler=client)


def test_a_cluster_run_checkpoints_and_resumes_on_threads(corpus, client, tmp_path):
    local = ldacli.train(corpus, 20, iterations=8, seed=5, shards=SHARDS, threads=2)
    ckpt = str(tmp_path / "c.npz")

    def interrupt(iteration):
        if iteration == 4:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(ldacli.TrainingInterrupted):
        ldacli.train(corpus, 20, iterations=8, seed=5, shards=SHARDS, scheduler=client, checkpoint=ckpt,
                     callback=interrupt)
    same(ldacli.train(corpus, iterations=8, resume=ckpt, threads=1), local)


def test_the_workers_checkpoint_beside_the_shard_folder_and_it_resumes_on_a_cluster_or_locally(corpus, client,
                                                                                                tmp_path):
    import ldacli.methods.cgs.dask_checkpoints as sc

    local = ldacli.train(corpus, 20, iterations=8, seed=5, shards=SHARDS, threads=2)
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    ckpt = str(tmp_path / "c.npz")

    def interrupt(iteration):
        if iteration == 5:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(ldacli.TrainingInterrupted):
        ldacli.train(folder, 20, iterations=8, seed=5, scheduler=client, checkpoint=ckpt, checkpoint_every=2,
                     callback=interrupt)
    arrays = dict(np.load(ckpt, allow_pickle=False))
    assert "z" not in arrays  # the client's file holds no token's topic: the workers wrote them
    where = sc.checkpoint_folder(str(tmp_path / "f"), ckpt)
    assert os.path.dirname(where) == str(tmp_path / "f") + ".checkpoints"
    # the files of sweep 5 only (those of sweeps 2 and 4 removed once the next checkpoint named its own)
    assert sorted(n for n in os.listdir(where) if n.endswith(".npz")) == \
        [n for n in sc.ShardFiles.from_checkpoint(arrays, ckpt, SHARDS, 5).files]
    assert all("-sweep-000005-" in n for n in os.listdir(where) if n.endswith(".npz"))
    # a shard file other than the one the checkpoint names is refused, naming it
    victim = sc.ShardFiles.from_checkpoint(arrays, ckpt, SHARDS, 5).path(SHARDS - 1)
    kept = Path(victim).read_bytes()
    with open(victim, "ab") as f:
        f.write(b"x")
    with pytest.raises(ldacli.LdacliError, match=f"{victim}: expected the shard checkpoint the run's checkpoint names"):
        ldacli.train(ldacli.read_corpus(str(tmp_path / "f")), iterations=8, resume=ckpt, threads=2)
    Path(victim).write_bytes(kept)
    # resumed on threads (the client reads every shard's file; its own checkpoint elsewhere), then
    # on the cluster (each worker reads its shards' files)
    copy = str(tmp_path / "copy.npz")
    shutil.copyfile(ckpt, copy)
    same_arrays(ldacli.train(ldacli.read_corpus(str(tmp_path / "f")), iterations=8, resume=copy, threads=2,
                             checkpoint=str(tmp_path / "local.npz")), local)
    same_arrays(ldacli.train(folder, iterations=8, resume=ckpt, scheduler=client), local)


def test_the_workers_keep_the_documents_snapshot_sums_and_the_client_none(corpus, client, tmp_path, monkeypatch):
    import ldacli.methods.cgs.dask_checkpoints as sc
    from ldacli.methods.cgs.dask_client import DaskSampler

    snapshots = dict(snapshots=3, snapshot_interval=1)  # sweeps 6, 7 and 8 averaged
    local = ldacli.train(corpus, 20, iterations=8, seed=5, shards=SHARDS, threads=2, **snapshots)
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    ckpt = str(tmp_path / "c.npz")

    def tripwire(self):
        raise AssertionError("the client gathered every document's topic counts")

    monkeypatch.setattr(DaskSampler, "doc_topic_cell_parts", tripwire)

    def interrupt(iteration):
        if iteration == 7:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(ldacli.TrainingInterrupted):
        ldacli.train(folder, 20, iterations=8, seed=5, scheduler=client, checkpoint=ckpt, callback=interrupt,
                     **snapshots)
    arrays = dict(np.load(ckpt, allow_pickle=False))
    assert arrays["snapshot_taken"].tolist() == [6, 7] and "snapshot_doc_sums" not in arrays
    files = sc.ShardFiles.from_checkpoint(arrays, ckpt, SHARDS, 7)
    ranges = folder.shard_ranges()
    summed = 0
    for s, r in enumerate(ranges):  # each shard's documents' sums of the two snapshots, in its file
        with np.load(files.path(s)) as f:
            docs, _ = f["snapshot_doc_cells"]
            assert docs.max() < r.d_hi - r.d_lo
            summed += f["snapshot_doc_sums"].sum()
    assert summed == 2 * corpus.n_tokens
    # resumed on the cluster (the workers read their sums), and on threads (the client reads them)
    same_arrays(ldacli.train(folder, iterations=8, resume=ckpt, scheduler=client), local)
    monkeypatch.undo()
    copy = str(tmp_path / "copy.npz")
    shutil.copyfile(ckpt, copy)
    same_arrays(ldacli.train(ldacli.read_corpus(str(tmp_path / "f")), iterations=8, resume=copy, threads=2), local)


def test_a_worker_lost_after_a_checkpoint_of_snapshots_is_rebuilt_with_the_sums_its_files_hold(corpus, client_to_break,
                                                                                               tmp_path, samplers):
    client = client_to_break
    snapshots = dict(snapshots=3, snapshot_interval=1)
    local = ldacli.train(corpus, 20, iterations=8, seed=4, shards=SHARDS, threads=1, **snapshots)
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    address = sorted(client.run(os.getpid))[0]
    client.run(_die_in_round_3, 8, SHARDS, workers=[address])  # after the checkpoint of sweep 7 (snapshots 6, 7)
    remote = ldacli.train(folder, 20, iterations=8, seed=4, scheduler=client, checkpoint=str(tmp_path / "c.npz"),
                          checkpoint_every=7, **snapshots)
    [rebuild] = samplers[0].rebuilds
    assert (rebuild["from"], rebuild["at"]) == (7, 7)
    same_arrays(local, remote)  # sweeps 6 and 7 from the files, 8 sampled again and counted once
    assert remote.params["snapshot_sweeps"] == [6, 7, 8]


def test_a_time_limited_run_on_a_shard_folder_starts_the_workers_sums_again_as_threads_start_theirs(corpus, client,
                                                                                                     tmp_path):
    """--max-seconds takes the snapshots where the pace says the run ends; when the projected
    end moves past the sums taken, they start again, the workers' as the client's."""
    from ldacli import random_streams, settings
    from ldacli.methods.cgs.method import CollapsedGibbs
    from ldacli.methods.driver import settings_of

    def state(data, **where):
        given = {"n_topics": 20, "seed": 4, "iterations": 1000, "snapshots": 3, "snapshot_interval": 2}
        values = settings.resolve(settings_of(CollapsedGibbs), {**given, "max_seconds": 60.0})
        values = {**values, "seed": random_streams.resolve(values["seed"])}
        values = {**values, **CollapsedGibbs.resolve(values, given, data)}
        return CollapsedGibbs(data, values, checkpoint=None, **where)

    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    local, remote = state(ldacli.read_corpus(str(tmp_path / "f")), threads=1), state(folder, threads=1, client=client)
    results = []
    for s in (local, remote):
        s.expect_last(10)
        s.step(10)  # sweeps 6, 8 and 10 summed
        assert s.snapshots.taken == [6, 8, 10]
        s.expect_last(40)  # the end moved: those are not of it
        s.step(40)
        assert s.snapshots.taken == [36, 38, 40]
        results.append(s.result(40))
        s.close()
    (phi, theta, params), (remote_phi, remote_theta, remote_params) = results
    assert phi.tobytes() == remote_phi.tobytes() and theta.tobytes() == remote_theta.tobytes()
    assert params == remote_params


def test_a_lost_scheduler_leaves_a_checkpoint_that_resumes(corpus, tmp_path):
    local = ldacli.train(corpus, 20, iterations=8, seed=6, shards=SHARDS, threads=2)
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    worker = None
    try:
        for _ in range(300):
            if scheduler_file.exists() and scheduler_file.stat().st_size:
                break
            time.sleep(0.1)
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                   str(scheduler_file), "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        address = __import__("json").loads(scheduler_file.read_text())["address"]
        ckpt = str(tmp_path / "c.npz")

        def lose_the_scheduler(iteration):
            if iteration == 3:
                scheduler.kill()
                scheduler.wait()

        import dask

        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}), distributed.Client(address, timeout=30) as c:
            c.wait_for_workers(1, timeout=60)
            # the state was on the workers, which went with the scheduler: the last checkpoint is what is left
            with pytest.raises(ldacli.RunStopped, match=f"lost the Dask scheduler.*{ckpt} holds sweep 2") as stopped:
                ldacli.train(corpus, 20, iterations=8, seed=6, shards=SHARDS, scheduler=c, checkpoint=ckpt,
                             checkpoint_every=2, callback=lose_the_scheduler)
            assert stopped.value.checkpoint == ckpt
    finally:
        for proc in (worker, scheduler):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert ldacli.Checkpoint.load(ckpt).iteration == 2
    same(ldacli.train(corpus, iterations=8, resume=ckpt), local)


def test_infer_and_perplexity_on_the_cluster_give_the_local_results(corpus, client, tmp_path, monkeypatch):
    import ldacli.scoring.fixed_topics

    monkeypatch.setattr(ldacli.scoring.fixed_topics, "THETA_CHUNK_TOKENS", 2000)  # several chunks, so several workers work
    model = ldacli.train(corpus, 10, iterations=20, seed=1, shards=SHARDS)
    a, _ = ldacli.infer(model, corpus, iterations=12, burn_in=4, seed=2, threads=2)
    b, _ = ldacli.infer(model, corpus, iterations=12, burn_in=4, seed=2, scheduler=client)
    np.testing.assert_array_equal(a.theta, b.theta)
    # per document: a few documents alone, in another order, on the cluster give their rows
    some = [40, 3, 17]
    c, _ = ldacli.infer(model, ldacli.Corpus(corpus.counts[some], corpus.vocab, [corpus.doc_ids[i] for i in some]),
                        iterations=12, burn_in=4, seed=2, scheduler=client)
    assert c.theta.tobytes() == a.theta[some].tobytes()
    pa = ldacli.perplexity(model, corpus, iterations=12, burn_in=4, seed=3, threads=1)
    pb = ldacli.perplexity(model, corpus, iterations=12, burn_in=4, seed=3, scheduler=client)
    assert pa == pb


def test_the_cli_runs_on_a_local_cluster(tmp_path, small_ldac):
    def cli(*args):  # a real process: a local cluster spawns worker processes
        return subprocess.run([sys.executable, "-m", "ldacli", *map(str, args)], capture_output=True, text=True,
                              timeout=300)

    args = ["-k", 5, "--iterations", 6, "--seed", 2, "--shards", 3]
    assert cli("train", small_ldac, *args, "-q", "-o", tmp_path / "threads.npz").returncode == 0
    r = cli("train", small_ldac, *args, "--scheduler", "local:2", "-o", tmp_path / "cluster.npz")
    assert r.returncode == 0, r.stderr
    # without -v, none of Dask's own log lines or warnings (they carry the logger's or the module's name)
    assert not [line for line in r.stderr.splitlines() if "distributed" in line or "tornado" in line
                or "Warning" in line], r.stderr
    args.append("-q")
    same(ldacli.load_model(str(tmp_path / "threads.npz")), ldacli.load_model(str(tmp_path / "cluster.npz")))
    # a shard folder: the workers read the files, with the same result
    assert cli("convert", small_ldac, "--shards", 3, "-o", tmp_path / "f", "-q").returncode == 0
    r = cli("train", tmp_path / "f", *args, "--scheduler", "local:2", "-o", tmp_path / "folder.npz")
    assert r.returncode == 0, r.stderr
    same_arrays(ldacli.load_model(str(tmp_path / "threads.npz")), ldacli.load_model(str(tmp_path / "folder.npz")))
    r = cli("train", tmp_path / "f", *args, "--scheduler", "local:1", "--min-df", 2, "-o", tmp_path / "p.npz")
    assert r.returncode == 2 and "choose the vocabulary when converting" in r.stderr
    r = cli("train", small_ldac, "-k", 5, "--method", "vem", "--scheduler", "local:1", "-o", tmp_path / "v.npz")
    assert r.returncode == 2 and "applies to method cgs only" in r.stderr


def test_ctrl_c_on_a_local_cluster_checkpoints_the_sweep_and_its_hint_continues_the_run(corpus, tmp_path):
    """A Ctrl-C at the terminal reaches the whole foreground process group, the local workers
    too: the client, not they, answers it (they died of it before, and the checkpoint with them)."""
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    args = ["-k", 10, "--iterations", 300, "--seed", 3, "-q"]
    ckpt = tmp_path / "c.npz"
    run = subprocess.Popen([sys.executable, "-m", "ldacli", "train", tmp_path / "f", *map(str, args), "--scheduler",
                            "local:2", "--checkpoint", ckpt, "--checkpoint-every", "10", "-o", tmp_path / "m.npz"],
                           stderr=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True)
    try:
        for _ in range(1200):
            if ckpt.exists() or run.poll() is not None:
                break
            time.sleep(0.05)
        os.killpg(run.pid, signal.SIGINT)  # as the terminal does
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130 and "Traceback" not in err, err
    [said] = err.splitlines()
    assert said.startswith("stopped by SIGINT after sweep ") and f"checkpoint written to {ckpt}" in said
    hint = shlex.split(said.split("; continue with: ")[1])
    assert hint[:2] == ["ldacli", "train"]
    resumed = subprocess.run([sys.executable, "-m", "ldacli", *hint[1:]], capture_output=True, text=True,
                             cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    whole = ldacli.train(corpus, 10, iterations=300, seed=3, shards=SHARDS, threads=2)
    same_arrays(ldacli.load_model(str(tmp_path / "m.npz")), whole)


def test_streamed_infer_and_perplexity_on_the_cluster(corpus, client, tmp_path, monkeypatch):
    """The command line's path (documents read a block at a time, theta written as it comes) on
    the cluster gives the bytes it gives on threads."""
    import ldacli.scoring.fixed_topics
    from ldacli.scoring.perplexity import perplexity_stream
    from ldacli.corpora.formats import stream as stream_module
    from ldacli.corpora.formats.stream import stream_corpus
    from ldacli.scoring.inference import write_inference

    monkeypatch.setattr(ldacli.scoring.fixed_topics, "THETA_CHUNK_TOKENS", 2000)
    monkeypatch.setattr(stream_module, "DOCS_PER_BLOCK", 37)
    ldacli.write_corpus(corpus, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab"))
    model = ldacli.train(corpus, 10, iterations=20, seed=1, shards=SHARDS)
    stream = lambda: stream_corpus(str(tmp_path / "c.ldac"), fixed_vocab=model.vocab, fingerprint=True)  # noqa: E731
    for out, where in (("threads.npz", dict(threads=2)), ("cluster.npz", dict(scheduler=client))):
        write_inference(model, stream(), str(tmp_path / out), "npz", iterations=12, burn_in=4, seed=2, **where)
    assert (tmp_path / "threads.npz").read_bytes() == (tmp_path / "cluster.npz").read_bytes()
    assert perplexity_stream(model, stream(), iterations=12, burn_in=4, seed=3, scheduler=client) == \
        ldacli.perplexity(model, corpus, iterations=12, burn_in=4, seed=3, threads=1)


def test_a_shard_folder_of_more_than_2_31_tokens_is_accepted_with_exact_64_bit_totals(tmp_path):
    """Totals over 2^31 without two billion tokens on this machine: a few documents of large
    counts on few words. The index, each shard's token offsets and the word frequencies are
    exact; a worker's blocks sample against 32-bit totals less a base that the prior's sums
    take instead, so that every denominator n_k + sum_w beta_kw is the 64-bit one."""
    import scipy.sparse as sp

    from ldacli.corpora.formats.shards import write_shard_folder
    from ldacli.methods.cgs.dask_client import INT32_MAX
    from ldacli.methods.cgs.dask_worker import ShardHost
    from ldacli.methods.cgs.method import CollapsedGibbs
    from ldacli.methods.cgs.sampler import block_totals, wide_totals
    from ldacli.partition import WIDE_SHARD_TOKENS as HEADROOM

    big = (1 << 28) + 3  # a shard of two such documents stays under HEADROOM tokens
    rows = np.array([[big, 5, 0, 1], [0, big, 7, 0], [3, 0, big, 2], [big, 1, 0, 0], [0, 0, 4, big]] * 4)
    counts = sp.csr_array(rows.astype(np.int32))
    write_shard_folder(str(tmp_path / "f"), counts, list("abcd"), [f"d{i}" for i in range(20)], 10,
                       fingerprint="x", source="made here", format="npz")
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))
    exact = [sum(int(v) for v in row) for row in rows.tolist()]  # Python integers: no overflow
    assert folder.n_tokens == sum(exact) > INT32_MAX and folder.n_tokens > 2 ** 32
    assert folder.doc_lengths.tolist() == exact
    assert folder.word_frequencies().tolist() == [sum(int(r[w]) for r in rows.tolist()) for w in range(4)]
    ranges = folder.shard_ranges()
    assert [r.hi - r.lo for r in ranges] == [sum(exact[r.d_lo:r.d_hi]) for r in ranges]
    assert ranges[-1].hi == folder.n_tokens and all(r.hi - r.lo <= HEADROOM for r in ranges)
    # the client's memory check counts what the client holds, not the workers' 5.4 G tokens
    settings = {"n_topics": 100, "sampler": "sparse", "shards": len(ranges), "snapshots": 5,
                "scheduler": "tcp://scheduler:8786"}
    assert CollapsedGibbs.estimate_bytes(folder, settings, 1, True) < 64 << 20
    # a block's totals: (n_k - base) as int32 plus (sum_w beta_kw + base) is n_k + sum_w beta_kw
    K, beta = 3, 0.01
    host = ShardHost("sparse", 4, K, None, np.array([0, 2, 4]), (np.zeros(5, np.int64), np.zeros(0, np.int32),
                                                                 np.zeros(0)), True)
    host.set_priors(np.full(K, 0.1), beta, np.full(K, 4 * beta))
    start = np.array([folder.n_tokens - 2 * big, big + 1, big - 1], np.int64)
    nk, priors = block_totals(start, host.priors, wide_totals(ranges))
    assert nk.dtype == np.int32 and int(nk.max()) <= HEADROOM
    assert nk.astype(np.int64).tolist() == [min(int(n), HEADROOM) for n in start]
    np.testing.assert_allclose(nk + priors.beta_sum, start + 4 * beta, rtol=1e-15)
    assert priors.beta_sum.tolist() == [4 * beta + (int(n) - min(int(n), HEADROOM)) for n in start]


def test_a_local_cluster_that_cannot_start_says_why_in_one_line(tmp_path, small_ldac):
    import resource

    def few_files():  # in the child: an open-file limit far below what two local workers need
        resource.setrlimit(resource.RLIMIT_NOFILE, (120, 120))

    r = subprocess.run([sys.executable, "-m", "ldacli", "train", str(small_ldac), "-k", "5", "--iterations", "2",
                        "--scheduler", "local:2", "-q", "-o", str(tmp_path / "m.npz")], capture_output=True, text=True,
                       timeout=300, preexec_fn=few_files)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "Error: scheduler: cannot start a local cluster of 2 workers: it needs about 384 open files, and the "
        "open-file limit is 120 (hard limit 120; raise it with ulimit -n 384)"]
    assert not (tmp_path / "m.npz").exists()
