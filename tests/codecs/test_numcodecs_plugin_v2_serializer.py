"""Zarr v2 create_array with pcodec or zfpy given as the ``serializer`` and a compressor: the
codec is chained as the last filter before the compressor (as zarr-python 2 chains codecs),
instead of becoming the compressor with the compressor asked for dropped without a word; and
``convert`` to Zarr v2 of a Zarr v3 array [pcodec, zstd] keeps the zstd."""
from __future__ import annotations

import json

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore

pytest.importorskip("numcodecs")
_A = np.arange(70.0).reshape(10, 7)


@pytest.mark.parametrize("cid", ["pcodec", "zfpy"])
@pytest.mark.parametrize("compressor, stored", [
    ({"name": "zstd", "configuration": {"level": 5}}, {"id": "zstd", "level": 5}),
    (None, None)])
def test_v2_serializer_then_compressor(cid, compressor, stored):
    pytest.importorskip(cid)
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(10, 7), chunks=(4, 4), dtype="f8", zarr_format=2,
                           serializer={"name": f"numcodecs.{cid}"}, compressors=compressor)
    z[...] = _A
    meta = json.loads(bytes(store.get(".zarray")))
    if stored is None:
        assert meta["filters"] is None and meta["compressor"]["id"] == cid
    else:
        assert [f["id"] for f in meta["filters"]] == [cid]
        assert meta["compressor"] == stored
    np.testing.assert_allclose(zarrx.open_array(store, mode="r")[...], _A, atol=1e-3)


def test_convert_v3_pcodec_zstd_to_v2_keeps_zstd(tmp_path):
    pytest.importorskip("pcodec")
    from zarrx.tools.convert import convert
    src = zarrx.create_array(str(tmp_path / "src.zarr"), shape=(10, 7), chunks=(4, 4),
                             dtype="f8", serializer={"name": "numcodecs.pcodec",
                                                     "configuration": {"level": 8}},
                             compressors={"name": "zstd", "configuration": {"level": 5}})
    src[...] = _A
    convert(str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr"), zarr_format=2)
    meta = json.loads((tmp_path / "dst.zarr" / ".zarray").read_text())
    assert meta["filters"] == [{"id": "pcodec", "level": 8}]
    assert meta["compressor"] == {"id": "zstd", "level": 5}
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "dst.zarr"))[...], _A)
