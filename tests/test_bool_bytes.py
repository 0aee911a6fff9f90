"""Zarr stores bool as one byte, 0 for false and 1 for true. A chunk holding other bytes (2..255,
which zarr-python passes through from memory) reads as zarr-python's values read it (any
nonzero byte is true) and is handed out as bytes 0 and 1, so raw views, hashes and copies agree
with the values (tensorstore refuses such a chunk); bool values holding other bytes (a view of
other bytes as bool) are written as 0 and 1, which tensorstore reads. See docs/SPEC.md."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

STORED = bytes([0, 1, 2, 255])
VALUES = [False, True, True, True]


def _stored(tmp_path, zarr_format, key):
    path = str(tmp_path / "b.zarr")
    zarrx.create_array(path, shape=(4,), chunks=(4,), dtype=bool, compressors=None,
                       zarr_format=zarr_format)
    (tmp_path / "b.zarr" / key).parent.mkdir(exist_ok=True)
    (tmp_path / "b.zarr" / key).write_bytes(STORED)
    return zarrx.open_array(path, mode="r+")


@pytest.mark.parametrize("zarr_format, key", [(3, "c/0"), (2, "0")])
def test_other_bytes_read_as_true_held_as_one(tmp_path, zarr_format, key):
    z = _stored(tmp_path, zarr_format, key)
    for a in (z[:], z.oindex[[0, 1, 2, 3]], z.vindex[[0, 1, 2, 3]], z[np.ones(4, bool)],
              z.get_basic_selection(slice(None), out=np.zeros(4, bool))):
        assert a.tolist() == VALUES
        assert a.view("u1").tolist() == [0, 1, 1, 1]     # before: [0, 1, 2, 255]
        assert len({x.tobytes() for x in a[1:]}) == 1
    assert z[2] == True and z[3].view("u1") == 1  # noqa: E712


@pytest.mark.parametrize("zarr_format, key", [(3, "c/0"), (2, "0")])
def test_bools_holding_other_bytes_are_written_as_one(tmp_path, zarr_format, key):
    z = _stored(tmp_path, zarr_format, key)
    values = np.frombuffer(bytes([7, 0, 255, 1]), dtype=bool)
    z[:] = values
    assert (tmp_path / "b.zarr" / key).read_bytes() == bytes([1, 0, 1, 1])  # before: as given
    assert values.view("u1").tolist() == [7, 0, 255, 1]     # the caller's array is unchanged
    z[1:3] = np.frombuffer(bytes([9, 4]), dtype=bool)
    assert (tmp_path / "b.zarr" / key).read_bytes() == bytes([1, 1, 1, 1])


def test_tensorstore_reads_what_zarrx_writes(tmp_path):
    ts = pytest.importorskip("tensorstore")
    path = str(tmp_path / "t.zarr")
    z = zarrx.create_array(path, shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype=bool)
    values = np.frombuffer(bytes([0, 1, 2, 255] * 4), dtype=bool).reshape(4, 4)
    z[:] = values
    got = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
                  ).result().read().result()      # before: "Invalid bool value: 2"
    assert got.tolist() == values.tolist()


@pytest.mark.parametrize("layout", [{}, {"compressors": {"name": "zstd"}},
                                    {"shards": (8,)}, {"shards": (8,), "zarr_format": 3,
                                                       "compressors": {"name": "zstd"}}],
                         ids=["raw", "zstd", "sharded", "sharded-zstd"])
def test_a_partial_write_stores_the_chunk_it_rewrites_as_zeros_and_ones(tmp_path, layout):
    """The cells a write does not cover are written back as they read (before: as stored, so
    tensorstore went on refusing the chunk)."""
    kw = {"shape": (8,), "chunks": (4,), "compressors": None, **layout}
    raw = zarrx.create_array(str(tmp_path / "raw"), dtype="u1", **kw)
    raw[...] = [2, 255, 0, 3, 1, 0, 7, 1]
    zarrx.create_array(str(tmp_path / "b"), dtype=bool, **kw)
    as_bytes = (tmp_path / "raw" / "zarr.json").read_bytes()
    (tmp_path / "raw" / "zarr.json").write_bytes((tmp_path / "b" / "zarr.json").read_bytes())
    zarrx.open_array(str(tmp_path / "raw"), mode="r+")[2] = True
    (tmp_path / "raw" / "zarr.json").write_bytes(as_bytes)
    stored = zarrx.open_array(str(tmp_path / "raw"), mode="r")[...].tolist()
    assert stored[:4] == [1, 1, 1, 1]
