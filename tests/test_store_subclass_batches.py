"""A store subclass that extends a single-object method (to count, check or change what it is
asked) sees every object that batched writes and reads handle: a batch method of its base class
is used only when it does what the subclass's single-object methods do."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore


class Watching(MemoryStore):
    """Records the keys its conditional writes and versioned reads were asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.conditional: list[str] = []
        self.versioned: list[str] = []

    def set_if(self, key, value, generation):  # type: ignore[no-untyped-def]
        self.conditional.append(key)
        return super().set_if(key, value, generation)

    def get_versioned(self, key, byte_range=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.versioned.append(key)
        return super().get_versioned(key, byte_range, *args, **kwargs)


class WatchingFiles(LocalStore):
    """The same, of a local store."""

    def __init__(self, root) -> None:  # type: ignore[no-untyped-def]
        super().__init__(root)
        self.conditional: list[str] = []
        self.versioned: list[str] = []

    def set_if(self, key, value, generation):  # type: ignore[no-untyped-def]
        self.conditional.append(key)
        return super().set_if(key, value, generation)

    def get_versioned(self, key, byte_range=None, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.versioned.append(key)
        return super().get_versioned(key, byte_range, *args, **kwargs)


def _partly_written(store: MemoryStore) -> tuple[zarrx.Array, np.ndarray]:
    z = zarrx.create_array(store, shape=(64, 64), chunks=(4, 4), dtype="i4", fill_value=0)
    data = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    z[...] = data
    return z, data


@pytest.mark.parametrize("where", ["memory", "local"])
def test_partial_writes_of_small_chunks_go_through_an_extended_set_if(where, tmp_path) -> None:
    store = Watching() if where == "memory" else WatchingFiles(tmp_path)
    z, data = _partly_written(store)
    store.conditional.clear()
    store.versioned.clear()
    z[1:63, 1:63] = -1            # every border chunk covered in part: read, merged, written
    data[1:63, 1:63] = -1
    np.testing.assert_array_equal(z[...], data)
    border = {f"c/{i}/{j}" for i in range(16) for j in range(16)
              if i in (0, 15) or j in (0, 15)}
    assert border <= set(store.conditional)
    assert border <= set(store.versioned)


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("write", [np.s_[1:63, 1:63], np.s_[::2, :]])
def test_a_plain_store_takes_the_partial_chunks_in_one_call(write, where, tmp_path) -> None:
    store = MemoryStore() if where == "memory" else LocalStore(tmp_path)
    z, data = _partly_written(store)
    calls: list[int] = []
    many = store.set_if_many

    def counting(items):  # type: ignore[no-untyped-def]
        calls.append(len(items))
        return many(items)

    store.set_if_many = counting  # type: ignore[method-assign]
    z[write] = 7
    data[write] = 7
    np.testing.assert_array_equal(z[...], data)
    assert calls and max(calls) >= 4
