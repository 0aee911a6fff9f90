"""Errors of the public functions name the function called, and the argument at fault, even
where the work is done by another public function (``load`` opens with ``open``, ``save`` is
``save_array`` or ``save_group``, every function opens its store as ``make_store`` does)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import (ArgumentError, ArgumentTypeError, GroupNotFoundError, StoreArgumentError,
                          StoreError)


def test_load_names_load_for_a_path_holding_nothing_and_for_its_arguments(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(GroupNotFoundError) as info:
        zarrx.load(str(empty))
    assert str(info.value).startswith("load: no array or group at '/' in LocalStore(")
    with pytest.raises(GroupNotFoundError, match=r"^load: no array or group at 'a'"):
        zarrx.load(zarrx.store.MemoryStore(), path="a")
    with pytest.raises(ArgumentTypeError, match=r"^load: path: expected a str, found int 3$"):
        zarrx.load(str(empty), path=3)
    with pytest.raises(StoreArgumentError, match=re.escape(
            f"load: {str(empty)!r}: storage_options apply to URLs, not to local paths")):
        zarrx.load(str(empty), storage_options={"anon": True})


@pytest.mark.parametrize("call, name", [
    (lambda s: zarrx.load(s), "load"), (lambda s: zarrx.open(s), "open"),
    (lambda s: zarrx.open_group(s), "open_group"), (lambda s: zarrx.open_array(s), "open_array"),
    (lambda s: zarrx.create_group(s), "create_group"),
    (lambda s: zarrx.create_array(s, shape=(2,), dtype="i1"), "create_array"),
    (lambda s: zarrx.save(s, np.arange(2)), "save"),
    (lambda s: zarrx.save(s, np.arange(2), b=np.arange(2)), "save"),
    (lambda s: zarrx.save_array(s, np.arange(2)), "save_array"),
])
def test_an_empty_store_path_is_refused_naming_the_function(call, name):
    # before: LocalStore(''): root: ..., naming no function
    with pytest.raises(StoreError) as info:
        call("")
    assert str(info.value) == (f"{name}: store: expected a path, found an empty path (use '.' "
                               f"for the current directory)")


@pytest.mark.parametrize("call, name", [
    (lambda s, o: zarrx.open_array(s, storage_options=o), "open_array"),
    (lambda s, o: zarrx.open_group(s, storage_options=o), "open_group"),
    (lambda s, o: zarrx.create_group(s, storage_options=o), "create_group"),
    (lambda s, o: zarrx.create_array(s, shape=(2,), dtype="i1", storage_options=o),
     "create_array"),
    (lambda s, o: zarrx.save(s, np.arange(2), storage_options=o), "save"),
    (lambda s, o: zarrx.from_array(s, data=np.arange(2), storage_options=o), "from_array"),
])
def test_storage_options_for_a_local_path_name_the_function(tmp_path, call, name):
    # before: make_store: ...
    where = str(tmp_path / "x.zarr")
    with pytest.raises(StoreArgumentError) as info:
        call(where, {"anon": True})
    assert str(info.value) == (f"{name}: {where!r}: storage_options apply to URLs, not to "
                               f"local paths")


def test_save_names_save_for_its_arrays_and_its_path(tmp_path):
    where = str(tmp_path / "s.zarr")
    with pytest.raises(ArgumentTypeError, match=r"^save: path: expected a str, found int 5$"):
        zarrx.save(where, np.arange(3), path=5)      # before: create_array: name: ...
    with pytest.raises(ArgumentTypeError, match=r"^save: keyword argument 'b' must be a numpy "
                                                r"array, found list$"):
        zarrx.save(where, np.arange(3), b=[1])       # before: save_group: ...
    with pytest.raises(ArgumentTypeError, match=r"^save: arr must be a numpy array"):
        zarrx.save(where, [1, 2])                    # before: save_array: ...
    zarrx.save(where, np.arange(3))
    with pytest.raises(zarrx.NodeExistsError, match=r"^save: "):
        zarrx.save(where, np.arange(3))
    assert not (tmp_path / "s.zarr" / "5").exists()


def test_a_misspelt_keyword_is_never_matched_to_a_private_one(tmp_path):
    # before: create_array() got an unexpected keyword argument 'mode'; did you mean '_mode'?
    with pytest.raises(ArgumentTypeError) as info:
        zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype="i1", mode="w")
    assert str(info.value) == "create_array() got an unexpected keyword argument 'mode'"
    with pytest.raises(ArgumentTypeError, match=r"did you mean 'chunks'\?$"):
        zarrx.create_array(str(tmp_path / "a"), shape=(2,), dtype="i1", chunk=(1,))


@pytest.mark.parametrize("call, name", [
    (lambda s, **k: zarrx.open(s, **k), "open"),
    (lambda s, **k: zarrx.open_array(s, **k), "open_array"),
    (lambda s, **k: zarrx.open_group(s, **k), "open_group"),
    (lambda s, **k: zarrx.create((2,), store=s, **k), "create"),
    (lambda s, **k: zarrx.zeros((2,), store=s, **k), "zeros"),
    (lambda s, **k: zarrx.array([1, 2], store=s, **k), "array"),
    (lambda s, **k: zarrx.save_array(s, np.arange(2), **k), "save_array"),
])
def test_an_unknown_mode_names_the_function(call, name):
    # before: mode: expected one of ..., naming no function
    store: dict = {}
    with pytest.raises(zarrx.ArgumentError) as info:
        call(store, mode="x")
    assert str(info.value) == f"{name}: mode: expected one of r, r+, a, w, w-, found 'x'"
    assert store == {}


@pytest.mark.parametrize("call, name", [
    (lambda s, **k: zarrx.open(s, mode="w", shape=(4,), dtype="i1", **k), "open"),
    (lambda s, **k: zarrx.open_array(s, mode="w", shape=(4,), dtype="i1", **k), "open_array"),
    (lambda s, **k: zarrx.create((4,), store=s, dtype="i1", **k), "create"),
    (lambda s, **k: zarrx.full((4,), 1, store=s, dtype="i1", **k), "full"),
    (lambda s, **k: zarrx.create_array(s, shape=(4,), dtype="i1", **k), "create_array"),
    (lambda s, **k: zarrx.save_array(s, np.arange(4, dtype="i1"), **k), "save_array"),
])
def test_arguments_of_the_array_an_open_or_save_creates_name_that_function(call, name):
    # before: create_array: ..., or 'array metadata: attributes: ...' for create_array itself
    store: dict = {}
    cases = [({"chunks": (2,), "shards": (3,)}, ArgumentError,
              f"{name}: shards[0]=3 must be a positive multiple of chunks[0]=2 (or 0 on an axis "
              f"of length 0, with positive chunks)"),
             ({"config": 5}, ArgumentTypeError, f"{name}: config: expected a mapping or an ArrayConfig, found int 5"),
             ({"attributes": [1]}, ArgumentTypeError,
              f"{name}: attributes: expected a mapping of str keys to JSON values, found list "
              f"[1]"),
             ({"zarr_format": 2, "shards": (2,)}, ArgumentError,
              f"{name}: shards= needs zarr_format=3 (Zarr v2 has no sharding)")]
    for kwargs, error, message in cases:
        with pytest.raises(error) as info:
            call(store, **kwargs)
        assert str(info.value) == message
    assert store == {}


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like", "empty_like"])
def test_the_like_functions_name_themselves(name):
    # before: zeros: ..., ones: ..., create: ..., empty: ...
    source = zarrx.zeros((4,), chunks=(2,), dtype="i1")
    call = getattr(zarrx, name)
    with pytest.raises(ArgumentError) as info:
        call(source, mode="x")
    assert str(info.value) == f"{name}: mode: expected one of r, r+, a, w, w-, found 'x'"
    with pytest.raises(ArgumentTypeError) as info:
        call(source, config=5)
    assert str(info.value) == f"{name}: config: expected a mapping or an ArrayConfig, found int 5"


@pytest.mark.parametrize("mode", ["r", 5, "rw"])
def test_save_array_refuses_a_mode_it_cannot_save_with(tmp_path, mode):
    """save_array's mode= is checked as create's is (before: any value was taken, and mode
    'r' wrote the array, making a directory for a path)."""
    where = tmp_path / "a.zarr"
    error = zarrx.ReadOnlyError if mode == "r" else ArgumentError
    with pytest.raises(error) as info:
        zarrx.save_array(str(where), np.arange(3), mode=mode)
    assert str(info.value).startswith("save_array: mode")
    assert not where.exists()
    zarrx.save_array(str(where), np.arange(3), mode=None)     # the default, as in create
    assert zarrx.load(str(where)).tolist() == [0, 1, 2]
