"""``ldacli report``: one self-contained, interactive HTML file describing a model.

The page works offline: every script is inlined (Vega, Vega-Lite and Vega-Embed, bundled by
``vl-convert-python``, the ``report`` extra, and cached per user after the first bundling) and
nothing is fetched when it is viewed. It shows:

* a topic map: topics placed by classical multidimensional scaling of the Jensen-Shannon
  distances between their word distributions (as LDAvis does), circle area by prevalence (the
  mean of the topic's proportion over the documents, as export and diff show it), labelled by id and top words; a topic is selected by clicking it or with the keyboard in a
  drop-down list;
* the selected topic's words ranked by relevance ``lambda log p(w|k) + (1 - lambda) log(p(w|k) /
  p(w))`` (Sievert & Shirley 2014) with a lambda slider, as bars of the topic's estimated count
  of the word beside the word's estimated count in the corpus;
* the model at a glance: method, sampler, sizes, priors (a chart of alpha when it is
  asymmetric), the trace (log-likelihood or ELBO) against sweeps, why training stopped, seed,
  version, lineage;
* with a corpus (``--corpus``, or the training corpus when it can be found as ``topics
  --coherence`` does): NPMI coherence per topic, prevalence over the corpus, and each topic's
  most representative documents (ids, and first words for text corpora);
* every topic in a sortable table with its diagnostics (:mod:`ldacli.scoring.diagnostics`; those
  of the model alone without a corpus), the topics flagged as likely junk marked, their flags
  named and explained, and the seeded topics that lost their seeds said so beside their names
  (:func:`ldacli.topic_names.seed_ranks`);
* with ``--diff OLD.npz``: the topics matched to the old model's and their drift.

``--png``/``--svg`` also write the topic map and the trace as images beside the report.
Colours are a colour-blind-safe pair (blue, orange); the page reads at a laptop's width.
"""

from __future__ import annotations

import io
import os
import time

import numpy as np

from ldacli.corpora.corpus import Corpus
from ldacli.diff import diff_models, js_distances
from ldacli.diff import prevalence as diff_prevalence
from ldacli.exporting import topic_names
from ldacli.scoring.inference import corpus_theta
from ldacli import settings
from ldacli.api_input import as_corpus, is_path
from ldacli.corpora.formats.read import INPUT_FORMAT, VOCAB
from ldacli.errors import InputError, LdacliError, SettingError
from ldacli.files.locking import locked
from ldacli.files.fileio import atomic_write, file_sha256, open_regular
from ldacli.info import describe, file_name
from ldacli.methods.registry import METHODS
from ldacli.settings import Flag, Setting, Text
from ldacli.model import Model
from ldacli.scoring.coherence import coherence, training_reference
from ldacli.scoring.diagnostics import FIELDS as DIAGNOSTIC_FIELDS
from ldacli.scoring.diagnostics import diagnostics as diagnose
from ldacli.topic_names import SEEDS_KEPT_WITHIN, lost_seeds_text
from ldacli.version import __version__
from ldacli.pages.webpage import attr, javascript_bundle, page, text, vl_convert

# Words kept per topic for each lambda in LAMBDA_GRID (their union is what the page ranks).
WORDS_SHOWN = 30
LAMBDA_GRID = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
DEFAULT_LAMBDA = 0.6
DOCS_SHOWN = 5
FIRST_WORDS = 25
BLUE, ORANGE, PALE = "#4c78a8", "#f58518", "#c6d4e8"


# The settings of ``report`` besides its model, output and corpus.
SETTINGS = (
    Setting("diff", Text(path=True), None, "An older model: show the topics matched to its and their drift."),
    Setting("png", Flag(), False, "Also write the topic map and the trace as PNG images beside the report."),
    Setting("svg", Flag(), False, "Also write them as SVG images."),
)


# --- what the page shows ---------------------------------------------------------------------------

def topic_map(phi: np.ndarray) -> np.ndarray:
    """Coordinates (K, 2) of the topics: classical MDS (principal coordinates) of their
    Jensen-Shannon distances, as LDAvis's default. Signs are fixed so the layout is repeatable."""
    K = phi.shape[0]
    if K == 1:
        return np.zeros((1, 2))
    d2 = js_distances(phi, phi) ** 2
    J = np.eye(K) - 1.0 / K
    B = -0.5 * J @ d2 @ J
    values, vectors = np.linalg.eigh(B)
    top = np.argsort(values)[::-1][:2]
    coords = vectors[:, top] * np.sqrt(np.clip(values[top], 0, None))
    signs = np.sign(coords[np.argmax(np.abs(coords), axis=0), range(coords.shape[1])])
    coords = coords * np.where(signs == 0, 1, signs)
    return np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))


