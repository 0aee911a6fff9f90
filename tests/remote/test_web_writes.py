"""Writing to an http:// or https:// URL is refused before any request, by the function
called, naming the URL (without its query) and where to write instead."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import ReadOnlyError

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[http]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402

HINT = ("an HTTP server is read-only (zarrx reads http:// and https:// URLs); to write, use an "
        "object store URL (s3://, gs://, az://) or a zarrx.store.ObjectStore or FsspecStore "
        "over a writable backend")
CALLS = {
    "open": lambda url, mode: zarrx.open(url, mode=mode),
    "open_group": lambda url, mode: zarrx.open_group(url, mode=mode),
    "open_array": lambda url, mode: zarrx.open_array(url, mode=mode, shape=(2,), dtype="i1"),
    "create_array": lambda url, mode: zarrx.create_array(url, shape=(2,), dtype="i1"),
    "create_group": lambda url, mode: zarrx.create_group(url),
    "save": lambda url, mode: zarrx.save(url, np.arange(2)),
}


@pytest.mark.parametrize("name, mode", [(n, m) for n in CALLS for m in ("w", "w-", "r+")
                                         if n.startswith("open") or m == "w"])
@pytest.mark.parametrize("url, shown", [
    ("http://127.0.0.1:9/x.zarr", "http://127.0.0.1:9/x.zarr"),
    ("https://user:secret@example.invalid/x.zarr?token=abc", "https://example.invalid/x.zarr"),
])
def test_writing_to_a_web_url_points_to_a_writable_store(name, mode, url, shown):
    with pytest.raises(ReadOnlyError) as info:
        CALLS[name](url, mode)
    assert str(info.value) == (f"{name}: ObjectStore({shown!r}, read_only=True) is read-only, "
                               f"cannot open it with mode {mode!r}: {HINT}")
    assert "secret" not in str(info.value) and "token" not in str(info.value)


def test_a_web_url_through_fsspec_points_to_a_writable_store_too():
    for url in ("simplecache::http://127.0.0.1:9/x.zarr", "http://127.0.0.1:9/x.zarr"):
        so = {"client_kwargs": {}} if url.startswith("http") else None
        with pytest.raises(ReadOnlyError) as info:
            zarrx.open(url, mode="w", storage_options=so)
        assert str(info.value).startswith("open: FsspecStore(")
        assert str(info.value).endswith(f"is read-only, cannot open it with mode 'w': {HINT}")


def test_web_stores_say_why_they_cannot_write():
    for store in (ObjectStore("https://example.invalid/x.zarr"),
                  FsspecStore("https://example.invalid/x.zarr")):
        assert store.read_only and store.read_only_reason == HINT
        with pytest.raises(ReadOnlyError) as info:
            store.set("zarr.json", b"{}")
        assert str(info.value) == (f"{store!r}: cannot write 'zarr.json': the store is "
                                   f"read-only: {HINT}")


@pytest.mark.parametrize("mode", ["w", "r+", "a"])
def test_a_web_store_object_opened_to_write_says_why_too(mode):
    """A store of an http(s) URL given as a store object, not a URL, is refused with the same
    reason (before: 'is read-only, cannot open it with mode ...', naming none)."""
    for store in (ObjectStore("https://example.invalid/x.zarr"),
                  FsspecStore("https://example.invalid/x.zarr")):
        with pytest.raises(ReadOnlyError) as info:
            zarrx.open(store, mode=mode)
        assert str(info.value) == (f"open: {store!r} is read-only, cannot open it with mode "
                                   f"{mode!r}: {HINT}")
