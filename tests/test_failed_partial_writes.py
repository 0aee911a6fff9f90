"""A partial write that meets a chunk it cannot decode raises an error naming that chunk, keeps
the chunk's stored bytes, and leaves every other chunk either as it was or holding the write's
values in full: never a chunk merged in part or with the wrong cells. This holds for the
slab-at-a-time merges of boxes, negative steps and index arrays (``zarrx/batch_merge.py``)
and the run-at-a-time merges of points and masks (``zarrx/batch_points.py``) as for the
general path, on chunks stored transposed, big-endian or in Zarr v2 order F, on
memory and local stores, with one thread or two."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore

SHAPE = (13, 11)
CHUNKS = (3, 2)

LAYOUTS = {
    "v3_transpose_big": dict(zarr_format=3, filters=[zarrx.codecs.Transpose(order=(1, 0))],
                             serializer=zarrx.codecs.Bytes(endian="big"),
                             compressors=zarrx.codecs.Zstd(level=1)),
    "v3_crc32c": dict(zarr_format=3, compressors=zarrx.codecs.Crc32c()),
    "v2_order_f": dict(zarr_format=2, order="F", dtype=">f4",
                       compressors=zarrx.codecs.Zstd(level=1)),
}
# selections covering chunk (0, 1) (rows 0-2, columns 2-3) in part, and many others
WRITES = {
    "box": (np.s_[1:12, 1:10], "box"),
    "negative_steps": (np.s_[12:0:-1, 9:0:-2], "box"),
    "index_arrays": ((np.array([11, 4, 0, 4, 7, 9, 2]), np.array([8, 3, 1, 3, 6, 0])),
                     "oindex"),
    # points repeating some (the last value of each kept), and a mask of every other cell
    "points": ((np.array([1, 12, 0, 5, 1, 8, 1, 2]), np.array([3, 0, 2, 9, 3, 5, 3, 3])),
               "vindex"),
    "mask": (np.add.outer(np.arange(SHAPE[0]), np.arange(SHAPE[1])) % 2 == 0, "mask"),
}


def _regions():
    return [tuple(slice(o, min(o + c, n)) for o, c, n in zip(start, CHUNKS, SHAPE))
            for start in itertools.product(*(range(0, n, c) for n, c in zip(SHAPE, CHUNKS)))]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_failed_partial_write_leaves_each_chunk_old_or_whole(layout, write, where, threads,
                                                                tmp_path):
    store = MemoryStore() if where == "memory" else LocalStore(tmp_path / "a.zarr")
    kw = {"dtype": "f4", **LAYOUTS[layout]}
    z = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, fill_value=-1, **kw)
    before = np.arange(np.prod(SHAPE), dtype="f4").reshape(SHAPE)
    z[...] = before
    bad = "c/0/1" if kw["zarr_format"] == 3 else "0.1"
    store.set(bad, b"these bytes decode as no chunk")
    sel, kind = WRITES[write]
    after = before.copy()
    if kind == "box":
        value = (np.arange(before[sel].size) + 1000).astype("f4").reshape(before[sel].shape)
        after[sel] = value
    elif kind == "oindex":
        value = (np.arange(len(sel[0]) * len(sel[1])) + 1000).astype("f4").reshape(
            len(sel[0]), len(sel[1]))
        after[np.ix_(*sel)] = value          # numpy keeps the last value of a repeated index
    else:                                    # points or a mask: one value per point
        value = (np.arange(before[sel].size) + 1000).astype("f4")
        after[sel] = value
    with zarrx.config.set(threads=threads):
        with pytest.raises(zarrx.ZarrError, match=f"'{bad}'"):
            if kind == "box":
                z[sel] = value
            elif kind == "oindex":
                z.oindex[sel] = value
            elif kind == "vindex":
                z.vindex[sel] = value
            else:
                z.set_mask_selection(sel, value)
        assert bytes(store.get(bad)) == b"these bytes decode as no chunk"
        for region in _regions():
            if region == (slice(0, 3), slice(2, 4)):        # the chunk that does not decode
                continue
            got = z[region]
            assert np.array_equal(got, before[region]) or np.array_equal(got, after[region]), \
                f"chunk at {region}: neither as it was nor as written"
