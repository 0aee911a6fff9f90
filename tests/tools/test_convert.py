"""``zarrx.convert``: another format, chunks, shards, codecs or fill value; streamed in bounded
memory, resumable, verifiable."""
from __future__ import annotations

import io
import itertools
import json
import os
import tracemalloc
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore
from zarrx.tools.blocks import plan_blocks
from zarrx.tools.progress import BarProgress, Progress


def _v2(path):
    g = zarrx.open_group(path, mode="w", zarr_format=2, attributes={"title": "v2"})
    a = g.create_array("t", shape=(50, 40), dtype=">i4", chunks=(16, 16), zarr_format=2,
                       compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1},
                       fill_value=-1, attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "u": "K"})
    a[5:45, :30] = np.arange(1200, dtype=">i4").reshape(40, 30)
    g.create_group("sub", attributes={"k": [1, 2]}).create_array(
        "s", shape=(7,), dtype=str, chunks=(3,), zarr_format=2)[...] = list("abcdefg")
    return g


def test_v2_to_v3_keeps_values_attributes_and_names_dimensions(tmp_path):
    src, dst = str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr")
    _v2(src)
    report = zarrx.convert(src, dst, zarr_format=3, verify=True)
    assert report.ok and sorted(a.path for a in report.arrays) == ["/sub/s", "/t"]
    g = zarrx.open_group(dst, mode="r")
    t = g["t"]
    assert g.zarr_format == 3 and t.zarr_format == 3 and g.attrs["title"] == "v2"
    assert t.dimension_names == ("y", "x") and dict(t.attrs) == {"u": "K"}
    assert [c.name for c in t.metadata.chunk_codecs] == ["bytes", "blosc"]
    assert t.metadata.chunk_codecs[0].configuration == {"endian": "big"}
    old = zarrx.open_group(src, mode="r")
    np.testing.assert_array_equal(t[...], old["t"][...])
    assert t.fill_value == -1 and g["sub"].attrs["k"] == [1, 2]
    assert g["sub/s"][...].tolist() == list("abcdefg")


def test_v3_to_v2_is_read_by_zarr_python(tmp_path):
    zarr = pytest.importorskip("zarr")
    src, dst = str(tmp_path / "v3.zarr"), str(tmp_path / "v2.zarr")
    a = zarrx.create_array(src, shape=(64, 48), dtype="f4", chunks=(8, 16), shards=(32, 48),
                           dimension_names=("y", "x"), fill_value=np.nan)
    a[:40] = np.random.default_rng(0).random((40, 48), dtype="f4")
    zarrx.convert(src, dst, zarr_format=2)
    out = zarrx.open_array(dst, mode="r")
    assert out.zarr_format == 2 and out.chunks == (8, 16) and out.shards is None
    assert out.attrs["_ARRAY_DIMENSIONS"] == ["y", "x"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(dst, mode="r")[...]
    np.testing.assert_array_equal(theirs, a[...])


def test_a_chain_v2_cannot_hold_is_refused_before_anything_is_written(tmp_path):
    src, dst = str(tmp_path / "v3.zarr"), str(tmp_path / "v2.zarr")
    zarrx.create_array(src, shape=(4,), dtype="u2", chunks=(2,),
                       compressors=[{"name": "zstd"}, {"name": "crc32c"}])
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, dst, zarr_format=2)
    assert str(info.value) == ("convert /: Zarr v2 takes at most one compressor, found 2 in "
                               "the source's chain (zstd, crc32c); pass one with --compressor "
                               "(compressors=), or --compressor none")
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, dst, zarr_format=2, compressors=[{"name": "zstd"}, {"id": "gzip"}])
    assert str(info.value) == ("convert /: Zarr v2 takes at most one compressor, found 2 "
                               "given (zstd, gzip); pass one with --compressor (compressors=), "
                               "or --compressor none")
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, dst, shards=(4,), zarr_format=2, compressors=None)
    assert str(info.value) == ("convert /: Zarr v2 has no sharding; drop the shard shape "
                               "(--shards none), or write Zarr v3 (--zarr-format 3)")
    assert not os.path.exists(dst)
    zarrx.convert(src, dst, zarr_format=2, compressors={"name": "zstd"})
    assert zarrx.open_array(dst, mode="r").zarr_format == 2


