"""Folders old enough for the local read kernels to trust a listing of them: a listing of a
folder changed within the current tick of the coarse realtime clock (or within its file
system's timestamp granularity) is not trusted, and its keys are opened one by one
(``csrc/zx_dirlist.h``). Tests counting the opens a sparse read saves wait for that tick to
pass after writing; they wait on the clock, and assert nothing about time."""
from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from zarrx.store import _localbox, _localread

CLOCK_REALTIME_COARSE = getattr(time, "CLOCK_REALTIME_COARSE", 5)    # Linux's number
MOST_WAIT = 5.0         # seconds; past them the folders are left as they are


def recent(folder) -> bool:
    """Whether a listing of ``folder`` taken now is refused as too recent."""
    now = time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
    st = os.stat(folder)
    return _localread.stamps_recent(divmod(now, 10**9), divmod(st.st_ctime_ns, 10**9),
                                    divmod(st.st_mtime_ns, 10**9))


def settle(*roots) -> None:
    """Wait until no folder at or below ``roots`` changed too recently to be listed."""
    folders = [str(r) for r in roots]
    for r in roots:
        for top, dirs, _ in os.walk(r):
            folders.extend(os.path.join(top, d) for d in dirs)
    give_up = time.monotonic() + MOST_WAIT
    while any(recent(f) for f in folders) and time.monotonic() < give_up:
        time.sleep(0.001)


@contextmanager
def coarse_stamps(ns: int = 3600 * 10**9) -> Iterator[None]:
    """File systems whose timestamps step by ``ns`` (an hour): every folder or file changed
    within it is too recent for its timestamps to vouch for it."""
    before = [m.min_timestamp_grain(ns) for m in (_localread, _localbox)]
    try:
        yield
    finally:
        for m, old in zip((_localread, _localbox), before):
            m.min_timestamp_grain(old)
