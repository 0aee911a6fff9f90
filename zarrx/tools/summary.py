"""What the inspection commands show: a node's description (text and JSON), a group's
members, an array's stored objects, one stored object in detail, and selections as text."""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from zarrx import layout
from zarrx.array import Array
from zarrx.errors import IndexingError, ListingUnsupportedError, ZarrError
from zarrx.group import Group
from zarrx.info import human_bytes, number_texts, stored_summary
from zarrx.metadata.codecs import codec_json
from zarrx.metadata._util import printable, short
from zarrx.metadata.fill import fill_json
from zarrx.metadata.model import RegularGrid
from zarrx.store.chunks import parse_chunk_key
from zarrx.tools.check_report import not_handed_over
from zarrx.tools.shards import MISSING, get_shard, object_blocks, read_index
from zarrx.tools.unlisted import grid_objects, unlisted_group

__all__ = ["node_info", "group_summary", "members", "objects", "parse_selection",
           "chunk_report", "format_chunk_report", "to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """``value`` with numpy scalars, tuples, bytes and non-finite floats made JSON-ready."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, float) and not math.isfinite(value):
        # strict JSON has no such number: the string Zarr writes for it in a fill value
        return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
    return value


def node_info(node: Array | Group) -> dict[str, Any]:
    """A JSON-ready description of a node (``zarrx info --json``)."""
    meta = node.metadata
    out: dict[str, Any] = {"name": node.name, "node_type": "array" if isinstance(node, Array)
                           else "group", "zarr_format": meta.zarr_format,
                           "store": repr(node.store)}
    if isinstance(node, Group):
        try:
            out["arrays"] = sorted(node.array_keys())
            out["groups"] = sorted(node.group_keys())
            out["members_unknown"] = None
        except ListingUnsupportedError as exc:      # no listing, no consolidated metadata
            out["arrays"] = out["groups"] = None
            # why arrays and groups are None
            out["members_unknown"] = str(exc)
        out["consolidated"] = meta.consolidated is not None
        out["attributes"] = to_jsonable(meta.attributes)
        return out
    summary = stored_summary(node)
    count, stored = (None, None) if isinstance(summary, Exception) else summary
    grid = meta.chunk_grid
    out.update({
        "shape": list(node.shape), "dtype": str(node.dtype),
        "data_type": to_jsonable(meta.data_type.name),
        "chunks": None if meta.layout.read_shape is None else list(meta.layout.read_shape),
        "chunk_sizes": None if isinstance(grid, RegularGrid) else
        [list(s) for s in getattr(grid, "chunk_sizes", ())],
        "shards": None if node.shards is None else list(node.shards),
        "fill_value": to_jsonable(fill_json(meta.fill_value, meta.data_type, meta.zarr_format)),
        "codecs": to_jsonable([codec_json(c) for c in meta.codecs]),
        "dimension_names": list(meta.dimension_names) if meta.dimension_names else None,
        "attributes": to_jsonable(meta.attributes),
        "stored_objects": count,
        "grid_objects": math.prod(node._shard_grid_shape),
        "nbytes": node.nbytes, "nbytes_stored": stored,
        # why stored_objects and nbytes_stored are None: the store cannot list its objects
        "stored_unknown": str(summary) if isinstance(summary, Exception) else None,
    })
    return out


def group_summary(group: Group) -> str:
    """``zarrx info`` of a group."""
    info = node_info(group)
    # names holding control characters are quoted and escaped, never printed raw
    attrs = ", ".join(map(printable, sorted(info["attributes"]))) or "none"
    rows = [("Name", group.name), ("Type", "zarrx.Group"),
            ("Zarr format", str(info["zarr_format"])), ("Store", info["store"]),
            ("Members", f"unknown ({info['members_unknown']})" if info["arrays"] is None
             else f"{len(info['arrays'])} arrays, {len(info['groups'])} groups"),
            ("Attributes", attrs), ("Consolidated", "yes" if info["consolidated"] else "no")]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}} : {v}" for k, v in rows)