def word_table(phi: np.ndarray, share: np.ndarray, vocab: list[str], n_tokens: float) -> list[dict]:
    """For each topic the words that rank in its top :data:`WORDS_SHOWN` by relevance at some
    lambda of :data:`LAMBDA_GRID`: ``topic``, ``w`` word, ``p`` p(w|k), ``pw`` p(w) (the
    model's marginal), ``n`` the word's estimated count, ``nk`` the topic's share of it.
    ``share``: each topic's share of the corpus's tokens (without a corpus, its prevalence)."""
    pw = share @ phi
    rows = []
    with np.errstate(divide="ignore"):
        log_phi, log_lift = np.log(phi), np.log(phi / pw)
    for k in range(phi.shape[0]):
        chosen: set[int] = set()
        for lam in LAMBDA_GRID:
            relevance = lam * log_phi[k] + (1 - lam) * log_lift[k]
            chosen.update(np.argsort(-relevance, kind="stable")[:WORDS_SHOWN].tolist())
        for w in sorted(chosen):
            rows.append({"topic": k, "w": vocab[w], "p": float(phi[k, w]), "pw": float(pw[w]),
                         "n": float(pw[w] * n_tokens), "nk": float(phi[k, w] * share[k] * n_tokens)})
    return rows


def _first_words(corpus: Corpus, docs: list[int]) -> dict[int, str]:
    """The first words of documents of a text corpus (file or folder), read again from it."""
    out: dict[int, str] = {}
    source = corpus.source
    try:
        if corpus.format == "text" and os.path.isfile(source):
            wanted = {int(corpus.doc_ids[d]): d for d in docs}
            with io.TextIOWrapper(open_regular(source), encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, start=1):
                    if lineno in wanted:
                        out[wanted[lineno]] = " ".join(line.split()[:FIRST_WORDS])
                        if len(out) == len(wanted):
                            break
        elif corpus.format == "textdir" and os.path.isdir(source):
            for d in docs:
                with io.TextIOWrapper(open_regular(os.path.join(source, corpus.doc_ids[d])), encoding="utf-8",
                                      errors="replace") as f:
                    out[d] = " ".join(f.read(4000).split()[:FIRST_WORDS])
    except (OSError, ValueError, InputError):
        return {}
    return out


def corpus_view(model: Model, corpus: Corpus) -> dict:
    """Coherence (NPMI), prevalence over the corpus (the mean of each topic's proportion over
    its documents, as :func:`ldacli.diff.prevalence` over the training documents, which export
    and diff show), each topic's share of its tokens (which the word bars' counts are estimated
    from), and representative documents per topic. Documents are the training documents when
    ``corpus`` is the training corpus (theta from the model), else their theta is inferred."""
    scores = coherence(model, corpus, measure="npmi")
    theta, ids = corpus_theta(model, corpus)
    lengths = corpus.doc_lengths.astype(np.float64)
    prevalence = theta.mean(axis=0) if theta.shape[0] else model.alpha / model.alpha.sum()
    token_share = (theta * lengths[:, None]).sum(axis=0) / max(lengths.sum(), 1.0)
    top_docs = {k: np.argsort(-theta[:, k], kind="stable")[:DOCS_SHOWN].tolist() for k in range(model.n_topics)}
    firsts = _first_words(corpus, sorted({d for docs in top_docs.values() for d in docs}))
    counts = corpus.counts
    documents = {}
    for k, docs in top_docs.items():
        entries = []
        for d in docs:
            if d in firsts:
                text = firsts[d]
            else:  # a bag of words: its most frequent words
                row = counts[[d]]
                order = np.argsort(-row.data, kind="stable")[:12]
                text = "(most frequent) " + " ".join(corpus.vocab[i] for i in row.indices[order])
            entries.append({"id": str(ids[d]), "share": float(theta[d, k]), "text": text})
        documents[k] = entries
    return {"coherence": [None if np.isnan(v) else float(v) for v in scores["per_topic"]],
            "coherence_mean": scores["mean"], "prevalence": prevalence.tolist(),
            "token_share": token_share.tolist(), "documents": documents,
            "source": corpus.source, "n_docs": corpus.n_docs}


# --- the page ------------------------------------------------------------------------------------------

