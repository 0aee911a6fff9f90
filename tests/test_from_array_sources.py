"""``from_array`` and ``array`` with a zarrx array as the data: a destination that is the
source array, or a group holding it, is refused with ``overwrite=True`` (the copy used to
delete the source first and then copy its fill value: the data was lost, as it is in
zarr-python 3.1); ``array`` takes ``create``'s ``path=`` and ``mode=`` there too (they used to
fail with Python's own ``TypeError``), and every create function checks ``mode``."""
from __future__ import annotations

import re

import pytest

import zarrx


def _source(store) -> zarrx.Array:
    g = zarrx.open_group(store, mode="w")
    a = g.create_array("grp/a", shape=(4,), chunks=(2,), dtype="i4")
    a[...] = [1, 2, 3, 4]
    return a


@pytest.mark.parametrize("name, what", [("grp/a", "is the source array"),
                                        ("grp", "holds the source array"),
                                        (None, "holds the source array")],
                         ids=["itself", "parent", "root"])
@pytest.mark.parametrize("kind", ["dict", "local"])
def test_from_array_refuses_to_overwrite_its_source(tmp_path, kind, name, what):
    store = {} if kind == "dict" else str(tmp_path / "s.zarr")
    src = _source(store)
    if kind == "local":                 # another handle, another store object, same directory
        src = zarrx.open_array(store, path="grp/a")
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"from_array: the destination {name or '/'!r} {what} 'grp/a' in ")):
        zarrx.from_array(store, data=src, name=name, overwrite=True)
    assert zarrx.open_array(store, path="grp/a")[...].tolist() == [1, 2, 3, 4]


def test_array_mode_w_onto_its_source_is_refused():
    store: dict = {}
    src = _source(store)
    with pytest.raises(zarrx.ArgumentError, match="overwrite=True would delete its data"):
        zarrx.array(src, store=store, path="grp/a", mode="w")
    assert zarrx.open_array(store, path="grp/a")[...].tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("name", ["grp/b", "gr", "other/a"])
def test_from_array_overwrites_beside_its_source(name):
    store: dict = {}
    src = _source(store)
    out = zarrx.from_array(store, data=src, name=name, overwrite=True)
    assert out[...].tolist() == [1, 2, 3, 4] and src[...].tolist() == [1, 2, 3, 4]


def test_from_array_of_another_store_overwrites_the_same_path():
    src, store = _source({}), {}
    _source(store)[...] = [9, 9, 9, 9]
    assert zarrx.from_array(store, data=src, name="grp", overwrite=True)[...].tolist() == \
        [1, 2, 3, 4]


def test_array_of_a_zarrx_array_takes_path_and_mode():
    store: dict = {}
    src = _source(store)
    out = zarrx.array(src, store=store, path="grp/c", chunks=(1,))
    assert (out.path, out.chunks, out[...].tolist()) == ("grp/c", (1,), [1, 2, 3, 4])
    again = zarrx.array(src, store=store, path="grp/c", mode="w")
    assert again.chunks == (2,)
    with pytest.raises(zarrx.errors.ContainsArrayError):
        zarrx.array(src, store=store, path="grp/c", mode="w-")
    with pytest.raises(zarrx.ReadOnlyError):
        zarrx.array(src, store=store, path="grp/d", mode="r")
    assert "grp/d" not in zarrx.open_group(store)


def test_array_of_a_zarrx_array_names_a_keyword_it_cannot_take():
    src = _source({})
    with pytest.raises(TypeError, match=re.escape("array: dtype= is not taken when data is a "
                                                  "zarrx Array")) as info:
        zarrx.array(src, dtype="f4")
    assert isinstance(info.value, zarrx.ZarrError)


@pytest.mark.parametrize("fn", ["create", "zeros", "ones", "empty"])
@pytest.mark.parametrize("mode", ["bogus", "x", 3])
def test_create_functions_check_the_mode(fn, mode):
    store: dict = {}
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"mode: expected one of r, r+, a, w, w-, found {mode!r}")):
        getattr(zarrx, fn)((2,), store=store, mode=mode)
    assert store == {}


def test_from_array_uses_its_storage_options():
    with pytest.raises(zarrx.errors.StoreArgumentError, match="storage_options apply to URLs"):
        zarrx.from_array({}, data=_source({}), storage_options={"anon": True})


def test_from_array_without_data_may_replace_its_source():
    """``write_data=False`` copies no data: the source's settings make an empty array there."""
    store: dict = {}
    src = _source(store)
    out = zarrx.from_array(store, data=src, name="grp/a", overwrite=True, write_data=False)
    assert (out.chunks, out[...].tolist()) == ((2,), [0, 0, 0, 0])
