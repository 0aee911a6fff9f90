"""Codec configurations beyond the interop matrix: lzma's fields checked before anything is
written (and in stored documents), Zarr v2 filter chains whose order a codec chain cannot run,
and the numcodecs JSON form of the checksums zarrx writes."""
from __future__ import annotations

import json
import lzma

import numpy as np
import pytest

import zarrx
from zarrx import codecs as zc
from zarrx.errors import (ArgumentError, ArgumentTypeError, CodecError, MetadataError,
                          UnknownCodecError, ZarrError)
from zarrx.store import MemoryStore

numcodecs = pytest.importorskip("numcodecs")
zarr = pytest.importorskip("zarr")

CHECKS = ("-1 (the default) or an lzma.CHECK_* value: 0 (none), 1 (CRC-32), 4 (CRC-64) or "
          "10 (SHA-256)")
LZMA_OPTIONS = ("'id', 'preset', 'dict_size', 'lc', 'lp', 'pb', 'mode', 'nice_len', 'mf', "
                "'depth'")

BAD_LZMA = {   # id: (configuration, field, what the message says after the field)
    "preset-10": ({"preset": 10}, "preset",
                  "expected 0..9, optionally with lzma.PRESET_EXTREME, found 10"),
    "check-3": ({"check": 3}, "check", f"expected {CHECKS}, found 3"),
    "check-alone": ({"format": 2, "check": 4}, "check",
                    "expected -1 or 0 (none) for format 2 (only format 1, xz, has integrity "
                    "checks), found 4"),
    "check-raw": ({"format": 3, "check": 1, "filters": [{"id": 33}]}, "check",
                  "expected -1 or 0 (none) for format 3 (only format 1, xz, has integrity "
                  "checks), found 1"),
    "filters-xz-lzma1": ({"format": 1, "filters": [{"id": 4611686018427387905}]},
                         "filters[0].id", "expected LZMA2 (33) as the last filter for format 1 "
                                          "(xz), found 4611686018427387905"),
    "filters-alone-chain": ({"format": 2, "filters": [{"id": 3, "dist": 4},
                                                      {"id": 4611686018427387905}]}, "filters",
                            "expected a single LZMA1 filter for format 2 (alone), found "
                            "[{'id': 3, 'dist': 4}, {'id': 4611686018427387905}]"),
    "filters-xz-empty": ({"format": 1, "filters": []}, "filters",
                         "expected 1 to 4 filters, the last LZMA1 or LZMA2, or null, found []"),
    "filters-raw-empty": ({"format": 3, "filters": []}, "filters",
                          "expected 1 to 4 filters, the last LZMA1 or LZMA2, or null, found []"),
    "filter-id": ({"format": 3, "filters": [{"id": 999}]}, "filters[0].id",
                  "expected an lzma filter id: LZMA1 (4611686018427387905), LZMA2 (33), DELTA "
                  "(3), X86 (4), POWERPC (5), IA64 (6), ARM (7), ARMTHUMB (8), SPARC (9), "
                  "found 999"),
    "filter-without-id": ({"format": 3, "filters": [{"preset": 1}]}, "filters[0]",
                          "missing required field 'id'"),
    "filter-option": ({"format": 3, "filters": [{"id": 33, "presett": 1}]},
                      "filters[0].presett", f"unknown field; expected only {LZMA_OPTIONS}"),
    "filter-option-type": ({"format": 3, "filters": [{"id": 33, "preset": "x"}]},
                           "filters[0].preset", "expected an integer in [0, 4294967295], "
                                                "found 'x'"),
    "chain-end": ({"format": 3, "filters": [{"id": 3, "dist": 4}]}, "filters[0].id",
                  "expected LZMA1 or LZMA2 (the last filter of a chain compresses), found 3"),
    "chain-middle": ({"format": 3, "filters": [{"id": 33}, {"id": 33}]}, "filters[0].id",
                     "expected a DELTA or BCJ filter before the last one, found 33"),
    "preset-and-filters": ({"format": 3, "preset": 3, "filters": [{"id": 33, "preset": 1}]},
                           "preset", "expected null when filters are given (each filter "
                                     "takes its own preset), found 3"),
}


