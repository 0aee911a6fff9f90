"""Reads with threads are correct whatever order the pool runs their windows in: a window one
thread fetched into its read buffer is decoded by another thread while the first goes on to
fetch more, and neither may see the other's bytes."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx import _pool


@pytest.fixture
def reversed_tasks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``run_shared`` taking its tasks last first, all on the calling thread: the order in which
    a worker that took task 0 runs it only after the caller has fetched and decoded the others
    (a schedule the real pool allows)."""
    order: list[int] = []

    def backwards(fn, n_tasks: int) -> None:  # type: ignore[no-untyped-def]
        for i in reversed(range(n_tasks)):
            order.append(i)
            fn(i)

    monkeypatch.setattr(_pool, "run_shared", backwards)
    return order


def _text(shape: tuple[int, ...]) -> np.ndarray:
    v = np.arange(int(np.prod(shape))).reshape(shape)
    return (v.astype(str).astype(object) * (v % 3 + 1)).astype(object)


@pytest.mark.parametrize("codecs", ["zstd", "none"])
def test_text_chunks_read_in_any_window_order(tmp_path, reversed_tasks, codecs) -> None:
    data = _text((3, 4))
    z = zarrx.create_array(str(tmp_path / "t.zarr"), shape=(3, 4), dtype=str, chunks=(2, 3),
                           compressors="auto" if codecs == "zstd" else None)
    z[...] = data
    with zarrx.config.set(threads=2):
        got = zarrx.open_array(str(tmp_path / "t.zarr"), mode="r")[...]
    assert reversed_tasks, "the read did not share its windows among threads"
    np.testing.assert_array_equal(got, data)


@pytest.mark.parametrize("compressors", [None, "auto"])
def test_number_chunks_read_in_any_window_order(tmp_path, reversed_tasks, compressors) -> None:
    data = np.arange(512 * 512, dtype="float64").reshape(512, 512)
    z = zarrx.create_array(str(tmp_path / "n.zarr"), shape=data.shape, dtype=data.dtype,
                           chunks=(128, 128), compressors=compressors, order="F",
                           zarr_format=2)
    z[...] = data
    with zarrx.config.set(threads=2):
        got = zarrx.open_array(str(tmp_path / "n.zarr"), mode="r")[1:, 1:]
    assert reversed_tasks, "the read did not share its windows among threads"
    np.testing.assert_array_equal(got, data[1:, 1:])
