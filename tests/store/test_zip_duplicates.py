"""Archives zarr-python's ZipStore updated many times hold many entries sharing a name (each
rewritten chunk is appended): opening one warns in a few lines, the last entry of each name
read as zarr-python reads it."""
from __future__ import annotations

import warnings
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.store import ZipStore

GROUP = b'{"zarr_format": 3, "node_type": "group"}'


def _entries(path, names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # zipfile's "Duplicate name"
        with zipfile.ZipFile(path, "w") as zf:
            for i, name in enumerate(names):
                zf.writestr(name, str(i))


def test_many_replaced_entries_warn_for_the_first_few_and_count_the_rest(tmp_path):
    path = tmp_path / "a.zip"
    _entries(path, ["zarr.json"] + [f"c/{i}" for i in range(40)] * 2)
    with pytest.warns(UserWarning) as caught:
        store = ZipStore(path)
    messages = [str(w.message) for w in caught]
    where = f"ZipStore({str(path)!r}, mode='r')"
    assert len(messages) == 11
    assert messages[0].startswith(f"{where}: skipping zip entry 'c/0' at offset ")
    assert messages[-1] == (f"{where}: skipping 30 more zip entries replaced by a later entry "
                            f"of their name")
    with store:
        assert store.get("c/39") == b"80"


def test_many_unsafe_entries_warn_for_the_first_few_and_count_the_rest(tmp_path):
    path = tmp_path / "a.zip"
    _entries(path, ["zarr.json"] + [f"../x{i}" for i in range(25)])
    with pytest.warns(UserWarning) as caught:
        ZipStore(path).close()
    messages = [str(w.message) for w in caught]
    assert len(messages) == 11
    assert messages[-1].endswith(": skipping 15 more zip entries unsafe or damaged")


def test_an_array_zarr_python_rewrote_chunk_by_chunk_reads_alike(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zs = zarr.storage.ZipStore(path, mode="w")
        a = zarr.open_group(zs, mode="w", zarr_format=3).create_array(
            "a", shape=(600,), chunks=(2,), dtype="i4")
        for i in range(0, 600, 3):                  # each slice rewrites a chunk it shares
            a[i:i + 3] = i
        zs.close()
    with pytest.warns(UserWarning) as caught:
        got = zarrx.open_array(path, mode="r", path="a")[:]
    assert len(caught) == 11
    np.testing.assert_array_equal(got, np.repeat(np.arange(0, 600, 3), 3))


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_archive_zarr_python_added_to_twice_in_mode_a_reads_alike(tmp_path, fmt):
    """Each session rewrites chunks, attributes and the consolidated metadata as new entries."""
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "data.zip")
    sessions = [("w", lambda g: g.create_array("a", shape=(4,), chunks=(2,), dtype="i4",
                                               fill_value=0).__setitem__(slice(None), 1)),
                ("a", lambda g: (g["a"].__setitem__(0, 10), g.attrs.update(v=1),
                                 g.create_array("b", shape=(3,), chunks=(3,), dtype="f4",
                                                fill_value=0).__setitem__(slice(None), 5))),
                ("a", lambda g: (g["b"].__setitem__(2, 70), g["a"].attrs.update(w=2),
                                 g.create_group("c").attrs.update(z=3)))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # zipfile's "Duplicate name", consolidation's
        for mode, change in sessions:
            zs = zarr.storage.ZipStore(path, mode=mode)
            change(zarr.open_group(zs, mode=mode, zarr_format=fmt))
            zarr.consolidate_metadata(zs)
            zs.close()
        theirs = zarr.open_group(zarr.storage.ZipStore(path, mode="r"), mode="r")
        want = {n: theirs[n][...].tolist() for n in ("a", "b")}
    names = zipfile.ZipFile(path).namelist()
    assert len(names) > len(set(names))
    assert want == {"a": [10, 1, 1, 1], "b": [5, 5, 70]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ZipStore(path).close()
    assert any("a later entry of the same name" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for consolidated in (False, True):
            g = zarrx.open_group(path, mode="r", use_consolidated=consolidated)
            assert {n: g[n][...].tolist() for n in ("a", "b")} == want
            assert sorted(g.keys()) == ["a", "b", "c"]
            assert (dict(g.attrs), dict(g["a"].attrs), dict(g["c"].attrs)) == \
                ({"v": 1}, {"w": 2}, {"z": 3})
