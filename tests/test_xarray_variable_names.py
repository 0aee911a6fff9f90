"""Variable names ``to_zarrx`` cannot store as an array of that name in the written group are
refused with an ArgumentError naming the variable and the rule, before anything is written
(a ``/`` nests the array in a sub-group, where it is not read back: engine "zarr" writes it
there, and the variable is lost)."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray  # noqa: E402,F401
from zarrx.errors import ArgumentError  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402

SEPARATOR = ("expected a name without '/' or backslashes, found {}: the variable would be "
             "stored in a sub-group, where it is not read back as a variable; rename it")
DOCUMENTS = ("expected a name that is not a metadata document's name (.zarray, .zattrs, "
             ".zgroup, .zmetadata, zarr.json)")
CASES = {
    "backslash": ("a\\b", SEPARATOR.format("a backslash, which node paths read as '/'")),
    "slash": ("a/b", SEPARATOR.format("'/'")),
    "leading-slash": ("/a", SEPARATOR.format("'/'")),
    "dot-dot": ("..", "the name is not a valid store key: found a '..' segment; keys may not "
                      "step outside their directory"),
    "control": ("a\x01", "the name is not a valid store key: found the control character "
                         "'\\x01'"),
    "zarray": (".zarray", DOCUMENTS),
    "zarr.json": ("zarr.json", DOCUMENTS),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_a_name_the_key_rules_refuse_is_refused_before_writing(tmp_path, fmt, case):
    # a backslash in Zarr v2 was a StoreError naming the key 'a\\b/zarr.json', after the
    # group was written; a '/' stored the variable in a sub-group, where it vanished
    name, rule = CASES[case]
    ds = xr.Dataset({"ok": ("x", np.arange(3)), name: ("x", np.arange(3))})
    path = tmp_path / "t.zarr"
    with pytest.raises(ArgumentError, match=re.escape(f"to_zarrx: variable {name!r}: {rule}")):
        ds.zarrx.to_zarrx(path, zarr_format=fmt)
    assert not path.exists()


@pytest.mark.parametrize("name", ["...", "__zarr_x"])
def test_names_zarr_v3_reserves_are_refused_in_v3_only(name):
    ds = xr.Dataset({name: ("x", np.arange(3))})
    store = MemoryStore()
    msg = (f"to_zarrx: variable {name!r}: expected a Zarr v3 node name not made only of periods "
           f"and not starting with '__zarr' (reserved by the Zarr v3 specification)")
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        ds.zarrx.to_zarrx(store)            # (Zarr v3, the default)
    assert not list(store.list_prefix(""))
    ds.zarrx.to_zarrx(store, zarr_format=2)
    got = xr.open_dataset(store, engine="zarrx")
    assert got[name].values.tolist() == [0, 1, 2]


def test_a_slash_in_a_name_is_refused_when_appending_to_a_group(tmp_path):
    path = tmp_path / "t.zarr"
    xr.Dataset({"a": ("x", np.arange(3))}).zarrx.to_zarrx(path, zarr_format=2)
    before = sorted(p.name for p in path.rglob("*"))
    with pytest.raises(ArgumentError, match=re.escape("to_zarrx: variable 'a/b'")):
        xr.Dataset({"a/b": ("x", np.arange(3))}).zarrx.to_zarrx(path, mode="a")
    assert sorted(p.name for p in path.rglob("*")) == before


@pytest.mark.parametrize("mode", ["a", "a-"])
@pytest.mark.parametrize("name", ["...", "__zarr_x"])
def test_a_name_zarr_v3_reserves_leaves_no_group_behind_in_mode_a(tmp_path, mode, name):
    # mode "a" created the (empty) group before it knew the format and refused the name
    ds = xr.Dataset({name: ("x", np.arange(3))})
    path = tmp_path / "t.zarr"
    with pytest.raises(ArgumentError, match=re.escape(f"to_zarrx: variable {name!r}: expected a "
                                                      f"Zarr v3 node name")):
        ds.zarrx.to_zarrx(path, mode=mode)
    assert not path.exists()
    store = MemoryStore()
    with pytest.raises(ArgumentError, match=re.escape(f"to_zarrx: variable {name!r}")):
        ds.zarrx.to_zarrx(store, mode=mode, group="g")
    assert not list(store.list_prefix(""))


def test_mode_a_refused_for_its_encoding_leaves_no_group_behind():
    store = MemoryStore()
    ds = xr.Dataset({"v": ("x", np.arange(3))})
    with pytest.raises(ArgumentError, match=re.escape("to_zarrx: encoding of 'v': unexpected "
                                                      "keys ['bogus']")):
        ds.zarrx.to_zarrx(store, mode="a", encoding={"v": {"bogus": 1}})
    assert not list(store.list_prefix(""))
    ds.zarrx.to_zarrx(store, mode="a")          # creates the group once the write is accepted
    assert xr.open_dataset(store, engine="zarrx")["v"].values.tolist() == [0, 1, 2]


def test_mode_a_into_a_zarr_v2_hierarchy_takes_its_format_and_allows_v3_reserved_names():
    store = MemoryStore()
    xr.Dataset({"v": ("x", np.arange(3))}).zarrx.to_zarrx(store, zarr_format=2)
    xr.Dataset({"__zarr_x": ("x", np.arange(2))}).zarrx.to_zarrx(store, mode="a", group="g")
    assert zarrx.open_group(store, path="g").zarr_format == 2
    got = xr.open_dataset(store, engine="zarrx", group="g")
    assert got["__zarr_x"].values.tolist() == [0, 1]