def test_a_transpose_v2_cannot_hold_is_refused_naming_the_option_to_pass(tmp_path):
    src, dst = str(tmp_path / "v3.zarr"), str(tmp_path / "v2.zarr")
    a = zarrx.create_array(src, shape=(2, 3, 4), dtype="u2", chunks=(1, 3, 2),
                           filters=[{"name": "transpose", "configuration": {"order": [0, 2, 1]}}])
    a[...] = np.arange(24, dtype="u2").reshape(2, 3, 4)
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, dst, zarr_format=2)
    assert str(info.value) == ("convert /: Zarr v2 has no transpose filter (it stores chunks in "
                               "C or F order only), found 1 in the source's chain; drop the "
                               "filters with --filter none (filters=[]), which changes no "
                               "value, or write Zarr v3 (--zarr-format 3)")
    assert not os.path.exists(dst)
    zarrx.convert(src, dst, zarr_format=2, filters=[], verify=True)
    np.testing.assert_array_equal(zarrx.open_array(dst, mode="r")[...], a[...])


def test_rechunk_reshard_recompress_and_new_fill_value(tmp_path):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    a = zarrx.create_array(src, shape=(100, 90), dtype="u2", chunks=(10, 9), fill_value=7)
    a[20:60, 10:80] = np.arange(2800, dtype="u2").reshape(40, 70)
    report = zarrx.convert(src, dst, chunks=(16, 15), shards=(32, 45), compressors=None,
                           fill_value=0, verify=True, workers=3)
    b = zarrx.open_array(dst, mode="r")
    assert report.ok and b.chunks == (16, 15) and b.shards == (32, 45)
    assert [c.name for c in b.metadata.chunk_codecs] == ["bytes"] and b.fill_value == 0
    np.testing.assert_array_equal(b[...], a[...])          # 7 where nothing was written
    zarrx.convert(dst, str(tmp_path / "c.zarr"), shards=None, chunks=(50, 45),
                  compressors={"name": "gzip", "configuration": {"level": 1}})
    c = zarrx.open_array(str(tmp_path / "c.zarr"), mode="r")
    assert c.shards is None and c.metadata.chunk_codecs[-1].name == "gzip"
    np.testing.assert_array_equal(c[...], a[...])


def test_a_hierarchy_into_a_zip_archive_and_back(tmp_path):
    src = str(tmp_path / "v2.zarr")
    _v2(src)
    zarrx.convert(src, str(tmp_path / "out.zip") + "/data", zarr_format=3)
    zarrx.convert(str(tmp_path / "out.zip") + "/data", str(tmp_path / "back.zarr"),
                  zarr_format=2, verify=True)
    back = zarrx.open_group(str(tmp_path / "back.zarr"), mode="r")
    assert back.zarr_format == 2 and back["t"].attrs["_ARRAY_DIMENSIONS"] == ["y", "x"]
    np.testing.assert_array_equal(back["t"][...], zarrx.open_group(src, mode="r")["t"][...])


def test_overwrite_into_the_archive_that_holds_the_source_is_refused(tmp_path):
    archive = str(tmp_path / "x.zip")
    _v2(str(tmp_path / "v2.zarr"))
    zarrx.copy(str(tmp_path / "v2.zarr"), archive)
    with zarrx.store.ZipStore(archive) as z:
        before = {k: z.get(k) for k in z.list_prefix("")}
    with pytest.raises(zarrx.ZarrError, match="inside the destination archive"):
        zarrx.convert(f"{archive}/t", f"{archive}/u", overwrite=True)
    with zarrx.store.ZipStore(archive) as z:
        assert {k: z.get(k) for k in z.list_prefix("")} == before


