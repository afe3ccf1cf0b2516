"""Build the sample corpus of NumPy and SciPy docstrings (one document per line).

Usage, from the repository root::

    python sample_corpora/build_sample.py [--output-dir sample_corpora]

Writes, beside this script unless told otherwise:

- ``numpy_scipy_docs.txt``: one document per line, UTF-8;
- ``numpy_scipy_docs.ids``: the qualified name of each document, in the same line order;
- ``stopwords_docstrings.txt``: ldacli's English stop words plus ``DOMAIN_STOP_WORDS``, words
  found in docstrings of every subject (``--stop-words`` takes one file, so it holds both);

then prints the versions used and the size of the result on stderr.

What is collected
-----------------
Every public module of ``numpy`` and ``scipy`` is imported (names with a component starting
with ``_``, test packages and the modules in ``SKIP_PREFIXES`` are skipped, as is any module
that fails to import). From each module's own namespace we take the public callables with
their own docstring (functions, classes, ufuncs, and SciPy's distribution objects such as
``scipy.stats.norm``) whose defining module is part of NumPy or SciPy. An object found under
several names is kept once, under its shortest name (fewest dots, then alphabetical).
Docstrings that are unrendered templates (``%(before_notes)s``) are skipped.

How a docstring becomes a document
----------------------------------
The docstring is dedented and split into numpydoc sections. Only the summary, the extended
summary and the "Notes" and "Warnings" sections are kept; "Parameters", "Returns", "Examples",
"See Also", "References", "Methods" and the other sections are dropped. Paragraphs that are
only call signatures (``sin(x, /, out=None, ...)``, as C functions carry) are dropped. reST
markup is stripped: ``:math:`` roles, ``.. math::`` blocks and any leftover LaTeX are removed;
other roles keep their last name (``:func:`~numpy.linalg.svd``` becomes ``svd``); backticks,
reST directives, literal blocks, doctest lines (``>>>``, ``...``) with their output,
citations, table rules, URLs and the "Array API Standard Support" rubric go. Lines are joined
with single spaces.

A paragraph that appears in ``BOILERPLATE_MIN`` or more docstrings (once the object's own name
is blanked out) is boilerplate and dropped everywhere ("New code should use the ... method of
a Generator instance", "As an instance of the rv_continuous class, ..."). Documents with fewer
than ``MIN_WORDS`` words of 3+ letters are then dropped, and identical texts kept once, under
the shortest name (``numpy.sin`` rather than ``numpy.ma.sin``). Lines are sorted by qualified
name, so the output depends only on the NumPy and SciPy versions (and, through
:func:`inspect.cleandoc`, hardly at all on the Python version).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import platform
import re
import sys
import warnings
from collections import Counter
from pathlib import Path

PACKAGES = ("numpy", "scipy")
# Public-looking modules that hold tooling or internals rather than library API.
SKIP_PREFIXES = (
    "numpy.distutils",
    "numpy.f2py.",  # f2py's internals (numpy.f2py itself is kept)
    "numpy.conftest",
    "scipy.conftest",
    "scipy.datasets",  # needs the optional pooch package and network
    "scipy.special.cython_special",  # Cython twins of scipy.special, docstrings point there
)
SKIP_COMPONENTS = {"tests", "test", "testing_utils", "setup", "conftest"}

KEEP_SECTIONS = {"", "notes", "warnings", "warning"}
MIN_WORDS = 4  # words of 3+ letters a document needs to be kept
BOILERPLATE_MIN = 8  # a paragraph in this many docstrings is boilerplate
TEMPLATE = re.compile(r"%\(\w+\)s")  # unrendered docstring templates (scipy.stats *_gen classes)

ENGLISH_STOP_WORDS = Path(__file__).resolve().parents[1] / "ldacli" / "data" / "stopwords_en.txt"
# Words of every docstring, whatever its subject: they would top every topic.
DOMAIN_STOP_WORDS = (
    "argument", "arguments", "array", "arrays", "calculate", "calculates", "case", "cases",
    "compute", "computed", "computes", "data", "default", "defined", "details", "documentation",
    "element", "elements", "equivalent", "false", "function", "functions", "given", "input",
    "inputs", "instance", "new", "none", "note", "number", "numbers", "numpy", "object",
    "objects", "optional", "output", "outputs", "parameter", "parameters", "python", "result",
    "results", "return", "returned", "returns", "scipy", "specified", "true", "type", "types",
    "use", "used", "uses", "using", "value", "values",
)

WORD = re.compile(r"[^\W\d_]+")
SECTION_RULE = re.compile(r"^\s*-{3,}\s*$")
CALL_START = re.compile(r"[\w.]+\(")
DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(\[[^\]]*\]|[\w-]+::|_[^:]+:|\|)")
KEEP_DIRECTIVE_BODY = {"note::", "warning::", "tip::", "important::", "hint::", "attention::",
                       "caution::", "admonition::", "seealso::"}
RUBRIC = re.compile(r"^\*\*([^*]+)\*\*$")
DROP_RUBRICS = {"array api standard support"}  # the same paragraph and table in hundreds of SciPy docstrings
TABLE_RULE = re.compile(r"^\s*[=+\-|: ]+$")

MATH_ROLE = re.compile(r":math:`[^`]*`")
DOLLAR_MATH = re.compile(r"\$[^$\n]+\$")
ROLE = re.compile(r":[\w:+-]+:`~?([^`<]*?)\s*(?:<[^`>]*>)?`")
LINK = re.compile(r"`([^`<]*?)\s*<[^`>]*>`_{1,2}")
CITATION = re.compile(r"\[[\w#*.-]+\]_")
URL = re.compile(r"(?:https?|ftp)://\S+|www\.\S+|doi:\S+", re.IGNORECASE)
LATEX = re.compile(r"\\[A-Za-z]+|\\.")
BACKTICKS = re.compile(r"`+")
REF_TARGET = re.compile(r"\b[\w.]+_(?=\W|$)")  # reST references such as ``foo_``


def _skip_module(name: str) -> bool:
    parts = name.split(".")
    if any(p.startswith("_") for p in parts) or SKIP_COMPONENTS.intersection(parts):
        return True
    return name.startswith(SKIP_PREFIXES)


def public_modules(package: str) -> list:
    """Import ``package`` and its public submodules; those that fail to import are skipped."""
    root = importlib.import_module(package)
    modules = [root]
    names = sorted(
        info.name
        for info in pkgutil.walk_packages(root.__path__, prefix=package + ".", onerror=lambda _: None)
        if not _skip_module(info.name)
    )
    for name in names:
        try:
            modules.append(importlib.import_module(name))
        except Exception:  # noqa: BLE001 - optional dependencies, platform-specific modules
            print(f"skipped {name}: import failed", file=sys.stderr)
    return modules


def _defined_in_packages(obj) -> bool:
    """Whether ``obj`` comes from NumPy or SciPy rather than the standard library or elsewhere.

    Functions and classes name their module; other objects (ufuncs without ``__module__``,
    distribution instances) are judged by their type's module.
    """
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(obj), "__module__", "")
    return module.split(".")[0] in PACKAGES


def _own_docstring(obj) -> str | None:
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    if not (inspect.isclass(obj) or inspect.isroutine(obj)) and doc == getattr(type(obj), "__doc__", None):
        return None  # an instance showing its class's docstring
    return doc


def collect(modules) -> dict[str, str]:
    """Qualified name -> raw docstring of every public documented object, each object once."""
    found: dict[int, tuple[tuple[int, str], object, str]] = {}
    for module in modules:
        namespace = dict(vars(module))
        for attr, obj in namespace.items():
            if attr.startswith("_") or inspect.ismodule(obj):
                continue
            if not callable(obj) or not _defined_in_packages(obj):
                continue
            doc = _own_docstring(obj)
            if doc is None:
                continue
            name = f"{module.__name__}.{attr}"
            key = _name_key(name)
            held = found.get(id(obj))
            if held is None or key < held[0]:
                found[id(obj)] = (key, obj, doc)  # obj kept alive so ids stay unique
    return {key[1]: doc for key, _obj, doc in found.values()}


def split_sections(doc: str) -> list[tuple[str, list[str]]]:
    """Split a dedented numpydoc docstring into ``(section title lowercased, lines)``.

    The text before the first section has the title ``""``.
    """
    lines = doc.splitlines()
    sections: list[tuple[str, list[str]]] = [("", [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        title = line.strip()
        if title and SECTION_RULE.match(nxt) and len(nxt.strip()) >= len(title) - 1:
            sections.append((title.lower(), []))
            i += 2
            continue
        sections[-1][1].append(line)
        i += 1
    return sections


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def drop_blocks(lines: list[str]) -> list[str]:
    """Remove directives (with their bodies, except admonitions), literal blocks, doctests
    and boilerplate rubrics (a ``**Title**`` line up to the next rubric)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        rubric = RUBRIC.match(stripped)
        if rubric and rubric.group(1).strip().lower() in DROP_RUBRICS:
            i += 1
            while i < len(lines) and not RUBRIC.match(lines[i].strip()):
                i += 1
            continue
        match = DIRECTIVE.match(line)
        if match:
            base = _indent(line)
            keep_body = match.group(2) in KEEP_DIRECTIVE_BODY
            if keep_body:
                out.append(line[match.end():])  # an admonition's text may start on its line
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                if keep_body:
                    out.append(lines[i])
                i += 1
            continue
        if stripped.startswith((">>>", "...")):
            i += 1  # the doctest and its output, up to a blank line
            while i < len(lines) and lines[i].strip():
                i += 1
            continue
        if stripped.endswith("::"):
            out.append(line.rstrip()[:-2])
            base = _indent(line)
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                i += 1
            continue
        if TABLE_RULE.match(line) and stripped:
            i += 1
            continue
        out.append(line)
        i += 1
    return out


