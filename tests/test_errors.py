"""The error family: one base class, and the builtins idiomatic code already catches."""
from __future__ import annotations

import pytest

import zarrx
from zarrx import errors

FAMILY = [
    (errors.MetadataError, ValueError),
    (errors.CodecError, ValueError),
    (errors.StoreError, OSError),
    (errors.ShardError, ValueError),
    (errors.IndexingError, IndexError),
    (errors.NodeNotFoundError, KeyError),
    (errors.NodeNotFoundError, FileNotFoundError),
    (errors.NodeExistsError, FileExistsError),
    (errors.ReadOnlyError, PermissionError),
    (errors.ReadOnlyError, errors.StoreError),
]


@pytest.mark.parametrize("cls,builtin", FAMILY, ids=lambda x: x.__name__)
def test_subclass_of_zarr_error_and_builtin(cls, builtin):
    exc = cls("message")
    assert isinstance(exc, zarrx.ZarrError) and isinstance(exc, builtin)


def test_key_error_message_is_not_quoted():
    assert str(errors.NodeNotFoundError("group '/': no member 'x'")) == "group '/': no member 'x'"


def test_expected_helper():
    e = errors.expected("a/zarr.json codecs[2].configuration.level", "an int", "x")
    assert isinstance(e, errors.MetadataError)
    assert str(e) == "a/zarr.json codecs[2].configuration.level: expected an int, found 'x'"


def test_missing_member_is_key_error():
    g = zarrx.open_group(zarrx.store.MemoryStore(), mode="w")
    with pytest.raises(KeyError):
        g["missing"]
