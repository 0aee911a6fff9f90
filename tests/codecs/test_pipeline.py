"""CodecPipeline: resolution, order checks, elision, direct decode, registry and specs."""
from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

import zarrx.codecs as zc
from zarrx.codecs.base import BytesToBytesCodec
from zarrx.codecs.plan import CodecPipeline
from zarrx.codecs.registry import get_codec_class, register_codec
from zarrx.errors import CodecError, MetadataError
from zarrx.metadata.model import CodecSpec as S
from zarrx.metadata.model import DataType

LE = S("bytes", {"endian": "little"})
BE = S("bytes", {"endian": "big"})
ZSTD = S("zstd", {"level": 0, "checksum": False})

ORDER_ERRORS = {
    "a2a-after-a2b": ([S("bytes"), S("transpose", {"order": [0]})],
                      "grp/arr codecs[1]: expected a bytes->bytes codec after 'bytes', found "
                      'array->array codec {"name": "transpose", "configuration": {"order": [0]}}'),
    "two-a2b": ([S("bytes"), S("vlen-utf8")],
                "grp/arr codecs[1]: expected a bytes->bytes codec after 'bytes', found a second "
                'array->bytes codec {"name": "vlen-utf8"}'),
    "b2b-first": ([ZSTD, S("bytes")],
                  "grp/arr codecs[0]: expected an array->array or array->bytes codec, found "
                  'bytes->bytes codec {"name": "zstd", "configuration": {"level": 0, '
                  '"checksum": false}} before any array->bytes codec'),
    "no-a2b": ([S("transpose", {"order": [0]})],
               "grp/arr codecs: expected exactly one array->bytes codec (e.g. bytes), found none "
               'in [{"name": "transpose", "configuration": {"order": [0]}}]'),
    "sharding": ([S("sharding_indexed", {"chunk_shape": [2]})],
                 "grp/arr codecs[0]: sharding_indexed must be lowered into shard levels before a "
                 "chunk plan is built (use ArrayMeta.chunk_codecs), found "
                 '{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}'),
}


@pytest.mark.parametrize("codecs,msg", list(ORDER_ERRORS.values()), ids=list(ORDER_ERRORS))
def test_order_violations_are_metadata_errors(codecs, msg) -> None:
    with pytest.raises(MetadataError) as exc:
        CodecPipeline.resolve(codecs, "f4", (4,), key="grp/arr")
    assert str(exc.value) == msg


CONFIG_ERRORS = {
    "transpose-rank": ([S("transpose", {"order": [1, 0]}), S("bytes")],
                       "grp/arr codecs[0].configuration.order: expected a permutation of 0..0 "
                       "for a 1-d chunk, found [1, 0]"),
    "endian-bad": ([S("bytes", {"endian": "middle"})],
                   "grp/arr codecs[0].configuration.endian: expected 'little' or 'big', "
                   "found 'middle'"),
    "endian-missing": ([S("bytes")],
                       "grp/arr codecs[0].configuration.endian: required for data type float32 "
                       "(expected 'little' or 'big'), found none"),
    "zstd-level": ([LE, S("zstd", {"level": 99})],
                   "grp/arr codecs[1].configuration.level: expected an integer in [-131072, 22], "
                   "found 99"),
    "gzip-extra-field": ([LE, S("gzip", {"level": 5, "x": 1})],
                         "grp/arr codecs[1].configuration.x: unknown field; expected only "
                         "'level'"),
    "gzip-level": ([LE, S("gzip", {"level": -1})],
                   "grp/arr codecs[1].configuration.level: expected an integer in [0, 9], "
                   "found -1"),
    "blosc-cname": ([LE, S("blosc", {"cname": "foo", "clevel": 5, "shuffle": "shuffle"})],
                    "grp/arr codecs[1].configuration.cname: expected one of the blosc "
                    "compressors (blosclz, lz4, lz4hc, snappy, zlib, zstd), found 'foo'"),
    "blosc-shuffle-name": ([LE, S("blosc", {"cname": "lz4", "clevel": 5, "shuffle": "yes"})],
                           "grp/arr codecs[1].configuration.shuffle: expected 'noshuffle' or "
                           "'shuffle' or 'bitshuffle', found 'yes'"),
    "blosc-shuffle-int": ([LE, S("blosc", {"cname": "lz4", "clevel": 5, "shuffle": 1})],
                          "grp/arr codecs[1].configuration.shuffle: expected 'noshuffle' or "
                          "'shuffle' or 'bitshuffle', found 1"),
    "numcodecs-blosc-shuffle": ([LE, S("numcodecs.blosc", {"shuffle": "shuffle"})],
                                "grp/arr codecs[1].configuration.shuffle: expected one of -1, 0, "
                                "1, 2, found 'shuffle'"),
    "delta-dtype": ([S("numcodecs.delta", {"dtype": "|V3"}), LE],
                    "grp/arr codecs[0].configuration.dtype: delta reads the bytes of a chunk as "
                    "this type; expected a type whose item size divides a chunk's bytes (16 "
                    "bytes of shape (4,) and type float32), found |V3"),
    "packbits-dtype": ([S("numcodecs.packbits"), LE],
                       "grp/arr codecs[0]: packbits needs a bool data type, found float32"),
    "vlen-on-numbers": ([S("vlen-utf8")],
                        "grp/arr codecs[0]: vlen-utf8 encodes variable-length (object) chunks, "
                        "found data type float32"),
}