def strip_markup(text: str) -> str:
    """Inline reST and LaTeX to plain words."""
    text = MATH_ROLE.sub(" ", text)
    text = DOLLAR_MATH.sub(" ", text)
    text = URL.sub(" ", text)
    text = LINK.sub(r"\1", text)
    text = ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = CITATION.sub(" ", text)
    text = LATEX.sub(" ", text)
    text = BACKTICKS.sub("", text)
    text = REF_TARGET.sub(lambda m: m.group(0)[:-1], text)
    text = text.replace("**", " ").replace("|", " ")
    return " ".join(text.split())


def paragraphs(doc: str) -> list[str]:
    """The kept paragraphs of one docstring, each as one line of plain text.

    Sections other than ``KEEP_SECTIONS`` are dropped, then blocks (:func:`drop_blocks`),
    then paragraphs that are only a call signature; markup is stripped (:func:`strip_markup`).
    """
    lines: list[str] = []
    for title, section in split_sections(inspect.cleandoc(doc)):
        if title in KEEP_SECTIONS:
            lines.extend(drop_blocks(section))
            lines.append("")
    out = []
    for para in re.split(r"\n\s*\n", "\n".join(lines)):
        if not para.strip() or is_signature(para):
            continue
        text = strip_markup(para)
        if text:
            out.append(text)
    return out


