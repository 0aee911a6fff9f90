"""A metadata document far larger than any real one (a hostile file at zarr.json, a zip entry
that inflates to gigabytes) is refused at the cost of the parser's limit, not of its size."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import zipfile

import pytest

CHILD = textwrap.dedent("""
    import resource, sys, time
    import zarrx
    from zarrx.errors import MetadataError
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.monotonic()
    try:
        zarrx.open_array(sys.argv[1], mode="r")
    except MetadataError as exc:
        assert "a document of at most 67108864 bytes" in str(exc), exc
    else:
        raise AssertionError("opened")
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{grew:.0f} {time.monotonic() - t:.1f}")
""")


def _refused(path: str) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    grew, took = out.stdout.split()
    return float(grew), float(took)


def test_local_file_of_gigabytes_at_zarr_json(tmp_path):
    node = tmp_path / "a"
    node.mkdir()
    with open(node / "zarr.json", "wb") as f:          # sparse: no disk used
        f.truncate(3 << 30)
    grew, _ = _refused(str(node))
    assert grew < 200, f"resident memory grew by {grew} MiB"


@pytest.mark.slow
def test_zip_entry_inflating_to_hundreds_of_megabytes(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        with zf.open("zarr.json", "w", force_zip64=True) as f:
            block = bytes(1 << 20)
            for _ in range(400):
                f.write(block)
    grew, _ = _refused(str(path))
    assert grew < 200, f"resident memory grew by {grew} MiB"
