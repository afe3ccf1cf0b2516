"""The frame of ldacli's HTML pages (``ldacli report``, and any page like it): one place for the
layout that reads on a phone and a desktop, the Content-Security-Policy, and the escaping of
whatever came from a corpus.

A page is :func:`page`: a title, its sections (HTML made with :func:`text` and :func:`attr`
for every corpus string), its data (any JSON: embedded by :func:`json_for_script`, never as
script) and its own script. The page gets:

* a viewport meta tag and :data:`CSS`: a centred column that is the screen's width on a phone,
  ``.panels`` that sit side by side where there is room and stack where there is not,
  ``.chart`` boxes that Vega-Lite charts of ``width: "container"`` fill, tables that wrap their
  cells (``table.sortable``: sorted by a click on a column's header), long words broken anywhere,
  corpus strings isolated from their neighbours' direction (``<bdi>``);
* a Content-Security-Policy that runs only the page's own scripts (each allowed by its SHA-256),
  fetches nothing (``default-src 'none'``, no connections, no frames, no forms) and allows inline
  styles (Vega sets them; styles cannot run code);
* the data as ``<script type="application/json" id="ldacli-data">`` with ``<``, ``>``, ``&``,
  U+2028 and U+2029 escaped, so no string in it can end the element or start markup; the
  page's script reads it with ``JSON.parse``;
* :data:`COMMON_JS`: sortable tables, ``ldacli.data`` and ``ldacli.embed(el, spec)``, which draws
  a Vega-Lite chart with Vega's expression interpreter (the CSP allows no ``eval``).

Vega, Vega-Lite and Vega-Embed are inlined from ``vl-convert-python`` (the ``report`` extra),
bundled once per version and cached per user.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import stat

from ldacli.errors import LdacliError
from ldacli.files.fileio import atomic_write

REPORT_EXTRA = "pip install 'ldacli[report]'"


def text(value) -> str:
    """A corpus string as HTML text, isolated from its neighbours' direction (``<bdi>``)."""
    return f"<bdi>{html.escape(str(value), quote=True)}</bdi>"


def attr(value) -> str:
    """A string as the value of a quoted HTML attribute."""
    return html.escape(str(value), quote=True)


def json_for_script(data) -> str:
    """``data`` as JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` as ``\\u``
    escapes (no ``</script>``, no ``<!--``), and U+2028/U+2029 too (line ends to JavaScript)."""
    out = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        out = out.replace(char, escape)
    return out


def script_hash(source: str) -> str:
    """The CSP source that allows the inline script ``source``."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(scripts: list[str]) -> str:
    """Only these inline ``scripts`` run; nothing is fetched, framed or submitted."""
    return ("default-src 'none'; script-src " + " ".join(script_hash(s) for s in scripts)
            + "; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'none'; "
              "base-uri 'none'; form-action 'none'; object-src 'none'")


def vl_convert(needed_by: str = "an HTML page of ldacli"):
    """The vl_convert module, or an error saying that ``needed_by`` (the command that was run:
    ``the HTML page of ldacli history``) needs it and which extra installs it."""
    try:
        import vl_convert
    except ImportError:
        raise LdacliError(f"{needed_by} needs vl-convert-python, which the report extra installs: "
                          f"{REPORT_EXTRA}") from None
    return vl_convert


def javascript_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed in one script, bundled by vl-convert (a few seconds)
    once per version, then read from the user's cache folder. The cache is trusted as OpenSSH
    trusts ``~/.ssh``: a folder and a file of this user's that no one else can write (else
    it is not used, and not written), the file named by its SHA-256 and read only if its bytes
    still match it (a truncated or changed bundle is bundled again): every script of every
    report runs in its readers' browsers."""
    vlc = vl_convert()
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ldacli")
    prefix = f"vega-bundle-{getattr(vlc, '__version__', 'unknown')}-"
    trusted = _own_folder(cache)
    if trusted:
        for name in sorted(os.listdir(cache)):
            if name.startswith(prefix) and name.endswith(".js"):
                bundle = _cached(os.path.join(cache, name), name[len(prefix):-3])
                if bundle is not None:
                    return bundle
    bundle = vlc.javascript_bundle()
    digest = hashlib.sha256(bundle.encode("utf-8")).hexdigest()
    try:
        if not os.path.lexists(cache):
            os.makedirs(cache, mode=0o700)
            trusted = _own_folder(cache)
        if trusted:
            with atomic_write(os.path.join(cache, f"{prefix}{digest}.js"), "w", what="script cache") as f:
                f.write(bundle)
    except (OSError, LdacliError):
        pass  # no cache: the next report bundles again
    return bundle


