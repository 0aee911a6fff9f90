"""Fill values of the largest items a new array takes (1 MiB): a raw type ``r8388608`` has a
fill value of 1,048,576 byte values, which is read, checked and written at array speed (it took
about 25 s to create such an array, open it and change its attributes), its first bad byte
named by index."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.metadata import json as mjson
from zarrx.metadata._util import Loc
from zarrx.store import MemoryStore

from . import counted_calls

N = 1 << 20                                         # bytes an item
PATTERN = bytes(i % 251 for i in range(N))


def raw_doc(fill: object, data_type: object = f"r{8 * N}") -> bytes:
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [3], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
        "codecs": [{"name": "bytes"}]}).encode()


@pytest.fixture
def loc_count(monkeypatch):
    """The number of JSON locations made (one per item: the per-byte checks)."""
    return counted_calls(monkeypatch, Loc, "__truediv__")


def test_a_raw_fill_value_of_a_million_bytes_is_read_without_checking_byte_by_byte(loc_count):
    a = zarrx.open_array(MemoryStore({"zarr.json": raw_doc(list(PATTERN))}), mode="r")
    assert loc_count[0] < 100                       # was one location per byte
    assert a.dtype == np.dtype(f"V{N}") and a.fill_value.tobytes() == PATTERN
    assert a[2].tobytes() == PATTERN


def test_an_array_of_a_million_byte_raw_type_is_created_written_and_reopened(monkeypatch):
    shallow_calls = counted_calls(monkeypatch, mjson, "_shallow")
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(3,), chunks=(1,), dtype=f"r{8 * N}",
                           fill_value=PATTERN)
    z.attrs["note"] = "one item is a mebibyte"
    z[1] = np.frombuffer(bytes(N), dtype=z.dtype)[0]
    assert shallow_calls[0] < 100                   # was one call per byte, each write
    doc = json.loads(store.get("zarr.json"))
    assert doc["fill_value"] == list(PATTERN)
    again = zarrx.open_array(store, mode="r")
    assert again.fill_value.tobytes() == PATTERN and again.attrs["note"]
    assert [again[i].tobytes() for i in range(3)] == [PATTERN, bytes(N), PATTERN]


@pytest.mark.parametrize("at", [0, N - 1])
@pytest.mark.parametrize("bad,found", [
    (256, "256"), (-1, "-1"), (True, "True"), (7.0, "7.0"), ("7", "'7'"), (None, "None"),
    (2**70, "1180591620717411303424"), ([7], "[7]")])
def test_the_first_bad_byte_of_a_million_byte_raw_fill_value_is_named(bad, found, at):
    fill = list(PATTERN)
    fill[at] = bad
    fill[-1 if at == 0 else 0] = 300 if at == 0 else 7   # a later bad byte is not the one named
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(MemoryStore({"zarr.json": raw_doc(fill)}), mode="r")
    assert str(info.value) == (f"zarr.json fill_value[{at}]: expected an integer in [0, 255], "
                               f"found {found}")


def test_a_struct_field_of_a_million_byte_raw_type_takes_its_fill_value_as_byte_values(
        loc_count):
    struct = {"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": f"r{8 * N}"}, {"name": "b", "data_type": "int16"}]}}
    a = zarrx.open_array(MemoryStore({"zarr.json": raw_doc(
        {"a": list(PATTERN), "b": -2}, struct)}), mode="r")
    assert loc_count[0] < 100
    assert a.fill_value["a"].tobytes() == PATTERN and a.fill_value["b"] == -2
    bad = list(PATTERN)
    bad[N - 1] = 256
    with pytest.raises(MetadataError, match=r"^zarr.json fill_value\.a\[1048575\]: expected an "
                       r"integer in \[0, 255\], found 256$"):
        zarrx.open_array(MemoryStore({"zarr.json": raw_doc({"a": bad, "b": 0}, struct)}),
                         mode="r")


@pytest.mark.parametrize("dtype", [f"V{N}", [("a", f"V{N - 2}"), ("b", "<i2")]])
def test_v2_raw_and_structured_fill_values_of_a_mebibyte_round_trip_as_base64(dtype):
    store = MemoryStore()
    item = np.frombuffer(PATTERN, dtype=np.dtype(dtype))[0]
    zarrx.create_array(store, shape=(2,), chunks=(1,), dtype=dtype, fill_value=item,
                       zarr_format=2)
    doc = json.loads(store.get(".zarray"))
    assert base64.b64decode(doc["fill_value"]) == PATTERN
    a = zarrx.open_array(store, mode="r")
    assert a.fill_value.tobytes() == PATTERN and a[1].tobytes() == PATTERN


def test_large_documents_write_arrays_of_numbers_and_strings_as_json_dumps_indents_them():
    """The fast paths for arrays of plain values (each item on its own line, down to
    INDENT_LEVELS levels) write what ``json.dumps(indent=2)`` writes."""
    doc = {"fill_value": list(range(300)) + [True, None, -0.5, float("nan"), 1e300],
           "names": ["a, b", "\u00e9", '"q", ', ""] * 300,
           "mixed": [1, "x, y", None, 2.5, False] * 10}
    assert mjson._count(doc, mjson.INDENT_MAX_VALUES + 1) > mjson.INDENT_MAX_VALUES
    assert mjson.dumps(doc).decode() == json.dumps(doc, indent=2)
    doc["levels"] = {"two": [[1, 2], ["a, b", {"k": [4]}]]}     # below: one line each
    text = mjson.dumps(doc).decode()
    assert '"two": [\n      [1, 2],\n      ["a, b", {"k": [4]}]\n    ]\n' in text
    assert json.loads(text.replace("NaN", "null")) == json.loads(
        json.dumps(doc).replace("NaN", "null"))


def struct_doc(nfields: int, fill: dict) -> bytes:
    struct = {"name": "struct", "configuration": {"fields": [
        {"name": f"f{i}", "data_type": "uint8"} for i in range(nfields)]}}
    return raw_doc(fill, struct)


def test_a_struct_fill_value_of_30000_fields_is_read_in_linear_time():
    # each given name was looked up in a list of the fields: 30,000 fields took 5 s, 100,000 56 s
    n = 30_000
    a = zarrx.open_array(MemoryStore({"zarr.json": struct_doc(n, {f"f{i}": i % 256 for i in
                                                                   range(n)})}), mode="r")
    assert a.dtype.names[-1] == "f29999" and list(a[0].item()[-3:]) == [45, 46, 47]


def test_an_unknown_field_in_the_fill_value_of_a_struct_of_30000_fields_is_named_briefly():
    n = 30_000
    fill = {f"f{i}": 0 for i in range(n)}
    fill["nope"] = 1
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(MemoryStore({"zarr.json": struct_doc(n, fill)}), mode="r")
    first = ", ".join(f"'f{i}'" for i in range(20))
    assert str(info.value) == ("zarr.json fill_value.nope: unknown field; the data type's "
                               f"fields are {first}, ... (30000 fields)")
    with pytest.raises(MetadataError, match=r"^zarr\.json fill_value\.nope: unknown field; the "
                       r"data type's fields are 'f0', 'f1'$"):
        zarrx.open_array(MemoryStore({"zarr.json": struct_doc(2, {"f0": 0, "nope": 1,
                                                                  "f1": 2})}), mode="r")


def test_a_document_whose_indented_form_is_too_large_to_read_is_written_compact():
    """A long array, a value a line, may take several times the bytes of the document read
    (9 million zeros: 17 MiB read, 81 MiB indented, past the 64 MiB load takes); such a
    document is written without spaces, so that the node stays writable and readable. Shown
    with the limit lowered to 1 MiB."""
    with zarrx.config.set(max_metadata_bytes=1 << 20):
        _written_compact()


def _written_compact():
    doc = json.loads(raw_doc(0, "uint8"))
    doc["attributes"] = {"zeros": [0] * 200_000}
    text = json.dumps(doc, separators=(",", ":")).encode()
    assert len(text) < 1 << 19
    store = MemoryStore({"zarr.json": text})
    z = zarrx.open_array(store, mode="r+")
    z.attrs["note"] = "x"                       # was refused: 1.8 MB once indented
    written = store.get("zarr.json")
    assert len(written) < 1 << 20 and b"\n" not in written
    again = zarrx.open_array(store, mode="r")
    assert again.attrs["note"] == "x" and again.attrs["zeros"] == [0] * 200_000
    small = dict(doc, attributes={"zeros": [0] * 2_000})    # still indented
    assert mjson.dumps(small).count(b"\n") > 2_000


@pytest.mark.slow
def test_a_document_of_more_than_10_million_values_read_can_be_written_back():
    # a 21 MB document of 10.5 million zeros opened, but writing it back was refused: the
    # writer took at most 10 million values, fewer than a document load takes can hold
    doc = json.loads(raw_doc(0, "uint8"))
    doc["attributes"] = {"zeros": [0] * 10_500_000}
    store = MemoryStore({"zarr.json": json.dumps(doc, separators=(",", ":")).encode()})
    z = zarrx.open_array(store, mode="r+")
    z.attrs["note"] = "x"
    again = zarrx.open_array(store, mode="r")
    assert again.attrs["note"] == "x" and len(again.attrs["zeros"]) == 10_500_000
