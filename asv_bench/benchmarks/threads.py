"""Threads: decoding scales with threads because the codecs release the GIL.

``ArrayThreads`` reads a compressed array with ``zarrx.config.threads`` = 1 and 2.
``LocalWriteBehind`` writes into a local directory with ``threads=1``, storing on the calling
thread or on an I/O thread while the next chunk or shard is encoded (``write_behind``).
``ReleaseGIL`` follows pandas' gil.py: the same bare zstd decodes run on one Python thread or
split across two; if the GIL is held, two threads take as long as one.
"""
from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable

import numpy as np

from . import _common  # isort: skip - makes zarrx importable from an in-place build
import zarrx  # noqa: E402


class ArrayThreads:
    """Whole-array read and write of 2048×2048 float32 (16 MiB), chunks 256×256."""

    params = ([1, 2], ["zstd-0", "gzip-1", "blosc-lz4"])
    param_names = ["threads", "codec"]

    def setup(self, threads: int, codec: str) -> None:
        self.values = _common.data(2048)
        self.store, self.z = _common.array(self.values, (2048, 2048), (256, 256), codec)
        self._old = zarrx.config.get("threads")
        zarrx.config.set(threads=threads)

    def teardown(self, threads: int, codec: str) -> None:
        zarrx.config.set(threads=self._old)

    def time_read(self, threads: int, codec: str) -> None:
        self.z[...]

    def time_write(self, threads: int, codec: str) -> None:
        self.z[...] = self.values


class LocalWriteBehind:
    """Whole-array write of 2048×2048 float32 (16 MiB) into a fresh local directory with
    ``threads=1``: chunks 256×256, unsharded or in 1024×1024 shards."""

    params = ([False, True], ["zstd-0", "sharded zstd-0", "sharded raw"])
    param_names = ["write_behind", "case"]

    def setup(self, write_behind: bool, case: str) -> None:
        self.values = _common.data(2048)
        self.codec = case.replace("sharded ", "")
        self.shards = (1024, 1024) if case.startswith("sharded") else None
        self.dir = tempfile.mkdtemp(prefix="zarrx-asv-")
        self.n = 0
        self._old = {k: zarrx.config.get(k) for k in ("threads", "write_behind")}
        zarrx.config.set(threads=1, write_behind=write_behind)

    def teardown(self, write_behind: bool, case: str) -> None:
        zarrx.config.set(**self._old)
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_write(self, write_behind: bool, case: str) -> None:
        self.n += 1
        z = zarrx.create_array(f"{self.dir}/{self.n}", shape=(2048, 2048), dtype="float32",
                               chunks=(256, 256), shards=self.shards,
                               compressors=_common.compressors(self.codec))
        z[...] = self.values


def _run_threads(n: int, work: list[Callable[[], None]]) -> None:
    parts = [work[i::n] for i in range(n)]
    if n == 1:
        for fn in parts[0]:
            fn()
        return
    ts = [threading.Thread(target=lambda p=p: [fn() for fn in p]) for p in parts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


class ReleaseGIL:
    """64 bare decodes of a 256 KiB chunk, on 1 or 2 Python threads."""

    params = ([1, 2], ["zstd-0", "gzip-1", "blosc-lz4"])
    param_names = ["threads", "codec"]

    def setup(self, threads: int, codec: str) -> None:
        from .codecs import _bare
        compress, decompress_into = _bare(codec)
        src = np.ascontiguousarray(_common.data(256)).reshape(-1).view(np.uint8)
        blob = compress(src)
        outs = [np.ones_like(src) for _ in range(64)]     # pages mapped before timing
        self.work = [lambda o=o: decompress_into(blob, o) for o in outs]

    def time_decode(self, threads: int, codec: str) -> None:
        _run_threads(threads, self.work)
