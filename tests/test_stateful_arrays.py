"""Model-based tests of arrays: random sequences of user operations on zarrx arrays, checked
step by step against a model (a numpy array), and every few steps against zarr-python reading
the same store.

Arrays (Zarr v2 and v3; chunked, or sharded with one or several inner chunks per shard and
partial shards at the edge; raw or compressed; empty chunks kept or not; C or F order; both
chunk key encodings and separators): writes of every selection kind (scalars, arrays and
values broadcast to the selection), reads, resizes that grow and shrink, appends, new
handles, attribute changes, a second handle whose metadata is stale (attributes, appends,
resizes through it), and on a local directory writes and grows made by zarr-python.
Invariants: the whole array equals the model; no stored object lies outside the grid; with
empty chunks not written, no stored object holds only the fill value. In a zip archive, which
cannot replace or remove an entry, each operation either does what it does elsewhere or raises
the documented StoreError leaving the archive as it was.

``ZARRX_SLOW=1`` runs many more examples (``ZARRX_STATEFUL_EXAMPLES`` sets how many).
"""
from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
from typing import Any

import numpy as np
import pytest
import strategies as zst
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from test_indexing_fuzz import all_fill, target, values

import zarrx
from zarrx.store import LocalStore, MemoryStore, ZipStore

zarr = pytest.importorskip("zarr")

from stateful_helpers import _finish, model_tests, quiet, same, zarr_python_store  # noqa: E402


# dtype -> fill values (None: the default)
FILLS: dict[str, list[Any]] = {
    "i2": [0, -3], "u1": [0, 2], "f4": [0.0, 2.5, float("nan")], "S2": [b"", b"ab"],
    "bool": [False, True], "T": ["", "xy"], "U3": ["", "ab"],
    "M8[s]": [None, np.datetime64(3, "s")], "c8": [0, 1 + 2j], "a:S2,b:f4": [None]}


def dtype_of(name: str) -> np.dtype:
    if ":" in name:
        return np.dtype([tuple(f.split(":")) for f in name.split(",")])
    return np.dtype(name)


def only_fill(part: np.ndarray, fill: np.ndarray) -> bool:
    if part.dtype.kind == "T":          # variable-length strings: no fixed bytes to compare
        return bool(np.all(part == fill))
    return all_fill(part, fill)


def zarr_python_reads(machine: ArrayMachine) -> bool:
    """zarr-python 3.1 fails reading and writing shards of structured dtypes (it hashes the
    fill value, a numpy void scalar)."""
    return not (machine.dtype.names and machine.z.shards)


