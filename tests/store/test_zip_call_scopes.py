"""Which failed call discards which zip archive (``zarrx/store/call_stores.py``): a call
zarrx makes on behalf of another shares its fate, but a call the user's own code makes while
another call runs (a source's ``__array__``, a dask task run on the calling thread) is a call
of its own: its archive is in place once it returns, and stays when the call around it fails.
A thread running in a context copied from a call (as Python 3.14 starts threads on
free-threaded builds), and a process forked while a call runs, make calls of their own too."""
from __future__ import annotations

import contextvars
import gc
import os
import threading
import weakref
import zipfile

import numpy as np
import pytest

import zarrx
from call_counts import calls_made


def _entries(path) -> list[str] | None:
    return sorted(zipfile.ZipFile(path).namelist()) if path.exists() else None


class _Source:
    """An array-like whose values come from ``values()``, called by the call reading it."""

    shape, dtype = (3,), np.dtype("i4")

    def __init__(self, values):
        self.values = values

    def __array__(self, dtype=None, copy=None):
        return self.values()


def test_a_call_made_by_a_source_the_call_reads_keeps_its_archive(tmp_path):
    inner, outer = tmp_path / "inner.zip", tmp_path / "outer.zip"
    seen = []

    def values():
        zarrx.save_array(str(inner), np.arange(3))      # the user's own call: it succeeds
        gc.collect()
        seen.append(_entries(inner))
        raise ValueError("the source fails")

    with pytest.raises(ValueError, match="the source fails"):
        zarrx.from_array(str(outer), data=_Source(values))
    gc.collect()
    assert seen == [["c/0", "zarr.json"]]                # in place once save_array returned
    assert _entries(inner) == ["c/0", "zarr.json"]       # and kept when from_array failed
    assert zarrx.open_array(str(inner), mode="r")[:].tolist() == [0, 1, 2]
    assert not outer.exists()                            # from_array's own: discarded


def test_archives_saved_by_dask_tasks_on_the_calling_thread_stay_when_the_write_fails(
        tmp_path):
    da = pytest.importorskip("dask.array")
    import dask

    import zarrx.dask as zd
    saved = []

    def step(block, block_info=None):
        i = block_info[0]["chunk-location"][0]
        part = tmp_path / f"part{i}.zip"
        zarrx.save(str(part), block)
        saved.append(part)
        if i == 1:
            raise ValueError("block 1 fails")
        return block

    blocks = da.arange(4, chunks=2).map_blocks(step, dtype=int)
    with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="block 1 fails"):
        zd.to_zarrx(blocks, str(tmp_path / "out.zip"))
    gc.collect()
    assert saved
    for part in saved:
        assert _entries(part) == ["c/0", "zarr.json"]
    # to_zarrx's own archive (opened by the open_array it makes): discarded
    assert not (tmp_path / "out.zip").exists()


def test_a_thread_in_a_context_copied_from_a_call_makes_calls_of_its_own(tmp_path):
    copied = []
    zarrx.from_array(str(tmp_path / "a.zip"),
                     data=_Source(lambda: copied.append(contextvars.copy_context())
                                  or np.arange(3)))
    stores = []

    def fails():
        raise ValueError("no values")

    def work():
        with pytest.raises(ValueError, match="no values"):
            zarrx.save_array(str(tmp_path / "failed.zip"), _Source(fails))
        stores.append(weakref.ref(zarrx.open_group(str(tmp_path / "kept.zip"),
                                                   mode="w").store))

    thread = threading.Thread(target=copied[0].run, args=(work,))
    thread.start()
    thread.join()
    gc.collect()
    assert stores[0]() is None                           # nothing holds the store it opened
    assert not (tmp_path / "failed.zip").exists()        # its failed call: discarded
    assert _entries(tmp_path / "kept.zip") == ["zarr.json"]
    assert copied                                        # (the context, still alive)



def test_a_store_the_users_code_opens_while_a_call_runs_is_the_users(tmp_path):
    mine = []

    def values():
        store = zarrx.storage.make_store(str(tmp_path / "mine.zip"), "w")
        zarrx.create_group(store, attributes={"kept": True})
        mine.append(store)
        raise ValueError("the source fails")

    with pytest.raises(ValueError, match="the source fails"):
        zarrx.from_array(str(tmp_path / "outer.zip"), data=_Source(values))
    zarrx.create_array(mine[0], name="a", shape=(2,), dtype="i1")    # still open
    mine[0].close()
    assert _entries(tmp_path / "mine.zip") == ["a/zarr.json", "zarr.json"]
    assert not (tmp_path / "outer.zip").exists()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_process_forked_while_a_call_runs_makes_calls_of_its_own(tmp_path):
    """As multiprocessing's fork workers started inside a call (dask's processes scheduler
    with the fork context): the child's calls are not the parent's call's."""
    def child():
        with pytest.raises(ValueError, match="no values"):
            zarrx.save_array(str(tmp_path / "failed.zip"), _Source(fails))
        zarrx.save_array(str(tmp_path / "saved.zip"), np.arange(3))
        gc.collect()

    def fails():
        raise ValueError("no values")

    def values():
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:                                   # pragma: no cover - the child
            os.close(r)
            try:
                child()
                msg = "ok"
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                msg = f"{type(exc).__name__}: {exc}"
            os.write(w, msg.encode()[:4000])
            os._exit(0)                                # (no finalizer runs: as a worker)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            reported.append(f.read().decode())
        os.waitpid(pid, 0)
        return np.arange(3)

    reported = []
    zarrx.from_array(str(tmp_path / "outer.zip"), data=_Source(values))
    gc.collect()
    assert reported == ["ok"]
    # the child's successful call put its archive in place, its failed one left nothing
    # (before: both left only temporary archives, the successful call's entries lost)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outer.zip", "saved.zip"]
    assert zarrx.open_array(str(tmp_path / "saved.zip"), mode="r")[:].tolist() == [0, 1, 2]


def test_a_call_that_opens_no_archive_pays_one_call_for_its_scope():
    """``open_array`` and the others run on hot paths: the scope of a call is one list in its
    frame, looked for only when an archive is opened (before: a scope object, the thread and
    process ids, the frame and a context variable set and reset, about 1 µs a call)."""
    store = zarrx.storage.MemoryStore()
    zarrx.create_array(store, shape=(4,), dtype="i4")
    bare = zarrx.api.open_array.__wrapped__
    bare(store, mode="r")                                   # (what a first open caches)
    wrapped = calls_made(lambda: zarrx.open_array(store, mode="r"))
    assert wrapped == calls_made(lambda: bare(store, mode="r")) + 1   # the wrapper itself


def test_an_asyncio_task_started_by_a_failing_call_makes_calls_of_its_own(tmp_path):
    """A task copies the context of the code that creates it; a call the task makes later,
    after the call around its creation failed, keeps its archive."""
    import asyncio

    async def main():
        tasks = []

        def values():
            tasks.append(asyncio.get_running_loop().create_task(later()))
            raise ValueError("the source fails")

        async def later():
            zarrx.save_array(str(tmp_path / "task.zip"), np.arange(3))

        with pytest.raises(ValueError, match="the source fails"):
            zarrx.from_array(str(tmp_path / "outer.zip"), data=_Source(values))
        await tasks[0]

    asyncio.run(main())
    gc.collect()
    assert _entries(tmp_path / "task.zip") == ["c/0", "zarr.json"]
    assert not (tmp_path / "outer.zip").exists()
