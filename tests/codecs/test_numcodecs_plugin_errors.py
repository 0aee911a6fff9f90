"""What goes wrong with numcodecs codecs zarrx runs through numcodecs is a ZarrError that names
the codec and the stored key: a codec that raises, or hands back the wrong number, type or
shape of items; a configuration numcodecs refuses; a codec whose package is missing. Ids
numcodecs does not know, and ``pickle``, are refused as before."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError, MetadataError, UnknownCodecError
from zarrx.metadata import codec_table, numcodecs_ids
from zarrx.store import MemoryStore

numcodecs = pytest.importorskip("numcodecs")
from numcodecs.abc import Codec as NumcodecsCodec  # noqa: E402
from numcodecs.registry import codec_registry  # noqa: E402


class Hostile(NumcodecsCodec):
    """Encodes as numcodecs' identity would; decodes as ``how`` says."""

    codec_id = "zx_hostile"

    def __init__(self, how: str = "raise", strict: bool = False):
        if strict and how not in ("raise", "short", "objects", "int32", "shape", "none"):
            raise ValueError(f"no such way: {how}")
        self.how = how
        self.strict = strict

    def encode(self, buf):
        if self.how == "raise-encode":
            raise RuntimeError("cannot encode")
        return np.ascontiguousarray(buf).tobytes()

    def decode(self, buf, out=None):
        how = self.how
        if how == "raise":
            raise RuntimeError("boom")
        if how == "short":
            return b"\0" * 3
        if how == "objects":
            return np.array([object()] * 4, dtype=object)
        if how == "int32":                  # the bytes of 8 float64 as 16 int32
            return np.zeros(16, dtype="i4")
        if how == "shape":
            return np.zeros((2, 4), dtype="f8")
        if how == "none":
            return None
        return np.frombuffer(buf, dtype="f8")


@pytest.fixture
def hostile(monkeypatch):
    """``zx_hostile`` registered with numcodecs, a bytes->bytes codec to zarrx, and
    ``zx_hostile_a2b``, the same codec of the array->bytes kind."""
    monkeypatch.setitem(codec_registry, "zx_hostile", Hostile)
    monkeypatch.setitem(codec_registry, "zx_hostile_a2b", Hostile)
    monkeypatch.setitem(numcodecs_ids.KINDS, "zx_hostile_a2b", "array->bytes")
    monkeypatch.setattr(codec_table, "_PLUGINS", {})


def _v2(compressor, filters=None, chunk: bytes | None = b"x" * 32) -> MemoryStore:
    store = MemoryStore()
    store.set("a/.zarray", json.dumps({
        "zarr_format": 2, "shape": [8], "chunks": [4], "dtype": "<f8", "order": "C",
        "compressor": compressor, "filters": filters, "fill_value": 0}).encode())
    if chunk is not None:
        store.set("a/0", chunk)
    return store


def _v3(codecs, chunk: bytes | None = b"x" * 32) -> MemoryStore:
    store = MemoryStore()
    store.set("a/zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "float64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": codecs}).encode())
    if chunk is not None:
        store.set("a/c/0", chunk)
    return store


def _known_ids() -> str:
    return ", ".join(sorted({i.numcodecs_id for i in codec_table._BUILTIN.values()
                             if i.numcodecs_id}))


@pytest.mark.parametrize("cid", ["pickle", "zx_nosuch_codec"])
def test_unknown_ids_and_pickle_refused_as_before(cid):
    with pytest.raises(UnknownCodecError) as err:
        zarrx.open_array(_v2({"id": cid}), path="a", mode="r")[:]
    assert str(err.value) == (f"a/.zarray compressor.id: unknown numcodecs codec id {cid!r}; "
                              f"known numcodecs codec ids: {_known_ids()}")
    with pytest.raises(UnknownCodecError, match=re.escape(
            f"unknown codec 'numcodecs.{cid}' in array 'a'; known codecs: ")):
        zarrx.open_array(_v3([{"name": "bytes", "configuration": {"endian": "little"}},
                              {"name": f"numcodecs.{cid}"}]), path="a", mode="r")[:]
    with pytest.raises(UnknownCodecError, match=re.escape(f"unknown numcodecs codec id {cid!r}")):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="f8", zarr_format=2,
                           compressors={"id": cid})


def test_pickle_refused_even_when_object_codec(monkeypatch):
    """``pickle`` is refused as an object codec (its decode runs code) though numcodecs
    registers it."""
    assert "pickle" in codec_registry
    store = MemoryStore()
    store.set("a/.zarray", json.dumps({
        "zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "order": "C",
        "compressor": None, "filters": [{"id": "pickle"}], "fill_value": None}).encode())
    store.set("a/0", b"\x80\x04N.")       # a pickle of None
    with pytest.raises(UnknownCodecError, match="unknown numcodecs codec id 'pickle'"):
        zarrx.open_array(store, path="a", mode="r")[:]


