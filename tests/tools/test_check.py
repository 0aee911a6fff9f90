"""``zarrx.check``: every stored object decoded; corrupt, torn, orphaned and temporary objects
found, and repaired on request."""
from __future__ import annotations

import os

import numpy as np
import pytest

import zarrx
from zarrx.tools.progress import Progress


def _data(path):
    g = zarrx.open_group(path, mode="w")
    p = g.create_array("plain", shape=(8, 8), dtype="u2", chunks=(4, 4),
                       compressors=[{"name": "zstd"}, {"name": "crc32c"}], fill_value=5)
    p[...] = np.arange(64, dtype="u2").reshape(8, 8)
    s = g.create_array("sharded", shape=(16, 16), dtype="f4", chunks=(4, 4), shards=(8, 8),
                       fill_value=-1)
    s[...] = np.arange(256, dtype="f4").reshape(16, 16)
    return g


def _flip(path, at):
    b = bytearray(open(path, "rb").read())
    b[at] ^= 0xFF
    open(path, "wb").write(bytes(b))


def _kinds(report):
    return sorted((f.kind, f.key, f.inner) for f in report.findings)


def test_a_sound_hierarchy_has_no_findings(tmp_path):
    _data(str(tmp_path / "d.zarr"))
    report = zarrx.check(str(tmp_path / "d.zarr"))
    assert report.ok and report.arrays == 2 and report.groups == 1 and report.objects == 8


def test_corrupt_chunks_torn_shards_and_bad_indexes_are_found(tmp_path):
    root = tmp_path / "d.zarr"
    _data(str(root))
    _flip(root / "plain" / "c" / "1" / "0", 3)                      # crc32c catches it
    shard = root / "sharded" / "c" / "0" / "1"
    _flip(shard, 4)                                                  # inside inner chunk c/0/0
    torn = root / "sharded" / "c" / "1" / "0"
    torn.write_bytes(torn.read_bytes()[:40])
    index = root / "sharded" / "c" / "1" / "1"
    _flip(index, os.path.getsize(index) - 10)                        # inside the index
    report = zarrx.check(str(root))
    assert _kinds(report) == [("corrupt", "plain/c/1/0", None),
                              ("corrupt", "sharded/c/0/1", "c/0/0"),
                              ("corrupt", "sharded/c/1/1", None),
                              ("torn", "sharded/c/1/0", None)]
    detail = {f.key: f.detail for f in report.findings}
    assert "checksum" in detail["sharded/c/1/1"] and "40 bytes" in detail["sharded/c/1/0"]


def test_fill_corrupt_rewrites_only_what_is_lost(tmp_path):
    root = tmp_path / "d.zarr"
    _data(str(root))
    _flip(root / "plain" / "c" / "1" / "0", 3)
    _flip(root / "sharded" / "c" / "0" / "1", 4)
    report = zarrx.check(str(root), repair=True)           # corrupt chunks need fill_corrupt
    assert len(report.remaining) == 2
    report = zarrx.check(str(root), repair=True, fill_corrupt=True)
    assert not report.remaining and len(report.repaired) == 2
    assert zarrx.check(str(root)).ok
    g = zarrx.open_group(str(root), mode="r")
    want = np.arange(64, dtype="u2").reshape(8, 8)
    want[4:8, 0:4] = 5
    np.testing.assert_array_equal(g["plain"][...], want)
    shard = np.arange(256, dtype="f4").reshape(16, 16)
    shard[0:4, 8:12] = -1                                   # only the bad inner chunk
    np.testing.assert_array_equal(g["sharded"][...], shard)



def test_fill_corrupt_rewrites_a_nested_shard_whose_index_is_unreadable(tmp_path):
    import json
    le = {"name": "bytes", "configuration": {"endian": "little"}}

    def sharding(chunk, codecs):
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": chunk, "codecs": codecs,
            "index_codecs": [le, {"name": "crc32c"}], "index_location": "end"}}
    path = tmp_path / "n.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [8, 8], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [sharding([2, 4], [sharding([1, 2], [le, {"name": "crc32c"}])])]}))
    want = np.arange(1, 65, dtype="i4").reshape(8, 8)
    zarrx.open_array(str(path), mode="r+")[...] = want
    # shard c/0/1: two nested shards of 4 x 12 bytes and a 68-byte index, then a 36-byte index
    _flip(path / "c" / "0" / "1", 60)                       # the first nested shard's index
    report = zarrx.check(str(path), repair=True, fill_corrupt=True)
    assert [(f.kind, f.inner) for f in report.findings] == [
        ("corrupt", "c/0/0"), ("corrupt", "c/0/1"), ("corrupt", "c/1/0"), ("corrupt", "c/1/1")]
    assert not report.remaining
    assert report.repairs[0] == ("rewrote the nested shard holding inner chunk c/0/0 of c/0/1 "
                                 "as the fill value: its index is unreadable")
    assert zarrx.check(str(path)).ok
    want[0:2, 4:8] = 0                                      # only what that nested shard held
    np.testing.assert_array_equal(zarrx.open_array(str(path), mode="r")[...], want)

