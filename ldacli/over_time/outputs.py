"""The outputs of ``ldacli history`` and ``ldacli trends``: text for people, JSON, tables (TSV,
CSV, JSON lines, Parquet: :mod:`ldacli.files.tables`) and pages, the pages in the report's frame
(:func:`ldacli.pages.webpage.page`: one self-contained file, its Content-Security-Policy, every
string from a model escaped, phone and desktop layouts).

The history page: each chosen topic's share across the models (a line per topic, chosen in a
list of every topic), a heat map of the drift of every topic from step to step (click a cell to
see the topic), the chosen topic's id, name, share, drift and words at every step, the births
and deaths, every topic and every model in sortable tables.

The trends page: each chosen topic's share by period with a band of one standard error either
side, the documents per period, and every topic's first and last share in a sortable table.

Text from a model reaches the page as JSON data (read with ``JSON.parse``) drawn by Vega as SVG
text or put in the page with ``textContent``, or as HTML escaped by :func:`ldacli.pages.webpage.text`:
never as markup.
"""

from __future__ import annotations

import json
import os
import time
from typing import IO

import numpy as np

from ldacli.over_time import history as topic_history
from ldacli.over_time import trends as topic_trends
from ldacli.files.tables import TABLE_FORMATS, text_writer, write_table
from ldacli.info import file_name
from ldacli.version import __version__
from ldacli.pages.webpage import javascript_bundle, page, text, vl_convert

