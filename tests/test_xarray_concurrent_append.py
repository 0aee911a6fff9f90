"""Datasets appended to one store at once, from threads and from processes, lose no row, and
every row holds the values of one append (the variables of a dataset never get rows of two
different appends)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from test_concurrent_writes import run_threads  # noqa: E402
from test_process_writes import run  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

X = 3


def one_row(t: int):
    """The row of time ``t``: every value a function of ``t``."""
    return xr.Dataset({"temp": (("time", "x"), (t * 10 + np.arange(X, dtype="f8"))[None]),
                       "flag": ("time", np.array([t % 7], dtype="i2"))},
                      coords={"time": np.array([t], dtype="i8")})


def start(store, fmt, sharded):
    enc = {"temp": {"chunks": (4, X)}, "flag": {"chunks": (4,)}, "time": {"chunks": (4,)}}
    if sharded:
        enc = {k: {"chunks": (2,) + v["chunks"][1:], "shards": v["chunks"]}
               for k, v in enc.items()}
    zx.to_zarrx(one_row(-1), store, mode="w", zarr_format=fmt, encoding=enc)


def check(store, times):
    ds = xr.open_dataset(store, engine="zarrx").load()
    got = ds["time"].values.tolist()
    assert sorted(got) == sorted([-1] + times)
    assert len(got) == len(set(got))
    for i, t in enumerate(got):
        assert ds["temp"].values[i].tolist() == (t * 10 + np.arange(X)).tolist(), (i, t)
        assert int(ds["flag"].values[i]) == t % 7, (i, t)


def _appender(path: str, writer: int, count: int) -> None:
    for i in range(count):
        zx.to_zarrx(one_row(writer * 1000 + i), path, append_dim="time")


@pytest.mark.parametrize("fmt, sharded", [(3, False), (3, True), (2, False)])
def test_processes_appending_to_one_dataset_lose_no_row(tmp_path, fmt, sharded):
    path = str(tmp_path / "d.zarr")
    start(path, fmt, sharded)
    run(_appender, [(path, w, 12) for w in (1, 2)])
    check(path, [w * 1000 + i for w in (1, 2) for i in range(12)])


@pytest.mark.parametrize("fmt", [3, 2])
def test_threads_appending_to_one_dataset_lose_no_row(fmt):
    store = zarrx.storage.MemoryStore()
    start(store, fmt, sharded=False)
    run_threads(lambda t: [zx.to_zarrx(one_row(t * 1000 + i), store, append_dim="time",
                                       consolidated=False) for i in range(8)], n=4)
    check(store, [t * 1000 + i for t in range(4) for i in range(8)])


def test_an_append_after_another_writers_claim_uses_the_rows_after_it(tmp_path):
    """A variable still at the length before another writer's claim (its write under way)
    does not make an append fail, and the new rows go after the claimed ones."""
    path = str(tmp_path / "d.zarr")
    start(path, 3, sharded=False)
    zarrx.open_array(path, path="time", mode="r+").resize((3,))   # claimed, not yet written
    zx.to_zarrx(one_row(5), path, append_dim="time")
    g = zarrx.open_group(path, mode="r")
    assert [g[n].shape[0] for n in ("time", "temp", "flag")] == [4, 4, 4]
    assert int(g["time"][3]) == 5 and int(g["flag"][3]) == 5