def members(group: Group) -> list[dict[str, Any]]:
    """The children of a group: name, node type, and for arrays shape and dtype."""
    out = []
    if group.metadata.consolidated is None:
        try:
            listed = group.members()
        except ListingUnsupportedError:
            raise unlisted_group(group, "ls") from None
    else:
        listed = group.members()
    for name, node in listed:
        if isinstance(node, Array):
            out.append({"name": name, "node_type": "array", "shape": list(node.shape),
                        "dtype": str(node.dtype)})
        else:
            out.append({"name": name, "node_type": "group"})
    return out


def objects(array: Array) -> list[dict[str, Any]]:
    """The stored objects of an array (chunks, or shards when sharded): key, grid
    coordinates and size."""
    source = layout.chunk_source(array.store, array.path, array.metadata).objects
    try:
        found = sorted(layout.stored_objects(source))
    except ListingUnsupportedError:             # every key of the grid asked for instead
        return [{"key": key, "coords": list(coords), "size": size}
                for coords, key, size in grid_objects(array, "ls")]
    out = []
    for coords in found:
        key = source.key(coords)
        out.append({"key": key, "coords": list(coords), "size": array.store.getsize(key)})
    return out


_INT = r"[+-]?\d+"
_ITEM = re.compile(rf"\s*(?:(\.\.\.)|({_INT})|({_INT})?\s*:\s*({_INT})?\s*(?::\s*({_INT})?)?)\s*")


def _integer(digits: str, what: str) -> int:
    """``int(digits)``; IndexingError for more digits than an int64 has (no index or chunk
    coordinate has more, and ``int`` refuses over 4300)."""
    n = len(digits.lstrip("+-"))
    if n > len(str(2**63 - 1)):
        raise IndexingError(f"{what}: expected integers of at most 19 digits, found one of "
                            f"{n} digits")
    return int(digits)


def parse_selection(text: str | None) -> Any:
    """A numpy-style basic selection written as text (``"0:10, ::2, 5"``, ``"..."``)."""
    if text is None or not text.strip():
        return Ellipsis
    out: list[Any] = []
    for part in text.split(","):
        m = _ITEM.fullmatch(part)
        if m is None or not part.strip():
            raise IndexingError(f"selection {short(text)}: expected comma-separated "
                                f"integers, slices (start:stop:step) or '...', found "
                                f"{short(part.strip())}")
        ell, index, start, stop, step = m.groups()
        if ell:
            out.append(Ellipsis)
        elif index is not None:
            out.append(_integer(index, "selection"))
        else:
            item = slice(*(None if v is None else _integer(v, "selection")
                           for v in (start, stop, step)))
            if item.step == 0:          # no array takes it: a wrong command line
                raise IndexingError(f"selection {short(text)}: expected a nonzero slice step, "
                                    f"found {short(part.strip())}")
            out.append(item)
    return tuple(out)


def _object_coords(array: Array, which: str) -> tuple[int, ...]:
    meta = array.metadata
    if re.fullmatch(r"\s*\d+(\s*,\s*\d+)*\s*", which) and meta.ndim:
        coords = tuple(_integer(v.strip(), f"array {array.name!r}: chunk coordinates")
                       for v in which.split(","))
    else:
        key = which.strip("/")
        coords = parse_chunk_key(key, meta.key_encoding, meta.ndim)  # type: ignore[assignment]
        if coords is None and array.path and key.startswith(array.path + "/"):
            # the key in the store, as ``ls`` and ``check`` print it
            rest = key[len(array.path) + 1:]
            coords = parse_chunk_key(rest, meta.key_encoding, meta.ndim)  # type: ignore[assignment]
        if coords is None:
            example = meta.key_encoding.encode((0,) * meta.ndim)
            if not meta.ndim:
                raise ZarrError(f"array {array.name!r}: {short(which)} is not the key of the "
                                f"one chunk of the 0-dimensional array, {example!r}")
            raise ZarrError(f"array {array.name!r}: {short(which)} is neither a chunk key of "
                            f"the array ({example!r}, say) nor grid coordinates such as "
                            f"{','.join(['0'] * meta.ndim)}")
    if len(coords) != meta.ndim:
        raise ZarrError(f"array {array.name!r}: chunk {short(which)}: expected {meta.ndim} "
                        f"coordinates, found {len(coords)}")
    return coords


