"""Text that a written value's conversion cannot encode or decode: a ZarrError with the message
naming the array, the value and the data type, and also the UnicodeEncodeError or
UnicodeDecodeError zarr-python lets through, so ``except UnicodeError`` keeps working."""
from __future__ import annotations

import io
import pickle
import re
import types
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentDecodeError, ArgumentEncodeError, ArgumentError
from zarrx.store import MemoryStore

SURROGATE = ("'utf-8' codec can't encode character '\\ud800' in position 1: surrogates not "
             "allowed")
NOT_ASCII = ("'ascii' codec can't encode character '\\ud800' in position 1: ordinal not in "
             "range(128)")


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("dtype,value,found,reason", [
    (str, "a\ud800", "/: cannot convert value of type str to dtype StringDType(): " + SURROGATE,
     "surrogates not allowed"),
    ("S4", "a\ud800", "/: cannot convert value of type str to dtype |S4: " + NOT_ASCII,
     "ordinal not in range(128)"),
    ("S4", np.array(["a\ud800", "b"]),
     "/: cannot convert value of type ndarray to dtype |S4: " + NOT_ASCII,
     "ordinal not in range(128)"),
], ids=["string", "bytes", "bytes-array"])
def test_text_that_cannot_be_encoded(zarr_format, dtype, value, found, reason):
    a = zarrx.create_array(MemoryStore(), shape=(2,), dtype=dtype, zarr_format=zarr_format)
    with pytest.raises(UnicodeEncodeError, match=re.escape(found)) as info:
        a[:] = value
    exc = info.value
    assert isinstance(exc, ArgumentEncodeError) and isinstance(exc, ArgumentError)
    assert isinstance(exc, ValueError) and isinstance(exc, zarrx.ZarrError)
    assert (exc.object, exc.start, exc.end, exc.reason) == ("a\ud800", 1, 2, reason)
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is ArgumentEncodeError and str(copy) == str(exc)


@pytest.mark.parametrize("dtype,shown,codec", [(str, "StringDType()", "utf-8"),
                                               ("<U4", "<U4", "ascii")], ids=["string", "fixed"])
def test_bytes_that_cannot_be_decoded(dtype, shown, codec):
    a = zarrx.create_array(MemoryStore(), shape=(2,), dtype=dtype)
    found = (f"/: cannot convert value of type bytes to dtype {shown}: '{codec}' codec can't "
             "decode byte 0xff in position 0")
    with pytest.raises(UnicodeDecodeError, match=re.escape(found)) as info:
        a[:] = b"\xff"
    exc = info.value
    assert isinstance(exc, ArgumentDecodeError) and isinstance(exc, zarrx.ZarrError)
    assert (exc.encoding, exc.object, exc.start) == (codec, b"\xff", 0)
    copy = pickle.loads(pickle.dumps(exc))
    assert type(copy) is ArgumentDecodeError and str(copy) == str(exc)


def _write(lib, dtype, value):
    a = lib.create_array(lib.storage.MemoryStore(), shape=(2,), dtype=dtype)
    try:
        a[:] = value
    except Exception as exc:            # noqa: BLE001 - the class is what is compared
        return exc
    return None


@pytest.mark.parametrize("dtype,value", [(str, "a\ud800"), ("S4", "a\ud800"), (str, b"\xff"),
                                         ("<U4", b"\xff")],
                         ids=["string-surrogate", "bytes-surrogate", "string-bytes", "fixed-bytes"])
def test_the_class_zarr_python_raises(dtype, value):
    zarr = pytest.importorskip("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # zarr-python's unstable data type warnings
        theirs = _write(zarr, dtype, value)
    ours = _write(zarrx, dtype, value)
    assert isinstance(theirs, UnicodeError)
    assert isinstance(ours, type(theirs)) and isinstance(ours, zarrx.ZarrError)


@pytest.mark.parametrize("dtype,value", [(str, "a\ud800"), ("S4", "a\ud800"), (str, b"\xff")],
                         ids=["encode-string", "encode-bytes", "decode-string"])
def test_the_errors_travel_as_tblib_pickles_them(dtype, value):
    # dask.distributed sends a task's error to the client through tblib's reducer, which
    # rebuilds an exception from what its __reduce__ gives (before: the Unicode error given
    # there came back with its fields None, and rebuilding failed with a TypeError)
    support = pytest.importorskip("tblib.pickling_support")
    a = zarrx.create_array(MemoryStore(), shape=(2,), dtype=dtype)
    with pytest.raises(UnicodeError) as info:
        a[:] = value
    exc = info.value
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf)
    pickler.dispatch_table = {t: support.pickle_exception for t in
                              (type(exc), UnicodeEncodeError, UnicodeDecodeError)}
    pickler.dispatch_table[types.TracebackType] = support.pickle_traceback
    pickler.dump(exc)                       # as tblib's install() makes every pickle do it
    copy = pickle.loads(buf.getvalue())
    assert type(copy) is type(exc) and str(copy) == str(exc)
    assert (copy.encoding, copy.object, copy.start, copy.end, copy.reason) == \
        (exc.encoding, exc.object, exc.start, exc.end, exc.reason)
