"""zarr-python's own hypothesis strategies (``zarr.testing.strategies``) as a source of cases.

zarr-python draws arrays (data type, shape, chunks, shards, fill value, attributes, dimension
names, v2 or v3), metadata documents and selections (``basic_indices``,
``orthogonal_indices``) for its own tests. Here each drawn array is written by zarr-python into
its ``MemoryStore``; the stored bytes are copied into a zarrx ``MemoryStore`` and zarrx must see
the array zarr-python sees: the same shape, data type, fill value, attributes, dimension names,
chunks, shards and every item bit for bit (NaN payloads and signed zeros count). Selections
drawn for the array must read as numpy reads them, and writes through zarrx must leave an
array that zarr-python reads back as numpy's model.

``ZARRX_ZARR_STRATEGY_EXAMPLES`` sets the number of examples per test (default 60).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import zarrx
from zarrx.store import MemoryStore

zarr = pytest.importorskip("zarr")
zs = pytest.importorskip("zarr.testing.strategies")
from zarr.core.buffer import default_buffer_prototype  # noqa: E402

# zarr-python warns that its v3 fixed-length string and datetime types have no spec yet
pytestmark = pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3",
                                        "ignore::zarr.errors.ZarrUserWarning")

EXAMPLES = int(os.environ.get("ZARRX_ZARR_STRATEGY_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])

# at most 3 axes of up to 6 items and short names keep an example quick (the default shapes
# reach 4 axes and longer ones, and take several times as long)
ARRAYS = zs.arrays(shapes=zs.npst.array_shapes(max_dims=3, min_side=0, max_side=6),
                   paths=zs.paths(max_num_nodes=2), array_names=zs.short_node_names)


def _copy(zarr_array: Any) -> MemoryStore:
    """A zarrx MemoryStore holding the bytes zarr-python stored for ``zarr_array``."""
    stored = zarr_array.store._store_dict
    return MemoryStore({key: value.to_bytes() for key, value in stored.items()})


def _same_items(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """``got`` equals ``want`` in data type, shape and every byte (NaN payloads included)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.ndim == 0 and got.dtype.kind in "SU" and want.dtype.kind == got.dtype.kind:
        # a single item is a numpy scalar (np.bytes_, np.str_), whose width is its own
        # length, as numpy gives; zarr-python returns a 0-d array in the array's width
        # (docs/guide/migrating.md)
        got = got.astype(want.dtype)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), (
        f"{what}: items differ\n{got!r}\n{want!r}")


def _same_fill(got: Any, want: Any, dtype: np.dtype) -> None:
    if want is None or got is None:
        assert got is None and want is None, (got, want)
        return
    _same_items(np.array(got, dtype=dtype), np.array(want, dtype=dtype), "fill_value")


def _open_zarrx(zarr_array: Any, mode: str = "r") -> zarrx.Array:
    """zarrx's handle on ``zarr_array``. zarr-python's chunk_shapes() draws a chunk length of 0
    for an axis of length 0 (and stores it): zarrx reads those too, and keeps the 0."""
    return zarrx.open_array(_copy(zarr_array), path=zarr_array.path, mode=mode)


def _against_zarr_python(got: np.ndarray, read: Any, a: Any, what: str) -> None:
    """``got`` equals what zarr-python reads (``read()``). zarr-python 3.1.6 divides by the
    chunk length for boolean selections, so on an array with a chunk length of 0 it may raise
    ZeroDivisionError there; zarrx's result is then checked against numpy only."""
    try:
        want = read()
    except ZeroDivisionError:
        assert 0 in a.chunks or 0 in (a.shards or ()), f"{what}: zarr-python failed"
        return
    _same_items(got, want, what)


def _pair(a: Any, mode: str = "r") -> tuple[zarrx.Array, Any]:
    """zarrx's handle on the bytes of ``a`` and zarr-python's, both opened from them (the
    handle that wrote them keeps its own fill value in memory; see the NaN case below)."""
    z = _open_zarrx(a, mode)
    return z, zarr.open_array(_to_zarr_python(z.store), path=a.path, mode="r")


def _written(got: np.ndarray, model: np.ndarray, fill: Any) -> np.ndarray:
    """``got`` with, for a float type whose fill value is NaN, each NaN the model holds read
    as the model's bits: a chunk written as NaNs of any payload equals such a fill value and
    is not stored, so it reads back as the fill value (docs/SPEC.md, "Where zarr-python 3.1.6
    and tensorstore deviate": chunks left out)."""
    got = np.array(got)
    if got.dtype.kind == "f" and _is_nan(fill):
        both = np.isnan(got) & np.isnan(model)
        got[both] = model[both]
    return got


def _utf8_encodable(value: Any) -> bool:
    """Whether ``value`` is not text, or text UTF-8 can encode."""
    try:
        str(value).encode("utf-8") if isinstance(value, str) else None
    except UnicodeEncodeError:
        return False
    return True


