"""MemoryStore against the store contract."""
from store_contract import StoreContract

from zarrx.store import MemoryStore


class TestMemoryStore(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        return MemoryStore()

    def reopen_read_only(self, store, tmp_path):
        return MemoryStore({k: store.get(k) for k in store.list_prefix("")}, read_only=True)
