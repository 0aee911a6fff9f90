"""How much Python work a shard costs a read of a sharded array of small inner chunks,
counted in calls (never timed): what is per shard (a snapshot, its index, one range read, one
call per codec stage, one copy) must not grow back into work per inner chunk, nor the work per
shard creep up."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore

from call_counts import calls_made

C = zarrx.codecs
CODECS = {
    "raw": {"compressors": None},
    "zstd": {"compressors": C.Zstd(level=0)},
    "zstd-crc32c": {"compressors": [C.Zstd(level=0), C.Crc32c()]},
}
#: calls per shard of a whole read, one thread: 165-181 (memory) and 220-237 (local files)
#: before the index was read by one kernel pass and each slab copied by one kernel call; about
#: 80 and 125 since (most of what is left is the store's snapshot and the index cache); on
#: local files 22-43 since a shard's file, index and chunks are read by one kernel call; in
#: memory 22-43 too since a shard's kept value is looked up and its index checked by one
MOST = {"memory": 50, "local": 50}


def _calls_per_shard(store: object, shape: tuple[int, ...], shards: tuple[int, ...],
                     chunks: tuple[int, ...], codecs: dict) -> float:
    a = (np.random.default_rng(5).standard_normal(shape) * 64).astype("f4")
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="f4",
                               fill_value=0, **codecs)
        z[...] = a
        z = zarrx.open_array(store, mode="r")
        np.testing.assert_array_equal(z[...], a)       # plans made
        got: list = []
        n = calls_made(lambda: got.append(z[...]))
        half = calls_made(lambda: z[:shape[0] // 2])
    np.testing.assert_array_equal(got[0], a)
    # the calls the second half of the shards adds to a read of the first half, per shard:
    # what a read costs once, whatever its number of shards (its plan), is left out
    return 2 * (n - half) / np.prod([s // c for s, c in zip(shape, shards)])


@pytest.mark.parametrize("codecs", list(CODECS))
@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_whole_read_of_256_shards_of_16_inner_chunks_makes_few_calls_per_shard(
        tmp_path, where, codecs):
    store = MemoryStore() if where == "memory" else LocalStore(str(tmp_path / "a.zarr"))
    per_shard = _calls_per_shard(store, (1024, 1024), (64, 64), (16, 16), CODECS[codecs])
    assert per_shard < MOST[where], per_shard


@pytest.mark.parametrize("where", ["memory", "local"])
def test_calls_per_shard_do_not_grow_with_its_inner_chunks(tmp_path, where):
    """Shards of 256 inner chunks cost no more calls each than shards of 16: nothing is done
    per inner chunk."""
    def store(name: str) -> object:
        return MemoryStore() if where == "memory" else LocalStore(str(tmp_path / name))
    few = _calls_per_shard(store("a.zarr"), (1024, 1024), (64, 64), (16, 16), CODECS["zstd"])
    many = _calls_per_shard(store("b.zarr"), (1024, 1024), (256, 256), (16, 16),
                            CODECS["zstd"])
    assert many <= few + 8, (few, many)