def _map_spec(topics: list[dict]) -> dict:
    """The topic map: circles by prevalence, the selected one (the ``selected`` signal) orange;
    as wide as its box, which is square."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "width": "container", "height": "container", "autosize": {"type": "fit", "contains": "padding"},
        "data": {"values": topics},
        "params": [{"name": "selected", "value": 0}],
        "layer": [
            {"mark": {"type": "circle", "stroke": "#333", "strokeWidth": 0.5, "cursor": "pointer"},
             "encoding": {
                 "x": {"field": "x", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                 "y": {"field": "y", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                 "size": {"field": "prevalence", "type": "quantitative", "legend": None,
                          "scale": {"range": [30, 1800]}},
                 "color": {"condition": {"test": "datum.topic == selected", "value": ORANGE}, "value": BLUE},
                 "opacity": {"condition": {"test": "datum.topic == selected", "value": 0.95}, "value": 0.55},
                 "tooltip": [{"field": "topic", "title": "topic"}, {"field": "name", "title": "name"},
                             {"field": "label", "title": "top words"},
                             {"field": "prevalence", "format": ".1%", "title": "prevalence"},
                             {"field": "flags", "title": "likely junk"}]}},
            {"mark": {"type": "text", "fontSize": 10, "dy": -2, "fontWeight": "bold"},
             "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"},
                          "text": {"field": "topic"}}},
        ],
        "config": {"view": {"stroke": None}},
    }


def _words_spec(words: list[dict]) -> dict:
    """The selected topic's words by relevance at ``lambda``: the topic's estimated count of each
    (orange) over the word's count in the corpus (pale), the word written over its bars (cut
    with an ellipsis where it is long); as wide as its box."""
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "width": "container", "height": 15 * WORDS_SHOWN, "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": words},
        "params": [{"name": "selected", "value": 0}, {"name": "lambda", "value": DEFAULT_LAMBDA}],
        "transform": [
            {"filter": "datum.topic == selected"},
            {"calculate": "lambda * log(datum.p) + (1 - lambda) * log(datum.p / datum.pw)", "as": "relevance"},
            {"window": [{"op": "row_number", "as": "rank"}], "sort": [{"field": "relevance", "order": "descending"}]},
            {"filter": f"datum.rank <= {WORDS_SHOWN}"},
        ],
        "encoding": {"y": {"field": "rank", "type": "ordinal", "axis": None}},
        "layer": [
            {"mark": {"type": "bar", "color": PALE},
             "encoding": {"x": {"field": "n", "type": "quantitative", "title": "estimated count: corpus (pale), topic",
                                "axis": {"tickCount": 4}},
                          "tooltip": [{"field": "w", "title": "word"},
                                      {"field": "n", "format": ",.0f", "title": "in the corpus"},
                                      {"field": "nk", "format": ",.0f", "title": "in this topic"},
                                      {"field": "p", "format": ".4f", "title": "p(w | topic)"},
                                      {"field": "rank", "title": "rank"}]}},
            {"mark": {"type": "bar", "color": ORANGE}, "encoding": {"x": {"field": "nk", "type": "quantitative"}}},
            {"mark": {"type": "text", "align": "left", "dx": 3, "fontSize": 11, "limit": 220},
             "encoding": {"x": {"datum": 0}, "text": {"field": "w"}}},
        ],
        "config": {"view": {"stroke": None}},
    }


def _trace_spec(model: Model) -> dict:
    method = METHODS.get(model.params.get("method", "cgs"))
    label = method.trace_label if method else "trace"
    unit = method.unit if method else "sweep"
    values = [{"i": int(i), "v": float(v)} for i, v in zip(model.loglik_iterations, model.loglik_per_token)]
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": {"text": f"{label[0].upper()}{label[1:]} against {unit}s", "fontSize": 13},
        "width": 420, "height": 180, "data": {"values": values},
        "mark": {"type": "line", "point": True, "color": BLUE},
        "encoding": {"x": {"field": "i", "type": "quantitative", "title": unit},
                     "y": {"field": "v", "type": "quantitative", "title": label, "scale": {"zero": False}},
                     "tooltip": [{"field": "i", "title": unit}, {"field": "v", "format": ".5f", "title": label}]},
    }


def _fluid(spec: dict) -> dict:
    """``spec`` as wide as its box, for the page (images keep their fixed width)."""
    return {**spec, "width": "container", "autosize": {"type": "fit-x", "contains": "padding"}}


def _alpha_spec(model: Model) -> dict:
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": {"text": "Learned alpha per topic", "fontSize": 13},
        "width": 420, "height": 120,
        "data": {"values": [{"topic": k, "alpha": float(a)} for k, a in enumerate(model.alpha)]},
        "mark": {"type": "bar", "color": BLUE},
        "encoding": {"x": {"field": "topic", "type": "ordinal"}, "y": {"field": "alpha", "type": "quantitative"},
                     "tooltip": [{"field": "topic"}, {"field": "alpha", "format": ".4g"}]},
    }


def _static_map_spec(topics: list[dict]) -> dict:
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": "Topic map (Jensen-Shannon distance, MDS; area: prevalence)",
        "width": 520, "height": 520, "data": {"values": topics}, "background": "white",
        "layer": [
            {"mark": {"type": "circle", "color": BLUE, "opacity": 0.6, "stroke": "#333", "strokeWidth": 0.5},
             "encoding": {"x": {"field": "x", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                          "y": {"field": "y", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                          "size": {"field": "prevalence", "type": "quantitative", "legend": None,
                                   "scale": {"range": [40, 2400]}}}},
            {"mark": {"type": "text", "fontSize": 9, "dy": 10},
             "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"},
                          "text": {"field": "short"}}},
        ],
    }


def build(model_path: str, model: Model, *, corpus: Corpus | None = None, old: Model | None = None,
          old_path: str | None = None) -> dict:
    """Everything the page shows, as plain data (see the module docstring)."""
    K = model.n_topics
    info = describe(model_path)
    view = corpus_view(model, corpus) if corpus is not None else None
    diagnostics = diagnose(model, corpus)
    prevalence = np.asarray(view["prevalence"]) if view is not None else diff_prevalence(model)
    coords = topic_map(model.phi)
    tops = model.top_words(5)
    names = topic_names(model)
    topics = [{"topic": k, "name": names[k], "x": float(coords[k, 0]), "y": float(coords[k, 1]),
               "prevalence": float(prevalence[k]), "alpha": float(model.alpha[k]),
               "label": " ".join(w for w, _ in tops[k]), "short": f"{k} " + " ".join(w for w, _ in tops[k][:2]),
               "flags": " ".join(diagnostics["topics"][k]["flags"])}
              for k in range(K)]
    n_tokens = float(model.params.get("n_tokens") or 1e6)
    words = word_table(model.phi, np.asarray(view["token_share"]) if view is not None else prevalence, model.vocab,
                       n_tokens)
    data = {
        "file": model_path, "info": info, "topics": topics,
        "charts": {"map": _map_spec(topics), "words": _words_spec(words),
                   "trace": _fluid(_trace_spec(model)) if model.loglik_iterations.size else None,
                   "alpha": None if np.all(model.alpha == model.alpha[0]) else _fluid(_alpha_spec(model))},
        "trace": _trace_spec(model) if model.loglik_iterations.size else None,
        "corpus": view, "diff": None, "diagnostics": diagnostics,
    }
    if old is not None:
        result = diff_models(old, model, a_sha256=file_sha256(old_path) if old_path else None)
        data["diff"] = {"path": old_path, **result,
                        "removed_words": {k: " ".join(w for w, _ in old.top_words(8)[k]) for k in result["removed"]},
                        "added_words": {k: " ".join(w for w, _ in model.top_words(8)[k]) for k in result["added"]}}
    return data


def _glance(data: dict) -> str:
    info = data["info"]
    m, its, s, pr, prov = info["method"], info["iterations"], info["sizes"], info["priors"], info["provenance"]
    settings = ", ".join(f"{k} {v}" for k, v in m["settings"].items() if v is not None)
    rows = [
        ("method", f"{m['name']}, {m['title']}" + (f" ({settings})" if settings else "")),
        ("sizes", f"K = {s['topics']} topics, V = {s['words']} words, D = {s['documents']} documents, "
                  f"N = {s['tokens']} tokens"),
        (f"{its['unit']}s", f"{its['done']} done of {its['asked']} asked"
                            + (f"; stopped: {its['stopped']}" if its.get("stopped") else "")),
        ("alpha", f"sum {pr['alpha']['sum']:.4g}, mean {pr['alpha']['mean']:.4g}, "
                  f"{'symmetric' if pr['alpha']['symmetric'] else 'asymmetric'}; {pr['alpha']['source']}"),
        ("beta", f"{pr['beta']['value']:.4g}; {pr['beta']['source']}"),
        ("seed", str(prov["seed"])),
        ("training corpus", f"{file_name(prov['corpus_source'])} ({prov['corpus_format']}), fingerprint "
                            f"{str(prov['corpus_fingerprint'])[:16]}…"),
        ("ldacli version", f"{prov['ldacli_version']} (report by {__version__})"),
    ]
    if info.get("stopping"):
        rows.append(("early stopping", ", ".join(f"{k} {v}" for k, v in info["stopping"].items())))
    for generation, parent in enumerate(info.get("lineage") or [], start=1):
        rows.append(("parent" if generation == 1 else f"ancestor {generation}",
                     f"{file_name(parent['path'])} (sha256 {parent['sha256'][:12]})"))
    body = "".join(f"<tr><th scope='row'>{text(k)}</th><td>{text(v)}</td></tr>" for k, v in rows)
    return f"<div class='table-wrap'><table>{body}</table></div>"


def _documents(data: dict) -> str:
    """Each topic's representative documents (the selected topic's shown)."""
    view = data["corpus"]
    if view is None:
        return ("<p class='muted'>No corpus given (<code>--corpus</code>) and the training corpus could not be "
                "found: no documents to show.</p>")
    out = [f"<p class='muted'>From {text(file_name(view['source']))} ({view['n_docs']:,} documents).</p>"]
    for k in range(len(data["topics"])):
        items = "".join(f"<li><b>{text(e['id'])}</b> ({100 * e['share']:.0f}%): {text(e['text'])}</li>"
                        for e in view["documents"][k])
        out.append(f"<div class='docs' data-topic='{k}'{'' if k == 0 else ' hidden'}><ol>{items}</ol></div>")
    return "".join(out)


# The diagnostics the topic table shows (all of them: ldacli export MODEL diagnostics), with their headers.
TABLE_DIAGNOSTICS = (("tokens", "tokens", ",.0f"), ("effective_documents", "eff. docs", ",.0f"),
                     ("umass", "UMass", ".1f"), ("exclusivity", "exclusivity", ".3f"),
                     ("corpus_dist", "corpus dist.", ".2f"), ("document_dist", "document dist.", ".2f"),
                     ("companion_topics", "companion topics", ".1f"), ("rank_1_docs", "rank-1 share", ".3f"),
                     ("top_docs_share", "top-10 docs' share", ".2f"),
                     ("top_doc_similarity", "top docs' similarity", ".2f"))


def _number_cell(value, fmt: str) -> str:
    if value is None:
        return "<td class='num' data-value='nan'>-</td>"
    return f"<td class='num' data-value='{float(value)!r}'>{format(value, fmt)}</td>"


def _topic_table(data: dict) -> str:
    """Every topic with its diagnostics, sortable by any column (a header's title says what it
    is); the topics flagged as likely junk are marked and their flags named; a click (or Enter) on
    a row selects the topic."""
    view, diagnostics = data["corpus"], data["diagnostics"]
    meaning = {f[0]: f[3] for f in DIAGNOSTIC_FIELDS}
    shown = [d for d in TABLE_DIAGNOSTICS if view is not None or d[0] in ("exclusivity",)]
    heads = [("topic", "num", ""), ("name", "text", ""),
             ("prevalence", "num", "the mean of the topic's proportion over the documents (each counts once)"),
             ("top words", "text", ""), ("likely junk", "text", "the flags this topic raises, and what it measured "
                                                                "that junk often does (see above)"),
             ("alpha", "num", "the topic's document-topic prior")]
    if view is not None:
        heads.append(("NPMI", "num", "NPMI coherence of the top 10 words (-1 to 1, higher is better)"))
    heads += [(label, "num", meaning[field]) for field, label, _ in shown]
    head = "".join(f"<th scope='col' data-type='{t}'{' class=num' if t == 'num' else ''}"
                   f"{f' title={chr(39)}{attr(tip)}{chr(39)}' if tip else ''}><button>{h}</button></th>"
                   for h, t, tip in heads)
    rows = []
    for t, d in zip(data["topics"], diagnostics["topics"]):
        k = t["topic"]
        mark = "<span class='flag' aria-hidden='true'>⚑</span> " if d["flags"] else ""
        lost = (f" <span class='flag seeds-lost' title='{attr(lost_seeds_text(d['seeds']))}'>(seeds lost)</span>"
                if d["seeds"] and d["seeds"]["lost"] else "")
        cells = [f"<td class='num'>{mark}{k}</td>", f"<td>{text(t['name'])}{lost}</td>",
                 f"<td class='num' data-value='{t['prevalence']!r}'>{100 * t['prevalence']:.1f}%</td>",
                 f"<td class='wide'>{text(t['label'])}</td>",
                 f"<td class='drift{' narrow' if d['flags'] else ''}'>{' '.join(d['flags'])}"
                 + (f" <span class='muted'>measured: {' '.join(d['measured'])}</span>" if d["measured"] else "")
                 + "</td>",
                 f"<td class='num' data-value='{t['alpha']!r}'>{t['alpha']:.4g}</td>"]
        if view is not None:
            c = view["coherence"][k]
            cells.append(f"<td class='num' data-value='{'nan' if c is None else repr(c)}'>"
                         f"{'-' if c is None else f'{c:.3f}'}</td>")
        cells += [_number_cell(d[field], fmt) for field, _, fmt in shown]
        rows.append(f"<tr data-topic='{k}' tabindex='0'{' class=flagged' if d['flags'] else ''}>{''.join(cells)}</tr>")
    mean = (f"<p>Mean NPMI coherence {view['coherence_mean']:.3f} (top 10 words; in [-1, 1], higher is "
            f"better); prevalence: the mean proportion over the documents of {text(file_name(view['source']))}.</p>"
            if view is not None else
            "<p class='muted'>Prevalence: the mean proportion over the training documents. Without a corpus only the "
            "diagnostics of the model itself are shown, and no topic is flagged.</p>")
    flagged = [d for d in diagnostics["topics"] if d["flags"]]
    measured = [d for d in diagnostics["topics"] if d["measured"]]
    raised = {f for d in diagnostics["topics"] for f in d["flags"] + d["measured"]}
    legend = "".join(f"<li><b>{flag['name']}</b>{'' if flag['verdict'] else ' (measured, not a verdict)'}: "
                     f"{text(flag['meaning'])}</li>" for flag in diagnostics["flags"] if flag["name"] in raised)
    junk = (f"<p id='flagged'><span class='flag' aria-hidden='true'>⚑</span> {len(flagged)} of "
            f"{len(diagnostics['topics'])} topics flagged as likely junk: "
            f"{', '.join(str(d['topic']) for d in flagged)}.</p>"
            if flagged else "<p id='flagged'>No topic flagged as likely junk.</p>" if view is not None else "")
    if measured:
        junk += (f"<p id='measured'>Measured, not a verdict (junk often measures so, and good topics sometimes do): "
                 f"{', '.join(str(d['topic']) for d in measured)}.</p>")
    if raised:
        junk += f"<ul>{legend}</ul>"
    lost = [d for d in diagnostics["topics"] if d["seeds"] and d["seeds"]["lost"]]
    seeded = sum(1 for d in diagnostics["topics"] if d["seeds"])
    if lost:
        junk += (f"<p id='seeds-lost'>{len(lost)} of {seeded} seeded topics lost their seeds: none of a topic's seed "
                 f"words is among its {SEEDS_KEPT_WITHIN} words of most tokens, so its name is not what it is about: "
                 + "; ".join(f"{d['topic']} {text(d['name'] or '')} ({text(lost_seeds_text(d['seeds']))})"
                             for d in lost)
                 + ". Weak seeds are rare words, words of another theme, too few, or a weak --seed-strength.</p>")
    return (f"{mean}{junk}<div class='table-wrap'><table class='sortable' id='topic-table'><thead><tr>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>")


def _label(k: int, name: str | None) -> str:
    """A topic's id and, when it has one, its name (escaped)."""
    return f"{k} {text(name)}" if name else str(k)


