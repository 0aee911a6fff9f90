"""Errors of the public functions name the function called, and the argument at fault, even
where the work is done by another public function (``load`` opens with ``open``, ``save`` is
``save_array`` or ``save_group``, every function opens its store as ``make_store`` does)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import (ArgumentTypeError, GroupNotFoundError, StoreArgumentError,
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
