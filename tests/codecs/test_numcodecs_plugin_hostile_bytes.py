"""Stored metadata and chunk bytes aimed at the codecs zarrx runs through numcodecs: a
configuration whose ``id`` names another codec (``pickle``) is refused before numcodecs makes
anything, and zfp streams whose header does not describe the chunk, or that end early, are
refused or read without the zfp library reading past them (it would crash the process)."""
from __future__ import annotations

import json
import re
import pickle

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError, MetadataError
from zarrx.store import MemoryStore

numcodecs = pytest.importorskip("numcodecs")


class _Marks:
    """Unpickled, it records that pickle ran code the stored bytes chose."""

    def __reduce__(self):
        return (exec, ("import zarrx; zarrx._unpickled_by_chunk = True",))


def _v3(codecs, chunk: bytes, dtype: str = "float64") -> MemoryStore:
    store = MemoryStore()
    store.set("a/zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [8], "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": codecs}).encode())
    store.set("a/c/0", chunk)
    return store


_BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize("name, at", [("numcodecs.base64", 1), ("numcodecs.zfpy", 0),
                                      ("numcodecs.pcodec", 0)])
def test_configuration_id_naming_another_codec_refused(monkeypatch, name, at):
    if name != "numcodecs.base64":
        pytest.importorskip(name[10:])
    pickles = pytest.importorskip("numcodecs.pickles")
    monkeypatch.setattr(pickles, "ALLOW_UNSAFE_PICKLE_DECODE", True, raising=False)
    monkeypatch.delattr(zarrx, "_unpickled_by_chunk", raising=False)
    codecs = [{"name": name, "configuration": {"id": "pickle"}}]
    store = _v3([_BYTES] * at + codecs, pickle.dumps(_Marks()))
    with pytest.raises(MetadataError, match=rf"codecs\[{at}\]\.configuration\.id: numcodecs codec "
                       f"'{name[10:]}' has the id '{name[10:]}', found 'pickle'"):
        zarrx.open_array(store, path="a", mode="r")[:]
    assert not getattr(zarrx, "_unpickled_by_chunk", False)


def test_configuration_id_of_the_codec_itself_taken():
    z = zarrx.create_array(MemoryStore(), shape=(8,), dtype="u1", chunks=(8,),
                           compressors=[{"name": "numcodecs.base64",
                                         "configuration": {"id": "base64"}}])
    z[:] = np.arange(8, dtype="u1")
    np.testing.assert_array_equal(z[:], np.arange(8, dtype="u1"))


_ZFP_TRIALS = r'''
import sys
import numpy as np
import zarrx
from zarrx.store import MemoryStore
from zarrx.errors import CodecError

good = zarrx.create_array(MemoryStore(), shape=(7, 5), dtype="f8", chunks=(7, 5),
                          serializer={"name": "numcodecs.zfpy",
                                      "configuration": {"mode": 4, "tolerance": 1e-3}},
                          compressors=None)
good[:] = np.arange(35.0).reshape(7, 5)
stream = bytes(good.store.get("c/0/0"))
wide = bytearray(stream)
wide[10] = 0x8e                                 # the header's ny: 14680071 rows
cases = {"magic_only": stream[:4], "header_only": stream[:12], "cut": stream[:40],
         "wide": bytes(wide), "empty": b"", "text": b"not a zfp stream at all"}
rated = zarrx.create_array(MemoryStore(), shape=(7, 5), dtype="f8", chunks=(7, 5),
                           serializer={"name": "numcodecs.zfpy",
                                       "configuration": {"mode": 2, "rate": 16}},
                           compressors=None)
rated[:] = np.arange(35.0).reshape(7, 5)
cases["rate_cut"] = bytes(rated.store.get("c/0/0"))[:48]
for name, chunk in cases.items():
    good.store.set("c/0/0", chunk)
    try:
        got = good[:]
    except CodecError as exc:
        print(name, "CodecError", str(exc).split(": ", 2)[-1][:130], flush=True)
    else:
        print(name, "read", got.shape, flush=True)
'''


def test_damaged_zfp_streams_do_not_crash_the_process():
    pytest.importorskip("zfpy")
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", _ZFP_TRIALS], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-2000:])
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert lines["wide"].startswith("CodecError the zfp stream's header describes an array "
                                    "of shape (14680071, 5)"), lines
    assert lines["magic_only"].startswith("CodecError the zfp stream's header describes"), lines
    assert lines["empty"].startswith("CodecError not a zfp stream"), lines
    assert lines["text"].startswith("CodecError not a zfp stream"), lines
    assert lines["rate_cut"].startswith("CodecError the zfp stream is cut short: 48 bytes, "
                                        "but its header asks for at least 256 bits for each "
                                        "of the chunk's 4 blocks"), lines
    assert lines["header_only"] == ("CodecError the zfp stream is cut short: 12 bytes, but "
                                    "its header asks for at least 1 bits for each of the "
                                    "chunk's 4 blocks"), lines
    # zfp streams carry no checksum: one cut short but longer than its header's minimum is
    # read (within its padded buffer)
    assert lines["cut"] == "read (7, 5)", lines


@pytest.mark.parametrize("cid", ["pcodec", "zfpy"])
@pytest.mark.parametrize("where", ["compressors", "filters", "serializer"])
def test_v2_big_endian_dtype_refused_at_creation(cid, where):
    """numcodecs' codec encodes numbers in the machine's order: zarr-python refuses to write
    a big-endian dtype through it, and reads one as byte-swapped values."""
    pytest.importorskip(cid)
    args = {where: [{"id": cid}], **({"compressors": None} if where == "filters" else {})}
    if where == "serializer":
        args = {where: {"name": f"numcodecs.{cid}"}}
    arg = where if where == "serializer" else f"{where}[0]"
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            f"create_array: {arg} 'numcodecs.{cid}' encodes numbers in the machine's "
            f"byte order, found the big-endian dtype '>f8'; expected a little-endian dtype "
            f"('<f8')")):
        zarrx.create_array(MemoryStore(), shape=(10,), chunks=(5,), dtype=">f8",
                           zarr_format=2, **args)
    z = zarrx.create_array(MemoryStore(), shape=(10,), chunks=(5,), dtype="<f8",
                           zarr_format=2, **args)
    z[:] = np.arange(10.0)
    np.testing.assert_array_equal(z[:], np.arange(10.0))


def test_zfpy_zero_dimensional_array_reads_its_flat_stream():
    """zfp encodes a 0-d chunk as a 1-d stream of one value: its header check takes that."""
    pytest.importorskip("zfpy")
    z = zarrx.create_array(MemoryStore(), shape=(), dtype="f8", fill_value=0,
                           serializer={"name": "numcodecs.zfpy",
                                       "configuration": {"mode": 4, "tolerance": 1e-9}},
                           compressors=None)
    z[()] = 3.5
    assert z[()] == 3.5