FORMATS = ("text", "json", *TABLE_FORMATS, "html")
ENDINGS = {".json": "json", ".tsv": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet", ".html": "html", ".htm": "html", ".txt": "text"}

BLUE, GREY, PALE = "#9ab5d6", "#bbbbbb", "#eeeeee"
# Topics chosen when a page opens: those whose share changed most.
CHOSEN = 6
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"


def _chosen(series: list[list]) -> list[int]:
    """The topics whose share moved most (largest minus smallest where present)."""
    spread = [max(v for v in s if v is not None) - min(v for v in s if v is not None) for s in series]
    return sorted(np.argsort(-np.asarray(spread), kind="stable")[:CHOSEN].tolist())


# --- the pieces both pages share ---------------------------------------------------------------------

# The topic picker (a list of check boxes, every label set with textContent) and the charts that
# follow the chosen topics (their "chosen" signal).
PICKER_JS = """
ldacli.picker = (box, topics, chosen, onChange) => {
  const picked = new Set(chosen);
  const boxes = [];
  topics.forEach(t => {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "checkbox"; input.value = String(t.topic); input.checked = picked.has(t.topic);
    input.addEventListener("change", () => {
      if (input.checked) picked.add(t.topic); else picked.delete(t.topic);
      onChange(Array.from(picked).sort((a, b) => a - b));
    });
    const span = document.createElement("span");
    span.textContent = t.label;
    label.appendChild(input); label.appendChild(span);
    box.appendChild(label);
    boxes.push(input);
  });
  return (ids) => {
    picked.clear(); ids.forEach(i => picked.add(i));
    boxes.forEach(b => { b.checked = picked.has(Number(b.value)); });
    onChange(Array.from(picked).sort((a, b) => a - b));
  };
};
// The section's picker and buttons drive the chart's "chosen" signal.
ldacli.follow = (section, view) => {
  const D = ldacli.data;
  const set = ldacli.picker(document.getElementById(section + "-picker"), D.topics, D.chosen, ids => {
    ldacli.chosen = ids;
    view.signal("chosen", ids).runAsync();
  });
  ldacli.chosen = D.chosen;
  document.getElementById(section + "-most").addEventListener("click", () => set(D.chosen));
  document.getElementById(section + "-none").addEventListener("click", () => set([]));
};
"""


def _picker_section(section_id: str, title: str, chart_id: str, note: str, chosen: int, extra: str = "") -> str:
    return (f"<section id='{section_id}'><h2>{title}</h2><p class='muted'>{note}</p>"
            "<div class='split'><div class='panel'>"
            f"<div class='controls'><button type='button' id='{section_id}-most'>the {chosen} that moved most</button>"
            f"<button type='button' id='{section_id}-none'>none</button></div>"
            f"<div class='picker' id='{section_id}-picker' role='group' aria-label='topics shown'></div></div>"
            f"<div class='panel'><div id='{chart_id}' class='chart'></div>{extra}</div></div></section>")


def _table(heads: list[tuple[str, str]], rows: list[list[str]], table_id: str) -> str:
    head = "".join(f"<th scope='col' data-type='{t}'{' class=num' if t == 'num' else ''}><button>{h}</button></th>"
                   for h, t in heads)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return (f"<div class='table-wrap'><table class='sortable' id='{table_id}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")


def _num(value, fmt: str) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "<td class='num' data-value='nan'>-</td>"
    return f"<td class='num' data-value='{float(value)!r}'>{value:{fmt}}</td>"


def _pct(value) -> str:
    if value is None:
        return "<td class='num' data-value='nan'>-</td>"
    return f"<td class='num' data-value='{float(value)!r}'>{100 * value:.1f}%</td>"


def _words(words, n: int = 10) -> str:
    return text(" ".join((words or [])[:n]))


# --- history ----------------------------------------------------------------------------------------

def _history_specs(result: dict, chosen: list[int]) -> dict:
    models, topics = result["models"], result["topics"]
    steps = len(models)
    names = [os.path.basename(m["path"]) for m in models]
    lines, cells = [], []
    for t in topics:
        for s in range(steps):
            if t["ids"][s] is None:
                continue
            words = " ".join((t["words"][s] or [])[:6])
            lines.append({"topic": t["topic"], "step": s, "share": t["shares"][s], "model": names[s],
                          "id": t["ids"][s], "name": t["names"][s] or "", "words": words})
            cells.append({"topic": t["topic"], "step": s, "drift": t["drifts"][s], "model": names[s],
                          "id": t["ids"][s], "born": t["born"] == s and s > 0, "words": words})
    x = {"field": "step", "type": "quantitative", "title": "step (model)",
         "axis": {"tickMinStep": 1, "format": "d"}, "scale": {"domain": [0, max(steps - 1, 1)]}}
    shares = {
        "$schema": SCHEMA, "width": "container", "height": 300, "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": lines}, "params": [{"name": "chosen", "value": chosen}],
        "transform": [{"filter": "indexof(chosen, datum.topic) >= 0"}],
        "mark": {"type": "line", "point": True, "strokeWidth": 2},
        "encoding": {"x": x, "y": {"field": "share", "type": "quantitative", "title": "share (mean proportion)",
                                   "axis": {"format": ".1~%"}},
                     "color": {"field": "topic", "type": "nominal", "legend": {"orient": "bottom", "columns": 8,
                                                                             "symbolLimit": 40},
                               "scale": {"scheme": "tableau10"}},
                     "tooltip": [{"field": "topic"}, {"field": "name"}, {"field": "step"}, {"field": "model"},
                                 {"field": "id", "title": "id in this model"},
                                 {"field": "share", "format": ".2%"}, {"field": "words", "title": "top words"}]},
    }
    drift = {
        "$schema": SCHEMA, "width": "container", "height": max(160, 12 * len(topics)),
        "autosize": {"type": "fit-x", "contains": "padding"}, "data": {"values": cells},
        "params": [{"name": "picked", "value": -1}],
        "encoding": {"x": {"field": "step", "type": "ordinal", "title": "step (model)",
                           "scale": {"domain": list(range(steps))}},
                     "y": {"field": "topic", "type": "ordinal", "title": "topic",
                           "axis": {"labelOverlap": True}},
                     "tooltip": [{"field": "topic"}, {"field": "step"}, {"field": "model"},
                                 {"field": "id", "title": "id in this model"},
                                 {"field": "drift", "format": ".3f", "title": "drift (JS distance)"},
                                 {"field": "words", "title": "top words"}]},
        "layer": [
            {"transform": [{"filter": "datum.drift != null"}],
             "mark": {"type": "rect", "cursor": "pointer"},
             "encoding": {"color": {"field": "drift", "type": "quantitative", "title": "drift",
                                    "scale": {"scheme": "oranges", "domain": [0, 1]},
                                    "legend": {"orient": "bottom", "gradientLength": 160}}}},
            {"transform": [{"filter": "datum.drift == null"}],
             "mark": {"type": "rect", "cursor": "pointer"},
             "encoding": {"color": {"condition": {"test": "datum.born", "value": BLUE}, "value": PALE}}},
            {"mark": {"type": "rect", "fill": None, "stroke": "#222", "strokeWidth": 2},
             "transform": [{"filter": "datum.topic == picked"}]},
        ],
        "config": {"view": {"stroke": None}},
    }
    return {"shares": shares, "drift": drift}


