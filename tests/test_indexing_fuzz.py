"""Arrays against numpy: random sequences of writes and reads of every selection kind, with
resizes and appends between them, on Zarr v2 and v3 arrays (C and F order, sharded with the
index at either end, raw or compressed chunks, fill values that are or are not NaN, empty
chunks kept or deleted) in a MemoryStore or a LocalStore (whose box kernels take aligned
selections), with one thread or two. The same cells are kept in a numpy array alongside; every
read, and the array reopened at the end, must give numpy's result, and with empty chunks
deleted no stored object may hold fill values only."""
from __future__ import annotations

import itertools
import os
import tempfile
from typing import Any

import numpy as np
import strategies as zst
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.store import LocalStore, MemoryStore

SETTINGS = settings(max_examples=int(os.environ.get("ZARRX_EXAMPLES", "60")), deadline=None,
                    derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DTYPES = ["i2", "u1", "f4", "bool", "c16", "M8[s]", "S2", [("a", "i2"), ("b", "f4")]]
FILLS = {"f": [0.0, 2.5, float("nan")], "b": [False, True], "M": [np.datetime64(3, "s")],
         "S": [b"", b"ab"], "c": [1 + 2j]}


def outer(a: np.ndarray, sel: tuple) -> np.ndarray:
    """numpy's view of an orthogonal selection: each axis indexed on its own."""
    ax = 0
    for s in sel:
        if isinstance(s, (int, np.integer)):
            a = np.take(a, s, axis=ax)
        else:
            a = a[(slice(None),) * ax + (s,)]
            ax += 1
    return a


def blocks(sel: tuple, shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple:
    """The element slices of a block selection."""
    out = []
    for ax, (n, c) in enumerate(zip(shape, chunks)):
        s = sel[ax] if ax < len(sel) else slice(None)
        ks = range(-(-n // c))[s] if isinstance(s, slice) else [range(-(-n // c))[s]]
        out.append(slice(ks[0] * c, min(n, ks[-1] * c + c)) if len(ks) else slice(0, 0))
    return tuple(out)


def values(draw: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    seed = draw(st.integers(0, 2**32 - 1))
    v = np.random.default_rng(seed).integers(0, 3, shape)
    if dtype.names:
        out = np.zeros(shape, dtype)
        out["a"], out["b"] = v, v / 2
        return out
    if dtype.kind == "M":
        return v.astype("M8[s]")
    return v.astype(dtype)


def target(draw: Any, z: Any, shape: tuple[int, ...], for_write: bool,
           repeated_points: bool = False) -> tuple:
    """(accessor, selection, the ids of the selected cells in numpy's result shape). A
    coordinate selection to write names a cell twice only with ``repeated_points`` (the last
    value written stays, as in numpy)."""
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    kind = draw(st.sampled_from(["basic", "orthogonal", "coordinate", "mask", "block"]
                                if shape else ["basic"]))
    if kind == "basic":
        sel = draw(zst.basic_selections(shape))
        return z, sel, ids[sel]
    if kind == "orthogonal":
        sel = draw(zst.orthogonal_selections(shape))
        if for_write:           # numpy and zarrx agree on duplicates, but leave order aside
            sel = tuple(np.unique(s % n) if isinstance(s, np.ndarray) and s.dtype != bool
                        else s for s, n in zip(sel, shape))
        return z.oindex, sel, outer(ids, sel)
    if kind == "coordinate":
        sel = draw(zst.coordinate_selections(shape))
        picked = ids[sel]
        assume(not for_write or repeated_points or len(np.unique(picked)) == picked.size)
        return z.vindex, sel, picked
    if kind == "mask":
        sel = draw(zst.mask_selections(shape))
        return z, sel, ids[sel]
    sel = draw(zst.block_selections(shape, z.chunks))
    return z.blocks, sel, ids[blocks(sel, shape, z.chunks)]


def same(got: Any, expected: Any, dtype: np.dtype) -> None:
    if not isinstance(got, np.ndarray):     # one cell: a numpy scalar (of strings, sized anew)
        assert isinstance(got, np.generic)
    got, expected = np.asarray(got, dtype=dtype), np.asarray(expected, dtype=dtype)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert got.tobytes() == np.ascontiguousarray(expected).tobytes() or \
        np.array_equal(got, expected, equal_nan=expected.dtype.kind in "fc")


def all_fill(part: np.ndarray, fill: np.ndarray) -> bool:
    if part.dtype.kind in "fc":
        return bool(np.all((part == fill) | (np.isnan(part) & np.isnan(fill))))
    return part.tobytes() == np.broadcast_to(fill, part.shape).tobytes()


@SETTINGS
@given(st.data())
def test_writes_and_reads_match_numpy(data: Any) -> None:
    draw = data.draw
    dtype = np.dtype(draw(st.sampled_from(DTYPES), label="dtype"))
    fmt = draw(st.sampled_from([2, 3]), label="format")
    shape = draw(zst.shapes(max_dims=3, max_side=9), label="shape")
    chunks = draw(zst.chunk_shapes(shape), label="chunks")
    kw: dict[str, Any] = {"write_empty_chunks": draw(st.booleans())}
    if dtype.kind in FILLS:
        kw["fill_value"] = draw(st.sampled_from(FILLS[dtype.kind]))
    if draw(st.booleans()):
        kw["compressors"] = None
    if fmt == 3 and shape and draw(st.booleans()):
        kw["shards"] = {"shape": tuple(c * draw(st.integers(1, 3)) for c in chunks),
                        "index_location": draw(st.sampled_from(["start", "end"]))}
    order = draw(st.sampled_from("CF"))
    kw.update({"order": order} if fmt == 2 else {"config": {"order": order}})
    with tempfile.TemporaryDirectory() as tmp:
        store = LocalStore(os.path.join(tmp, "s")) if draw(st.booleans()) else MemoryStore()
        z = zarrx.create_array(store, shape=shape, chunks=chunks, dtype=dtype, zarr_format=fmt,
                               **kw)
        fill = np.zeros((), dtype) if z.fill_value is None else np.array(z.fill_value, dtype)
        ref = np.full(shape, fill, dtype)
        for _ in range(draw(st.integers(1, 8), label="steps")):
            op = draw(st.sampled_from(["write", "write", "read", "resize", "append"]))
            shape = z.shape
            threads = draw(st.sampled_from([1, 2]))
            if op == "resize" and shape:
                new = tuple(draw(st.integers(0, n + 4)) for n in shape)
                z.resize(new)
                grown = np.full(new, fill, dtype)
                common = tuple(slice(0, min(a, b)) for a, b in zip(shape, new))
                grown[common] = ref[common]
                ref = grown
            elif op == "append" and shape:
                axis = draw(st.integers(0, len(shape) - 1))
                more = values(draw, dtype, shape[:axis] + (draw(st.integers(0, 4)),)
                              + shape[axis + 1:])
                z.append(more, axis=axis)
                ref = np.concatenate([ref, more], axis=axis)
            elif op == "write":
                acc, sel, ids = target(draw, z, shape, True)
                how = draw(st.sampled_from(["array", "fill", "scalar"]))
                value = fill if how == "fill" else values(draw, dtype, ids.shape if
                                                          how == "array" else ())
                with zarrx.config.set(threads=threads):
                    acc[sel] = value
                ref.reshape(-1)[ids.reshape(-1)] = np.broadcast_to(value, ids.shape).reshape(-1)
            else:
                acc, sel, ids = target(draw, z, shape, False)
                with zarrx.config.set(threads=threads):
                    same(acc[sel], ref.reshape(-1)[ids], dtype)
        same(zarrx.open_array(store, mode="r")[...], ref, dtype)
        if not kw["write_empty_chunks"]:
            per = z.shards or z.chunks
            held = {c for c in itertools.product(*[range(-(-n // p)) for n, p in
                                                   zip(z.shape, per)])
                    if not all_fill(ref[tuple(slice(k * p, k * p + p) for k, p in
                                              zip(c, per))], fill)}
            assert set(z._initialized_objects()) <= held


@SETTINGS
@given(st.data())
def test_reads_into_out_of_any_layout_match_numpy(data: Any) -> None:
    draw = data.draw
    shape = draw(zst.shapes(min_dims=1, max_dims=3, max_side=9), label="shape")
    chunks = draw(zst.chunk_shapes(shape), label="chunks")
    ref = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    z = zarrx.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="i4")
    z[...] = ref
    get = draw(st.sampled_from([z.get_basic_selection, z.get_orthogonal_selection,
                                z.get_coordinate_selection, z.get_block_selection]))
    sel = draw({z.get_basic_selection: zst.basic_selections(shape),
                z.get_orthogonal_selection: zst.orthogonal_selections(shape),
                z.get_coordinate_selection: zst.coordinate_selections(shape),
                z.get_block_selection: zst.block_selections(shape, chunks)}[get], label="sel")
    if get == z.get_basic_selection:
        expected = ref[sel]
    elif get == z.get_orthogonal_selection:
        expected = outer(ref, sel)
    elif get == z.get_coordinate_selection:
        expected = ref[sel]
    else:
        expected = ref[blocks(sel, shape, chunks)]
    layout = draw(st.sampled_from(["C", "F", "reversed"]))
    out = np.zeros(np.shape(expected), "i4", order="F" if layout == "F" else "C")
    if layout == "reversed" and out.ndim:
        out = out[(slice(None, None, -1),) * out.ndim]
    assert get(sel, out=out) is out
    same(out, expected, out.dtype)