def test_consolidated_metadata_is_written_again(tmp_path):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    _v2(src)
    zarrx.consolidate_metadata(src)
    zarrx.convert(src, dst, zarr_format=3)
    g = zarrx.open_consolidated(dst)
    assert sorted(g.metadata.consolidated) == ["sub", "sub/s", "t"]


class _StopAfter(Progress):
    """Interrupts the run (as Ctrl-C would) once ``n`` blocks are written."""

    def __init__(self, n):
        self.n = n

    def advance(self, n):
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt


def test_resume_keeps_the_shards_written_before_an_interruption(tmp_path):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    a = zarrx.create_array(src, shape=(64, 64), dtype="i8", chunks=(8, 8))
    a[...] = np.arange(64 * 64).reshape(64, 64)
    opts = dict(chunks=(8, 8), shards=(16, 16), max_memory="12K", workers=1)  # 1-3 shards a block
    with zarrx.config.set(threads=2), pytest.raises(KeyboardInterrupt):
        zarrx.convert(src, dst, progress=_StopAfter(3), **opts)
    shards = os.path.join(dst, "c")
    done = {os.path.join(d, f): os.stat(os.path.join(d, f)).st_ino
            for d, _, fs in os.walk(shards) for f in fs}
    assert 0 < len(done) < 16
    with pytest.raises(zarrx.NodeExistsError, match="--resume"):
        zarrx.convert(src, dst, **opts)
    with pytest.raises(zarrx.ZarrError, match="cannot resume"):
        zarrx.convert(src, dst, resume=True, **{**opts, "shards": (32, 32), "max_memory": "1M"})
    with zarrx.config.set(threads=2):
        report = zarrx.convert(src, dst, resume=True, verify=True, **opts)
    assert report.ok and report.arrays[0].kept == len(done)
    assert all(os.stat(p).st_ino == ino for p, ino in done.items())   # not written again
    np.testing.assert_array_equal(zarrx.open_array(dst, mode="r")[...], a[...])


def test_blocks_are_whole_shards_within_the_budget():
    plan = plan_blocks((100, 100), (20, 20), 8, budget=3 * 20 * 20 * 8, align=(10, 10))
    assert all(b % 20 == 0 for b in plan.block) and plan.block_bytes <= 3 * 20 * 20 * 8
    sels = list(plan.blocks())
    assert len(sels) == plan.nblocks
    covered = np.zeros((100, 100), int)
    for sel in sels:
        covered[sel] += 1
    assert (covered == 1).all()
    with pytest.raises(zarrx.ZarrError, match="max-memory"):
        plan_blocks((100, 100), (50, 50), 8, budget=1000)


def test_the_blocks_of_a_huge_array_are_made_one_at_a_time():
    plan = plan_blocks((2**62, 6), (1, 3), 1, budget=2**20)
    assert plan.nblocks == -(-2**62 // plan.block[0])
    first = list(itertools.islice(plan.blocks(), 3))
    b = plan.block[0]
    assert first == [(slice(0, b), slice(0, 6)), (slice(b, 2 * b), slice(0, 6)),
                     (slice(2 * b, 3 * b), slice(0, 6))]
    sels = list(plan_blocks((5, 7, 3), (2, 3, 2), 1, budget=12).blocks())
    assert len(sels) == plan_blocks((5, 7, 3), (2, 3, 2), 1, budget=12).nblocks
    covered = np.zeros((5, 7, 3), int)
    for sel in sels:
        covered[sel] += 1
    assert (covered == 1).all()


def test_memory_stays_bounded(tmp_path):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    a = zarrx.create_array(src, shape=(2048, 2048), dtype="f8", chunks=(256, 256),
                           compressors=None)                              # 32 MiB of data
    for i in range(0, 2048, 256):
        a[i:i + 256] = float(i)
    with zarrx.config.set(threads=2):
        tracemalloc.start()
        try:
            zarrx.convert(src, dst, chunks=(128, 128), shards=(256, 1024), workers=2,
                          max_memory="12M")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 16 << 20, f"peak {peak >> 20} MiB for a 12 MiB budget"
    np.testing.assert_array_equal(zarrx.open_array(dst, mode="r")[::256, 0], a[::256, 0])
    with pytest.raises(zarrx.ZarrError, match="max-memory"):
        zarrx.convert(src, str(tmp_path / "c.zarr"), chunks=(2048, 2048), max_memory="8M")


@pytest.mark.parametrize("size", ["9" * 400, "99999999999T", str(2**63)])
def test_a_memory_budget_past_2_63_bytes_is_refused(tmp_path, size):
    src = str(tmp_path / "s.zarr")
    zarrx.create_array(src, shape=(4,), dtype="i4", chunks=(2,))
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, str(tmp_path / "c.zarr"), max_memory=size)
    assert str(info.value) == f"memory size: expected less than 2^63 bytes, found {size!r}"


