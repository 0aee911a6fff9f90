"""``save_group`` (and ``save`` of several arrays) replaces what is at ``path`` only when every
array can be saved: names that collide are refused before anything there is deleted. A name
that is the group itself (``""``, ``"/"``) used to replace the group, then fail, saving
nothing; zarr-python 3.1 writes an array over the group there, two arrays one below the other,
or keeps the last of two arrays of one name."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx

A = np.arange(3, dtype="i2")


def _store_with_old_data() -> dict:
    store: dict = {}
    old = zarrx.open_group(store, mode="w").create_array("p/old", shape=(2,), dtype="i1")
    old[...] = [5, 6]
    return store


CASES = {
    "group-itself": ((), {"": A},
                     "save_group: keyword argument '': expected the name of a member, found '', "
                     "which names the group itself"),
    "slash": ((), {"/": A},
              "save_group: keyword argument '/': expected the name of a member, found '/', "
              "which names the group itself"),
    "positional-and-keyword": ((A,), {"arr_0": A},
                               "save_group: argument 0 and keyword argument 'arr_0' both name "
                               "the array 'arr_0'"),
    "same-after-normalising": ((), {"x": A, "x/": A},
                               "save_group: keyword argument 'x' and keyword argument 'x/' both "
                               "name the array 'x'"),
    "below-another": ((), {"a/b": A, "a": A},
                      "save_group: keyword argument 'a/b' names 'a/b', below the array 'a' of "
                      "keyword argument 'a' (an array has no children)"),
    "dot-segment": ((), {"a/./b": A},
                    "save_group: keyword argument 'a/./b': expected a node path without '.' or "
                    "'..' segments, found 'a/./b'"),
}


@pytest.mark.parametrize("fn", ["save_group", "save"])
@pytest.mark.parametrize("case", list(CASES))
def test_clashing_names_are_refused_before_anything_is_replaced(fn, case):
    args, kwargs, message = CASES[case]
    store = _store_with_old_data()
    before = dict(store)
    with pytest.raises(zarrx.ArgumentError, match=re.escape(message.replace("save_group",
                                                                            fn))):
        getattr(zarrx, fn)(store, *args, path="p", **kwargs)
    assert store == before
    assert zarrx.open_array(store, path="p/old")[...].tolist() == [5, 6]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_names_of_nested_members_and_positional_arrays_are_saved(zarr_format):
    store = _store_with_old_data() if zarr_format == 3 else {}
    zarrx.save_group(store, A, A + 1, path="p", zarr_format=zarr_format,
                     **{"q/r": A + 2, "/q/s/": A + 3})
    loaded = zarrx.open_group(store, path="p", mode="r")
    assert sorted(k for k, _ in loaded.members(max_depth=None)) == [
        "arr_0", "arr_1", "q", "q/r", "q/s"]
    assert loaded["q/s"][...].tolist() == [3, 4, 5] and loaded["arr_1"][1] == 2
