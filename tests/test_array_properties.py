"""Property tests: reads and writes through zarrx arrays agree with numpy for random shapes,
chunk grids (regular, rectilinear, sharded), dtypes and selections of every kind."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.store import MemoryStore
from strategies import (basic_selections, block_selections, chunk_shapes, coordinate_selections,
                        mask_selections, orthogonal_selections, rectilinear_grids, shapes)

DTYPES = ["u1", "i2", "<f4", ">f8", "c8", "S3", "bool"]
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 255, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    a = raw.view(np.dtype(dtype).newbyteorder("=") if np.dtype(dtype).kind != "S" else dtype)
    if np.dtype(dtype).kind == "b":
        a = raw.astype(bool)[: int(np.prod(shape))]
    if np.dtype(dtype).kind in "fc":
        a = np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=3.0)
    return a[: int(np.prod(shape))].reshape(shape).astype(np.dtype(dtype).newbyteorder("="))


@st.composite
def arrays(draw):
    shape = draw(shapes(max_dims=3, max_side=10))
    layout = draw(st.sampled_from(["regular", "rectilinear", "sharded"]))
    if layout == "rectilinear" and shape and all(shape):
        chunks = draw(rectilinear_grids(shape))
        chunks = tuple(_trim(e, n) for e, n in zip(chunks, shape))
        shards = None
    else:
        chunks = draw(chunk_shapes(shape))
        shards = None
        if layout == "sharded" and shape:
            shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    dtype = draw(st.sampled_from(DTYPES))
    fill = 0 if np.dtype(dtype).kind not in "Sb" else (b"" if np.dtype(dtype).kind == "S" else False)
    store = MemoryStore()
    z = zarrx.create_array(store, shape=shape, dtype=dtype, chunks=chunks, shards=shards,
                           fill_value=fill, compressors=draw(st.sampled_from([None, "auto"])))
    a = values(shape, dtype, draw(st.integers(0, 1000)))
    z[...] = a
    return z, a, chunks


def _trim(edges, n):
    out, total = [], 0
    for e in edges:
        if total >= n:
            break
        out.append(e)
        total += e
    return tuple(out)


SELECTORS = {
    "basic": (lambda z: z, basic_selections),
    "orthogonal": (lambda z: z.oindex, orthogonal_selections),
    "coordinate": (lambda z: z.vindex, coordinate_selections),
}


def _np_orth(a, sel):
    sel = tuple(np.nonzero(s)[0] if isinstance(s, np.ndarray) and s.dtype == bool else s for s in sel)
    idx = []
    for s, n in zip(sel, a.shape):
        if isinstance(s, (int, np.integer)):
            idx.append(s)
        elif isinstance(s, slice):
            idx.append(np.arange(n)[s])
        else:
            idx.append(np.asarray(s))
    arrays_ = [i for i in idx if not isinstance(i, (int, np.integer))]
    grids = np.ix_(*arrays_) if arrays_ else ()
    it = iter(grids)
    full = tuple(i if isinstance(i, (int, np.integer)) else next(it) for i in idx)
    return full


def _block_to_slices(sel, shape, chunks):
    out = []
    for ax, n in enumerate(shape):
        c = chunks[ax]
        edges = [0]
        if isinstance(c, tuple):
            for e in c:
                edges.append(edges[-1] + e)
        else:
            while edges[-1] < n:
                edges.append(edges[-1] + c)
        edges = [min(e, n) for e in edges]
        nch = len(edges) - 1
        s = sel[ax] if ax < len(sel) else slice(None)
        if isinstance(s, slice):
            lo, hi, _ = s.indices(nch)
            hi = max(hi, lo)
            out.append(slice(edges[lo], edges[hi]))
        else:
            k = s + nch if s < 0 else s
            out.append(slice(edges[k], edges[k + 1]))
    return tuple(out)


@SETTINGS
@given(st.data())
def test_reads_match_numpy(data):
    z, a, chunks = data.draw(arrays())
    kind = data.draw(st.sampled_from(["basic", "orthogonal", "coordinate", "mask", "block"]))
    if kind == "basic":
        sel = data.draw(basic_selections(a.shape))
        np.testing.assert_array_equal(z[sel], a[sel])
    elif kind == "orthogonal":
        sel = data.draw(orthogonal_selections(a.shape))
        np.testing.assert_array_equal(z.oindex[sel], a[_np_orth(a, sel)])
    elif kind == "coordinate":
        sel = data.draw(coordinate_selections(a.shape))
        np.testing.assert_array_equal(z.vindex[sel], a[sel] if sel else a[()])
    elif kind == "mask":
        if not a.shape:
            return
        m = data.draw(mask_selections(a.shape))
        np.testing.assert_array_equal(z[m], a[m])
    else:
        if not a.shape or not all(a.shape):
            return
        sel = data.draw(block_selections(a.shape, chunks))
        np.testing.assert_array_equal(z.blocks[sel], a[_block_to_slices(sel, a.shape, chunks)])


@SETTINGS
@given(st.data())
def test_writes_match_numpy(data):
    z, a, chunks = data.draw(arrays())
    kind = data.draw(st.sampled_from(["basic", "orthogonal", "coordinate", "mask"]))
    if kind == "basic":
        sel = data.draw(basic_selections(a.shape))
        target = a[sel]
        v = values(np.shape(target), a.dtype, 7)
        z[sel] = v
        a[sel] = v
    elif kind == "orthogonal":
        sel = data.draw(orthogonal_selections(a.shape))
        idx = _np_orth(a, sel)
        v = values(a[idx].shape, a.dtype, 8)
        z.oindex[sel] = v
        a[idx] = v
    elif kind == "coordinate":
        sel = data.draw(coordinate_selections(a.shape))
        if not sel:
            return
        v = values(a[sel].shape, a.dtype, 9)
        # duplicates: numpy keeps the last value written; so does zarrx
        z.vindex[sel] = v
        a[sel] = v
    else:
        if not a.shape:
            return
        m = data.draw(mask_selections(a.shape))
        v = values((int(m.sum()),), a.dtype, 10)
        z[m] = v
        a[m] = v
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(zarrx.open_array(z.store, mode="r")[...], a)


@SETTINGS
@given(st.data())
def test_shrink_then_grow_matches_numpy(data):
    """Shrinking drops the data outside the new shape, in boundary chunks and shards too:
    growing again reads the fill value there, as a numpy array cut and padded would hold."""
    shape = data.draw(shapes(min_dims=1, max_dims=3, max_side=10, min_side=1))
    chunks = data.draw(chunk_shapes(shape))
    shards = None
    if data.draw(st.booleans()):
        shards = tuple(c * data.draw(st.integers(1, 3)) for c in chunks)
    fmt = 3 if shards else data.draw(st.sampled_from([2, 3]))
    dtype = data.draw(st.sampled_from(["u1", "<f4", "S3"]))
    fill = {"u1": 7, "<f4": -1.5, "S3": b"zz"}[dtype]
    z = zarrx.create_array(MemoryStore(), shape=shape, dtype=dtype, chunks=chunks, shards=shards,
                           fill_value=fill, zarr_format=fmt,
                           compressors=data.draw(st.sampled_from([None, "auto"])))
    a = values(shape, dtype, data.draw(st.integers(0, 1000)))
    z[...] = a
    small = tuple(data.draw(st.integers(0, n)) for n in shape)
    big = tuple(data.draw(st.integers(0, 12)) for _ in shape)
    z.resize(small)
    np.testing.assert_array_equal(z[...], a[tuple(slice(0, n) for n in small)])
    z.resize(big)
    expected = np.full(big, fill, dtype=a.dtype)
    both = tuple(slice(0, min(s, b)) for s, b in zip(small, big))
    expected[both] = a[both]
    np.testing.assert_array_equal(z[...], expected)