# The history page's script (after webpage.COMMON_JS and PICKER_JS).
HISTORY_JS = """
const D = ldacli.data, C = D.charts;
const topicSelect = document.getElementById("topic-select");
D.topics.forEach(t => {
  const o = document.createElement("option");
  o.value = String(t.topic); o.textContent = t.label; topicSelect.appendChild(o);
});
ldacli.showTopic = (k) => {
  k = Number(k);
  topicSelect.value = String(k);
  const t = D.history.topics[k], body = document.querySelector("#topic-steps tbody");
  body.textContent = "";
  const named = t.names.some(n => n);  // the name column only for a topic that has had a name
  document.getElementById("name-head").hidden = !named;
  const classes = ["num", "wide-only", "num", "", "num", "num", ""];
  D.history.models.forEach((m, s) => {
    if (t.ids[s] === null) return;
    const tr = document.createElement("tr");
    const cells = [String(s), D.modelNames[s], String(t.ids[s]), t.names[s] || "",
                   (100 * t.shares[s]).toFixed(1) + "%", t.drifts[s] === null ? "-" : t.drifts[s].toFixed(3),
                   (t.words[s] || []).join(" ")];
    cells.forEach((c, i) => {
      if (i === 3 && !named) return;
      const td = document.createElement("td");
      td.textContent = c;
      td.className = classes[i];
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
  const life = document.getElementById("topic-life");
  life.textContent = "Topic " + k + ": born at step " + t.born + " (" + t.how_born +
    (t.came_from === null ? "" : ": was topic " + t.came_from) + ")" +
    (t.died === null ? "" : ", died at step " + t.died + " (" + t.how_died +
     (t.became === null ? "" : ": became topic " + t.became) + ")") + ".";
  ldacli.picked = k;
  return ldacli.drift ? ldacli.drift.signal("picked", k).runAsync() : null;
};
Promise.all([
  ldacli.embed("#shares-chart", C.shares).then(r => { ldacli.shares = r.view; }),
  ldacli.embed("#drift-chart", C.drift).then(r => { ldacli.drift = r.view; }),
]).then(() => {
  ldacli.follow("shares", ldacli.shares);
  ldacli.drift.addEventListener("click", (event, item) => {
    if (item && item.datum && item.datum.topic !== undefined) ldacli.showTopic(item.datum.topic);
  });
  ldacli.shares.addEventListener("click", (event, item) => {
    if (item && item.datum && item.datum.topic !== undefined) ldacli.showTopic(item.datum.topic);
  });
  topicSelect.addEventListener("change", () => ldacli.showTopic(topicSelect.value));
  return ldacli.showTopic(D.chosen.length ? D.chosen[0] : 0);
}).then(() => { ldacli.ready = true; window.ldacliReady = true; });
"""


