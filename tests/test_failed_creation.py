"""A creation call that fails leaves the store as it found it: no groups above the new node,
no half-made node, and never the loss of the node it was to replace."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

#: a value zarr-python refuses as an attribute too (json cannot write numpy integers)
BAD_ATTRIBUTES = {"count": np.int64(1)}


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request):
    return request.param


def hierarchy(fmt: int) -> dict:
    """A store holding the array ``a`` (written) and the group ``s`` with the array ``s/t``."""
    store: dict = {}
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_array("a", shape=(4,), dtype="i4", chunks=(2,))[...] = 7
    g.create_group("s").create_array("t", shape=(2,), dtype="i4")[...] = 1
    return store


GROUP_CALLS = {
    "Group.create_group": lambda st, p: zarrx.open_group(st, mode="r+").create_group(
        p, overwrite=True, attributes=BAD_ATTRIBUTES),
    "Group.require_group": lambda st, p: zarrx.open_group(st, mode="r+").require_group(
        p, overwrite=True, attributes=BAD_ATTRIBUTES),
    "create_group": lambda st, p: zarrx.create_group(st, path=p, overwrite=True,
                                                     attributes=BAD_ATTRIBUTES),
    "open_group": lambda st, p: zarrx.open_group(st, path=p, mode="w",
                                                 attributes=BAD_ATTRIBUTES),
    "open": lambda st, p: zarrx.open(st, path=p, mode="w", attributes=BAD_ATTRIBUTES),
    "group": lambda st, p: zarrx.group(st, path=p, overwrite=True, attributes=BAD_ATTRIBUTES),
}


@pytest.mark.parametrize("call", GROUP_CALLS.values(), ids=list(GROUP_CALLS))
@pytest.mark.parametrize("path", ["a", "s", "new/deeper/group"])
def test_a_group_with_attributes_json_cannot_hold_replaces_and_creates_nothing(fmt, call, path):
    store = hierarchy(fmt)
    before = dict(store)
    with pytest.raises(zarrx.ArgumentTypeError, match="'count'"):
        call(store, path)
    assert store == before
    assert zarrx.open_array(store, path="a", mode="r")[...].tolist() == [7] * 4


def test_creating_a_group_where_one_is_writes_no_group_above_it(fmt):
    """The node exists below a group with no document of its own (tensorstore writes no
    groups above its arrays; Zarr v2 allows it): the error comes before the groups above are
    made."""
    store = hierarchy(fmt)
    zarrx.open_group(store, mode="r+").create_group("p/q")
    del store["p/.zgroup" if fmt == 2 else "p/zarr.json"]
    g = zarrx.open_group(store, mode="r+")
    before = dict(store)
    with pytest.raises(zarrx.errors.ContainsGroupError, match="a node already exists at 'p/q'"):
        g.create_group("p/q")
    assert store == before


ARRAY_CALLS = {
    "create_array": lambda st, p, **kw: zarrx.create_array(st, name=p, overwrite=True, **kw),
    "Group.create_array": lambda st, p, **kw: zarrx.open_group(st, mode="r+").create_array(
        p, overwrite=True, **kw),
    "array": lambda st, p, **kw: zarrx.array(kw.pop("data"), store=st, path=p, overwrite=True,
                                             **kw),
    "open_array": lambda st, p, **kw: zarrx.open_array(st, path=p, mode="w",
                                                       shape=np.shape(kw["data"]), **kw),
}


@pytest.mark.parametrize("call", ARRAY_CALLS.values(), ids=list(ARRAY_CALLS))
@pytest.mark.parametrize("path", ["a", "s", "new/deeper/array"])
@pytest.mark.parametrize("data, dtype", [(["seven"], "i4"), (np.array([object()]), "f8"),
                                         (["é"], "S1")], ids=["text", "object", "non-ascii"])
def test_data_the_dtype_cannot_take_replaces_and_creates_nothing(fmt, call, path, data, dtype):
    store = hierarchy(fmt)
    before = dict(store)
    with pytest.raises(zarrx.ZarrError, match="cannot convert value of type"):
        call(store, path, data=data, dtype=dtype)
    assert store == before


def test_g_setitem_of_data_that_cannot_be_stored_keeps_the_member(fmt):
    store = hierarchy(fmt)
    before = dict(store)
    g = zarrx.open_group(store, mode="r+")
    with pytest.raises(zarrx.ArgumentError, match="holds a value of type dict"):
        g["a"] = np.array([{}])
    assert store == before


def test_data_converted_once_is_stored_as_before(fmt):
    store = hierarchy(fmt)
    t = zarrx.create_array(store, name="t", data=["1", "22", "333"], dtype="i4")
    s = zarrx.create_array(store, name="s", data=np.array([1, 2]), dtype=str, overwrite=True)
    assert t[...].tolist() == [1, 22, 333] and s[...].tolist() == ["1", "2"]


@pytest.mark.parametrize("args, kwargs", [
    ((np.arange(3), np.array([{}])), {}),
    ((np.arange(3),), {"bad": np.array([1, "x", b"y"], dtype=object)}),
    ((np.arange(3),), {"zarr.json": np.arange(2)}),
], ids=["object-positional", "object-keyword", "document-name"])
@pytest.mark.parametrize("path", ["s", "new/group"])
def test_save_group_that_cannot_save_an_array_replaces_and_creates_nothing(fmt, args, kwargs,
                                                                           path):
    """save_group replaces the group at ``path``: an array it cannot save is refused before
    that, so the group there keeps its members."""
    store = hierarchy(fmt)
    before = dict(store)
    with pytest.raises(zarrx.ArgumentError):
        zarrx.save_group(store, *args, path=path, **kwargs)
    assert store == before
    with pytest.raises(zarrx.ArgumentError):
        zarrx.save(store, *args, path=path, **kwargs)
    assert store == before


def test_save_group_saves_every_array_in_the_format_of_the_group_above(fmt):
    store = hierarchy(fmt)
    zarrx.save_group(store, np.arange(3), path="s", words=np.array(["a", "bc"], dtype=object))
    g = zarrx.open_group(store, path="s", mode="r")
    assert g.zarr_format == fmt and sorted(g.keys()) == ["arr_0", "words"]
    assert g["words"][...].tolist() == ["a", "bc"] and g["arr_0"][...].tolist() == [0, 1, 2]


def _array_document(fmt: int, codec: dict) -> dict:
    if fmt == 3:
        return {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, codec]}
    return {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0,
            "order": "C", "filters": None, "compressor": codec}


@pytest.mark.parametrize("on_group", [False, True], ids=["create_hierarchy", "Group"])
def test_create_hierarchy_refuses_an_unknown_codec_before_writing(fmt, on_group):
    """As create_array and zarr-python refuse it: written, the array could never be read or
    written."""
    store = hierarchy(fmt)
    before = dict(store)
    codec = {"name": "nope"} if fmt == 3 else {"id": "nope"}
    nodes = {"new/g": {"zarr_format": fmt, "node_type": "group"} if fmt == 3 else
             {"zarr_format": 2}, "new/x": _array_document(fmt, codec)}
    with pytest.raises(zarrx.errors.UnknownCodecError, match="unknown (codec|numcodecs codec id)"
                                                             " 'nope'"):
        if on_group:
            zarrx.open_group(store, mode="r+").create_hierarchy(nodes)
        else:
            zarrx.create_hierarchy(store=store, nodes=nodes)
    assert store == before


def test_create_hierarchy_writes_arrays_of_known_codecs(fmt):
    codec = {"name": "zstd", "configuration": {"level": 1, "checksum": False}} if fmt == 3 \
        else {"id": "zstd", "level": 1}
    store: dict = {}
    made = dict(zarrx.create_hierarchy(store=store, nodes={"x": _array_document(fmt, codec)}))
    made["x"][...] = [1, 2, 3, 4]
    assert zarrx.open_array(store, path="x", mode="r")[...].tolist() == [1, 2, 3, 4]


class FailingSource:
    """Array-like data whose values cannot be had (a lazy source whose read fails)."""
    shape, dtype, ndim = (4,), np.dtype("i4"), 1

    def __array__(self, *args, **kwargs):
        raise OSError("the source cannot be read")


@pytest.mark.parametrize("path", ["a", "new/deeper/array"])
def test_from_array_of_a_source_that_fails_replaces_and_creates_nothing(fmt, path):
    store = hierarchy(fmt)
    before = dict(store)
    with pytest.raises(OSError, match="the source cannot be read"):
        zarrx.from_array(store, data=FailingSource(), name=path, overwrite=True)
    assert store == before
    assert zarrx.open_array(store, path="a", mode="r")[...].tolist() == [7] * 4


def test_from_array_without_its_data_does_not_read_the_source(fmt):
    store = hierarchy(fmt)
    z = zarrx.from_array(store, data=FailingSource(), name="new", write_data=False)
    assert z.shape == (4,) and z[...].tolist() == [0] * 4
