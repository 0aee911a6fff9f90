"""Box writes: a selection that is one box of cells, written through the chunk source's box
writer.

When every chunk is raw and stored as an object of its own, and the store offers a writer
(``LocalStore``'s is a Cython kernel), each chunk the box covers whole is gathered from the
value and written with no Python object per chunk, the threads each taking a range of chunks
without the GIL. Chunks the writer leaves (covered in part, all fill, or an error to word) go
through :func:`zarrx.chunk_io.write_from`, which merges, deletes or reports them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx import _pool
from zarrx.box_read import BOX_TASK_BYTES
from zarrx.chunk_io import ArrayIO, write_from

__all__ = ["write_box"]


def write_box(io: ArrayIO, plan: Any, value: np.ndarray) -> bool:
    """Write ``value`` (broadcast to the selection's shape, of the array's dtype) into the box
    of ``plan`` (a :class:`~zarrx.indexing.SelectionPlan`) through the chunk source's box
    writer. Chunks it leaves go through :func:`write_from`. False, having written nothing,
    when the array, the selection, the value or the store do not allow it."""
    box = plan.box
    if box is None or not io.box_ok or value.dtype != io.dtype:
        return False
    chunk = io.chunk_shape
    if any(b // c <= -(-a // c) for (a, b), c in zip(box, chunk)):
        return False                # no chunk is covered whole: all of it is the general path's
    fill = None if io.write_empty_chunks else io.fill_bytes
    if fill is not None and io.fill_is_nan:
        return False                # any NaN is fill there, whatever its bits: the general path
    writer = io.source.box_writer()
    if writer is None:
        return False
    start = tuple([a for a, _ in box])
    src = value.reshape([b - a for a, b in box])     # only axes of one cell differ: a view
    n = plan.nchunks
    writer.prepare([a // c for a, c in zip(start, chunk)],
                   [(b - 1) // c - a // c + 1 for (a, b), c in zip(box, chunk)])
    per_task = max(1, BOX_TASK_BYTES // max(1, io.plan(chunk).nbytes))
    left = _pool.run_ranges(
        lambda lo, hi: writer(src, start, chunk, fill, io.scratch(chunk), lo, hi), n, per_task)
    if left:
        chunks = plan.chunks
        write_from(io, [chunks[i] for i in left], value, flat=plan.flat)
    return True