def render_history(result: dict, bundle: str, *, title: str | None = None) -> str:
    """The history page (see the module docstring) of a :func:`ldacli.over_time.history.read_history`
    result."""
    models, topics, events = result["models"], result["topics"], result["events"]
    steps = len(models)
    chosen = _chosen([t["shares"] for t in topics])
    last = [max(s for s in range(steps) if t["ids"][s] is not None) for t in topics]
    labels = [{"topic": t["topic"], "label": f"{t['topic']}" + (f" {t['names'][i]}" if t["names"][i] else "")
               + ": " + " ".join((t["words"][i] or [])[:5])} for t, i in zip(topics, last)]
    title = title or f"ldacli history: {steps} models"
    born = sum(e["event"] == "born" for e in events)
    died = len(events) - born
    header = (f"<h1>{text(title)}</h1><nav class='muted'>{steps} models, {len(topics)} topics over the history, "
              f"{born} born and {died} died after the first model; written {time.strftime('%Y-%m-%d %H:%M')} by "
              f"ldacli {__version__}; works offline. <a href='#shares'>Shares</a><a href='#drift'>Drift</a>"
              f"<a href='#topic'>One topic</a><a href='#events'>Births and deaths</a><a href='#all'>All topics</a>"
              f"<a href='#models'>Models</a></nav>")
    pairing = {"descent": "warm start", "aligned": "--align-to", "matching": "matching", None: "-"}
    sections = [
        _picker_section("shares", "Each topic's share across the models", "shares-chart",
                        "Share: the mean of the topic's proportion over the model's training documents. A line starts "
                        "where its topic was born and ends where it died. Click a point to see its topic below.",
                        len(chosen)),
        "<section id='drift'><h2>Drift from one model to the next</h2><p class='muted'>The Jensen-Shannon distance "
        "between a topic's word distributions in two successive models (0: the same, 1: no word in common), as "
        "<code>ldacli diff</code> measures it; blue: the topic is born at that step; grey: the first model; empty: "
        "it does not exist. Click "
        "a cell to see its topic below.</p><div id='drift-chart' class='chart'></div></section>",
        "<section id='topic'><h2>One topic at every step</h2><div class='controls'><label for='topic-select' "
        "class='grow'>Topic <select id='topic-select'></select></label></div><p id='topic-life'></p>"
        "<div class='table-wrap'><table id='topic-steps'><thead><tr><th class='num'>step</th>"
        "<th class='wide-only'>model</th><th class='num'>id</th><th id='name-head'>name</th><th class='num'>share</th>"
        "<th class='num'>drift</th><th>top words</th>"
        "</tr></thead><tbody></tbody></table></div></section>",
    ]
    event_rows = [[f"<td class='num'>{e['step']}</td>", f"<td>{text(os.path.basename(models[e['step']]['path']))}</td>",
                   f"<td>{e['event']}</td>", f"<td class='num'>{e['topic']}</td>", f"<td class='num'>{e['id']}</td>",
                   f"<td>{text(e['how'])}</td>", _num(e["distance"], ".3f"), f"<td>{_words(e['words'])}</td>"]
                  for e in events]
    sections.append(
        "<section id='events'><h2>Births and deaths</h2><p class='muted'>After the first model. added, removed: by "
        "<code>--add-topics</code> and <code>--remove-topics</code> (the lineage a warm start records); no "
        f"counterpart: without a recorded lineage, nothing within Jensen-Shannon distance {result['threshold']:g} "
        "(the distance to the nearest shown); meaning changed: the topic continues by descent or matching, but its "
        f"words moved further than {result['threshold']:g} from the model before or from where it was born (the "
        "distance shown): it is another topic from there on.</p>"
        + (_table([("step", "num"), ("model", "text"), ("event", "text"), ("topic", "num"), ("id", "num"),
                   ("how", "text"), ("distance", "num"), ("top words", "text")], event_rows, "events-table")
           if events else "<p>None: every model has the topics of the one before.</p>") + "</section>")
    topic_rows = []
    for t, i in zip(topics, last):
        present = [s for s in t["shares"] if s is not None]
        drifts = [d for d in t["drifts"] if d is not None]
        came, became = t.get("came_from"), t.get("became")
        topic_rows.append([f"<td class='num'>{t['topic']}</td>", f"<td>{text(t['names'][i] or '')}</td>",
                           f"<td class='num' data-value='{t['born']}'>{t['born']}"
                           + ("" if came is None else f" (meaning changed: was topic {came})") + "</td>",
                           f"<td class='num' data-value='{'nan' if t['died'] is None else t['died']}'>"
                           f"{'-' if t['died'] is None else t['died']}"
                           + ("" if became is None else f" (meaning changed: became topic {became})") + "</td>",
                           _pct(present[0]), _pct(present[-1]), _num(max(drifts) if drifts else None, ".3f"),
                           f"<td>{_words(t['words'][i])}</td>"])
    sections.append(
        "<section id='all'><h2>All topics</h2><p class='muted'>Each topic's share in the first and last model that "
        "has it, its largest drift, and its words in the last.</p>"
        + _table([("topic", "num"), ("name", "text"), ("born", "num"), ("died", "num"), ("first share", "num"),
                  ("last share", "num"), ("max drift", "num"), ("top words", "text")], topic_rows, "all-table")
        + "</section>")
    model_rows = [[f"<td class='num'>{m['step']}</td>", f"<td>{text(file_name(m['path']))}</td>",
                   f"<td>{text(m['modified'])}</td>", f"<td class='num'>{m['n_topics']}</td>",
                   f"<td class='num'>{m['n_docs']}</td>", f"<td>{pairing.get(m['pairing'], '-')}</td>",
                   f"<td class='num'>{len(m['born'])}</td>", f"<td class='num'>{len(m['died'])}</td>",
                   _num(m["median_drift"], ".3f"), _num(m["max_drift"], ".3f")] for m in models]
    sections.append(
        "<section id='models'><h2>The models</h2><p class='muted'>In the order read (ordered "
        f"{'by lineage, then modification time' if result['order'] == 'lineage' else 'as given'}); paired with the "
        "model before by the descent a warm start records, by id after <code>--align-to</code>, else by "
        "<code>diff</code>'s matching.</p>"
        + _table([("step", "num"), ("file", "text"), ("modified", "text"), ("topics", "num"), ("documents", "num"),
                  ("paired by", "text"), ("born", "num"), ("died", "num"), ("drift median", "num"),
                  ("drift max", "num")], model_rows, "models-table") + "</section>")
    data = {"charts": _history_specs(result, chosen), "topics": labels, "chosen": chosen,
            "modelNames": [os.path.basename(m["path"]) for m in models],
            "history": {"models": [{"step": m["step"]} for m in models],
                        "topics": [{k: t.get(k) for k in ("born", "how_born", "died", "how_died", "came_from", "became",
                                                          "ids", "names", "shares", "drifts", "words")}
                                   for t in topics]}}
    return page(title, header, sections, data, PICKER_JS + HISTORY_JS, bundle)


