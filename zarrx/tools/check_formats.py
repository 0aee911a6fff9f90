"""``zarrx check``: nodes whose Zarr format is ambiguous, holding both a Zarr v3 document
(``zarr.json``) and a v2 one (``.zarray``, ``.zgroup``); directories below an array."""
from __future__ import annotations

from collections.abc import Container

from zarrx.metadata import nodes
from zarrx.tools.check_report import Finding

__all__ = ["ambiguous_nodes", "below_array"]

_V2_DOCS = (".zarray", ".zgroup")


def ambiguous_nodes(keys: list[str], found: set[str]) -> list[Finding]:
    """A ``metadata`` finding for each node ``found`` whose stored ``keys`` hold ``zarr.json``
    and ``.zarray`` or ``.zgroup``: zarrx and zarr-python read the first, a Zarr v2 reader the
    others, so the node is not the same to every reader. Metadata is never repaired: which
    document is the node is for its owner to say, so nothing is removed."""
    docs: dict[str, set[str]] = {}
    for key in keys:
        folder, _, name = key.rpartition("/")
        if folder in found and name in (nodes.V3_KEY, *_V2_DOCS):
            docs.setdefault(folder, set()).add(name)
    out = []
    for path, names in sorted(docs.items()):
        v2 = sorted(names.intersection(_V2_DOCS))
        if nodes.V3_KEY not in names or not v2:
            continue
        both = " and ".join(v2)
        out.append(Finding("metadata", nodes.join(path, v2[0]), "/" + path,
                           f"ambiguous: the node holds both zarr.json and {both}, so its "
                           f"format depends on the reader (zarrx and zarr-python read "
                           f"zarr.json, as Zarr v3; a Zarr v2 reader reads {both}); remove "
                           f"the documents of the format it is not"))
    return out


def below_array(path: str, arrays: Container[str], known: dict[str, bool]) -> bool:
    """Whether a directory above ``path`` is one of ``arrays`` (complete for the directories
    above ``path``). ``known`` keeps each directory's answer, so a hierarchy n directories
    deep costs n steps in all, not n for each of its nodes."""
    todo = []
    while path and path not in known:
        todo.append(path)
        path = path.rpartition("/")[0]
    inside = known.get(path, False)
    for path in reversed(todo):
        inside = known[path] = inside or path.rpartition("/")[0] in arrays
    return inside