def _diff(data: dict) -> str:
    """The Changes table: each pair of topics (the old topic, the new one, their distance, ...),
    then the topics a warm start removed and added, which are paired with nothing."""
    d = data["diff"]
    rows = "".join(
        f"<tr><td>{_label(t['a'], t['name_a'])}</td><td>{_label(t['b'], t['name_b'])}</td>"
        f"<td class='num{'' if t['matched'] else ' drift'}'>{t['distance']:.3f}</td>"
        f"<td class='num'>{t['overlap']}/{d['top_words']}</td>"
        f"<td class='num'>{100 * t['prevalence_a']:.1f}% → {100 * t['prevalence_b']:.1f}%</td>"
        f"<td class='wide'>{text(' '.join(t['gained']) or '-')}</td>"
        f"<td class='wide'>{text(' '.join(t['lost']) or '-')}</td></tr>"
        for t in d["topics"])
    empty = "<td class='num'>-</td>" * 3
    rows += "".join(f"<tr class='removed'><td>{k}</td><td class='drift nowrap'>removed</td>{empty}"
                    f"<td class='wide'>-</td><td class='wide'>{text(d['removed_words'][k])}</td></tr>"
                    for k in d["removed"])
    rows += "".join(f"<tr class='added'><td class='drift nowrap'>added</td><td>{k}</td>{empty}"
                    f"<td class='wide'>{text(d['added_words'][k])}</td><td class='wide'>-</td></tr>"
                    for k in d["added"])
    if d["pairing"] == "descent":
        removed, added = ", ".join(map(str, d["removed"])) or "none", ", ".join(map(str, d["added"])) or "none"
        how = (f"This model was warm-started from {text(file_name(d['path']))}: each topic is paired with the one "
               f"it continues; removed {removed}, added {added} (neither is drift). ")
    else:
        how = f"Against {text(file_name(d['path']))}, topics matched by the Hungarian algorithm: "
    return (f"<p>{how}{d['renumbered']} topics renumbered, JS distance median "
            f"{d['median_distance']:.3f}, max {d['max_distance']:.3f}; no counterpart (distance above "
            f"{d['threshold']}): old {d['only_in_a'] or 'none'}, new {d['only_in_b'] or 'none'}.</p>"
            "<div class='table-wrap'><table><thead><tr><th>old</th><th>new</th><th class='num'>distance</th>"
            "<th class='num'>top words shared</th>"
            f"<th class='num'>prevalence</th><th>words gained</th><th>words lost</th></tr></thead><tbody>{rows}"
            "</tbody></table></div>")


