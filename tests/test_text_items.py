"""Fixed-length text (``U<n>``) read from stored bytes: a UTF-32 code unit past U+10FFFF is a
CodecError naming the stored object, where numpy would raise ``SystemError`` at the first item
made a ``str``."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore

BAD = 0x110000
MESSAGE = ("expected text of Unicode code points (at most 0x10FFFF) in items of {dtype}, "
           "found code unit 0x110000")


def units(*codes: int, order: str = "<") -> bytes:
    return np.array(codes, dtype=f"{order}u4").tobytes()


def text_array(store, fmt: int, dtype: object = "U2", **kw) -> zarrx.Array:
    return zarrx.create_array(store, shape=(4,), chunks=(2,), dtype=dtype, fill_value="",
                              zarr_format=fmt, compressors=None, **kw)


def stored(fmt: int, i: int) -> str:
    return f"c/{i}" if fmt == 3 else str(i)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("read", [
    lambda z: z[...], lambda z: z[3], lambda z: z[2:], lambda z: z.vindex[[0, 3]],
    lambda z: z.oindex[[3]], lambda z: z.get_mask_selection(np.array([0, 0, 0, 1], bool)),
    lambda z: z.read(out=np.empty(4, "U2")), lambda z: list(z), lambda z: np.asarray(z),
], ids=["all", "point", "slice", "vindex", "oindex", "mask", "out", "iter", "asarray"])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_code_unit_past_the_last_code_point_is_a_codec_error_naming_the_chunk(
        fmt, read, kind, tmp_path):
    store = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "t.zarr"))
    z = text_array(store, fmt)
    z[...] = ["ab", "cd", "ef", "gh"]
    store.set(stored(fmt, 1), units(ord("e"), ord("f"), ord("g"), BAD))
    z = zarrx.open_array(store, mode="r")
    with pytest.raises(zarrx.CodecError) as info:
        read(z)
    assert str(info.value) == (f"array '/' chunk {stored(fmt, 1)!r}: "
                               + MESSAGE.format(dtype="<U2"))
    assert z[:2].tolist() == ["ab", "cd"]                 # the other chunk reads


def test_a_code_unit_past_the_last_code_point_in_a_field_or_a_shard(tmp_path):
    dt = np.dtype([("n", "<i4"), ("s", "<U1", (2,))])
    z = zarrx.create_array(MemoryStore(), shape=(2,), chunks=(2,), dtype=dt, zarr_format=2,
                           compressors=None)
    z.store.set("0", np.zeros(2, "<i4,<u4,<u4").tobytes()[:-4] + units(BAD))
    with pytest.raises(zarrx.CodecError, match=r"^array '/' chunk '0': expected text .* "
                                               r"found code unit 0x110000$"):
        z[...]
    for read in (lambda: z["s"], lambda: z.vindex[[1], "s"], lambda: z.get_mask_selection(
            np.array([0, 1], bool), fields="s")):
        with pytest.raises(zarrx.CodecError, match=r"^array '/' chunk '0': .* items of <U1, "):
            read()
    assert z["n"].tolist() == [0, 0]

    s = zarrx.create_array(MemoryStore(), shape=(4,), chunks=(1,), shards=(4,), dtype="U1",
                           fill_value="", compressors=None)
    s[...] = ["a", "b", "c", "d"]
    shard = bytearray(s.store.get("c/0"))
    shard[8:12] = units(BAD)                              # inner chunk 2 (stored in order)
    s.store.set("c/0", bytes(shard))
    with pytest.raises(zarrx.CodecError) as info:
        s[...]
    assert str(info.value) == ("array '/' shard 'c/0' inner chunk 'c/2': "
                               + MESSAGE.format(dtype="<U1"))


def test_text_of_every_code_point_and_byte_order_still_reads(tmp_path):
    values = ["\U0010ffff\ud800", "", "a\x00"[:1], "\u00e9"]
    for fmt, dtype in [(3, "<U2"), (2, "<U2"), (2, ">U2")]:
        z = text_array(MemoryStore(), fmt, dtype)
        z[...] = values
        assert z[...].tolist() == values and z[0] == values[0]
