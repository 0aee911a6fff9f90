"""A conversion of a hierarchy starts one set of worker threads for all of its arrays, not one
per array: a hierarchy of thousands of small arrays spent most of its time starting threads."""
from __future__ import annotations

import numpy as np

import zarrx
from zarrx.tools import parallel


def test_a_hierarchy_converts_on_one_pool_of_threads(tmp_path, monkeypatch):
    g = zarrx.open_group(str(tmp_path / "h.zarr"), mode="w")
    for i in range(12):
        g.create_array(f"a{i}", shape=(6,), dtype="i2", chunks=(2,))[...] = np.arange(6) + i
    pools = []

    class Counted(parallel.ThreadPoolExecutor):
        def __init__(self, *args, **kwargs):
            pools.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(parallel, "ThreadPoolExecutor", Counted)
    report = zarrx.convert(str(tmp_path / "h.zarr"), str(tmp_path / "v2.zarr"), zarr_format=2,
                           workers=2, verify=True)
    assert report.ok
    assert len(pools) == 1          # (before: 12, one per array)
    out = zarrx.open_group(str(tmp_path / "v2.zarr"), mode="r")
    for i in range(12):
        assert out[f"a{i}"][...].tolist() == list(range(i, i + 6))
