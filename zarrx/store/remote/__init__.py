"""Remote stores: object stores (S3, GCS, Azure), HTTP(S) servers and fsspec filesystems.

- :class:`ObjectStore` over obstore (the default for ``s3://``, ``gs://``, ``az://`` and
  ``http(s)://`` URLs when obstore is installed);
- :class:`FsspecStore` over any fsspec filesystem (the default for every other fsspec protocol,
  and for the schemes above when obstore is missing);
- :func:`open_url`: the store for a URL, as ``make_store`` uses it.

Both share :class:`~zarrx.store.remote.base.RemoteStore`: concurrent, coalesced requests,
ETag generations and conditional writes, retries, and pickling by configuration.
"""
from __future__ import annotations

from typing import Any

from zarrx.store.remote.options import RemoteOptions

__all__ = ["ObjectStore", "FsspecStore", "RemoteOptions", "open_url", "wrap_foreign"]


def __getattr__(name: str) -> Any:
    if name == "ObjectStore":
        from zarrx.store.remote.objectstore import ObjectStore
        return ObjectStore
    if name == "FsspecStore":
        from zarrx.store.remote.fsspecstore import FsspecStore
        return FsspecStore
    raise AttributeError(name)


def open_url(url: str, *, read_only: bool, storage_options: dict | None = None) -> Any:
    """The store for a URL: obstore for the object-store and HTTP schemes when installed (else
    fsspec), fsspec for every other protocol (``memory://``, ``gcs://``, ``abfs://``, ...)."""
    from zarrx.store.remote.dispatch import open_url as _open
    return _open(url, read_only=read_only, storage_options=storage_options)


def wrap_foreign(obj: Any, *, read_only: bool) -> Any:
    """A zarrx store for a foreign store-like object (an fsspec mapper or filesystem, an
    obstore store, a zarr-python FsspecStore/ObjectStore), or None when ``obj`` is none."""
    from zarrx.store.remote.dispatch import wrap_foreign as _wrap
    return _wrap(obj, read_only=read_only)