def test_orphans_are_found_and_removed(tmp_path):
    root = tmp_path / "d.zarr"
    _data(str(root))
    (root / "plain" / "c" / "7").mkdir()
    (root / "plain" / "c" / "7" / "0").write_bytes(b"old")         # outside the 2x2 grid
    (root / "plain" / "notes.txt").write_bytes(b"x")
    (root / "gone").mkdir()
    (root / "gone" / "c").write_bytes(b"x")                         # a node's leftover chunk
    report = zarrx.check(str(root))
    assert _kinds(report) == [("orphaned", "gone/c", None), ("orphaned", "plain/c/7/0", None),
                              ("orphaned", "plain/notes.txt", None)]
    report = zarrx.check(str(root), repair=True)            # strays are kept: may be data
    assert [f.key for f in report.remaining] == ["gone/c", "plain/notes.txt"]
    assert report.repairs == ["removed the orphaned object plain/c/7/0"]
    assert report.notes == ["2 orphaned objects kept: objects no metadata names may be data of "
                            "a node whose metadata is lost; restore it, or repair with "
                            "--remove-strays (remove_strays=True) to remove them"]
    assert (root / "gone" / "c").exists() and (root / "plain" / "notes.txt").exists()
    report = zarrx.check(str(root), repair=True, remove_strays=True)
    assert not report.remaining and zarrx.check(str(root)).ok
    assert not (root / "gone").exists()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_repair_keeps_the_chunks_of_an_array_whose_metadata_is_lost(tmp_path, zarr_format):
    """An array whose metadata document is gone (or whose chunk key encoding was edited) leaves
    chunks no metadata names: a repair must not delete them, since restoring the document
    brings the data back."""
    root = tmp_path / "d.zarr"
    g = zarrx.open_group(str(root), mode="w", zarr_format=zarr_format)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i1")[:] = [1, 2, 3, 4]
    doc = root / "a" / (".zarray" if zarr_format == 2 else "zarr.json")
    saved = doc.read_bytes()
    doc.unlink()
    report = zarrx.check(str(root), repair=True)
    assert {f.kind for f in report.findings} == {"orphaned"} and len(report.remaining) == 2
    assert report.repairs == []
    doc.write_bytes(saved)
    assert zarrx.open_array(str(root), path="a", mode="r")[...].tolist() == [1, 2, 3, 4]
    with pytest.raises(zarrx.ZarrError, match="remove_strays needs repair=True"):
        zarrx.check(str(root), remove_strays=True)


def test_old_temporary_files_are_removed_and_recent_ones_left_alone(tmp_path):
    root = tmp_path / "d.zarr"
    _data(str(root))
    old = root / "plain" / "c" / "0" / ".0.zarrx-tmp-1-aa"
    new = root / "plain" / "c" / "0" / ".1.zarrx-tmp-2-bb"
    old.write_bytes(b"x")
    new.write_bytes(b"y")
    os.utime(old, (0, 0))
    report = zarrx.check(str(root))
    assert _kinds(report) == [("temporary", "plain/c/0/.0.zarrx-tmp-1-aa", None)]
    assert report.recent_temporary == ["plain/c/0/.1.zarrx-tmp-2-bb"]
    report = zarrx.check(str(root), repair=True)
    assert not report.remaining and not old.exists() and new.exists()