def _is_nan(value: Any) -> bool:
    return np.asarray(value).dtype.kind in "fc" and bool(np.isnan(value))


@SETTINGS
@given(ARRAYS)
def test_arrays_zarr_python_draws_read_the_same_in_zarrx(a):
    z, b = _pair(a)
    note(f"zarr_format={a.metadata.zarr_format} dtype={a.dtype} shape={a.shape} "
         f"chunks={a.chunks} shards={a.shards} fill={a.fill_value!r}")
    assert (z.shape, z.dtype, z.chunks, z.shards) == (b.shape, b.dtype, b.chunks, b.shards)
    assert (z.shape, z.dtype, z.chunks, z.shards) == (a.shape, a.dtype, a.chunks, a.shards)
    assert z.metadata.zarr_format == a.metadata.zarr_format
    assert dict(z.attrs) == dict(b.attrs) == dict(a.attrs)
    if a.metadata.zarr_format == 3:
        assert z.metadata.dimension_names == b.metadata.dimension_names
        assert z.metadata.dimension_names == a.metadata.dimension_names
    _same_fill(z.fill_value, b.fill_value, a.dtype)
    if not _is_nan(a.fill_value):
        # zarr-python writes any NaN fill value as "NaN", so a drawn NaN with another sign
        # or payload is not what it stored (docs/SPEC.md, "Where zarr-python 3.1.6 and
        # tensorstore deviate": v3 fill_value of a float type)
        _same_fill(z.fill_value, a.fill_value, a.dtype)
    _same_items(z[...], b[...], "whole array")


@SETTINGS
@given(st.data())
def test_basic_indices_drawn_by_zarr_python_read_and_write_as_numpy(data):
    z, a = _pair(data.draw(ARRAYS), mode="r+")
    model = a[...]
    idx = data.draw(zs.basic_indices(shape=a.shape), label="basic index")
    _same_items(z[idx], model[idx], f"z[{idx!r}]")
    _against_zarr_python(z[idx], lambda: a[idx], a, f"z[{idx!r}] against zarr-python")
    # write the items of another place back through zarrx; zarr-python reads the result
    value = data.draw(zs.numpy_arrays(shapes=st.just(np.shape(model[idx])), dtype=a.dtype),
                      label="value")
    z[idx] = value
    model[idx] = value
    _same_items(_written(z[...], model, a.fill_value), model, f"after z[{idx!r}] = value")
    back = zarr.open_array(_to_zarr_python(z.store), path=a.path, mode="r")
    _same_items(_written(back[...], model, a.fill_value), model,
                f"zarr-python after z[{idx!r}] = value")


@SETTINGS
@given(st.data())
def test_orthogonal_indices_drawn_by_zarr_python_read_and_write_as_numpy(data):
    z, a = _pair(data.draw(ARRAYS), mode="r+")
    model = a[...]
    zidx, npidx = data.draw(zs.orthogonal_indices(shape=a.shape), label="orthogonal index")
    _same_items(z.oindex[zidx], model[npidx], f"z.oindex[{zidx!r}]")
    _against_zarr_python(z.oindex[zidx], lambda: a.oindex[zidx], a,
                         f"z.oindex[{zidx!r}] against zarr-python")
    value = data.draw(zs.numpy_arrays(shapes=st.just(model[npidx].shape), dtype=a.dtype),
                      label="value")
    z.oindex[zidx] = value
    model[npidx] = value
    _same_items(_written(z[...], model, a.fill_value), model,
                f"after z.oindex[{zidx!r}] = value")
    back = zarr.open_array(_to_zarr_python(z.store), path=a.path, mode="r")
    _same_items(_written(back[...], model, a.fill_value), model,
                f"zarr-python after z.oindex[{zidx!r}] = value")


def _buffer(raw: bytes) -> Any:
    return default_buffer_prototype().buffer.from_bytes(raw)


def _to_zarr_python(store: MemoryStore) -> Any:
    """A zarr-python MemoryStore holding the bytes of a zarrx one."""
    return zarr.storage.MemoryStore(
        {key: _buffer(store.get(key)) for key in store.list_prefix("")})


@SETTINGS
@given(zs.array_metadata(array_shapes=lambda **kw: zs.npst.array_shapes(
    **{"max_dims": 3, "min_side": 0, "max_side": 6, **kw})))