class ArrayMachine(RuleBasedStateMachine):
    stores = ("memory", "local")

    @initialize(data=st.data())
    def create(self, data: Any) -> None:
        draw = data.draw
        self.tmp = tempfile.mkdtemp(prefix="zarrx-stateful-")
        self.fmt = draw(st.sampled_from([2, 3]), label="format")
        name = draw(st.sampled_from(sorted(FILLS)), label="dtype")
        self.dtype = dtype_of(name)
        shape = draw(zst.shapes(min_dims=1, max_dims=3, max_side=9), label="shape")
        chunks = tuple(draw(st.integers(1, max(1, n + 1))) for n in shape)
        kw: dict[str, Any] = {"write_empty_chunks": draw(st.booleans(), label="write empty"),
                              "compressors": draw(st.sampled_from([None, "auto"]))}
        fill = draw(st.sampled_from(FILLS[name]), label="fill")
        if fill is not None:
            kw["fill_value"] = fill
        if self.fmt == 3 and draw(st.booleans(), label="sharded"):
            kw["shards"] = {"shape": tuple(c * draw(st.integers(1, 3)) for c in chunks),
                            "index_location": draw(st.sampled_from(["start", "end"]))}
        self.sep = draw(st.sampled_from(["/", "."]), label="separator")
        self.v2_keys = self.fmt == 2 or draw(st.booleans(), label="v2 chunk keys")
        kw["chunk_key_encoding"] = {"name": "v2" if self.v2_keys else "default",
                                    "separator": self.sep}
        order = draw(st.sampled_from("CF"), label="order")
        kw.update({"order": order} if self.fmt == 2 else {"config": {"order": order}})
        self.kind = draw(st.sampled_from(self.stores), label="store")
        self.path = os.path.join(self.tmp, "a.zip" if self.kind == "zip" else "a.zarr")
        if self.kind == "memory":
            self.store = MemoryStore()
        else:
            self.store = LocalStore(self.path) if self.kind == "local" else \
                ZipStore(self.path, mode="w")
        self.write_empty = kw["write_empty_chunks"]
        self.z = zarrx.create_array(self.store, shape=shape, chunks=chunks, dtype=self.dtype,
                                    zarr_format=self.fmt, **kw)
        default = np.zeros((), self.dtype)
        self.fill = np.array(default if self.z.fill_value is None else self.z.fill_value,
                             self.dtype)
        self.ref = np.full(shape, self.fill, self.dtype)
        self.attrs: dict[str, Any] = {}
        self.other: Any = None
        self.steps = 0

    def teardown(self) -> None:
        _finish(self, "z")

    # -- helpers
    def per(self) -> tuple[int, ...]:
        return self.z.shards or self.z.chunks

    def target(self, draw: Any, for_write: bool) -> tuple[Any, Any, np.ndarray]:
        """(accessor, selection, the flat indices of the selected cells, in numpy's shape)."""
        return target(draw, self.z, self.ref.shape, for_write, repeated_points=True)

    def value_for(self, draw: Any, ids: np.ndarray) -> Any:
        how = draw(st.sampled_from(["array", "fill", "scalar", "broadcast"]))
        if how == "fill":
            return self.fill
        if how == "scalar":
            return values(draw, self.dtype, ())
        if how == "broadcast" and ids.ndim:
            return values(draw, self.dtype, ids.shape[-1:])
        return values(draw, self.dtype, ids.shape)

    def put(self, ids: np.ndarray, value: Any) -> None:
        self.ref.reshape(-1)[ids.reshape(-1)] = np.broadcast_to(value, ids.shape).reshape(-1)

    def reshaped(self, new: tuple[int, ...]) -> None:
        grown = np.full(new, self.fill, self.dtype)
        common = tuple(slice(0, min(a, b)) for a, b in zip(self.ref.shape, new))
        grown[common] = self.ref[common]
        self.ref = grown

    def stored(self) -> set[tuple[int, ...]]:
        """Grid coordinates of the chunks (shards) stored, from the store's keys."""
        out = set()
        for key in self.store.list_prefix(""):
            if key.rsplit("/", 1)[-1] in (".zarray", ".zattrs", "zarr.json"):
                continue
            if not self.v2_keys:
                assert key == "c" or key.startswith("c" + self.sep), key
                key = key[2:]
            out.add(tuple(int(p) for p in key.split(self.sep)) if key else ())
        return out

    # -- rules
    @rule(data=st.data())
    def write(self, data: Any) -> None:
        acc, sel, ids = self.target(data.draw, True)
        value = self.value_for(data.draw, ids)
        acc[sel] = value
        self.put(ids, value)

    @rule(data=st.data())
    def read(self, data: Any) -> None:
        acc, sel, ids = self.target(data.draw, False)
        same(acc[sel], self.ref.reshape(-1)[ids], self.dtype)

    @rule(data=st.data())
    def resize(self, data: Any) -> None:
        new = tuple(data.draw(st.integers(0, n + 5)) for n in self.ref.shape)
        self.z.resize(new)
        self.reshaped(new)

    def appendix(self, data: Any) -> tuple[int, np.ndarray]:
        """An axis and the values to append along it."""
        shape = self.ref.shape
        axis = data.draw(st.integers(0, len(shape) - 1))
        return axis, values(data.draw, self.dtype,
                            shape[:axis] + (data.draw(st.integers(0, 4)),) + shape[axis + 1:])

    @rule(data=st.data())
    def append(self, data: Any) -> None:
        axis, more = self.appendix(data)
        self.z.append(more, axis=axis)
        self.ref = np.concatenate([self.ref, more], axis=axis)

    @rule(how=st.sampled_from(["open_array", "open", "new store"]))
    def reopen(self, how: str) -> None:
        if how == "new store" and self.kind == "local":
            self.store = LocalStore(self.path)
        elif how == "new store" and self.kind == "zip":
            self.store.close()
            self.store = ZipStore(self.path, mode="a")
        self.z = zarrx.open(self.store, mode="a") if how == "open" else \
            zarrx.open_array(self.store, mode="r+")
        assert dict(self.z.attrs) == self.attrs

    @rule(key=st.sampled_from(["a", "b", "c"]),
          value=st.one_of(st.integers(-5, 5), st.text(max_size=3), st.none(),
                          st.lists(st.integers(0, 3), max_size=2)),
          how=st.sampled_from(["set", "update", "delete", "put"]))
    def attributes(self, key: str, value: Any, how: str) -> None:
        if how == "set":
            self.z.attrs[key] = value
            self.attrs[key] = value
        elif how == "update":
            self.z.update_attributes({key: value})
            self.attrs[key] = value
        elif how == "put":
            self.z.attrs.put({key: value})
            self.attrs = {key: value}
        elif key in self.attrs:
            del self.z.attrs[key]
            del self.attrs[key]
        assert dict(self.z.attrs) == self.attrs

    @rule()
    def open_second_handle(self) -> None:
        self.other = zarrx.open_array(self.store, mode="r+")

    @precondition(lambda self: self.other is not None)
    @rule(data=st.data(), how=st.sampled_from(["attrs", "delattr", "append", "grow", "shrink"]))
    def through_second_handle(self, data: Any, how: str) -> None:
        """Metadata changes start from what is stored, not from the handle's stale copy."""
        other, shape = self.other, self.ref.shape
        if how == "attrs":
            key, value = data.draw(st.sampled_from(["a", "d"])), data.draw(st.integers(0, 9))
            other.attrs[key] = value
            self.attrs[key] = value
        elif how == "delattr":
            key = data.draw(st.sampled_from(["a", "b", "c", "d"]))
            if key not in self.attrs:
                return
            del other.attrs[key]
            del self.attrs[key]
        elif how == "append":
            axis = data.draw(st.integers(0, len(shape) - 1))
            more = values(data.draw, self.dtype,
                          shape[:axis] + (data.draw(st.integers(0, 3)),) + shape[axis + 1:])
            other.append(more, axis=axis)
            self.ref = np.concatenate([self.ref, more], axis=axis)
            assert other.shape == self.ref.shape
        else:
            new = tuple(data.draw(st.integers(max(0, n - 3), n) if how == "shrink" else
                                  st.integers(n, n + 5)) for n in shape)
            other.resize(new)
            self.reshaped(new)
            assert other.shape == self.ref.shape
        self.z = zarrx.open_array(self.store, mode="r+")
        assert dict(self.z.attrs) == self.attrs

    # -- invariants
    @invariant()
    def matches_the_model(self) -> None:
        if not hasattr(self, "z"):
            return
        assert self.z.shape == self.ref.shape
        same(self.z[...], self.ref)
        per = self.per()
        grid = tuple(-(-n // p) for n, p in zip(self.ref.shape, per))
        for coords in self.stored():
            assert len(coords) == len(grid) and all(0 <= c < n for c, n in zip(coords, grid)), \
                f"object {coords} stored outside the grid {grid}"
            if not self.write_empty:
                part = self.ref[tuple(slice(c * p, c * p + p) for c, p in zip(coords, per))]
                assert not only_fill(part, self.fill), f"object {coords} holds only fill"
        self.steps += 1
        if self.steps % 6 == 0:
            self.check_zarr_python()

    def check_zarr_python(self) -> None:
        if self.kind == "zip":          # an archive is read once closed
            self.store.close()
        with quiet():
            zs = zarr_python_store(self.store, self.path)
            za = zarr.open_array(zs, mode="r", zarr_format=self.fmt)
            assert za.shape == self.ref.shape
            if zarr_python_reads(self):
                same(za[...], self.ref)
            assert dict(za.attrs) == self.attrs
            zs.close()
        if self.kind == "zip":
            self.store = ZipStore(self.path, mode="a")
            self.z = zarrx.open_array(self.store, mode="r+")
            self.other = None


class LocalArrayMachine(ArrayMachine):
    """A local directory, with zarr-python writing to it too."""
    stores = ("local",)

    def zarr_python_array(self) -> Any:
        return zarr.open_array(zarr.storage.LocalStore(self.path), mode="r+",
                               zarr_format=self.fmt)

    @precondition(zarr_python_reads)
    @rule(data=st.data())
    def zarr_python_writes(self, data: Any) -> None:
        sel = data.draw(zst.basic_selections(self.ref.shape).filter(   # what zarr-python takes
            lambda s: not any(x is None or (isinstance(x, slice) and (x.step or 1) < 0)
                              for x in (s if isinstance(s, tuple) else (s,)))))
        ids = np.arange(self.ref.size).reshape(self.ref.shape)[sel]
        value = values(data.draw, self.dtype, np.shape(ids))
        with quiet():
            self.zarr_python_array()[sel] = value
        self.put(np.asarray(ids), value)

    @precondition(zarr_python_reads)
    @rule(data=st.data())
    def zarr_python_grows(self, data: Any) -> None:
        # grown only: zarr-python's shrink keeps the data beyond the edge of boundary chunks
        new = tuple(data.draw(st.integers(n, n + 5)) for n in self.ref.shape)
        with quiet():
            self.zarr_python_array().resize(new)
        self.reshaped(new)
        self.z = zarrx.open_array(self.store, mode="r+")


class ZipArrayMachine(ArrayMachine):
    """Writes reaching only chunks not stored yet succeed; anything replacing a stored object
    or the metadata raises StoreError and leaves every stored object as it was."""
    stores = ("zip",)

    def objects(self) -> dict[str, bytes]:
        return {k: bytes(self.store.get(k)) for k in self.store.list_prefix("")}

    def refused(self, op: Any) -> None:
        before = self.objects()
        with pytest.raises(zarrx.StoreError, match="zip entries cannot be"):
            op()
        assert self.objects() == before
        self.z = zarrx.open_array(self.store, mode="r+")

    @rule(data=st.data())
    def write(self, data: Any) -> None:
        acc, sel, ids = self.target(data.draw, True)
        value = self.value_for(data.draw, ids)
        per, stored, before = self.per(), self.stored(), self.objects()
        cells = np.unravel_index(ids.reshape(-1), self.ref.shape)
        touched = {tuple(int(c[i]) // p for c, p in zip(cells, per)) for i in range(ids.size)}
        old = self.ref.copy()
        self.put(ids, value)
        try:
            acc[sel] = value
        except zarrx.StoreError as exc:
            assert touched & stored, exc
            assert all(self.objects()[k] == v for k, v in before.items())
            # the objects stored before keep their values; new ones may hold the write
            got = np.ascontiguousarray(self.z[...])
            for coords in itertools.product(*[range(-(-n // p)) for n, p in
                                              zip(old.shape, per)]):
                box = tuple(slice(c * p, c * p + p) for c, p in zip(coords, per))
                if coords in stored:
                    same(got[box], old[box])
                else:
                    with contextlib.suppress(AssertionError):
                        same(got[box], old[box])
                        continue
                    same(got[box], self.ref[box])
            self.ref = got

    @rule(data=st.data())
    def resize(self, data: Any) -> None:
        new = tuple(data.draw(st.integers(0, n + 5)) for n in self.ref.shape)
        self.refused(lambda: self.z.resize(new))

    @rule(data=st.data())
    def append(self, data: Any) -> None:
        axis, more = self.appendix(data)
        self.refused(lambda: self.z.append(more, axis=axis))

    @rule(key=st.sampled_from(["a", "b"]), value=st.integers(0, 3))
    def attributes(self, key: str, value: int) -> None:
        if self.fmt == 2 and not self.store.exists(".zattrs"):     # a new entry
            self.z.attrs[key] = value
            self.attrs[key] = value
        else:
            self.refused(lambda: self.z.attrs.__setitem__(key, value))

    def open_second_handle(self) -> None:
        """Not a rule here: a second handle could change nothing in an archive."""


MACHINES = [ArrayMachine, LocalArrayMachine, ZipArrayMachine]

test_operations_match_the_model, test_many_operations_match_the_model = model_tests(MACHINES)
