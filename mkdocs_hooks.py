"""mkdocs hooks for the documentation site (``hooks:`` in mkdocs.yml).

Docstrings name other objects the Sphinx way (``:class:`~zarrx.store.ZipStore```); the API
reference renders them as code, the role dropped and a leading ``~`` shortening the name to its
last component, as Sphinx shows it.
"""
from __future__ import annotations

import re

_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):<code>(~?)([^<]*)</code>")


def _name(m: re.Match) -> str:
    name = m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2)
    return f"<code>{name}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    return _ROLE.sub(_name, html)