# --- trends ------------------------------------------------------------------------------------------

TRENDS_JS = """
const D = ldacli.data, C = D.charts;
Promise.all([
  ldacli.embed("#trends-chart", C.shares).then(r => { ldacli.shares = r.view; }),
  ldacli.embed("#documents-chart", C.documents),
]).then(() => {
  ldacli.follow("trends", ldacli.shares);
}).then(() => { ldacli.ready = true; window.ldacliReady = true; });
"""


def render_trends(source: str, by: str, n_docs: int, shares, names: list, words: dict | None, bundle: str) -> str:
    """The trends page of :class:`ldacli.over_time.trends.Shares` ``shares``."""
    P, K = shares.share.shape
    rows = []
    for p in range(P):
        for k in range(K):
            se = shares.se[p, k]
            s = float(shares.share[p, k])
            rows.append({"topic": k, "period": shares.labels[p], "start": shares.starts[p], "share": s,
                         "se": None if np.isnan(se) else float(se), "lo": s - (0.0 if np.isnan(se) else se),
                         "hi": s + (0.0 if np.isnan(se) else se), "documents": int(shares.documents[p]),
                         "name": names[k] or ""})
    chosen = _chosen([list(shares.share[:, k]) for k in range(K)])
    ticks = {"day": ("day", 1, "%Y-%m-%d"), "week": ("week", 1, "%Y-%m-%d"), "month": ("month", 1, "%Y-%m"),
             "quarter": ("month", 3, "%Y-%m"), "year": ("year", 1, "%Y")}[by]
    x = {"field": "start", "type": "temporal", "title": f"period ({by})", "scale": {"type": "utc"},
         "axis": {"format": ticks[2], "labelOverlap": True, "tickCount": {"interval": ticks[0], "step": ticks[1]}}}
    color = {"field": "topic", "type": "nominal", "scale": {"scheme": "tableau10"},
             "legend": {"orient": "bottom", "columns": 8, "symbolOpacity": 1}}
    tip = [{"field": "topic"}, {"field": "name"}, {"field": "period"}, {"field": "share", "format": ".2%"},
           {"field": "se", "format": ".2%", "title": "standard error"}, {"field": "documents"}]
    spec = {
        "$schema": SCHEMA, "width": "container", "height": 300, "autosize": {"type": "fit-x", "contains": "padding"},
        "params": [{"name": "chosen", "value": chosen}],
        "encoding": {"x": x},
        "layer": [
            {"data": {"values": rows}, "transform": [{"filter": "indexof(chosen, datum.topic) >= 0"}],
             "encoding": {"color": color},
             "layer": [
                 {"mark": {"type": "area", "opacity": 0.18},
                  "encoding": {"y": {"field": "lo", "type": "quantitative"}, "y2": {"field": "hi"}}},
                 {"mark": {"type": "line", "point": True, "strokeWidth": 2},
                  "encoding": {"y": {"field": "share", "type": "quantitative", "title": "share (mean proportion)",
                                     "axis": {"format": ".1~%"}}, "tooltip": tip}}]},
            # the periods' extent, as the documents' chart below has it (drawn in no colour)
            {"data": {"values": [{"start": shares.starts[0]}, {"start": shares.ends[-1]}]},
             "mark": {"type": "rule", "opacity": 0}},
        ],
    }
    documents = {
        "$schema": SCHEMA, "width": "container", "height": 120, "autosize": {"type": "fit-x", "contains": "padding"},
        "data": {"values": [{"period": shares.labels[p], "start": shares.starts[p], "end": shares.ends[p],
                             "documents": int(shares.documents[p])} for p in range(P)]},
        "mark": {"type": "rect", "color": GREY, "stroke": "white", "strokeWidth": 0.5},
        "encoding": {"x": x, "x2": {"field": "end"}, "y": {"field": "documents", "type": "quantitative"},
                     "y2": {"datum": 0},
                     "tooltip": [{"field": "period"}, {"field": "documents", "format": ","}]},
    }
    labels = [{"topic": k, "label": f"{k}" + (f" {names[k]}" if names[k] else "")
               + (f": {words[k]}" if words and k in words else "")} for k in range(K)]
    title = f"ldacli trends: {os.path.basename(source)} by {by}"
    header = (f"<h1>{text(title)}</h1><nav class='muted'>{n_docs:,} documents in {P} periods, {K} topics; written "
              f"{time.strftime('%Y-%m-%d %H:%M')} by ldacli {__version__}; works offline. <a href='#trends'>Shares</a>"
              f"<a href='#all'>All topics</a></nav>")
    change = shares.share[-1] - shares.share[0]
    topic_rows = [[f"<td class='num'>{k}</td>", f"<td>{text(names[k] or '')}</td>", _pct(float(shares.share[0, k])),
                   _pct(float(shares.share[-1, k])),
                   f"<td class='num' data-value='{float(change[k])!r}'>{100 * change[k]:+.1f}</td>",
                   _pct(float(shares.share[:, k].min())), _pct(float(shares.share[:, k].max())),
                   f"<td>{text(words[k]) if words and k in words else ''}</td>"] for k in range(K)]
    sections = [
        _picker_section("trends", "Each topic's share by period", "trends-chart",
                        f"Share: the mean of the topic's proportion over the documents of the period (by {by}); the "
                        "band: one standard error either side. Below: the documents per period.", len(chosen),
                        "<div id='documents-chart' class='chart'></div>"),
        f"<section id='all'><h2>All topics</h2><p class='muted'>Share in the first period ({text(shares.labels[0])}) "
        f"and the last ({text(shares.labels[-1])}), the change in points, the lowest and highest.</p>"
        + _table([("topic", "num"), ("name", "text"), ("first", "num"), ("last", "num"), ("change", "num"),
                  ("lowest", "num"), ("highest", "num"), ("top words", "text")], topic_rows, "all-table")
        + "</section>",
    ]
    data = {"charts": {"shares": spec, "documents": documents}, "topics": labels, "chosen": chosen}
    return page(title, header, sections, data, PICKER_JS + TRENDS_JS, bundle)


