"""URL forms and storage_options shapes copied from the fsspec, obstore and zarr-python docs:
each opens the data it names (on the loopback S3 server or local files), or fails with a
ZarrError naming the URL and what to do."""
from __future__ import annotations

import os
import pickle
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError


def _tree(where, storage_options=None):
    g = zarrx.open_group(where, mode="w", storage_options=storage_options)
    g.create_array("a", shape=(6,), chunks=(2,), dtype="i4")[...] = np.arange(6)
    return g


def _zarr_python_chain(zarr, url, storage_options):
    """zarr-python's group at ``simplecache::url``, whose s3 filesystem it makes anew and
    leaves in fsspec's instance cache, bound to its event loop (one an earlier test of the
    process left there for the same options may be bound to another event loop, on which
    zarr-python's own reads fail)."""
    import s3fs
    s3fs.S3FileSystem.clear_instance_cache()
    return zarr.open_group(f"simplecache::{url}", mode="r", storage_options=storage_options)


@pytest.fixture
def s3_tree(s3_server):
    pytest.importorskip("obstore")
    url = s3_server.url()
    _tree(url, s3_server.options)
    return url


@pytest.mark.parametrize("prefix", ["aws_", "AWS_", ""])
def test_obstore_client_keys_among_the_options(s3_server, s3_tree, prefix):
    """object_store's client settings written as its S3 keys (``aws_allow_http``, as the
    AWS_ALLOW_HTTP variable gives them) or bare (``timeout``) go to the client options;
    obstore failed on them with a Rust panic (not an Exception, not a ZarrError)."""
    so = {f"{prefix}endpoint" if prefix else "endpoint": s3_server.endpoint,
          f"{prefix}allow_http": "true", f"{prefix}timeout": "20s",
          "aws_access_key_id": s3_server.options["access_key_id"],
          "aws_secret_access_key": s3_server.options["secret_access_key"],
          "aws_region": s3_server.options["region"]}
    z = zarrx.open_group(s3_tree, mode="r", storage_options=so)["a"]
    assert z[...].tolist() == list(range(6))
    assert pickle.loads(pickle.dumps(z))[...].tolist() == list(range(6))


def test_a_client_option_given_twice_takes_client_options(s3_server, s3_tree):
    so = {**s3_server.options, "timeout": "not a duration",
          "client_options": {"timeout": "20s"}}
    assert zarrx.open_array(s3_tree, path="a", mode="r",
                            storage_options=so)[...].tolist() == list(range(6))


def test_an_obstore_panic_is_a_store_error(monkeypatch):
    """A configuration obstore panics on (a Rust panic, a BaseException) is a StoreError
    naming the URL, not an exception no ``except Exception`` catches."""
    obs = pytest.importorskip("obstore")

    class PanicException(BaseException):
        pass

    def panics(*args, **kwargs):
        raise PanicException("Expected config prefix to start with aws_")
    monkeypatch.setattr(obs.store, "from_url", panics)
    with pytest.raises(StoreError, match=r"ObjectStore\('s3://bucket/x'\): cannot configure the "
                                         r"store: PanicException: Expected config prefix"):
        zarrx.open_group("s3://bucket/x", mode="r", storage_options={"region": "eu-west-1"})


@pytest.fixture
def zipped(tmp_path):
    pytest.importorskip("fsspec")
    src = tmp_path / "src.zarr"
    _tree(str(src))
    path = tmp_path / "a b.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for root, _, files in os.walk(src):
            for name in files:
                zf.write(os.path.join(root, name), os.path.relpath(os.path.join(root, name), src))
    return path


@pytest.mark.parametrize("form", ["absolute", "relative", "home"])
def test_a_chain_ending_at_a_local_path(zipped, monkeypatch, form):
    """``zip::/data/a.zip`` (an fsspec chain whose last link is a path, as zarr-python and
    fsspec open it) is ``zip::file:///data/a.zip``, not a local folder named ``zip::...``."""
    monkeypatch.chdir(zipped.parent)
    monkeypatch.setenv("HOME", str(zipped.parent))
    last = {"absolute": str(zipped), "relative": zipped.name, "home": f"~/{zipped.name}"}[form]
    g = zarrx.open_group(f"zip::{last}", mode="r")
    assert g["a"][...].tolist() == list(range(6))
    assert repr(g.store).endswith(f"::file://{zipped}', read_only=True)")
    with pytest.raises(zarrx.ReadOnlyError):
        zarrx.open_group(f"zip::{last}", mode="w")


