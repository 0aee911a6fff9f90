"""The chunk key arguments of the create functions: a Zarr v2 array takes only the ``v2``
chunk key encoding (zarr-python refuses ``default`` there too), and ``zarr.create`` takes
``dimension_separator=`` or ``chunk_key_encoding=``, not both."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx

V2_DEFAULT = ("array metadata chunk_key_encoding.name: expected 'v2' for a Zarr v2 array (its "
              "chunk keys have no 'c' prefix; the separator is its dimension_separator), "
              "found 'default'")


@pytest.mark.parametrize("encoding", [{"name": "default"}, {"name": "default", "separator": "."},
                                      {"name": "default", "configuration": {"separator": "/"}},
                                      "default", ("default", ".")],
                         ids=["dict", "dict-dot", "json", "name", "pair"])
def test_default_key_encoding_is_refused_for_zarr_v2(encoding):
    store: dict = {}
    with pytest.raises(zarrx.MetadataError, match=re.escape(V2_DEFAULT)):
        zarrx.create_array(store, shape=(4,), chunks=(2,), dtype="i1", zarr_format=2,
                           chunk_key_encoding=encoding)
    assert store == {}


def test_default_key_encoding_is_refused_inside_a_zarr_v2_group():
    g = zarrx.open_group({}, mode="w", zarr_format=2)
    with pytest.raises(ValueError, match=re.escape(V2_DEFAULT)):
        g.create_array("a", shape=(4,), dtype="i1", chunk_key_encoding={"name": "default"})
    assert "a" not in g


def test_zarr_python_refuses_default_key_encoding_for_zarr_v2_too():
    zarr = pytest.importorskip("zarr")
    with pytest.raises(ValueError):
        zarr.create_array(zarr.storage.MemoryStore(), shape=(4,), dtype="i1", zarr_format=2,
                          chunk_key_encoding={"name": "default", "separator": "/"})


@pytest.mark.parametrize("sep", ["/", "."])
def test_v2_key_encoding_keeps_its_separator(sep):
    store: dict = {}
    a = zarrx.create_array(store, shape=(4, 4), chunks=(2, 2), dtype="i1", zarr_format=2,
                           chunk_key_encoding={"name": "v2", "separator": sep})
    a[...] = np.ones((4, 4), "i1")
    assert sorted(k for k in store if not k.startswith(".")) == [
        f"{i}{sep}{j}" for i in (0, 1) for j in (0, 1)]


@pytest.mark.parametrize("fmt", [2, 3])
def test_create_refuses_both_dimension_separator_and_chunk_key_encoding(fmt):
    store: dict = {}
    name = "v2" if fmt == 2 else "default"
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "create: pass dimension_separator= or chunk_key_encoding=, not both")):
        zarrx.create((4,), chunks=(2,), store=store, zarr_format=fmt, dimension_separator="/",
                     chunk_key_encoding={"name": name, "separator": "."})
    assert store == {}


@pytest.mark.parametrize("sep, error", [("x", zarrx.ArgumentError), ("", zarrx.ArgumentError),
                                        (1, TypeError), (np.array(["/", "."]), TypeError)],
                         ids=["x", "empty", "int", "array"])
def test_create_names_a_bad_dimension_separator(sep, error):
    with pytest.raises(error, match=re.escape("create: dimension_separator: expected '/' or "
                                              "'.', found ")):
        zarrx.open({}, mode="w", shape=(4,), dimension_separator=sep)


@pytest.mark.parametrize("fmt, keys", [(2, ["0/0", "0/1"]), (3, ["c.0.0", "c.0.1"])])
def test_dimension_separator_alone_picks_the_format_s_encoding(fmt, keys):
    store: dict = {}
    a = zarrx.create((2, 4), chunks=(2, 2), dtype="i1", store=store, zarr_format=fmt,
                     dimension_separator="/" if fmt == 2 else ".")
    a[...] = 1
    assert sorted(k for k in store if "0" in k) == keys
