"""Training, inference and perplexity on a real Dask LocalCluster (worker processes over
loopback): the same bytes as on local threads, a worker killed mid-run, a lost scheduler, and
checkpoints that resume anywhere."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

import ldacli
from ldacli.cli import main
from ldacli.synthetic import generate

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install 'ldacli[dask]'")

SHARDS = 5


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def corpus():
    c, _ = generate(500, 10, 200, doc_length=(40, 120), alpha=0.2, seed=11).corpus.without_unused_words()
    return c


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


def same_arrays(a, b):
    np.testing.assert_array_equal(a.phi, b.phi)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.loglik_per_token, b.loglik_per_token)


def same(a, b):
    same_arrays(a, b)
    assert a.params == b.params


@pytest.mark.parametrize("sampler", ["sparse", "dense", "alias"])
def test_a_cluster_gives_the_same_bytes_as_local_threads(corpus, client, sampler):
    given = dict(iterations=6, seed=3, shards=SHARDS, sampler=sampler, optimize_interval=3, snapshot_interval=1)
    local = ldacli.train(corpus, 25, threads=2, **given)
    remote = ldacli.train(corpus, 25, scheduler=client, **given)
    assert remote.params["snapshot_sweeps"] == [4, 5, 6]  # phi and theta averaged over the last three
    same(local, remote)


@pytest.mark.parametrize("sampler", ["sparse", "dense", "alias"])
def test_a_seeded_topic_word_prior_gives_the_same_bytes_on_a_cluster_as_on_threads(corpus, client, sampler):
    from test_topic_word_prior import cgs

    from ldacli.topic_word_prior import seed_prior

    prior = seed_prior({0: [1, 2, 3], 4: [3, 10]}, 30.0, corpus.n_words, 25)
    given = {"n_topics": 25, "seed": 3, "shards": SHARDS, "sampler": sampler}
    local, remote = cgs(corpus, prior, threads=2, **given), cgs(corpus, prior, client=client, **given)
    for it in range(4):
        local.step(it + 1)
        remote.step(it + 1)
    np.testing.assert_array_equal(local.sampler.z, remote.sampler.z)
    assert local.phi().tobytes() == remote.phi().tobytes() and local.loglik() == remote.loglik()
    local.close()
    remote.close()


def _die_in_sweep_4_at_shard_2(rounds):
    """Run in a worker (client.run): its ShardHost dies (the process exits) when asked to sample
    shard 2 in the first round of the 4th sweep (``rounds`` a sweep), half a second after the
    results it already has went out."""
    import time

    from ldacli.methods import distributed as d

    sweep, calls = d.ShardHost.sweep, []

    def dying(self, s, *args):
        if s == 2:
            calls.append(s)
            if len(calls) == 3 * rounds + 1:
                time.sleep(0.5)
                os._exit(1)
        return sweep(self, s, *args)

    d.ShardHost.sweep = dying


@pytest.mark.parametrize("source, when", [("memory", "between sweeps"), ("shard folder", "between sweeps"),
                                          ("memory", "mid-sweep")])
def test_a_worker_killed_mid_run_is_replaced_and_the_result_is_unchanged(corpus, client, source, when, tmp_path,
                                                                        monkeypatch):
    from ldacli.methods.distributed import DistributedSampler

    local = ldacli.train(corpus, 20, iterations=8, seed=4, shards=SHARDS, threads=1)
    address, victim = sorted(client.run(os.getpid).items())[0]  # it holds shards 0, 2 and 4
    if source == "shard folder":  # the new worker reads the lost shards' files again
        ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
        corpus = ldacli.open_shard_folder(str(tmp_path / "f"))
    if when == "mid-sweep":
        # in sweep 4 the victim returns shard 0, then dies on shard 2: shard 0 is merged and must
        # not be sampled twice; shards 2 and 4 are sampled again elsewhere against the same counts
        client.run(_die_in_sweep_4_at_shard_2, SHARDS, workers=[address])

    def kill(iteration):
        if iteration == 3 and when == "between sweeps":
            os.kill(victim, signal.SIGKILL)

    init, seen = DistributedSampler.__init__, []

    def keep(self, *args, **kwargs):
        seen.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(DistributedSampler, "__init__", keep)
    remote = ldacli.train(corpus, 20, iterations=8, seed=4, shards=SHARDS, scheduler=client, callback=kill)
    assert seen[0].traffic[3]["rebuilt_shards"] == 3  # the victim's shards, rebuilt in sweep 4
    same_arrays(local, remote)
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it, for the other tests


def test_workers_read_a_shard_folder_and_the_client_never_does(corpus, client, tmp_path, monkeypatch):
    import ldacli.formats.shards

    local = ldacli.train(corpus, 25, iterations=6, seed=3, shards=SHARDS, threads=2, optimize_interval=3)
    ldacli.write_shards(corpus, tmp_path / "f", SHARDS)
    folder = ldacli.open_shard_folder(str(tmp_path / "f"))

    def tripwire(self, s):
        raise AssertionError(f"the client read shard {s}")

    # in this (the client's) process only: the workers are other processes and read the files
    monkeypatch.setattr(ldacli.formats.shards.ShardFolder, "shard_counts", tripwire)
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
            with pytest.raises(ldacli.RunStopped, match=f"checkpoint written to {ckpt}") as stopped:
                ldacli.train(corpus, 20, iterations=8, seed=6, shards=SHARDS, scheduler=c, checkpoint=ckpt,
                             callback=lose_the_scheduler)
            assert stopped.value.checkpoint == ckpt
    finally:
        for proc in (worker, scheduler):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert ldacli.Checkpoint.load(ckpt).iteration == 3
    same(ldacli.train(corpus, iterations=8, resume=ckpt), local)


def test_infer_and_perplexity_on_the_cluster_give_the_local_results(corpus, client, tmp_path, monkeypatch):
    import ldacli.heldout

    monkeypatch.setattr(ldacli.heldout, "THETA_CHUNK_TOKENS", 2000)  # several chunks, so several workers work
    model = ldacli.train(corpus, 10, iterations=20, seed=1, shards=SHARDS)
    a, _ = ldacli.infer(model, corpus, iterations=12, burn_in=4, seed=2, threads=2)
    b, _ = ldacli.infer(model, corpus, iterations=12, burn_in=4, seed=2, scheduler=client)
    np.testing.assert_array_equal(a.theta, b.theta)
    pa = ldacli.perplexity(model, corpus, iterations=12, burn_in=4, seed=3, threads=1)
    pb = ldacli.perplexity(model, corpus, iterations=12, burn_in=4, seed=3, scheduler=client)
    assert pa == pb


def test_the_cli_runs_on_a_local_cluster(tmp_path, small_ldac):
    def cli(*args):  # a real process: a local cluster spawns worker processes
        return subprocess.run([sys.executable, "-m", "ldacli", *map(str, args)], capture_output=True, text=True,
                              timeout=300)

    args = ["-k", 5, "--iterations", 6, "--seed", 2, "--shards", 3, "-q"]
    assert cli("train", small_ldac, *args, "-o", tmp_path / "threads.npz").returncode == 0
    r = cli("train", small_ldac, *args, "--scheduler", "local:2", "-o", tmp_path / "cluster.npz")
    assert r.returncode == 0, r.stderr
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


def test_streamed_infer_and_perplexity_on_the_cluster(corpus, client, tmp_path, monkeypatch):
    """The command line's path (documents read a block at a time, theta written as it comes) on
    the cluster gives the bytes it gives on threads."""
    import ldacli.heldout
    from ldacli.evaluate import perplexity_stream
    from ldacli.formats import stream as stream_module
    from ldacli.formats.stream import stream_corpus
    from ldacli.inference import write_inference

    monkeypatch.setattr(ldacli.heldout, "THETA_CHUNK_TOKENS", 2000)
    monkeypatch.setattr(stream_module, "DOCS_PER_BLOCK", 37)
    ldacli.write_corpus(corpus, str(tmp_path / "c.ldac"), str(tmp_path / "c.vocab"))
    model = ldacli.train(corpus, 10, iterations=20, seed=1, shards=SHARDS)
    stream = lambda: stream_corpus(str(tmp_path / "c.ldac"), fixed_vocab=model.vocab, fingerprint=True)  # noqa: E731
    for out, where in (("threads.npz", dict(threads=2)), ("cluster.npz", dict(scheduler=client))):
        write_inference(model, stream(), str(tmp_path / out), "npz", iterations=12, burn_in=4, seed=2, **where)
    assert (tmp_path / "threads.npz").read_bytes() == (tmp_path / "cluster.npz").read_bytes()
    assert perplexity_stream(model, stream(), iterations=12, burn_in=4, seed=3, scheduler=client) == \
        ldacli.perplexity(model, corpus, iterations=12, burn_in=4, seed=3, threads=1)