def _stats(data: np.ndarray, fill: Any) -> dict[str, Any]:
    """Statistics of decoded values: NaN (floats) and NaT (dates, durations) are counted and
    left out of min and max; dates and durations are numpy's text."""
    out: dict[str, Any] = {"shape": list(data.shape), "dtype": str(data.dtype)}
    kind = data.dtype.kind
    if kind in "biufcmM" and data.size:
        flat = data.reshape(-1)
        missing = np.isnan(flat) if kind in "fc" else np.isnat(flat) if kind in "mM" else None
        finite = flat if missing is None else flat[~missing]
        if missing is not None:
            out["nan" if kind in "fc" else "nat"] = int(flat.size - finite.size)
        if finite.size and kind != "c":
            lo, hi = finite.min(), finite.max()
            out["min"], out["max"] = number_texts(np.array([lo, hi])).tolist() \
                if kind in "mM" else (to_jsonable(lo), to_jsonable(hi))
            if kind in "biuf":          # inf and -inf give NaN, written as JSON text
                with np.errstate(all="ignore"):
                    out["mean"] = to_jsonable(float(finite.astype(np.float64).mean()))
    if fill is not None and data.size:
        try:
            same = data == fill
            if kind in "fc" and isinstance(fill, (float, np.floating)) and np.isnan(fill):
                same = np.isnan(data)
            elif kind in "mM" and isinstance(fill, (np.datetime64, np.timedelta64)) \
                    and np.isnat(fill):
                same = np.isnat(data)
            out["fill"] = int(np.count_nonzero(same))
        except (TypeError, ValueError):
            pass
    return out


def chunk_report(array: Array, which: str) -> dict[str, Any]:
    """One stored object of ``array`` (``which``: its key relative to the array, its key in the
    store as :func:`objects` lists it, or its grid coordinates ``"0,1"``): size, codec chain,
    the inner chunks of a shard, and statistics of its decoded values (``error`` when it does
    not decode)."""
    meta = array.metadata
    coords = _object_coords(array, which)
    source = layout.chunk_source(array.store, array.path, meta).objects
    key = source.key(coords)
    size = array.store.getsize(key)
    sel = object_blocks(meta, coords, array.cdata_shape)
    out: dict[str, Any] = {"array": array.name, "key": key, "coords": list(coords),
                           "stored": size is not None, "size": size,
                           "codecs": to_jsonable([codec_json(c) for c in meta.codecs])}
    if sel is None:
        if size is None:                        # a mistyped key, not a problem of the data
            raise ZarrError(f"array {array.name!r}: chunk {coords} lies outside the array's "
                            f"grid of {array._shard_grid_shape} stored objects, and nothing "
                            f"is stored at {key!r}")
        out["error"] = f"chunk {coords} lies outside the array's grid"
        return out
    read = meta.layout.read_shape or (1,) * meta.ndim
    out["region"] = [[s.start * r, min(s.stop * r, n)] for s, r, n in zip(sel, read, meta.shape)]
    if meta.layout.sharded and size is not None:
        try:
            got = get_shard(array.store, meta, array.path, key)  # decoded when encoded whole
            blob = None if got is None else got[0]
        except ZarrError as exc:    # too long, or a shard encoded whole that does not decode
            if not_handed_over(array.store, exc):
                raise                           # not read: nothing to say about the data
            blob, exc_detail = None, exc.detail
        else:
            exc_detail = None
        entries, kind, detail = read_index(blob or b"", meta) if exc_detail is None else \
            (None, "corrupt", exc_detail)
        if entries is None:
            out["index"] = {"error": f"{kind}: {detail}"}
        else:
            present = ~((entries[:, 0] == MISSING) & (entries[:, 1] == MISSING))
            sizes = entries[present, 1]
            geom = meta.layout.shards[0]
            out["index"] = {"location": geom.level.index_location,
                            "inner_chunks": int(entries.shape[0]),
                            "present": int(present.sum()),
                            "inner_bytes_min": int(sizes.min()) if sizes.size else None,
                            "inner_bytes_max": int(sizes.max()) if sizes.size else None}
    if size is None:        # nothing stored: every value reads as the first one does
        out["decoded"] = _fill_stats(array, out["region"], meta.fill_value)
        return out
    try:
        data = array.get_block_selection(sel)
    except ZarrError as exc:
        if not_handed_over(array.store, exc):
            raise
        out["error"] = str(exc)
        return out
    out["decoded"] = _stats(np.asarray(data), meta.fill_value)
    return out


