"""Read-only HTTP(S) stores against a real web server (nginx: Range requests, ETags,
If-Match), for public datasets: v2 and v3, sharded, consolidated."""
from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

import zarrx
from zarrx.errors import ConflictError, ReadOnlyError, StoreError
from zarrx.store import ByteRange, LocalStore

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[http]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402


@pytest.fixture
def site(http_server, http_root):
    """A fresh folder served over HTTP: (local path, URL)."""
    name = uuid.uuid4().hex[:10]
    path = http_root / name
    path.mkdir()
    os.chmod(path, 0o755)
    return path, f"{http_server.url}/{name}"


def _write_tree(root, zarr_format: int) -> dict[str, np.ndarray]:
    g = zarrx.open_group(str(root), mode="w", zarr_format=zarr_format)
    plain = np.arange(30 * 40, dtype="i4").reshape(30, 40)
    g.create_array("plain", shape=plain.shape, dtype="i4", chunks=(8, 16))[...] = plain
    out = {"plain": plain}
    if zarr_format == 3:
        sharded = np.random.default_rng(1).random((64, 64)).astype("f8")
        g.create_array("sharded", shape=sharded.shape, dtype="f8", chunks=(8, 8),
                       shards=(32, 32))[...] = sharded
        out["sharded"] = sharded
    zarrx.consolidate_metadata(str(root))
    return out


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_public_dataset_over_http(site, zarr_format):
    path, url = site
    arrays = _write_tree(path / "data.zarr", zarr_format)
    g = zarrx.open(f"{url}/data.zarr", mode="r")
    assert isinstance(g.store, ObjectStore) and g.store.read_only
    assert sorted(name for name, _ in g.members()) == sorted(arrays)
    for name, expected in arrays.items():
        np.testing.assert_array_equal(g[name][...], expected)
        np.testing.assert_array_equal(g[name][3:17, 5:9], expected[3:17, 5:9])


def test_ranges_generations_and_missing_keys(site):
    path, url = site
    (path / "blob").write_bytes(b"0123456789")
    store = ObjectStore(url)
    assert store.get("blob", ByteRange.last(3)) == b"789"                  # Range: bytes=-3
    assert store.get("blob", ByteRange.slice(2, 3)) == b"234"
    assert store.get("blob", ByteRange.slice(8, 100)) == b"89"
    assert store.get("blob", ByteRange.slice(50, 2)) == b""
    assert store.get_many([("blob", ByteRange.slice(0, 2)), ("blob", ByteRange.slice(5, 2)),
                           ("nothing", None)]) == [b"01", b"56", None]
    assert store.get("nothing") is None and store.getsize("blob") == 10
    gen = store.generation("blob")
    assert gen is not None and store.get_versioned("blob", if_generation=gen) == (b"0123456789",
                                                                                  gen)


def test_snapshot_conflicts_when_the_file_is_replaced(site):
    path, url = site
    (path / "shard").write_bytes(bytes(range(200)) * 1000)
    store = ObjectStore(url, tail_prefetch=16)
    with store.snapshot("shard") as snap:
        assert bytes(snap.read([ByteRange.last(4)])[0]) == bytes(range(196, 200))
        assert bytes(snap.read([ByteRange.slice(0, 3)])[0]) == b"\x00\x01\x02"   # If-Match
        tmp = path / "shard.new"
        tmp.write_bytes(b"x" * 5000)
        os.replace(tmp, path / "shard")
        with pytest.raises(ConflictError, match="cannot read a snapshot of 'shard'"):
            snap.read([ByteRange.slice(0, 3)])


def test_http_stores_refuse_writes_and_listing(site):
    path, url = site
    store = ObjectStore(url)
    with pytest.raises(ReadOnlyError):
        store.set("k", b"v")
    with pytest.raises(ReadOnlyError):
        zarrx.open_group(url, mode="w")
    with pytest.raises(StoreError, match="offers no listing"):
        list(store.list_prefix(""))


def test_mode_a_on_a_missing_node_over_http_says_it_cannot_create_it(site):
    """Mode a opens what exists over HTTP; where nothing exists it would create a node, which
    a read-only store cannot: the error says so in the terms of the call."""
    path, url = site
    with pytest.raises(ReadOnlyError) as info:
        zarrx.open_group(f"{url}/none.zarr", mode="a")
    assert str(info.value) == (f"open_group: no group at '/' in ObjectStore('{url}/none.zarr', "
                               "read_only=True), and mode 'a' cannot create a group there: the "
                               "store is read-only")
    with pytest.raises(ReadOnlyError, match="open_array: no array at '/' in .*, and mode 'a' "
                                            "cannot create an array there"):
        zarrx.open_array(f"{url}/none.zarr", mode="a", shape=(2,), dtype="i1")
    with pytest.raises(ReadOnlyError, match="open: no array or group at '/' in .*, and mode "
                                            "'a' cannot create an array or group there"):
        zarrx.open(f"{url}/none.zarr", mode="a")


def test_fsspec_http_reads_the_same_data(site):
    pytest.importorskip("aiohttp", reason="aiohttp is not installed")
    path, url = site
    arrays = _write_tree(path / "d.zarr", 3)
    store = FsspecStore(f"{url}/d.zarr")
    assert store.read_only
    g = zarrx.open_consolidated(store, mode="r")
    np.testing.assert_array_equal(g["sharded"][...], arrays["sharded"])


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_names_with_url_special_characters_are_percent_encoded(site, backend, zarr_format):
    """Node names with '%', '#', '?', '+', spaces and non-ASCII letters are parts of the key,
    not escapes, fragments or queries: every chunk is read, none taken for a missing one."""
    if backend == "fsspec":
        pytest.importorskip("aiohttp", reason="aiohttp is not installed")
    path, url = site
    names = ["p%20q", "h#1", "q?r", "x+y", "a b", "\u00fc\u20ac", "pct%"]
    g = zarrx.open_group(str(path / "d.zarr"), mode="w", zarr_format=zarr_format)
    for i, name in enumerate(names):
        g.create_array(name, shape=(4,), chunks=(2,), dtype="i2", fill_value=-1)[...] = \
            np.arange(4) + 10 * i
    zarrx.consolidate_metadata(str(path / "d.zarr"))
    store = ObjectStore(f"{url}/d.zarr") if backend == "obstore" else \
        FsspecStore(f"{url}/d.zarr")
    h = zarrx.open_group(store, mode="r")
    assert sorted(h.keys()) == sorted(names)
    for i, name in enumerate(names):
        assert h[name][...].tolist() == [10 * i, 10 * i + 1, 10 * i + 2, 10 * i + 3], name


def test_local_and_http_generations_differ_but_both_change(site):
    path, url = site
    local = LocalStore(str(path))
    local.set("k", b"one")
    store = ObjectStore(url)
    g1 = store.generation("k")
    local.set("k", b"two-two")
    assert store.generation("k") != g1
