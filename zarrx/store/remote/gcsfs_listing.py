"""The children of a folder in a GCS bucket for ``FsspecStore.list_dir`` over gcsfs: one
``objects.list`` request with ``delimiter=/`` (GCS's JSON API, through gcsfs's own requests:
its credentials, endpoint and ``requester_pays``), whose answer names the keys of the folder
(``items``) and each folder below it (``prefixes``) once, 1000 entries a page; walked by
:func:`zarrx.store.remote.dir_listing.children`, which keeps the full listing's bounds. A
page cut by a transient failure is asked for again by its ``pageToken``.

Each page is one attempt, within the store's ``timeout``, retried by the store as S3's pages
are: gcsfs's ``_request`` tries a 5xx or 429 up to 6 times itself, waiting about 33 s in
all, and waits for an answer without limit (gcsfs sets no ``requests_timeout``), so through
it a failing server held each of the store's attempts over half a minute, and a silent one
held the listing for ever. gcsfs fixes its number of attempts when it defines ``_request``:
its undecorated function is called."""
from __future__ import annotations

import functools
import json
from typing import Any

from zarrx.store.remote.dir_listing import Children, children

__all__ = ["gcs_children", "lists_gcs_children", "one_attempt"]

#: entries a page (GCS's most)
PAGE = 1000


def lists_gcs_children(fs: Any) -> bool:
    """Whether ``fs`` is gcsfs's filesystem (not listing object versions), whose ``_request``
    asks GCS's JSON API."""
    return type(fs).__module__.startswith("gcsfs.") and hasattr(fs, "_request") \
        and not getattr(fs, "version_aware", False)


def one_attempt(fs: Any) -> Any:
    """gcsfs's ``fs._request`` making one attempt (its function without gcsfs's retries),
    or ``fs._request`` as it is when there is no such function or ``fs`` has its own."""
    if "_request" in vars(fs):
        return fs._request
    raw = getattr(type(fs)._request, "__wrapped__", None)
    return functools.partial(raw, fs) if callable(raw) else fs._request


async def gcs_children(store: Any, folder: str, state: dict) -> Children:
    """The ``(keys, dirs)`` directly below the store's ``folder`` ("" or ending in "/") in
    its GCS bucket."""
    return await children(store, folder, state, _GCSPages)


class _GCSPages:
    by_token = True

    def __init__(self, store: Any, bucket: str, prefix: str) -> None:
        self.bucket, self.prefix = bucket, prefix or None
        self.request, self.bounded = one_attempt(store.fs), store._bounded

    async def fetch(self, after: str | None, token: str | None) -> Any:
        got = await self.bounded(self.request("GET", "b/{}/o", self.bucket, delimiter="/",
                                              prefix=self.prefix, maxResults=PAGE,
                                              pageToken=token))
        return got[3]                   # (status, headers, request, body)

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
