"""What the commands show of their results, for people (text, a table, JSON): the lines of
``topics``, ``perplexity`` and ``diff``, made from what the library returns. Imported with the
commands, not with the group (:mod:`ldacli.cli`), so that ``--help`` does not pay for it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ldacli.cli.text import tell
from ldacli.escaping import json_text, printable
from ldacli.files.tables import delimited_line, text_cell
from ldacli.scoring.diagnostics import FIELD_NAMES, THRESHOLDS, WORD_FIELDS
from ldacli.scoring.diagnostics import FIELDS as DIAGNOSTIC_FIELDS
from ldacli.topic_names import SEEDS_KEPT_WITHIN, lost_seeds_text


# --- topics ---------------------------------------------------------------------------------------------

def topic_lines(path, m, tops, scores, fmt, measure, values, diagnostics=None, seeds=None):
    """``ldacli topics``' lines: the topics of the model ``m`` at ``path`` (``tops``, their top
    words), with the coherence ``scores`` of ``measure`` and the ``diagnostics`` when asked, and
    the seeded topics' ``seeds`` (:func:`~ldacli.topic_names.seed_ranks` by topic: those that
    lost them said so), in ``fmt`` (json, tsv or text; tsv's summaries go to stderr)."""
    asymmetric = not np.all(m.alpha == m.alpha[0])  # then each topic's alpha is worth showing
    names = m.topic_names
    named = any(n is not None for n in names)
    diagnosed = diagnostics["topics"] if diagnostics else None
    seeds = seeds or {}
    lost = {k: lost_seeds_text(t) for k, t in seeds.items() if t["lost"]}
    if fmt == "json":
        def words(k, words):
            if diagnosed is None:
                return [{"word": w, "probability": p} for w, p in words]
            return [{"word": w, "probability": p, **{f: d[f] for f in WORD_FIELDS if f not in ("rank", "word", "prob")}}
                    for (w, p), d in zip(words, diagnosed[k]["words"])]

        out = {"model": path, "topics": [
            {"topic": k, "name": names[k], "alpha": float(m.alpha[k]),
             **({"coherence": scores["per_topic"][k]} if scores else {}),
             **({"diagnostics": {f: diagnosed[k][f] for f in FIELD_NAMES}, "flags": diagnosed[k]["flags"],
                 "measured": diagnosed[k]["measured"]} if diagnosed else {}),
             **({"seeds": {key: seeds[k][key] for key in ("words", "ranks", "lost")}} if k in seeds else {}),
             "words": words(k, ws)}
            for k, ws in enumerate(tops)]}
        if scores:
            out["coherence"] = {key: scores[key] for key in
                                ("measure", "top_words", "epsilon", "mean", "reference", "reference_docs")}
        if diagnostics:
            out["diagnostics"] = {"corpus": diagnostics["corpus"], "top_words": diagnostics["top_words"],
                                  "flags": diagnostics["flags"], "thresholds": THRESHOLDS}
        yield json_text(out, indent=2)
    elif fmt == "tsv":
        def row(fields):
            return delimited_line(map(str, fields), "\t")

        yield row(["topic", "rank", "word", "probability"] + ([measure] if scores else []) + (["name"] if named else [])
                  + (list(FIELD_NAMES) + ["flags", "measured"] if diagnosed else []) + (["seeds_lost"] if seeds else []))
        for k, words in enumerate(tops):
            extra = [f"{scores['per_topic'][k]:.6g}"] if scores else []
            extra += [names[k] or ""] if named else []
            if diagnosed:
                extra += [text_cell(diagnosed[k][f], kind) for f, kind, _, _ in DIAGNOSTIC_FIELDS]
                extra += [" ".join(diagnosed[k]["flags"]), " ".join(diagnosed[k]["measured"])]
            extra += [lost.get(k, "")] if seeds else []
            for r, (w, p) in enumerate(words, 1):
                yield row([k, r, w, f"{p:.6g}"] + extra)
        if scores:
            tell(values, f"mean {measure} coherence {scores['mean']:.6g} (top {scores['top_words']} words, "
                          f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} reference documents)")
        if diagnostics:
            tell(values, _flag_summary(diagnostics))
        if lost:
            tell(values, _lost_summary(seeds, lost))
    else:
        width = len(str(len(tops) - 1))
        for k, words in enumerate(tops):
            label = f"topic {k:>{width}}" + (f" {names[k]}" if names[k] else "")
            if asymmetric:
                label += f" (alpha {m.alpha[k]:.4g})"
            if scores:
                label += f" [{measure} {scores['per_topic'][k]:.4g}]"
            if diagnosed and diagnosed[k]["flags"]:
                label += f" [junk? {', '.join(diagnosed[k]['flags'])}]"
            if diagnosed and diagnosed[k]["measured"]:
                label += f" [measured: {', '.join(diagnosed[k]['measured'])}]"
            if k in lost:
                label += f" [{lost[k]}]"
            yield printable(f"{label}: " + "  ".join(f"{w} ({p:.3f})" for w, p in words))
            if diagnosed:
                yield " " * (width + 8) + "  ".join(f"{f} {_short(diagnosed[k][f])}" for f in FIELD_NAMES)
        if scores:
            yield printable(f"mean {measure} coherence: {scores['mean']:.6g} (top {scores['top_words']} words, "
                            f"epsilon {scores['epsilon']:g}, {scores['reference_docs']} documents of "
                            f"{scores['reference']})")
        if diagnostics:
            yield printable(_flag_summary(diagnostics))
            raised = {f for t in diagnosed for f in t["flags"] + t["measured"]}
            for flag in diagnostics["flags"]:
                if flag["name"] in raised:
                    yield printable(f"  {flag['name']}: {flag['meaning']}")
        if lost:
            yield printable(_lost_summary(seeds, lost))


