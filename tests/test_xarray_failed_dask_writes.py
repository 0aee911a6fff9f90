"""A to_zarrx write whose dask-backed values turn out, as their blocks compute, not to fit the
stored type: the error names the variable, the type and the value; an append gives its claimed
rows back (the stored variables are as before, and nothing is left outside their shape), and
no block is written once the write has failed (docs/guide/xarray.md, "When a write of dask
values fails")."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
da = pytest.importorskip("dask.array")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.dask.graph import WriteGate, store_blocks  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

#: (encoding of the variable, its first values, appended values with a bad last one, message)
CASES = {
    "int16-overflow": ({"dtype": "int16"}, [1, 2], [3, 4, 5, 70000],
                       "to_zarrx: variable 'v': 70000 does not fit the stored int16 values "
                       "(-32768 to 32767)"),
    "nan-in-integers": ({"dtype": "int16"}, [1.0, 2.0], [3.0, 4.0, 5.0, np.nan],
                        "to_zarrx: variable 'v': NaN cannot be stored in the stored int16 "
                        "values, which have no _FillValue"),
    "bytes-too-long": ({"dtype": "S2"}, [b"a", b"b"], [b"c", b"d", b"e", b"toolong"],
                       "to_zarrx: variable 'v': b'toolong' is longer than the 2 bytes of the "
                       "stored |S2: fixed-width strings would be cut"),
}


def rows(values, start, kind=None):
    data = np.array(values, dtype=object if isinstance(values[0], bytes) else kind)
    return xr.Dataset({"v": ("t", da.from_array(data, chunks=2))},
                      coords={"t": np.arange(start, start + len(values))})


def stored(path):
    grp = zarrx.open_group(path, mode="r")
    return {name: (grp[name].shape, grp[name][...].tolist()) for name in ("t", "v")}


def chunk_keys(path):
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")
                  if p.is_file() and p.name[0] not in ".z")


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_an_append_whose_dask_block_does_not_fit_gives_its_rows_back(tmp_path, fmt, case):
    # before: the variables stayed grown (t to 6 rows), the rows of the blocks computed before
    # the bad one written, the others at the fill value
    enc, first, more, message = CASES[case]
    path = tmp_path / "a.zarr"
    zx.to_zarrx(rows(first, 0), path, zarr_format=fmt,
                encoding={"v": {**enc, "chunks": (2,)}, "t": {"chunks": (2,)}})
    before, keys = stored(path), chunk_keys(path)
    with pytest.raises(zarrx.ArgumentError, match=re.escape(message)):
        zx.to_zarrx(rows(more, 2), path, append_dim="t",
                    chunkmanager_store_kwargs={"scheduler": "synchronous"})
    assert stored(path) == before
    assert chunk_keys(path) == keys         # nothing stored outside the shape
    assert xr.open_dataset(path, engine="zarrx").sizes["t"] == 2
    # the append made again with values that fit lands right after the first rows
    zx.to_zarrx(rows(more[:2], 2), path, append_dim="t")
    got = stored(path)
    assert got["t"] == ((4,), [0, 1, 2, 3])
    assert got["v"][1] == [*before["v"][1], *np.array(more[:2]).astype(
        np.dtype(enc["dtype"])).tolist()]


def test_rows_claimed_after_the_failed_ones_are_kept(tmp_path):
    """Another writer's append claimed rows after the failed append's: those cannot be taken
    out of the middle, so they stay, at the fill value; the other writer's rows are intact."""
    path = tmp_path / "a.zarr"
    zx.to_zarrx(rows([1, 2], 0), path, encoding={"v": {"dtype": "int16", "chunks": (2,)}})

    def block(values):
        if values.max() > 100:      # the bad block: another writer appends meanwhile
            zx.to_zarrx(xr.Dataset({"v": ("t", np.array([7, 8]))},
                                   coords={"t": np.array([10, 11])}), path, append_dim="t")
        return values

    data = da.from_array(np.array([3, 4, 5, 70000]), chunks=2).map_blocks(block)
    ds = xr.Dataset({"v": ("t", data)}, coords={"t": np.arange(2, 6)})
    with pytest.raises(zarrx.ArgumentError, match="70000 does not fit the stored int16"):
        zx.to_zarrx(ds, path, append_dim="t",
                    chunkmanager_store_kwargs={"scheduler": "synchronous"})
    got = stored(path)
    assert got["t"][0] == got["v"][0] == (8,)
    assert got["v"][1][:2] == [1, 2] and got["v"][1][6:] == [7, 8]
    assert got["t"][1][6:] == [10, 11]


