"""numcodecs ``json2`` / ``msgpack2`` chunks are one document each: its values are counted
before it is parsed, and a document holding far more values than its chunk has items (a small
stored chunk that would expand into millions of Python objects) is refused unparsed."""
from __future__ import annotations

import json
import re
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.codecs import _documents, objects
from zarrx.codecs.objects import JSON, MsgPack

msgpack = pytest.importorskip("msgpack")
numcodecs = pytest.importorskip("numcodecs")

MANY = objects.EXTRA_VALUES + 1000


def _refused(codec, doc: bytes, shape: tuple[int, ...], found: int) -> int:
    """Decode ``doc`` expecting the refusal; the peak traced memory it took."""
    own = int(np.prod(shape)) + 1 + 2 + len(shape)
    limit = own + objects.EXTRA_VALUES
    tracemalloc.start()
    try:
        with pytest.raises(zarrx.CodecError, match=re.escape(
                f"{codec.name}: the chunk's document holds {found} values, more than the "
                f"{limit} a chunk of shape {shape} may hold")):
            codec.decode(doc, np.dtype(object), shape)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_msgpack_chunk_of_millions_of_values_is_refused_unparsed():
    doc = b"\xdd" + MANY.to_bytes(4, "big") + b"\xc0" * MANY      # [None] * MANY
    peak = _refused(MsgPack(), doc, (4,), MANY + 1)
    assert peak < 3 * len(doc), peak   # before: parsed, a list of MANY pointers (8 per byte)


def test_a_json_chunk_of_millions_of_values_is_refused_unparsed():
    doc = ("[" + "[]," * MANY + '"|O", [4]]').encode()
    peak = _refused(JSON(), doc, (4,), 1 + 2 * MANY + 2 + 1)
    assert peak < 3 * len(doc), peak   # before: MANY empty lists parsed (56 bytes each)


@pytest.mark.parametrize("encoding", ["utf-16", "latin-1"])
def test_json_values_are_counted_in_any_encoding(encoding):
    codec = JSON(encoding=encoding)
    text = "[" + "0," * MANY + '"|O", [4]]'
    _refused(codec, text.encode(encoding), (4,), 1 + MANY + 2 + 1)


def test_values_inside_items_count_up_to_the_extra(monkeypatch):
    monkeypatch.setattr(objects, "EXTRA_VALUES", 100)
    a = np.empty((2, 3), dtype=object)
    a[...] = [[list(range(40)), {"k": "v,[{:"}, None], ["x", 1.5, list(range(40))]]
    for nc, codec in [(numcodecs.JSON(), JSON()), (numcodecs.MsgPack(), MsgPack())]:
        doc = nc.encode(a)
        assert codec.decode(doc, np.dtype(object), (2, 3)).tolist() == a.tolist()
    a[0, 2] = list(range(30))              # 30 more values: past the extra 100
    for nc, codec in [(numcodecs.JSON(), JSON()), (numcodecs.MsgPack(), MsgPack())]:
        with pytest.raises(zarrx.CodecError, match="refused before parsing it"):
            codec.decode(nc.encode(a), np.dtype(object), (2, 3))


@pytest.mark.parametrize("value", [[1, 2, 3], {"a": [1, {"b": 'x,[{:"'}]}, 's"q\\', [],
                                   [[]], [None, True, 1.5, -3, 2**40, "é" * 40]],
                         ids=repr)
def test_counts_bound_what_parsing_makes(value):
    def count(v):
        if isinstance(v, list):
            return 1 + sum(count(x) for x in v)
        if isinstance(v, dict):
            return 1 + sum(1 + count(x) for x in v.values())
        return 1
    assert _documents.json_values(json.dumps(value).encode()) >= count(value)
    assert _documents.msgpack_values(msgpack.packb(value, use_bin_type=True)) == count(value)
    assert _documents.msgpack_values(msgpack.packb(value, use_bin_type=True)[:-1]) \
        <= count(value)                    # truncated: counted as far as it goes


@settings(max_examples=300, deadline=None)
@given(blob=st.binary(max_size=256))
def test_counting_any_bytes_is_safe(blob):
    assert 1 <= _documents.json_values(blob) <= len(blob) + 1
    assert 0 <= _documents.msgpack_values(blob) <= len(blob)
    for codec in (JSON(), MsgPack()):
        try:
            codec.decode(blob, np.dtype(object), (2,))
        except zarrx.ZarrError:
            pass


def test_a_document_that_is_not_text_says_so_not_that_it_is_short():
    with pytest.raises(zarrx.CodecError, match=re.escape(
            "numcodecs.json2: the chunk is not utf-16 text: unexpected end of data at byte 0")):
        JSON(encoding="utf-16").decode(b"\x00\xd8", np.dtype(object), (2,))
