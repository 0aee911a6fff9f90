"""Box reads: a selection that is one box of cells, read through the chunk source's box reader.

When every chunk is raw and stored as an object of its own, and the store offers a reader
(``LocalStore``'s is a Cython kernel), the chunks are read straight into the output with no
Python object per chunk, the threads each taking a range of chunks without the GIL. Chunks the
reader leaves (an error to word) go through :func:`zarrx.chunk_read.read_into`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx import _pool
from zarrx.chunk_io import ArrayIO, check_count, read_scratch
from zarrx.chunk_read import read_into

__all__ = ["read_box"]

BOX_TASK_BYTES = 1 << 20     # a box read is split into tasks of about this many chunk bytes


def read_box(io: ArrayIO, plan: Any, out: np.ndarray) -> bool:
    """Read ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) into ``out`` through the chunk
    source's box reader, when the selection is a box and every chunk is raw and stored on its
    own: no Python object per chunk, and the threads read without the GIL. Chunks the reader
    leaves (an error to word) go through :func:`read_into`. False, having read nothing, when
    the array, the selection, ``out`` or the store do not allow it."""
    box = plan.box
    if box is None or not io.box_ok or out.dtype != io.dtype \
            or not (out.flags.c_contiguous and out.flags.writeable):
        return False
    reader = io.source.box_reader()
    if reader is None:
        return False
    check_count(io, plan.nchunks)
    start = tuple([a for a, _ in box])
    target = out.reshape([b - a for a, b in box])
    chunk, fill, n = io.chunk_shape, io.fill_bytes, plan.nchunks
    per_task = max(1, BOX_TASK_BYTES // max(1, io.plan(chunk).nbytes))
    # the scratch holds what one chunk's part inside the box spans in its file, not a chunk:
    # a small read of a huge chunk (or of a missing one) allocates little more than its output
    need = reader.scratch_size(chunk, target.shape, io.dtype.itemsize)
    left = _pool.run_ranges(
        lambda lo, hi: reader(target, start, chunk, fill, read_scratch(io, plan, lo, need),
                              lo, hi),
        n, per_task)
    if left:
        chunks = plan.chunks
        read_into(io, [chunks[i] for i in left], out)
    return True
