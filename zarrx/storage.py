"""zarr-python's name for the store module: ``zarrx.storage.LocalStore`` is
:class:`zarrx.store.LocalStore`, and so on."""
from zarrx.store import (ByteRange, CountingStore, LocalStore, MemoryStore, Store,  # noqa: F401
                         ZipStore, make_store)

__all__ = ["ByteRange", "CountingStore", "LocalStore", "MemoryStore", "Store", "ZipStore",
           "make_store"]
