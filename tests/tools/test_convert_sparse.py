"""convert copies, of a sparse array, the destination objects holding its stored data: not
every object of the blocks meeting them."""
import time

import numpy as np

import zarrx


def test_one_stored_byte_of_a_huge_array_of_one_byte_chunks_converts_at_once(tmp_path):
    src = str(tmp_path / "a.zarr")
    a = zarrx.create_array(src, shape=(2**62,), dtype="u1", chunks=(1,))
    a[-1] = 7
    t0 = time.perf_counter()
    report = zarrx.convert(src, str(tmp_path / "b.zarr"), verify=True)
    # before: the block of 262,144 one-byte chunks holding it was written, in about 20 s
    assert report.ok and report.arrays[0].nbytes == 1
    assert time.perf_counter() - t0 < 2
    b = zarrx.open_array(str(tmp_path / "b.zarr"), mode="r")
    assert b[-2:].tolist() == [0, 7] and b.nchunks_initialized == 1


def test_the_part_of_a_block_copied_spans_its_stored_objects(tmp_path):
    src = str(tmp_path / "a.zarr")
    a = zarrx.create_array(src, shape=(100, 100), dtype="i2", chunks=(10, 10), fill_value=-1)
    a[12, 15] = 1
    a[31:33, 40:42] = 2                     # a second chunk of the same block
    with zarrx.config.set(threads=1):
        report = zarrx.convert(src, str(tmp_path / "b.zarr"), chunks=(5, 5), verify=True,
                               workers=1)
    # the box of the two source chunks holding them, rows 10-40 and columns 10-50 (before:
    # the whole array, its one block)
    assert report.ok and report.arrays[0].blocks == 1
    assert report.arrays[0].nbytes == 30 * 40 * 2
    b = zarrx.open_array(str(tmp_path / "b.zarr"), mode="r")
    np.testing.assert_array_equal(b[...], a[...])
    assert b.nchunks_initialized == 2


def test_a_stored_object_past_the_shape_copies_nothing(tmp_path):
    src = str(tmp_path / "a.zarr")
    a = zarrx.create_array(src, shape=(20,), dtype="u1", chunks=(4,))
    a[:] = 3
    meta = a.metadata
    (tmp_path / "a.zarr" / "c" / "9").write_bytes((tmp_path / "a.zarr" / "c" / "0").read_bytes())
    assert meta.shape == (20,)              # c/9 lies past the edge: a stray, left alone
    report = zarrx.convert(src, str(tmp_path / "b.zarr"), verify=True)
    assert report.ok and report.arrays[0].nbytes == 20
    assert zarrx.open_array(str(tmp_path / "b.zarr"), mode="r")[...].tolist() == [3] * 20
