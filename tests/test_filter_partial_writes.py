"""Batch merges (``zarrx/batch_merge.py``, ``zarrx/batch_points.py``) of arrays whose chain
has filters before the ``bytes`` codec (numcodecs' ``delta``, ``astype``,
``fixedscaleoffset``, ``quantize``, ``bitround``, in Zarr v2 and v3): each chunk is encoded
by the filters as the general path encodes it, so what they store is what the general path
stores (same keys, same bytes, chunks of the fill value deleted unless empty chunks are
written), for boxes, negative steps, index arrays, points and masks; a chunk a filter
cannot encode raises an error naming it, leaving each chunk as it was or written whole."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import zarrx
from zarrx import batch_merge
from zarrx.store import MemoryStore

from call_counts import calls_made
from test_partial_write_batches import _objects

C = zarrx.codecs
SHAPE = (42, 37)
CHUNKS = (4, 5)
# name -> (dtype, filters)
CHAINS = {
    "delta": ("i4", lambda: [C.Delta(dtype="i4")]),
    "delta_astype": ("i4", lambda: [C.Delta(dtype="i4", astype="i2")]),
    "astype": ("f8", lambda: [C.AsType(encode_dtype="f4", decode_dtype="f8")]),
    "fixedscaleoffset": ("f8", lambda: [C.FixedScaleOffset(offset=10, scale=100, dtype="f8",
                                                           astype="i4")]),
    "quantize_delta": ("f4", lambda: [C.Quantize(digits=3, dtype="f4"),
                                      C.Delta(dtype="f4")]),
    "bitround": ("f4", lambda: [C.BitRound(keepbits=6)]),
}
_RNG = np.random.default_rng(5)
_ROWS, _COLS = _RNG.integers(0, SHAPE[0], 300), _RNG.integers(0, SHAPE[1], 300)
WRITES = [
    ("box", np.s_[1:41, 2:35]),
    ("box", np.s_[40:1:-3, ::-2]),
    ("oindex", ([9, 1, 5, 1, 40, 3, 9], slice(None))),
    ("vindex", (_ROWS, _COLS)),
    ("mask", np.add.outer(np.arange(SHAPE[0]), np.arange(SHAPE[1])) % 3 == 0),
]


def _write(z, kind, sel, value):
    if kind == "box":
        z[sel] = value
    elif kind == "oindex":
        z.oindex[sel] = value
    elif kind == "vindex":
        z.vindex[sel] = value
    else:
        z.set_mask_selection(sel, value)


def _at(kind, sel):
    return np.ix_(np.asarray(sel[0]), np.arange(SHAPE[1])) if kind == "oindex" else sel


@pytest.mark.parametrize("empty", [False, True], ids=["skip_empty", "write_empty"])
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_filtered_chunks_store_what_the_general_path_stores(monkeypatch, chain, fmt, empty):
    dtype, filters = CHAINS[chain]
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore()
        z = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype=dtype, fill_value=0,
                               filters=filters(), compressors=C.Zstd(level=1),
                               zarr_format=fmt, write_empty_chunks=empty)
        z[::3] = 7
        want = np.zeros(SHAPE, dtype)
        want[::3] = 7
        rng = np.random.default_rng(3)
        with monkeypatch.context() as m:
            m.setattr(batch_merge, "ENABLED", way == "batch")
            for i, (kind, sel) in enumerate(WRITES + [("box", np.s_[3:30, 1:36])]):
                at = _at(kind, sel)
                shape = want[at].shape
                fill = i == len(WRITES)            # the last write: the fill value
                value = np.zeros(shape, dtype) if fill else \
                    rng.integers(-50, 50, shape).astype(dtype)
                _write(z, kind, sel, value)
                want[at] = value
                np.testing.assert_array_equal(z[...], want, err_msg=f"{way}: {kind} {i}")
        stored[way] = _objects(store)
    assert stored["batch"] == stored["general"]


@pytest.mark.parametrize("kind,sel", WRITES, ids=[f"{k}{i}" for i, (k, _) in enumerate(WRITES)])
def test_a_chunk_a_filter_cannot_encode_is_named(kind, sel):
    """``delta`` into 16-bit differences: a chunk whose differences do not fit raises the
    error naming its key; every other chunk is as it was or holds the write whole."""
    store = MemoryStore()
    z = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="i4", fill_value=0,
                           filters=CHAINS["delta_astype"][1](), compressors=C.Zstd(level=1))
    before = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE) % 7
    z[...] = before
    at = _at(kind, sel)
    value = np.ones(before[at].shape, "i4")
    value.reshape(-1)[value.size // 2:] = 1 << 20       # differences no 16 bits hold
    after = before.copy()
    after[at] = value
    with pytest.raises(zarrx.ZarrError, match=r"chunk 'c/\d+/\d+'.*delta") as err:
        _write(z, kind, sel, value)
    key = str(err.value).split("chunk '")[1].split("'")[0]
    bad = tuple(int(x) for x in key.split("/")[1:])
    assert (after[tuple(slice(c * n, (c + 1) * n) for c, n in zip(bad, CHUNKS))]
            == 1 << 20).any()
    for start in itertools.product(*(range(0, n, c) for n, c in zip(SHAPE, CHUNKS))):
        region = tuple(slice(o, min(o + c, n)) for o, c, n in zip(start, CHUNKS, SHAPE))
        got = z[region]
        assert np.array_equal(got, before[region]) or np.array_equal(got, after[region]), \
            f"chunk at {region}: neither as it was nor as written"


def test_filtered_point_writes_make_fewer_calls_than_the_general_path(monkeypatch):
    z = zarrx.create_array(MemoryStore(), shape=(128, 128), chunks=(4, 4), dtype="f8",
                           fill_value=0, filters=CHAINS["fixedscaleoffset"][1]())
    z[...] = 1
    rng = np.random.default_rng(1)
    rows, cols = rng.integers(0, 128, 5000), rng.integers(0, 128, 5000)
    batched = calls_made(lambda: z.vindex.__setitem__((rows, cols), 2.5))
    monkeypatch.setattr(batch_merge, "ENABLED", False)
    general = calls_made(lambda: z.vindex.__setitem__((rows, cols), 2.5))
    assert batched < 0.5 * general


# (format, dtype, filters, extra create_array arguments): filters over chunks stored transposed
# (v2 order "F", a v3 transpose) or big-endian
LAYOUTS = {
    "v2_F_delta": (2, "i4", lambda: [C.Delta(dtype="i4")], {"order": "F"}),
    "v2_F_astype_blosc": (2, "i8", lambda: [C.AsType(encode_dtype="i8", decode_dtype="i8")],
                          {"order": "F", "compressors": C.Blosc()}),
    "v2_big_delta": (2, ">i4", lambda: [C.Delta(dtype=">i4")], {}),
    "v2_big_F_quantize": (2, ">f8", lambda: [C.Quantize(digits=2, dtype=">f8")],
                          {"order": "F"}),
    "v3_transpose_fixedscaleoffset": (3, "f4", lambda: [
        C.Transpose(order=(1, 0)),
        C.FixedScaleOffset(offset=0.5, scale=10, dtype="f4", astype="i8")], {}),
    "v3_delta_transpose": (3, "u2", lambda: [C.Delta(dtype="u2"), C.Transpose(order=(1, 0))],
                           {}),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_filters_over_transposed_or_big_endian_chunks_store_what_the_general_path_stores(
        monkeypatch, layout):
    fmt, dtype, filters, extra = LAYOUTS[layout]
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore()
        kwargs = {"compressors": C.Zstd(level=1), **extra}
        z = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype=dtype, fill_value=3,
                               filters=filters(), zarr_format=fmt, **kwargs)
        want = np.full(SHAPE, 3, dtype)
        rng = np.random.default_rng(8)
        with monkeypatch.context() as m:
            m.setattr(batch_merge, "ENABLED", way == "batch")
            for kind, sel in WRITES:
                at = _at(kind, sel)
                value = rng.integers(0, 50, want[at].shape).astype(dtype)
                _write(z, kind, sel, value)
                want[at] = value
                np.testing.assert_array_equal(z[...], want, err_msg=f"{way}: {kind}")
        stored[way] = _objects(store)
    assert stored["batch"] == stored["general"]