# --- writing ----------------------------------------------------------------------------------------

def needs_the_report_extra(command: str) -> None:
    """An error naming ``command`` (``ldacli history``) and the report extra when its page
    cannot be written (before any work)."""
    vl_convert(f"the HTML page of {command}")


def _lines(out: IO[bytes], lines) -> None:
    text_writer(out, lambda t: t.writelines(line + "\n" for line in lines))


def write_history(result: dict, out: IO[bytes], format: str) -> None:
    """A :func:`ldacli.over_time.history.read_history` result to the binary stream ``out`` as
    ``format`` (:data:`FORMATS`): text, json (the result), a table of one row per topic and
    model (:func:`ldacli.over_time.history.topics_table`) or html (the page)."""
    if format == "text":
        _lines(out, topic_history.text_lines(result))
    elif format == "json":
        _lines(out, [json.dumps(result, indent=2, ensure_ascii=False)])
    elif format == "html":
        _lines(out, [render_history(result, javascript_bundle())])
    else:
        write_table(topic_history.topics_table(result), out, format)


def _top_words(props) -> dict[int, str] | None:
    """A model's topics' five top words (None for an inference, which has no words)."""
    model = props.model
    if model is None:
        return None
    return {k: " ".join(w for w, _ in words) for k, words in enumerate(model.top_words(5))}


