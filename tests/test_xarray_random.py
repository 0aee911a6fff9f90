"""Randomized parity with xarray's engine "zarr" (zarr-python 3, the oracle): Datasets drawn with
``xarray.testing.strategies`` names plus strategies of this file (1-3 variables of integers,
floats with NaN, booleans, times, time deltas and text; coordinates; nested attributes; CF
encodings; chunks), in memory and dask-backed.

For each one: what ``to_zarr`` writes, engine "zarrx" reads as engine "zarr" does; what
``to_zarrx`` writes, engine "zarr" reads as it reads what ``to_zarr`` writes, and the stored
documents agree (attributes, data type, shape, chunks, fill value, dimension names). Appends
(``append_dim``) and ``region=`` writes are done by one writer after the other.

A few examples run by default; ``ZARRX_XARRAY_EXAMPLES=500`` runs more (random seeds).
"""
from __future__ import annotations

import base64
import json
import os
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask")
xrst = pytest.importorskip("xarray.testing.strategies")

from hypothesis import HealthCheck, event, given, reject, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from xarray_checks import WRITERS, read  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

_MORE = os.environ.get("ZARRX_XARRAY_EXAMPLES")
RANDOM = settings(max_examples=int(_MORE or 6), deadline=None, derandomize=not _MORE,
                  suppress_health_check=list(HealthCheck), database=None)

KINDS = ["int", "uint", "float", "bool", "datetime", "timedelta", "str", "fixed-str",
         "stringdtype", "bytes"]
TEXT = st.text(st.characters(categories=["L", "N", "Zs"], max_codepoint=0x17F), max_size=4)
# attribute values as JSON holds them: numbers, strings, and lists of those, nested
NUMBER = st.integers(-2**53, 2**53) | st.floats(allow_nan=False, allow_infinity=False,
                                                  width=64)
ATTR = st.recursive(NUMBER | TEXT | st.booleans(), lambda inner: st.lists(inner, max_size=3),
                    max_leaves=6)
ATTRS = st.dictionaries(TEXT.filter(lambda k: k and not k.startswith("_")), ATTR, max_size=3)
TIME_UNITS = ["days since 2000-01-01", "seconds since 1970-01-01", "hours since 1999-12-31 06:00",
              "microseconds since 2001-01-01"]


def _values(draw, kind, shape):
    size = int(np.prod(shape, dtype=int))
    if kind == "int":
        dtype = draw(st.sampled_from(["i1", "i2", "i4", "i8"]))
        info = np.iinfo(dtype)
        vals = draw(st.lists(st.integers(info.min, info.max), min_size=size, max_size=size))
        return np.array(vals, dtype=dtype).reshape(shape)
    if kind == "uint":
        dtype = draw(st.sampled_from(["u1", "u2", "u4", "u8"]))
        vals = draw(st.lists(st.integers(0, np.iinfo(dtype).max), min_size=size, max_size=size))
        return np.array(vals, dtype=dtype).reshape(shape)
    if kind == "float":
        dtype = draw(st.sampled_from(["f4", "f8"]))
        element = st.floats(width=32 if dtype == "f4" else 64, allow_infinity=False) | \
            st.just(float("nan")) | st.floats(-100, 100, width=32)
        vals = draw(st.lists(element, min_size=size, max_size=size))
        return np.array(vals, dtype=dtype).reshape(shape)
    if kind == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)),
                        dtype=bool).reshape(shape)
    if kind in ("datetime", "timedelta"):
        # (whole seconds or days now and then, so that coarse units are exact)
        step = draw(st.sampled_from([1, 10**9, 86400 * 10**9]))
        limit = 4 * 10**18 // step
        element = st.integers(-limit, limit).map(lambda n: n * step) | st.just(None)
        vals = draw(st.lists(element, min_size=size, max_size=size))
        unit = "datetime64[ns]" if kind == "datetime" else "timedelta64[ns]"
        nat = np.iinfo("i8").min
        out = np.array([nat if v is None else v + (10**18 if kind == "datetime" else 0)
                        for v in vals], dtype="i8")
        return out.view(unit).reshape(shape)
    vals = draw(st.lists(TEXT, min_size=size, max_size=size))
    if kind == "bytes":
        # (bytes none longer than one byte are stored as S1, which both engines read back as
        # the characters of one string: see docs/guide/xarray.md, "Known limits")
        if vals and max(len(v.encode()) for v in vals) < 2:
            vals[0] += "ab"
        return np.array([v.encode() for v in vals], dtype=object).reshape(shape)
    dtype = {"str": object, "fixed-str": "U", "stringdtype": np.dtypes.StringDType()}[kind]
    return np.array(vals, dtype=dtype).reshape(shape)