def _field(where: str, field: str) -> str:
    return f"{where}.{field}" if not field.startswith("[") else f"{where}{field}"


@pytest.mark.parametrize("conf,field,detail", list(BAD_LZMA.values()), ids=list(BAD_LZMA))
def test_bad_lzma_configurations_are_refused_before_anything_is_written(conf, field,
                                                                        detail) -> None:
    with pytest.raises(CodecError) as info:
        zc.LZMA(**conf)
    assert str(info.value) == f"zarrx.codecs.LZMA {field}: {detail}"
    for fmt, arg, where in [
            (3, {"name": "numcodecs.lzma", "configuration": conf},
             "create_array compressors[0].configuration"),
            (2, {"id": "lzma", **conf}, "create_array compressors[0]")]:
        store = MemoryStore()
        with pytest.raises(CodecError) as info:
            zarrx.create_array(store, shape=(6,), chunks=(3,), dtype="i4", zarr_format=fmt,
                               compressors=arg)
        assert str(info.value) == f"{_field(where, field)}: {detail}"
        assert list(store.list_prefix("")) == []


def _stored(fmt: int, compressor: dict) -> MemoryStore:
    """A store holding array ``a`` whose stored document names ``compressor``."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(6,), chunks=(3,), dtype="<i4", zarr_format=fmt)
    key = "a/zarr.json" if fmt == 3 else "a/.zarray"
    doc = json.loads(store.get(key))
    if fmt == 3:
        doc["codecs"] = [{"name": "bytes", "configuration": {"endian": "little"}}, compressor]
    else:
        doc["compressor"] = compressor
    store.set(key, json.dumps(doc).encode())
    return store


@pytest.mark.parametrize("conf,field,detail", list(BAD_LZMA.values()), ids=list(BAD_LZMA))
def test_bad_lzma_configurations_in_stored_documents(conf, field, detail) -> None:
    for fmt, compressor, where in [
            (3, {"name": "numcodecs.lzma", "configuration": conf},
             "a/zarr.json codecs[1].configuration"),
            (2, {"id": "lzma", **conf}, "a/.zarray compressor")]:
        store = _stored(fmt, compressor)
        with pytest.raises(MetadataError) as info:
            zarrx.open_array(store, path="a", mode="r")
        assert str(info.value) == f"{_field(where, field)}: {detail}"


GOOD_LZMA = {
    "default": {},
    "preset-extreme": {"preset": 9 | lzma.PRESET_EXTREME},
    "check-sha256": {"check": lzma.CHECK_SHA256},
    "check-none": {"check": lzma.CHECK_NONE, "preset": 1},
    "alone": {"format": lzma.FORMAT_ALONE, "preset": 1},
    "raw-delta-lzma2": {"format": lzma.FORMAT_RAW,
                        "filters": [{"id": lzma.FILTER_DELTA, "dist": 4},
                                    {"id": lzma.FILTER_LZMA2, "preset": 1}]},
    "raw-x86-lzma1": {"format": lzma.FORMAT_RAW,
                      "filters": [{"id": lzma.FILTER_X86},
                                  {"id": lzma.FILTER_LZMA1, "preset": 2, "lc": 3}]},
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("conf", list(GOOD_LZMA.values()), ids=list(GOOD_LZMA))
def test_lzma_configurations_numcodecs_takes_round_trip(tmp_path, conf, fmt) -> None:
    path = str(tmp_path / "a.zarr")
    data = np.arange(40, dtype="<i4").reshape(5, 8)
    z = zarrx.create_array(path, shape=data.shape, chunks=(2, 3), dtype="<i4", zarr_format=fmt,
                           compressors=zc.LZMA(**conf))
    z[...] = data
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data)
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], data)


# -- Zarr v2 filters: array filters first, then those that work on bytes -----------------------
LATE = {   # id: (filters, index of the late array filter, its id, the bytes filter before it)
    "checksum-then-delta": ([numcodecs.Adler32(), numcodecs.Delta("<i2")], 1, "delta", 0,
                            "adler32"),
    "shuffle-zlib-astype": ([numcodecs.Shuffle(2), numcodecs.Zlib(), numcodecs.AsType("<i2",
                                                                                    "<i2")],
                            2, "astype", 0, "shuffle"),
}


def _late(i: int, name: str, at: int, first: str) -> str:
    return (f"filters[{i}]: array filter {name!r} after filters[{at}] {first!r}, which works on "
            f"bytes; expected the filters that work on arrays (delta, fixedscaleoffset, "
            f"quantize, ...) before those that work on bytes (shuffle, checksums, compressors)")


@pytest.mark.parametrize("filters,i,name,at,first", list(LATE.values()), ids=list(LATE))
def test_a_v2_array_filter_after_a_bytes_filter_is_refused_naming_it(tmp_path, filters, i,
                                                                     name, at, first) -> None:
    path = str(tmp_path / "zp.zarr")
    z = zarr.create_array(path, shape=(5,), chunks=(2,), dtype="<i2", zarr_format=2,
                          filters=filters, compressors=None)
    z[...] = np.arange(5)
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(path, mode="r")
    assert str(info.value) == f".zarray {_late(i, name, at, first)}"
    store = MemoryStore()
    with pytest.raises(ArgumentError) as info:
        zarrx.create_array(store, shape=(5,), chunks=(2,), dtype="<i2", zarr_format=2,
                           filters=filters, compressors=None)
    assert str(info.value) == f"create_array {_late(i, name, at, first)}"
    assert list(store.list_prefix("")) == []


@pytest.mark.parametrize("filters", [
    [numcodecs.Delta("<i2"), numcodecs.Shuffle(2)],
    [numcodecs.Delta("<i2"), numcodecs.Adler32(), numcodecs.Shuffle(2), numcodecs.Zlib()],
], ids=["delta-shuffle", "delta-checksum-shuffle-zlib"])
def test_v2_array_filters_before_bytes_filters_read_and_write(tmp_path, filters) -> None:
    data = np.arange(5, dtype="<i2")
    path = str(tmp_path / "zp.zarr")
    z = zarr.create_array(path, shape=(5,), chunks=(2,), dtype="<i2", zarr_format=2,
                          filters=filters, compressors=None)
    z[...] = data
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], data)
    ours = str(tmp_path / "zx.zarr")
    zarrx.create_array(ours, shape=(5,), chunks=(2,), dtype="<i2", zarr_format=2,
                       filters=filters, compressors=None)[...] = data
    np.testing.assert_array_equal(zarr.open_array(ours, mode="r")[...], data)


# -- the numcodecs form of the checksums in a .zarray ------------------------------------------
@pytest.mark.parametrize("codec,want", [
    (zc.CRC32(), {"id": "crc32"}),
    (zc.CRC32(location="start"), {"id": "crc32"}),
    (zc.CRC32(location="end"), {"id": "crc32", "location": "end"}),
    (zc.Adler32(), {"id": "adler32"}),
    (zc.Adler32(location="end"), {"id": "adler32", "location": "end"}),
    (numcodecs.CRC32(), {"id": "crc32"}),
    (zc.Crc32c(), {"id": "crc32c"}),
    (zc.Crc32c(location="start"), {"id": "crc32c", "location": "start"}),
], ids=["crc32", "crc32-start", "crc32-end", "adler32", "adler32-end", "numcodecs-crc32",
        "crc32c", "crc32c-start"])
def test_v2_checksums_are_written_as_numcodecs_writes_them(tmp_path, codec, want) -> None:
    """numcodecs leaves out the default location ("start" for crc32 and adler32); numcodecs
    releases without the parameter refuse the field."""
    path = str(tmp_path / "a.zarr")
    data = np.arange(6, dtype="<i4")
    z = zarrx.create_array(path, shape=(6,), chunks=(4,), dtype="<i4", zarr_format=2,
                           filters=[codec], compressors=codec)
    z[...] = data
    with open(f"{path}/.zarray") as f:
        doc = json.load(f)
    assert doc["filters"] == [want] and doc["compressor"] == want
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data)
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], data)


# -- numcodecs levels numcodecs takes, outside the v3 codecs' ranges ---------------------------
NUMCODECS_LEVELS = {   # id: (numcodecs codec, zarr.codecs.numcodecs class name, its config)
    "gzip-minus-1": (lambda: numcodecs.GZip(level=-1), "GZip", {"level": -1}),
    "zstd-23": (lambda: numcodecs.Zstd(level=23), "Zstd", {"level": 23}),
    "zstd-100-checksum": (lambda: numcodecs.Zstd(level=100, checksum=True), "Zstd",
                          {"level": 100, "checksum": True}),
    "zstd-below-minimum": (lambda: numcodecs.Zstd(level=-200000), "Zstd", {"level": -200000}),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("make,cls,conf", list(NUMCODECS_LEVELS.values()),
                         ids=list(NUMCODECS_LEVELS))
def test_numcodecs_levels_zarr_python_writes_are_read_and_written(tmp_path, make, cls, conf,
                                                                  fmt) -> None:
    """numcodecs hands gzip level -1 (zlib's default, 6) and any zstd level (libzstd takes one
    outside -131072..22 as the nearest end) to its libraries: such arrays open, read, take
    writes and keep their document's level."""
    import warnings
    import zarr.codecs.numcodecs as zn
    path = str(tmp_path / "a.zarr")
    data = np.arange(50, dtype="<i4")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        codec = make() if fmt == 2 else getattr(zn, cls)(**conf)
        zarr.create_array(path, shape=(50,), chunks=(20,), dtype="<i4", zarr_format=fmt,
                          compressors=codec)[...] = data
    key = f"{path}/{'.zarray' if fmt == 2 else 'zarr.json'}"
    with open(key) as f:
        before = f.read()
    z = zarrx.open_array(path, mode="r+")
    np.testing.assert_array_equal(z[...], data)
    z[...] = data[::-1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data[::-1])
    with open(key) as f:
        assert f.read() == before


