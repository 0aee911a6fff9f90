"""Archives cut short or emptied, as a stopped download, a writer that never closed its archive
(zipfile and zarr-python's ``ZipStore`` write the central directory on close) or an empty file
(``tempfile.NamedTemporaryFile(suffix=".zip")``) leave them: each cut and each record removed
is refused with a StoreError saying what the file holds, and mode "a" takes an empty file as
an empty archive, as zipfile does."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError, ZarrError
from zarrx.store import ZipStore

A = np.arange(60, dtype="<i2").reshape(6, 10)
SIGNATURES = (b"PK\x03\x04", b"PK\x07\x08", b"PK\x01\x02", b"PK\x06\x06", b"PK\x06\x07",
              b"PK\x05\x06")


def real_archive(tmp_path):
    """A sharded array zipped to a stream (data descriptors) with zip64 records."""
    folder = tmp_path / "data.zarr"
    zarrx.create_array(str(folder), shape=A.shape, chunks=(2, 5), shards=(6, 5),
                       dtype=A.dtype)[...] = A
    sink = io.BytesIO()
    sink.seekable = lambda: False               # as a pipe
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for top, _, names in sorted(os.walk(folder)):
            for name in sorted(names):
                full = os.path.join(top, name)
                with open(full, "rb") as f, \
                        zf.open(os.path.relpath(full, folder), "w", force_zip64=True) as w:
                    w.write(f.read())
    return sink.getvalue()


def boundaries(blob):
    return sorted({i for sig in SIGNATURES for i in range(len(blob)) if blob.startswith(sig, i)})


TRUNCATED = ("no end of central directory record (b'PK\\x05\\x06') in its last {n} bytes, "
             "but it starts with a local file header (b'PK\\x03\\x04'): the archive is "
             "truncated, or its writer did not close it (the central directory is written "
             "last, when the archive is closed)")


def test_an_archive_cut_at_any_record_is_refused_and_says_it_is_truncated(tmp_path):
    blob = real_archive(tmp_path)
    path = tmp_path / "cut.zip"
    cuts = boundaries(blob)
    assert len(cuts) >= 7          # 3 local headers, 3 central entries, the end records
    for cut in cuts[1:] + [c + 4 for c in cuts] + [len(blob) - 1]:     # (0: empty, below)
        path.write_bytes(blob[:cut])
        for mode in ("r", "a"):
            with pytest.raises(StoreError) as info:
                ZipStore(path, mode=mode)
            assert str(info.value) == (f"ZipStore({str(path)!r}, mode={mode!r}): cannot open in "
                                       f"mode {mode!r}: " + TRUNCATED.format(n=cut)), cut
        assert path.read_bytes() == blob[:cut]                  # mode "a" wrote nothing


def test_an_archive_missing_any_record_is_refused_or_read_right(tmp_path):
    blob = real_archive(tmp_path)
    path = tmp_path / "holed.zip"
    cuts = boundaries(blob) + [len(blob)]
    for start, stop in zip(cuts, cuts[1:]):
        path.write_bytes(blob[:start] + blob[stop:])
        try:
            got = zarrx.open_array(str(path), mode="r")[...]
        except ZarrError as exc:
            assert str(path) in str(exc)
        else:
            np.testing.assert_array_equal(got, A)


def test_the_archive_of_an_unclosed_zarr_python_store_says_so(tmp_path):
    pytest.importorskip("zarr")
    path = tmp_path / "unclosed.zip"
    script = ("import os, sys, zarr\n"
              "zs = zarr.storage.ZipStore(sys.argv[1], mode='w')\n"
              "zarr.create_array(zs, shape=(4,), chunks=(2,), dtype='i4')[:] = 1\n"
              "zs._zf.fp.flush()\n"
              "os._exit(0)\n")                  # a crash: zs is never closed
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)
    with pytest.raises(StoreError, match="its writer did not close it"):
        zarrx.open_array(str(path), mode="r")


def test_a_file_that_is_no_archive_says_what_it_starts_with(tmp_path):
    path = tmp_path / "notes.zip"
    path.write_bytes(b"just notes\n")
    with pytest.raises(StoreError) as info:
        ZipStore(path)
    assert str(info.value).endswith(
        "cannot open in mode 'r': no end of central directory record (b'PK\\x05\\x06') in its "
        "last 11 bytes, and it starts with b'just not': not a zip archive")


def test_an_empty_file_is_no_archive_to_read(tmp_path):
    path = tmp_path / "empty.zip"
    path.write_bytes(b"")
    with pytest.raises(StoreError) as info:
        zarrx.open_group(str(path), mode="r")
    assert str(info.value).endswith("cannot open in mode 'r': the file is empty (0 bytes); "
                                    "expected a zip archive")


def test_an_empty_file_in_mode_a_becomes_an_archive(tmp_path):
    """As zipfile's mode "a" (and so zarr-python's ZipStore) takes it."""
    with tempfile.NamedTemporaryFile(suffix=".zip", dir=tmp_path) as f:
        os.chmod(f.name, 0o640)
        zarrx.create_array(f.name, shape=A.shape, chunks=(3, 5), dtype=A.dtype)[...] = A
        np.testing.assert_array_equal(zarrx.open_array(f.name, mode="r")[...], A)
        assert os.stat(f.name).st_mode & 0o777 == 0o640
        assert zipfile.ZipFile(f.name).testzip() is None
    empty = tmp_path / "unused.zip"
    empty.write_bytes(b"")
    ZipStore(empty, mode="a").close()           # nothing written: an empty archive
    assert zipfile.ZipFile(empty).namelist() == []
    assert sorted(os.listdir(tmp_path)) == ["unused.zip"]