def test_a_path_with_double_colons_stays_a_path(tmp_path, monkeypatch):
    """Only a chain whose first link is an fsspec protocol is one: ``a::b`` is a folder."""
    pytest.importorskip("fsspec")
    monkeypatch.chdir(tmp_path)
    _tree("notaprotocol::b")
    assert (tmp_path / "notaprotocol::b" / "zarr.json").is_file()
    assert zarrx.open_group("notaprotocol::b", mode="r")["a"][...].tolist() == list(range(6))


def test_a_dir_chain_is_rooted_at_its_url(tmp_path):
    """``dir::file:///data/x.zarr`` is a DirFileSystem rooted at ``/data/x.zarr`` with the
    store at its root (fsspec hands back the same path again, which read
    ``/data/x.zarr/data/x.zarr``: no group); a ``path`` given for it roots it there."""
    pytest.importorskip("fsspec")
    where = tmp_path / "x.zarr"
    _tree(str(where))
    assert zarrx.open_group(f"dir::file://{where}", mode="r")["a"][...].tolist() == [0, 1, 2,
                                                                                   3, 4, 5]
    z = zarrx.open_array(f"dir::file://{where}", path="a", mode="r")
    assert pickle.loads(pickle.dumps(z))[...].tolist() == list(range(6))
    g = zarrx.open_group(f"dir::file://{where}", mode="r",
                         storage_options={"dir": {"path": str(tmp_path)}})
    assert g["a"][...].tolist() == list(range(6))


def test_a_dir_chain_writes_a_new_folder(tmp_path):
    pytest.importorskip("fsspec")
    where = tmp_path / "new.zarr"
    _tree(f"dir::file://{where}")
    assert zarrx.open_array(str(where), path="a", mode="r")[...].tolist() == list(range(6))


def _cached_options(kind, s3_server, tmp_path):
    so = {"s3": s3_server.fsspec_options}
    if kind != "simplecache":
        so[kind] = {"cache_storage": str(tmp_path / "cache")}
    return so


@pytest.mark.parametrize("kind", ["simplecache", "filecache", "blockcache"])
def test_writing_through_a_cached_url(s3_server, tmp_path, kind):
    """mode "w" on ``simplecache::s3://...`` (and filecache, blockcache) writes, as zarr-python
    does (zarrx failed listing the folder to clear it with a bare AttributeError), and a
    chunk updated in part twice keeps both updates: the cached copy of each key written is
    dropped (zarr-python read the first update's cached chunk back and lost it)."""
    pytest.importorskip("s3fs")
    url = s3_server.url()
    so = _cached_options(kind, s3_server, tmp_path)
    g = zarrx.open_group(f"{kind}::{url}", mode="w", storage_options=so)
    a = g.create_array("a", shape=(4,), chunks=(4,), dtype="i1", fill_value=0)
    a[0] = 1
    a[1] = 2
    a[2] = 3
    assert a[...].tolist() == [1, 2, 3, 0]
    plain = zarrx.open_array(url, path="a", mode="r", storage_options=s3_server.fsspec_options)
    assert plain[...].tolist() == [1, 2, 3, 0]
    z = zarrx.open_array(f"{kind}::{url}", path="a", mode="r", storage_options=so)
    assert pickle.loads(pickle.dumps(z))[...].tolist() == [1, 2, 3, 0]
    zarrx.open_group(f"{kind}::{url}", mode="w", storage_options=so)     # clears the tree
    assert "a" not in zarrx.open_group(url, mode="r", storage_options=s3_server.fsspec_options)


