"""Where zarr-python 3.1.6 deviates from the Zarr spec on configurations the random interop
test does not draw: a ``transpose`` over variable-length strings, and a ``structured`` type
under a big-endian ``bytes`` codec. zarrx stores what the spec says, reads what zarr-python
stores as zarr-python reads it back, and each test pins zarr-python's deviation so that it
fails when zarr-python changes (docs/SPEC.md lists both)."""
from __future__ import annotations

import base64
import json
import struct
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
from zarr.codecs import (BytesCodec, ShardingCodec, TransposeCodec,  # noqa: E402
                         VLenUTF8Codec)

TEXT = np.array([["a", "bb", "ccc"], ["d", "\u00e9", "\U0001F600"]], dtype=object)


def _vlen_items(chunk: bytes) -> list[str]:
    """The items of a vlen-utf8 chunk in stored order."""
    (n,), at, out = struct.unpack_from("<I", chunk), 4, []
    for _ in range(n):
        (size,) = struct.unpack_from("<I", chunk, at)
        out.append(chunk[at + 4:at + 4 + size].decode())
        at += 4 + size
    return out


def _zarr_python(path: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(path, mode="r")


def _string_kwargs(sharded: bool) -> dict:
    if sharded:
        return dict(chunks=(2, 3), filters=None, serializer=ShardingCodec(
            chunk_shape=(2, 3), codecs=[TransposeCodec(order=(1, 0)), VLenUTF8Codec()]))
    return dict(chunks=(2, 3), filters=[TransposeCodec(order=(1, 0))])


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "sharded"])
def test_transposed_strings_are_stored_transposed(tmp_path, sharded) -> None:
    """The transpose codec hands the next codec the chunk in the permuted order, whatever the
    data type: zarrx stores the strings so and zarr-python reads them as written."""
    path = str(tmp_path / "x.zarr")
    z = zarrx.create_array(path, shape=(2, 3), dtype=str, compressors=None,
                           **_string_kwargs(sharded))
    z[...] = TEXT
    if not sharded:
        assert _vlen_items((tmp_path / "x.zarr" / "c" / "0" / "0").read_bytes()) == \
            TEXT.T.reshape(-1).tolist()
    assert zarrx.open_array(path, mode="r")[...].tolist() == TEXT.tolist()
    assert np.asarray(_zarr_python(path)[...]).tolist() == TEXT.tolist()


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "sharded"])
def test_zarr_python_stores_transposed_strings_untransposed(tmp_path, sharded) -> None:
    """zarr-python 3.1.6 stores the strings in their untransposed order and reads them back
    transposed, so its arrays do not hold what was written, in zarr-python either; zarrx reads
    the stored items as the spec orders them, which is what zarr-python reads back."""
    path = str(tmp_path / "z.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(path, shape=(2, 3), dtype=str, compressors=None,
                              **_string_kwargs(sharded))
        z[...] = TEXT
    if not sharded:
        assert _vlen_items((tmp_path / "z.zarr" / "c" / "0" / "0").read_bytes()) == \
            TEXT.reshape(-1).tolist()
    theirs = np.asarray(_zarr_python(path)[...]).tolist()
    assert theirs != TEXT.tolist()                  # the deviation
    stored_order = TEXT.reshape(-1).reshape(3, 2).T.tolist()
    assert theirs == stored_order
    assert zarrx.open_array(path, mode="r")[...].tolist() == stored_order


def test_zarr_python_reads_a_big_endian_structured_array_as_little_endian(tmp_path) -> None:
    """A ``structured`` type under a big-endian ``bytes`` codec: zarrx stores the fields and
    the base64 fill value big-endian, as the codec says, and reads them back; zarr-python
    3.1.6 reads both little-endian (1 as 256)."""
    dt = np.dtype([("a", "<i2"), ("b", "<f4")])
    path = str(tmp_path / "big.zarr")
    z = zarrx.create_array(path, shape=(2,), chunks=(2,), dtype=dt, fill_value=(1, 2.0),
                           serializer={"name": "bytes", "configuration": {"endian": "big"}},
                           compressors=None)
    z[0] = (3, 4.0)
    assert (tmp_path / "big.zarr" / "c" / "0").read_bytes() == \
        np.array([(3, 4.0), (1, 2.0)], dt.newbyteorder(">")).tobytes()
    assert zarrx.open_array(path, mode="r")[...].tolist() == [(3, 4.0), (1, 2.0)]
    theirs = _zarr_python(path)
    swapped = np.array([(3, 4.0), (1, 2.0)], dt.newbyteorder(">")).view(dt)
    assert np.asarray(theirs[...]).tobytes() == swapped.tobytes()          # the deviation
    assert np.asarray(theirs.fill_value).tobytes() == swapped[1].tobytes()


def test_zarr_python_writes_a_structured_type_little_endian_when_asked_for_big(tmp_path) -> None:
    """zarr-python 3.1.6 given ``BytesCodec(endian="big")`` for a structured type writes a
    ``bytes`` codec without ``endian`` and stores the items little-endian; zarrx reads that
    document as little-endian (docs/SPEC.md), so both read the values written."""
    dt = np.dtype([("a", "<i2"), ("b", "<f4")])
    path = str(tmp_path / "zp.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(path, shape=(2,), chunks=(2,), dtype=dt, fill_value=(1, 2.0),
                              serializer=BytesCodec(endian="big"), compressors=None)
        z[0] = (3, 4.0)
    doc = json.loads((tmp_path / "zp.zarr" / "zarr.json").read_text())
    assert doc["codecs"] == [{"name": "bytes"}]
    assert base64.b64decode(doc["fill_value"]) == np.array((1, 2.0), dt).tobytes()
    ours = zarrx.open_array(path, mode="r")
    assert ours[...].tolist() == [(3, 4.0), (1, 2.0)]
    assert ours.fill_value.tolist() == (1, 2.0)
