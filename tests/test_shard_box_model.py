"""Box writes into the shards a box covers in part (``zarrx/shard_box.py``) against a numpy
model: sequences of writes of random windows of random arrays, their values given in every
layout numpy assigns (contiguous, Fortran order, reversed, strided, a scalar, shape-1 axes,
fewer axes, another data type cast as numpy casts), read back after each write and compared
with the same assignments made to a numpy array; what is stored is read by zarr-python too,
and a shard left all fill is not stored. Two threads writing disjoint windows of the same
shards lose nothing."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import shard_box
from zarrx.codecs import Zstd
from zarrx.store import LocalStore, MemoryStore

COMPRESSORS = {"raw": [], "zstd": [{"name": "zstd", "configuration": {"level": 1}}],
               "crc32c": [{"name": "crc32c"}],
               "gzip": [{"name": "gzip", "configuration": {"level": 1}}],
               "blosc": [{"name": "blosc", "configuration": {
                   "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 1,
                   "blocksize": 0}}]}
DTYPES = {"u1": 7, "i2": -3, "<f4": 2.5, "f8": 0.0, "c8": 0.0, "i8": 0}
LAYOUTS = ["c", "fortran", "reversed", "strided", "scalar", "ones", "fewer", "float64"]


def _array(store, c):
    """The array of case ``c``: its shard codec as the case asks (made by zarrx, then given
    the inner codecs, the index's and its place)."""
    shard = [k * r for k, r in zip(c["chunks"], c["ratio"])]
    zarrx.create_array(store, shape=c["shape"], dtype=c["dtype"], chunks=c["chunks"],
                       shards=shard, fill_value=DTYPES[c["dtype"]])
    doc = json.loads(store.get("zarr.json"))
    endian = [{"name": "bytes", "configuration": {"endian": "little"}}]
    inner = endian + COMPRESSORS[c["compressor"]]
    index = endian + ([{"name": "crc32c"}] if c["crc"] else [])
    if c["nested"]:
        inner = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [max(1, k // 2) for k in c["chunks"]], "codecs": inner,
            "index_codecs": index, "index_location": c["loc"]}}]
    doc["codecs"] = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(c["chunks"]), "codecs": inner, "index_codecs": index,
        "index_location": c["loc"]}}]
    store.set("zarr.json", json.dumps(doc).encode())
    return zarrx.open_array(store, mode="r+")


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 4))
    most = {1: 60, 2: 20, 3: 9, 4: 6}[ndim]
    shape = tuple(draw(st.integers(1, most)) for _ in range(ndim))
    nested = draw(st.integers(0, 6)) == 0
    writes = []
    for _ in range(draw(st.integers(1, 4))):
        box = []
        for n in shape:
            if draw(st.integers(0, 7)) == 0:
                box.append(draw(st.integers(-n, n - 1)))           # an integer: one axis less
                continue
            a = draw(st.integers(0, n - 1))
            box.append(slice(a, draw(st.integers(a + 1, n))))
        writes.append((tuple(box), draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**16))))
    return dict(shape=shape, chunks=tuple(draw(st.integers(2 if nested else 1, 4))
                                          for _ in range(ndim)),
                ratio=tuple(draw(st.integers(1, 4)) for _ in range(ndim)),
                dtype=draw(st.sampled_from(list(DTYPES))),
                compressor=draw(st.sampled_from(list(COMPRESSORS))),
                loc=draw(st.sampled_from(["end", "start"])), crc=draw(st.booleans()),
                nested=nested, threads=draw(st.sampled_from([1, 2])), empty=draw(st.booleans()),
                local=draw(st.booleans()), writes=writes)