@pytest.mark.filterwarnings("ignore::UserWarning")       # zarr-python's, on caching filesystems
def test_a_cached_url_after_another_library_opened_it(s3_server):
    """The s3 filesystem of ``simplecache::s3://...`` is zarrx's own, configured as for
    ``s3://...``: fsspec handed over the instance zarr-python had made for the same options
    on its own event loop, and every read failed (HTTPClientError, after 5 attempts)."""
    pytest.importorskip("s3fs")
    zarr = pytest.importorskip("zarr")
    url = s3_server.url()
    _tree(url, s3_server.options)
    so = {"s3": s3_server.fsspec_options}
    assert _zarr_python_chain(zarr, url, so)["a"][1] == 1
    g = zarrx.open_group(f"simplecache::{url}", mode="r", storage_options=so)
    assert g["a"][...].tolist() == list(range(6))
    assert g.store.fs.fs.retries == 1                # one attempt per call: zarrx retries


def test_options_a_caching_filesystem_would_ignore(s3_server, tmp_path):
    """The options of ``s3://`` given flat with ``simplecache::s3://...`` went to the caching
    filesystem, which ignores them (the read then failed for want of credentials, as in
    zarr-python): a StoreError naming them and where they go."""
    pytest.importorskip("s3fs")
    url = s3_server.url()
    _tree(url, s3_server.options)
    with pytest.raises(StoreError) as info:
        zarrx.open_group(f"simplecache::{url}", mode="r",
                         storage_options=s3_server.fsspec_options)
    secret = s3_server.fsspec_options["secret"]
    assert secret not in str(info.value)
    assert str(info.value) == (
        f"FsspecStore('simplecache::{url}'): storage_options client_kwargs, endpoint_url, key, "
        "secret: not options of SimpleCacheFileSystem (simplecache::), which would ignore "
        "them; options of the filesystem it caches go under its protocol: "
        "storage_options={'s3': {...}}, as fsspec takes them")
    so = {"s3": s3_server.fsspec_options, "cache_storage": str(tmp_path / "c"),
          "filecache": {"expiry_time": 60}}
    g = zarrx.open_group(f"filecache::{url}", mode="r", storage_options=so)
    assert g["a"][...].tolist() == list(range(6))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape", ["remote_options", "fs"])
def test_references_to_s3_after_another_library_opened_it(s3_server, shape):
    """``reference://`` with targets on S3 (``remote_protocol="s3"`` and ``remote_options``,
    or ``fs={"s3": ...}``) reads them through zarrx's own s3 filesystem: fsspec handed over
    the one zarr-python had made for the same options on its event loop, and reads failed."""
    pytest.importorskip("s3fs")
    zarr = pytest.importorskip("zarr")
    url = s3_server.url()
    _tree(url, s3_server.options)
    opts = s3_server.fsspec_options
    # zarr-python's s3 filesystem of a chain is made with these very options
    assert _zarr_python_chain(zarr, url, {"s3": opts})["a"][1] == 1
    s3 = zarrx.open_group(url, mode="r", storage_options=s3_server.options).store
    refs = {"version": 1, "refs": {
        k: s3.get(k).decode() if k.endswith("zarr.json") else [f"{url}/{k}"]
        for k in s3.list_prefix("")}}
    so = {"fo": refs, "remote_protocol": "s3", "remote_options": opts} \
        if shape == "remote_options" else {"fo": refs, "fs": {"s3": opts}}
    g = zarrx.open_group("reference://", mode="r", storage_options=so)
    assert g["a"][...].tolist() == list(range(6))


def test_a_path_starting_with_a_tilde_names_the_home_folder_meant(tmp_path, monkeypatch):
    """``~/x.zarr`` is taken as written (as zarr-python takes it: a folder named ``~``), and
    the error of a missing node says which folder in the home directory was likely meant."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    _tree(str(tmp_path / "home" / "x.zarr"))
    with pytest.raises(zarrx.errors.GroupNotFoundError) as info:
        zarrx.open_group("~/x.zarr", mode="r")
    assert str(info.value).endswith(
        f"(no such directory: '{tmp_path}/~/x.zarr'; a path starting with '~' is taken as "
        f"written, not as the home directory: did you mean '{tmp_path}/home/x.zarr'? "
        f"(os.path.expanduser))")
    assert not (tmp_path / "~").exists()