def test_metadata_that_does_not_parse_is_reported(tmp_path):
    root = tmp_path / "d.zarr"
    _data(str(root))
    (root / "plain" / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array"}')
    report = zarrx.check(str(root))
    assert [(f.kind, f.key) for f in report.findings] == [("metadata", "plain/zarr.json")]


def test_chunks_of_a_codec_zarrx_lacks_are_neither_corrupt_nor_repaired(tmp_path):
    import json
    path = str(tmp_path / "u.zarr")
    zarrx.create_array(path, shape=(8,), dtype="i4", chunks=(4,), zarr_format=2,
                       compressors=None)[:] = np.arange(8)
    doc = json.load(open(f"{path}/.zarray"))
    doc["filters"] = [{"id": "zx_no_such_codec"}]   # a codec neither zarrx nor numcodecs has
    json.dump(doc, open(f"{path}/.zarray", "w"))
    chunks = {name: open(f"{path}/{name}", "rb").read() for name in ("0", "1")}
    report = zarrx.check(path, repair=True, fill_corrupt=True)
    assert [(f.kind, f.key) for f in report.findings] == [("unsupported", ".zarray")]
    assert report.findings[0].detail.startswith("unknown codec 'numcodecs.zx_no_such_codec'")
    assert report.findings[0].detail.endswith("; its 2 stored objects were not checked")
    assert report.remaining == report.findings and report.objects == 0
    assert {name: open(f"{path}/{name}", "rb").read() for name in ("0", "1")} == chunks


def test_chunks_of_a_codec_configuration_zarrx_refuses_are_neither_corrupt_nor_repaired(
        tmp_path):
    # a delta filter whose declared type's item size does not divide a chunk's bytes (numcodecs
    # cannot read them as that type); zarrx refuses it: the data is not corrupt, and a repair
    # must not replace it with the fill value
    import json
    path = str(tmp_path / "d.zarr")
    zarrx.create_array(path, shape=(6,), dtype="i2", chunks=(3,), zarr_format=2,
                       compressors=None, filters=[{"id": "delta", "dtype": "<i2"}]
                       )[:] = np.arange(6)
    doc = json.load(open(f"{path}/.zarray"))
    doc["filters"] = [{"id": "delta", "dtype": "<i4"}]
    json.dump(doc, open(f"{path}/.zarray", "w"))
    chunks = {name: open(f"{path}/{name}", "rb").read() for name in ("0", "1")}
    report = zarrx.check(path, repair=True, fill_corrupt=True)
    assert [(f.kind, f.key) for f in report.findings] == [("unsupported", ".zarray")]
    assert report.findings[0].detail == (
        ".zarray filters[0].dtype: delta reads the bytes of a chunk as this type; expected a "
        "type whose item size divides a chunk's bytes (6 bytes of shape (3,) and type int16), "
        "found <i4; its 2 stored objects were not checked")
    assert report.remaining == report.findings and report.objects == 0
    assert {name: open(f"{path}/{name}", "rb").read() for name in ("0", "1")} == chunks


def test_the_consolidated_metadata_of_a_subgroup_is_not_orphaned(tmp_path):
    path = str(tmp_path / "c.zarr")
    g = zarrx.open_group(path, mode="w", zarr_format=2)
    g.create_group("s").create_array("a", shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    zarrx.consolidate_metadata(f"{path}/s")
    with open(f"{path}/s/a/.zmetadata", "w") as f:     # under an array it is no document
        f.write("{}")
    report = zarrx.check(path, repair=True, remove_strays=True)
    assert _kinds(report) == [("orphaned", "s/a/.zmetadata", None)]
    assert os.path.exists(f"{path}/s/.zmetadata")
    assert zarrx.check(f"{path}/s").ok


def test_a_zip_archive_is_checked_in_place(tmp_path):
    _data(str(tmp_path / "d.zarr"))
    zarrx.copy(str(tmp_path / "d.zarr"), str(tmp_path / "d.zip"))
    report = zarrx.check(str(tmp_path / "d.zip") + "/sharded")
    assert report.ok and report.arrays == 1 and report.objects == 4


def test_fill_corrupt_needs_repair(tmp_path):
    _data(str(tmp_path / "d.zarr"))
    with pytest.raises(zarrx.ZarrError, match="--fill-corrupt needs --repair"):
        zarrx.check(str(tmp_path / "d.zarr"), fill_corrupt=True)


class _WriterAtTheEnd(Progress):
    """A writer that rewrites a region of ``array`` once every object has been read (between
    the check and the repair)."""

    def __init__(self, array, objects):
        self.array, self.left = array, objects

    def advance(self, n):
        self.left -= n
        if self.left == 0:
            self.array[8:16, 0:8] = 3.0


def test_a_repair_leaves_alone_what_a_writer_replaced_since_the_check(tmp_path):
    root = tmp_path / "d.zarr"
    g = _data(str(root))
    torn = root / "sharded" / "c" / "1" / "0"
    torn.write_bytes(torn.read_bytes()[:40])
    writer = _WriterAtTheEnd(zarrx.open_array(str(root), path="sharded", mode="r+"), 8)
    report = zarrx.check(str(root), repair=True, fill_corrupt=True, workers=1,
                         progress=writer)
    assert [f.kind for f in report.findings] == ["torn"] and report.remaining
    assert report.repairs == ["could not repair sharded/c/1/0: it changed since it was checked; "
                              "left alone"]
    assert (g["sharded"][8:16, 0:8] == 3.0).all() and zarrx.check(str(root)).ok


@pytest.mark.skipif(os.name == "nt", reason="file names are bytes on POSIX only")
def test_a_file_name_that_is_not_utf8_is_orphaned_and_left_alone(tmp_path, capsys):
    from zarrx import cli
    root = tmp_path / "a.zarr"
    zarrx.create_array(str(root), shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    try:
        open(os.path.join(os.fsencode(root / "c"), b"\xff"), "wb").close()
    except OSError:
        pytest.skip("the file system refuses names that are not UTF-8")
    (root / "c" / "stray").write_bytes(b"")
    detail = ("not a chunk key of the array; the store cannot address its name (found "
              "characters that are not encodable as UTF-8): remove it by hand")
    report = zarrx.check(str(root))
    assert sorted((f.kind, f.key, f.detail) for f in report.findings) == [
        ("orphaned", "c/\\xff", detail),
        ("orphaned", "c/stray", "not a chunk key of the array")]
    report = zarrx.check(str(root), repair=True, remove_strays=True)
    assert [f.key for f in report.remaining] == ["c/\\xff"]
    assert sorted(os.listdir(os.fsencode(root / "c"))) == [b"0", b"1", b"\xff"]
    assert cli.main(["check", str(root)]) == 1
    assert f"  orphaned: c/\\xff: {detail}\n" in capsys.readouterr().out
    assert cli.main(["info", str(root)]) == 0
    assert "Stored size   : 22 B (22 B)" in capsys.readouterr().out


@pytest.mark.parametrize("doc, text", [
    ("f/.zattrs", "{bad"), ("f/.zarray", "{bad"), (".zattrs", "[1]"), (".zmetadata", "{bad"),
])
def test_a_broken_v2_document_is_reported_under_its_own_key(tmp_path, doc, text):
    root = tmp_path / "g.zarr"
    g = zarrx.open_group(str(root), mode="w", zarr_format=2)
    g.create_array("f", shape=(2,), dtype="i1", attributes={"a": 1})[:] = 1
    zarrx.consolidate_metadata(str(root))
    (root / doc).write_text(text)
    report = zarrx.check(str(root))
    assert [(f.kind, f.key) for f in report.findings] == [("metadata", doc)]


_ARRAY_V3 = ('{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": %s, '
             '"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}, '
             '"chunk_key_encoding": {"name": "default"}, "codecs": %s, "fill_value": %s}')


@pytest.mark.parametrize("doc, text", [
    ("f/zarr.json", "xx"),
    ("f/zarr.json", '{"zarr_format": 3, "node_type": "array", "shape": [4]}'),
    ("f/zarr.json", '{"zarr_format": 3, "node_type": "group", "attributes": 5}'),
    ("f/zarr.json", _ARRAY_V3 % ('"int9"', '[{"name": "bytes"}]', "0")),
    ("f/zarr.json", _ARRAY_V3 % ('"int8"', '[{"name": "bytes"}]', "1000")),
    ("f/zarr.json", _ARRAY_V3 % ('"int8"', '[{"name": "zstd"}]', "0")),
    ("f/zarr.json", _ARRAY_V3 % ('"int8"', '[{"name": "blosc", "configuration": {}}]', "0")),
    ("f/.zarray", '{"zarr_format": 2, "shape": [3]}'),
    ("f/.zattrs", "[1]"),
])
def test_a_broken_document_is_named_once_in_the_report(tmp_path, capsys, doc, text):
    root = tmp_path / "g.zarr"
    fmt = 2 if doc.startswith("f/.z") else 3
    g = zarrx.open_group(str(root), mode="w", zarr_format=fmt)
    g.create_array("f", shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    (root / doc).write_text(text)
    from zarrx import cli
    assert cli.main(["check", str(root)]) == 1
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  metadata: ")]
    assert len(lines) == 1 and lines[0].count(doc) == 1, lines


@pytest.mark.parametrize("node", ["", "/f"])
def test_a_checked_node_whose_own_metadata_is_broken_is_a_finding(tmp_path, capsys, node):
    from zarrx import cli
    root = tmp_path / "g.zarr"
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("f", shape=(2,), dtype="i1")[:] = 1
    key = node.lstrip("/") + ("/" if node else "") + "zarr.json"
    (root / key).write_text("[1, 2]")
    report = zarrx.check(str(root) + node)
    assert [(f.kind, f.key, f.node) for f in report.findings] == [("metadata", key, node or "/")]
    assert cli.main(["check", str(root) + node]) == 1
    out = capsys.readouterr().out
    assert f"  metadata: {key}: expected a JSON object at the top level, found [1, 2]\n" in out
    with pytest.raises(zarrx.errors.NodeNotFoundError):
        zarrx.check(str(root / "missing"))


def test_a_shard_index_entry_overlapping_its_index_is_corrupt(tmp_path):
    import struct

    from zarrx.codecs._crc32c import crc32c
    root = tmp_path / "d.zarr"
    _data(str(root))
    shard = root / "sharded" / "c" / "0" / "0"
    blob = bytearray(shard.read_bytes())
    n = len(blob)
    index = n - (4 * 16 + 4)
    blob[index:index + 16] = struct.pack("<QQ", index - 8, 16)      # entry 0 runs into the index
    blob[n - 4:] = struct.pack("<I", crc32c(bytes(blob[index:n - 4])))   # with a valid checksum
    shard.write_bytes(bytes(blob))
    report = zarrx.check(str(root))
    assert [(f.kind, f.key, f.detail) for f in report.findings] == [
        ("corrupt", "sharded/c/0/0",
         f"index entry 0 (inner chunk (0, 0)): bytes [{index - 8}, {index + 8}) overlap the "
         f"index at bytes [{index}, {n}) of the {n}-byte shard")]


@pytest.mark.parametrize("age", ["x", -1, float("nan"), True])
def test_temp_age_must_be_a_number_of_seconds(tmp_path, age):
    p = str(tmp_path / "a.zarr")
    zarrx.create_array(p, shape=(2,), dtype="u1", chunks=(2,))
    with pytest.raises(zarrx.ArgumentError, match="^check: temp_age: expected a number of "
                                                  "seconds, 0 or more, found "):
        zarrx.check(p, temp_age=age)


def test_the_progress_of_a_check_counts_stored_objects(tmp_path):
    """check reads stored objects, not bytes: its progress says so, and its bar shows objects
    (a bar in bytes showed '8.00B' for 8 chunks)."""
    import io

    from zarrx.tools.progress import BarProgress

    class Seen(Progress):
        def __init__(self):
            self.calls = []

        def start(self, total, label, unit="B"):
            self.calls.append((total, label, unit))

    root = tmp_path / "a.zarr"
    zarrx.create_array(str(root), shape=(16,), chunks=(2,), dtype="i1")[:] = 1
    seen = Seen()
    zarrx.check(str(root), progress=seen)
    assert seen.calls == [(8, "check", "object")]
    pytest.importorskip("tqdm")
    out = io.StringIO()
    zarrx.check(str(root), progress=BarProgress(out))
    assert "8/8 [" in out.getvalue() and "object/s" in out.getvalue()
    assert "B/s" not in out.getvalue()


def test_each_object_belongs_to_the_nearest_node_above_it(tmp_path):
    """Objects are told apart by the nearest node above them, among names that share a prefix
    (``a``, ``ab``, ``a/b``) and in a hierarchy of many nodes checked with one set of
    threads."""
    root = tmp_path / "n.zarr"
    g = zarrx.open_group(str(root), mode="w")
    for name in ("a", "ab", "a/b", "a/b/c"):
        g.create_group(name)
    arrays = {}
    for path in ("a/x", "ab/x", "a/b/x", "a/b/c/x", "a/bx"):
        arrays[path] = g.create_array(path, shape=(4,), chunks=(2,), dtype="i1")
        arrays[path][:] = 1
    for i in range(30):
        g.create_array(f"many/m{i}", shape=(2,), chunks=(2,), dtype="i1")[:] = 1
    (root / "ab" / "x" / "c" / "9").write_bytes(b"\0\0")          # outside ab/x's grid
    (root / "a" / "b" / "stray").write_bytes(b"?")                # in group a/b
    (root / "a" / "bx" / "c" / "1").write_bytes(b"\1")            # a/bx's, rewritten: corrupt
    report = zarrx.check(str(root), workers=3)
    assert sorted((f.kind, f.key, f.node) for f in report.findings) == [
        ("corrupt", "a/bx/c/1", "/a/bx"),
        ("orphaned", "a/b/stray", "/a/b"),
        ("orphaned", "ab/x/c/9", "/ab/x"),
    ]
    assert report.arrays == 35 and report.objects == 2 * 5 + 30


@pytest.mark.parametrize("transposed", [False, True])
def test_a_shard_of_many_inner_chunks_is_checked_by_the_ones_it_stores(tmp_path, monkeypatch,
                                                                       transposed):
    # a shard is checked over its index: a sound one without reading the array, a corrupt one
    # by reading each inner chunk it stores (named in the order of the array's axes); the
    # report is what reading every inner chunk of the shard gave
    import json
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    path = tmp_path / "s.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [20, 24], "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16, 16]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [*([{"name": "transpose", "configuration": {"order": [1, 0]}}]
                     if transposed else []),
                   {"name": "sharding_indexed", "configuration": {
                       "chunk_shape": [1, 1], "codecs": [le, {"name": "crc32c"}],
                       "index_codecs": [le, {"name": "crc32c"}], "index_location": "end"}}]}))
    arr = zarrx.open_array(str(path), mode="r+")
    for at, value in (((0, 2), 1), ((1, 0), 2), ((5, 7), 3), ((17, 20), 4)):
        arr[at] = value
    calls = []
    read = zarrx.Array.get_block_selection
    monkeypatch.setattr(zarrx.Array, "get_block_selection",
                        lambda self, sel, **kw: calls.append(sel) or read(self, sel, **kw))
    assert zarrx.check(str(path)).findings == [] and calls == []
    shard = path / "c" / "0" / "0"
    blob = shard.read_bytes()
    entries = np.frombuffer(blob[-(256 * 16 + 4):-4], "<u8").reshape(256, 2)
    for i, j in ((1, 0), (0, 2)):
        _flip(shard, int(entries[j * 16 + i if transposed else i * 16 + j, 0]))
    report = zarrx.check(str(path))
    assert [(f.kind, f.key, f.inner, f.detail) for f in report.findings] == [
        ("corrupt", "c/0/0", inner, detail) for inner, detail in (
            ("c/0/2", "crc32c checksum mismatch: stored 0xe2c3efa5, computed 0x4120cb26"),
            ("c/1/0", "crc32c checksum mismatch: stored 0xd624473c, computed 0x75c763bf"))]
    assert len(calls) == 3          # each inner chunk the corrupt shard stores


