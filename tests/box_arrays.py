"""What the box read and box write tests share: raw chunks in a LocalStore at ``g/a``, box
selections drawn by hypothesis, and the trial of whole-chunk and single-cell writers."""
from __future__ import annotations

import threading

import numpy as np

import zarrx
from zarrx import batch_merge
from zarrx.store import LocalStore


def raw_array(path, shape, chunks, dtype="f4", fmt=3, sep="/", fill=7, **kw):
    enc = {"name": "default" if fmt == 3 else "v2", "separator": sep}
    return zarrx.create_array(LocalStore(path), name="g/a", shape=shape, chunks=chunks,
                              dtype=dtype, zarr_format=fmt, fill_value=fill, compressors=None,
                              chunk_key_encoding=enc, **kw)


def draw_box(draw, st, shape) -> tuple:
    """A selection of integers and step-1 slices (maybe empty) over ``shape``."""
    sel = []
    for n in shape:
        if draw(st.booleans()) and draw(st.booleans()):
            sel.append(draw(st.integers(-n, n - 1)))
        else:
            a = draw(st.integers(0, n))
            sel.append(slice(a, draw(st.integers(a, n))))
    return tuple(sel)


def box_write_case(shape, sel, dtype, kind, before):
    """What a comparison of box writes with the general path writes: the array's earlier cells
    (``base``, written first when ``before``; else the array holds its fill value 7), the value
    written into ``sel`` (``kind``: ``data``; ``fill``, all 7; ``scalar``; or ``some fill``,
    data whose first third is 7) and the cells expected afterwards."""
    base = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype) + 1
    ref = np.full(shape, 7, dtype)
    if before:
        ref[...] = base
    target = ref[sel]
    data = (np.arange(target.size).reshape(target.shape) * 3).astype(dtype) + 100
    if kind == "some fill" and data.size:
        data.reshape(-1)[: max(1, data.size // 3)] = 7       # whole chunks of fill, maybe
    value = {"data": data, "some fill": data, "fill": np.full(target.shape, 7, dtype),
             "scalar": np.dtype(dtype).type(42)}[kind]
    ref[sel] = value
    return base, value, ref


def stored_both_ways(monkeypatch, make, sel, value, ref, base, before, threads,
                     way_off="write_box") -> None:
    """Write ``value`` into ``sel`` of a fresh array through the box write, then of another
    with ``zarrx.box_write.<way_off>`` turned off (the general path), each after writing
    ``base`` when ``before``; check each array reads back ``ref`` from a new handle and that
    both stored the same objects. ``make(way)`` returns ``(array, reopen, objects)``: the new
    array, a function opening it anew, and one returning its stored objects by key."""
    from zarrx import box_write

    stored = {}
    for way in ("box", "general"):
        z, reopen, objects = make(way)
        if before:
            z[...] = base
        with monkeypatch.context() as m:
            if way == "general":
                m.setattr(box_write, way_off, lambda io, plan, value: False)
                m.setattr(batch_merge, "ENABLED", False)      # partial chunks one by one
            with zarrx.config.set(threads=threads):
                z[sel] = value
        np.testing.assert_array_equal(reopen()[...], ref)
        stored[way] = objects()
    assert stored["box"] == stored["general"]


def whole_and_cell_writers(z, rounds: int) -> None:
    """One thread replaces the one-chunk, int32, 1-d array ``z`` whole ``rounds`` times (value
    k in round k), four others write single cells 0 to 3 of it meanwhile (a read-modify-write
    conditioned on the stored generation). Once all are done, every cell must hold the last
    whole value or a later cell write, never an older whole value brought back by a
    read-modify-write that missed a replacement; checked here."""
    n, done = z.shape[0], threading.Event()

    def whole() -> None:
        for k in range(1, rounds + 1):
            z[...] = np.full(n, k, "i4")
        done.set()

    def cells(j: int) -> None:
        i = 0
        while not done.is_set():
            i += 1
            z[j] = -(1000 * j + i)

    ts = [threading.Thread(target=whole)] + [threading.Thread(target=cells, args=(j,))
                                              for j in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    got = z[...]
    assert (got[4:] == rounds).all()
    for j in range(4):
        assert got[j] == rounds or -(1000 * j + 10**6) < got[j] < -(1000 * j)