@pytest.mark.parametrize("package", ["pcodec", "zfpy"])
def test_missing_package_is_named(monkeypatch, package):
    monkeypatch.delitem(codec_registry, package, raising=False)
    monkeypatch.delitem(__import__("numcodecs.registry").registry.entries, package,
                        raising=False)
    monkeypatch.setattr(codec_table, "_PLUGINS", {})
    want = (f"numcodecs codec {package!r} in array 'a' needs the package {package!r}, which "
            f"is not installed (numcodecs registers the codec only when {package} imports): "
            f"pip install {package}")
    with pytest.raises(UnknownCodecError) as err:
        zarrx.open_array(_v2({"id": package}), path="a", mode="r")[:]
    assert str(err.value) == "a/.zarray compressor.id: " + want.replace(" in array 'a'", "")
    with pytest.raises(UnknownCodecError) as err:
        zarrx.open_array(_v3([{"name": f"numcodecs.{package}"}]), path="a", mode="r")[:]
    assert str(err.value) == want
    with pytest.raises(UnknownCodecError, match=re.escape(f"pip install {package}")):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="f8", zarr_format=2,
                           compressors={"id": package})


@pytest.mark.parametrize("how,message", [
    ("raise", "numcodecs decode failed: RuntimeError: boom"),
    ("short", "numcodecs decode returned 3 bytes, expected 32"),
    ("objects", "numcodecs decode returned an array of Python objects; expected numbers "
                "or bytes"),
    ("none", "numcodecs decode returned NoneType; expected an array or a buffer"),
])
def test_hostile_bytes_codec(hostile, how, message):
    for store, key in ((_v2({"id": "zx_hostile", "how": how}), "a/0"),
                       (_v3([{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "numcodecs.zx_hostile",
                              "configuration": {"how": how}}]), "a/c/0")):
        with pytest.raises(CodecError) as err:
            zarrx.open_array(store, path="a", mode="r")[:]
        assert str(err.value) == f"array 'a' chunk {key!r}: numcodecs.zx_hostile: {message}"
        assert err.value.key == key


@pytest.mark.parametrize("how,message", [
    ("raise", "numcodecs decode failed: RuntimeError: boom"),
    ("short", "numcodecs decode returned 3 items of uint8 (shape (3,)); expected 4 items "
              "of float64 (a chunk of shape (4,))"),
    ("int32", "numcodecs decode returned 16 items of int32 (shape (16,)); expected 4 items "
              "of float64 (a chunk of shape (4,))"),
    ("shape", "numcodecs decode returned 8 items of float64 (shape (2, 4)); expected 4 "
              "items of float64 (a chunk of shape (4,))"),
    ("objects", "numcodecs decode returned an array of Python objects; expected numbers "
                "or bytes"),
])
def test_hostile_array_codec(hostile, how, message):
    for store, key in ((_v2({"id": "zx_hostile_a2b", "how": how}), "a/0"),
                       (_v3([{"name": "numcodecs.zx_hostile_a2b",
                              "configuration": {"how": how}}]), "a/c/0")):
        with pytest.raises(CodecError) as err:
            zarrx.open_array(store, path="a", mode="r")[:]
        assert str(err.value) == f"array 'a' chunk {key!r}: numcodecs.zx_hostile_a2b: {message}"


def test_array_codec_chunk_of_another_shape(hostile, monkeypatch):
    """A 2-d chunk decoded as another 2-d shape of the same size is refused."""
    monkeypatch.setattr(Hostile, "decode", lambda self, buf, out=None: np.zeros((2, 8)))
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(4, 4), chunks=(4, 4), dtype="f8",
                           serializer={"name": "numcodecs.zx_hostile_a2b"}, compressors=None)
    z[:] = 1.0
    with pytest.raises(CodecError, match=re.escape(
            "numcodecs decode returned an array of shape (2, 8); expected the chunk's shape "
            "(4, 4)")):
        z[:]


def test_hostile_codec_on_write(hostile):
    z = zarrx.create_array(MemoryStore(), shape=(8,), chunks=(4,), dtype="f8",
                           compressors={"id": "zx_hostile", "how": "raise-encode"})
    with pytest.raises(CodecError) as err:
        z[:] = 1.0
    assert "numcodecs.zx_hostile: numcodecs encode failed: RuntimeError: cannot encode" \
        in str(err.value)
    assert err.value.key == "c/0"


def test_well_behaved_plugin_round_trips(hostile):
    for fmt in (2, 3):
        store = MemoryStore()
        z = zarrx.create_array(store, shape=(10,), chunks=(4,), dtype="f8", zarr_format=fmt,
                               compressors={"id": "zx_hostile", "how": "ok"})
        z[:] = np.arange(10.0)
        np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[:], np.arange(10.0))


