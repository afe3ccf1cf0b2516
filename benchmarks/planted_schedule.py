"""A planted schedule of retrains: what `ldacli history` and `ldacli trends` report against the truth.

Usage::

    python benchmarks/planted_schedule.py                      # 8 steps, 12 planted topics, about 2 minutes
    python benchmarks/planted_schedule.py --steps 8 --docs 1000 --keep $LDACLI_DATA/history/planted

Topics are drawn once, Dirichlet(``--topic-beta``) over ``--words`` words. A schedule says which
of them are alive at each step (:data:`SCHEDULE`: topics switching on and off at known steps), and
one topic drifts: from step ``--drift-from`` on its words move each step by ``--drift-step`` of
their mass towards another distribution (so its true Jensen-Shannon drift per step is known), and
one topic's weight grows every step (its true share rises). Each step's corpus is ``--docs`` new
documents drawn from the topics alive then (each document's proportions from Dirichlet(alpha
times the weights)), dated within that step's month.

The schedule is then trained as a nightly job would: a cold model of the first step, then each
step warm-started from the model before with ``--add-topics`` the number of topics born at
that step and ``--remove-topics`` the ids of the model before whose topics died, as the truth
says (an operator who knows which topics died: the ids are found by matching the model before to
the true topics). ``ldacli.history`` over the models is set beside the truth: the births and
deaths it reports (which true topic each is, by Jensen-Shannon distance to the truth), every
topic's drift per step against its true drift, and its share against its true share. A second
schedule trains every step cold and apart (no lineage: history pairs them by diff's matching),
and a third trains one model of every step's documents together, whose ``ldacli.trends`` by
month is set beside the true shares by month.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import tempfile
import time

import numpy as np
import scipy.sparse as sp

import ldacli
from ldacli.corpora.corpus import Corpus
import ldacli.over_time.history
from ldacli.diff import common_topics, js_distance_rows, js_distances, match_topics

# Which planted topics live at which steps: (topic, first step alive, first step dead or None).
SCHEDULE = [(0, 0, None), (1, 0, None), (2, 0, 3), (3, 0, None), (4, 0, None), (5, 0, 5), (6, 0, None),
            (7, 0, None), (8, 2, 7), (9, 4, None), (10, 5, None), (11, 7, None)]
DRIFTING, GROWING = 1, 4


def alive(step: int, schedule=SCHEDULE) -> list[int]:
    return [t for t, first, dead in schedule if first <= step and (dead is None or step < dead)]


def planted_schedule(steps: int, docs: int, words: int, *, topic_beta: float = 0.05, alpha: float = 0.1,
                     doc_length=(40, 120), drift_from: int = 3, drift_step: float = 0.2, seed: int = 1,
                     schedule=SCHEDULE) -> dict:
    """The truth and the corpora of a planted schedule (see the module docstring): ``phi`` (steps,
    T, V) every topic's words at every step, ``alive`` per step, ``corpora`` (one
    :class:`~ldacli.corpora.corpus.Corpus` per step), ``theta`` (per step, the documents' true
    proportions over the T topics), ``dates`` (per step, ISO dates) and the true ``drift`` (steps,
    T) and ``share`` (steps, T; NaN where a topic is not alive)."""
    rng = np.random.default_rng(seed)
    T = max(t for t, _, _ in schedule) + 1
    base = rng.dirichlet(np.full(words, topic_beta), size=T)
    target = rng.dirichlet(np.full(words, topic_beta))
    phi = np.repeat(base[None], steps, axis=0)
    for s in range(drift_from, steps):
        mix = min(1.0, drift_step * (s - drift_from + 1))
        phi[s, DRIFTING] = (1 - mix) * base[DRIFTING] + mix * target
    vocab = [f"w{i}" for i in range(words)]
    corpora, thetas, dates = [], [], []
    share = np.full((steps, T), np.nan)
    for s in range(steps):
        live = alive(s, schedule)
        weights = np.ones(len(live))
        weights[[i for i, t in enumerate(live) if t == GROWING]] = 1.0 + 0.5 * s
        weights *= len(live) / weights.sum()
        theta = rng.dirichlet(alpha * weights, size=docs)
        lengths = rng.integers(doc_length[0], doc_length[1], size=docs, endpoint=True)
        rows, cols, vals = [], [], []
        for d in range(docs):
            per_topic = rng.multinomial(lengths[d], theta[d])
            counts = np.zeros(words, dtype=np.int64)
            for i, n in enumerate(per_topic):
                if n:
                    counts += rng.multinomial(n, phi[s, live[i]])
            nz = np.flatnonzero(counts)
            rows.append(np.full(nz.size, d)), cols.append(nz), vals.append(counts[nz])
        X = sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(docs, words))
        corpora.append(Corpus(X, list(vocab), [f"s{s}d{d}" for d in range(docs)], f"step{s}", "synthetic"))
        full = np.zeros((docs, T))
        full[:, live] = theta
        thetas.append(full)
        share[s, live] = theta.mean(axis=0)
        month = datetime.date(2024 + s // 12, 1 + s % 12, 1)
        dates.append([(month + datetime.timedelta(days=int(rng.integers(0, 28)))).isoformat() for _ in range(docs)])
    drift = np.full((steps, T), np.nan)
    for s in range(1, steps):
        both = [t for t in range(T) if t in alive(s - 1, schedule) and t in alive(s, schedule)]
        drift[s, both] = js_distance_rows(phi[s - 1, both], phi[s, both])
    return {"phi": phi, "alive": [alive(s, schedule) for s in range(steps)], "corpora": corpora, "theta": thetas,
            "dates": dates, "drift": drift, "share": share, "vocab": vocab, "schedule": schedule}


def truth_model(truth: dict, step: int) -> ldacli.Model:
    """The topics alive at ``step`` as a model (ids: the planted topics' numbers, in order)."""
    live = truth["alive"][step]
    K = len(live)
    return ldacli.Model(truth["phi"][step, live], np.zeros((0, K)), np.ones(K), 0.01, list(truth["vocab"]), [],
                        np.zeros(0, np.int64), np.zeros(0))


def planted_of(model: ldacli.Model, truth: dict, step: int) -> tuple[list[int], np.ndarray]:
    """Which planted topic each of ``model``'s topics is (the nearest alive at ``step``) and how far."""
    live = truth["alive"][step]
    d = js_distances(*common_topics(model, truth_model(truth, step))[:2])
    nearest = d.argmin(axis=1)
    return [live[i] for i in nearest], d[np.arange(len(nearest)), nearest]


def train_schedule(truth: dict, folder: str, *, iterations: int, warm: int, seed: int, warm_start: bool = True,
                   threads: int = 1) -> list[str]:
    """Train the schedule into ``folder`` (model-00.npz, ...): warm starts with --add-topics and
    --remove-topics as the truth says, or (``warm_start`` False) every step cold and apart."""
    paths = []
    for s, corpus in enumerate(truth["corpora"]):
        path = os.path.join(folder, f"model-{s:02d}.npz")
        live = truth["alive"][s]
        if s == 0 or not warm_start:
            ldacli.train(corpus, len(live), iterations=iterations, seed=seed + s, threads=threads, output=path)
        else:
            before = truth["alive"][s - 1]
            born = [t for t in live if t not in before]
            dead = [t for t in before if t not in live]
            previous = ldacli.load_model(paths[-1])
            # the operator's view: the ids whose topics died are those matched to the dead planted topics
            matching = match_topics(truth_model(truth, s - 1), previous)
            remove = sorted(k for t, k in matching.pairs if before[t] in dead)
            ldacli.train(corpus, warm_start=paths[-1], add_topics=len(born) or None, remove_topics=remove or None,
                         iterations=warm, seed=seed + s, threads=threads, output=path)
        paths.append(path)
    return paths


def compare(truth: dict, paths: list[str], label: str) -> None:
    """history over ``paths`` beside the truth, printed."""
    t0 = time.perf_counter()
    h = ldacli.history(paths, as_frame=False)
    seconds = time.perf_counter() - t0
    result = h.result
    models = [ldacli.load_model(p) for p in paths]
    planted = [planted_of(m, truth, s) for s, m in enumerate(models)]
    steps = len(paths)
    print(f"\n## {label}: history of {steps} models in {seconds:.2f} s; pairing: "
          + ", ".join(sorted({m['pairing'] for m in result['models'] if m['pairing']})))
    print("\n| step | truth: born | history: born (id -> planted topic, JS to it) | truth: died | history: died "
          "(topic -> planted topic) |")
    print("|---|---|---|---|---|")
    hits = {"born": [0, 0, 0], "died": [0, 0, 0]}  # right, wrong, missed
    for s in range(1, steps):
        born_true = sorted(set(truth["alive"][s]) - set(truth["alive"][s - 1]))
        died_true = sorted(set(truth["alive"][s - 1]) - set(truth["alive"][s]))
        born = [e for e in result["events"] if e["step"] == s and e["event"] == "born"]
        died = [e for e in result["events"] if e["step"] == s and e["event"] == "died"]
        born_found = [(e["id"], planted[s][0][e["id"]], planted[s][1][e["id"]], e["how"]) for e in born]
        died_found = [(e["topic"], planted[s - 1][0][e["id"]], e["how"]) for e in died]
        for kind, true, found in (("born", born_true, [f[1] for f in born_found]),
                                  ("died", died_true, [f[1] for f in died_found])):
            right = [t for t in found if t in true]
            hits[kind][0] += len(set(right))
            hits[kind][1] += len([t for t in found if t not in true])
            hits[kind][2] += len(set(true) - set(found))
        print(f"| {s} | {', '.join(map(str, born_true)) or '-'} | "
              + (", ".join(f"id {k} -> {t} ({d:.2f}, {how})" for k, t, d, how in born_found) or "-")
              + f" | {', '.join(map(str, died_true)) or '-'} | "
              + (", ".join(f"topic {k} -> {t} ({how})" for k, t, how in died_found) or "-") + " |")
    for kind, (right, wrong, missed) in hits.items():
        print(f"\n{kind}: {right} found, {wrong} reported that the truth does not have, {missed} missed")
    for limit in (0.3, 0.6):
        flagged = [(planted[m["step"]][0][m["id"]], m["step"]) for m in ldacli.over_time.history.drifted(result, limit)]
        print(f"\n--max-drift {limit}: {len(flagged)} flagged, "
              f"{sum(t == DRIFTING for t, _ in flagged)} of them the drifting topic ({DRIFTING}; truth: it drifts at "
              f"steps {', '.join(str(s) for s in range(1, steps) if truth['drift'][s, DRIFTING] > 0)}): "
              + (", ".join(f"planted {t} at step {s}" for t, s in flagged) or "none"))
    # drift and share of each topic of the history against its planted topic's
    print("\n| step | planted drifting topic: true JS | its history topic: drift | other topics: drift median / max | "
          f"growing topic {GROWING}: true share | history share |")
    print("|---|---|---|---|---|---|")
    topics = result["topics"]
    for s in range(1, steps):
        rows = []
        drifting_found = growing_share = None
        for t in topics:
            k, d = t["ids"][s], t["drifts"][s]
            if k is None:
                continue
            p = planted[s][0][k]
            if p == DRIFTING and d is not None:
                drifting_found = d
            elif d is not None:
                rows.append(d)
            if p == GROWING:
                growing_share = t["shares"][s]
        true = truth["drift"][s, DRIFTING]
        print(f"| {s} | {true:.3f} | {'-' if drifting_found is None else f'{drifting_found:.3f}'} | "
              f"{np.median(rows):.3f} / {max(rows):.3f} | {truth['share'][s, GROWING]:.3f} | "
              f"{'-' if growing_share is None else f'{growing_share:.3f}'} |")


def compare_trends(truth: dict, folder: str, iterations: int, seed: int) -> None:
    """One model of every step's documents; trends by month against the true shares."""
    corpora = truth["corpora"]
    X = sp.csr_array(sp.vstack([c.counts for c in corpora]))
    ids = [d for c in corpora for d in c.doc_ids]
    corpus = Corpus(X, list(truth["vocab"]), ids, "all", "synthetic")
    T = truth["phi"].shape[1]
    model = ldacli.train(corpus, T, iterations=iterations, seed=seed, threads=1)
    dates = {d: date for c, ds in zip(corpora, truth["dates"]) for d, date in zip(c.doc_ids, ds)}
    t0 = time.perf_counter()
    table = ldacli.trends(model, dates, by="month", as_frame=False)
    seconds = time.perf_counter() - t0
    # each planted topic (as it is the last step it lives) matched one to one to the model's topics
    matching = match_topics(_all_truth(truth), model)
    periods = sorted(set(table["period"].tolist()))
    print(f"\n## trends: one model of all {len(ids):,} documents (K={T}), by month, in {seconds:.3f} s")
    print("\n| planted topic | model topic (JS) | true share by month | trends' share by month | max abs error "
          "(its standard error) |")
    print("|---|---|---|---|---|")
    errors = []
    for (t, k), d in zip(matching.pairs, matching.distances):
        rows = table["topic"] == k
        got, se = table["share"][rows], table["se"][rows]
        true = np.nan_to_num(truth["share"][:, t])
        err = np.abs(got - true)
        recovered = d <= 0.3 and t != DRIFTING
        if recovered:
            live = true > 0
            errors.append((float(err.max()), float(np.max(err[live] / se[live]))))
        print(f"| {t} | {k} ({d:.2f}{'' if recovered else ': not one topic in this model'}) | "
              f"{' '.join(f'{v:.2f}' for v in true)} | {' '.join(f'{v:.2f}' for v in got)} | {err.max():.3f} "
              f"({se[err.argmax()]:.3f}) |")
    print(f"\nover the {len(errors)} planted topics the model recovered (JS <= 0.3; not the drifting one, which a "
          f"single model splits), in {len(periods)} months: largest error {max(e for e, _ in errors):.3f}, "
          f"at most {max(z for _, z in errors):.1f} of trends' standard errors in the months the topic lives")


def _all_truth(truth: dict) -> ldacli.Model:
    """Every planted topic as it is at the step where it is most alive (the last step it lives)."""
    T = truth["phi"].shape[1]
    last = [max(s for s in range(len(truth["alive"])) if t in truth["alive"][s]) for t in range(T)]
    phi = np.array([truth["phi"][last[t], t] for t in range(T)])
    return ldacli.Model(phi, np.zeros((0, T)), np.ones(T), 0.01, list(truth["vocab"]), [], np.zeros(0, np.int64),
                        np.zeros(0))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--docs", type=int, default=800, help="documents per step")
    p.add_argument("--words", type=int, default=2000)
    p.add_argument("--topic-beta", type=float, default=0.05)
    p.add_argument("--drift-from", type=int, default=3)
    p.add_argument("--drift-step", type=float, default=0.2)
    p.add_argument("--iterations", type=int, default=300, help="sweeps of a cold model")
    p.add_argument("--warm", type=int, default=150, help="sweeps of a warm start")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", help="a folder to keep the models in (else a temporary one)")
    args = p.parse_args()
    truth = planted_schedule(args.steps, args.docs, args.words, topic_beta=args.topic_beta,
                             drift_from=args.drift_from, drift_step=args.drift_step, seed=args.seed)
    print(f"planted schedule: {args.steps} steps of {args.docs} documents, {truth['phi'].shape[1]} planted topics "
          f"over {args.words} words; alive per step: "
          + "; ".join(f"{s}: {len(a)}" for s, a in enumerate(truth["alive"])))
    print("schedule (topic: first step alive - first step dead): "
          + ", ".join(f"{t}: {a}-{'' if d is None else d}" for t, a, d in SCHEDULE if t < truth["phi"].shape[1]))
    folder = args.keep or tempfile.mkdtemp(prefix="planted-schedule-")
    try:
        warm = os.path.join(folder, "warm")
        cold = os.path.join(folder, "cold")
        os.makedirs(warm, exist_ok=True)
        os.makedirs(cold, exist_ok=True)
        t0 = time.perf_counter()
        paths = train_schedule(truth, warm, iterations=args.iterations, warm=args.warm, seed=args.seed)
        print(f"warm-started schedule trained in {time.perf_counter() - t0:.0f} s")
        compare(truth, paths, "warm starts with --add-topics/--remove-topics as the truth says")
        t0 = time.perf_counter()
        paths = train_schedule(truth, cold, iterations=args.iterations, warm=args.warm, seed=args.seed,
                               warm_start=False)
        print(f"\ncold schedule trained in {time.perf_counter() - t0:.0f} s")
        compare(truth, paths, "every step trained cold and apart (diff's matching)")
        compare_trends(truth, folder, args.iterations, args.seed)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