def _lost_summary(seeds: dict, lost: dict) -> str:
    """``1 of 5 seeded topics lost their seeds: 0 space (...)``, with what makes a seed weak."""
    return (f"{len(lost)} of {len(seeds)} seeded topics lost their seeds (none among the topic's {SEEDS_KEPT_WITHIN} "
            f"words of most tokens), so their names are not what they are about: "
            + ", ".join(f"{k} {seeds[k]['name']}" for k in lost)
            + ". Weak seeds: rare words, words of another theme, too few, a weak --seed-strength "
              "(docs/guide/seeded-topics.md)")


def _short(x) -> str:
    """A diagnostic as text: 4 significant digits, whole numbers without decimals, '-' for none."""
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer() or abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def _flag_summary(diagnostics: dict) -> str:
    """``flagged 3 of 50 topics as likely junk: 7 (background), ...; measured, not a verdict: 9
    (near-duplicates), ...`` (diagnostics of a corpus)."""
    topics = diagnostics["topics"]
    flagged = [t for t in topics if t["flags"]]
    measured = [t for t in topics if t["measured"]]
    corpus = diagnostics["corpus"]
    where = f" (against {corpus['source']}, {corpus['n_docs']:,} documents)" if corpus else ""
    out = (f"flagged {len(flagged)} of {len(topics)} topics as likely junk{where}: "
           + ", ".join(f"{t['topic']} ({' '.join(t['flags'])})" for t in flagged)) if flagged else \
        f"flagged none of {len(topics)} topics as likely junk{where}"
    if measured:
        out += ("; measured, not a verdict (junk often is, good topics sometimes are): "
                + ", ".join(f"{t['topic']} ({' '.join(t['measured'])})" for t in measured))
    return out


# --- perplexity -----------------------------------------------------------------------------------------

