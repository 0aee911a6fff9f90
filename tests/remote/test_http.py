"""Read-only HTTP(S) stores against a real web server (nginx: Range requests, ETags,
If-Match), for public datasets: v2 and v3, sharded, consolidated."""
from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

import zarrx
from zarrx.errors import ConflictError, ListingUnsupportedError, ReadOnlyError, StoreError
from zarrx.store import ByteRange, LocalStore

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[http]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402
from zarrx.store.remote.urls import WEB_READ_ONLY  # noqa: E402


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
                               f"read_only=True), and mode 'a' cannot create a group there: "
                               f"{WEB_READ_ONLY}")
    assert "use an object store URL (s3://, gs://, az://)" in WEB_READ_ONLY
    with pytest.raises(ReadOnlyError, match="open_array: no array at '/' in .*, and mode 'a' "
                                            "cannot create an array there"):
        zarrx.open_array(f"{url}/none.zarr", mode="a", shape=(2,), dtype="i1")
    with pytest.raises(ReadOnlyError, match="open: no array or group at '/' in .*, and mode "
                                            "'a' cannot create an array or group there"):
        zarrx.open(f"{url}/none.zarr", mode="a")


@pytest.mark.parametrize("backend", ["ObjectStore", "FsspecStore"])
def test_writes_to_a_node_opened_with_mode_a_over_http_name_the_store(site, backend):
    """Mode a opens an existing node over HTTP read-only; a write to it is refused naming the
    store it was read from (the message named the node alone, so a URL opened with mode 'a'
    left the reader guessing why)."""
    path, url = site
    _write_tree(path / "data.zarr", 3)
    so = {} if backend == "ObjectStore" else {"storage_options": {"headers": {"X-Test": "1"}}}
    g = zarrx.open(f"{url}/data.zarr", mode="a", **so)
    where = f"in {backend}('{url}/data.zarr', read_only=True): {WEB_READ_ONLY}"
    with pytest.raises(ReadOnlyError) as info:
        g["plain"][0, 0] = 5
    assert str(info.value) == f"array '/plain': cannot write: the array is open read-only, {where}"
    with pytest.raises(ReadOnlyError) as info:
        g.attrs["history"] = "edited"
    assert str(info.value) == ("attributes of group '/': cannot change them: the node is open "
                               f"read-only, {where}")
    with pytest.raises(ReadOnlyError) as info:
        g.create_group("new")
    assert str(info.value) == ("group '/': cannot create a group: the group is open "
                               f"read-only, {where}")


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


@pytest.mark.parametrize("cache", ["simplecache", "blockcache"])
def test_a_cached_web_address_reads_special_names_and_never_shows_its_credentials(site, cache):
    """Behind a caching filesystem (``simplecache::https://...``) paths are still web
    addresses: names with '%', '#' and '?' are percent-encoded and the root's query goes after
    the key (before: their chunks read as the fill value, and with a query every key named the
    root), and the store's repr and messages show no user name, password or query."""
    pytest.importorskip("aiohttp", reason="aiohttp is not installed")
    path, url = site
    names = ["p%20q", "h#1", "q?r", "a b"]
    g = zarrx.open_group(str(path / "d.zarr"), mode="w")
    for i, name in enumerate(names):
        g.create_array(name, shape=(4,), chunks=(2,), dtype="i2", fill_value=-1)[...] = \
            np.arange(4) + 10 * i
    zarrx.consolidate_metadata(str(path / "d.zarr"))
    host = url.removeprefix("http://")
    secret = f"{cache}::http://user:pa55word@{host}/d.zarr?token=s3cr3t"
    for address in (f"{cache}::{url}/d.zarr", secret):
        store = FsspecStore(address)
        assert store.read_only
        h = zarrx.open_consolidated(store, mode="r")
        for i, name in enumerate(names):
            assert h[name][...].tolist() == [10 * i, 10 * i + 1, 10 * i + 2, 10 * i + 3], name
    store = FsspecStore(secret)
    shown = f"{cache}://{url}/d.zarr"
    assert repr(store) == f"FsspecStore('{shown}::{url}/d.zarr', read_only=True)"
    with pytest.raises(ReadOnlyError) as info:
        store.set("k", b"1")
    assert store.address("h#1/zarr.json") == f"{shown}/h#1/zarr.json::{url}/d.zarr"
    for text in (repr(store), str(info.value), store.address("k")):
        assert "pa55word" not in text and "s3cr3t" not in text and "user" not in text