def _fill_stats(array: Array, region: list[list[int]], fill: Any) -> dict[str, Any]:
    """:func:`_stats` of a region of ``array`` where nothing is stored, from one value read
    there: the region is not read whole (a shard of a million inner chunks took 17 s, a huge
    chunk all the memory its values take)."""
    one = np.asarray(array[tuple(slice(a, a + 1) for a, _ in region)])
    out = _stats(one, fill)
    shape = [b - a for a, b in region]
    out["shape"] = shape
    for k in ("nan", "nat", "fill"):
        if k in out:
            out[k] *= math.prod(shape)
    return out


def format_chunk_report(rep: dict[str, Any]) -> str:
    rows: list[tuple[str, str]] = [("Array", rep["array"]), ("Key", rep["key"]),
                                   ("Coordinates", str(tuple(rep["coords"])))]
    rows.append(("Stored size", f"{human_bytes(rep['size'])} ({rep['size']} B)"
                 if rep["stored"] else "not stored (reads as the fill value)"))
    if "region" in rep:
        rows.append(("Region", "[" + ", ".join(f"{a}:{b}" for a, b in rep["region"]) + "]"))
    rows.append(("Codecs", _chain(rep["codecs"])))
    index = rep.get("index")
    if index is not None:
        rows.append(("Shard index", index["error"] if "error" in index else
                     f"at the {index['location']}, {index['present']} of "
                     f"{index['inner_chunks']} inner chunks stored"
                     + (f", {index['inner_bytes_min']}-{index['inner_bytes_max']} B each"
                        if index["present"] else "")))
    stats = rep.get("decoded")
    if stats is not None:
        rows.append(("Decoded", f"{tuple(stats['shape'])} {stats['dtype']}"))
        for k in ("min", "max", "mean", "nan", "nat", "fill"):
            if k in stats:
                label = {"nan": "NaN values", "nat": "NaT values",
                         "fill": "Fill values"}.get(k, k.capitalize())
                rows.append((label, str(stats[k])))
    if "error" in rep:
        rows.append(("ERROR", rep["error"]))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}} : {v}" for k, v in rows)


def _chain(codecs: list[Any]) -> str:
    parts = []
    for c in codecs:
        if isinstance(c, str):          # a codec named alone, as v3 allows
            parts.append(c)
            continue
        conf = dict(c.get("configuration", {}))
        inner = conf.pop("codecs", None)
        conf.pop("index_codecs", None)
        text = c["name"] + ("(" + ", ".join(f"{k}={v!r}" for k, v in conf.items()) + ")"
                            if conf else "")
        if inner is not None:
            text += " [" + _chain(inner) + "]"
        parts.append(text)
    return " -> ".join(parts) or "none"
