"""``ldacli report``: one self-contained, interactive HTML file describing a model.

The page works offline: every script is inlined (Vega, Vega-Lite and Vega-Embed, bundled by
``vl-convert-python``, the ``report`` extra, and cached per user after the first bundling) and
nothing is fetched when it is viewed. It shows:

* a topic map: topics placed by classical multidimensional scaling of the Jensen-Shannon
  distances between their word distributions (as LDAvis does), circle area by prevalence,
  labelled by id and top words; a topic is selected by clicking it or with the keyboard in a
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
* with ``--diff OLD.npz``: the topics matched to the old model's and their drift.

``--png``/``--svg`` also write the topic map and the trace as images beside the report.
Colours are a colour-blind-safe pair (blue, orange); the page reads at a laptop's width.
"""

from __future__ import annotations

import html
import json
import os
import time

import numpy as np

from ldacli.corpus import Corpus
from ldacli.diff import diff_models, js_distances
from ldacli.errors import LdacliError
from ldacli.fileio import atomic_write
from ldacli.info import describe
from ldacli.methods.driver import METHODS
from ldacli.settings import Flag, Setting, Text
from ldacli.model import Model
from ldacli.topic_coherence import coherence
from ldacli.version import __version__

# Words kept per topic for each lambda in LAMBDA_GRID (their union is what the page ranks).
WORDS_SHOWN = 30
LAMBDA_GRID = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
DEFAULT_LAMBDA = 0.6
DOCS_SHOWN = 5
FIRST_WORDS = 25
BLUE, ORANGE, PALE = "#4c78a8", "#f58518", "#c6d4e8"
EXTRA = "pip install 'ldacli[report]'"


# The settings of ``report`` besides its model, output and corpus.
SETTINGS = (
    Setting("diff", Text(path=True), None, "An older model: show the topics matched to its and their drift."),
    Setting("png", Flag(), False, "Also write the topic map and the trace as PNG images beside the report."),
    Setting("svg", Flag(), False, "Also write them as SVG images."),
)


def _vl_convert():
    try:
        import vl_convert
    except ImportError:
        raise LdacliError(f"ldacli report needs vl-convert-python, which the report extra installs: {EXTRA}") from None
    return vl_convert


def _javascript_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed in one script, bundled by vl-convert (a few seconds)
    once per version, then read from the user's cache folder."""
    vlc = _vl_convert()
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ldacli")
    path = os.path.join(cache, f"vega-bundle-{getattr(vlc, '__version__', 'unknown')}.js")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        pass
    bundle = vlc.javascript_bundle()
    try:
        os.makedirs(cache, exist_ok=True)
        with atomic_write(path, "w", what="script cache") as f:
            f.write(bundle)
    except (OSError, LdacliError):
        pass  # no cache: the next report bundles again
    return bundle


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


def word_table(phi: np.ndarray, prevalence: np.ndarray, vocab: list[str], n_tokens: float) -> list[dict]:
    """For each topic the words that rank in its top :data:`WORDS_SHOWN` by relevance at some
    lambda of :data:`LAMBDA_GRID`: ``topic``, ``w`` word, ``p`` p(w|k), ``pw`` p(w) (the
    model's marginal), ``n`` the word's estimated count, ``nk`` the topic's share of it."""
    pw = prevalence @ phi
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
                         "n": float(pw[w] * n_tokens), "nk": float(phi[k, w] * prevalence[k] * n_tokens)})
    return rows


def _first_words(corpus: Corpus, docs: list[int]) -> dict[int, str]:
    """The first words of documents of a text corpus (file or folder), read again from it."""
    out: dict[int, str] = {}
    source = corpus.source
    try:
        if corpus.format == "text" and os.path.isfile(source):
            wanted = {int(corpus.doc_ids[d]): d for d in docs}
            with open(source, encoding="utf-8", errors="replace") as f:
                for lineno, line in enumerate(f, start=1):
                    if lineno in wanted:
                        out[wanted[lineno]] = " ".join(line.split()[:FIRST_WORDS])
                        if len(out) == len(wanted):
                            break
        elif corpus.format == "textdir" and os.path.isdir(source):
            for d in docs:
                with open(os.path.join(source, corpus.doc_ids[d]), encoding="utf-8", errors="replace") as f:
                    out[d] = " ".join(f.read(4000).split()[:FIRST_WORDS])
    except (OSError, ValueError):
        return {}
    return out