def test_local_and_http_generations_differ_but_both_change(site):
    path, url = site
    local = LocalStore(str(path))
    local.set("k", b"one")
    store = ObjectStore(url)
    g1 = store.generation("k")
    local.set("k", b"two-two")
    assert store.generation("k") != g1


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_hierarchy_and_xarray_dataset_over_http(site, zarr_format):
    """A consolidated hierarchy written by zarr-python (sharded in v3, a partly written array,
    an empty and a scalar array) read over HTTP, and an xarray dataset opened from it with
    engine="zarrx"."""
    zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")
    xr = pytest.importorskip("xarray", reason="xarray is not installed")
    import warnings
    path, url = site
    data = np.arange(40 * 30, dtype="f4").reshape(40, 30)
    shards = {"shards": (20, 15)} if zarr_format == 3 else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zarr-python's v3 consolidated warning
        g = zarr.open_group(str(path / "z.zarr"), mode="w", zarr_format=zarr_format)
        g.create_array("sub/full", shape=data.shape, chunks=(5, 5), dtype="f4",
                       **shards)[...] = data
        part = g.create_array("sub/part", shape=data.shape, chunks=(5, 5), dtype="f4",
                              fill_value=-1, **shards)
        part[:7, :3] = 1
        g.create_array("empty", shape=(0,), dtype="i4")
        g.create_array("scalar", shape=(), dtype="i4")[...] = 42
        zarr.consolidate_metadata(str(path / "z.zarr"))
        ds = xr.Dataset({"t": (("x", "y"), data[:3, :4].astype("f8"))},
                        coords={"x": [10, 20, 30]}, attrs={"title": "h\u00e9llo"})
        ds.to_zarr(str(path / "x.zarr"), zarr_format=zarr_format, consolidated=True, mode="w")
    h = zarrx.open(f"{url}/z.zarr", mode="r")
    assert [k for k, _ in h.members(max_depth=None)] == ["empty", "scalar", "sub", "sub/full",
                                                         "sub/part"]
    np.testing.assert_array_equal(h["sub/full"][...], data)
    np.testing.assert_array_equal(h["sub/full"][3:33, 2:29:3], data[3:33, 2:29:3])
    np.testing.assert_array_equal(h["sub/part"][...], part[...])
    assert h["empty"][...].shape == (0,) and h["scalar"][()] == 42
    got = xr.open_dataset(f"{url}/x.zarr", engine="zarrx")
    xr.testing.assert_identical(got.load(), ds)


@pytest.mark.parametrize("backend, status", [("obstore", 405), ("fsspec", 403)])
def test_members_of_a_hierarchy_without_consolidated_metadata_say_there_is_no_listing(
        site, backend, status):
    """A zarr-python v2 hierarchy served without consolidated metadata: its nodes open by
    name, and listing them says the server offers none (fsspec's HTTP filesystem met nginx's
    403 for a folder and raised RemoteAccessError naming the address '.../<root>')."""
    zarr = pytest.importorskip("zarr")
    if backend == "fsspec":
        pytest.importorskip("aiohttp", reason="aiohttp is not installed")
    path, url = site
    g = zarr.open_group(str(path / "v2.zarr"), mode="w", zarr_format=2)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i2")[:] = [1, 2, 3, 4]
    store = (ObjectStore if backend == "obstore" else FsspecStore)(f"{url}/v2.zarr")
    group = zarrx.open_group(store, mode="r")
    assert group["a"][...].tolist() == [1, 2, 3, 4]
    with pytest.raises(StoreError) as info:
        group.members()
    assert type(info.value) is ListingUnsupportedError
    assert str(info.value) == (f"{store!r}: cannot list '<root>': the server offers no listing "
                               f"({status}); open hierarchies with consolidated metadata there")