def test_v3_core_gzip_and_zstd_keep_their_ranges() -> None:
    """The v3 codecs' ranges stand: only the numcodecs forms read as numcodecs does."""
    with pytest.raises(CodecError, match=r"level: expected an integer in \[0, 9\], found -1"):
        zarrx.create_array(MemoryStore(), shape=(4,), compressors={"name": "gzip",
                                                                   "configuration": {"level": -1}})
    with pytest.raises(CodecError, match=r"level: expected an integer in \[-131072, 22\], "
                                         r"found 23"):
        zarrx.create_array(MemoryStore(), shape=(4,), compressors={"name": "zstd",
                                                                   "configuration": {"level": 23}})


# -- blosc typesize of wide items ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["S300", "U80", [("a", "<f8"), ("b", "S300")]],
                         ids=["bytes-300", "utf32-80", "structured-308"])
def test_blosc_typesize_of_items_wider_than_255_bytes(tmp_path, dtype) -> None:
    """zarr-python writes blosc's typesize as the item size (300, 320, 308); blosc compresses
    such items unshuffled. zarrx opens, reads and writes such arrays."""
    from zarr.codecs import BloscCodec
    path = str(tmp_path / "a.zarr")
    data = np.zeros(5, dtype=dtype)
    data.view("u1").reshape(5, -1)[:, ::4] = np.arange(1, 6, dtype="u1")[:, None]
    zarr.create_array(path, shape=(5,), chunks=(2,), dtype=dtype, zarr_format=3,
                      compressors=BloscCodec(cname="lz4", shuffle="shuffle"))[...] = data
    with open(f"{path}/zarr.json") as f:
        assert json.load(f)["codecs"][1]["configuration"]["typesize"] == np.dtype(dtype).itemsize
    z = zarrx.open_array(path, mode="r+")
    np.testing.assert_array_equal(z[...], data)
    z[1:3] = data[3:5]
    data[1:3] = data[3:5]
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data)
    assert zc.Blosc(typesize=300).typesize == 300
    ours = str(tmp_path / "ours.zarr")
    zarrx.create_array(ours, shape=(5,), chunks=(2,), dtype=dtype, zarr_format=3,
                       compressors=zc.Blosc("lz4"))[...] = data
    with open(f"{ours}/zarr.json") as f:         # the item size, as zarr-python writes it
        assert json.load(f)["codecs"][1]["configuration"]["typesize"] == np.dtype(dtype).itemsize
    np.testing.assert_array_equal(zarr.open_array(ours, mode="r")[...], data)
    with pytest.raises(CodecError, match=r"typesize: expected an integer in \[1, 2147483647\], "
                                         r"found 0"):
        zc.Blosc(typesize=0)