def is_signature(text: str) -> bool:
    """Whether ``text`` is only call signatures, ``name(args) [-> type]``, one after another."""
    rest = text.strip()
    if not rest:
        return False
    while rest:
        start = CALL_START.match(rest)
        if not start:
            return False
        depth, i = 0, start.end() - 1
        for i in range(start.end() - 1, len(rest)):
            depth += {"(": 1, ")": -1}.get(rest[i], 0)
            if depth == 0:
                break
        if depth:
            return False
        rest = rest[i + 1 :].lstrip()
        if rest.startswith("->"):
            rest = rest.partition("\n")[2].lstrip()
    return True


def _name_key(name: str) -> tuple[int, str]:
    return name.count("."), name


def _template(text: str, name: str) -> str:
    """``text`` with the object's own short name replaced, so boilerplate matches across objects."""
    short = name.rsplit(".", 1)[-1]
    return re.sub(rf"(?<![\w.]){re.escape(short)}(?!\w)", "<NAME>", text)


def build(modules) -> list[tuple[str, str]]:
    """``(qualified name, document)`` pairs, sorted by name.

    Paragraphs found in ``BOILERPLATE_MIN`` or more docstrings (up to the object's own name)
    are dropped; then documents with fewer than ``MIN_WORDS`` words; then repeated texts,
    keeping the object with the shortest name (``numpy.sin`` rather than ``numpy.ma.sin``).
    """
    raw = {name: doc for name, doc in collect(modules).items() if not TEMPLATE.search(doc)}
    paras = {name: paragraphs(doc) for name, doc in raw.items()}
    seen_in = Counter(t for name, ps in paras.items() for t in {_template(p, name) for p in ps})
    boilerplate = {t for t, n in seen_in.items() if n >= BOILERPLATE_MIN}

    seen: set[str] = set()
    out = []
    for name in sorted(paras, key=_name_key):
        text = " ".join(p for p in paras[name] if _template(p, name) not in boilerplate)
        if len([w for w in WORD.findall(text) if len(w) >= 3]) < MIN_WORDS or text in seen:
            continue
        seen.add(text)
        out.append((name, text))
    return sorted(out)


def stop_word_lines() -> list[str]:
    """Lines of ``stopwords_docstrings.txt``: ldacli's English list followed by ``DOMAIN_STOP_WORDS``.

    ``ldacli --stop-words FILE`` replaces the English list rather than adding to it, so the
    file carries both.
    """
    english = [
        line.strip().lower()
        for line in ENGLISH_STOP_WORDS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    domain = [w for w in DOMAIN_STOP_WORDS if w not in set(english)]
    return [
        "# Stop words for sample_corpora/numpy_scipy_docs.txt, written by build_sample.py:",
        "# ldacli's English list (ldacli/data/stopwords_en.txt), then words common to",
        "# docstrings of every kind. Use with: ldacli train ... --stop-words THIS_FILE",
        *english,
        "# -- docstring vocabulary",
        *domain,
    ]


def _write(path: Path, lines: list[str]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", type=Path, default=Path(__file__).resolve().parent,
                        help="folder for numpy_scipy_docs.txt and .ids (default: beside this script)")
    args = parser.parse_args(argv)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        modules = [m for package in PACKAGES for m in public_modules(package)]
        pairs = build(modules)

    args.output_dir.mkdir(parents=True, exist_ok=True)
    _write(args.output_dir / "numpy_scipy_docs.txt", [text for _, text in pairs])
    _write(args.output_dir / "numpy_scipy_docs.ids", [name for name, _ in pairs])
    _write(args.output_dir / "stopwords_docstrings.txt", stop_word_lines())

    import numpy
    import scipy

    words = sum(len([w for w in WORD.findall(t) if len(w) >= 3]) for _, t in pairs)
    print(f"numpy {numpy.__version__}, scipy {scipy.__version__}, Python {platform.python_version()}",
          file=sys.stderr)
    print(f"{len(modules)} modules, {len(pairs)} documents, {words} words of 3+ letters "
          f"(before stop words and pruning)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
