"""The README and the docs site's pages, for the tests that check or run what they show."""

import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
DOCS = os.path.join(ROOT, "docs")


def read(path: str) -> str:
    """The text of ``path``, relative to the repository's root."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def pages() -> dict[str, str]:
    """The README and every Markdown page of the docs, by path relative to the root."""
    paths = ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(DOCS, "**", "*.md"),
                                                                                 recursive=True))
    return {p: read(p) for p in paths}


def marked_block(marker: str, path: str | None = None) -> str:
    """The code block after ``<!-- marker -->`` (in ``path``, or in the one page that has it)."""
    found = [(p, m.group(1)) for p, text in ([(path, read(path))] if path else pages().items())
             for m in re.finditer(r"<!-- " + re.escape(marker) + r" -->\n```\w*\n(.*?)```", text, re.S)]
    assert len(found) == 1, f"<!-- {marker} --> followed by a code block is in {[p for p, _ in found] or 'no page'}"
    return found[0][1]


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced code blocks of ``language`` in ``text``."""
    return re.findall(r"^```" + re.escape(language) + r"\n(.*?)^```", text, re.S | re.M)