# -- errors in a shard's inner codecs name their place in the document --------------------------
_LE = {"name": "bytes", "configuration": {"endian": "little"}}
_FSO_F8 = {"name": "numcodecs.fixedscaleoffset",
           "configuration": {"offset": 0, "scale": 1, "dtype": "<f8"}}


def _sharding(codecs: list, chunk_shape: list) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape, "codecs": codecs, "index_codecs": [_LE, {"name": "crc32c"}],
        "index_location": "end"}}


@pytest.mark.parametrize("codecs,want", [
    ([_sharding([_FSO_F8, _LE], [2, 2])],
     "a codecs[0].configuration.codecs[0].configuration.dtype: the codec receives <i4 data, "
     "found <f8"),
    ([_sharding([{"name": "bytes"}], [2, 2])],
     "a codecs[0].configuration.codecs[0].configuration.endian: required for data type int32 "
     "(expected 'little' or 'big'), found none"),
    ([{"name": "transpose", "configuration": {"order": [1, 0]}},
      _sharding([_FSO_F8, _LE], [2, 2])],
     "a codecs[1].configuration.codecs[0].configuration.dtype: the codec receives <i4 data, "
     "found <f8"),
    ([_sharding([_sharding([_FSO_F8, _LE], [1, 1])], [2, 2])],
     "a codecs[0].configuration.codecs[0].configuration.codecs[0].configuration.dtype: the "
     "codec receives <i4 data, found <f8"),
    ([_FSO_F8, _LE],
     "a codecs[0].configuration.dtype: the codec receives <i4 data, found <f8"),
], ids=["inner", "inner-bytes", "transpose-then-sharding", "nested", "unsharded"])
def test_inner_codec_errors_name_their_place_in_the_document(codecs, want) -> None:
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(4, 4), chunks=(4, 4), dtype="<i4")
    doc = json.loads(store.get("a/zarr.json"))
    doc["codecs"] = codecs
    store.set("a/zarr.json", json.dumps(doc).encode())
    try:
        z = zarrx.open_array(store, path="a", mode="r")
    except MetadataError as exc:             # refused when the document is read
        assert str(exc) == want
        return
    with pytest.raises(ZarrError) as info:
        z[...]
    assert str(info.value) == want