# The report's own script (after webpage.COMMON_JS): the topic list, the lambda slider, a click on the
# map or a table row select a topic; the map, the words and the documents follow.
SCRIPT = """
const C = ldacli.data.charts;
const pick = document.getElementById("topic-select");
ldacli.data.topics.forEach(t => {
  const o = document.createElement("option");
  o.value = String(t.topic);
  o.textContent = (t.flags ? "\u2691 " : "") + t.topic + ": " + (t.name ? t.name + " | " : "")
    + t.label + (t.flags ? " (likely junk: " + t.flags + ")" : "");
  pick.appendChild(o);
});
const slider = document.getElementById("lambda"), shown = document.getElementById("lambda-value");
ldacli.selected = () => ldacli.map.signal("selected");
ldacli.select = (k) => {
  k = Number(k);
  pick.value = String(k);
  document.querySelectorAll(".docs").forEach(el => { el.hidden = el.dataset.topic !== String(k); });
  document.querySelectorAll("#topic-table tbody tr").forEach(r => r.classList.toggle("selected", r.dataset.topic === String(k)));
  document.getElementById("words-title").textContent = "Topic " + k + ": words by relevance";
  return Promise.all([ldacli.map.signal("selected", k).runAsync(), ldacli.words.signal("selected", k).runAsync()]);
};
Promise.all([
  ldacli.embed("#map", C.map).then(r => { ldacli.map = r.view; }),
  ldacli.embed("#words", C.words).then(r => { ldacli.words = r.view; }),
  C.trace ? ldacli.embed("#trace", C.trace) : null,
  C.alpha ? ldacli.embed("#alpha", C.alpha) : null,
]).then(() => {
  ldacli.map.addEventListener("click", (event, item) => {
    if (item && item.datum && item.datum.topic !== undefined) ldacli.select(item.datum.topic);
  });
  pick.addEventListener("change", () => ldacli.select(pick.value));
  slider.addEventListener("input", () => {
    shown.textContent = Number(slider.value).toFixed(2);
    ldacli.words.signal("lambda", Number(slider.value)).runAsync();
  });
  document.querySelectorAll("#topic-table tbody tr").forEach(r => {
    r.addEventListener("click", () => ldacli.select(r.dataset.topic));
    r.addEventListener("keydown", e => { if (e.key === "Enter") ldacli.select(r.dataset.topic); });
  });
  return ldacli.select(0);
}).then(() => { ldacli.ready = true; window.ldacliReady = true; });
"""