def _encoding(draw, kind, values, dims, sizes, fmt):
    enc = {}
    if dims and draw(st.booleans()):
        enc["chunks"] = tuple(draw(st.integers(1, max(1, sizes[d]))) for d in dims)
    if kind == "float" and draw(st.booleans()):
        choice = draw(st.sampled_from(["fill", "nanfill", "pack", "f4"]))
        if choice == "fill":
            enc["_FillValue"] = draw(st.sampled_from([-9999.0, 0.0, 1e20]))
        elif choice == "nanfill":
            enc["_FillValue"] = np.nan
        elif choice == "pack" and not np.nanmax(np.abs(values), initial=0) >= 300:
            # (values that fit: outside, xarray's coders wrap them, to_zarrx refuses them)
            enc.update(dtype="i2", scale_factor=draw(st.sampled_from([0.5, 0.01, 2.0])),
                       add_offset=draw(st.sampled_from([0.0, 10.0])), _FillValue=-32768)
        else:
            enc["dtype"] = "f4"
    if kind in ("int", "uint") and draw(st.booleans()):
        info = np.iinfo(values.dtype)
        enc["_FillValue"] = values.dtype.type(draw(st.sampled_from([info.min, info.max])))
    if kind == "datetime" and draw(st.booleans()):
        enc["units"] = draw(st.sampled_from(TIME_UNITS))
        enc["calendar"] = draw(st.sampled_from(["standard", "proleptic_gregorian", "gregorian"]))
        if draw(st.booleans()):
            enc["dtype"] = draw(st.sampled_from(["i8", "f8", "i4"]))
    if kind == "timedelta" and draw(st.booleans()):
        enc["units"] = draw(st.sampled_from(["seconds", "days", "microseconds", "hours"]))
        if draw(st.booleans()):
            enc["dtype"] = draw(st.sampled_from(["i8", "f8"]))
    # (text as UTF-8 bytes with an _Encoding; when no string is longer than one byte, both
    # engines read the stored S1 values as the characters of one string, see
    # docs/guide/xarray.md)
    if kind in ("str", "fixed-str") and draw(st.integers(0, 3)) == 0 and \
            all(len(v.encode()) > 1 for v in values.reshape(-1).tolist()):
        enc["dtype"] = "S1"
    return enc


@st.composite
def datasets(draw, min_side=0):
    """A Dataset, its encoding and its dask chunks (or None)."""
    dims = draw(xrst.dimension_names(min_dims=1, max_dims=3))
    sizes = {d: draw(st.integers(min_side, 4)) for d in dims}
    names = draw(st.lists(xrst.names().filter(lambda n: n not in dims), min_size=1, max_size=3,
                          unique=True))
    data_vars, encoding = {}, {}
    fmt = draw(st.sampled_from([2, 3]))
    for name in names:
        vdims = tuple(draw(st.permutations(dims))[:draw(st.integers(0, len(dims)))])
        kind = draw(st.sampled_from(KINDS))
        values = _values(draw, kind, tuple(sizes[d] for d in vdims))
        data_vars[name] = (vdims, values, draw(ATTRS))
        enc = _encoding(draw, kind, values, vdims, sizes, fmt)
        if enc:
            encoding[name] = enc
    coords = {}
    for d in dims:
        if draw(st.booleans()):
            kind = draw(st.sampled_from(["int", "float", "datetime", "fixed-str"]))
            coords[d] = (d, _values(draw, kind, (sizes[d],)), draw(ATTRS))
    ds = xr.Dataset(data_vars, coords=coords, attrs=draw(ATTRS))
    if len(names) > 1 and draw(st.booleans()):      # a coordinate that is not an index
        ds = ds.set_coords(names[-1])
    chunks = None
    if draw(st.booleans()):
        # dask blocks a whole number of the stored chunks (as both writers require)
        chunks = {}
        for d in ds.dims:
            stored = [enc["chunks"][enc_dims.index(d)] for n, enc in encoding.items()
                      if "chunks" in enc for enc_dims in [ds[n].dims] if d in enc_dims]
            base = stored[0] if stored and all(s == stored[0] for s in stored) else None
            if stored and base is None:
                chunks = None
                break
            chunks[d] = base * draw(st.integers(1, 2)) if base else draw(st.integers(1, 4))
    return ds, encoding, chunks, fmt


def _chunked(ds, chunks):
    return ds if chunks is None else ds.chunk(chunks)


