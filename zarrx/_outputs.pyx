# zarrx-sources: csrc/zx_outpool.c
"""The arrays reads return, in reused memory.

A read that returns a new array of :data:`MIN_SIZE` bytes or more allocates it through a numpy
memory handler (csrc/zx_outpool.c) that takes a block freed by an earlier such array when one
of a fitting size is there. Fresh memory is faulted in page by page on its first write, and
numpy's allocator gives a large freed array's memory back to the system: a program reading
arrays of the same size over and over (time steps, tiles, the blocks of a computation) would
otherwise pay for fresh pages on every read, often more than the copy into them costs. The
arrays are ordinary numpy arrays that own their data; numpy calls the handler to free them.

Freed blocks are kept up to ``zarrx.config.memory_pool`` bytes (by default an eighth of the
machine's memory, at most 1 GiB; 0 keeps none), the oldest released first; a change of the
setting applies at once, to the blocks pooled already too. :func:`trim` releases them all.
"""
import math

cimport numpy as cnp
import numpy as np
from cpython.pycapsule cimport PyCapsule_New

from zarrx._clib.zx_outpool cimport (
    zx_outpool_cached, zx_outpool_handler, zx_outpool_live, zx_outpool_set_limit,
    zx_outpool_trim,
)

from zarrx import config

cnp.import_array()

cdef extern from "numpy/arrayobject.h":
    object PyDataMem_SetHandler(object handler)

#: arrays smaller than this are allocated by numpy as usual (its allocator reuses small blocks)
MIN_SIZE = 1 << 20

cdef object _handler = PyCapsule_New(zx_outpool_handler(), "mem_handler", NULL)


def _apply_limit() -> None:
    """Give the pool the limit ``memory_pool`` sets now: blocks freed from now on are kept up
    to it, and those pooled over it are released at once. Another thread may change the
    setting and hand its value over between this one's read and its handing over, which would
    leave the pool with the replaced value: the setting is read again after each handing over,
    until it holds what was handed over (no lock, which a fork could leave taken)."""
    cdef size_t limit = <size_t>config.pool_limit()
    cdef size_t now
    while True:
        zx_outpool_set_limit(limit)
        now = <size_t>config.pool_limit()
        if now == limit:
            return
        limit = now


_apply_limit()
config.watch_pool(_apply_limit)


def empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` (C order), in pooled memory when it is large enough and its
    items hold no Python objects."""
    dt = np.dtype(dtype)
    if dt.itemsize * math.prod(shape) < MIN_SIZE or dt.hasobject or dt.kind == "T":
        return np.empty(shape, dtype=dt)
    if config.pool_limit() == 0:     # (the pool has the limit already: see _apply_limit)
        return np.empty(shape, dtype=dt)
    old = PyDataMem_SetHandler(_handler)
    try:
        return np.empty(shape, dtype=dt)
    finally:
        PyDataMem_SetHandler(old)


def pooled() -> tuple:
    """``(bytes, blocks)`` of data held in freed blocks kept for reuse (each block holds one
    page more, before its data, which ``memory_pool`` counts too)."""
    cdef size_t blocks = 0
    cdef size_t nbytes = zx_outpool_cached(&blocks)
    return nbytes, blocks


def live() -> int:
    """Blocks held by arrays not freed yet."""
    return zx_outpool_live()


def trim() -> int:
    """Release every pooled block to the system; returns how many bytes they held."""
    return zx_outpool_trim()