def perplexity_lines(result: dict) -> Iterator[str]:
    """``ldacli perplexity``'s lines for people: the estimator and how it estimates, the documents
    and tokens scored and left out, the log-likelihood with its standard error, the perplexity
    and the seed (:func:`ldacli.perplexity`'s ``result``)."""
    estimator = result["estimator"]
    if estimator == "document-completion":
        how = "theta from half of each document, the other half scored"
        se_how = f"batch means over {result['batches']} blocks of sweeps"
    elif estimator == "left-to-right":
        if result["resample"]:
            how = f"{result['particles']} particles re-drawing earlier topics (quadratic), all tokens scored"
            se_how = "across particles"
        else:
            how = f"{result['filters']} particle filters of {result['particles']} particles, all tokens scored"
            se_how = "across filters"
    else:
        how = f"{result['samples']} samples of theta from the prior, all tokens scored"
        se_how = "across samples"
    yield f"estimator:       {estimator} ({how})"
    yield f"documents:       {result['n_docs']}"
    yield f"tokens scored:   {result['n_tokens']}"
    yield f"unknown tokens:  {result['unknown_tokens']} (of words the model has never seen, left out)"
    yield f"removed tokens:  {result['removed_tokens']} (of words its vocabulary rules remove, left out)"
    yield f"log-likelihood:  {result['log_likelihood']:.6g} (natural log)"
    yield f"standard error:  {result['standard_error']:.3g} ({se_how})"
    yield f"perplexity:      {result['perplexity']:.6g}"
    yield f"seed:            {result['seed']}"


# --- diff -----------------------------------------------------------------------------------------------

def diff_lines(result: dict, a, b, fmt: str, max_drift: float | None, moved: list[dict]) -> list[str]:
    """``ldacli diff``'s lines: :func:`ldacli.diff_models`'s ``result`` of the models ``a`` and ``b``
    (with their paths, ``result["a"]`` and ``result["b"]``), the pairs that ``moved`` further than
    ``max_drift``; in ``fmt``, text or json."""
    lines: list[str] = []

    def line(text: str) -> None:
        lines.append(printable(text))

    if fmt == "json":
        lines.append(json_text({**result, "max_drift": max_drift, "drifted": [[t["a"], t["b"]] for t in moved]},
                               indent=2))
    else:
        line(f"A: {result['a']} ({a.n_topics} topics)    B: {result['b']} ({b.n_topics} topics)")
        if result["pairing"] == "descent":
            how = "updated from A (a night's documents added)" if isinstance(b.params.get("update"), dict) \
                else "warm-started from A"
            line(f"B was {how}: each topic of B is paired with the topic of A it continues")
        line(f"matched {sum(t['matched'] for t in result['topics'])}, renumbered {result['renumbered']}, "
             f"JS distance median {result['median_distance']:.3f}, max {result['max_distance']:.3f}")
        n = result["top_words"]
        for t in result["topics"]:
            mark = "" if t["matched"] else "  (no counterpart)"
            line(f"A {_named(t['a'], t['name_a']):>3} ~ B {_named(t['b'], t['name_b']):<3} JS "
                 f"{t['distance']:.3f}, {t['overlap']}/{n} top words shared, prevalence "
                 f"{100 * t['prevalence_a']:.1f}% -> {100 * t['prevalence_b']:.1f}%{mark}: "
                 + " ".join(t["top_words_b"][:8]))
            if t["gained"] or t["lost"]:
                line(f"        + {' '.join(t['gained']) or '-'}    - {' '.join(t['lost']) or '-'}")
        tops_a, tops_b = a.top_words(8), b.top_words(8)
        updated = isinstance(b.params.get("update"), dict)  # (an update's freed topics: removed and added)
        why_removed = "merged, its id freed for the night" if updated else "--remove-topics"
        why_added = "a new theme of the night" if updated else "--add-topics"
        for k in result["removed"]:
            line(f"A {a.topic_label(k):>3} removed ({why_removed}): " + " ".join(w for w, _ in tops_a[k]))
        for k in result["added"]:
            line(f"B {b.topic_label(k):>3} added ({why_added}): " + " ".join(w for w, _ in tops_b[k]))
        for side, m in (("a", a), ("b", b)):
            if result[f"only_in_{side}"]:
                line(f"only in {side.upper()}: topics "
                     + ", ".join(m.topic_label(k) for k in result[f"only_in_{side}"]))
    return lines


def _named(k: int, name: str | None) -> str:
    return f"{k} ({name})" if name else str(k)
