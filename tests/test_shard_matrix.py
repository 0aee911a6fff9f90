"""Shard index encodings end to end against zarr-python and tensorstore: each writes the whole
array, each reads what each wrote, and zarrx updates one inner chunk of a shard another wrote
(the other inner chunks kept as stored)."""
from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
INDEX = {"le-crc": [LE, CRC], "be": [BE], "be-crc": [BE, CRC]}
VARIANTS = list(itertools.product(INDEX, ["start", "end"], ["zarrx", "zarr", "ts"]))
SHAPE = (10, 13)                 # shards of 8 x 8 (partial at the edges) of 4 x 4 inner chunks


def _doc(index: str, location: str) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": list(SHAPE), "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "attributes": {},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [4, 4], "codecs": [BE, {"name": "zstd", "configuration": {
                    "level": 1, "checksum": False}}],
                "index_codecs": INDEX[index], "index_location": location}}]}


def _write(lib: str, path: str, value: np.ndarray) -> None:
    if lib == "zarrx":
        zarrx.open_array(path, mode="r+")[...] = value
    elif lib == "zarr":
        zarr.open_array(path, mode="r+")[...] = value
    else:
        spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
        ts.open(spec).result().write(value).result()


def _read(lib: str, path: str) -> np.ndarray:
    if lib == "zarrx":
        return zarrx.open_array(path, mode="r")[...]
    if lib == "zarr":
        return zarr.open_array(path, mode="r")[...]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
    return ts.open(spec).result().read().result()


def _inner_chunks(blob: bytes, index: str, location: str) -> list[bytes | None]:
    n = 4
    size = 16 * n + (4 if "crc" in index else 0)
    raw = blob[-size:] if location == "end" else blob[:size]
    words = np.frombuffer(raw[:16 * n], dtype=">u8" if index.startswith("be") else "<u8")
    return [None if off == 2**64 - 1 else blob[off:off + nb]
            for off, nb in words.reshape(n, 2).tolist()]


@pytest.mark.parametrize("index, location, writer", VARIANTS,
                         ids=["-".join(v) for v in VARIANTS])
def test_each_reads_what_each_writes_and_zarrx_updates_in_place(tmp_path, index, location,
                                                                writer):
    path = str(tmp_path / "a.zarr")
    (tmp_path / "a.zarr").mkdir()
    (tmp_path / "a.zarr" / "zarr.json").write_text(json.dumps(_doc(index, location)))
    want = np.arange(1, 131, dtype="i4").reshape(SHAPE)
    want[0:4, 0:4] = 0                                 # an inner chunk of fill: not stored
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _write(writer, path, want)
        for reader in ("zarrx", "zarr", "ts"):
            np.testing.assert_array_equal(_read(reader, path), want, err_msg=reader)
        shard = tmp_path / "a.zarr" / "c" / "0" / "0"
        before = _inner_chunks(shard.read_bytes(), index, location)
        assert before[0] is None and all(c is not None for c in before[1:])
        zarrx.open_array(path, mode="r+")[5, 2] = -7   # inner chunk (1, 0): slot 2
        want[5, 2] = -7
        after = _inner_chunks(shard.read_bytes(), index, location)
        assert [after[i] == before[i] for i in range(4)] == [True, True, False, True]
        for reader in ("zarrx", "zarr", "ts"):
            np.testing.assert_array_equal(_read(reader, path), want, err_msg=reader)