class _Flipping(MemoryStore):
    """Stores one chunk with a wrong byte (a faulty disk or network)."""

    def set(self, key, value):
        if key.endswith("c/1/0"):
            value = bytearray(value)
            value[0] ^= 1
        super().set(key, bytes(value))


def test_verify_finds_blocks_that_differ(tmp_path):
    src = str(tmp_path / "a.zarr")
    a = zarrx.create_array(src, shape=(4, 4), dtype="u1", chunks=(2, 2), compressors=None)
    a[...] = np.arange(16).reshape(4, 4)
    report = zarrx.convert(src, _Flipping(), verify=True)
    assert not report.ok
    assert report.arrays[0].mismatches == [
        "/[0:4, 0:4]: 1 values differ; first at (2, 0): source np.uint8(8), destination "
        "np.uint8(9)"]


def test_the_progress_bar_shows_throughput(tmp_path):
    src = str(tmp_path / "a.zarr")
    zarrx.create_array(src, shape=(100,), dtype="f8", chunks=(10,))[...] = 1.0
    out = io.StringIO()
    zarrx.convert(src, str(tmp_path / "b.zarr"), progress=BarProgress(out))
    text = out.getvalue()
    assert "convert /" in text and "100%" in text and "B/s" in text


def test_a_rectilinear_grid_is_kept_or_made_regular(tmp_path):
    src = str(tmp_path / "r.zarr")
    a = zarrx.create_array(src, shape=(10,), dtype="i4", chunks=[[3, 3, 4]])
    a[:] = np.arange(10)
    assert zarrx.convert(src, str(tmp_path / "same.zarr"), verify=True).ok
    same = zarrx.open_array(str(tmp_path / "same.zarr"), mode="r")
    assert same.metadata.chunk_grid == a.metadata.chunk_grid
    with pytest.raises(zarrx.ZarrError, match="no Zarr v2 form; pass chunks"):
        zarrx.convert(src, str(tmp_path / "v2.zarr"), zarr_format=2)
    assert zarrx.convert(src, str(tmp_path / "v2.zarr"), zarr_format=2, chunks=(4,),
                         verify=True).ok
    assert zarrx.open_array(str(tmp_path / "v2.zarr"), mode="r").chunks == (4,)


