"""The fuzz harnesses' seed corpora replay: every file of ``fuzz/corpus/<harness>/`` goes through
that harness's own ``test_one_input`` (the code ``make fuzz`` runs, without atheris), and only
ZarrErrors may come out of the library: anything else fails here, naming the corpus file."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from zarrx.errors import CodecError, MetadataError

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
HARNESSES = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))
#: the kinds of input each harness must be seeded with (file name prefixes)
SOURCES = {
    "fuzz_metadata_v2": ("zarr-python-", "tensorstore-", "table-"),
    "fuzz_metadata_v3": ("zarr-python-", "tensorstore-", "table-"),
    "fuzz_consolidated": ("zarr-python-", "table-"),
    "fuzz_shard": ("zarr-python-", "tensorstore-", "table-"),
    "fuzz_codecs": ("zarr-python-", "tensorstore-", "table-", "regression-"),
    "fuzz_zip": ("zarr-python-", "table-"),
}


def harness(name: str):
    if str(FUZZ) not in sys.path:
        sys.path.insert(0, str(FUZZ))
    return importlib.import_module(name)


def test_every_harness_has_a_corpus() -> None:
    assert set(HARNESSES) == set(SOURCES)
    for name, prefixes in SOURCES.items():
        files = [p.name for p in (FUZZ / "corpus" / name).iterdir()]
        for prefix in prefixes:
            assert any(f.startswith(prefix) for f in files), (name, prefix)


def test_corpora_stay_small() -> None:
    total = sum(p.stat().st_size for p in (FUZZ / "corpus").rglob("*") if p.is_file())
    assert total < 512 << 10, total


@pytest.mark.parametrize("name", HARNESSES)
def test_corpus_replays(name: str) -> None:
    run = harness(name).test_one_input
    files = sorted((FUZZ / "corpus" / name).iterdir())
    assert len(files) >= 10
    for path in files:
        try:
            run(path.read_bytes())
        except BaseException as exc:
            exc.add_note(f"fuzz corpus file: {path}")
            raise


def test_harnesses_expect_only_zarr_errors(monkeypatch) -> None:
    """A ZarrError is an expected outcome of an input; any other exception escapes."""
    v3 = harness("fuzz_metadata_v3")

    def raise_(exc):
        def parse(*args, **kwargs):
            raise exc
        return parse

    monkeypatch.setattr(v3, "parse_v3", raise_(MetadataError("refused")))
    v3.test_one_input(b"{}")
    monkeypatch.setattr(v3, "parse_v3", raise_(KeyError("zarr_format")))
    with pytest.raises(KeyError):
        v3.test_one_input(b"{}")
    codecs = harness("fuzz_codecs")
    p = codecs.pipeline("zstd")
    monkeypatch.setattr(type(p), "decode_new", raise_(CodecError("corrupt")))
    codecs.test_one_input(bytes([codecs.NAMES.index("zstd")]) + b"junk")
    monkeypatch.setattr(type(p), "decode_new", raise_(MemoryError()))
    with pytest.raises(MemoryError):
        codecs.test_one_input(bytes([codecs.NAMES.index("zstd")]) + b"junk")


def test_the_zip_harness_leaves_no_folder_behind(tmp_path) -> None:
    """It writes each input to a file of its own folder, which goes when the process ends."""
    import subprocess
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import fuzz_zip; "
            "fuzz_zip.test_one_input(b'PK'); print(fuzz_zip._DIR)")
    out = subprocess.run([sys.executable, "-c", code, str(FUZZ)], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert Path(out).name.startswith("zarrx-fuzz-zip-") and not Path(out).exists()
