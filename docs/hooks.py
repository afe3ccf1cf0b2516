"""The docs site's one hook (mkdocs.yml ``hooks``): the docstrings' Sphinx roles as code.

The docstrings name other objects as Sphinx does (``:func:`~ldacli.model.Model.load```), which
``help()`` shows as they are and mkdocstrings leaves raw (``:func:<code>...</code>``). On the site
each becomes the name in code: the last part of a dotted name that begins with ``~``, the whole
name otherwise.
"""

import re

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|exc|obj|const):(?:<code>([^<]*)</code>|`([^`]*)`)")


def _name(match: re.Match) -> str:
    name = match.group(1) if match.group(1) is not None else match.group(2)
    if name.startswith("~"):
        name = name[1:].rsplit(".", 1)[-1]
    return f"<code>{name}</code>"


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub(_name, html)