@pytest.mark.parametrize("codecs,msg", list(CONFIG_ERRORS.values()), ids=list(CONFIG_ERRORS))
def test_bad_configuration(codecs, msg) -> None:
    with pytest.raises(CodecError) as exc:
        CodecPipeline.resolve(codecs, "f4", (4,), key="grp/arr")
    assert str(exc.value) == msg


def test_unknown_codec_names_codec_and_array() -> None:
    with pytest.raises(CodecError, match=r"^unknown codec 'nosuch' in array 'grp/arr'; known "
                                         r"codecs: blosc, bytes, cast_value, crc32c, gzip, "):
        CodecPipeline.resolve([LE, S("nosuch", {})], "f4", (4,), key="grp/arr")
    with pytest.raises(CodecError, match=re.escape(
            "unknown codec 'numcodecs.lz5' in array 'grp/arr'; did you mean 'numcodecs.lz4'? "
            "known codecs: ")):
        CodecPipeline.resolve([LE, S("numcodecs.lz5", {})], "f4", (4,), key="grp/arr")


def test_identity_stages_elided_and_direct() -> None:
    plan = CodecPipeline.resolve([S("transpose", {"order": [0, 1]}), LE, ZSTD, S("crc32c")],
                                 "f8", (8, 8))
    assert [c.name for c in plan.codecs] == ["bytes", "zstd", "crc32c"]
    assert plan.direct and not plan.swap
    assert CodecPipeline.resolve([BE, ZSTD], "f8", (8,)).swap
    assert not CodecPipeline.resolve([S("transpose", {"order": [1, 0]}), LE], "f8", (2, 2)).direct
    assert not CodecPipeline.resolve([LE, S("crc32c"), ZSTD], "f8", (8,)).direct


def test_plan_attributes() -> None:
    plan = CodecPipeline.resolve([LE, S("crc32c")], DataType("int16", np.dtype("i2")), (3, 5),
                                 key="a")
    assert plan.dtype == np.dtype("i2") and plan.chunk_shape == (3, 5) and plan.nbytes == 30
    assert plan.max_encoded_size == 34 and plan.key == "a"
    assert CodecPipeline.resolve([S("vlen-utf8")], "O", (3,)).max_encoded_size is None


