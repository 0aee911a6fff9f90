"""Consolidated metadata out of step with the nodes' own documents (a part of
:func:`zarrx.tools.check.check`): readers that use it (zarr-python opening a group, by default)
see another hierarchy than the documents describe, such as the shape an array had before a
resize, or no node where one was added since."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zarrx.errors import CodecError, MetadataError, ZarrError
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.node_read import join
from zarrx.tools.check_report import Finding

__all__ = ["stale_nodes", "readable_entries"]

#: the fields compared, in the order a difference is named
_FIELDS = (("shape", "shape"), ("data_type", "data type"), ("chunk_grid", "chunk grid"),
           ("fill_value", "fill value"), ("codecs", "codecs"),
           ("dimension_names", "dimension names"), ("key_encoding", "chunk key encoding"),
           ("attributes", "attributes"))

#: nodes named in a finding's text before "and N more"
_SHOWN = 3


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _difference(listed: ArrayMeta | GroupMeta, meta: ArrayMeta | GroupMeta,
                document: str) -> str | None:
    """How ``listed`` (a consolidated entry) differs from ``meta`` (the node's ``document``);
    None when it does not."""
    if isinstance(listed, ArrayMeta) != isinstance(meta, ArrayMeta):
        kinds = ("an array", "a group") if isinstance(listed, ArrayMeta) else \
            ("a group", "an array")
        return f"listed as {kinds[0]}, its {document} is {kinds[1]}'s"
    if isinstance(listed, GroupMeta) and isinstance(meta, GroupMeta):
        return None if listed.attributes == meta.attributes else \
            f"listed with attributes {_shown(listed.attributes)}, its {document} has " \
            f"{_shown(meta.attributes)}"
    if listed == meta:
        return None
    for name, what in _FIELDS:
        a, b = getattr(listed, name), getattr(meta, name)
        if name == "fill_value" and repr(a) == repr(b):
            continue
        if a != b:
            return f"listed with {what} {_shown(a)}, its {document} has {_shown(b)}"
    return None


def stale_nodes(group: str, listed: dict[str, ArrayMeta | GroupMeta], pending: set[str],
                metas: dict[str, ArrayMeta | GroupMeta], below: list[str],
                in_zip: bool = False) -> str | None:
    """What is out of step in the consolidated metadata of the group at ``group``:
    ``listed`` its entries (paths relative to the group), ``pending`` those a writer marked
    as being written, ``metas`` the nodes read from their own documents (by path) and
    ``below`` the paths of the nodes found below the group (``in_zip``: in a zip archive,
    which cannot replace a document). None when it is in step."""
    problems = []
    for path in below:
        rel = path[len(group) + 1:] if group else path
        if rel in pending:
            continue
        meta = metas.get(path)
        entry = listed.get(rel)
        if meta is None:
            continue
        document = "zarr.json" if meta.zarr_format == 3 else \
            (".zarray" if isinstance(meta, ArrayMeta) else ".zgroup")
        if entry is None:
            problems.append(f"/{path} is not listed")
            continue
        why = _difference(entry, meta, document)
        if why is not None:
            problems.append(f"/{path}: {why}")
    if not problems:
        return None
    more = f" (and {len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
    remedy = f"run zarrx consolidate on the group /{group} to write it again"
    if in_zip:
        remedy = (f"a zip archive cannot replace it: copy the archive into a directory "
                  f"(zarrx copy) and {remedy} there")
    return (f"stale: readers using it see another hierarchy than the nodes' documents: "
            f"{'; '.join(problems[:_SHOWN])}{more}; {remedy}")


def readable_entries(path: str, meta: GroupMeta, pending: set[str],
                     add: Callable[[Finding], None]) -> dict[str, ArrayMeta | GroupMeta]:
    """The consolidated entries of the group ``meta`` at ``path`` that parse (each is parsed
    when first looked up, so the group opens without the others); each that does not is
    ``add``-ed as a finding and put in ``pending`` (its entry was not read: it is not stale
    either)."""
    entries = meta.consolidated or {}
    key = join(path, ".zmetadata" if meta.zarr_format == 2 else "zarr.json")
    good: dict[str, ArrayMeta | GroupMeta] = {}
    for rel in entries:
        try:
            good[rel] = entries[rel]
        except ZarrError as exc:
            add(Finding("metadata", key, "/" + join(path, rel), exc.detail,
                        named=isinstance(exc, (MetadataError, CodecError))))
            pending.add(rel)
    return good
