"""``make_array_meta``: the validated ``ArrayMeta`` of a new array (used by ``create_array``).

The metadata document is built and then parsed by the same code that reads stored documents,
so a new array passes exactly the checks a stored one does.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.errors import DataTypeError, FillValueError, FillValueOverflowError, MetadataError
from zarrx.metadata._util import Loc, short
from zarrx.metadata.codecs import codec_json
from zarrx.metadata.dtype_input import resolve_dtype
from zarrx.metadata.dtypes import (category, clear_unused_bits, dtype_v2_json, dtype_v3_json,
                                   struct_fields)
from zarrx.metadata.fill import (_int_range, check_unitless_date, default_fill, fill_json,
                                 parse_fill, record_error)
from zarrx.metadata.grid import AxisEdges, compress_edges, grid_json, parse_shape
from zarrx.metadata.json import max_document_bytes, unencodable_text
from zarrx.metadata.model import (ArrayMeta, ChunkGrid, CodecSpec, DataType, KeyEncoding,
                                  RegularGrid)
from zarrx.metadata.v2 import parse_array_v2, v2_codecs_of
from zarrx.metadata.v3 import fill_endian, parse_array_v3

__all__ = ["make_array_meta", "coerce_fill", "refuse_changed_fill", "DEFAULT_FILL",
           "attributes_arg"]


def attributes_arg(attributes: Any, where: str) -> dict[str, Any]:
    """A copy of the ``attributes`` argument of a creation call (None: none), or an
    ArgumentTypeError (a ``TypeError``, as zarr-python raises) unless it is a mapping with
    string keys holding JSON values, naming the key of the first value that is not: the
    values ``node.attrs`` takes (:func:`zarrx.metadata.json.check_attributes`)."""
    from zarrx.errors import ArgumentTypeError
    from zarrx.metadata.json import check_attributes
    if attributes is None:
        return {}
    if not isinstance(attributes, Mapping) or not all(isinstance(k, str) for k in attributes):
        raise ArgumentTypeError(f"{where}: attributes: expected a mapping of str keys to JSON "
                                f"values, found {type(attributes).__name__} {short(attributes)}")
    attributes = dict(attributes)
    check_attributes(attributes, f"{where}: attributes")
    return attributes

WHERE = "array metadata"


def max_new_item_bytes() -> int:
    """The largest item (in bytes) of a new array's data type: 1/64 of the largest metadata
    document (``zarrx.config.max_metadata_bytes``; 1 MiB by default). Its fill value, one
    item, is written in full into the metadata document (base64, 4 bytes for 3; raw bits as a
    list of byte values, up to 9 bytes a byte as written), and is made, written and parsed back
    when the array is created: items up to this size keep the document well inside the limit
    and cost little memory. (Documents read may state items up to ``dtypes.MAX_ITEM_BYTES``,
    numpy's limit: zarr-python writes them.)"""
    return max_document_bytes() // 64


class _DefaultFill:
    """The fill value argument left unset: zarr-python 3's default for the data type (zero,
    "", ...). An explicit ``None`` differs in Zarr v2 only, where it stores ``null``."""

    def __repr__(self) -> str:
        return "<default fill value>"

    def __reduce__(self) -> str:
        return "DEFAULT_FILL"


DEFAULT_FILL: Any = _DefaultFill()


def coerce_fill(value: Any, dt: DataType, zarr_format: int, loc: Loc) -> Any:
    """A user-given fill value as the model holds it (see :mod:`zarrx.metadata.fill`), as
    zarr-python 3 does: ``DEFAULT_FILL`` (unset) picks the type's default in both formats
    (zero, "", b"" for variable-length bytes, written ``""`` in Zarr v2 too); ``None``
    is ``null`` (undefined) in Zarr v2 and the default in Zarr v3, which has no ``null``.
    A NaN or an infinity for a float type that has none (``float8_e4m3fn`` has no
    infinities, ``float4_e2m1fn`` neither NaN nor infinities) is refused: numpy would make it
    another value."""
    out = _coerce_fill(value, dt, zarr_format, loc)
    if isinstance(out, np.generic) and category(dt) in ("int", "float", "structured"):
        out = clear_unused_bits(out, dt.numpy)   # (narrow values: as decoded chunks hold them)
    if category(dt) == "float" and out is not None:
        want = (_NON_FINITE.get(value) or _number_text(value, "float")) \
            if isinstance(value, str) else \
            _as_float(value) if isinstance(value, (float, np.floating, int, np.integer)) \
            and not isinstance(value, (bool, np.bool_)) else None
        if want is not None and not math.isfinite(want) and not _same_special(want, out):
            kind = "NaN" if math.isnan(want) else "infinities"
            raise loc.error(f"a value {dt.numpy} can hold (it has no {kind})", value)
        if want is not None and math.isfinite(want) and math.isnan(float(out)):
            # a type without infinities, zero or negative values (float8_e8m0fnu) makes
            # a number past its range, or one it has nothing near, NaN
            raise loc.error(f"a value {dt.numpy} can hold (it would hold NaN for this "
                            f"number)", value)
    return out


_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:           # an integer past every float: an infinity, as rounded
        return math.inf if value > 0 else -math.inf


def _same_special(want: float, got: Any) -> bool:
    f = float(got)
    return math.isnan(f) if math.isnan(want) else f == want


def _coerce_fill(value: Any, dt: DataType, zarr_format: int, loc: Loc) -> Any:
    if value is DEFAULT_FILL:
        return default_fill(dt)
    if value is None:
        return None if zarr_format == 2 else default_fill(dt)
    cat = category(dt)
    if cat in ("fixed_bytes", "bytes") and isinstance(value, str):
        try:        # the user's text, not the JSON (base64) form of bytes
            value = value.encode("utf-8")
        except UnicodeEncodeError:
            raise loc.error("bytes, or a str that UTF-8 can encode (no lone surrogates)",
                            value) from None
    if cat == "structured" and isinstance(value, list):
        value = tuple(value)              # one value per field, as numpy takes a record
    if isinstance(value, str) and cat in ("float", "complex", "int", "raw", "structured"):
        try:
            return parse_fill(value, dt, loc, zarr_format)     # the JSON spellings
        except MetadataError:
            number = _number_text(value, cat)
            if number is None:
                raise
        value = number
    if isinstance(value, Mapping) and zarr_format == 3 and struct_fields(dt) is not None:
        return parse_fill(dict(value), dt, loc, 3)     # a struct's fill value in its JSON form
    if cat in ("string", "object"):
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                raise loc.error("a str or UTF-8 encoded bytes", value) from None
        elif isinstance(value, (np.datetime64, np.timedelta64)):
            value = str(value)      # numpy's text, as a fixed-width text type holds it
        elif isinstance(value, (bool, int, float, np.bool_, np.number)):
            value = str(value.item() if isinstance(value, np.generic) else value)  # as numpy
        text = loc.str(str(value) if isinstance(value, np.str_) else value)
        try:
            text.encode("utf-8")      # what vlen-utf8 stores the fill value of a chunk as
        except UnicodeEncodeError:
            raise loc.error("a string that UTF-8 can encode (no lone surrogates)",
                            value) from None
        return text
    if cat == "bytes":
        if not isinstance(value, (bytes, bytearray)):
            raise loc.error("bytes", value)
        return bytes(value)
    n = dt.numpy
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise loc.error(f"a scalar fill value for {n}", value)
        value = value[()]                     # a 0-d array is its element, as numpy takes it
    if cat == "structured" and isinstance(value, (np.integer, np.bool_)) \
            and not isinstance(value, np.timedelta64):
        value = value.item()    # every field's value, checked as a Python int (no wrapping)
    if cat == "structured" and isinstance(value, (bytes, bytearray)):   # one item's bytes
        if len(value) != n.itemsize:
            raise loc.found(f"bytes of one item of {n} ({n.itemsize} bytes)",
                            f"{len(value)} bytes")
        return np.frombuffer(bytes(value), dtype=n)[0]
    if cat in ("fixed_bytes", "fixed_str", "structured", "datetime", "timedelta", "raw"):
        refuse_changed_fill(value, n, loc)
    try:
        if cat == "int":
            if isinstance(value, (np.datetime64, np.timedelta64)):   # .item() may be None
                raise loc.error(f"an integer for {n}", value)
            v = value.item() if isinstance(value, np.generic) else value
            if isinstance(v, float) and v.is_integer() or isinstance(v, bool):
                v = int(v)                      # True is 1, as numpy casts it
            lo, hi = _int_range(n)
            if (isinstance(v, int) and not isinstance(v, bool) and not lo <= v <= hi) or (
                    isinstance(v, float) and math.isinf(v)):     # OverflowError, as int(inf)
                raise Loc(loc.key, loc.path, FillValueOverflowError).error(
                    f"an integer in [{lo}, {hi}]", v)
            return parse_fill(v, dt, loc, 3)
        if isinstance(value, (np.datetime64, np.timedelta64)) and cat in ("datetime",
                                                                            "timedelta"):
            want = np.datetime64 if cat == "datetime" else np.timedelta64
            if not isinstance(value, want):     # a moment is no duration, nor the reverse
                raise loc.error(f"a {want.__name__} or an integer for {n}", value)
            out = np.array(value).astype(n)
            if np.datetime_data(np.asarray(value).dtype)[0] != "generic":
                # a unit-less value is an integer already, taken as one (the fill value of
                # an array opened, such as one zarr-python wrote, copied into a new one)
                check_unitless_date(n, value, out.view(np.int64)[()], loc)
            if not np.can_cast(np.asarray(value).dtype, n, casting="same_kind"):
                # days into years, seconds into unit-less: no value of the type means it
                raise loc.error(f"a {want.__name__} numpy casts to {n} (casting='same_kind')",
                                value)
            return out[()]
        if cat in ("datetime", "timedelta") and isinstance(value, (int, np.integer)) \
                and not isinstance(value, bool):
            if not -2**63 <= int(value) < 2**63:     # the int64 count of units it is stored as
                raise Loc(loc.key, loc.path, FillValueOverflowError).error(
                    f"an integer in [{-2**63}, {2**63 - 1}]", int(value))
            return parse_fill(int(value), dt, loc, 3)
        if cat == "float" and not isinstance(value, np.generic):
            if isinstance(value, bool):
                value = float(value)            # as numpy casts it (zarr-python too)
            if not isinstance(value, (int, float)):
                raise loc.error("a real number", value)
            if isinstance(value, float) and not math.isfinite(value):
                return np.array(value).astype(n)[()]
            return parse_fill(value, dt, loc, 3)
        if cat == "bool" and not isinstance(value, (bool, np.bool_)):
            if isinstance(value, (int, float, np.number)):
                return np.bool_(value)      # zeros/ones of bools: 0 and 1, as numpy casts them
            raise loc.error("True or False", value)
        # a number past a float type's range rounds to an infinity, as IEEE 754 rounds it
        # (and as a Python float does above); elsewhere an overflow is an error
        over = "ignore" if cat in ("float", "complex") else "raise"
        with np.errstate(over=over, invalid="ignore"):
            arr = np.array(value, dtype=n)
        if arr.ndim:
            raise loc.error(f"a scalar fill value for {n}", value)
        if arr.dtype != n:      # a unit numpy gave a type without one ('2020-01-01': days)
            kind = "date" if cat == "datetime" else "duration"
            raise loc.error(f"'NaT' or an integer for {n} (a {kind} of unit "
                            f"{np.datetime_data(arr.dtype)[0]!r} has no value in a type "
                            f"without a unit)", value)
        if cat == "fixed_str" and unencodable_text(str(arr[()])):   # written as JSON text
            raise loc.error("a string that UTF-8 can encode (no lone surrogates)", value)
        return arr[()]
    except (TypeError, ValueError, OverflowError, FloatingPointError, RuntimeError) as exc:
        # (RuntimeError: numpy's, making text of a datetime64 for a too short bytes field)
        if isinstance(exc, MetadataError):
            raise
        if cat == "structured" and isinstance(value, tuple):   # say which field, or the count
            raise record_error(value, n, loc) from None
        if isinstance(exc, OverflowError):      # an integer some field cannot hold
            raise Loc(loc.key, loc.path, FillValueOverflowError).error(
                f"a fill value for {n}", value) from None
        raise loc.error(f"a fill value for {n}", value) from None


def refuse_changed_fill(value: Any, n: np.dtype, loc: Loc) -> None:
    """Refuse a value numpy would cast into another value of the type ``n`` (or of a field of
    the structured type ``n``, given a record: one value per field): a float, complex number,
    date or duration for fixed-width bytes (refused by zarr-python too), a number, date or
    duration whose text a fixed-width text type cuts short (``-inf`` for ``U3`` would be
    ``'-in'``), a number, date or duration for a raw type (whose bytes numpy would copy in;
    zarr-python refuses them), a float with a fractional part for an integer field (refused
    for an integer type), a numpy float or complex number for a date or duration type (as a
    Python one)."""
    if isinstance(value, np.ndarray) and not value.ndim:
        value = value[()]
    dated = isinstance(value, (np.datetime64, np.timedelta64))  # (numpy integers: not items)
    v = value.item() if isinstance(value, (np.number, np.bool_)) and not dated else value
    if isinstance(v, np.floating):          # (a long double's item is itself)
        v = float(v)
    elif isinstance(v, np.complexfloating):
        v = complex(v)
    if n.fields is not None:
        if isinstance(value, (tuple, list, np.void)) and len(value) == len(n.names):
            for name, field in zip(n.names, value):
                refuse_changed_fill(field, n.fields[name][0], loc / name)
        elif dated or isinstance(v, (float, complex)):
            # numpy would cast it into every field (a NaN into an integer one: 0)
            raise loc.error(f"a record (one value per field), an integer or one item's bytes "
                            f"for {n}", value)
        return
    if n.type is np.void and n.fields is None and (dated or isinstance(v, (bool, int, float,
                                                                          complex))):
        # numpy would copy the number's bytes in (np.int16(3) for V2: b"\x03\x00")
        raise loc.error(f"bytes or a base64 string for {n}", value)
    if n.kind in "iu" and isinstance(v, (int, float)) and not isinstance(v, bool):
        lo, hi = _int_range(n)
        if isinstance(v, float) and math.isinf(v) or isinstance(v, int) and not lo <= v <= hi:
            raise Loc(loc.key, loc.path, FillValueOverflowError).error(
                f"an integer in [{lo}, {hi}]", value)      # as for an integer type
        if isinstance(v, float) and not v.is_integer():
            raise loc.error(f"an integer for {n}", value)
    if n.kind in "iu" and isinstance(v, complex):
        raise loc.error(f"an integer for {n}", value)
    if n.kind in "mM" and isinstance(v, (float, complex)):     # as a Python float is refused
        kind = "datetime64" if n.kind == "M" else "timedelta64"
        raise loc.error(f"a {kind} or an integer for {n}", value)
    if n.kind == "S" and not (dated or isinstance(v, (bytes, str, int, float, complex,
                                                         np.void))):
        # numpy would store its text, cut short (a dict, a datetime.date)
        raise loc.error(f"bytes, a str or an integer for {n}", value)
    if n.kind not in "SU" or not (dated or isinstance(v, (bool, int, float, complex))):
        return
    if n.kind == "S" and (dated or isinstance(v, (float, complex))):
        raise loc.error(f"bytes, a str or an integer for {n}", value)
    try:
        text = str(v)
    except (ValueError, RuntimeError):    # a unit-less date has no text: the cast refuses it
        return
    width = n.itemsize // (4 if n.kind == "U" else 1)
    if len(text) > width:
        what = "date or duration" if dated else "number"
        raise loc.error(f"a {what} whose text fits in {n} (at most {width} characters, "
                        f"not {len(text)}: numpy would cut it short)", value)


def _number_text(text: str, cat: str) -> Any:
    """A number given as text other than a JSON spelling ("1.5", "nan", "-0.0", "1+2j", "5"),
    read as numpy reads it for a float, complex or integer type (zarr-python takes them so),
    or None."""
    parse = {"float": float, "complex": complex, "int": int}.get(cat)
    try:
        return None if parse is None else parse(text)
    except ValueError:
        return None


def _key_encoding(value: Any, zarr_format: int) -> KeyEncoding:
    loc = Loc(WHERE, "chunk_key_encoding")
    if value is None:
        return KeyEncoding("default", "/") if zarr_format == 3 else KeyEncoding("v2", ".")
    if not isinstance(value, (KeyEncoding, str, Mapping)) and callable(getattr(value, "to_dict",
                                                                               None)):
        value = value.to_dict()           # zarr-python's chunk key encoding objects
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        value = {"name": value[0], "separator": value[1]}   # zarr.create's (name, separator)
    if isinstance(value, KeyEncoding):
        enc = value
    elif isinstance(value, str):
        enc = KeyEncoding(value, "/" if value == "default" else ".") \
            if value in ("default", "v2") else None
        if enc is None:
            raise (loc / "name").error("'default' or 'v2'", value)
    elif isinstance(value, Mapping):
        name = value.get("name", "default")
        conf = value.get("configuration", value)
        if not isinstance(conf, Mapping):
            raise (loc / "configuration").error("a JSON object", conf)
        sep = conf.get("separator", "/" if name == "default" else ".")
        # not str: refused without comparing (a numpy array would compare item by item)
        if not isinstance(name, str) or name not in ("default", "v2"):
            raise (loc / "name").error("'default' or 'v2'", name)
        if not isinstance(sep, str) or sep not in ("/", "."):
            raise (loc / "separator").error("'/' or '.'", sep)
        enc = KeyEncoding(name, sep)
    else:
        from zarrx.errors import ArgumentTypeError
        raise Loc(WHERE, "chunk_key_encoding", error=ArgumentTypeError).error(
            '{"name": "default" or "v2", "configuration": {"separator": "/" or "."}}, a name, '
            'a (name, separator) pair or a chunk key encoding object', value)
    if zarr_format == 2 and enc.name != "v2":
        # Zarr v2 keys have no "c" prefix: "default" would be written as "v2" keys
        raise (loc / "name").error("'v2' for a Zarr v2 array (its chunk keys have no 'c' "
                                   "prefix; the separator is its dimension_separator)",
                                   enc.name)
    return enc


def _grid(chunks: Any, shape: tuple[int, ...], zarr_format: int) -> tuple[ChunkGrid | None, Any]:
    if isinstance(chunks, ChunkGrid):
        return chunks, None
    if isinstance(chunks, (int, np.integer)) and not isinstance(chunks, bool):
        chunks = (int(chunks),) * len(shape)
    if isinstance(chunks, Sequence) and any(isinstance(c, (list, tuple, AxisEdges))
                                            for c in chunks):
        if zarr_format == 2:
            raise Loc(WHERE, "chunks").error("one chunk size per dimension (v2 has no "
                                             "rectilinear grid)", chunks)
        return None, {"name": "rectilinear", "configuration": {
            "kind": "inline", "chunk_shapes": [_edges_json(c) for c in chunks]}}
    if not isinstance(chunks, Sequence) or isinstance(chunks, (str, bytes)):
        raise Loc(WHERE, "chunks").error("a sequence of chunk sizes", chunks)
    return RegularGrid(tuple(int(c) if isinstance(c, np.integer) else c for c in chunks)), None


def _edges_json(edges: Any) -> Any:
    """The ``chunk_shapes`` entry of one axis: explicit edge lengths in run-length form
    (``[length, count]`` for a run), so that the document, and parsing it, costs in proportion
    to the runs rather than to the chunks (2^20 edges of 1 were a 6 MB document, parsed in
    about 6 s); anything that is not a sequence of positive ints is left for the parser to
    name."""
    if not isinstance(edges, (list, tuple, AxisEdges)):
        return edges
    if isinstance(edges, AxisEdges) or all(
            type(e) is int and e > 0 for e in edges):   # noqa: E721 (bool and floats excluded)
        return compress_edges(edges)
    return list(edges)


def make_array_meta(shape: Sequence[int], dtype: Any, chunks: Any, *,
                    fill_value: Any = DEFAULT_FILL,
                    codecs: Sequence[CodecSpec] | None = None, zarr_format: int = 3,
                    chunk_key_encoding: Any = None, dimension_names: Sequence[str | None] | None
                    = None, attributes: dict[str, Any] | None = None, order: str = "C",
                    filters: Sequence[CodecSpec] | None = None,
                    compressor: CodecSpec | None = None) -> ArrayMeta:
    """Validated metadata of a new array. v3: ``codecs`` is the codec list. v2: ``filters``
    and ``compressor`` (codec specs, written in their numcodecs form) and ``order``."""
    if zarr_format not in (2, 3):
        raise Loc(WHERE, "zarr_format").error("2 or 3", zarr_format)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, (str, bytes)):
        raise Loc(WHERE, "shape").error("a sequence of non-negative integers", shape)
    shape_t = parse_shape([int(s) if isinstance(s, np.integer) else s for s in shape],
                          Loc(WHERE, "shape"))
    dt, endian = resolve_dtype(dtype, zarr_format)
    most = max_new_item_bytes()
    if dt.itemsize > most:
        raise Loc("dtype", error=DataTypeError).found(
            f"a data type of at most {most} bytes an item (a new array's fill "
            f"value, one item, is written in full into its metadata document)",
            f"{short(dtype)} of {dt.itemsize} bytes an item")
    grid, grid_doc = _grid(chunks, shape_t, zarr_format)
    fill = coerce_fill(fill_value, dt, zarr_format, Loc(WHERE, "fill_value", FillValueError))
    enc = _key_encoding(chunk_key_encoding, zarr_format)
    attrs = attributes_arg(attributes, WHERE)
    if dimension_names is not None and (bad := unencodable_text(list(dimension_names))):
        # a metadata document is UTF-8 (an escaped lone surrogate is refused by tensorstore)
        raise Loc(WHERE, "dimension_names").error(
            "names that UTF-8 can encode (no lone surrogates)", bad)
    codecs = list(codecs) if codecs is not None else []
    if zarr_format == 3:
        if filters or compressor is not None:
            raise Loc(WHERE, "filters").error("codecs= for a Zarr v3 array (filters= and "
                                              "compressor= are Zarr v2's)", "filters/compressor")
        if not codecs:
            kind = category(dt)
            codecs = [CodecSpec("vlen-utf8") if kind == "string" else CodecSpec("vlen-bytes")
                      if kind == "bytes" else CodecSpec("bytes", {"endian": "little"} if
                                                        dt.itemsize > 1 else {})]
        doc: dict[str, Any] = {
            "shape": list(shape_t), "data_type": dtype_v3_json(dt),
            "chunk_grid": grid_doc or grid_json(grid, shape_t),   # type: ignore[arg-type]
            "chunk_key_encoding": {"name": enc.name, "configuration": {"separator":
                                                                       enc.separator}},
            "fill_value": fill_json(fill, dt, 3), "codecs": [codec_json(c) for c in codecs],
            "attributes": attrs, "zarr_format": 3, "node_type": "array",
            "storage_transformers": []}
        if dimension_names is not None:
            doc["dimension_names"] = list(dimension_names)
        meta = parse_array_v3(doc, WHERE)
        endian = fill_endian(dt, meta.chunk_codecs)
        if endian == "big":       # a structured fill value is stored in the codec's byte order
            doc["fill_value"] = fill_json(fill, dt, 3, endian)
            meta = parse_array_v3(doc, WHERE)
        return meta
    if grid is None or not isinstance(grid, RegularGrid):
        raise Loc(WHERE, "chunks").error("a regular chunk grid", chunks)
    if codecs:
        raise Loc(WHERE, "codecs").error("filters= and compressor= for a Zarr v2 array",
                                         [c.name for c in codecs])
    if order not in ("C", "F"):
        raise Loc(WHERE, "order").error("'C' or 'F'", order)
    filters = list(filters or ())
    if dt.variable and not any(f.name in ("vlen-utf8", "vlen-bytes") for f in filters):
        filters.append(CodecSpec("vlen-bytes" if category(dt) == "bytes" else "vlen-utf8"))
    v2 = v2_codecs_of(filters, compressor, Loc(WHERE))
    zarray = {"shape": list(shape_t), "chunks": list(grid.chunk_shape),
              "dtype": dtype_v2_json(dt, endian), "fill_value": fill_json(fill, dt, 2, endian),
              "order": order, "filters": None if v2.filters is None else list(v2.filters),
              "dimension_separator": enc.separator, "compressor": v2.compressor,
              "zarr_format": 2}
    if dimension_names is not None:
        if len(dimension_names) != len(shape_t):
            raise Loc(WHERE, "dimension_names").found(
                f"{len(shape_t)} names (one per dimension)", f"{len(dimension_names)} names")
        if any(n is None for n in dimension_names):
            # xarray's convention holds a name for every axis: a null makes the array
            # unreadable to xarray (zarr-python's backend and zarrx's alike)
            raise Loc(WHERE, "dimension_names").error(
                "a name for every axis of a Zarr v2 array (stored as the _ARRAY_DIMENSIONS "
                "attribute, which holds strings only)", list(dimension_names))
        attrs["_ARRAY_DIMENSIONS"] = list(dimension_names)
    return parse_array_v2(zarray, attrs, WHERE)
