"""Shard indexes encoded by a transpose, bytes and several crc32c codecs, as zarr-python and
tensorstore read and write them: zarrx reads theirs, writes the same bytes, and refuses a
corrupt checksum or an entry pointing into one."""
from __future__ import annotations

import json
import struct
import warnings

import crc32c
import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError, ShardError
from zarrx.store import _shard_index as k

ts = pytest.importorskip("tensorstore")
zarr = pytest.importorskip("zarr")

M = 2**64 - 1
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}


def transpose(order: list[int]) -> dict:
    return {"name": "transpose", "configuration": {"order": order}}


# (shape, shard, inner chunk, index codecs, index location)
CASES = {
    "1d-transposed-2crc": ((8,), (8,), (2,), [transpose([1, 0]), BIG, CRC, CRC], "end"),
    "1d-3crc-start": ((10,), (8,), (2,), [BYTES, CRC, CRC, CRC], "start"),
    "2d-transposed": ((6, 9), (4, 6), (2, 3), [transpose([2, 0, 1]), BYTES], "end"),
    "2d-transposed-crc-start": ((6, 9), (4, 6), (2, 2), [transpose([1, 2, 0]), BIG, CRC],
                                "start"),
    "2d-identity-transpose": ((5, 5), (4, 4), (2, 2), [transpose([0, 1, 2]), BYTES, CRC], "end"),
    "3d-transposed-2crc": ((4, 4, 6), (4, 4, 6), (2, 2, 3), [transpose([2, 1, 0, 3]), BYTES,
                                                            CRC, CRC], "end"),
}


def _document(shape, shard, inner, index_codecs, location) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "int16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": list(inner), "codecs": [BYTES], "index_codecs": index_codecs,
                "index_location": location}}]}


def _make(path, case) -> None:
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps(_document(*CASES[case])))


def _values(shape) -> np.ndarray:
    v = np.arange(int(np.prod(shape)), dtype="i2").reshape(shape)
    v[(v % 7 == 0) | (v % 5 == 1)] = -1          # some inner chunks all fill: missing
    return v


def _ts(path):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()


