"""Zarr v3 ``zarr.json``: parse into ``ArrayMeta`` / ``GroupMeta`` and serialise back.

Unknown top-level fields are accepted only as extension objects with ``"must_understand":
false`` (kept in ``extra`` and written back); anything else unknown raises ``MetadataError``
naming the field. Writing back prefers the spelling a document was read with (hex NaN vs
``"NaN"``, a ``chunk_key_encoding`` without configuration, absent optional fields) whenever it
still means the same thing, so a read-write round trip gives the same JSON values.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from zarrx.errors import MetadataValidationError, NodeTypeValidationError
from zarrx.metadata import json as mjson
from zarrx.metadata._util import Loc
from zarrx.metadata.codecs import codec_json, parse_codecs_v3
from zarrx.metadata.dtypes import category, dtype_v3_json, parse_dtype_v3
from zarrx.metadata.fill import fill_json, finite_json, parse_fill, same_fill
from zarrx.metadata.lazy_entries import ARRAY, GROUP, LazyEntries, parsed_entries
from zarrx.metadata.grid import (axis_gcd, check_grid, grid_json, key_encoding_json, parse_grid_v3,
                                 parse_key_encoding_v3, parse_shape)
from zarrx.metadata.model import (ArrayMeta, CodecSpec, DataType, GroupMeta, RectilinearGrid,
                                  RegularGrid, register_node_dict)

__all__ = ["parse_array_v3", "parse_group_v3", "parse_v3", "read_v3", "serialize_v3", "PENDING",
           "pending_paths", "consolidated_parts", "fill_endian", "name_key", "entry_key"]

ARRAY_REQUIRED = ("zarr_format", "node_type", "shape", "data_type", "chunk_grid",
                  "chunk_key_encoding", "fill_value", "codecs")
ARRAY_OPTIONAL = ("attributes", "dimension_names", "storage_transformers")
GROUP_OPTIONAL = ("attributes", "consolidated_metadata")
ARRAY_KNOWN = frozenset(ARRAY_REQUIRED + ARRAY_OPTIONAL)
GROUP_KNOWN = frozenset(("zarr_format", "node_type") + GROUP_OPTIONAL)
# zarrx's list of nodes whose consolidated entries may be stale (a writer was rewriting them);
# kept in a v2 ``.zmetadata`` and in a v3 group's ``consolidated_metadata`` object, where other
# readers ignore it (see ``zarrx.metadata.nodes``)
PENDING = "zarrx_pending"


def name_key(name: str) -> tuple[str, str]:
    """The order of node names as zarr-python 3 sorts them: ignoring case (NFKC, casefolded;
    ``alpha``, ``Mid``, ``zeta``), then by the name itself."""
    return unicodedata.normalize("NFKC", name).casefold(), name


def entry_key(path: str) -> tuple[int, str, str, str, str]:
    """Where the entry ``path`` goes in a group's consolidated metadata: by depth, then by
    path ignoring case, as zarr-python 3 writes them (engine "zarr" lists a group's arrays in
    that order). The entries of one group stay together even where two groups' paths differ
    only in case: zarr-python's reader looks for a group's children only among neighbouring
    entries of one depth."""
    parent, _, name = path.rpartition("/")
    return (path.count("/"), name_key(parent)[0] + "/", parent) + name_key(name)


def _load(doc: Any, key: str) -> dict[str, Any]:
    return mjson.load(doc, key)


def _extensions(d: dict[str, Any], known: frozenset[str], loc: Loc) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if known.issuperset(d):
        return extra
    for name, value in d.items():
        if name in known:
            continue
        if isinstance(value, dict) and value.get("must_understand") is False:
            extra[name] = value
        else:
            raise (loc / name).error('a known field, or an extension object with '
                                     '"must_understand": false', value)
    return extra


#: how the entry point of drafts of Zarr v3 that predate the spec (GDAL 3.6 writes one)
#: names its protocol in ``zarr_format``
DRAFT_PROTOCOL = "https://purl.org/zarr/spec/protocol/core/3."


def _header(d: dict[str, Any], loc: Loc, node_type: str | None) -> str:
    if "zarr_format" not in d:
        raise loc.fail("missing required field 'zarr_format'", MetadataValidationError)
    if d["zarr_format"] != 3 or isinstance(d["zarr_format"], bool):
        if isinstance(d["zarr_format"], str) and d["zarr_format"].startswith(DRAFT_PROTOCOL):
            raise (loc / "zarr_format").error(
                "3 (the final Zarr v3 spec; this zarr.json is the entry point of a draft of v3 "
                "that keeps metadata under meta/ and chunks under data/, which zarrx does not "
                "read)", d["zarr_format"], MetadataValidationError)
        raise (loc / "zarr_format").error("3", d["zarr_format"], MetadataValidationError)
    if "node_type" not in d:
        raise loc.fail("missing required field 'node_type'", MetadataValidationError)
    nt = d["node_type"]
    if nt not in ("array", "group") or (node_type is not None and nt != node_type):
        raise (loc / "node_type").error(repr(node_type) if node_type else "'array' or 'group'",
                                        nt, NodeTypeValidationError)
    return nt


def _attributes(d: dict[str, Any], loc: Loc) -> dict[str, Any]:
    return dict((loc / "attributes").obj(d.get("attributes", {})))


def _array(d: dict[str, Any], loc: Loc) -> ArrayMeta:
    _header(d, loc, "array")
    for name in ARRAY_REQUIRED:
        if name not in d:
            raise loc.fail(f"missing required field {name!r}")
    extra = _extensions(d, ARRAY_KNOWN, loc)
    shape = parse_shape(d["shape"], loc / "shape")
    dt = parse_dtype_v3(d["data_type"], loc / "data_type")
    grid = parse_grid_v3(d["chunk_grid"], shape, loc / "chunk_grid")
    check_grid(grid, shape, dt.itemsize, loc / "chunk_grid")
    enc = parse_key_encoding_v3(d["chunk_key_encoding"], loc / "chunk_key_encoding")
    if isinstance(grid, RegularGrid):
        seen = grid.chunk_shape
    else:
        assert isinstance(grid, RectilinearGrid)
        seen = tuple(axis_gcd(e) for e in grid.chunk_sizes)
    codecs, levels, inner = parse_codecs_v3(d["codecs"], dt, seen, loc / "codecs")
    if levels and not isinstance(grid, RegularGrid):
        raise (loc / "chunk_grid" / "name").error(
            "'regular' (zarrx shards regular chunk grids only)", d["chunk_grid"]["name"])
    fill = parse_fill(d["fill_value"], dt, loc / "fill_value", 3, fill_endian(dt, inner))
    names = d.get("dimension_names")
    if names is not None:
        nl = loc / "dimension_names"
        items = nl.list(names, "an array of strings or nulls, or null")
        if len(items) != len(shape):
            raise nl.found(f"{len(shape)} names (one per dimension)", f"{len(items)} names")
        for i, n in enumerate(items):
            if n is not None and not isinstance(n, str):
                raise (nl / i).error("a string or null", n)
        names = tuple(items)
    transformers = d.get("storage_transformers", [])
    if not (type(transformers) is list and not transformers):
        for i, st in enumerate((loc / "storage_transformers").list(transformers)):
            if not (isinstance(st, dict) and st.get("must_understand") is False):
                raise (loc / "storage_transformers" / i).error(
                    'no storage transformer (none is supported) or one with "must_understand": '
                    'false', st)
    if d.get("storage_transformers"):
        extra["storage_transformers"] = d["storage_transformers"]
    return ArrayMeta(shape=shape, data_type=dt, chunk_grid=grid, key_encoding=enc,
                     fill_value=fill, codecs=codecs, shard_levels=levels, chunk_codecs=inner,
                     attributes=_attributes(d, loc), dimension_names=names, zarr_format=3,
                     extra=extra, json=d)


def fill_endian(dt: DataType, chunk_codecs: Sequence[CodecSpec]) -> str | None:
    """The byte order of a base64 ``structured`` fill value: the ``bytes`` codec's (little
    endian without one), as the data type's specification has it; None for other types."""
    if category(dt) != "structured":
        return None
    for c in chunk_codecs:
        if c.name == "bytes":
            return c.configuration.get("endian")
    return None


