"""``Rounds``: a CountingStore that also records each call, in order, with the keys it names,
so a test can count sequential store rounds (one ``get_many`` of many keys is one round, as
it is one round trip on a remote store) and see which keys went out together."""
from __future__ import annotations

from zarrx.store import MemoryStore
from zarrx.store.counting import CountingStore

__all__ = ["Rounds", "RemoteMemoryStore", "NODE_DOCS"]

#: the candidate documents of a node (``.zmetadata`` is read at the store root only)
NODE_DOCS = ("zarr.json", ".zarray", ".zgroup", ".zattrs")

_READS = {"get", "get_many", "get_versioned", "exists", "list_dir", "list_prefix",
          "generation", "snapshot"}


class RemoteMemoryStore(MemoryStore):
    """A memory store that says its requests wait on a network (as a remote store does), so
    that zarrx batches its reads as it does for one."""
    latency_bound = True


class Rounds(CountingStore):
    """``calls``: ``(method, [keys])`` of every call, in order."""

    def reset(self) -> None:
        super().reset()
        self.calls: list[tuple[str, list[str]]] = []

    def _log(self, method: str, keys: list[str]) -> None:
        self.calls.append((method, keys))

    def get(self, key, byte_range=None):
        self._log("get", [key])
        return super().get(key, byte_range)

    def get_many(self, requests):
        requests = list(requests)
        self._log("get_many", [k for k, _ in requests])
        return super().get_many(requests)

    def get_versioned(self, key, byte_range=None, *, if_generation=None):
        self._log("get_versioned", [key])
        return super().get_versioned(key, byte_range, if_generation=if_generation)

    def exists(self, key):
        self._log("exists", [key])
        return super().exists(key)

    def list_dir(self, prefix):
        self._log("list_dir", [prefix])
        return super().list_dir(prefix)

    def list_prefix(self, prefix):
        self._log("list_prefix", [prefix])
        return super().list_prefix(prefix)

    def set(self, key, value):
        self._log("set", [key])
        return super().set(key, value)

    def set_if(self, key, value, if_generation):
        self._log("set_if", [key])
        return super().set_if(key, value, if_generation)

    def delete(self, key):
        self._log("delete", [key])
        return super().delete(key)

    def delete_prefix(self, prefix):
        self._log("delete_prefix", [prefix])
        return super().delete_prefix(prefix)

    # -- what tests ask ------------------------------------------------------------------------
    def reads(self) -> list[tuple[str, list[str]]]:
        """The read calls (each one round)."""
        return [c for c in self.calls if c[0] in _READS]

    def node_reads(self, *paths: str) -> list[list[str]]:
        """The keys of each ``get_many`` that read a candidate document of a node at ``paths``
        other than ``zarr.json``: the reads that load nodes (they ask for these in a
        ``get_many``; the reads that keep consolidated metadata in step ask only for
        ``zarr.json`` and ``.zmetadata``, a v2 attribute update for one ``.zattrs``)."""
        wanted = {f"{p}/{n}" if p else n for p in paths for n in NODE_DOCS[1:]}
        return [keys for method, keys in self.reads()
                if method == "get_many" and wanted & set(keys)]