def corpus_view(model: Model, corpus: Corpus) -> dict:
    """Coherence (NPMI), prevalence over the corpus, and representative documents per topic.
    Documents are the training documents when ``corpus`` is the training corpus (theta from
    the model), else their theta is inferred."""
    from ldacli.inference import infer

    scores = coherence(model, corpus, measure="npmi")
    if corpus.fingerprint() == model.params.get("corpus_fingerprint") and model.theta.shape[0] == corpus.n_docs:
        theta, ids = model.theta, corpus.doc_ids
    else:
        result, _ = infer(model, corpus, iterations=50, burn_in=20, seed=1)
        theta, ids = result.theta, result.doc_ids
    lengths = corpus.doc_lengths.astype(np.float64)
    prevalence = (theta * lengths[:, None]).sum(axis=0) / max(lengths.sum(), 1.0)
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
            "coherence_mean": scores["mean"], "prevalence": prevalence.tolist(), "documents": documents,
            "source": corpus.source, "n_docs": corpus.n_docs}


# --- the page ------------------------------------------------------------------------------------------

def _explorer_spec(topics: list[dict], words: list[dict], K: int) -> dict:
    labels = [f"{t['topic']}: {t['label']}" for t in topics]
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "datasets": {"topics": topics, "words": words},
        "params": [{"name": "lambda", "value": DEFAULT_LAMBDA,
                    "bind": {"input": "range", "min": 0, "max": 1, "step": 0.05, "name": "relevance lambda "}}],
        "hconcat": [
            {
                "name": "map",
                "title": {"text": "Topic map (Jensen-Shannon distance, MDS; area: prevalence)", "fontSize": 13},
                "width": 420, "height": 420,
                "data": {"name": "topics"},
                "layer": [
                    {"params": [{"name": "topic", "select": {"type": "point", "fields": ["topic"], "on": "click",
                                                             "clear": False, "toggle": False},
                                 "value": [{"topic": 0}],
                                 "bind": {"input": "select", "options": list(range(K)), "labels": labels,
                                          "name": "topic "}}],
                     "mark": {"type": "circle", "stroke": "#333", "strokeWidth": 0.5, "cursor": "pointer"},
                     "encoding": {
                         "x": {"field": "x", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                         "y": {"field": "y", "type": "quantitative", "axis": None, "scale": {"zero": False}},
                         "size": {"field": "prevalence", "type": "quantitative", "legend": None,
                                  "scale": {"range": [40, 2400]}},
                         "color": {"condition": {"param": "topic", "value": ORANGE, "empty": False}, "value": BLUE},
                         "opacity": {"condition": {"param": "topic", "value": 0.95, "empty": False}, "value": 0.55},
                         "tooltip": [{"field": "topic", "title": "topic"}, {"field": "label", "title": "top words"},
                                     {"field": "prevalence", "format": ".1%", "title": "prevalence"}]}},
                    {"mark": {"type": "text", "fontSize": 10, "dy": -2, "fontWeight": "bold"},
                     "encoding": {"x": {"field": "x", "type": "quantitative"},
                                  "y": {"field": "y", "type": "quantitative"},
                                  "text": {"field": "topic"}}},
                ],
            },
            {
                "name": "words",
                "title": {"text": {"expr": "'Topic ' + (isArray(topic_topic) ? topic_topic[0] : topic_topic) + ': words by relevance, lambda ' + format(lambda, '.2f')"},
                          "fontSize": 13},
                "width": 300, "height": {"step": 13},
                "data": {"name": "words"},
                "transform": [
                    {"filter": {"param": "topic", "empty": False}},
                    {"calculate": "lambda * log(datum.p) + (1 - lambda) * log(datum.p / datum.pw)", "as": "relevance"},
                    {"window": [{"op": "row_number", "as": "rank"}],
                     "sort": [{"field": "relevance", "order": "descending"}]},
                    {"filter": f"datum.rank <= {WORDS_SHOWN}"},
                ],
                "encoding": {"y": {"field": "rank", "type": "ordinal", "axis": None}},
                "layer": [
                    {"mark": {"type": "bar", "color": PALE},
                     "encoding": {"x": {"field": "n", "type": "quantitative", "title": "estimated count in the corpus (pale) and in the topic"},
                                  "tooltip": [{"field": "w", "title": "word"}, {"field": "n", "format": ",.0f", "title": "in the corpus"},
                                              {"field": "nk", "format": ",.0f", "title": "in this topic"},
                                              {"field": "p", "format": ".4f", "title": "p(w | topic)"},
                                              {"field": "rank", "title": "rank"}]}},
                    {"mark": {"type": "bar", "color": ORANGE}, "encoding": {"x": {"field": "nk", "type": "quantitative"}}},
                    {"mark": {"type": "text", "align": "right", "dx": -4, "fontSize": 11},
                     "encoding": {"x": {"datum": 0}, "text": {"field": "w"}}},
                ],
            },
        ],
        "spacing": 140,
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
    if view is not None:
        prevalence = np.asarray(view["prevalence"])
    elif model.theta.shape[0]:
        prevalence = model.theta.mean(axis=0)
    else:
        prevalence = model.alpha / model.alpha.sum()
    coords = topic_map(model.phi)
    tops = model.top_words(5)
    names = model.topic_names
    topics = [{"topic": k, "x": float(coords[k, 0]), "y": float(coords[k, 1]), "prevalence": float(prevalence[k]),
               "name": names[k], "label": (f"{names[k]}: " if names[k] else "") + " ".join(w for w, _ in tops[k]),
               "short": model.topic_label(k) if names[k] else f"{k} " + " ".join(w for w, _ in tops[k][:2])}
              for k in range(K)]
    n_tokens = float(model.params.get("n_tokens") or 1e6)
    data = {
        "file": model_path, "info": info, "topics": topics,
        "words": word_table(model.phi, prevalence, model.vocab, n_tokens),
        "explorer": None, "trace": _trace_spec(model) if model.loglik_iterations.size else None,
        "alpha": None if np.all(model.alpha == model.alpha[0]) else _alpha_spec(model),
        "corpus": view, "diff": None,
    }
    data["explorer"] = _explorer_spec(topics, data["words"], K)
    if old is not None:
        data["diff"] = {"path": old_path, **diff_models(old, model)}
    return data


_CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fff}
header,main{max-width:1180px;margin:0 auto;padding:0 20px}
header{padding-top:18px;border-bottom:1px solid #ddd}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:26px 0 8px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px 3px 0;text-align:left;vertical-align:top}
th{font-weight:600;color:#444}.num{text-align:right;font-variant-numeric:tabular-nums}
.grid{display:flex;flex-wrap:wrap;gap:24px}.muted{color:#666}.drift{color:#b35806;font-weight:600}
.vega-bind{margin:4px 0}.vega-bind select,.vega-bind input{font-size:15px}
a:focus,select:focus,input:focus,summary:focus{outline:3px solid #f58518;outline-offset:2px}
li{margin:4px 0}code{font-size:13px}
"""


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
        ("training corpus", f"{prov['corpus_source']} ({prov['corpus_format']}), fingerprint "
                            f"{str(prov['corpus_fingerprint'])[:16]}…"),
        ("ldacli version", f"{prov['ldacli_version']} (report by {__version__})"),
    ]
    if info.get("stopping"):
        rows.append(("early stopping", ", ".join(f"{k} {v}" for k, v in info["stopping"].items())))
    for generation, parent in enumerate(info.get("lineage") or [], start=1):
        rows.append(("parent" if generation == 1 else f"ancestor {generation}",
                     f"{parent['path']} (sha256 {parent['sha256'][:12]})"))
    body = "".join(f"<tr><th scope='row'>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def _documents(data: dict) -> str:
    view = data["corpus"]
    if view is None:
        return ("<p class='muted'>No corpus given (<code>--corpus</code>) and the training corpus could not be "
                "found: coherence and documents are not shown.</p>")
    K = len(data["topics"])
    out = [f"<p>From {html.escape(view['source'])} ({view['n_docs']} documents). Mean NPMI coherence "
           f"{view['coherence_mean']:.3f} (top 10 words; in [-1, 1], higher is better).</p>"]
    out.append("<table><thead><tr><th>topic</th><th class='num'>NPMI</th><th class='num'>prevalence</th>"
               "<th>top words</th></tr></thead><tbody>")
    for k in range(K):
        c = view["coherence"][k]
        out.append(f"<tr><td>{_label(k, data['topics'][k]['name'])}</td><td class='num'>{'-' if c is None else f'{c:.3f}'}</td>"
                   f"<td class='num'>{100 * view['prevalence'][k]:.1f}%</td>"
                   f"<td>{html.escape(data['topics'][k]['label'])}</td></tr>")
    out.append("</tbody></table><h3 id='docs-title'>Most representative documents</h3>")
    for k in range(K):
        items = "".join(f"<li><b>{html.escape(e['id'])}</b> ({100 * e['share']:.0f}%): {html.escape(e['text'])}</li>"
                        for e in view["documents"][k])
        out.append(f"<div class='docs' data-topic='{k}'{'' if k == 0 else ' hidden'}><p>Topic {k}:</p><ol>{items}</ol></div>")
    return "".join(out)


def _label(k: int, name: str | None) -> str:
    return f"{k} {html.escape(name)}" if name else str(k)


def _diff(data: dict) -> str:
    d = data["diff"]
    rows = "".join(
        f"<tr><td>{_label(t['a'], t['name_a'])}</td><td>{_label(t['b'], t['name_b'])}</td><td class='num{'' if t['matched'] else ' drift'}'>{t['distance']:.3f}</td>"
        f"<td class='num'>{100 * t['prevalence_a']:.1f}% → {100 * t['prevalence_b']:.1f}%</td>"
        f"<td>{html.escape(' '.join(t['gained'])) or '-'}</td><td>{html.escape(' '.join(t['lost'])) or '-'}</td></tr>"
        for t in d["topics"])
    return (f"<p>Against {html.escape(str(d['path']))}: {d['renumbered']} topics renumbered, JS distance median "
            f"{d['median_distance']:.3f}, max {d['max_distance']:.3f}; no counterpart (distance above "
            f"{d['threshold']}): old {d['only_in_a'] or 'none'}, new {d['only_in_b'] or 'none'}.</p>"
            "<table><thead><tr><th>old</th><th>new</th><th class='num'>distance</th><th class='num'>prevalence</th>"
            f"<th>words gained</th><th>words lost</th></tr></thead><tbody>{rows}</tbody></table>")


def render(data: dict, bundle: str) -> str:
    """The HTML page: the data, the specs and the inlined scripts."""
    title = f"ldacli report: {os.path.basename(data['file'])}"
    charts = {"explorer": data["explorer"], "trace": data["trace"], "alpha": data["alpha"]}
    script = """
const CHARTS = %s;
const opts = {renderer: "svg", actions: false};
window.ldacliReady = false;
Promise.all([
  vegaEmbed("#explorer", CHARTS.explorer, opts).then(r => {
    window.ldacliView = r.view;
    const show = () => {
      const sel = r.view.signal("topic_topic");
      const k = Array.isArray(sel) ? String(sel[0]) : String(sel);
      document.querySelectorAll(".docs").forEach(el => { el.hidden = el.dataset.topic !== k; });
    };
    r.view.addSignalListener("topic_topic", show);
    show();
  }),
  CHARTS.trace ? vegaEmbed("#trace", CHARTS.trace, opts) : null,
  CHARTS.alpha ? vegaEmbed("#alpha", CHARTS.alpha, opts) : null,
]).then(() => { window.ldacliReady = true; });
""" % json.dumps(charts, separators=(",", ":"))
    sections = [
        f"<section id='glance'><h2>The model at a glance</h2>{_glance(data)}"
        f"<div class='grid'><div id='trace'></div><div id='alpha'></div></div></section>",
        "<section id='topics'><h2>Topics</h2><p>Select a topic by clicking its circle or in the list (keyboard: "
        "Tab to the list, then the arrow keys); move the lambda slider to rank its words by probability "
        "(lambda 1) or by how specific they are to the topic (lambda 0).</p><div id='explorer'></div></section>",
        f"<section id='corpus'><h2>Coherence and documents</h2>{_documents(data)}</section>",
    ]
    if data["diff"] is not None:
        sections.append(f"<section id='diff'><h2>Changes since the old model</h2>{_diff(data)}</section>")
    return (f"<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style><script>{bundle}</script></head><body>"
            f"<header><h1>{html.escape(title)}</h1><p class='muted'>Written {time.strftime('%Y-%m-%d %H:%M')} by "
            f"ldacli {__version__}; works offline.</p></header><main>{''.join(sections)}</main>"
            f"<script>{script}</script></body></html>\n")


def write_report(model_path: str, output: str, *, corpus: Corpus | None = None, diff: str | None = None,
                 png: bool = False, svg: bool = False) -> dict:
    """Write the report of the model at ``model_path`` to ``output`` (atomically): with
    ``corpus``, coherence, prevalence and representative documents; with ``diff`` (an older
    model's file), its topics matched to the model's; with ``png``/``svg`` the map and the trace
    beside it (``NAME-map.png``, ``NAME-trace.svg``, ...). Returns what was written:
    ``{"report": path, "images": [...], "bytes": size}``."""
    vlc = _vl_convert()
    model = Model.load(model_path)
    old = Model.load(diff) if diff else None
    data = build(model_path, model, corpus=corpus, old=old, old_path=diff)
    page = render(data, _javascript_bundle())
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

# The select-k page has no script at all: its charts are SVG drawn here by vl-convert, so its
# Content-Security-Policy allows nothing to run.
SELECT_K_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
SELECT_K_CHARTS = (
    ("perplexity", "Held-out perplexity (document completion; lower is better)"),
    ("npmi", "NPMI coherence on the training documents (higher is better)"),
    ("matched", "Stability: topics matched across seeds (fraction)"),
    ("distance", "Stability: mean JS distance of matched topics (lower is better)"),
    ("diversity", "Topic diversity (distinct share of top 25 words)"),
    ("exclusivity", "Exclusivity of the top 10 words"),
)


def _select_k_spec(table: list[dict], key: str, title: str, recommended: int) -> dict:
    values = []
    for r in table:
        mean, se = r[key], r.get(f"{key}_se")
        if mean is None:
            continue
        values.append({"k": r["k"], "mean": mean, "lo": mean - (se or 0.0), "hi": mean + (se or 0.0),
                       "se": se if se is not None else 0.0})
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": {"text": title, "fontSize": 13}, "width": 400, "height": 200, "background": "white",
        "data": {"values": values},
        "layer": [
            {"mark": {"type": "rule", "color": ORANGE, "strokeDash": [4, 3], "strokeWidth": 2},
             "data": {"values": [{"k": recommended}]}, "encoding": {"x": {"field": "k", "type": "quantitative"}}},
            {"mark": {"type": "rule", "color": BLUE},
             "encoding": {"x": {"field": "k", "type": "quantitative"}, "y": {"field": "lo", "type": "quantitative"},
                          "y2": {"field": "hi"}}},
            {"mark": {"type": "line", "point": True, "color": BLUE},
             "encoding": {"x": {"field": "k", "type": "quantitative", "title": "number of topics K",
                                "scale": {"type": "log", "nice": False, "padding": 14}},
                          "y": {"field": "mean", "type": "quantitative", "title": None, "scale": {"zero": False}}}},
        ],
    }


def write_select_k_page(result: dict, output: str) -> None:
    """Write the page of a :func:`ldacli.select_k` result to ``output`` (atomically): the
    recommendation and its rule, the table, and each measure against K with its standard error
    over seeds (bars), the recommended K marked. Needs the report extra (vl-convert) for the
    charts."""
    vlc = _vl_convert()
    table, k = result["table"], result["recommended"]
    charts = "".join(f"<figure>{vlc.vegalite_to_svg(_select_k_spec(table, key, title, k))}</figure>"
                     for key, title in SELECT_K_CHARTS if any(r[key] is not None for r in table))
    h, s = result["heldout"], result["settings"]

    def cell(r, key, fmt):
        mean, se = r[key], r.get(f"{key}_se")
        return "-" if mean is None else f"{mean:{fmt}}" + (f" ± {se:{fmt}}" if se is not None else "")

    rows = "".join(
        f"<tr class='{'chosen' if r['recommended'] else 'other'}'><td class='num'>{r['k']}</td>"
        f"<td class='num'>{cell(r, 'perplexity', '.1f')}</td><td class='num'>{cell(r, 'npmi', '.3f')}</td>"
        f"<td class='num'>{cell(r, 'diversity', '.3f')}</td><td class='num'>{cell(r, 'exclusivity', '.3f')}</td>"
        f"<td class='num'>{cell(r, 'distance', '.3f')}</td><td class='num'>{cell(r, 'matched', '.2f')}</td></tr>"
        for r in table)
    train = ", ".join(f"{name} {value}" for name, value in sorted(s["train"].items())) or "train's defaults"
    title = f"ldacli select-k: {os.path.basename(str(result['corpus']['source']))}"
    body = (
        f"<section id='recommendation'><h2>Recommended: K = {k}</h2><p>{html.escape(result['reason'])}.</p>"
        f"<p class='muted'>Rule: {html.escape(result['rule'])}.</p></section>"
        f"<section id='table'><h2>Every K</h2><p>Mean ± standard error over {s['seeds']} seeds (stability: over "
        f"pairs of seeds; matched: topics within Jensen-Shannon distance {result['stability_threshold']:g}). "
        f"Corpus {html.escape(str(result['corpus']['source']))}: {h['train_docs']:,} training documents, "
        f"{h['n_docs']:,} held out ({h['n_tokens']:,} tokens), split seed {result['seed']}; every run: "
        f"{html.escape(train)}.</p>"
        "<table><thead><tr><th class='num'>K</th><th class='num'>held-out perplexity</th><th class='num'>NPMI</th>"
        "<th class='num'>diversity</th><th class='num'>exclusivity</th><th class='num'>stability: JS</th>"
        f"<th class='num'>matched</th></tr></thead><tbody>{rows}</tbody></table></section>"
        f"<section id='curves'><h2>Against K</h2><p class='muted'>Bars: ± one standard error over seeds; dashed: "
        f"the recommended K.</p><div class='grid'>{charts}</div></section>")
    page = (f"<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{SELECT_K_CSP}\">"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}tr.chosen td{{font-weight:600;background:#fdebd3}}figure{{margin:0}}"
            f"figure svg{{max-width:100%;height:auto}}</style></head><body>"
            f"<header><h1>{html.escape(title)}</h1><p class='muted'>ldacli {__version__}; works offline, runs no "
            f"script.</p></header><main>{body}</main></body></html>\n")
    with atomic_write(output, "w", what="select-k page") as f:
        f.write(page)