def test_configuration_refused_names_the_field(hostile):
    with pytest.raises(MetadataError) as err:
        zarrx.open_array(_v2({"id": "zx_hostile", "how": "bad", "strict": True}), path="a",
                         mode="r")[:]
    assert str(err.value) == ("a/.zarray compressor: numcodecs codec 'zx_hostile' refuses "
                              "the configuration {'how': 'bad', 'strict': True}: ValueError: "
                              "no such way: bad")
    with pytest.raises(MetadataError, match=re.escape(
            "codecs[1].configuration: numcodecs codec 'zx_hostile' refuses the configuration "
            "{'what': 1}: TypeError: ")):
        zarrx.open_array(_v3([{"name": "bytes", "configuration": {"endian": "little"}},
                              {"name": "numcodecs.zx_hostile",
                               "configuration": {"what": 1}}]), path="a", mode="r")[:]



@pytest.mark.parametrize("filters,compressor,message", [
    ([{"id": "shuffle", "elementsize": 4}], {"id": "pcodec"},
     "a/.zarray compressor: compressor 'pcodec' encodes arrays, but filters[0] 'shuffle' "
     "hands it bytes; expected only filters that work on arrays before it"),
    ([{"id": "pcodec"}, {"id": "delta", "dtype": "<f8"}], None,
     "a/.zarray filters[0]: filters[0] 'pcodec' encodes arrays into bytes, but filters[1] "
     "'delta' after it works on arrays; expected only filters that work on bytes after it"),
])
def test_v2_array_codec_out_of_place(filters, compressor, message):
    pytest.importorskip("pcodec")
    with pytest.raises(MetadataError) as err:
        zarrx.open_array(_v2(compressor, filters), path="a", mode="r")
    assert str(err.value) == message


def test_v2_array_codec_out_of_place_at_creation():
    pytest.importorskip("pcodec")
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            "create_array: compressors[0] 'numcodecs.pcodec' encodes arrays, but filters[0] "
            "'numcodecs.shuffle' hands it bytes")):
        zarrx.create_array(MemoryStore(), shape=(8,), dtype="f8", zarr_format=2,
                           filters=[numcodecs.Shuffle()], compressors=numcodecs.PCodec())
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            "create_array filters[1]: 'numcodecs.delta' cannot come after filters[0] "
            "'numcodecs.pcodec', which encodes arrays into bytes")):
        zarrx.create_array(MemoryStore(), shape=(8,), dtype="f8", zarr_format=2,
                           filters=[numcodecs.PCodec(), numcodecs.Delta("<f8")])


def test_entry_point_plugin_is_loaded_and_run(monkeypatch):
    """An id only numcodecs' entry points name (a plugin package not imported yet) is loaded
    through numcodecs' registry, as imagecodecs' ``imagecodecs_*`` ids are."""
    from importlib.metadata import EntryPoint

    from numcodecs import registry
    monkeypatch.setitem(registry.entries, "zx_entry_zlib",
                        EntryPoint("zx_entry_zlib", "numcodecs.zlib:Zlib", "numcodecs.codecs"))
    monkeypatch.setattr(codec_table, "_PLUGINS", {})
    # not registered yet (None: what numcodecs' lookup finds for it), removed afterwards
    monkeypatch.setitem(codec_registry, "zx_entry_zlib", None)
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(10,), chunks=(4,), dtype="i4", zarr_format=2,
                           compressors={"id": "zx_entry_zlib", "level": 3})
    z[:] = np.arange(10)
    codec_registry["zx_entry_zlib"] = None          # loaded anew when read
    import zlib
    assert zlib.decompress(store.get("1")) == np.arange(4, 8, dtype="i4").tobytes()
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[:], np.arange(10))
    assert json.loads(store.get(".zarray"))["compressor"] == {"id": "zx_entry_zlib", "level": 3}


def test_v2_unknown_filter_beside_pcodec_opens_and_names_it_on_read():
    pytest.importorskip("pcodec")
    z = zarrx.open_array(_v2({"id": "pcodec"}, [{"id": "zx_no_such_codec"}]), path="a",
                         mode="r")
    assert z.shape == (8,)
    with pytest.raises(UnknownCodecError, match=re.escape(
            "a/.zarray filters[0].id: unknown numcodecs codec id 'zx_no_such_codec'")):
        z[:]


@pytest.mark.parametrize("given", [numcodecs.VLenUTF8(), {"id": "vlen-utf8"}])
def test_v2_object_codec_given_as_a_filter_is_still_the_serializer(given):
    # vlen-utf8 encodes the chunk's array as pcodec does, but Zarr v2 writes it as a filter
    d = {}
    z = zarrx.create_array(d, shape=(3,), chunks=(2,), dtype=str, zarr_format=2,
                           filters=[given], compressors=None)
    z[:] = ["a", "bc", ""]
    assert z[:].tolist() == ["a", "bc", ""]
    assert json.loads(d[".zarray"])["filters"] == [{"id": "vlen-utf8"}]
