"""Errors of field selections name few fields: a struct may have 100,000 of them."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.fields import check_fields


def wide(n: int) -> np.dtype:
    return np.dtype([(f"f{i}", "u1") for i in range(n)])


def test_an_unknown_field_names_the_first_20_fields_and_their_count():
    with pytest.raises(zarrx.IndexingError) as info:
        check_fields(["f3", "nope"], wide(1000), "/a")
    first = ", ".join(f"'f{i}'" for i in range(20))
    assert str(info.value) == f"/a: no field 'nope'; the fields are {first}, ... (1000 fields)"


def test_an_unknown_field_of_a_struct_of_20_fields_lists_them_all():
    with pytest.raises(zarrx.IndexingError) as info:
        check_fields("nope", wide(20), "/a")
    assert str(info.value) == "/a: no field 'nope'; the fields are " + \
        ", ".join(f"'f{i}'" for i in range(20))


def test_fields_named_twice_are_found_in_one_pass_and_listed_briefly():
    names = [f"f{i}" for i in range(5000)] * 2          # 5,000 names, each twice
    with pytest.raises(zarrx.IndexingValueError) as info:
        check_fields(names, wide(5000), "/a")
    first = ", ".join(repr(n) for n in sorted(names[:5000])[:20])
    assert str(info.value) == \
        f"/a: fields: expected each field once, found {first}, ... (5000 names) more than once"
    with pytest.raises(ValueError) as info:             # numpy's class
        check_fields(["f1", "f2", "f1", "f2", "f1"], wide(3), "/a")
    assert str(info.value) == \
        "/a: fields: expected each field once, found 'f1', 'f2' more than once"


def test_an_array_of_many_fields_names_few_in_its_selection_error():
    z = zarrx.create_array(zarrx.storage.MemoryStore(), shape=(2,), dtype=wide(300))
    with pytest.raises(IndexError) as info:
        z["f299", "missing"]
    assert str(info.value).endswith("no field 'missing'; the fields are " +
                                    ", ".join(f"'f{i}'" for i in range(20)) + ", ... (300 fields)")
    assert z[["f299", "f0"]].dtype.names == ("f299", "f0")


@pytest.mark.parametrize("sel, value, cls, builtin", [
    ("x", 2**70, zarrx.errors.ArgumentOverflowError, OverflowError),
    (("x", 0), 2**40, zarrx.errors.ArgumentOverflowError, OverflowError),
    (["x", "y"], 2**40, zarrx.errors.ArgumentOverflowError, OverflowError),
    ("x", object(), zarrx.ArgumentTypeError, TypeError),
    ("s", "é", zarrx.errors.ArgumentEncodeError, UnicodeEncodeError),
    ("x", "abc", zarrx.ArgumentError, ValueError),
], ids=["huge", "out-of-range", "two-fields", "object", "non-ascii", "text"])
def test_a_field_write_numpy_cannot_convert_is_an_error_of_its_builtin_class(sel, value, cls,
                                                                              builtin):
    """As a write of whole items: ``z["x"] = 2**70`` raised numpy's bare OverflowError."""
    z = zarrx.create_array({}, shape=(3,), dtype=[("x", "i4"), ("y", "f4"), ("s", "S2")])
    with pytest.raises(cls, match="cannot set fields") as info:
        z[sel] = value
    assert isinstance(info.value, builtin) and isinstance(info.value, zarrx.ZarrError)
    assert z.nchunks_initialized == 0
