"""A ``transpose`` before a nested ``sharding_indexed`` codec: the inner sharding codec cuts the
outer one's inner chunk as the transpose leaves it. zarr-python 3 creates such arrays from a
sharding serializer whose codecs are ``[TransposeCodec, ShardingCodec]`` and tensorstore opens
them; zarrx creates the same document from the same arguments, and each library reads what
the others write. (Layouts tensorstore creates are in ``test_interop_ts_layouts.py``.)"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

# (outer shard's inner chunk, transpose order before the inner sharding codec, its chunk)
LAYOUTS = {
    "swap": ((4, 2), (1, 0), (1, 2)),
    "identity": ((4, 2), (0, 1), (2, 1)),
    "swap-wide": ((2, 4), (1, 0), (2, 1)),
}


def _serializer(inner, order, nested, lib):
    """The sharding serializer of ``LAYOUTS``, built from ``lib``'s own codec classes."""
    c = zarr.codecs if lib is zarr else zarrx.codecs
    return c.ShardingCodec(chunk_shape=inner, codecs=[
        c.TransposeCodec(order=order), c.ShardingCodec(
            chunk_shape=nested, codecs=[c.BytesCodec(), c.GzipCodec(level=1)],
            index_location="start")])


def _create(lib, path: str, name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # zarr-python warns about codecs around sharding
        return lib.create_array(path, shape=(9, 7), chunks=(8, 4), dtype="i4", fill_value=-1,
                                compressors=None, serializer=_serializer(*LAYOUTS[name], lib))


def _read_all(path: str) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(path, mode="r")[...]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
    return [zarrx.open_array(path, mode="r")[...], theirs, ts.open(spec).result().read().result()]


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_created_as_zarr_python_creates_it_and_read_alike_both_ways(tmp_path, name) -> None:
    values = np.arange(63, dtype="i4").reshape(9, 7)
    model = np.full((9, 7), -1, "i4")
    model[:8, 1:] = values[:8, 1:]
    docs = []
    for lib in (zarr, zarrx):
        path = str(tmp_path / lib.__name__)
        z = _create(lib, path, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z[:8, 1:] = values[:8, 1:]
        docs.append(json.loads(Path(path, "zarr.json").read_text())["codecs"])
        for who, got in zip(("zarrx", "zarr-python", "tensorstore"), _read_all(path)):
            np.testing.assert_array_equal(got, model, err_msg=f"{who} reads {lib.__name__}'s")
    assert docs[0] == docs[1]


def test_a_transpose_of_another_rank_beside_an_inner_sharding_codec_is_refused() -> None:
    c = zarrx.codecs
    serializer = c.ShardingCodec(chunk_shape=(4, 2), codecs=[
        {"name": "transpose", "configuration": {"order": [2, 0, 1]}},
        c.ShardingCodec(chunk_shape=(1, 2))])
    with pytest.raises(ArgumentError) as info:
        zarrx.create_array({}, shape=(8, 8), chunks=(8, 4), dtype="i4", serializer=serializer)
    assert str(info.value).startswith(
        "create_array serializer.configuration.codecs[0].configuration.order: expected a "
        "permutation of 2 dimensions, found [2, 0, 1]")


@pytest.mark.parametrize("orders", [[(1, 0)], [(1, 0), (1, 0)], [(2, 0, 1)]],
                         ids=["swap", "swap-twice", "rotate-3d"])
def test_transposes_in_filters_before_a_sharding_serializer(tmp_path, orders) -> None:
    """``filters=[TransposeCodec]`` with ``serializer=ShardingCodec``: zarr-python 3 stores the
    transposes before the sharding codec, which then cuts the transposed shard (before, zarrx
    refused the arguments with ``ArgumentError``)."""
    ndim = len(orders[0])
    shape, shard = ((9, 7), (8, 4)) if ndim == 2 else ((5, 6, 7), (4, 6, 2))
    inner = (2, 2) if ndim == 2 else (2, 2, 2)
    values = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    docs = []
    for lib in (zarr, zarrx):
        c = zarr.codecs if lib is zarr else zarrx.codecs
        path = str(tmp_path / lib.__name__)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z = lib.create_array(path, shape=shape, chunks=shard, dtype="i4", fill_value=-1,
                                 compressors=None,
                                 filters=[c.TransposeCodec(order=o) for o in orders],
                                 serializer=c.ShardingCodec(chunk_shape=inner,
                                                            codecs=[c.BytesCodec()]))
            z[...] = values
        docs.append(json.loads(Path(path, "zarr.json").read_text())["codecs"])
        for who, got in zip(("zarrx", "zarr-python", "tensorstore"), _read_all(path)):
            np.testing.assert_array_equal(got, values, err_msg=f"{who} reads {lib.__name__}'s")
    assert docs[0] == docs[1]
    assert [d["name"] for d in docs[1]] == ["transpose"] * len(orders) + ["sharding_indexed"]


def test_a_filter_other_than_a_transpose_before_a_sharding_serializer_is_refused() -> None:
    with pytest.raises(ArgumentError) as info:
        zarrx.create_array({}, shape=(8, 8), chunks=(8, 4), dtype="i4",
                           filters=[{"id": "delta", "dtype": "<i4"}],
                           serializer=zarrx.codecs.ShardingCodec(chunk_shape=(2, 2)))
    assert str(info.value).startswith(
        "create_array filters: only transposes and codecs mapping each value alone "
        "(scale_offset, cast_value) may come before a sharding serializer")
    assert "'numcodecs.delta'" in str(info.value)


def test_inner_chunks_cut_the_transposed_shard_as_the_spec_has_it(tmp_path) -> None:
    """After a transpose, the sharding codec's inner chunks divide the shard as the transpose
    leaves it. zarr-python 3.1.6 checks them against the untransposed shard: it creates an
    array whose inner chunks do not divide the shard its sharding codec sees (zarrx and
    tensorstore refuse it), and refuses one whose inner chunks do (zarrx creates it,
    tensorstore reads it)."""
    def make(lib, name, inner):
        c = zarr.codecs if lib is zarr else zarrx.codecs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.create_array(str(tmp_path / name), shape=(5, 6), chunks=(4, 6),
                                    dtype="i4", compressors=None,
                                    filters=[c.TransposeCodec(order=(1, 0))],
                                    serializer=c.ShardingCodec(chunk_shape=inner))

    make(zarr, "theirs", (2, 3))        # the transposed shard is (6, 4): 3 does not divide 4
    with pytest.raises(zarrx.MetadataError) as info:
        zarrx.open_array(str(tmp_path / "theirs"), mode="r")
    assert str(info.value) == (
        "zarr.json codecs[1].configuration.chunk_shape[1]: expected a divisor of the shard "
        "size 4 along axis 1 (shard shape [6, 4] as seen by the sharding codec), found 3")
    with pytest.raises(ArgumentError):
        make(zarrx, "refused", (2, 3))
    ours = make(zarrx, "ours", (3, 2))
    values = np.arange(30, dtype="i4").reshape(5, 6)
    ours[...] = values
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "ours")}}
    np.testing.assert_array_equal(ts.open(spec).result().read().result(), values)


@pytest.mark.parametrize("transposed", [False, True])
def test_outer_inner_chunks_not_dividing_the_shard_name_the_argument(transposed) -> None:
    """A nested sharding serializer whose outer inner chunks do not divide the shard is an
    ``ArgumentError`` naming ``chunk_shape`` in the argument, as for one sharding codec (it was
    a ``MetadataError`` naming "array metadata codecs[0]", a document the caller never gave)."""
    c = zarrx.codecs
    serializer = c.ShardingCodec(chunk_shape=(2, 3), codecs=[c.ShardingCodec(chunk_shape=(1, 1))])
    filters = [c.TransposeCodec(order=(0, 1))] if transposed else None
    with pytest.raises(ArgumentError) as info:
        zarrx.create_array({}, shape=(16, 5), chunks=(4, 2), dtype="i4", filters=filters,
                           serializer=serializer)
    assert str(info.value) == (
        "create_array serializer.configuration.chunk_shape[1]: expected a divisor of the shard "
        "size 2 along axis 1 (shard shape (4, 2)), found 3")
