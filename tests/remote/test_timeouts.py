"""The timeouts of remote stores: 0 is no limit for both backends, any finite number of
seconds works, and what no backend can wait for is refused when the store is made."""
from __future__ import annotations

import os
import uuid

import pytest

from zarrx.errors import StoreError

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")
pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402

BACKENDS = {"obstore": ObjectStore, "fsspec": FsspecStore}


@pytest.fixture
def served(http_server, http_root):
    """The URL of a folder on the web server holding the object ``k``."""
    name = uuid.uuid4().hex[:10]
    (http_root / name).mkdir()
    os.chmod(http_root / name, 0o755)
    (http_root / name / "k").write_bytes(b"value")
    return f"{http_server.url}/{name}"


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("name", ["timeout", "connect_timeout"])
@pytest.mark.parametrize("seconds", [0, 0.0, 1e30, 10 ** 12])
def test_no_limit_and_long_timeouts_read(served, backend, name, seconds):
    """0 waits without limit (before, with obstore: every request timed out at once), and a
    very long wait is a long wait (before, with obstore: an OverflowError, or the value
    refused as an unreadable duration)."""
    assert BACKENDS[backend](served, **{name: seconds}).get("k") == b"value"


@pytest.mark.parametrize("backend", list(BACKENDS))
@pytest.mark.parametrize("name", ["timeout", "connect_timeout", "backoff", "max_backoff",
                                  "revalidate_after", "batch_delay"])
def test_waits_that_are_not_finite_are_refused(served, backend, name):
    """(before: an infinite timeout raised OverflowError, not a ZarrError, at the first
    request.)"""
    with pytest.raises(StoreError, match=f"RemoteOptions.{name}: expected a finite number "
                                         f"of seconds, found inf"):
        BACKENDS[backend](served, **{name: float("inf")})


def test_a_conditional_delete_without_a_time_limit(s3_server):
    """ObjectStore's conditional delete (its own request) waits without limit too (before: a
    timeout of 0 made its socket non-blocking, and every delete failed)."""
    store = ObjectStore(s3_server.url(), storage_options=s3_server.options, timeout=0)
    gen = store.set_if("k", b"value", None)
    store.delete_if("k", gen)
    assert store.get("k") is None