def test_array_metadata_documents_open_in_zarrx_as_in_zarr_python(meta):
    docs = meta.to_buffer_dict(default_buffer_prototype())
    store = {key: buf.to_bytes() for key, buf in docs.items()}
    note(repr(store))
    a = zarr.open_array(_to_zarr_python(MemoryStore(dict(store))), mode="r")
    bad = [i for i, (c, n) in enumerate(zip(a.chunks, a.shape)) if c == 0 and n > 0]
    if bad:
        # array_metadata() draws the chunk shape apart from the shape: a chunk length of 0
        # along an axis holding items, which zarr-python opens and cannot read (it divides
        # by it); zarrx refuses the document naming the field. A 0 along an axis of length 0
        # is read (test_arrays_with_a_chunk_length_of_0_round_trip_both_ways).
        i = bad[0]
        doc, field = (("zarr.json", "chunk_grid.configuration.chunk_shape") if
                      a.metadata.zarr_format == 3 else (".zarray", "chunks"))
        with pytest.raises(zarrx.MetadataError) as info:
            zarrx.open_array(MemoryStore(dict(store)), mode="r")
        assert str(info.value) == (f"{doc} {field}[{i}]: expected a positive integer below "
                                   f"2**63, or 0 on an axis of length 0 (this one has length "
                                   f"{a.shape[i]}), found 0")
        return
    z = zarrx.open_array(MemoryStore(dict(store)), mode="r")
    assert z.shape == a.shape
    assert z.dtype == a.dtype
    assert z.chunks == a.chunks
    assert dict(z.attrs) == dict(a.attrs)
    assert z.metadata.zarr_format == a.metadata.zarr_format
    if a.metadata.zarr_format == 3:
        assert z.metadata.dimension_names == a.metadata.dimension_names
    else:
        assert z.order == a.order
    _same_fill(z.fill_value, a.fill_value, a.dtype)
    if a.size and a.size <= 10_000:
        _same_items(z[...], a[...], "fill-only array")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_chunk_length_of_0_zarr_python_stores_reads_and_writes_back(zarr_format):
    a = zarr.create_array(zarr.storage.MemoryStore(), shape=(0, 3), dtype="i4", chunks=(0, 3),
                          zarr_format=zarr_format)
    z = zarrx.open_array(_copy(a), mode="r+")
    assert (z.shape, z.chunks, z.cdata_shape, z.nchunks) == ((0, 3), (0, 3), (0, 1), 0)
    _same_items(z[...], a[...], "whole array")
    z.attrs["x"] = 1            # the document written back keeps the 0
    back = zarr.open_array(_to_zarr_python(z.store), mode="r")
    assert (back.shape, back.chunks, dict(back.attrs)) == ((0, 3), (0, 3), {"x": 1})


# an axis of length 0 is drawn with a chunk length of 0 along it (chunk_shapes())
EMPTY_AXIS_ARRAYS = zs.arrays(shapes=zs.npst.array_shapes(max_dims=3, min_side=0, max_side=6)
                              .filter(lambda shape: 0 in shape),
                              paths=zs.paths(max_num_nodes=2), array_names=zs.short_node_names)


@SETTINGS
@given(EMPTY_AXIS_ARRAYS)
def test_arrays_with_a_chunk_length_of_0_round_trip_both_ways(a):
    note(f"zarr_format={a.metadata.zarr_format} shape={a.shape} chunks={a.chunks}")
    _round_trip_of_empty_chunks(a)


def test_an_empty_text_array_whose_fill_value_utf8_cannot_encode_round_trips_as_refused():
    # a draw of the test above: zarr-python stores the fill value as an escape
    a = zarr.create_array(zarr.storage.MemoryStore(), shape=(0, 2), dtype="<U2", chunks=(0, 2),
                          zarr_format=3, fill_value="\ud800")
    _round_trip_of_empty_chunks(a)


def _round_trip_of_empty_chunks(a: Any) -> None:
    assert 0 in a.chunks
    z = _open_zarrx(a, mode="r+")
    assert (z.shape, z.chunks, z.shards, z.cdata_shape, z.nchunks) == \
        (a.shape, a.chunks, a.shards, a.cdata_shape, a.nchunks)
    model = np.empty(a.shape, dtype=a.dtype)
    for what, got, want in [("[...]", z[...], a[...]), ("[:]", z[:], model[:]),
                            ("blocks", z.blocks[...], model),
                            ("mask", z[np.zeros(a.shape, bool)], model[np.zeros(a.shape, bool)])]:
        _same_items(got, want, what)
    z[...] = model              # writes nothing, as numpy and zarr-python
    assert z.nchunks_initialized == 0
    # zarrx writes the same array; zarr-python reads it as its own
    fmt = a.metadata.zarr_format
    args = dict(shape=a.shape, dtype=a.dtype, chunks=a.chunks, shards=a.shards, zarr_format=fmt,
                **({"fill_value": a.fill_value} if fmt == 3 else {}))
    if fmt == 3 and not _utf8_encodable(a.fill_value):
        # text holding a lone surrogate has no UTF-8 form for the document: zarrx refuses to
        # create such an array, as tensorstore refuses to open one (docs/SPEC.md)
        with pytest.raises(zarrx.errors.FillValueError, match="no lone surrogates"):
            zarrx.create_array(MemoryStore(), **args)
        return
    out = zarrx.create_array(MemoryStore(), **args)
    back = zarr.open_array(_to_zarr_python(out.store), mode="r")
    assert (back.shape, back.chunks, back.shards) == (a.shape, a.chunks, a.shards)
    _same_items(back[...], a[...], "zarr-python reading zarrx's array")
