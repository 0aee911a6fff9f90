"""How the body of a GET comes from obstore: a range asked for bounds it, so it comes as one
piece that is kept as it came (no copy of ours); a body nothing bounds (the whole object, of a
length only the server's headers claim) and a body read into a buffer come in pieces of at
most 1 MiB, so that neither side holds more than a piece beyond what was asked for."""
from __future__ import annotations

import pytest

pytest.importorskip("obstore")

from zarrx.store import ByteRange  # noqa: E402
from zarrx.store.remote import ObjectStore  # noqa: E402
from zarrx.store.remote import objectstore as objectstore_module  # noqa: E402

MiB = 1 << 20


@pytest.fixture
def pieces(monkeypatch):
    """The sizes of the pieces each body came in, one list per GET."""
    seen: list[list[int]] = []
    real = objectstore_module.collected

    async def counting(stream, limit, into=None):
        sizes: list[int] = []
        seen.append(sizes)

        async def counted():
            async for piece in stream:
                sizes.append(len(memoryview(piece)))
                yield piece
        return await real(counted(), limit, into)

    monkeypatch.setattr(objectstore_module, "collected", counting)
    return seen


@pytest.fixture
def make(s3_server):
    """An ObjectStore on the S3 test server (bodies come over a socket, in frames) holding
    one object of ``size`` bytes."""
    made: list[ObjectStore] = []

    def make_store(size: int) -> tuple[ObjectStore, bytes]:
        st = ObjectStore(s3_server.url(), storage_options=s3_server.options,
                         options={"part_size": 64 * MiB, "min_part_size": 64 * MiB})
        made.append(st)
        data = bytes(range(256)) * (size // 256)
        st.set("k", data)
        return st, data
    yield make_store
    for st in made:
        st.close()


@pytest.mark.parametrize(("byte_range", "lo", "hi"),
                         [(ByteRange.slice(0, 3 * MiB + 5), 0, 3 * MiB + 5),
                          (ByteRange.slice(MiB, 2 * MiB), MiB, 3 * MiB),
                          (ByteRange.last(3 * MiB), MiB, 4 * MiB)],
                         ids=["start", "middle", "suffix"])
def test_a_range_comes_as_one_piece(pieces, make, byte_range, lo, hi):
    st, data = make(4 * MiB)
    assert st.get("k", byte_range) == data[lo:hi]
    # before: pieces of 1 MiB, joined in a bytearray that grew with each
    assert [len(p) for p in pieces] == [1] and pieces[0] == [hi - lo]


def test_a_whole_object_of_several_mib_is_read_right(pieces, make):
    st, data = make(3 * MiB + 256)
    assert st.get("k") == data
    assert sum(sum(p) for p in pieces) == len(data)
    # the first GET asks for a part (a range): every piece is at most what it asked for
    assert all(size <= 64 * MiB for p in pieces for size in p)
