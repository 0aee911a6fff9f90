"""The ``zarrx`` command between a directory and S3: one set of ``-S`` options names the
bucket's store, and the local side takes none."""
from __future__ import annotations

import numpy as np

import zarrx
from zarrx import cli


def _options(s3_server):
    return [f"-S{k}={v}" for k, v in s3_server.options.items()]


def test_copy_and_convert_between_a_directory_and_s3_with_one_set_of_options(
        tmp_path, s3_server, capsys):
    src = tmp_path / "src.zarr"
    g = zarrx.open_group(str(src), mode="w", attributes={"title": "t"})
    g.create_array("a", shape=(6, 4), dtype="i4", chunks=(2, 2))[...] = \
        np.arange(24).reshape(6, 4)
    url = s3_server.url()
    opts = _options(s3_server)
    assert cli.main(["copy", str(src), url, "-q", *opts]) == 0
    assert cli.main(["convert", url, str(tmp_path / "back.zarr"), "--zarr-format", "2", "-q",
                     *opts]) == 0
    assert capsys.readouterr().err == ""
    back = zarrx.open_group(str(tmp_path / "back.zarr"), mode="r")
    assert back.zarr_format == 2 and dict(back.attrs) == {"title": "t"}
    np.testing.assert_array_equal(back["a"][...], np.arange(24).reshape(6, 4))
    assert cli.main(["info", "--json", f"{url}/a", *opts]) == 0
    assert '"shape": [\n    6,\n    4\n  ]' in capsys.readouterr().out


def test_a_destination_inside_an_array_on_s3_is_refused(tmp_path, s3_server, capsys):
    # a URL is its store's root: without a look at the prefixes above it, the node was
    # written as a hierarchy of its own among the array's chunks
    src = tmp_path / "src.zarr"
    zarrx.open_group(str(src), mode="w").create_array("a", shape=(4,), dtype="i4")
    url = s3_server.url()
    opts = _options(s3_server)
    assert cli.main(["copy", str(src), url, "-q", *opts]) == 0
    for v2 in (False, True):
        if v2:
            assert cli.main(["convert", str(src), url + "/v2", "--zarr-format", "2", "-q",
                             *opts]) == 0
        array = f"{url}/v2/a" if v2 else f"{url}/a"
        for cmd in ("copy", "convert"):
            assert cli.main([cmd, str(src), f"{array}/new/x", "-q", *opts]) == 3
            assert capsys.readouterr().err == (
                f"zarrx: '{array}/new/x': cannot write a node inside the array at "
                f"'{array}' (an array has no children)\n")
    store = zarrx.store.make_store(url, "r", storage_options=s3_server.options)
    assert not [k for k in store.list() if "/new/" in k]
    # beside the array, in a group, a new node is written
    assert cli.main(["copy", str(src), f"{url}/b", "-q", *opts]) == 0
    assert zarrx.open_group(f"{url}/b", mode="r", storage_options=s3_server.options)["a"].shape \
        == (4,)


def test_a_url_with_one_slash_is_refused_not_made_a_local_folder(tmp_path, monkeypatch, capsys):
    # s3:/bucket (one slash) named a local folder s3: in the working directory: a copy wrote
    # there, and info said only that there was no such directory
    src = tmp_path / "src.zarr"
    zarrx.open_group(str(src), mode="w").create_array("a", shape=(4,), dtype="i4")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    capsys.readouterr()
    assert cli.main(["copy", str(src), "s3:/bucket/data.zarr", "-q"]) != 0
    assert cli.main(["info", "s3:/bucket/data.zarr"]) != 0
    err = capsys.readouterr().err
    assert err.count("a path starting with 's3:/' is not a URL (a URL has two slashes after "
                     "'s3:'): write 's3://bucket/data.zarr'") == 2
    assert list(work.iterdir()) == []