def render(data: dict, bundle: str) -> str:
    """The HTML page (:func:`ldacli.pages.webpage.page`): the data, the charts and the scripts."""
    title = f"ldacli report: {os.path.basename(data['file'])}"
    s = data["info"]["sizes"]
    header = (f"<h1>{text(title)}</h1><nav class='muted'>{s['topics']} topics, {s['words']:,} words, "
              f"{s['documents']:,} documents; written {time.strftime('%Y-%m-%d %H:%M')} by ldacli {__version__}; "
              f"works offline. <a href='#table'>All topics</a><a href='#glance'>The model</a>"
              f"{'<a href=#diff>Changes</a>' if data['diff'] else ''}</nav>")
    explorer = (
        "<section id='topics'><div class='controls'>"
        "<label for='topic-select' class='grow'>Topic <select id='topic-select'></select></label>"
        f"<label for='lambda'>Relevance lambda <input id='lambda' type='range' min='0' max='1' step='0.05' "
        f"value='{DEFAULT_LAMBDA}'><output id='lambda-value'>{DEFAULT_LAMBDA:.2f}</output></label></div>"
        "<div class='panels'>"
        "<div class='panel'><h3>Topic map <span class='muted'>(Jensen-Shannon distance, MDS; area: prevalence; "
        "click a topic)</span></h3><div id='map' class='chart square'></div></div>"
        "<div class='panel'><h3 id='words-title'>Topic 0: words by relevance</h3>"
        "<p class='muted'>lambda 1 ranks by probability, 0 by how specific a word is to the topic.</p>"
        "<div id='words' class='chart'></div></div>"
        f"<div class='panel'><h3 id='docs-title'>Most representative documents</h3>{_documents(data)}</div>"
        "</div></section>")
    sections = [
        explorer,
        f"<section id='table'><h2>All topics</h2>{_topic_table(data)}</section>",
        f"<section id='glance'><h2>The model at a glance</h2>{_glance(data)}"
        "<div class='panels'><div id='trace' class='chart panel'></div><div id='alpha' class='chart panel'></div>"
        "</div></section>",
    ]
    if data["diff"] is not None:
        sections.append(f"<section id='diff'><h2>Changes since the old model</h2>{_diff(data)}</section>")
    return page(title, header, sections, {"charts": data["charts"], "topics": data["topics"]}, SCRIPT, bundle)


