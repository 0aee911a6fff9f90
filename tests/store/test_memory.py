"""MemoryStore against the store contract."""
from store_contract import StoreContract

from zarrx.store import MemoryStore


class TestMemoryStore(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        return MemoryStore()

    def reopen_read_only(self, store, tmp_path):
        return MemoryStore({k: store.get(k) for k in store.list_prefix("")}, read_only=True)


def test_store_dict_is_zarr_pythons_name_for_the_initial_contents():
    import pytest

    import zarrx

    assert MemoryStore(store_dict={"a": b"1"}).get("a") == b"1"
    assert MemoryStore({"a": b"2"}).get("a") == MemoryStore(data={"a": b"2"}).get("a") == b"2"
    with pytest.raises(zarrx.ArgumentError, match="MemoryStore: pass data= or store_dict="):
        MemoryStore({"a": b"1"}, store_dict={"b": b"2"})


def test_initial_contents_that_are_not_str_keys_to_bytes_are_refused():
    import numpy as np
    import pytest

    import zarrx

    for data, error, message in [
            ([1], zarrx.ArgumentTypeError,
             "MemoryStore: data: expected a mapping of str keys to bytes, found list"),
            ({"a": 5}, zarrx.StoreError, "store value for 'a': expected bytes-like, found int"),
            ({"a": "x"}, zarrx.StoreError, "store value for 'a': expected bytes-like, found str"),
            ({5: b"x"}, zarrx.StoreError, "store key: expected str, found int 5")]:
        with pytest.raises(error) as info:
            MemoryStore(data)
        assert str(info.value) == message
    store = MemoryStore({"a": bytearray(b"12"), "b": np.frombuffer(b"345", "u1")})
    assert (store.get("a"), store.get("b")) == (b"12", b"345")