def _entry_loc(loc: Loc, path: str) -> Loc:
    return Loc(loc.key, f'{loc.path}["{path}"]')


def _group(d: dict[str, Any], loc: Loc, lazy: bool = False) -> GroupMeta:
    """A group's ``zarr.json`` object ``d``; its consolidated entries parsed at once, or
    (``lazy``) each on first lookup (:class:`InlineEntries`)."""
    _header(d, loc, "group")
    extra = _extensions(d, GROUP_KNOWN, loc)
    consolidated: Any = None
    parts = consolidated_parts(d, loc)
    if parts is not None:
        raw, pending_list = parts
        ml = loc / "consolidated_metadata" / "metadata"
        consolidated = InlineEntries(raw, ml)
        if not lazy:
            consolidated = parsed_entries(consolidated)
        if PENDING in d["consolidated_metadata"]:
            pending = tuple(pending_list)
            return GroupMeta(attributes=_attributes(d, loc), zarr_format=3,
                             consolidated=consolidated, consolidated_pending=pending,
                             extra=extra, json=d)
    return GroupMeta(attributes=_attributes(d, loc), zarr_format=3, consolidated=consolidated,
                     extra=extra, json=d)


_KINDS = {"array": ARRAY, "group": GROUP}


def _entry_kind(entry: Any) -> int:
    """The kind an inline consolidated entry says it is (0: not said, or said wrongly, which
    its parse reports), its ``node_type`` of any JSON type."""
    node_type = entry.get("node_type") if type(entry) is dict else None
    return _KINDS.get(node_type, 0) if type(node_type) is str else 0