def test_shape_and_dtype_thread_through_filters() -> None:
    plan = CodecPipeline.resolve([S("numcodecs.packbits"), S("bytes"), ZSTD], "?", (5, 7))
    assert plan.a2b_shape == (1 + 35 // 8 + 1,) and plan.a2b_dtype == np.uint8
    plan = CodecPipeline.resolve([S("numcodecs.astype", {"encode_dtype": "<i2",
                                                          "decode_dtype": "<f8"}),
                                  LE, S("numcodecs.shuffle", {})], "f8", (4,))
    assert plan.a2b_dtype == np.dtype("i2") and plan.b2b[0].codec.elementsize == 2
    assert plan.max_encoded_size == 8


@pytest.mark.parametrize("chain", [[LE], [BE], [LE, ZSTD], [BE, ZSTD, S("crc32c")],
                                   [LE, S("gzip", {"level": 1})],
                                   [LE, S("blosc", {"cname": "lz4", "clevel": 5,
                                                    "shuffle": "shuffle", "typesize": 8})],
                                   [LE, S("numcodecs.lz4", {})]],
                         ids=["bytes", "bytes-be", "zstd", "zstd-crc-be", "gzip", "blosc", "lz4"])
def test_direct_decode_allocates_no_chunk_sized_scratch(chain) -> None:
    plan = CodecPipeline.resolve(chain, "f8", (512, 512))
    assert plan.direct
    x = np.linspace(0, 1, 512 * 512).reshape(512, 512)
    data = plan.encode(x)
    out = np.empty_like(x)
    tracemalloc.start()
    try:
        plan.decode(data, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < plan.nbytes // 8, peak
    np.testing.assert_array_equal(out, x)


def test_decode_target_checked() -> None:
    plan = CodecPipeline.resolve([LE], "f4", (4,), key="grp/arr")
    with pytest.raises(CodecError) as exc:
        plan.decode(bytes(16), np.empty(5, "f4"), key="grp/arr/c/0")
    assert str(exc.value) == ("chunk 'grp/arr/c/0': decode target must be a float32 array of "
                              "shape (4,), found float32 (5,)")
    assert exc.value.key == "grp/arr/c/0"
    with pytest.raises(CodecError, match="writable C-contiguous"):
        plan.decode(bytes(16), np.empty(8, "f4")[::2])


def test_encode_checks_shape_and_size_limit() -> None:
    plan = CodecPipeline.resolve([LE], "f4", (4,), key="a")
    with pytest.raises(CodecError,
                       match=r"^chunk 'a/c/0': expected a chunk of shape \(4,\), found "
                             r"\(5,\)$"):
        plan.encode(np.zeros(5, "f4"), key="a/c/0")
    big = CodecPipeline.resolve([LE, S("blosc", {"cname": "lz4", "clevel": 5,
                                                 "shuffle": "shuffle", "typesize": 1})],
                                "u1", (2**31,), key="big")
    with pytest.raises(CodecError) as exc:     # refused before touching the (virtual) chunk
        big.encode(np.broadcast_to(np.uint8(0), (2**31,)), key="big/c/0")
    assert str(exc.value) == ("chunk 'big/c/0': blosc: a chunk of 2147483648 bytes exceeds the "
                              "codec's limit of 2147483631 bytes; use smaller chunks or another "
                              "compressor")


def test_codec_objects_and_specs() -> None:
    codecs = [zc.Transpose(order=(1, 0)), zc.Bytes(endian="big"),
              zc.Blosc(cname="zstd", clevel=3, shuffle="bitshuffle"), zc.Crc32c()]
    plan = CodecPipeline.resolve(codecs, "u2", (3, 4))
    x = np.arange(12, dtype="u2").reshape(3, 4)
    np.testing.assert_array_equal(plan.decode_new(plan.encode(x)), x)
    specs = [c.to_spec() for c in plan.codecs]
    assert specs[2] == S("blosc", {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                   "typesize": 2, "blocksize": 0})
    again = CodecPipeline.resolve(specs, "u2", (3, 4))
    assert again.decode_new(plan.encode(x)).tolist() == x.tolist()


@pytest.mark.parametrize("obj,spec", [
    (zc.Zstd(level=3, checksum=True), S("zstd", {"level": 3, "checksum": True})),
    (zc.Gzip(level=5), S("gzip", {"level": 5})),
    (zc.Crc32c(), S("crc32c", {})),
    (zc.Bytes(), S("bytes", {"endian": "little"})),
    (zc.VLenUTF8(), S("vlen-utf8", {})),
    (zc.Zlib(level=2), S("numcodecs.zlib", {"level": 2})),
    (zc.LZ4(), S("numcodecs.lz4", {"acceleration": 1})),
    (zc.Delta(dtype="<i4"), S("numcodecs.delta", {"dtype": "<i4"})),
    (zc.PackBits(), S("numcodecs.packbits", {})),
], ids=lambda v: v.name if isinstance(v, S) else None)
def test_to_spec(obj, spec) -> None:
    assert obj.to_spec() == spec
    cls = get_codec_class(spec.name)
    assert cls.from_spec(spec, "i4", (4,)) == obj


def test_to_spec_keeps_the_name_read() -> None:
    spec = S("numcodecs.blosc", {"cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0})
    codec = get_codec_class("numcodecs.blosc").from_spec(spec, "f8", (4,))
    assert codec.to_spec() == spec
    spec = S("numcodecs.gzip", {"level": 3})
    assert get_codec_class("numcodecs.gzip").from_spec(spec).to_spec() == spec
    assert zc.Gzip(level=3).to_spec() == S("gzip", {"level": 3})
    assert zc.Crc32c(location="start").to_spec() == S("numcodecs.crc32c", {"location": "start"})


@pytest.mark.parametrize("make,msg", [
    (lambda: zc.Zstd(level=23),
     "zarrx.codecs.Zstd level: expected an integer in [-131072, 22], found 23"),
    (lambda: zc.Gzip(level=10), "zarrx.codecs.Gzip level: expected an integer in [0, 9], found 10"),
    (lambda: zc.Blosc(cname="lzo"),
     "zarrx.codecs.Blosc cname: expected one of the blosc compressors (blosclz, lz4, lz4hc, "
     "snappy, zlib, zstd), found 'lzo'"),
    (lambda: zc.Blosc(shuffle="byte"),
     "zarrx.codecs.Blosc shuffle: expected 'noshuffle' or 'shuffle' or 'bitshuffle', "
     "found 'byte'"),
    (lambda: zc.Bytes(endian="middle"),
     "zarrx.codecs.Bytes endian: expected 'little' or 'big', found 'middle'"),
    (lambda: zc.Delta(dtype="nonsense"),
     "zarrx.codecs.Delta dtype: expected a numpy dtype string such as '<f8', found 'nonsense'"),
], ids=["zstd", "gzip", "blosc-cname", "blosc-shuffle", "bytes", "delta"])
def test_codec_objects_checked_by_the_same_validator(make, msg) -> None:
    with pytest.raises(CodecError) as exc:
        make()
    assert str(exc.value) == msg


def test_register_codec() -> None:
    class Negate(BytesToBytesCodec):
        name = "test.negate"

        def encoded_size(self, n):
            return n

        def encode(self, data):
            return bytes(255 - b for b in bytes(data))

        def decode(self, data, expected, limit):
            return bytes(255 - b for b in bytes(data))

    register_codec("test.negate", Negate)
    plan = CodecPipeline.resolve([S("bytes"), S("test.negate")], "u1", (4,))
    assert plan.encode(np.arange(4, dtype="u1")) == bytes([255, 254, 253, 252])
    with pytest.raises(CodecError, match="expected a subclass"):
        register_codec("x", int)


def test_registered_numcodecs_codec_serves_v2_ids() -> None:
    """``numcodecs.<id>`` registered by the user is what a v2 ``{"id": <id>}`` lowers to."""
    from zarrx.metadata import parse_array_v2

    class Invert(BytesToBytesCodec):
        name = "numcodecs.test-invert"

        def encoded_size(self, n):
            return n

        def encode(self, data):
            return bytes(255 - b for b in bytes(data))

        def decode(self, data, expected, limit):
            return bytes(255 - b for b in bytes(data))

    register_codec("numcodecs.test-invert", Invert)
    zarray = {"zarr_format": 2, "shape": [3], "chunks": [3], "dtype": "|u1", "fill_value": 0,
              "order": "C", "filters": None, "compressor": {"id": "test-invert"}}
    meta = parse_array_v2(zarray, None, ".zarray")
    assert meta.codecs[-1] == S("numcodecs.test-invert", {})
    plan = CodecPipeline.resolve(meta.codecs, meta.data_type, (3,))
    assert plan.encode(np.array([0, 1, 2], "u1")) == bytes([255, 254, 253])


def test_blosc_cnames_are_the_kernels() -> None:
    """The validator's blosc compressors are exactly those the c-blosc kernel knows."""
    from zarrx.codecs import _blosc
    from zarrx.metadata.codec_checks import BLOSC_CNAMES
    assert sorted(BLOSC_CNAMES) == sorted(_blosc.CNAMES)


def test_v2_bytes_filter_runs_after_serialisation() -> None:
    """A v2 filter that works on bytes (shuffle) is lowered after ``bytes``: it sees the chunk
    in its stored byte order, as numcodecs did."""
    import numcodecs

    from zarrx.metadata import parse_array_v2
    zarray = {"zarr_format": 2, "shape": [6], "chunks": [6], "dtype": ">i4", "fill_value": 0,
              "order": "C", "filters": [{"id": "shuffle", "elementsize": 4}],
              "compressor": {"id": "zlib", "level": 1}}
    meta = parse_array_v2(zarray, None, ".zarray")
    assert [c.name for c in meta.codecs] == ["bytes", "numcodecs.shuffle", "numcodecs.zlib"]
    x = np.arange(6, dtype=">i4")
    plan = CodecPipeline.resolve(meta.codecs, meta.data_type, (6,))
    shuffled = numcodecs.Zlib(1).decode(plan.encode(x.astype("i4")))
    assert bytes(shuffled) == bytes(numcodecs.Shuffle(4).encode(x))


def test_import_is_lazy() -> None:
    """Codec implementations and their compiled kernels load on first use, not at import."""
    import subprocess
    import sys
    code = ("import sys, zarrx, zarrx.codecs, zarrx.codecs.plan; "
            "print(sorted(m for m in sys.modules if m.startswith('zarrx.codecs.') and m not in "
            "('zarrx.codecs.plan', 'zarrx.codecs.chain', 'zarrx.codecs.base', "
            "'zarrx.codecs.registry')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_filters_built_without_dtype_take_the_chunks() -> None:
    """Codec objects may leave chunk-dependent fields unset; their spec omits them."""
    delta = zc.Delta()
    assert delta.to_spec() == S("numcodecs.delta", {})
    plan = CodecPipeline.resolve([delta.to_spec(), LE], "i2", (5,))
    x = np.array([3, 1, 4, 1, 5], dtype="i2")
    assert plan.decode_new(plan.encode(x)).tolist() == x.tolist()
    assert zc.AsType("<f4").to_spec() == S("numcodecs.astype", {"encode_dtype": "<f4"})


@pytest.mark.parametrize("config", [
    {"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    {"cname": "zstd", "clevel": 1, "shuffle": 2, "blocksize": 0, "typesize": 4},
    {"cname": "lz4", "clevel": 5, "shuffle": -1},
], ids=["byte", "bit-typesize", "auto"])
def test_numcodecs_blosc_in_v3(config) -> None:
    plan = CodecPipeline.resolve([LE, S("numcodecs.blosc", config)], "f4", (100,))
    x = np.linspace(0, 1, 100, dtype="f4")
    np.testing.assert_array_equal(plan.decode_new(plan.encode(x)), x)
    assert plan.codecs[1].to_spec().configuration["shuffle"] == config["shuffle"]


@pytest.mark.parametrize("codecs,where,want", [
    ([S("transpose", {"order": [1, 0]}), LE], None,
     "grp/arr codecs[0].configuration.order: expected a permutation of 0..0 for a 1-d chunk, "
     "found [1, 0]"),
    ([S("transpose", {"order": [1, 0]}), LE], ["a/.zarray filters[0]", "a/.zarray dtype"],
     "a/.zarray filters[0].order: expected a permutation of 0..0 for a 1-d chunk, found [1, 0]"),
    ([S("bytes")], None,
     "grp/arr codecs[0].configuration.endian: required for data type int32 (expected 'little' "
     "or 'big'), found none"),
    ([S("bytes")], ["a/.zarray dtype"],
     "a/.zarray dtype.endian: required for data type int32 (expected 'little' or 'big'), "
     "found none"),
], ids=["transpose-v3", "transpose-v2", "bytes-v3", "bytes-v2"])
def test_configuration_fields_named_as_the_document_has_them(codecs, where, want) -> None:
    """``where`` names places in a v2 .zarray, whose codec objects hold their fields directly;
    without it, fields are in the v3 codec's ``configuration``."""
    with pytest.raises(CodecError) as exc:
        CodecPipeline.resolve(codecs, "<i4", (4,), key="grp/arr", where=where)
    assert str(exc.value) == want


def test_registered_codec_fields_named_as_the_document_has_them(monkeypatch) -> None:
    from zarrx.metadata import codec_table

    class Plain(BytesToBytesCodec):
        name = "numcodecs.test-plain"

    monkeypatch.setattr(codec_table, "_USER", dict(codec_table._USER))   # forgotten after
    register_codec("numcodecs.test-plain", Plain)
    codecs = [LE, S("numcodecs.test-plain", {"x": 1})]
    with pytest.raises(CodecError) as exc:
        CodecPipeline.resolve(codecs, "<i4", (4,), key="grp/arr")
    assert str(exc.value) == "grp/arr codecs[1].configuration.x: unknown field; expected only " \
                             "no fields"
    with pytest.raises(CodecError) as exc:
        CodecPipeline.resolve(codecs, "<i4", (4,), where=["a/.zarray dtype",
                                                          "a/.zarray compressor"])
    assert str(exc.value) == "a/.zarray compressor.x: unknown field; expected only no fields"