@pytest.mark.parametrize("codecs,place", [
    ([_sharding([_LE, {"name": "nope", "configuration": {}}], [2, 2])],
     "codecs[0].configuration.codecs[1]"),
    ([_sharding([_sharding([{"name": "nope"}, _LE], [1, 1])], [2, 2])],
     "codecs[0].configuration.codecs[0].configuration.codecs[0]"),
], ids=["inner", "nested"])
def test_an_unknown_inner_codec_names_its_place_in_the_document(codecs, place) -> None:
    from zarrx.metadata.codec_table import known_names
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(4, 4), chunks=(4, 4), dtype="<i4")
    doc = json.loads(store.get("a/zarr.json"))
    doc["codecs"] = codecs
    store.set("a/zarr.json", json.dumps(doc).encode())
    z = zarrx.open_array(store, path="a", mode="r")
    with pytest.raises(UnknownCodecError) as info:
        z[...]
    assert str(info.value) == f"a {place}: unknown codec 'nope'; known codecs: " \
                              f"{', '.join(known_names())}"


# -- zarr-python's BloscCodec with its shuffle left to the array --------------------------------
@pytest.mark.parametrize("dtype", ["u1", "bool", "i4", "f8", "S3"])
@pytest.mark.parametrize("make", [lambda c: c(), lambda c: c(cname="lz4", clevel=3),
                                  lambda c: c(shuffle="noshuffle")],
                         ids=["default", "shuffle-open", "shuffle-given"])