class InlineEntries(LazyEntries):
    """The entries of a v3 group's inline consolidated metadata, each parsed on first lookup
    (its kind read from its ``node_type``), with the message an eager parse gave."""

    __slots__ = ("_raw", "_loc")

    def __init__(self, raw: dict[str, Any], loc: Loc) -> None:
        super().__init__({p: _entry_kind(e) for p, e in raw.items()})
        self._raw = raw
        self._loc = loc

    def _parse(self, path: str) -> ArrayMeta | GroupMeta:
        el = _entry_loc(self._loc, path)
        return _node(el.obj(self._raw[path]), el)


def consolidated_parts(d: dict[str, Any], loc: Loc) -> tuple[dict[str, Any], list[str]] | None:
    """The inline consolidated entries of a group's ``zarr.json`` object ``d`` (by path, not
    parsed) and its pending paths, the layout checked; None when it has none."""
    cm = d.get("consolidated_metadata")
    if cm is None:
        return None
    cl = loc / "consolidated_metadata"
    cm = cl.obj(cm)
    cl.keys(cm, ("kind", "metadata"), ("must_understand", PENDING))
    if cm["kind"] != "inline":
        raise (cl / "kind").error("'inline'", cm["kind"])
    if "must_understand" in cm:      # zarrx understands inline entries: either is read
        (cl / "must_understand").bool(cm["must_understand"])
    ml = cl / "metadata"
    entries = ml.obj(cm["metadata"])
    for path in entries:
        if not path_ok(path):
            check_path(path, _entry_loc(ml, path))
    return entries, pending_paths(cm.get(PENDING, []), cl / PENDING)


def pending_paths(value: Any, loc: Loc) -> list[str]:
    """The node paths of a ``zarrx_pending`` list (a path ending in ``/`` stands for the node
    and everything below it)."""
    pending = loc.list(value, "an array of node paths")
    for i, path in enumerate(pending):
        if not isinstance(path, str):
            raise (loc / i).error("a node path", path)
        body = path[:-1] if path.endswith("/") else path    # "a/": a and all below it
        if body:
            check_path(body, loc / i)
    return pending


def path_ok(path: str) -> bool:
    """Whether ``path`` is a node path: not empty, no empty, ``.`` or ``..`` segment."""
    s = f"/{path}/"
    return "//" not in s and "/./" not in s and "/../" not in s


def check_path(path: str, loc: Loc) -> None:
    if not path_ok(path):
        raise loc.error("a node path such as 'a/b' (no empty, '.' or '..' segments)", path)


def _node(d: dict[str, Any], loc: Loc) -> ArrayMeta | GroupMeta:
    nt = _header(d, loc, None)
    return _array(d, loc) if nt == "array" else _group(d, loc)


def parse_array_v3(doc: bytes | str | dict, key: str) -> ArrayMeta:
    """An array's ``zarr.json`` (bytes, text or parsed dict) read from store key ``key``."""
    return _array(_load(doc, key), Loc(key))


def parse_group_v3(doc: bytes | str | dict, key: str) -> GroupMeta:
    with mjson.gc_paused():         # a group may hold consolidated metadata: many objects
        return _group(_load(doc, key), Loc(key))


def parse_v3(doc: bytes | str | dict, key: str) -> ArrayMeta | GroupMeta:
    """An array or group ``zarr.json``, by its ``node_type``; a group's consolidated entries
    each parsed (the first malformed one raises)."""
    with mjson.gc_paused():
        return _node(_load(doc, key), Loc(key))