def write_report(model_path: str, output: str, *, corpus=None, diff: str | None = None, png: bool = False,
                 svg: bool = False, **reading) -> dict:
    """Write the report of the model at ``model_path`` to ``output`` (atomically, while holding
    its lock): what ``ldacli report`` does. Coherence, prevalence and representative documents
    are those of ``corpus`` (anything :func:`ldacli.api_input.as_corpus` takes; a path read for
    the model with the reading settings ``input_format`` and ``vocab``), by default of the
    training corpus when it can be found unchanged (else the report has none, and a note says
    why); with ``diff`` (an older model's file), its topics matched to the model's; with
    ``png``/``svg`` the map and the trace beside it (``NAME-map.png``, ``NAME-trace.svg``, ...).
    Returns what was written: ``{"report": path, "images": [...], "bytes": size, "notes": [...]}``,
    the notes for people (each naming its file)."""
    settings.check_names((INPUT_FORMAT, VOCAB), reading)
    with locked([output]):
        model = Model.load(model_path)
        if corpus is not None:
            corpus_given = corpus
            corpus = as_corpus(corpus, argument="corpus", reading=reading, model=model)
            notes = [f"{corpus_given}: {note}" for note in corpus.notes] if is_path(corpus_given) else []
        else:
            for name, value in reading.items():
                if value is not None:
                    raise SettingError(name, f"{name} applies with corpus only (how it is read)", ("corpus",))
            try:
                corpus, notes = training_reference(model, "--corpus"), []
            except LdacliError as exc:
                corpus, notes = None, [f"{model_path}: no coherence or documents in the report: {exc}"]
        return {**_write_report(model_path, model, output, corpus, diff, png, svg), "notes": notes}


def _write_report(model_path: str, model: Model, output: str, corpus: Corpus | None, diff: str | None, png: bool,
                  svg: bool) -> dict:
    """:func:`write_report`'s page and images, of ``model`` read from ``model_path``."""
    vlc = vl_convert("ldacli report")
    old = Model.load(diff) if diff else None
    data = build(model_path, model, corpus=corpus, old=old, old_path=diff)
    page = render(data, javascript_bundle())
    with atomic_write(output, "w", what="report") as f:
        f.write(page)
    images = []
    stem = os.path.splitext(output)[0]
    statics = {"map": _static_map_spec(data["topics"])}
    if data["trace"]:
        statics["trace"] = {**data["trace"], "background": "white"}
    for kind, wanted, convert in (("png", png, vlc.vegalite_to_png), ("svg", svg, vlc.vegalite_to_svg)):
        if not wanted:
            continue
        for name, spec in statics.items():
            path = f"{stem}-{name}.{kind}"
            content = convert(spec, scale=2) if kind == "png" else convert(spec)
            with atomic_write(path, "wb" if kind == "png" else "w", what=f"{name} image") as f:
                f.write(content)
            images.append(path)
    return {"report": output, "images": images, "bytes": len(page.encode("utf-8"))}


# --- the page of select-k ------------------------------------------------------------------------------

SELECT_K_CHARTS = (
    ("perplexity", "Held-out perplexity (document completion; lower is better)"),
    ("balance", "Topic quality per perplexity (the rule's; higher is better)"),
    ("npmi", "NPMI coherence on the training documents (higher is better)"),
    ("distance", "Stability: JS distance between seeds (lower is better)"),
    ("matched", "Stability: topics matched across seeds"),
    ("diversity", "Topic diversity (distinct share of the top 25 words)"),
    ("exclusivity", "Exclusivity of the top 10 words"),
)
# The select-k page's own script (after webpage.COMMON_JS): one chart per measure.
SELECT_K_SCRIPT = """
Promise.all(Object.entries(ldacli.data.charts).map(([key, spec]) =>
  ldacli.embed(document.getElementById("chart-" + key), spec)))
  .then(() => { ldacli.ready = true; window.ldacliReady = true; });
"""