def write_trends(props, days: np.ndarray, shares, by: str, out: IO[bytes], format: str) -> None:
    """Shares by period (:func:`ldacli.over_time.trends.measure`) to the binary stream ``out`` as
    ``format``: text, json (the periods and, per topic, its shares and standard errors), a table
    of one row per period and topic (:func:`ldacli.over_time.trends.shares_table`) or html."""
    words = _top_words(props)
    if format == "text":
        _lines(out, topic_trends.text_lines(props, days, shares, by, words=words))
    elif format == "json":
        result = {"source": props.source, "kind": props.kind, "by": by, "n_docs": len(props.doc_ids),
                  "first_date": str(days.min()), "last_date": str(days.max()),
                  "periods": [{"period": label, "start": start, "documents": int(n)}
                              for label, start, n in zip(shares.labels, shares.starts, shares.documents)],
                  "topics": [{"topic": k, "name": props.names[k], "words": words.get(k) if words else None,
                              "share": shares.share[:, k].tolist(),
                              "se": [None if np.isnan(v) else float(v) for v in shares.se[:, k]]}
                             for k in range(shares.share.shape[1])]}
        _lines(out, [json.dumps(result, indent=2, ensure_ascii=False)])
    elif format == "html":
        _lines(out, [render_trends(props.source, by, len(props.doc_ids), shares, props.names, words,
                                   javascript_bundle())])
    else:
        write_table(topic_trends.shares_table(shares, props.names), out, format)
