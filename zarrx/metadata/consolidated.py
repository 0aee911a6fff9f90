"""Consolidated metadata documents.

* v2 ``.zmetadata``: ``{"metadata": {"<path>/.zarray": {...}, "<path>/.zattrs": {...}, ...},
  "zarr_consolidated_format": 1}`` <-> ``{path: ArrayMeta | GroupMeta}`` (the root is path ``""``).
* v3 inline (a convention, not yet a spec): ``GroupMeta.consolidated`` is read from and written to
  the group's ``consolidated_metadata`` by :mod:`zarrx.metadata.v3`; :func:`with_consolidated`
  builds such a group.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from zarrx.metadata import json as mjson
from zarrx.metadata._util import Loc
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.v2 import parse_array_v2, parse_group_v2, serialize_v2
from zarrx.metadata.v3 import check_path

__all__ = ["parse_zmetadata", "serialize_zmetadata", "with_consolidated"]

_NAMES = (".zarray", ".zgroup", ".zattrs")


def parse_zmetadata(doc: bytes | str | dict, key: str) -> dict[str, ArrayMeta | GroupMeta]:
    """Every node in a ``.zmetadata`` document, by path (``""`` is the root group)."""
    d = mjson.load(doc, key, allow_nonfinite=True)
    loc = Loc(key)
    loc.keys(d, ("metadata",), ("zarr_consolidated_format",))
    fmt = d.get("zarr_consolidated_format", 1)
    if fmt != 1 or isinstance(fmt, bool):
        raise (loc / "zarr_consolidated_format").error("1", fmt)
    ml = loc / "metadata"
    nodes: dict[str, dict[str, Any]] = {}
    for name, value in ml.obj(d["metadata"]).items():
        path, _, base = name.rpartition("/")
        el = Loc(key, f'metadata["{name}"]')
        if base not in _NAMES:
            raise el.error("a key ending in .zarray, .zgroup or .zattrs", name)
        if path:
            check_path(path, el)
        nodes.setdefault(path, {})[base] = value
    out: dict[str, ArrayMeta | GroupMeta] = {}
    for path, docs in nodes.items():
        prefix = f"{path}/" if path else ""
        where = f'{key} metadata["{prefix}'
        if ".zarray" in docs and ".zgroup" in docs:
            raise Loc(key, f'metadata["{prefix}.zgroup"]').fail(
                "a node cannot be both an array and a group (.zarray is present too)")
        if ".zarray" in docs:
            out[path] = parse_array_v2(docs[".zarray"], docs.get(".zattrs"), f'{where}.zarray"]')
        elif ".zgroup" in docs:
            out[path] = parse_group_v2(docs[".zgroup"], docs.get(".zattrs"), f'{where}.zgroup"]')
        else:
            raise Loc(key, f'metadata["{prefix}.zattrs"]').fail(
                "attributes without a .zarray or .zgroup for the same node")
    return out


def serialize_zmetadata(entries: dict[str, ArrayMeta | GroupMeta]) -> dict[str, Any]:
    """The ``.zmetadata`` object for ``{path: meta}`` (every node gets a ``.zattrs`` entry, as
    zarr-python writes it)."""
    meta_out: dict[str, Any] = {}
    for path in sorted(entries, key=lambda p: (p != "", p)):
        prefix = f"{path.strip('/')}/" if path.strip("/") else ""
        docs = serialize_v2(entries[path])
        for name, doc in docs.items():
            meta_out[prefix + name] = doc
        meta_out.setdefault(prefix + ".zattrs", {})
    return {"metadata": meta_out, "zarr_consolidated_format": 1}


def with_consolidated(group: GroupMeta, entries: dict[str, ArrayMeta | GroupMeta]) -> GroupMeta:
    """``group`` carrying the v3 inline consolidated metadata of its descendants ``entries``
    (paths relative to the group, without the group itself)."""
    return dataclasses.replace(group, consolidated={p: m for p, m in entries.items() if p})