def test_info_over_http_without_listings_says_what_it_cannot_count(site, capsys):
    import json

    from zarrx import cli
    path, url = site
    _write_tree(path, 3)
    assert cli.main(["info", f"{url}/sharded"]) == 0
    out = capsys.readouterr().out
    assert "Shape         : (64, 64)\n" in out
    assert "Shards stored : unknown (ObjectStore(" in out and "offers no listing" in out
    assert "Stored size   : unknown\nRatio         : -" in out
    assert cli.main(["info", "--json", f"{url}/sharded"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["stored_objects"] is None and info["nbytes_stored"] is None
    assert "offers no listing" in info["stored_unknown"]
    with pytest.raises(StoreError, match="offers no listing"):       # the library call says so
        zarrx.open_array(f"{url}/sharded", mode="r").nbytes_stored()


def _unlisted_tree(root, zarr_format, consolidated):
    g = zarrx.open_group(str(root), mode="w", zarr_format=zarr_format)
    g.create_array("a", shape=(10, 10), chunks=(4, 4), dtype="i4")[...] = \
        np.arange(100).reshape(10, 10)
    g.create_array("empty", shape=(8,), chunks=(4,), dtype="i1")
    sub = g.create_group("sub")
    sub.create_array("b", shape=(5,), chunks=(2,), dtype="u1")[:4] = 7     # 2 of 3 chunks
    if zarr_format == 3:
        g.create_array("s", shape=(16, 16), chunks=(4, 4), shards=(8, 8), dtype="f4")[:8] = 1.5
    if consolidated:
        zarrx.consolidate_metadata(str(root))
    for folder, _, _ in os.walk(root):
        os.chmod(folder, 0o755)


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                  for d, _, fs in os.walk(root) for f in fs)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_ls_check_and_copy_find_objects_without_listings(site, tmp_path, capsys, zarr_format):
    """Over a server without listings, `zarrx ls`, `check` and `copy` of an array, and of a
    group with consolidated metadata, find the stored objects from the metadata (they failed:
    'cannot list <root>: the server offers no listing')."""
    import json

    from zarrx import cli
    path, url = site
    _unlisted_tree(path / "t.zarr", zarr_format, consolidated=True)
    sep = "/" if zarr_format == 3 else "."
    assert cli.main(["ls", f"{url}/t.zarr/a"]) == 0
    local = capsys.readouterr().out
    assert cli.main(["ls", str(path / "t.zarr" / "a")]) == 0
    assert local == capsys.readouterr().out.replace("a/", "")      # keys relative to the URL
    assert [line.split("\t")[0] for line in local.splitlines()] == [
        f"{'c/' if zarr_format == 3 else ''}{i}{sep}{j}" for i in range(3) for j in range(3)]

    assert cli.main(["check", "--json", f"{url}/t.zarr"]) == 0
    report = json.loads(capsys.readouterr().out)
    n_shards = 2 if zarr_format == 3 else 0
    assert (report["groups"], report["arrays"], report["objects"], report["findings"]) == \
        (2, 3 + (zarr_format == 3), 9 + 2 + n_shards, [])
    assert report["notes"] == [
        "the store offers no listing: its objects were found from the metadata (the arrays' "
        "chunk grids), so objects no metadata names were not looked for"]

    for node in ("t.zarr", "t.zarr/a"):
        out = tmp_path / node.replace("/", "_")
        assert cli.main(["copy", "-q", f"{url}/{node}", str(out)]) == 0
        assert _files(out) == _files(path / node)
    copied = zarrx.open_group(str(tmp_path / "t.zarr"), mode="r")
    assert copied["sub/b"][...].tolist() == [7, 7, 7, 7, 0]


@pytest.mark.parametrize("command", ["ls", "check", "copy"])
def test_a_group_without_consolidated_metadata_and_listings_says_what_is_needed(
        site, tmp_path, capsys, command):
    from zarrx import cli
    path, url = site
    _unlisted_tree(path / "t.zarr", 3, consolidated=False)
    args = [command, f"{url}/t.zarr"] + ([str(tmp_path / "out.zarr")] if command == "copy" else [])
    assert cli.main(args) == 3
    assert capsys.readouterr().err == (
        f"zarrx: {command}: ObjectStore('{url}/t.zarr', read_only=True) offers no listing, and "
        f"the group / has no consolidated metadata to name the nodes below it: consolidate it "
        f"where it is written (zarrx consolidate, zarrx.consolidate_metadata), or {command} "
        f"its arrays by their paths\n")
    assert not (tmp_path / "out.zarr").exists()
    assert cli.main([command, f"{url}/t.zarr/a"] +
                    ([str(tmp_path / "a.zarr")] if command == "copy" else [])) == 0


def test_info_of_a_group_without_listings_or_consolidated_metadata_shows_the_rest(
        site, capsys):
    """`zarrx info` of such a group failed with the listing error; it shows what it knows."""
    import json

    from zarrx import cli
    path, url = site
    _unlisted_tree(path / "t.zarr", 3, consolidated=False)
    assert cli.main(["info", f"{url}/t.zarr"]) == 0
    out = capsys.readouterr().out
    reason = (f"ObjectStore('{url}/t.zarr', read_only=True): cannot list '<root>': the server "
              f"offers no listing (405); open hierarchies with consolidated metadata there")
    assert f"Members      : unknown ({reason})\n" in out and "Consolidated : no" in out
    assert cli.main(["info", "--json", f"{url}/t.zarr"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["arrays"], info["groups"], info["members_unknown"]) == (None, None, reason)


@pytest.mark.parametrize("extra", [-10, 10], ids=["short", "long"])
def test_a_part_read_of_a_chunk_of_the_wrong_size_is_refused_without_a_head(site, monkeypatch,
                                                                             extra):
    """A read of a few cells of a huge raw chunk fetches their bytes alone; the chunk's size
    comes from that answer (its Content-Range), and one that is not a chunk's is refused as
    a whole read refuses it."""
    from zarrx import chunk_io
    from zarrx.errors import CodecError
    monkeypatch.setattr(chunk_io, "RANGED_RAW_BYTES", 1)
    path, url = site
    zarrx.create_array(str(path / "a.zarr"), shape=(64,), chunks=(64,), dtype="u1",
                       compressors=None)[...] = np.arange(64, dtype="u1")
    store = ObjectStore(f"{url}/a.zarr")
    z = zarrx.open_array(store, mode="r")
    assert z[5] == 5 and z[4:6].tolist() == [4, 5]
    assert store.requests["HEAD"] == 0
    (path / "a.zarr" / "c" / "0").write_bytes(bytes(64 + extra))
    for read in (lambda: z[4:6], lambda: z[5], lambda: z[[4, 5]]):
        with pytest.raises(CodecError) as info:
            read()
        assert str(info.value) == (f"array '/' chunk 'c/0' (at {url}/a.zarr/c/0): expected "
                                   f"64 bytes for a chunk of shape (64,) and data type uint8, "
                                   f"found {64 + extra}")
    # one HEAD per error, asking the Content-Type to explain it (a web page?); none to read
    assert store.requests["HEAD"] == 3


@pytest.mark.parametrize("backend", [ObjectStore, FsspecStore])
def test_trailing_slashes_of_an_http_url_name_the_same_node(site, backend):
    """``https://host/data.zarr//`` is ``https://host/data.zarr`` for both backends (obstore
    refused the empty path segment)."""
    path, url = site
    arrays = _write_tree(path / "data.zarr", 3)
    g = zarrx.open_group(backend(f"{url}/data.zarr//", read_only=True), mode="r")
    np.testing.assert_array_equal(g["plain"][2:5, 7], arrays["plain"][2:5, 7])
    a = zarrx.open_array(f"{url}/data.zarr/sharded//", mode="r")
    np.testing.assert_array_equal(a[40:50, 3], arrays["sharded"][40:50, 3])


@pytest.mark.parametrize("backend", [ObjectStore, FsspecStore])
@pytest.mark.parametrize("name", ["100%.zarr", "a%zz.zarr", "%.zarr", "a%2.zarr"])
def test_a_percent_sign_that_starts_no_escape_names_itself(site, backend, name):
    """A '%' of an HTTP URL not followed by two hex digits is the character itself, as fsspec
    sends it; obstore sent it alone, and the server answered HTTP 400."""
    path, url = site
    arrays = _write_tree(path / name, 3)
    g = zarrx.open_group(backend(f"{url}/{name}", read_only=True), mode="r")
    np.testing.assert_array_equal(g["plain"][2:5, 7], arrays["plain"][2:5, 7])
    a = zarrx.open_array(f"{url}/{name}/sharded", mode="r")
    np.testing.assert_array_equal(a[40:50, 3], arrays["sharded"][40:50, 3])