@pytest.mark.parametrize("node", ["array", "group"])
def test_an_interrupted_conversion_leaves_nothing_that_opens(tmp_path, node):
    zarr = pytest.importorskip("zarr")
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    if node == "array":
        a = zarrx.create_array(src, shape=(64, 64), dtype="i8", chunks=(8, 8))
    else:
        g = zarrx.open_group(src, mode="w", attributes={"title": "t"})
        g.create_array("done", shape=(4, 4), dtype="u1", chunks=(2, 2))[...] = 7
        a = g.create_group("sub").create_array("a", shape=(64, 64), dtype="i8", chunks=(8, 8))
    a[...] = np.arange(64 * 64).reshape(64, 64)
    opts = dict(chunks=(8, 8), shards=(16, 16), max_memory="12K", workers=1)
    with zarrx.config.set(threads=2), pytest.raises(KeyboardInterrupt):
        zarrx.convert(src, dst, progress=_StopAfter(3), **opts)
    inner = dst if node == "array" else os.path.join(dst, "sub", "a")
    assert os.listdir(os.path.join(inner, "c"))           # some shards are written
    for path in {dst, inner}:                              # nothing reads as complete
        with pytest.raises(zarrx.NodeNotFoundError):
            zarrx.open(path, mode="r")
        with warnings.catch_warnings(), pytest.raises(Exception):
            warnings.simplefilter("ignore")
            zarr.open(path, mode="r")
    with pytest.raises(zarrx.ZarrError, match="cannot resume into /"):
        zarrx.convert(src, dst, resume=True, **{**opts, "shards": (32, 32), "max_memory": "1M"})
    with zarrx.config.set(threads=2):
        report = zarrx.convert(src, dst, resume=True, verify=True, **opts)
    assert report.ok and report.arrays[-1].kept > 0
    done = zarrx.open_array(inner, mode="r")
    np.testing.assert_array_equal(done[...], a[...])
    assert done.shards == (16, 16)
    assert not [f for _, _, fs in os.walk(dst) for f in fs if f == ".zarrx-pending"]
    if node == "group":
        assert dict(zarrx.open_group(dst, mode="r").attrs) == {"title": "t"}
        assert (zarrx.open_array(dst, path="done", mode="r")[...] == 7).all()


def test_overwrite_starts_an_interrupted_conversion_again(tmp_path):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    a = zarrx.create_array(src, shape=(64, 64), dtype="i8", chunks=(8, 8))
    a[...] = np.arange(64 * 64).reshape(64, 64)
    opts = dict(chunks=(8, 8), shards=(16, 16), max_memory="12K", workers=1)
    with zarrx.config.set(threads=2), pytest.raises(KeyboardInterrupt):
        zarrx.convert(src, dst, progress=_StopAfter(3), **opts)
    with pytest.raises(zarrx.NodeExistsError, match="left unfinished; pass --resume"):
        zarrx.convert(src, dst, **opts)
    report = zarrx.convert(src, dst, overwrite=True, **{**opts, "shards": (32, 32),
                                                        "max_memory": "1M"})
    assert report.arrays[0].kept == 0
    np.testing.assert_array_equal(zarrx.open_array(dst, mode="r")[...], a[...])


def test_only_the_blocks_holding_stored_objects_are_copied(tmp_path):
    src = str(tmp_path / "a.zarr")
    a = zarrx.create_array(src, shape=(2000, 2000), dtype="f4", chunks=(100, 100),
                           fill_value=np.nan)
    a[150:160, 20:30] = 1.5
    a[1990:, 1990:] = 2.5
    opts = dict(chunks=(100, 100), max_memory="8M", workers=1, verify=True)
    with zarrx.config.set(threads=1):
        report = zarrx.convert(src, str(tmp_path / "b.zarr"), **opts)
    assert report.ok and report.arrays[0].blocks == 2        # the two holding the data
    assert report.arrays[0].nbytes < 2000 * 2000 * 4
    b = zarrx.open_array(str(tmp_path / "b.zarr"), mode="r")
    np.testing.assert_array_equal(b[...], a[...])
    assert b.nchunks_initialized == 2
    with zarrx.config.set(threads=1):       # another fill value: every block is written
        report = zarrx.convert(src, str(tmp_path / "c.zarr"), fill_value=0, **opts)
    c = zarrx.open_array(str(tmp_path / "c.zarr"), mode="r")
    assert report.ok and report.arrays[0].nbytes == 2000 * 2000 * 4 and np.isnan(c[0, 0])
    assert c[155, 25] == 1.5 and c.fill_value == 0