def _own_folder(path: str) -> bool:
    """Whether ``path`` is a folder (not a link to one) of this user's that no one else can write."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _cached(path: str, digest: str) -> str | None:
    """The bundle in the cache file ``path``, if it is a regular file of this user's that no
    one else can write and its bytes have the SHA-256 ``digest`` (its name's); else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        data = f.read()
    if hashlib.sha256(data).hexdigest() != digest:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


CSS = """
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fff;
  overflow-wrap:anywhere}
header,main{max-width:1400px;margin:0 auto;padding:0 16px}
header{padding-top:10px;padding-bottom:6px;border-bottom:1px solid #ddd}
h1{font-size:20px;margin:0 0 2px}h2{font-size:18px;margin:22px 0 8px}h3{font-size:15px;margin:4px 0 6px}
nav a{margin-right:12px}
bdi{unicode-bidi:isolate}
.muted{color:#666}.drift{color:#b35806;font-weight:600}.flag{color:#b35806}
tr.flagged td:first-child{box-shadow:inset 4px 0 #b35806}
th{overflow-wrap:normal}thead th{vertical-align:bottom}th.num{white-space:normal}td.wide{min-width:16em}td.narrow{min-width:8em}.nowrap{white-space:nowrap}
.panels{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,330px),1fr));gap:16px;align-items:start}
.panel{min-width:0}
.chart{width:100%;min-width:0}
.chart.square{aspect-ratio:1/1;max-height:440px}
.split{display:grid;grid-template-columns:minmax(200px,1fr) minmax(0,3fr);gap:16px;align-items:start}
.picker{max-height:340px;overflow-y:auto;border:1px solid #ddd;padding:4px 8px}
.picker label{display:flex;gap:6px;align-items:baseline;margin:3px 0}
.controls{display:flex;flex-wrap:wrap;gap:8px 20px;align-items:center;margin:8px 0}
.controls label{display:flex;gap:6px;align-items:center;min-width:0;white-space:nowrap}
.controls label.grow{flex:1 1 16em;max-width:40em}
select,input,button{font:inherit;max-width:100%}
select{min-width:0;width:100%;text-overflow:ellipsis}
.table-wrap{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:6px 0;max-width:100%}
td,th{padding:4px 10px 4px 0;text-align:left;vertical-align:top}
th{font-weight:600;color:#444}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.sortable th button{all:unset;cursor:pointer;font-weight:600}
table.sortable th[aria-sort=ascending] button::after{content:" \\25B2"}
table.sortable th[aria-sort=descending] button::after{content:" \\25BC"}
table.sortable tbody tr{cursor:pointer}
tr.selected{background:#fdebd9}
ol{padding-left:22px;margin:4px 0}li{margin:4px 0}
code{font-size:13px}
a:focus,select:focus,input:focus,button:focus,tr:focus{outline:3px solid #f58518;outline-offset:2px}
@media (max-width:700px){.split{grid-template-columns:minmax(0,1fr)}.picker{max-height:180px}.wide-only{display:none}}
@media (max-width:600px){header,main{padding:0 10px}h1{font-size:17px}td,th{padding-right:6px}}
"""

COMMON_JS = """
"use strict";
const ldacli = window.ldacli = {ready: false};
ldacli.data = JSON.parse(document.getElementById("ldacli-data").textContent);
ldacli.embed = (el, spec) => vegaEmbed(el, spec, {renderer: "svg", actions: false, ast: true});
ldacli.sortable = (table) => {
  const heads = Array.from(table.tHead.rows[0].cells);
  heads.forEach((th, col) => {
    const button = th.querySelector("button");
    if (!button) return;
    button.addEventListener("click", () => {
      const up = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(h => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      const numeric = th.dataset.type === "num";
      const key = (row) => { const c = row.cells[col]; const v = c.dataset.value ?? c.textContent;
                             return numeric ? parseFloat(v) : v; };
      const rows = Array.from(table.tBodies[0].rows);
      rows.sort((a, b) => { const x = key(a), y = key(b);
        const d = numeric ? (isNaN(x) ? -Infinity : x) - (isNaN(y) ? -Infinity : y) : String(x).localeCompare(String(y));
        return up ? d : -d; });
      rows.forEach(r => table.tBodies[0].appendChild(r));
    });
  });
};
document.querySelectorAll("table.sortable").forEach(ldacli.sortable);
"""


def page(title: str, header: str, sections: list[str], data, script: str, bundle: str) -> str:
    """The whole HTML page (see the module docstring): ``header`` and ``sections`` are HTML made
    with :func:`text`/:func:`attr`; ``data`` any JSON; ``script`` the page's own code, run after
    :data:`COMMON_JS` (with ``ldacli.data``) and ``bundle`` (Vega)."""
    app = "(() => {" + COMMON_JS + script + "})();"  # its own scope: the bundle's names are global
    csp = content_security_policy([bundle, app])
    return (f"<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{csp}\">"  # ours: no double quote in it
            f"<meta name='referrer' content='no-referrer'>"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<header>{header}</header><main>{''.join(sections)}</main>"
            f"<script type='application/json' id='ldacli-data'>{json_for_script(data)}</script>"
            f"<script>{bundle}</script><script>{app}</script></body></html>\n")
