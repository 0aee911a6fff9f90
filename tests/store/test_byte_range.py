"""ByteRange: construction, validation, resolution against an object size."""
import pytest

from zarrx.errors import StoreError
from zarrx.store import ByteRange


@pytest.mark.parametrize("rng, size, expected", [
    (ByteRange.full(), 10, (0, 10)),
    (ByteRange.slice(2, 3), 10, (2, 5)),
    (ByteRange.slice(2), 10, (2, 10)),
    (ByteRange.slice(8, 5), 10, (8, 10)),
    (ByteRange.slice(12, 5), 10, (10, 10)),
    (ByteRange.last(3), 10, (7, 10)),
    (ByteRange.last(30), 10, (0, 10)),
    (ByteRange.last(0), 10, (10, 10)),
    (ByteRange.slice(0, 0), 0, (0, 0)),
], ids=["full", "slice", "open-slice", "clipped", "past-end", "suffix", "suffix-larger",
        "suffix-zero", "empty-object"])
def test_resolve(rng, size, expected):
    assert rng.resolve(size) == expected
    assert rng.apply(bytes(size)) == bytes(expected[1] - expected[0])


def test_full_apply_does_not_copy():
    data = b"abc"
    assert ByteRange.full().apply(data) is data and ByteRange.full().is_full
    assert not ByteRange.slice(0, 3).is_full and not ByteRange.last(3).is_full


@pytest.mark.parametrize("kwargs, message", [
    ({"offset": -1}, "ByteRange.offset: expected a non-negative int, found -1"),
    ({"length": -2}, "ByteRange.length: expected a non-negative int, found -2"),
    ({"suffix": 1.5}, "ByteRange.suffix: expected a non-negative int, found 1.5"),
    ({"offset": True}, "ByteRange.offset: expected a non-negative int, found True"),
    ({"offset": 1, "suffix": 2},
     "ByteRange: suffix=2 excludes offset/length, found offset=1, length=None"),
], ids=["negative-offset", "negative-length", "float-suffix", "bool-offset", "suffix-and-offset"])
def test_invalid(kwargs, message):
    with pytest.raises(StoreError) as info:
        ByteRange(**kwargs)
    assert str(info.value) == message


def test_repr():
    assert [repr(r) for r in (ByteRange.full(), ByteRange.slice(1, 2), ByteRange.last(4))] == \
        ["ByteRange.full()", "ByteRange.slice(1, 2)", "ByteRange.last(4)"]