def test_a_huge_sparse_array_converts_its_stored_objects_only(tmp_path):
    src = str(tmp_path / "a.zarr")
    a = zarrx.create_array(src, shape=(2**31, 2**31), dtype="u1", chunks=(1000, 1000))
    a[2**30:2**30 + 3, 5] = 7
    report = zarrx.convert(src, str(tmp_path / "b.zarr"), zarr_format=2, verify=True)
    assert report.ok and report.arrays[0].blocks == 1
    b = zarrx.open_array(str(tmp_path / "b.zarr"), mode="r")
    assert b[2**30:2**30 + 4, 5].tolist() == [7, 7, 7, 0] and b.nchunks_initialized == 1


def test_a_codec_zarrx_does_not_know_is_named_before_anything_is_written(tmp_path):
    import json
    src, dst = tmp_path / "a.zarr", tmp_path / "b.zarr"
    zarrx.create_array(str(src), shape=(4,), dtype="i2", chunks=(2,))[:] = 1
    doc = json.loads((src / "zarr.json").read_text())
    doc["codecs"].append({"name": "mystery", "configuration": {}})
    (src / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(str(src), str(dst))
    assert str(info.value) == ("convert /: the codec 'mystery' is unknown to zarrx, which cannot "
                               "read the chunks to convert them (zarrx copy copies them as "
                               "stored)")
    assert not dst.exists()


def test_an_array_into_a_zip_archive_with_consolidated_metadata(tmp_path):
    src = str(tmp_path / "a.zarr")
    g = zarrx.open_group(src, mode="w")
    g.create_array("a", shape=(4,), dtype="i2", chunks=(2,))[:] = [1, 2, 3, 4]
    zarrx.consolidate_metadata(src)
    archive = str(tmp_path / "x.zip")
    zarrx.copy(src, archive)
    zarrx.convert(f"{src}/a", f"{archive}/b", chunks=(4,))          # the archive's root has
    b = zarrx.open_array(archive, path="b", mode="r")                # consolidated metadata
    assert b.chunks == (4,) and b[:].tolist() == [1, 2, 3, 4]
    with pytest.raises(zarrx.ZarrError, match=r"^convert: --resume \(resume=True\) does not "
                                              r"apply to the zip archive .*out.zip: a conversion"):
        zarrx.convert(src, str(tmp_path / "out.zip"), resume=True)
    assert not (tmp_path / "out.zip").exists()


@pytest.mark.parametrize("zarr_format, encoding, key", [
    (2, {"name": "v2", "separator": "/"}, "1/0"),
    (3, {"name": "v2", "separator": "."}, "1.0"),
    (3, {"name": "default", "separator": "."}, "c.1.0"),
])
def test_the_chunk_key_encoding_is_kept_within_a_format(tmp_path, zarr_format, encoding, key):
    src, dst = tmp_path / "a.zarr", tmp_path / "b.zarr"
    a = zarrx.create_array(str(src), shape=(4, 4), chunks=(2, 2), dtype="i4",
                           zarr_format=zarr_format, chunk_key_encoding=encoding)
    a[...] = np.arange(16).reshape(4, 4)
    zarrx.convert(str(src), str(dst), chunks=(2, 4))
    b = zarrx.open_array(str(dst), mode="r")
    assert b.metadata.key_encoding == a.metadata.key_encoding and (dst / key).is_file()
    np.testing.assert_array_equal(b[...], a[...])
    other = 5 - zarr_format                              # another format: its default keys
    zarrx.convert(str(src), str(tmp_path / "c.zarr"), zarr_format=other)
    c = zarrx.open_array(str(tmp_path / "c.zarr"), mode="r")
    assert (c.metadata.key_encoding.name, c.metadata.key_encoding.separator) == \
        (("v2", ".") if other == 2 else ("default", "/"))


@pytest.mark.parametrize("tool", ["convert", "copy", "check"])
def test_a_progress_that_is_not_one_is_an_argument_error(tmp_path, tool):
    src = str(tmp_path / "a.zarr")
    zarrx.create_array(src, shape=(2,), dtype="u1", chunks=(2,))
    args = (src,) if tool == "check" else (src, str(tmp_path / "b.zarr"))
    with pytest.raises(zarrx.ArgumentTypeError, match="^progress: expected a bool or a "
                                                      "zarrx.tools.progress.Progress, found "
                                                      "str 'yes'$"):
        getattr(zarrx, tool)(*args, progress="yes")
    assert not (tmp_path / "b.zarr").exists()


@pytest.mark.parametrize("dtype,fill", [
    ("r16", b"ab"),
    ({"name": "struct", "configuration": {"fields": [
        {"name": "t", "data_type": {"name": "numpy.datetime64",
                                    "configuration": {"unit": "s", "scale_factor": 1}}},
        {"name": "x", "data_type": "float32"}]}}, {"t": "NaT", "x": "NaN"}),
], ids=["raw-bits", "struct"])
def test_a_v3_data_type_keeps_its_name(tmp_path, dtype, fill):
    """Converted within Zarr v3, a data type was rebuilt from its numpy dtype: ``r16`` became
    ``raw_bytes`` (which tensorstore does not read) and ``struct`` became the legacy
    ``structured``."""
    src, dst = str(tmp_path / "a"), str(tmp_path / "b")
    a = zarrx.create_array(src, shape=(4,), chunks=(2,), dtype=dtype, fill_value=fill)
    a[0] = np.ones((), a.dtype)
    zarrx.convert(src, dst, chunks=(4,), verify=True)
    b = zarrx.open_array(dst, mode="r")
    assert b.metadata.data_type.json == a.metadata.data_type.json
    assert b[...].tobytes() == a[...].tobytes()
    assert np.array(b.fill_value).tobytes() == np.array(a.fill_value).tobytes()


def test_blocks_meet_no_more_chunks_than_one_read_or_write_takes(tmp_path, monkeypatch):
    # tiny chunks: a block the memory budget allows would touch more chunks than one read or
    # write takes (indexing.MAX_CHUNKS), which failed the conversion
    from zarrx import indexing
    monkeypatch.setattr(indexing, "MAX_CHUNKS", 64)
    src = zarrx.create_array(str(tmp_path / "fine.zarr"), shape=(10_000,), chunks=(2,),
                             dtype="u1", fill_value=0)
    src[:10] = 7
    src[-3:] = 9
    report = zarrx.convert(str(tmp_path / "fine.zarr"), str(tmp_path / "out.zarr"),
                           chunks=(4,), verify=True)
    assert report.ok
    plan = plan_blocks((10_000,), (4,), 1, 1 << 30, (2,), "", [(2,), (4,)])
    assert -(-plan.block[0] // 2) + 1 <= 64
    monkeypatch.undo()
    out = zarrx.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert (out[...] == src[...]).all()


@pytest.mark.parametrize("value", [np.array([2, 3]), 3.0, "3", True], ids=repr)
def test_a_zarr_format_that_is_not_2_or_3_is_refused(tmp_path, value):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    zarrx.create_array(src, shape=(4,), dtype="u1")
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, dst, zarr_format=value)
    assert str(info.value) == f"convert /: zarr_format: expected 2 or 3, found {value!r}"
    assert not os.path.exists(dst)
    assert zarrx.convert(src, dst, zarr_format=np.int64(2)).zarr_format == 2


@pytest.mark.parametrize("changes", [{}, {"compressors": None}, {"shards": (4, 8)}],
                         ids=["nothing", "compressors", "shards"])
def test_a_shard_index_at_the_start_stays_there(tmp_path, changes):
    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    a = zarrx.create_array(src, shape=(6, 10), dtype="u2", chunks=(2, 2),
                           shards={"shape": (4, 4), "index_location": "start"}, fill_value=7)
    a[1:5, 2:9] = np.arange(28, dtype="u2").reshape(4, 7)
    zarrx.convert(src, dst, verify=True, **changes)
    with open(os.path.join(dst, "zarr.json")) as f:
        sharding = json.load(f)["codecs"][0]
    assert sharding["name"] == "sharding_indexed"
    assert sharding["configuration"]["index_location"] == "start"
    np.testing.assert_array_equal(zarrx.open_array(dst, mode="r")[...], a[...])