def _value(dtype, shape, layout, seed):
    """Values for a window of ``shape``, some runs of them the fill value, in ``layout``."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    v = rng.integers(-50, 50, shape).astype(dt) if dt.kind in "iu" and dt.itemsize > 1 \
        else rng.integers(0, 50, shape).astype(dt)
    if dt.kind in "fc":
        v = v + (rng.random(shape) > 0.5).astype(dt) / 4
    flat = v.reshape(-1)
    if flat.size and rng.random() < 0.6:                    # a run of fill: whole chunks, maybe
        start = int(rng.integers(0, flat.size))
        flat[start:start + int(rng.integers(1, flat.size + 1))] = DTYPES[dtype]
    if layout == "fortran" and v.ndim:
        return np.asfortranarray(v)
    if layout == "reversed" and v.ndim:
        flip = tuple(slice(None, None, -1) for _ in range(v.ndim))
        return v[flip].copy()[flip]
    if layout == "strided" and v.ndim:
        return np.repeat(v, 2, axis=-1)[..., 1::2]
    if layout == "scalar":
        return flat[0] if flat.size else v
    if layout == "ones" and v.ndim:
        return v[tuple(slice(0, 1) if k % 2 else slice(None) for k in range(v.ndim))].copy()
    if layout == "fewer" and v.ndim > 1:
        return v[0].copy()
    if layout == "float64" and dt.kind != "c":
        return v.astype(np.float64)                     # cast to the array's type on writing
    return v


def _fill_shards_left_out(z, model, c):
    """Shards whose cells are all the fill value, and are stored anyway (none may be, when
    empty chunks are not written)."""
    shard = [k * r for k, r in zip(c["chunks"], c["ratio"])]
    fill = np.array(DTYPES[c["dtype"]], model.dtype).tobytes()
    wrong = []
    for obj in np.ndindex(*[-(-n // s) for n, s in zip(c["shape"], shard)]):
        cells = np.ascontiguousarray(model[tuple(slice(o * s, o * s + s)
                                                 for o, s in zip(obj, shard))])
        all_fill = cells.tobytes() == fill * cells.size
        stored = z.store.get("c/" + "/".join(map(str, obj))) is not None
        if stored == all_fill:
            wrong.append((obj, stored))
    return wrong


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_windows_written_into_shards_read_back_as_numpy_assigns_them(tmp_path_factory, c):
    path = tmp_path_factory.mktemp("model")
    store = LocalStore(str(path)) if c["local"] else MemoryStore()
    with zarrx.config.set(threads=c["threads"], write_empty_chunks=c["empty"]):
        z = _array(store, c)
        model = np.full(c["shape"], DTYPES[c["dtype"]], dtype=c["dtype"])
        for box, layout, seed in c["writes"]:
            v = _value(c["dtype"], model[box].shape, layout, seed)
            model[box] = v
            z[box] = v
            np.testing.assert_array_equal(z[...], model, err_msg=f"after z[{box}] = {layout}")
    if not c["empty"]:
        assert _fill_shards_left_out(z, model, c) == []
    if c["local"] and not c["nested"]:
        zarr = pytest.importorskip("zarr")
        np.testing.assert_array_equal(zarr.open_array(str(path), mode="r")[...], model)


@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
@pytest.mark.parametrize("compressors", [None, "zstd"], ids=["raw", "zstd"])
def test_two_threads_writing_disjoint_windows_of_the_same_shards_lose_nothing(
        tmp_path, monkeypatch, local, compressors):
    """Each window covers the shards in part, with inner chunks covered in part by both
    windows (the rows split inside a chunk): every write merges inside the shard's update."""
    store = LocalStore(str(tmp_path)) if local else MemoryStore()
    z = zarrx.create_array(store, shape=(48, 48), dtype="i4", chunks=(4, 4), shards=(16, 16),
                           compressors=Zstd(level=1) if compressors else None, fill_value=0)
    used = []
    orig = shard_box.in_part
    monkeypatch.setattr(shard_box, "in_part", lambda *a: used.append(1) or orig(*a))
    windows = [(slice(1, 22), slice(3, 45)), (slice(22, 47), slice(3, 45))]
    rounds = 25

    def run(k: int) -> None:
        for i in range(rounds):
            z[windows[k]] = k * 1000 + i + 1

    with zarrx.config.set(threads=1):
        threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    want = np.zeros((48, 48), dtype="i4")
    want[windows[0]] = rounds
    want[windows[1]] = 1000 + rounds
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], want)
    assert len(used) == 2 * rounds * 6                   # 2 x 3 shards each, all in part