def test_zarr_python_blosc_codec_object_written_as_zarr_python_writes_it(tmp_path, dtype,
                                                                         make) -> None:
    """zarr-python picks bit shuffle for 1-byte items when a BloscCodec leaves shuffle open."""
    from zarr.codecs import BloscCodec
    confs = []
    for lib in (zarr, zarrx):
        path = str(tmp_path / f"{lib.__name__}.zarr")
        lib.create_array(path, shape=(4,), chunks=(2,), dtype=dtype, zarr_format=3,
                         compressors=make(BloscCodec))
        with open(f"{path}/zarr.json") as f:
            confs.append(json.load(f)["codecs"][1]["configuration"])
    assert confs[1] == confs[0]


# -- create(codecs=...): a codec out of order is named by its place in the list -----------------
_ORDER = "expected array->array codecs, then one array->bytes codec, then bytes->bytes codecs"


@pytest.mark.parametrize("codecs,cls,builtin,want", [
    ([zc.Zstd(), zc.Bytes()], ArgumentTypeError, TypeError,
     f"create codecs[0]: Zstd is a bytes->bytes codec, before the array->bytes codec "
     f"codecs[1]; {_ORDER}"),
    ([{"name": "gzip", "configuration": {"level": 1}}, {"name": "bytes"}], ArgumentTypeError,
     TypeError, f"create codecs[0]: 'gzip' is a bytes->bytes codec, before the array->bytes "
                f"codec codecs[1]; {_ORDER}"),
    ([zc.Bytes(), zc.Zstd(), zc.Transpose((1, 0))], ArgumentTypeError, TypeError,
     f"create codecs[2]: Transpose is an array->array codec, after the array->bytes codec "
     f"codecs[0]; {_ORDER}"),
    ([zc.Bytes(), zc.Bytes()], ArgumentError, ValueError,
     "create codecs[1]: expected one array->bytes codec only, found a second one, Bytes "
     "(after codecs[0])"),
], ids=["compressor-first", "compressor-first-dicts", "filter-last", "two-serializers"])
def test_create_codecs_out_of_order_named_by_their_place(codecs, cls, builtin, want) -> None:
    """zarr-python's ``create`` raises TypeError for a codec out of order and ValueError for a
    second array->bytes codec; the message names the place in ``codecs=``."""
    store = MemoryStore()
    with pytest.raises(cls) as info:
        zarrx.create(shape=(4, 4), chunks=(2, 2), dtype="i4", codecs=codecs, store=store,
                     zarr_format=3)
    assert isinstance(info.value, builtin) and str(info.value) == want
    assert list(store.list_prefix("")) == []


@pytest.mark.parametrize("dtype,shuffle", [("u1", "bitshuffle"), ("bool", "bitshuffle"),
                                           ("i2", "shuffle"), ("f8", "shuffle")])
def test_blosc_default_shuffle_is_zarr_pythons(dtype, shuffle) -> None:
    """``zarrx.codecs.BloscCodec()`` (``Blosc``) picks the shuffle as zarr-python's does."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(4,), chunks=(2,), dtype=dtype,
                       compressors=zc.BloscCodec())
    conf = json.loads(store.get("a/zarr.json"))["codecs"][1]["configuration"]
    assert conf["shuffle"] == shuffle
    assert zc.Blosc(shuffle="noshuffle").bind(np.dtype(dtype)).shuffle == "noshuffle"