def _stored(path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted((path / "c").rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("case", CASES)
def test_reads_what_tensorstore_and_zarr_python_write_and_writes_their_bytes(tmp_path, case):
    shape = CASES[case][0]
    v = _values(shape)
    by_ts, by_zarr, by_zarrx = tmp_path / "ts", tmp_path / "zarr", tmp_path / "zarrx"
    for p in (by_ts, by_zarr, by_zarrx):
        _make(p, case)
    _ts(by_ts).write(v).result()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.open_array(str(by_zarr), mode="r+")[...] = v
    for p in (by_ts, by_zarr):
        np.testing.assert_array_equal(zarrx.open_array(str(p))[...], v)
    zarrx.open_array(str(by_zarrx), mode="r+")[...] = v
    assert _stored(by_zarrx) == _stored(by_ts)            # the same index bytes
    # a partial write merges into the shard tensorstore wrote; both libraries read it back
    a = zarrx.open_array(str(by_ts), mode="r+")
    sel = tuple(slice(1, s - 1) for s in shape)
    a[sel] = 9
    v[sel] = 9
    np.testing.assert_array_equal(_ts(by_ts).read().result(), v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(zarr.open_array(str(by_ts))[...], v)
    np.testing.assert_array_equal(zarrx.open_array(str(by_ts))[...], v)


def test_kernel_round_trip_with_word_positions_and_checksums():
    entries = np.array([[0, 4], [M, M], [4, 4], [8, 2]], dtype=np.uint64)
    order = (1, 0)
    at = np.empty(8, dtype=np.int64)
    at[np.arange(8).reshape(4, 2).transpose(order).reshape(-1)] = np.arange(8)
    blob = k.encode_index(entries, 2, True, at)
    body = struct.pack(">8Q", *entries.T.reshape(-1).tolist())
    c1 = crc32c.crc32c(body).to_bytes(4, "little")
    c2 = crc32c.crc32c(body + c1).to_bytes(4, "little")
    assert blob == body + c1 + c2
    assert k.index_nbytes(4, 2) == len(blob) == 72
    got, status, bad = k.decode_index(blob, 4, 82, True, 2, True, at)
    assert (status, bad) == (k.OK, -1)
    np.testing.assert_array_equal(got, entries)


def _shard_path(path) -> str:
    return str(path / "c" / "0")


def test_a_corrupt_outer_or_inner_checksum_is_a_shard_error(tmp_path):
    _make(tmp_path / "a", "1d-transposed-2crc")
    a = zarrx.open_array(str(tmp_path / "a"), mode="r+")
    a[0:4] = [1, 2, 3, 4]
    path = _shard_path(tmp_path / "a")
    blob = bytearray(open(path, "rb").read())
    blob[-1] ^= 1                                       # the second (outermost) checksum
    open(path, "wb").write(bytes(blob))
    with pytest.raises(ShardError, match=r"index checksum mismatch: stored crc32c 0x[0-9a-f]{8}, "
                       r"computed 0x[0-9a-f]{8} over the 64-byte index and the 1 checksum\(s\) "
                       r"after it"):
        zarrx.open_array(str(tmp_path / "a"))[...]
    blob[-1] ^= 1
    blob[-5] ^= 1                                       # the first: the second no longer matches
    open(path, "wb").write(bytes(blob))
    with pytest.raises(ShardError, match=r"index checksum mismatch: .* over the 64-byte index "
                       r"and the 1 checksum\(s\) after it"):
        zarrx.open_array(str(tmp_path / "a"))[...]


def test_an_entry_pointing_into_the_trailing_checksums_is_refused(tmp_path):
    _make(tmp_path / "a", "1d-3crc-start")
    (tmp_path / "a" / "c").mkdir()
    path = _shard_path(tmp_path / "a")
    body = struct.pack("<8Q", 68, 4, M, M, M, M, M, M)   # bytes [68, 72): the second checksum
    crcs = b""
    for _ in range(3):
        crcs += crc32c.crc32c(body + crcs).to_bytes(4, "little")
    open(path, "wb").write(body + crcs + b"\x01\x00\x02\x00")
    with pytest.raises(ShardError, match=re_escape("index entry 0 (inner chunk (0,)): bytes "
                                                   "[68, 72) overlap the index at bytes [0, 76)")):
        zarrx.open_array(str(tmp_path / "a"))[...]


def re_escape(text: str) -> str:
    import re
    return re.escape(text)


@pytest.mark.parametrize("index_codecs, message", [
    ([transpose([1, 0]), BYTES],
     "index_codecs[0].configuration.order: expected a permutation of 3 dimensions (the index is "
     "an array of the inner chunks per shard along each of 2 axes, by 2 words), found [1, 0]"),
    ([BYTES, transpose([2, 1, 0])], "index_codecs: expected an optional transpose, bytes"),
    ([BYTES, CRC, {"name": "zstd", "configuration": {"level": 1}}],
     "index_codecs: expected an optional transpose, bytes"),
    ([transpose([0, 2, 1]), transpose([0, 2, 1]), BYTES],
     "index_codecs: expected an optional transpose, bytes"),
])
def test_other_index_encodings_are_refused_by_field(tmp_path, index_codecs, message):
    doc = _document((4, 4), (4, 4), (2, 2), index_codecs, "end")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=re_escape(f"zarr.json codecs[0].configuration."
                                                      f"{message}")):
        zarrx.open_array(str(tmp_path / "a"))


def test_opening_an_array_with_a_large_transposed_index_allocates_nothing_for_it(tmp_path):
    import tracemalloc
    doc = _document((2**25,), (2**25,), (1,), [transpose([1, 0]), BYTES, CRC], "end")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "zarr.json").write_text(json.dumps(doc))
    tracemalloc.start()
    try:
        a = zarrx.open_array(str(tmp_path / "a"))
        assert a[12345] == -1                 # no shard stored: its index is never read
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20                     # the index of a shard would take 512 MiB
