"""numcodecs ``lzma`` with a filter chain on xz and alone streams (zarr-python 2's tutorial
compresses with ``LZMA(filters=[DELTA, LZMA2])``): the streams record their chain, so zarrx reads
them without it (numcodecs hands the chain to the decoder, which refuses it for those formats,
so zarr-python cannot read them back) and writes them as numcodecs does."""
from __future__ import annotations

import lzma
import warnings

import numpy as np
import pytest

import zarrx

numcodecs = pytest.importorskip("numcodecs")
zarr = pytest.importorskip("zarr")
import zarr.codecs.numcodecs  # noqa: E402

CHAINS = {
    "xz-delta-lzma2": (1, [{"id": lzma.FILTER_DELTA, "dist": 4},
                           {"id": lzma.FILTER_LZMA2, "preset": 1}]),
    "xz-x86-lzma2": (1, [{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_LZMA2, "preset": 6}]),
    "alone-lzma1": (2, [{"id": lzma.FILTER_LZMA1, "preset": 3}]),
}


def _values() -> np.ndarray:
    return (np.arange(12 * 9, dtype="<i4").reshape(12, 9) * 7) % 1000


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("case", list(CHAINS))
def test_zarrx_reads_the_chained_streams_zarr_python_writes(tmp_path, case, zarr_format) -> None:
    fmt, chain = CHAINS[case]
    a = _values()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        codec = numcodecs.LZMA(format=fmt, filters=chain) if zarr_format == 2 else \
            zarr.codecs.numcodecs.LZMA(format=fmt, filters=chain)
        z = zarr.create_array(str(tmp_path / "a"), shape=a.shape, chunks=(5, 4), dtype=a.dtype,
                              compressors=[codec], zarr_format=zarr_format)
        z[...] = a
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "a"), mode="r")[...], a)


@pytest.mark.parametrize("case", list(CHAINS))
def test_zarrx_writes_chained_streams_as_numcodecs_does(case) -> None:
    fmt, chain = CHAINS[case]
    a = _values()
    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=a.shape, chunks=a.shape,
                           dtype=a.dtype, compressors=[{"id": "lzma", "format": fmt,
                                                        "filters": chain}], zarr_format=2)
    z[...] = a
    stored = z.store.get("0.0")
    assert stored == numcodecs.LZMA(format=fmt, filters=chain).encode(a)
    # the stream records its chain: it decodes without one
    assert lzma.decompress(stored, format=fmt) == a.tobytes()
    np.testing.assert_array_equal(z[...], a)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_filter_options_written_with_a_fraction_part_read_as_integers(tmp_path, zarr_format):
    """``"dict_size": 1048576.0`` in a stored chain is that integer, as ``"preset": 6.0`` is:
    the array opens, reads and writes (the chain was accepted when parsed, then refused when
    the codec was made: ``CodecError ... found 1048576.0``)."""
    import json

    chain = [{"id": lzma.FILTER_DELTA, "dist": 2.0},
             {"id": lzma.FILTER_LZMA2, "dict_size": float(1 << 20), "lc": 3.0}]
    path = tmp_path / "a"
    z = zarrx.create_array(str(path), shape=(6,), chunks=(3,), dtype="<i2",
                           compressors=[{"id": "lzma", "format": 3, "filters": [
                               {k: int(v) for k, v in f.items()} for f in chain]}]
                           if zarr_format == 2 else
                           [{"name": "numcodecs.lzma", "configuration": {"format": 3, "filters": [
                               {k: int(v) for k, v in f.items()} for f in chain]}}],
                           zarr_format=zarr_format)
    z[...] = np.arange(6)
    name = ".zarray" if zarr_format == 2 else "zarr.json"
    doc = json.loads((path / name).read_bytes())
    conf = doc["compressor"] if zarr_format == 2 else doc["codecs"][-1]["configuration"]
    conf["filters"] = chain
    (path / name).write_text(json.dumps(doc))

    a = zarrx.open_array(str(path), mode="r+")
    assert a[...].tolist() == [0, 1, 2, 3, 4, 5]
    a[:2] = [7, 8]
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [7, 8, 2, 3, 4, 5]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_check_and_filter_ids_written_with_a_fraction_part_read_as_integers(tmp_path,
                                                                            zarr_format):
    """``"check": -1.0`` and a filter ``"id": 33.0`` are those integers, as ``"format": 1.0``
    is (they were refused: ``expected -1 (the default) or an lzma.CHECK_* value ..., found
    -1.0``); ``33.5`` stays refused, naming the field."""
    import json

    path = tmp_path / "a"
    conf = {"format": 1, "check": -1, "filters": [{"id": lzma.FILTER_LZMA2, "preset": 1}]}
    z = zarrx.create_array(str(path), shape=(6,), chunks=(3,), dtype="<i2",
                           compressors=[{"id": "lzma", **conf}] if zarr_format == 2 else
                           [{"name": "numcodecs.lzma", "configuration": conf}],
                           zarr_format=zarr_format)
    z[...] = np.arange(6)
    name = ".zarray" if zarr_format == 2 else "zarr.json"
    doc = json.loads((path / name).read_bytes())
    stored = doc["compressor"] if zarr_format == 2 else doc["codecs"][-1]["configuration"]
    stored.update(format=1.0, check=-1.0, filters=[{"id": 33.0, "preset": 1.0}])
    (path / name).write_text(json.dumps(doc))

    a = zarrx.open_array(str(path), mode="r+")
    assert a[...].tolist() == [0, 1, 2, 3, 4, 5]
    a[:2] = [7, 8]
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [7, 8, 2, 3, 4, 5]

    stored["filters"] = [{"id": 33.5, "preset": 1}]
    (path / name).write_text(json.dumps(doc))
    with pytest.raises(zarrx.MetadataError, match=r"filters\[0\]\.id: expected an lzma "
                       r"filter id: .*, found 33\.5"):
        zarrx.open_array(str(path), mode="r")
