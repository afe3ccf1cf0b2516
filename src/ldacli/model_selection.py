"""Choosing the number of topics: ``ldacli select-k`` and :func:`select_k`.

Every pair of a number of topics K (a grid) and a seed index i is one ordinary training run
(:func:`ldacli.train`, with the settings given, those of ``train``) on the same documents: one
held-out split, drawn once from ``seed`` (``holdout`` of the documents), is left out of every
run. Run i of every K has the seed ``seed + i``. Each finished model is scored:

* held-out perplexity of the held-out documents by document completion (:func:`ldacli.perplexity`,
  the estimator of ``ldacli perplexity`` with its defaults, seeded by ``seed``);
* NPMI coherence of each topic's 10 top words on the training documents (:func:`ldacli.coherence`),
  the mean over topics;
* topic diversity and exclusivity (:func:`ldacli.topic_coherence.diversity`, ``exclusivity``);

and for each K, every two seeds' models are matched (:func:`ldacli.match_topics`, the Hungarian
matching on Jensen-Shannon distance of ``ldacli diff``): their stability is the mean matched
distance and the fraction of topics matched within ``diff``'s threshold. Each measure is reported
as the mean and the standard error over the seeds (over pairs of seeds for stability).

The recommendation (:func:`recommend`, :data:`RULE`): among the Ks whose mean held-out
perplexity is within :data:`TOLERANCE` (or one standard error, if larger) of the best K's, the
one whose topics are most stable across seeds; with one seed, the smallest. Never one metric's
best: perplexity keeps falling as K grows on real corpora, and stability is only asked among the
Ks that fit about as well as the best.

Every pair's model is written to the output folder as ``k{K}-s{i}.npz`` with its scores beside
it (``k{K}-s{i}.json``), each as soon as it is finished; a run that was killed and is started
again with the same settings finds them there and trains only the pairs it had not finished
(the same bytes as an uninterrupted run: each pair's result depends on its seed alone). Pairs
run in parallel: ``threads`` at a time, each run on one thread, or as independent jobs on a Dask
cluster (``scheduler``). The memory of the pairs that run at once is estimated before starting.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from ldacli import seeds as seeding
from ldacli import settings
from ldacli.api_input import as_corpus, reading_of
from ldacli.corpus import Corpus
from ldacli.diff import THRESHOLD, match_topics
from ldacli.errors import LdacliError, SettingError
from ldacli.evaluate import perplexity
from ldacli.fileio import atomic_write, file_sha256
from ldacli.fixed_topics import holdout_split
from ldacli.locking import locked
from ldacli.memory import check_fits
from ldacli.methods import driver
from ldacli.methods.cluster import SCHEDULER, cluster
from ldacli.methods.driver import TrainingInterrupted, memory_needed, stop_requests, unchanged
from ldacli.model import Model
from ldacli.parallel import THREADS, check_threads
from ldacli.seeds import SEED
from ldacli.settings import Integer, Real, Setting
from ldacli.signatures import takes_settings
from ldacli.formats.read import READING
from ldacli.topic_coherence import coherence, diversity, exclusivity
from ldacli.version import __version__

log = logging.getLogger("ldacli")

# Within this fraction of the best perplexity counts as "as good": the spread that local optima
# alone give between seeds of one K (measured: see the README's select-k section).
TOLERANCE = 0.05
RULE = ("among the Ks whose mean held-out perplexity is within 5% (or one standard error, if larger) of the best "
        "K's, the one whose topics are most stable across seeds (the lowest mean Jensen-Shannon distance of "
        "matched topics); with one seed, the smallest of them")
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
    Setting("seeds", Integer(1), 3, "Training runs (seeds) per number of topics; run i has seed --seed + i."),
    Setting("holdout", Real(0, 1, min_open=True, max_open=True), 0.1,
            "Fraction of the documents held out of every run (one split, drawn from --seed) and scored by "
            "document completion."),
    SEED,
    THREADS,
    SCHEDULER,
)
# train's settings that select-k passes to every run: all but those it sets itself or that
# make no sense for a run of many (a warm start, resuming one run, aligning, a run's checkpoint).
NOT_FOR_RUNS = ("n_topics", "seed", "holdout", "patience", "checkpoint", "warm_start", "add_topics", "remove_topics",
                "align_to", "threads", "scheduler", "wait", "resume")
SETTINGS_OF_TRAIN = tuple(s for s in driver.SETTINGS if s.name not in NOT_FOR_RUNS) + driver.method_settings()


class SelectKStopped(TrainingInterrupted):
    """select-k stopped on SIGINT/SIGTERM; the finished pairs are in its folder."""


def pair_name(k: int, i: int) -> str:
    return f"k{k}-s{i}"


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
             stop: threading.Event | None = None) -> tuple[Model, dict]:
    """Train and score one pair on one thread (a plain function of its arguments: threads and
    Dask workers run it). ``stop`` stops the run between sweeps."""
    def callback(_):
        if stop is not None and stop.is_set():
            raise _Stop()

    model = driver.train(train, k, seed=run_seed, threads=1, callback=callback, **given)
    return model, score_pair(model, train, held, eval_seed)


class _Stop(Exception):
    """A pair stopped because select-k was asked to stop."""


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


def recommend(rows: list[dict]) -> tuple[int, str]:
    """The recommended K of a table's ``rows`` (each: ``k``, ``perplexity``, ``perplexity_se``
    and ``distance``, the stability, None with one seed) and why, by :data:`RULE`."""
    best = min(rows, key=lambda r: r["perplexity"])
    band = best["perplexity"] + max(best["perplexity_se"] or 0.0, TOLERANCE * best["perplexity"])
    within = [r for r in sorted(rows, key=lambda r: r["k"]) if r["perplexity"] <= band]
    why = (f"Held-out perplexity within {band - best['perplexity']:.1f} of the best, K={best['k']} "
           f"({best['perplexity']:.1f}), for K = {', '.join(str(r['k']) for r in within)}")
    if any(r["distance"] is None for r in within):
        return within[0]["k"], why + f"; the smallest is K={within[0]['k']} (one seed: no stability)" + \
            _edge(rows, within[0])
    choice = min(within, key=lambda r: (r["distance"], r["k"]))
    why += (f"; the most stable of them is K={choice['k']} (mean JS distance between seeds' matched topics "
            f"{choice['distance']:.3f})" if len(within) > 1 else "")
    return choice["k"], why + _edge(rows, choice)


def _edge(rows: list[dict], choice: dict) -> str:
    """A warning when the choice is the largest K tried and perplexity was still falling there."""
    largest = max(rows, key=lambda r: r["k"])
    if choice is largest and len(rows) > 1 and min(rows, key=lambda r: r["perplexity"]) is largest:
        return (f"; K={largest['k']} is the largest K tried and held-out perplexity was still falling: try a grid "
                f"that reaches further")
    return ""


def _summary(k: int, pairs: list[dict], stab: dict | None) -> dict:
    row = {"k": k, "seeds": len(pairs)}
    for key in ("perplexity", "npmi", "diversity", "exclusivity"):
        values = [p[key] for p in pairs]
        row[key], row[f"{key}_se"] = _mean(values), _se(values)
    for key in ("distance", "matched"):
        values = stab[key] if stab else []
        row[key], row[f"{key}_se"] = _mean(values), _se(values)
    return row


def _write_json(path: str, data: dict) -> None:
    with atomic_write(path, "w", what="select-k result") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")


def _read_json(path: str) -> dict | None:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _finished(folder: str, name: str, train: Corpus, k: int, run_seed: int, given: dict) -> dict | None:
    """The scores of pair ``name`` when its model and scores are in ``folder`` and the model was
    trained with these settings (else None: the pair is to be run)."""
    model_path, scores_path = os.path.join(folder, name + ".npz"), os.path.join(folder, name + ".json")
    scores = _read_json(scores_path)
    if scores is None or not os.path.exists(model_path):
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
             seed: int | None = None, threads: int | None = None, scheduler=None, progress: bool = False,
             page=None, **given) -> dict:
    """Train every (K, seed) pair on ``corpus`` less one held-out split and score it (see the
    module docstring). ``corpus`` is what :func:`ldacli.api_input.as_corpus` takes (a path,
    with the reading settings below, a :class:`~ldacli.corpus.Corpus`, a list of strings, a
    SciPy sparse matrix with ``vocab``); ``given`` are train's settings for every run
    (``iterations``, ``alpha``, ``beta``, ``method``, ``sampler``, ...; not those select-k
    sets: :data:`NOT_FOR_RUNS`).
    Writes every model and its scores to the folder ``output`` (created if missing), then
    ``select-k.json`` (everything returned) and ``select-k.tsv`` (the table); ``page(result)``,
    when given, is called before returning (the CLI writes the HTML page with it). Returns the
    result: ``settings``, ``heldout``, ``pairs``, ``table`` (one row per K: means and standard
    errors), ``recommended`` and ``reason``, ``rule``. A pair already in ``output`` with these
    settings is not trained again. On SIGINT/SIGTERM (main thread), the pairs under way stop and
    :class:`SelectKStopped` is raised; running the same again continues."""
    reading = reading_of(given)
    values = settings.resolve(SETTINGS, {"n_topics": n_topics, "seeds": seeds, "holdout": holdout, "seed": seed,
                                         "threads": threads, "scheduler": scheduler})
    if values["n_topics"] is None:
        raise SettingError("n_topics", "n_topics must be given: the numbers of topics to try")
    for name in given:
        if name in NOT_FOR_RUNS and given[name] is not None:
            raise SettingError(name, f"{name} does not apply to select-k, which sets up every run itself")
    given = {k: v for k, v in given.items() if v is not None}
    driver.check_given({**given, "n_topics": values["n_topics"][0]})
    corpus = as_corpus(corpus, reading=reading)
    ks, n_seeds, workers = values["n_topics"], values["seeds"], check_threads(values["threads"])
    os.makedirs(output, exist_ok=True)
    manifest = os.path.join(output, "select-k.json")
    if values["seed"] is None:  # a run started again in its folder continues with its seed
        previous = _read_json(manifest) or _read_json(os.path.join(output, ".select-k.started.json"))
        values["seed"] = previous["seed"] if previous and isinstance(previous.get("seed"), int) else None
    values["seed"] = seeding.resolve(values["seed"])
    base = values["seed"]
    train, held, held_docs = holdout_split(corpus, values["holdout"], seed=base)
    pairs = [(k, i) for k in ks for i in range(1, n_seeds + 1)]
    with locked([manifest]) as removed:
        for path in removed:
            log.warning("%s: removed, a temporary file left by a run that was killed", path)
        _write_json(os.path.join(output, ".select-k.started.json"), {"seed": base})
        done: dict[tuple[int, int], dict] = {}
        for k, i in pairs:
            scores = _finished(output, pair_name(k, i), train, k, base + i, given)
            if scores is not None:
                done[(k, i)] = scores
        todo = [p for p in pairs if p not in done]
        if done:
            log.warning("%s: %d of %d pairs are done already (same settings); training the other %d", output,
                        len(done), len(pairs), len(todo))
        parallel = min(workers, max(1, len(todo))) if scheduler is None else 1
        biggest = sorted((memory_needed(train, k, **given, seed=base, threads=1) for k in {k for k, _ in todo}),
                         reverse=True)
        check_fits(f"select-k running {parallel} of {len(todo)} pairs at once (K up to {max(ks)})",
                   sum(biggest[:parallel]) + 16.0 * corpus.counts.nnz)
        _run(todo, done, train, held, base, given, output, parallel, values["scheduler"], progress)
        result = _result(corpus, train, held, held_docs, values, given, done, output)
        _write_json(manifest, result)
        with atomic_write(os.path.join(output, "select-k.tsv"), "w", what="select-k table") as f:
            f.write("\n".join(table_tsv(result)) + "\n")
        if page is not None:
            page(result)
    return result


def _run(todo, done, train, held, base, given, output, parallel, scheduler, progress=False) -> None:
    """Run the pairs ``todo`` (threads, or jobs on a Dask cluster), writing each pair's model
    and scores as it finishes and adding its scores to ``done``; ``progress``: a bar of the pairs
    on stderr."""
    if not todo:
        return
    bar = tqdm(total=len(todo), disable=not progress, file=sys.stderr, unit="pair", leave=False)

    def finish(k, i, model, scores):
        name = pair_name(k, i)
        model_path = os.path.join(output, name + ".npz")
        model.save(model_path)
        scores = {"k": k, "run": i, "seed": base + i, **scores, "model": name + ".npz",
                  "model_sha256": file_sha256(model_path)}
        _write_json(os.path.join(output, name + ".json"), scores)
        done[(k, i)] = scores
        bar.update(1)
        log.warning("%s: K=%d seed %d: held-out perplexity %.1f, NPMI %.3f (%d of %d pairs)", output, k, base + i,
                    scores["perplexity"], scores["npmi"], len(done), len(done) + len(pending))

    pending = list(todo)
    stop = threading.Event()
    with stop_requests() as asked, cluster(scheduler) as client:
        if client is not None:
            from distributed import as_completed

            shared = client.scatter([train, held], broadcast=True, hash=False)
            futures = {client.submit(run_pair, *shared, k, base + i, base, given, pure=False): (k, i)
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
            with ThreadPoolExecutor(parallel, thread_name_prefix="ldacli-select-k") as pool:
                running = {}
                queue = list(todo)
                while queue or running:
                    while queue and len(running) < parallel and asked["signal"] is None:
                        k, i = queue.pop(0)
                        running[pool.submit(run_pair, train, held, k, base + i, base, given, stop)] = (k, i)
                    if not running:
                        break
                    finished, _ = wait(list(running), timeout=0.2, return_when=FIRST_COMPLETED)
                    if asked["signal"] is not None:
                        stop.set()
                    for future in finished:
                        k, i = running.pop(future)
                        try:
                            model, scores = future.result()
                        except _Stop:
                            continue
                        pending.remove((k, i))
                        finish(k, i, model, scores)
        bar.close()
        if asked["signal"] is not None:
            signal = asked["signal"]
            raise SelectKStopped(f"stopped by {signal.name} with {len(done)} of {len(done) + len(pending)} pairs "
                                 f"finished (in {output})", int(signal))


def _result(corpus, train, held, held_docs, values, given, done, output) -> dict:
    ks, n_seeds, base = values["n_topics"], values["seeds"], values["seed"]
    pairs = [done[(k, i)] for k in ks for i in range(1, n_seeds + 1)]
    table = []
    for k in ks:
        models = [Model.load(os.path.join(output, pair_name(k, i) + ".npz")) for i in range(1, n_seeds + 1)]
        stab = stability(models) if len(models) > 1 else None
        table.append(_summary(k, [done[(k, i)] for i in range(1, n_seeds + 1)], stab))
    rows = [{"k": r["k"], "perplexity": r["perplexity"], "perplexity_se": r["perplexity_se"],
             "distance": r["distance"]} for r in table]
    k_best, why = recommend(rows)
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
             f"{result['seed'] + 1}..{result['seed'] + result['settings']['seeds']}), {h['train_docs']:,} training "
             f"documents, {h['n_docs']:,} held out (split seed {result['seed']})",
             f"{'K':>5}  {'held-out perplexity':>22}  {'NPMI':>15}  {'diversity':>9}  {'exclusivity':>11}  "
             f"{'stability: JS':>17}  {'matched':>13}"]
    for r in result["table"]:
        lines.append(f"{r['k']:>5}  {_cell(r['perplexity'], r['perplexity_se'], '.1f'):>22}  "
                     f"{_cell(r['npmi'], r['npmi_se'], '.3f'):>15}  {_cell(r['diversity'], None, '.3f'):>9}  "
                     f"{_cell(r['exclusivity'], None, '.3f'):>11}  {_cell(r['distance'], r['distance_se'], '.3f'):>17}  "
                     f"{_cell(r['matched'], r['matched_se'], '.2f'):>13}" + ("  <- recommended" if r["recommended"] else ""))
    lines.append(f"mean ± standard error over seeds (stability: over pairs of seeds; matched: topics within JS "
                 f"{result['stability_threshold']:g}); perplexity by document completion on the held-out "
                 f"documents ({h['n_tokens']:,} tokens)")
    lines.append(f"recommended K = {result['recommended']}: {result['reason']}")
    lines.append(f"rule: {result['rule']}")
    return lines


TSV_COLUMNS = ("k", "seeds", "perplexity", "perplexity_se", "npmi", "npmi_se", "diversity", "diversity_se",
               "exclusivity", "exclusivity_se", "distance", "distance_se", "matched", "matched_se", "recommended")


def table_tsv(result: dict) -> list[str]:
    """The table as TSV: one row per K (empty cells where a value is undefined)."""
    def cell(v):
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    return ["\t".join(TSV_COLUMNS)] + ["\t".join(cell(r[c]) for c in TSV_COLUMNS) for r in result["table"]]