def test_a_failed_delayed_append_leaves_its_rows_claimed_until_resized_back(tmp_path):
    """With compute=False nothing is given back (the documented recovery: shrink back)."""
    path = tmp_path / "a.zarr"
    zx.to_zarrx(rows([1, 2], 0), path, encoding={"v": {"dtype": "int16"}})
    delayed = zx.to_zarrx(rows([3, 70000], 2), path, append_dim="t", compute=False)
    with pytest.raises(zarrx.ArgumentError, match="70000 does not fit the stored int16"):
        delayed.compute(scheduler="synchronous")
    grp = zarrx.open_group(path, mode="r+")
    assert grp["v"].shape == grp["t"].shape == (4,)
    for name in ("v", "t"):
        grp[name].resize((2,))
    assert stored(path) == {"t": ((2,), [0, 1]), "v": ((2,), [1, 2])}


def test_a_closed_gate_lets_no_block_be_written():
    arr = zarrx.create_array({}, shape=(4,), dtype="i4", chunks=(2,))
    gate = WriteGate()
    assert gate.enter()
    gate.leave()
    gate.close()
    assert not gate.enter()
    store_blocks(da.arange(4, chunks=2, dtype="i4") + 1, arr, gate=gate,
                 scheduler="synchronous")
    assert arr[...].tolist() == [0, 0, 0, 0] and arr.nchunks_initialized == 0
    store_blocks(da.arange(4, chunks=2, dtype="i4") + 1, arr, gate=WriteGate())
    assert arr[...].tolist() == [1, 2, 3, 4]


def test_rows_that_cannot_be_given_back_are_noted_on_the_error():
    """The write's own error is raised; a failure to shrink back (a failing store) is noted
    on it."""
    from zarrx.xarray.write_plan import Claim

    class Stuck:
        def _grow(self, shape_of):
            raise zarrx.StoreError("disk full")

    error = zarrx.ArgumentError("to_zarrx: variable 'v': 70000 does not fit")
    Claim([(Stuck(), 0, 2, 4)]).give_back(error)
    assert error.__notes__ == ["to_zarrx: the rows claimed for the append could not be given "
                               "back (disk full); see docs/guide/xarray.md, \"When a write of "
                               "dask values fails\""]


def test_rows_another_append_claimed_before_these_are_not_given_back(tmp_path):
    """Another append has claimed rows 2-3 (on the coordinate) but not grown the data variable
    yet; this append claims rows 4-5 and fails: the data variable is shrunk back to row 4, not
    to its length before (2), which would clear the other append's rows."""
    path = tmp_path / "a.zarr"
    zx.to_zarrx(rows([1, 2], 0), path, encoding={"v": {"dtype": "int16", "chunks": (2,)}})
    zarrx.open_array(path, path="t", mode="r+").resize((4,))    # the other append's claim
    with pytest.raises(zarrx.ArgumentError, match="70000 does not fit the stored int16"):
        zx.to_zarrx(rows([3, 70000], 4), path, append_dim="t",
                    chunkmanager_store_kwargs={"scheduler": "synchronous"})
    grp = zarrx.open_group(path, mode="r")
    assert grp["t"].shape == grp["v"].shape == (4,)


def _shipping_scheduler(dsk, keys, **kwargs):
    """A scheduler that sends the graph elsewhere (pickles it, as a cluster's client does),
    then runs it here."""
    import cloudpickle
    import dask
    cloudpickle.dumps(dsk)
    return dask.get(dsk, keys, **kwargs)


def test_an_append_whose_blocks_went_to_other_processes_keeps_its_rows(tmp_path):
    """Block writes sent to other processes (a process pool, a cluster) cannot be held back
    once the write fails: the claimed rows are kept rather than given back, as another append
    could claim them again before a late write lands; the error says so."""
    enc, first, more, message = CASES["int16-overflow"]
    path = tmp_path / "a.zarr"
    zx.to_zarrx(rows(first, 0), path, encoding={"v": {**enc, "chunks": (2,)}})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(message)) as info:
        zx.to_zarrx(rows(more, 2), path, append_dim="t",
                    chunkmanager_store_kwargs={"scheduler": _shipping_scheduler})
    assert any("rows claimed for the append are kept" in n
               for n in getattr(info.value, "__notes__", []))
    assert stored(path)["t"][0] == (6,)


def test_a_gate_sent_to_another_process_says_so():
    import pickle
    gate = WriteGate()
    assert not gate.sent
    copy = pickle.loads(pickle.dumps(gate))
    assert gate.sent and not copy.sent
