"""Readable summaries: ``Array.info``, ``Group.info``, ``Group.tree()`` and
``zarrx.print_debug_info()``."""
from __future__ import annotations

import json
import math

import numpy as np

from typing import TYPE_CHECKING, Any

from zarrx import layout
from zarrx.metadata._util import printable, short
from zarrx.metadata.model import ArrayMeta

if TYPE_CHECKING:
    from zarrx.array import Array
    from zarrx.group import Group

__all__ = ["Text", "array_info", "group_info", "tree", "array_line", "human_bytes", "value_text",
           "number_texts", "stored_summary", "print_debug_info"]

#: the packages zarrx needs, and those parts of it use (codecs, stores, integrations)
REQUIRED = ("numpy", "tqdm")
OPTIONAL = ("numcodecs", "crc32c", "ml_dtypes", "msgpack", "obstore", "fsspec", "s3fs", "gcsfs",
            "dask", "distributed", "xarray", "pandas", "zarr")


def print_debug_info() -> None:
    """Print the platform, Python and zarrx versions and those of the packages zarrx uses,
    for a bug report (as zarr-python's ``print_debug_info``)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from zarrx import __version__

    print(f"platform: {platform.platform()}")
    print(f"python: {platform.python_version()}")
    print(f"zarrx: {__version__}")
    missing = []
    for title, names in (("Required dependencies", REQUIRED),
                         ("Optional dependencies", OPTIONAL)):
        print(f"\n**{title}:**")
        for name in names:
            try:
                print(f"{name}: {version(name)}")
            except PackageNotFoundError:
                missing.append(name)
    if missing:
        print("\n**Not installed:**")
        print("\n".join(missing))


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _codec_str(spec: Any) -> str:
    conf = ", ".join(f"{k}={v!r}" for k, v in spec.configuration.items() if k != "codecs")
    return f"{spec.name}({conf})"


#: the longest value a row of :func:`array_info` shows (a fill value may be a string of 60 MB,
#: a dimension name one of 2 MB): longer ones are cut, ending in ``...``
CELL_WIDTH = 200


def value_text(value: Any) -> str:
    """One value as the summaries print it: a numpy float, date or duration as numpy prints it
    (every digit the type needs; ``NaT``), anything else as its Python ``repr`` (a long string
    or bytes value cut to about :data:`CELL_WIDTH` characters)."""
    if isinstance(value, np.generic) and value.dtype.kind in "fcmM":
        return str(number_texts(np.asarray(value))[()])
    return short(_plain(value) if isinstance(value, np.generic) else value, CELL_WIDTH)


def _plain(value: Any) -> Any:
    """A numpy value as Python's (a structured item as the tuple of its fields), with a
    unit-less date as numpy holds it (``.item()`` makes None of it)."""
    if isinstance(value, np.void) and value.dtype.names is not None:
        return tuple(_plain(value[name]) for name in value.dtype.names)
    if isinstance(value, np.datetime64) and np.datetime_data(value.dtype)[0] == "generic":
        return value
    return value.item() if isinstance(value, np.generic) else value


def names_text(names: Any) -> str:
    """Dimension names as a tuple's text, each name (and the whole) cut to about
    :data:`CELL_WIDTH` characters."""
    parts = [short(n, CELL_WIDTH) for n in names[:CELL_WIDTH]]
    if len(names) > CELL_WIDTH:
        parts.append("...")
    return f"({', '.join(parts)}{',' if len(names) == 1 else ''})"


def number_texts(values: np.ndarray) -> np.ndarray:
    """numpy's text of each bool, number, date or duration (the shortest text that reads
    back, ``NaT``); a unit-less date, which numpy cannot print unless it is NaT, as its
    count."""
    if values.dtype.kind == "M" and np.datetime_data(values.dtype)[0] == "generic":
        return np.where(np.isnat(values), "NaT", values.view(np.int64).astype(str))
    if values.dtype.type.__module__.startswith("ml_dtypes"):
        # ml_dtypes files float8_e5m2 under kind "f", but numpy cannot cast it to text: each
        # value as its Python number, as the other ml_dtypes types print
        return np.array([str(v) for v in values.reshape(-1).tolist()],
                        dtype=str).reshape(values.shape)
    return values.astype(str)


def stored_bytes(array: Array) -> int:
    """Bytes of the array's stored objects (chunks or shards) in its grid: metadata documents,
    objects outside the grid and stray keys are not counted."""
    objects = layout.chunk_source(array.store, array.path, array.metadata).objects
    return sum(array.store.getsize(objects.key(coords)) or 0     # sizes only: nothing is read
               for coords in array._initialized_objects())


def stored_summary(array: Array) -> tuple[int, int] | Exception:
    """``(stored objects, their bytes)`` of the array's grid, or the StoreError saying why the
    store cannot tell (a store that cannot list its objects, as an HTTP server without
    listings): the summaries show the rest of what they know."""
    from zarrx.errors import RemoteError, StoreError
    try:
        objects = layout.chunk_source(array.store, array.path, array.metadata).objects
        count = total = 0
        for coords in array._initialized_objects():
            count += 1
            total += array.store.getsize(objects.key(coords)) or 0
        return count, total
    except RemoteError:                 # a failure to report, not a missing ability
        raise
    except StoreError as exc:
        return exc


def array_info(array: Array) -> str:
    meta = array.metadata
    summary = stored_summary(array)
    raw = array.nbytes
    if isinstance(summary, Exception):
        count_text, stored_text = f"unknown ({summary})", "unknown"
        ratio = "-"
    else:
        count, stored = summary
        count_text = f"{count} of {math.prod(array._shard_grid_shape)}"
        stored_text = f"{human_bytes(stored)} ({stored} B)"
        ratio = f"{raw / stored:.2f}" if stored else "-"
    rows = [
        ("Name", array.name),
        ("Type", "zarrx.Array"),
        ("Store", repr(array.store)),
        ("Zarr format", str(meta.zarr_format)),
        ("Data type", f"{meta.data_type.name} ({array.dtype})"),
        ("Shape", str(array.shape)),
        ("Chunk shape", str(array.chunks) if not hasattr(meta.chunk_grid, "chunk_sizes")
         else "rectilinear"),
        ("Shard shape", "none" if array.shards is None else str(array.shards)),
        ("Fill value", value_text(meta.fill_value)),
        ("Order", array.order),
        ("Read-only", str(array.read_only)),
        ("Codecs", (", ".join(_codec_str(c) for c in (*_values_outside(meta),
                                                       *meta.chunk_codecs)) or "none")
         + ("; each shard encoded whole by " + ", ".join(
             _codec_str(c) for c in meta.shard_levels[0].object_codecs)
            if meta.shard_levels and meta.shard_levels[0].object_codecs else "")),
        ("Chunks stored" if array.shards is None else "Shards stored", count_text),
        ("Raw size", f"{human_bytes(raw)} ({raw} B)"),
        ("Stored size", stored_text),
        ("Ratio", ratio),
    ]
    if meta.dimension_names:
        rows.insert(5, ("Dimensions", names_text(meta.dimension_names)))
    return _table(rows)


class Text(str):
    """The text of ``info``, ``info_complete()`` and ``tree()``: a ``str`` whose ``repr`` is
    the text itself, so that an interactive session shows the table or tree as zarr-python's
    info and tree objects show it (not a quoted string with ``\\n``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


def _table(rows: list[tuple[str, str]]) -> Text:
    width = max(len(k) for k, _ in rows)
    return Text("\n".join(f"{k:<{width}} : {_cut(v)}" for k, v in rows))


def _cut(text: str) -> str:
    return text if len(text) <= CELL_WIDTH else text[:CELL_WIDTH - 3] + "..."


def group_info(group: Group, complete: bool = False) -> str:
    """Name, type, Zarr format, read-only and store type; ``complete`` adds the numbers of
    members, arrays and groups in the whole hierarchy below (which lists the store)."""
    rows = [("Name", group.name), ("Type", "zarrx.Group"),
            ("Zarr format", str(group.zarr_format)), ("Read-only", str(group.read_only)),
            ("Store type", type(group.store).__name__)]
    if complete:
        members = group.members(max_depth=None)
        arrays = sum(1 for _, m in members if isinstance(m.metadata, ArrayMeta))
        rows += [("No. members", str(len(members))), ("No. arrays", str(arrays)),
                 ("No. groups", str(len(members) - arrays))]
    return _table(rows)


def tree(group: Group, max_depth: int | None = None, attrs: bool = False,
         max_nodes: int | None = None) -> Text:
    """The hierarchy below ``group`` as indented text, arrays with shape and dtype;
    ``max_depth`` levels of groups are opened (None: all); ``attrs`` adds each node's
    attributes (``@name = value``) under it; at most ``max_nodes`` nodes are listed (None: all),
    in depth-first order, after a first line saying so when some were left out (as zarr-python
    words and places it)."""
    lines = [group.name]
    if attrs:
        lines += _attr_lines(group.attrs, "")
    listed = 0
    # iterative: no recursion limit to reach; a group's children are listed by name (and,
    # without consolidated metadata, their metadata) and each node is made as it is printed,
    # so a group of 10^5 consolidated children costs its first max_nodes parses
    stack = [(group, group._listing(), 0, "", 1)]
    while stack:
        parent, items, i, indent, depth = stack.pop()
        if i == len(items):
            continue
        if max_nodes is not None and listed == max_nodes:
            lines.insert(0, f"Truncated at max_nodes={max_nodes}, some nodes and their children "
                         "may be missing")
            break
        listed += 1
        stack.append((parent, items, i + 1, indent, depth))
        name, meta = items[i]
        node = parent._child(name, meta)
        last = i == len(items) - 1
        branch = "└── " if last else "├── "
        sub = indent + ("    " if last else "│   ")
        is_array = isinstance(node.metadata, ArrayMeta)
        name = printable(name)
        lines.append(f"{indent}{branch}{name} {node.shape} {node.dtype}" if is_array
                     else f"{indent}{branch}{name}")
        if attrs:
            lines.extend(_attr_lines(node.attrs, sub))
        if not is_array and (max_depth is None or depth < max_depth):
            stack.append((node, node._listing(), 0, sub, depth + 1))
    return Text("\n".join(lines))


def array_line(array: Array, attrs: bool = False) -> str:
    """The one-line tree of an array (its name, shape and dtype), with its attributes."""
    lines = [f"{array.name} {array.shape} {array.dtype}"]
    if attrs:
        lines += _attr_lines(array.attrs, "")
    return "\n".join(lines)


_ATTR_WIDTH = 72


def _attr_lines(attributes: Any, indent: str) -> list[str]:
    out = []
    for key in sorted(attributes):
        text = json.dumps(attributes[key], ensure_ascii=False, default=str)
        if len(text) > _ATTR_WIDTH:
            text = text[:_ATTR_WIDTH - 3] + "..."
        out.append(f"{indent}@{key} = {text}")
    return out


def _values_outside(meta: Any) -> list[Any]:
    """The value codecs before a sharding codec, which run on each inner chunk too."""
    from zarrx.metadata.codecs import ELEMENTWISE
    return [c for level in meta.shard_levels for c in level.outer_codecs
            if c.name in ELEMENTWISE]