def _select_k_spec(table: list[dict], key: str, title: str, recommended: int | None) -> dict:
    """One measure against K (log scale), its mean and one standard error over seeds as a bar,
    the recommended K (if any) dashed."""
    values = [{"k": r["k"], "mean": r[key], "lo": r[key] - (r.get(f"{key}_se") or 0.0),
               "hi": r[key] + (r.get(f"{key}_se") or 0.0), "se": r.get(f"{key}_se")}
              for r in table if r[key] is not None]
    x = {"field": "k", "type": "quantitative", "title": "number of topics K",
         "scale": {"type": "log", "nice": False, "padding": 14}, "axis": {"values": [r["k"] for r in table]}}
    return _fluid({
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": {"text": title, "fontSize": 13}, "height": 200, "data": {"values": values},
        "layer": ([{"mark": {"type": "rule", "color": ORANGE, "strokeDash": [4, 3], "strokeWidth": 2},
                    "data": {"values": [{"k": recommended}]}, "encoding": {"x": x}}] if recommended is not None else [])
        + [
            {"mark": {"type": "rule", "color": BLUE},
             "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative"}, "y2": {"field": "hi"}}},
            {"mark": {"type": "line", "point": True, "color": BLUE},
             "encoding": {"x": x, "y": {"field": "mean", "type": "quantitative", "title": None,
                                        "scale": {"zero": False}},
                          "tooltip": [{"field": "k", "title": "K"}, {"field": "mean", "format": ".4g"},
                                      {"field": "se", "format": ".3g", "title": "standard error"}]}},
        ],
    })


def write_select_k_page(result: dict, output: str) -> None:
    """Write the page of a :func:`ldacli.select_k` result to ``output`` (atomically), in the
    report's frame (:func:`ldacli.pages.webpage.page`): the recommendation and its rule, the table
    (sortable), and each measure against K with one-standard-error bars, the recommended K
    dashed. Needs the report extra (vl-convert's Vega bundle)."""
    table, k = result["table"], result["recommended"]
    h, s = result["heldout"], result["settings"]
    reason = result["reason"][:1].upper() + result["reason"][1:]

    def cell(r, key, fmt):
        mean, se = r[key], r.get(f"{key}_se")
        if mean is None:
            return "<td class='num' data-value='nan'>-</td>"
        return (f"<td class='num' data-value='{mean!r}'>{mean:{fmt}}"
                + (f" ± {se:{fmt}}" if se is not None else "") + "</td>")

    heads = ("K", "held-out perplexity", "NPMI", "diversity", "quality/perplexity", "exclusivity", "stability: JS",
             "matched")
    head = "".join(f"<th scope='col' data-type='num' class='num'><button>{x}</button></th>" for x in heads)
    rows = "".join(
        f"<tr class='{'selected' if r['recommended'] else ''}'><td class='num'>{r['k']}</td>"
        + cell(r, "perplexity", ".1f") + cell(r, "npmi", ".3f") + cell(r, "diversity", ".3f")
        + cell(r, "balance", ".3f") + cell(r, "exclusivity", ".3f") + cell(r, "distance", ".3f")
        + cell(r, "matched", ".2f") + "</tr>"
        for r in table)
    train = ", ".join(f"{name} {value}" for name, value in sorted(s["train"].items())) or "train's defaults"
    title = f"ldacli select-k: {os.path.basename(str(result['corpus']['source']))}"
    header = (f"<h1>{text(title)}</h1><nav class='muted'>{len(table)} numbers of topics, {s['seeds']} seeds each; "
              f"ldacli {__version__}; works offline. <a href='#table'>Every K</a><a href='#curves'>Against K</a>"
              f"</nav>")
    charts = {key: _select_k_spec(table, key, name, k) for key, name in SELECT_K_CHARTS
              if any(r[key] is not None for r in table)}
    sections = [
        (f"<section id='recommendation'><h2>Recommended: K = {k}</h2><p>{text(reason)}.</p>" if k is not None
         else f"<section id='recommendation'><h2>K not determined</h2><p>{text(reason)}.</p>")
        +
        f"<p class='muted'>Rule: {text(result['rule'])}.</p></section>",
        f"<section id='table'><h2>Every K</h2><p>Mean ± standard error over {s['seeds']} seeds (stability: over "
        f"pairs of seeds; matched: topics within Jensen-Shannon distance {result['stability_threshold']:g}). "
        f"Corpus {text(file_name(result['corpus']['source']))}: {h['train_docs']:,} training documents, "
        f"{h['n_docs']:,} held out ({h['n_tokens']:,} tokens), split seed {result['seed']}; every run: {text(train)}.</p>"
        f"<div class='table-wrap'><table class='sortable'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>"
        f"</table></div></section>",
        "<section id='curves'><h2>Against K</h2><p class='muted'>Bars: ± one standard error over seeds; dashed: "
        "the recommended K.</p><div class='panels'>"
        + "".join(f"<div id='chart-{key}' class='chart panel'></div>" for key in charts) + "</div></section>",
    ]
    html_page = page(title, header, sections, {"charts": charts}, SELECT_K_SCRIPT, javascript_bundle())
    with atomic_write(output, "w", what="select-k page") as f:
        f.write(html_page)
