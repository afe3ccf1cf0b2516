"""Choosing the number of topics: ``ldacli select-k`` and :func:`select_k`.

Every pair of a number of topics K (a grid) and a seed index i is one ordinary training run
(:func:`ldacli.train`, with the settings given, those of ``train``) on the same documents: one
held-out split, drawn once from ``seed`` (``holdout`` of the documents), is left out of every
run. Run i (1, 2, ...) of every K has the seed ``seed + i - 1`` (:func:`pair_seed`): run 1 is
what ``ldacli train --seed SEED`` trains on the same documents. Each finished model is scored:

* held-out perplexity of the held-out documents by document completion (:func:`ldacli.perplexity`,
  the estimator of ``ldacli perplexity`` with its defaults, seeded by ``seed``);
* NPMI coherence of each topic's 10 top words on the training documents (:func:`ldacli.coherence`),
  the mean over topics;
* topic diversity and exclusivity (:func:`ldacli.scoring.coherence.diversity`, ``exclusivity``);

and for each K, every two seeds' models are matched (:func:`ldacli.match_topics`, the Hungarian
matching on Jensen-Shannon distance of ``ldacli diff``): their stability is the mean matched
distance and the fraction of topics matched within ``diff``'s threshold. Each measure is reported
as the mean and the standard error over the seeds (over pairs of seeds for stability).

The recommendation (:func:`recommend`, :data:`RULE`) weighs fit against topic quality: each
run's quality is NPMI x diversity (Dieng, Ruiz & Blei 2020), and the best K has the most quality
per unit of held-out perplexity, where one more doubling of K would gain less fit (in percent)
than it costs quality; among the Ks within one standard error of it, the most stable across seeds
(Greene, O'Callaghan & Cunningham 2014), then the smallest. No single measure decides: on real
corpora held-out perplexity keeps falling as K grows (Wallach et al. 2009), and coherence,
diversity and stability are best at the smallest Ks. When that best K is at the edge of the grid,
or every K is within one standard error of it, the data do not determine K: the recommendation is
None and the reason says which, with the evidence and the one step of grid that would tell.
Measured on real and planted corpora: ``benchmarks/select_k_rules.py``.

Every pair's model is written to the output folder as ``k{K}-s{i}.npz`` with its scores beside
it (``k{K}-s{i}.json``), each as soon as it is finished; a run that was killed and is started
again with the same settings finds them there and trains only the pairs it had not finished
(the same bytes as an uninterrupted run: each pair's result depends on its seed alone). A pair
under way keeps a checkpoint (``k{K}-s{i}.checkpoint.npz``), written every ``checkpoint_every``
sweeps and when the run is stopped, and continued from when it is started again. Pairs
run in parallel: ``threads`` at a time, each run on one thread, or as independent jobs on a Dask
cluster (``scheduler``). The memory of the pairs that run at once is estimated before starting.
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from ldacli import random_streams
from ldacli import settings
from ldacli.api_input import as_corpus, reading_of
from ldacli.corpora.corpus import Corpus
from ldacli.diff import THRESHOLD, match_topics
from ldacli.errors import InputError, LdacliError, SettingError, TrainingInterrupted
from ldacli.scoring.perplexity import perplexity
from ldacli.files.fileio import atomic_write, file_sha256, open_regular, stranger
from ldacli.scoring.fixed_topics import holdout_split
from ldacli.files.locking import locked
from ldacli.memory import check_fits
from ldacli.methods import driver
from ldacli.cluster.connection import SCHEDULER, cluster
from ldacli.methods.driver import memory_needed, stop_requests, unchanged
from ldacli.model import Model
from ldacli.parallel import THREADS, check_threads
from ldacli.random_streams import SEED
from ldacli.settings import Integer, Real, Setting
from ldacli.signatures import takes_settings
from ldacli.corpora.formats.read import READING
from ldacli.scoring.coherence import coherence, diversity, exclusivity
from ldacli.version import __version__

log = logging.getLogger("ldacli")

RULE = ("the K with the most topic quality per unit of held-out perplexity (NPMI x diversity / perplexity: K "
        "grows while a doubling gains more fit, in percent, than it costs topic quality), or among the Ks within one "
        "standard error of it the most stable across seeds, then the smallest; not determined when that best K is "
        "the smallest or the largest tried, when the smallest or the largest tried is within one standard error of it "
        "(no tie-break picks an edge of the grid), or when every K is within one standard error of it")
MAX_GRID = 100


@dataclass(frozen=True)
class Grid:
    """Numbers of topics: a list (``5,10,20``) or a range ``LO:HI:logN`` (N values evenly spaced
    in log from LO to HI, rounded, duplicates dropped) or ``LO:HI:STEP``."""

    def check(self, name: str, value) -> list[int]:
        if isinstance(value, str):
            value = value.strip()
            try:
                if ":" in value:
                    lo, hi, how = value.split(":")
                    lo, hi = int(lo), int(hi)
                    if how.startswith("log"):
                        n = int(how[3:])
                        if n < 2 or lo < 1 or hi <= lo:
                            raise ValueError
                        value = sorted({int(round(x)) for x in np.geomspace(lo, hi, n)})
                    else:
                        step = int(how)
                        if step < 1 or hi < lo:
                            raise ValueError
                        value = list(range(lo, hi + 1, step))
                else:
                    value = [int(v) for v in value.split(",") if v.strip()]
            except ValueError:
                raise SettingError(name, f"{name} must be numbers of topics as 5,10,20 or a range LO:HI:logN or "
                                         f"LO:HI:STEP, found {value!r}") from None
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value or not all(
                isinstance(k, (int, np.integer)) and not isinstance(k, bool) and k >= 1 for k in value):
            raise SettingError(name, f"{name} must be one or more numbers of topics >= 1, found {value!r}")
        out = sorted({int(k) for k in value})
        if len(out) > MAX_GRID:
            raise SettingError(name, f"{name} must be at most {MAX_GRID} values, found {len(out)}")
        return out

    def describe(self) -> str:
        return "numbers of topics: 5,10,20 or LO:HI:logN or LO:HI:STEP"


# The settings of select-k besides train's (SETTINGS_OF_TRAIN).
SETTINGS = (
    Setting("n_topics", Grid(), None,
            "Numbers of topics to try: a list (5,10,20,50) or a range LO:HI:logN (N values evenly spaced in log, "
            "10:200:log8) or LO:HI:STEP.", flags=("-k", "--topics"), required=True),
    Setting("seeds", Integer(1), 3,
            "Training runs (seeds) per number of topics; run i (k{K}-s{i}.npz) has seed --seed + i - 1, so run 1 is "
            "train --seed SEED."),
    Setting("holdout", Real(0, 1, min_open=True, max_open=True), 0.1,
            "Fraction of the documents held out of every run (one split, drawn from --seed) and scored by "
            "document completion."),
    SEED,
    THREADS,
    SCHEDULER,
    settings.by_name(driver.SETTINGS)["wait"],
)
# train's settings that select-k passes to every run: all but those it sets itself or that
# make no sense for a run of many (a warm start, resuming one run, aligning, a run's checkpoint).
NOT_FOR_RUNS = ("n_topics", "seed", "holdout", "patience", "checkpoint", "warm_start", "add_topics", "remove_topics",
                "align_to", "threads", "scheduler", "wait", "resume")
SETTINGS_OF_TRAIN = tuple(s for s in driver.SETTINGS if s.name not in NOT_FOR_RUNS) + driver.method_settings()


class SelectKStopped(TrainingInterrupted):
    """select-k stopped on SIGINT/SIGTERM; the finished pairs are in its folder."""


def pair_name(k: int, i: int) -> str:
    """The file name (without extension) of run ``i`` (1, 2, ...) of K ``k``."""
    return f"k{k}-s{i}"


def pair_seed(base: int, i: int) -> int:
    """The seed of run ``i`` (1, 2, ...) of every K, from select-k's ``seed``: run 1 has the seed
    itself, as ``train --seed`` would."""
    return base + i - 1


def _se(values: list[float]) -> float | None:
    x = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.std(x, ddof=1) / math.sqrt(len(x))) if len(x) > 1 else None


def _mean(values: list[float]) -> float | None:
    x = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(x)) if x else None


def score_pair(model: Model, train: Corpus, held: Corpus, seed: int) -> dict:
    """A pair's scores: held-out perplexity (document completion), NPMI coherence on the
    training documents, diversity and exclusivity."""
    p = perplexity(model, held, seed=seed, threads=1)
    npmi = coherence(model, train, measure="npmi", top_words=10)
    return {"perplexity": p["perplexity"], "perplexity_se": p["standard_error"] / p["n_tokens"] * p["perplexity"],
            "npmi": npmi["mean"], "diversity": diversity(model.phi), "exclusivity": exclusivity(model.phi)}


def run_pair(train: Corpus, held: Corpus, k: int, run_seed: int, eval_seed: int, given: dict,
             stop: dict | None = None, checkpoint: str | None = None, resume: bool = False,
             callback=None) -> tuple[Model, dict]:
    """Train and score one pair on one thread (a plain function of its arguments: threads and
    Dask workers run it). ``stop``: the flag of :func:`~ldacli.methods.driver.stop_requests`
    that stops the run between sweeps; ``checkpoint``: the pair's checkpoint file, written every
    ``checkpoint_every`` sweeps (of ``given``) and when ``stop`` is set (the run then raises
    :class:`TrainingInterrupted`), continued from when ``resume``; ``callback(iteration)`` after
    every sweep."""
    more = {"checkpoint": checkpoint, "resume": checkpoint if resume else None} if checkpoint else {}
    model = driver.train(train, k, seed=run_seed, threads=1, callback=callback, stop=stop, **more, **given)
    return model, score_pair(model, train, held, eval_seed)


def check_runs(given: dict, k: int, output: str) -> None:
    """Refuse train's settings ``given`` for the runs (K ``k``) before anything is read, as
    :func:`~ldacli.methods.driver.check_given` refuses a run's: each run checkpoints to its own
    file in ``output`` (:func:`checkpoint_path`), which ``checkpoint_every`` then applies to."""
    driver.check_given({**given, "n_topics": k, "checkpoint": checkpoint_path(output, k, 1)})


def checkpoint_path(output: str, k: int, i: int) -> str:
    """Where run ``i`` of K ``k`` keeps its checkpoint while it runs (removed when it is done)."""
    return os.path.join(output, pair_name(k, i) + ".checkpoint.npz")


def _resumable(path: str, train: Corpus, k: int, run_seed: int, given: dict) -> int | None:
    """The sweep a pair's checkpoint at ``path`` continues from, when a run with these settings
    on these documents wrote it (else None: the pair starts afresh, and says so)."""
    if not _found(path):
        return None
    at = driver.resumable(path, train, k, seed=run_seed, **given)
    if at is None:
        log.warning("%s: not continued, written by a run of other settings or unreadable; the pair starts again",
                    path)
    return at


def stability(models: list[Model], threshold: float = THRESHOLD.default) -> dict:
    """How well the topics of ``models`` (one K, different seeds) match: for every two of them,
    the mean Jensen-Shannon distance of the Hungarian matching and the fraction of topics
    matched within ``threshold``."""
    distances, matched = [], []
    for a in range(len(models)):
        for b in range(a + 1, len(models)):
            m = match_topics(models[a], models[b])
            distances.append(float(np.mean(m.distances)))
            matched.append(float(np.mean(m.distances <= threshold)))
    return {"distance": distances, "matched": matched}


def quality(npmi: float, diversity: float) -> float:
    """A run's topic quality: mean NPMI coherence times topic diversity (Dieng, Ruiz & Blei
    2020), NPMI below 0 (no more coherent than chance) counting as 0."""
    return max(npmi, 0.0) * diversity


def balance(run: dict) -> float:
    """A run's topic quality per unit of held-out perplexity (times 10^4), what :data:`RULE`
    maximises."""
    return 1e4 * quality(run["npmi"], run["diversity"]) / run["perplexity"]


def per_doubling(a: float, b: float, ka: int, kb: int) -> float:
    """The change from ``a`` at K ``ka`` to ``b`` at ``kb``, per doubling of K (a fraction:
    -0.1 is 10% less per doubling), so that grids of any spacing compare."""
    if a <= 0 or b <= 0:
        return float("nan")
    return (b / a) ** (1.0 / math.log2(kb / ka)) - 1.0


def recommend(rows: list[dict]) -> tuple[int | None, str]:
    """The recommended K of a table's ``rows`` (each: ``k``, ``balance`` and ``balance_se``,
    ``perplexity``, ``quality``, ``npmi``, ``diversity`` and ``distance``, the stability, None
    with one seed) by :data:`RULE`, or None when the data do not determine it, and why, with
    the evidence."""
    rows = sorted(rows, key=lambda r: r["k"])
    best = max(rows, key=lambda r: r["balance"])
    near = [r for r in rows if r["balance"] >= best["balance"] - (best["balance_se"] or 0.0)]
    if len(rows) == 1:
        return None, f"K not determined: one K tried ({rows[0]['k']}), nothing to compare it with"
    evidence = f"NPMI {best['npmi']:.3f} x diversity {best['diversity']:.3f} / perplexity {best['perplexity']:.1f}"
    if all(r["quality"] == 0 for r in rows):
        return None, ("K not determined: NPMI is 0 or below at every K tried: the topics' top words occur together "
                      "no more often than by chance, and topic quality cannot tell the Ks apart")
    if len(near) == len(rows):
        return None, (f"K not determined: every K tried is within one standard error of the best quality per "
                      f"perplexity, K={best['k']} ({evidence}): the measures do not tell the Ks apart (more seeds or "
                      f"more sweeps might)")
    if best is rows[0] or best is rows[-1]:
        low = best is rows[0]
        other = rows[1] if low else rows[-2]
        a, b = (best, other) if low else (other, best)
        fit = per_doubling(a["perplexity"], b["perplexity"], a["k"], b["k"])
        kept = per_doubling(a["quality"], b["quality"], a["k"], b["k"])
        step = (f"from K={a['k']} to {b['k']} held-out perplexity changes {fit:+.1%} per doubling and topic quality "
                f"{kept:+.1%}")
        if low:
            further = (f"; a grid down to K={max(1, best['k'] // 2)} would tell" if best["k"] > 1 else "")
            return None, (f"K not determined: quality per perplexity is best at the smallest K tried, {best['k']} "
                          f"({evidence}), and falls with K ({step}): each doubling costs more topic quality than it "
                          f"gains fit from the start of the grid" + further)
        return None, (f"K not determined: quality per perplexity is best at the largest K tried, {best['k']} "
                      f"({evidence}), and still rising ({step}): each doubling still gains more fit than it costs "
                      f"topic quality; a grid up to K={2 * best['k']} (one doubling more) would tell")
    edge = [r for r in near if r is rows[0] or r is rows[-1]]
    if edge:  # the band reaches the grid's edge: no tie-break may pick it, nor rule it out
        e = edge[0]
        low = e is rows[0]
        spread = f"{best['balance']:.3f} +- {best['balance_se']:.3f}" if best["balance_se"] else f"{best['balance']:.3f}"
        return None, (f"K not determined: quality per perplexity is best at K={best['k']} ({evidence}; {spread} over "
                      f"the seeds), but K={e['k']}, the {'smallest' if low else 'largest'} K tried, is within one "
                      f"standard error of it ({e['balance']:.3f}): the seeds' spread does not rule out the grid's "
                      f"edge; more seeds, or a grid {'down to' if low else 'up to'} "
                      f"K={max(1, e['k'] // 2) if low else 2 * e['k']}, would tell")
    stable = all(r["distance"] is not None for r in near)
    choice = min(near, key=lambda r: (r["distance"], r["k"]) if stable else r["k"])
    after = rows[rows.index(best) + 1]
    why = (f"quality per perplexity is best at K={best['k']} ({evidence}); from it to K={after['k']} perplexity "
           f"changes {per_doubling(best['perplexity'], after['perplexity'], best['k'], after['k']):+.1%} per doubling "
           f"and topic quality {per_doubling(best['quality'], after['quality'], best['k'], after['k']):+.1%}")
    if len(near) > 1:
        why += (f"; within one standard error: K = {', '.join(str(r['k']) for r in near)}, of which "
                + (f"K={choice['k']} is the most stable (mean JS distance between seeds' matched topics "
                   f"{choice['distance']:.3f})" if stable
                   else f"the smallest is K={choice['k']} (one seed: no stability)"))
    return choice["k"], why


def _summary(k: int, pairs: list[dict], stab: dict | None) -> dict:
    row = {"k": k, "seeds": len(pairs)}
    for key in ("perplexity", "npmi", "diversity", "exclusivity", "quality", "balance"):
        values = [quality(p["npmi"], p["diversity"]) if key == "quality" else balance(p) if key == "balance" else p[key]
                  for p in pairs]
        row[key], row[f"{key}_se"] = _mean(values), _se(values)
    for key in ("distance", "matched"):
        values = stab[key] if stab else []
        row[key], row[f"{key}_se"] = _mean(values), _se(values)
    return row


def _write_json(path: str, data: dict) -> None:
    with atomic_write(path, "w", what="select-k result") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")


def _opened(path: str):
    """The file select-k finds at ``path`` in its folder, open (binary), or None when there is
    none. An :class:`~ldacli.errors.InputError` names it when it is not a regular file (a pipe
    would hang the read, ``/dev/zero`` fill memory) or when another user put it there (a pair's
    checkpoint of theirs would be continued, their scores taken for ours): select-k neither
    reads nor replaces such a file, and the user removes it or chooses a folder of their own."""
    if not os.path.lexists(path):
        return None
    f = open_regular(path)
    uid = stranger(os.fstat(f.fileno()), os.path.dirname(path))
    if uid is not None:
        f.close()
        raise InputError(path, None, f"expected a file of this user's in select-k's folder, found one of another "
                                     f"user (uid {uid}), who may have put it there: remove it, or give a folder of "
                                     f"your own")
    return f


def _found(path: str) -> bool:
    """Whether there is a file select-k may read at ``path`` (:func:`_opened`)."""
    f = _opened(path)
    if f is not None:
        f.close()
    return f is not None


def _read_json(path: str) -> dict | None:
    """The JSON object in the file at ``path`` of select-k's folder (:func:`_opened`); None when
    there is none, or it is not a JSON object (the pair is run again and the file replaced)."""
    f = _opened(path)
    if f is None:
        return None
    try:
        with io.TextIOWrapper(f, encoding="utf-8") as text:
            data = json.load(text)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError, RecursionError):  # RecursionError: arrays nested too deeply
        return None


# What a pair's scores file holds (score_pair's, and where it is), each read back as it is written.
SCORES = ("perplexity", "perplexity_se", "npmi", "diversity", "exclusivity")


def _scores_fit(scores: dict, k: int, i: int) -> bool:
    """Whether ``scores``, read from run ``i`` of K ``k``'s file, are what :func:`score_pair`
    writes there: finite numbers (a positive perplexity) for that pair."""
    numbers = [scores.get(key) for key in SCORES]
    return (scores.get("k") == k and scores.get("run") == i and isinstance(scores.get("model"), str)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers)
            and scores["perplexity"] > 0)


def _finished(folder: str, k: int, i: int, train: Corpus, run_seed: int, given: dict) -> dict | None:
    """The scores of run ``i`` of K ``k`` when its model and scores are in ``folder`` and the
    model was trained with these settings (else None: the pair is to be run)."""
    name = pair_name(k, i)
    model_path, scores_path = os.path.join(folder, name + ".npz"), os.path.join(folder, name + ".json")
    scores = _read_json(scores_path)
    if not _found(model_path) or scores is None or not _scores_fit(scores, k, i):
        return None
    try:
        if not unchanged(model_path, train, k, seed=run_seed, **given) or \
                scores.get("model_sha256") != file_sha256(model_path):
            return None
    except (LdacliError, OSError):
        return None
    return scores


@takes_settings(SETTINGS, SETTINGS_OF_TRAIN, READING)
def select_k(corpus, n_topics, *, output: str, seeds: int | None = None, holdout: float | None = None,
             seed: int | None = None, threads: int | None = None, scheduler=None, wait: float | None = None,
             progress: bool = False, page=None, **given) -> dict:
    """Train every (K, seed) pair on ``corpus`` less one held-out split and score it (see the
    module docstring). ``corpus`` is what :func:`ldacli.api_input.as_corpus` takes (a path,
    with the reading settings below, a :class:`~ldacli.corpora.corpus.Corpus`, a list of strings, a
    SciPy sparse matrix with ``vocab``); ``given`` are train's settings for every run
    (``iterations``, ``alpha``, ``beta``, ``method``, ``sampler``, ``checkpoint_every``, ...;
    not those select-k sets: :data:`NOT_FOR_RUNS`).
    Writes every model and its scores to the folder ``output`` (created if missing), then
    ``select-k.json`` (everything returned) and ``select-k.tsv`` (the table); ``page(result)``,
    when given, is called before returning (the CLI writes the HTML page with it). Returns the
    result: ``settings``, ``heldout``, ``pairs``, ``table`` (one row per K: means and standard
    errors), ``recommended`` and ``reason``, ``rule``. A pair already in ``output`` with these
    settings is not trained again. A pair under way keeps a checkpoint in ``output``
    (:func:`checkpoint_path`), written every ``checkpoint_every`` sweeps and when it is stopped;
    on SIGINT/SIGTERM (main thread), the pairs under way write theirs and stop, and
    :class:`SelectKStopped` is raised; running the same again continues each from its
    checkpoint, to the same bytes. Another select-k writing ``output`` raises
    :class:`~ldacli.errors.LockedError`, or is waited for up to ``wait`` seconds."""
    reading = reading_of(given)
    values = settings.resolve(SETTINGS, {"n_topics": n_topics, "seeds": seeds, "holdout": holdout, "seed": seed,
                                         "threads": threads, "scheduler": scheduler, "wait": wait})
    if values["n_topics"] is None:
        raise SettingError("n_topics", "n_topics must be given: the numbers of topics to try")
    for name in given:
        if name in NOT_FOR_RUNS and given[name] is not None:
            raise SettingError(name, f"{name} does not apply to select-k, which sets up every run itself")
    given = {k: v for k, v in given.items() if v is not None}
    if values["scheduler"] is not None and given.get("checkpoint_every"):
        raise SettingError("checkpoint_every", "checkpoint_every applies to pairs run on threads: on a cluster "
                                               "(scheduler) each pair runs on a worker, whose files this folder may "
                                               "not see", ("scheduler",))
    check_runs(given, values["n_topics"][0], output)
    corpus = as_corpus(corpus, reading=reading)
    ks, n_seeds, workers = values["n_topics"], values["seeds"], check_threads(values["threads"])
    os.makedirs(output, exist_ok=True)
    manifest = os.path.join(output, "select-k.json")
    if values["seed"] is None:  # a run started again in its folder continues with its seed
        previous = _read_json(manifest) or _read_json(os.path.join(output, ".select-k.started.json"))
        values["seed"] = previous["seed"] if previous and isinstance(previous.get("seed"), int) else None
    values["seed"] = random_streams.resolve(values["seed"])
    base = values["seed"]
    train, held, held_docs = holdout_split(corpus, values["holdout"], seed=base)
    pairs = [(k, i) for k in ks for i in range(1, n_seeds + 1)]
    with locked([manifest], wait=values["wait"]) as removed:
        for path in removed:
            log.warning("%s: removed, a temporary file left by a run that was killed", path)
        _write_json(os.path.join(output, ".select-k.started.json"), {"seed": base})
        done: dict[tuple[int, int], dict] = {}
        begun: dict[tuple[int, int], int] = {}  # pair -> the sweep its checkpoint continues from
        for k, i in pairs:
            scores = _finished(output, k, i, train, pair_seed(base, i), given)
            if scores is not None:
                done[(k, i)] = scores
                _remove(checkpoint_path(output, k, i))  # left by a run killed as it finished the pair
            elif values["scheduler"] is None:
                at = _resumable(checkpoint_path(output, k, i), train, k, pair_seed(base, i), given)
                if at is not None:
                    begun[(k, i)] = at
        todo = [p for p in pairs if p not in done]
        if done or begun:
            log.warning("%s: %d of %d pairs are done already (same settings); training the other %d%s", output,
                        len(done), len(pairs), len(todo),
                        f", {len(begun)} of them from their checkpoints ("
                        + ", ".join(f"{pair_name(k, i)} at sweep {at}" for (k, i), at in begun.items()) + ")"
                        if begun else "")
        parallel = min(workers, max(1, len(todo))) if scheduler is None else 1
        biggest = sorted((memory_needed(train, k, **given, seed=base, threads=1) for k in {k for k, _ in todo}),
                         reverse=True)
        check_fits(f"select-k running {parallel} of {len(todo)} pairs at once (K up to {max(ks)})",
                   sum(biggest[:parallel]) + 16.0 * corpus.counts.nnz)
        _run(todo, begun, done, train, held, base, given, output, parallel, values["scheduler"], progress)
        result = _result(corpus, train, held, held_docs, values, given, done, output)
        _write_json(manifest, result)
        with atomic_write(os.path.join(output, "select-k.tsv"), "w", what="select-k table") as f:
            f.write("\n".join(table_tsv(result)) + "\n")
        if page is not None:
            page(result)
    return result


def _remove(path: str) -> None:
    """Remove the checkpoint at ``path`` of a pair that is done, if there is one of ours (:func:`_opened`)."""
    if _found(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


class _Progress:
    """What the pairs under way have done, for people: a bar of sweeps over all the pairs to
    run (elapsed time and what is left) naming each running pair and its sweep; with ``-v``,
    a log line every tenth of a pair. Called from the pairs' threads."""

    def __init__(self, todo, begun, iterations: int, show: bool):
        self.iterations, self.lock = iterations, threading.Lock()
        self.at = {p: begun.get(p, 0) for p in todo}
        self.running: dict[tuple[int, int], float] = {}
        self.bar = tqdm(total=iterations * len(todo), initial=sum(self.at.values()), disable=not show,
                        file=sys.stderr, unit="sweep", dynamic_ncols=True, leave=False)

    def started(self, pair) -> None:
        with self.lock:
            self.running[pair] = time.monotonic()
            self._describe()
        log.info("%s (K=%d): started%s", pair_name(*pair), pair[0],
                 f" from its checkpoint at sweep {self.at[pair]}" if self.at[pair] else "")

    def sweep(self, pair, it: int) -> None:
        with self.lock:
            done, self.at[pair] = self.at[pair], it
            self._describe()
            self.bar.update(max(0, min(it, self.iterations) - done))
        if it % max(1, self.iterations // 10) == 0 and it < self.iterations:
            log.info("%s (K=%d): sweep %d of %d, %.0f s", pair_name(*pair), pair[0], it, self.iterations,
                     time.monotonic() - self.running.get(pair, time.monotonic()))

    def finished(self, pair) -> None:
        with self.lock:
            done, self.at[pair] = self.at[pair], self.iterations
            self.running.pop(pair, None)
            self._describe()
            self.bar.update(max(0, self.iterations - done))  # a run that stopped early (converged) too

    def stopped(self, pair) -> None:
        with self.lock:
            self.running.pop(pair, None)

    def _describe(self) -> None:
        self.bar.set_postfix_str(", ".join(f"K={k} s{i} {self.at[(k, i)]}/{self.iterations}"
                                           for k, i in sorted(self.running)), refresh=False)

    def close(self) -> None:
        self.bar.close()


def _run(todo, begun, done, train, held, base, given, output, parallel, scheduler, progress=False) -> None:
    """Run the pairs ``todo`` (threads, or jobs on a Dask cluster), writing each pair's model
    and scores as it finishes and adding its scores to ``done``; on threads each pair keeps a
    checkpoint, and those of ``begun`` continue from theirs; ``progress``: a bar on stderr."""
    if not todo:
        return
    iterations = given.get("iterations") or settings.by_name(driver.SETTINGS)["iterations"].default_for(
        {"method": given.get("method", driver.DEFAULT_METHOD)})
    shown = _Progress(todo, begun, iterations, progress)

    def finish(k, i, model, scores):
        name = pair_name(k, i)
        model_path = os.path.join(output, name + ".npz")
        model.save(model_path)
        scores = {"k": k, "run": i, "seed": pair_seed(base, i), **scores, "model": name + ".npz",
                  "model_sha256": file_sha256(model_path)}
        _write_json(os.path.join(output, name + ".json"), scores)
        _remove(checkpoint_path(output, k, i))
        done[(k, i)] = scores
        shown.finished((k, i))
        log.warning("%s: %s.npz (K=%d, seed %d): held-out perplexity %.1f, NPMI %.3f (%d of %d pairs)", output, name,
                    k, scores["seed"], scores["perplexity"], scores["npmi"], len(done), len(done) + len(pending))

    pending = list(todo)
    checkpoints: list[str] = []  # what the pairs stopped under way wrote
    with stop_requests() as asked, cluster(scheduler) as client:
        try:
            if client is not None:
                from distributed import as_completed

                shared = client.scatter([train, held], broadcast=True, hash=False)
                futures = {client.submit(run_pair, *shared, k, pair_seed(base, i), base, given, pure=False): (k, i)
                           for k, i in todo}
                try:
                    for future in as_completed(futures):
                        k, i = futures[future]
                        pending.remove((k, i))
                        model, scores = future.result()
                        finish(k, i, model, scores)
                        if asked["signal"] is not None:
                            break
                finally:
                    for future in futures:
                        future.cancel()
            else:
                def one(k, i):
                    shown.started((k, i))
                    return run_pair(train, held, k, pair_seed(base, i), base, given, stop=asked,
                                    checkpoint=checkpoint_path(output, k, i), resume=(k, i) in begun,
                                    callback=lambda it: shown.sweep((k, i), it))

                with ThreadPoolExecutor(parallel, thread_name_prefix="ldacli-select-k") as pool:
                    running = {}
                    queue = list(todo)
                    while queue or running:
                        while queue and len(running) < parallel and asked["signal"] is None:
                            k, i = queue.pop(0)
                            running[pool.submit(one, k, i)] = (k, i)
                        if not running:
                            break
                        finished, _ = wait(list(running), timeout=0.2, return_when=FIRST_COMPLETED)
                        for future in finished:
                            k, i = running.pop(future)
                            try:
                                model, scores = future.result()
                            except TrainingInterrupted as exc:  # stopped by the signal, its checkpoint written
                                shown.stopped((k, i))
                                log.warning("%s: %s", pair_name(k, i), exc)
                                checkpoints += [exc.checkpoint] if exc.checkpoint else []
                                continue
                            pending.remove((k, i))
                            finish(k, i, model, scores)
        finally:
            shown.close()
        if asked["signal"] is not None:
            signal = asked["signal"]
            raise SelectKStopped(f"stopped by {signal.name} with {len(done)} of {len(done) + len(pending)} pairs "
                                 f"finished (in {output})"
                                 + (f"; {len(checkpoints)} pairs under way continue from their checkpoints"
                                    if checkpoints else ""), int(signal))


def _result(corpus, train, held, held_docs, values, given, done, output) -> dict:
    ks, n_seeds, base = values["n_topics"], values["seeds"], values["seed"]
    pairs = [done[(k, i)] for k in ks for i in range(1, n_seeds + 1)]
    table = []
    for k in ks:
        models = [Model.load(os.path.join(output, pair_name(k, i) + ".npz")) for i in range(1, n_seeds + 1)]
        stab = stability(models) if len(models) > 1 else None
        table.append(_summary(k, [done[(k, i)] for i in range(1, n_seeds + 1)], stab))
    k_best, why = recommend(table)
    for r in table:
        r["recommended"] = r["k"] == k_best
    return {
        "corpus": {"source": corpus.source, "fingerprint": corpus.fingerprint(), "n_docs": corpus.n_docs,
                   "n_tokens": corpus.n_tokens},
        "settings": {"n_topics": ks, "seeds": n_seeds, "holdout": values["holdout"], "train": given},
        "seed": base,
        "heldout": {"n_docs": held.n_docs, "n_tokens": held.n_tokens, "train_docs": train.n_docs,
                    "documents": [int(d) for d in held_docs],
                    "estimator": "document-completion (ldacli perplexity's defaults, seed --seed)"},
        "stability_threshold": THRESHOLD.default,
        "pairs": pairs,
        "table": table,
        "recommended": k_best,
        "determined": k_best is not None,
        "reason": why,
        "rule": RULE,
        "ldacli_version": __version__,
    }


def _cell(mean, se, fmt: str) -> str:
    if mean is None:
        return "-"
    return f"{mean:{fmt}}" + (f" ± {se:{fmt}}" if se is not None else "")


def table_text(result: dict) -> list[str]:
    """The table for people, with the recommendation and its rule."""
    h = result["heldout"]
    lines = [f"select-k: {result['corpus']['source']}, {result['settings']['seeds']} seeds per K (seeds "
             f"{result['seed']}..{result['seed'] + result['settings']['seeds'] - 1}), {h['train_docs']:,} training "
             f"documents, {h['n_docs']:,} held out (split seed {result['seed']})",
             f"{'K':>5}  {'held-out perplexity':>19}  {'NPMI':>15}  {'diversity':>9}  {'quality/perplexity':>18}  "
             f"{'exclusivity':>11}  {'stability: JS':>15}  {'matched':>11}"]
    for r in result["table"]:
        lines.append(f"{r['k']:>5}  {_cell(r['perplexity'], r['perplexity_se'], '.1f'):>19}  "
                     f"{_cell(r['npmi'], r['npmi_se'], '.3f'):>15}  {_cell(r['diversity'], None, '.3f'):>9}  "
                     f"{_cell(r['balance'], r['balance_se'], '.3f'):>18}  "
                     f"{_cell(r['exclusivity'], None, '.3f'):>11}  "
                     f"{_cell(r['distance'], r['distance_se'], '.3f'):>15}  "
                     f"{_cell(r['matched'], r['matched_se'], '.2f'):>11}"
                     + ("  <- recommended" if r["recommended"] else ""))
    lines.append(f"mean ± standard error over seeds (stability: over pairs of seeds; matched: topics within JS "
                 f"{result['stability_threshold']:g}); perplexity by document completion on the held-out "
                 f"documents ({h['n_tokens']:,} tokens); quality/perplexity: NPMI x diversity / perplexity x 10^4")
    if result["recommended"] is not None:
        lines.append(f"recommended K = {result['recommended']}: {result['reason']}")
    else:
        lines.append(result["reason"])
    lines.append(f"rule: {result['rule']}")
    return lines


TSV_COLUMNS = ("k", "seeds", "perplexity", "perplexity_se", "npmi", "npmi_se", "diversity", "diversity_se",
               "exclusivity", "exclusivity_se", "quality", "quality_se", "balance", "balance_se", "distance",
               "distance_se", "matched", "matched_se", "recommended")


def table_tsv(result: dict) -> list[str]:
    """The table as TSV: one row per K (empty cells where a value is undefined)."""
    def cell(v):
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    return ["\t".join(TSV_COLUMNS)] + ["\t".join(cell(r[c]) for c in TSV_COLUMNS) for r in result["table"]]