def _documents(path):
    """{array name: (attributes, data type, shape, chunks, fill value, dimension names)} of the
    group at ``path`` as stored."""
    out = {}
    for name, arr in zarr.open_group(path, mode="r").arrays():
        md = arr.metadata
        if md.zarr_format == 3:
            doc = json.loads((path / name / "zarr.json").read_text())
            fill = doc["fill_value"]
            if isinstance(doc["data_type"], dict) and \
                    doc["data_type"]["name"] == "null_terminated_bytes":
                # (to_zarrx pads the base64 fill value to the item size, zarr-python does not:
                # the same value, see docs/guide/xarray.md)
                fill = base64.b64decode(fill).rstrip(b"\0")
            out[name] = (doc.get("attributes", {}), doc["data_type"], doc["shape"],
                         doc["chunk_grid"], fill, doc.get("dimension_names"))
        else:
            doc = json.loads((path / name / ".zarray").read_text())
            attrs = json.loads((path / name / ".zattrs").read_text()) \
                if (path / name / ".zattrs").exists() else {}
            out[name] = (attrs, doc["dtype"], doc["shape"], doc["chunks"], doc["fill_value"],
                         None)
    return out


def _write(writer, ds, path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return WRITERS[writer](ds, path, **kw)


def _outcome(writer, ds, path, **kw):
    """None when the write succeeds, else the exception."""
    try:
        _write(writer, ds, path, **kw)
    except (ValueError, TypeError, NotImplementedError, KeyError) as exc:
        return exc
    return None


def _read(path, engine, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read(path, engine, **kw)


def _expected(path):
    """What engine "zarr" reads at ``path``; an example it cannot read (times xarray encodes
    with units it cannot decode without cftime) is left out, when engine "zarrx" cannot either.
    """
    try:
        return _read(path, "zarr")
    except (ValueError, TypeError, ImportError, OverflowError) as exc:
        # (times only cftime decodes, in an index: xarray's ImportError, and engine "zarrx"'s
        # MetadataError naming the variable, as docs/guide/xarray.md says)
        from zarrx.errors import MetadataError
        with pytest.raises((type(exc), MetadataError) if isinstance(exc, ImportError)
                           else type(exc)):
            _read(path, "zarrx")
        reject()


def check_roundtrip(tmp, ds, encoding, chunks, fmt, consolidated):
    ds = _chunked(ds, chunks)
    oracle, mine = tmp / "zarr.zarr", tmp / "zarrx.zarr"
    kw = dict(zarr_format=fmt, consolidated=consolidated, encoding=encoding, mode="w")
    refused = _outcome("zarr", ds, oracle, **kw)
    mine_refused = _outcome("zarrx", ds, mine, **kw)
    if refused is not None:
        assert mine_refused is not None, f"engine zarr refused ({refused!r}); zarrx wrote it"
        return
    if _deliberate(None, mine_refused):     # (values an integer encoding cannot hold)
        event("a deliberate difference")
        return
    assert mine_refused is None, f"zarrx refused ({mine_refused!r}); engine zarr wrote it"
    expected = _expected(oracle)
    xr.testing.assert_identical(_read(oracle, "zarrx", consolidated=consolidated), expected)
    xr.testing.assert_identical(_read(mine, "zarr"), expected)
    xr.testing.assert_identical(_read(mine, "zarrx"), expected)
    assert _documents(mine) == _documents(oracle)


@RANDOM
@given(drawn=datasets(), consolidated=st.booleans())
def test_written_by_either_writer_read_identically_by_either_engine(tmp_path_factory, drawn,
                                                                     consolidated):
    ds, encoding, chunks, fmt = drawn
    check_roundtrip(tmp_path_factory.mktemp("rt"), ds, encoding, chunks, fmt, consolidated)


def _first(writer, ds, path, label, **kw):
    """The dataset's first write; an example engine "zarr" refuses is left out."""
    refused = _outcome(writer, ds, path, **kw)
    if refused is not None:
        assert label == "oracle" or writer == "zarr" or _deliberate(None, refused), \
            f"zarrx refused ({refused!r}); engine zarr wrote it"
        reject()


# Writes into stored variables where to_zarrx deliberately differs (docs/guide/xarray.md,
# "Differences from engine zarr"): it stores text of another fixed width (or StringDType
# text) that fits, non-ASCII text into a variable of encoded bytes, and dask blocks across
# stored chunks (regrouped), which xarray's writer refuses; and it refuses values xarray's
# writer would cut, wrap or convert.
MISMATCHED = "Mismatched dtypes for variable"
OVERLAP = "would overlap multiple Dask chunks"     # (to_zarrx regroups dask blocks)
REFUSED = ("fixed-width strings would be cut", "they would be cut", "cannot store",
           "does not fit the stored", "NaN cannot be stored", "NaT cannot be stored",
           "cannot be stored exactly")


def _deliberate(refused, mine_refused):
    if refused is not None and mine_refused is None:     # (text into stored bytes: ASCII)
        return MISMATCHED in str(refused) or OVERLAP in str(refused) or \
            isinstance(refused, UnicodeEncodeError) and refused.encoding == "ascii"
    if refused is None and mine_refused is not None:
        return any(text in str(mine_refused) for text in REFUSED)
    return False


def _along(ds):
    """A dimension of ``ds`` used by at least one variable."""
    return next(d for name in ds.data_vars for d in ds[name].dims)


def _same_outcome(results: dict, then: str) -> None:
    """The second write of the mixed pair ends as engine zarr's own pair does: refused by both
    (or a deliberate difference when zarrx wrote it), or stored and read back identically."""
    (refused, oracle), (mine_refused, mixed) = results["oracle"], results["mixed"]
    if then == "zarrx" and _deliberate(refused, mine_refused):
        event("a deliberate difference")
        return
    assert (refused is None) == (mine_refused is None), (refused, mine_refused)
    if refused is not None:
        event(f"refused by both: {type(refused).__name__}")
        return
    expected = _expected(oracle)
    event("compared")
    xr.testing.assert_identical(_read(mixed, "zarr"), expected)
    xr.testing.assert_identical(_read(mixed, "zarrx"), expected)


@RANDOM
@given(drawn=datasets(min_side=2), first=st.sampled_from(["zarr", "zarrx"]),
       then=st.sampled_from(["zarr", "zarrx"]), data=st.data())
def test_appends_by_one_writer_after_the_other_match_engine_zarr(tmp_path_factory, drawn, first,
                                                                 then, data):
    ds, encoding, chunks, fmt = drawn
    if not any(ds[n].dims for n in ds.data_vars):
        reject()
    dim = _along(ds)
    cut = data.draw(st.integers(1, ds.sizes[dim] - 1))
    head, tail = ds.isel({dim: slice(None, cut)}), ds.isel({dim: slice(cut, None)})
    tmp = tmp_path_factory.mktemp("ap")
    results = {}
    for label, (a, b) in {"oracle": ("zarr", "zarr"), "mixed": (first, then)}.items():
        path = tmp / f"{label}.zarr"
        _first(a, _chunked(head, chunks), path, label, zarr_format=fmt, encoding=encoding)
        results[label] = (_outcome(b, _chunked(tail, chunks), path, append_dim=dim), path)
    _same_outcome(results, then)


@RANDOM
@given(drawn=datasets(min_side=2), first=st.sampled_from(["zarr", "zarrx"]),
       then=st.sampled_from(["zarr", "zarrx"]), data=st.data())
def test_region_writes_by_one_writer_after_the_other_match_engine_zarr(tmp_path_factory, drawn,
                                                                       first, then, data):
    ds, encoding, chunks, fmt = drawn
    if not any(ds[n].dims for n in ds.data_vars):
        reject()
    dim = _along(ds)
    start = data.draw(st.integers(0, ds.sizes[dim] - 1))
    stop = data.draw(st.integers(start + 1, ds.sizes[dim]))
    # new values for the region: the dataset reversed along dim, cut to the region
    part = ds.isel({dim: slice(None, None, -1)}).isel({dim: slice(start, stop)})
    part = part.assign_coords({dim: ds[dim].isel({dim: slice(start, stop)})}) \
        if dim in ds.coords else part
    part = part.drop_vars([n for n in part.variables if dim not in part[n].dims])
    tmp = tmp_path_factory.mktemp("rg")
    results = {}
    for label, (a, b) in {"oracle": ("zarr", "zarr"), "mixed": (first, then)}.items():
        path = tmp / f"{label}.zarr"
        _first(a, ds, path, label, zarr_format=fmt, encoding=encoding)
        # (region writes are aligned with no stored chunk, so written in memory)
        results[label] = (_outcome(b, part, path, region={dim: slice(start, stop)}), path)
    _same_outcome(results, then)


# Falsifying examples found by the tests above, kept as regressions.

@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("values", [["a", "", "é"], [b"a", b"bc", b""]])
def test_dask_python_objects_are_chunked_as_engine_zarr_chunks_them(tmp_path, fmt, values):
    # engine "zarr" computes them to find their type, and chunks them as values in memory;
    # to_zarrx kept the dask blocks as chunks
    ds = xr.Dataset({"s": ("x", np.array(values, dtype=object))}).chunk(x=1)
    for writer in WRITERS:
        _write(writer, ds, tmp_path / f"{writer}.zarr", zarr_format=fmt)
    assert _documents(tmp_path / "zarrx.zarr") == _documents(tmp_path / "zarr.zarr")
    assert zarr.open_array(tmp_path / "zarrx.zarr", path="s").chunks == (3,)


@pytest.mark.parametrize("fmt", [2, 3])
def test_dask_stringdtype_text_stays_lazy_until_written(tmp_path, fmt):
    # it was computed whole when the write was planned; engine "zarr" keeps it lazy
    import dask.array as da

    text = np.dtypes.StringDType()
    computed = []

    def block(b, block_info=None):
        computed.append(block_info[None]["array-location"][0][0])
        return np.array(["a", "bé", "c", ""][:len(b)], dtype=text)

    values = da.zeros(8, chunks=4).map_blocks(block, dtype=text, meta=np.empty((0,), text))
    ds = xr.Dataset({"s": ("t", values)})
    written = WRITERS["zarrx"](ds, tmp_path / "zarrx.zarr", zarr_format=fmt, compute=False)
    # (in v2 it is stored as fixed-width text, whose width is found first)
    assert computed == [] or fmt == 2
    written.compute()
    WRITERS["zarr"](ds, tmp_path / "zarr.zarr", zarr_format=fmt)
    # (in v2 both writers compute it, and chunk it as values in memory; to_zarrx kept the
    # dask blocks as chunks)
    assert _documents(tmp_path / "zarrx.zarr") == _documents(tmp_path / "zarr.zarr")
    xr.testing.assert_identical(_read(tmp_path / "zarrx.zarr", "zarr"),
                                _read(tmp_path / "zarr.zarr", "zarr"))


@pytest.mark.parametrize("values", [np.array("", dtype=np.dtypes.StringDType()),
                                    np.array(["", ""], dtype=np.dtypes.StringDType())])
def test_empty_stringdtype_text_in_v2_takes_the_width_engine_zarr_gives_it(tmp_path, values):
    # engine "zarr" stores <U2 (numpy's width for all-empty text converted by np.asarray);
    # to_zarrx stored <U1
    ds = xr.Dataset({"s": (("x",)[:values.ndim], values)})
    for writer in WRITERS:
        _write(writer, ds, tmp_path / f"{writer}.zarr", zarr_format=2)
    assert _documents(tmp_path / "zarrx.zarr") == _documents(tmp_path / "zarr.zarr")


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("values", [np.array(b"", dtype=object),
                                    np.array([b"", b""], dtype=object)])
def test_empty_python_bytes_take_the_width_engine_zarr_gives_them(tmp_path, fmt, values):
    # engine "zarr" stores |S8 (numpy's width for all-empty bytes converted by np.asarray);
    # to_zarrx stored |S1
    ds = xr.Dataset({"s": (("x",)[:values.ndim], values)})
    for writer in WRITERS:
        _write(writer, ds, tmp_path / f"{writer}.zarr", zarr_format=fmt)
    assert _documents(tmp_path / "zarrx.zarr") == _documents(tmp_path / "zarr.zarr")
    xr.testing.assert_identical(_read(tmp_path / "zarrx.zarr", "zarr"),
                                _read(tmp_path / "zarr.zarr", "zarr"))


@pytest.mark.parametrize("lazy", [False, True])
def test_stringdtype_with_a_missing_value_marker_is_stored_fixed_width_in_v3(tmp_path, lazy):
    # engine "zarr" stores only the plain StringDType() as variable-length strings in v3 (the
    # others as fixed-width text, None as ""); to_zarrx stored them all variable-length
    values = np.array([["a", None], ["bcd", ""]], dtype=np.dtypes.StringDType(na_object=None))
    ds = xr.Dataset({"s": (("x", "y"), values)})
    ds = ds.chunk(x=1) if lazy else ds
    for writer in WRITERS:
        _write(writer, ds, tmp_path / f"{writer}.zarr", zarr_format=3)
    assert _documents(tmp_path / "zarrx.zarr") == _documents(tmp_path / "zarr.zarr")
    xr.testing.assert_identical(_read(tmp_path / "zarrx.zarr", "zarr"),
                                _read(tmp_path / "zarr.zarr", "zarr"))
