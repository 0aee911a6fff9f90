"""The children of a folder in a GCS bucket for ``FsspecStore.list_dir`` over gcsfs: one
``objects.list`` request with ``delimiter=/`` (GCS's JSON API, through gcsfs's own ``_call``:
its credentials, endpoint, ``requester_pays`` and retries), whose answer names the keys of the
folder (``items``) and each folder below it (``prefixes``) once, 1000 entries a page; walked
by :func:`zarrx.store.remote.dir_listing.children`, which keeps the full listing's bounds. A
page cut by a transient failure is asked for again by its ``pageToken``."""
from __future__ import annotations

import json
from typing import Any

from zarrx.store.remote.dir_listing import Children, children

__all__ = ["gcs_children", "lists_gcs_children"]

#: entries a page (GCS's most)
PAGE = 1000


def lists_gcs_children(fs: Any) -> bool:
    """Whether ``fs`` is gcsfs's filesystem (not listing object versions), whose ``_call``
    asks GCS's JSON API."""
    return type(fs).__module__.startswith("gcsfs.") and hasattr(fs, "_call") \
        and not getattr(fs, "version_aware", False)


async def gcs_children(store: Any, folder: str, state: dict) -> Children:
    """The ``(keys, dirs)`` directly below the store's ``folder`` ("" or ending in "/") in
    its GCS bucket."""
    return await children(store, folder, state, _GCSPages)


class _GCSPages:
    by_token = True

    def __init__(self, store: Any, bucket: str, prefix: str) -> None:
        self.fs, self.bucket, self.prefix = store.fs, bucket, prefix or None

    async def fetch(self, after: str | None, token: str | None) -> Any:
        _, body = await self.fs._call("GET", "b/{}/o", self.bucket, delimiter="/",
                                      prefix=self.prefix, maxResults=PAGE, pageToken=token)
        return body

    @staticmethod
    def read(page: Any) -> tuple[list[tuple[str, bool]], str | None]:
        got = json.loads(page)
        if not isinstance(got, dict):
            raise TypeError(f"a page is {type(got).__name__}, not an object")
        entries = [(item["name"], False) for item in got.get("items") or []]
        entries += [(name, True) for name in got.get("prefixes") or []]
        token = got.get("nextPageToken") or None
        if token is not None and not isinstance(token, str):
            raise TypeError(f"nextPageToken is {type(token).__name__}, not text")
        return entries, token