def read_v3(doc: bytes | str | dict, key: str) -> ArrayMeta | GroupMeta:
    """``parse_v3``, a group's consolidated entries parsed when they are first looked up
    (:class:`InlineEntries`): what opening a node reads."""
    with mjson.gc_paused():
        d = _load(doc, key)
        loc = Loc(key)
        return _group(d, loc, lazy=True) if _header(d, loc, None) == "group" else _array(d, loc)


# -- serialise ---------------------------------------------------------------------------------
def _src(meta: ArrayMeta | GroupMeta) -> dict[str, Any]:
    src = meta._json
    return src if isinstance(src, dict) and src.get("zarr_format") == 3 else {}


def _same(parse: Any, value: Any, expect: Any) -> bool:
    try:
        return parse(value) == expect
    except ValueError:
        return False


def _kept_flag(obj: dict[str, Any], src: Any) -> dict[str, Any]:
    """``obj`` with the ``must_understand`` of ``src``, the object it replaces, when that names
    the same extension: a flag the document was read with stays as written."""
    if isinstance(src, dict) and src.get("name") == obj["name"] and "must_understand" in src:
        return _ordered({**obj, "must_understand": src["must_understand"]}, src)
    return obj


def _ordered(out: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    if not src:
        return out
    first = {k: out[k] for k in src if k in out}
    first.update((k, v) for k, v in out.items() if k not in first)
    return first


def serialize_v3(meta: ArrayMeta | GroupMeta) -> dict[str, Any]:
    """The ``zarr.json`` object of a node."""
    if isinstance(meta, GroupMeta):
        return _serialize_group(meta)
    src = _src(meta)
    if meta.zarr_format != 3:
        raise Loc("zarr.json", "zarr_format").error("an array of Zarr format 3 (write a v2 "
                                                    "array with serialize_v2)", meta.zarr_format)
    enc = meta.key_encoding
    if "chunk_key_encoding" in src and _same(
            lambda v: parse_key_encoding_v3(v, Loc("k")), src["chunk_key_encoding"], enc):
        enc_json = src["chunk_key_encoding"]
    else:
        enc_json = key_encoding_json(enc)
    endian = fill_endian(meta.data_type, meta.chunk_codecs)
    fv = fill_json(meta.fill_value, meta.data_type, 3, endian)
    if "fill_value" in src and finite_json(src["fill_value"]):
        try:
            old = parse_fill(src["fill_value"], meta.data_type, Loc("k"), 3, endian)
            if same_fill(old, meta.fill_value, meta.data_type):
                fv = src["fill_value"]
        except ValueError:
            pass
    out: dict[str, Any] = {
        "shape": list(meta.shape), "data_type": dtype_v3_json(meta.data_type),
        "chunk_grid": _kept_flag(grid_json(meta.chunk_grid, meta.shape), src.get("chunk_grid")),
        "chunk_key_encoding": enc_json,
        "fill_value": fv, "codecs": [codec_json(c) for c in meta.codecs]}
    if meta.attributes or "attributes" in src or not src:
        out["attributes"] = meta.attributes
    out["zarr_format"] = 3
    out["node_type"] = "array"
    if meta.dimension_names is not None or "dimension_names" in src:
        out["dimension_names"] = (None if meta.dimension_names is None
                                  else list(meta.dimension_names))
    if "storage_transformers" in src or not src:
        out["storage_transformers"] = []
    out.update(meta.extra)
    return _ordered(out, src)


def _serialize_group(meta: GroupMeta) -> dict[str, Any]:
    src = _src(meta)
    out: dict[str, Any] = {}
    if meta.attributes or "attributes" in src or not src:
        out["attributes"] = meta.attributes
    out["zarr_format"] = 3
    if meta.consolidated is not None:
        cm_src = src.get("consolidated_metadata")
        cm: dict[str, Any] = {"kind": "inline", "must_understand": False, "metadata": {
            p: serialize_v3(meta.consolidated[p])
            for p in sorted(meta.consolidated, key=entry_key)}}
        if meta.consolidated_pending:
            cm[PENDING] = sorted(set(meta.consolidated_pending))
        if isinstance(cm_src, dict):
            if "must_understand" not in cm_src:
                del cm["must_understand"]
            else:
                cm["must_understand"] = cm_src["must_understand"]
            cm = {k: cm[k] for k in (*cm_src, *cm) if k in cm}
        out["consolidated_metadata"] = cm
    elif "consolidated_metadata" in src:
        out["consolidated_metadata"] = None
    out["node_type"] = "group"
    out.update(meta.extra)
    return _ordered(out, src)


register_node_dict(3, serialize_v3)