def test_a_repair_that_fails_is_not_printed_as_repaired(tmp_path):
    # a zip archive cannot remove entries: its line read 'repaired: could not repair ...'
    src = tmp_path / "a.zarr"
    z = zarrx.create_array(str(src), shape=(4,), chunks=(2,), dtype="u1", fill_value=0)
    z[:] = 1
    (src / "c" / "9").write_bytes(b"x")     # a chunk outside the grid
    zarrx.copy(str(src), str(tmp_path / "a.zip"))
    report = zarrx.check(str(tmp_path / "a.zip"), repair=True)
    assert report.remaining and not report.repaired
    lines = str(report).splitlines()
    assert not [ln for ln in lines if ln.startswith("  repaired:")]
    assert [ln for ln in lines if ln.startswith("  not repaired: c/9: ")]


def test_a_node_inside_an_array_directory_is_a_stray_of_the_array(tmp_path):
    # no reader lists a node below an array; check counted it as an array of the hierarchy
    g = zarrx.open_group(str(tmp_path / "h.zarr"), mode="w")
    g.create_array("a", shape=(4,), chunks=(2,), dtype="u1")[:] = 1
    zarrx.create_array(str(tmp_path / "h.zarr" / "a" / "x"), shape=(2,), chunks=(2,),
                       dtype="u1")[:] = 2
    report = zarrx.check(str(tmp_path / "h.zarr"))
    assert report.arrays == 1
    assert sorted((f.kind, f.key, f.node, f.stray) for f in report.findings) == \
        [("orphaned", k, "/a", True) for k in ("a/x/c/0", "a/x/zarr.json")]
