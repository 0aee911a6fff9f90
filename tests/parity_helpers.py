"""What the tests of test_zarr_python_parity_*.py share: each case is a function of the library
module (``zarr`` or ``zarrx``) run on both, with a ``dict`` as the store."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")


LIBS = {"zarr": zarr, "zarrx": zarrx}
BUILTINS = (KeyError, IndexError, FileNotFoundError, FileExistsError, PermissionError,
            NotImplementedError, TypeError, ValueError, OSError, LookupError)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # zarr-python's deprecation and v3 warnings
        yield


def both(case):
    """``{"zarr": result or exception, "zarrx": result or exception}``."""
    out = {}
    for name, lib in LIBS.items():
        try:
            out[name] = case(lib)
        except Exception as exc:  # noqa: BLE001 - compared below
            out[name] = exc
    return out


def raw(value) -> bytes:
    return value if isinstance(value, bytes) else value.to_bytes()    # zarr-python Buffers


def doc(store: dict, key: str = "zarr.json") -> dict:
    return json.loads(raw(store[key]))


def arr(lib, shape=(10, 10), chunks=(5, 5), **kw):
    a = lib.create_array({}, shape=shape, dtype="i4", chunks=chunks, **kw)
    a[...] = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    return a


def existing(lib, kind="array"):
    store: dict = {}
    g = lib.open_group(store, mode="w")
    g.create_array("a", shape=(4,), dtype="i4", chunks=(2,))
    g.create_group("g")
    return store


def builtins_of(exc: BaseException) -> set[type]:
    return {b for b in BUILTINS if isinstance(exc, b)}


def codec_ids(codecs) -> list:
    """What each codec is, across zarr-python, numcodecs and zarrx objects."""
    out = []
    for c in codecs:
        if hasattr(c, "codec_id") and not hasattr(c, "to_dict"):     # numcodecs
            out.append((c.codec_id, {k: v for k, v in c.get_config().items() if k != "id"}))
        else:
            d = json.loads(json.dumps(c.to_dict(), default=str))
            out.append((d["name"].removeprefix("numcodecs."), d.get("configuration", {})))
    return out


def both_errors(call):
    """The builtin classes of the error ``call`` raises (compared across the libraries)."""
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - compared by the caller
        return builtins_of(exc)
    return set()
