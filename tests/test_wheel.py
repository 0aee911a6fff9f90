"""The binary wheel (``make wheel``): it carries the codec libraries and their licenses, and a
fresh virtual environment runs zarrx from it with no system codec library and no compiler.

The wheel is built as ``make wheel`` builds it (from the in-place build's objects, so this takes
seconds once ``make`` has run), or taken from ``$ZARRX_WHEEL``. The clean machine is simulated:
a new venv without system site packages, checked with ``ldd`` (every codec library resolves to
the copy inside the wheel) and ``auditwheel show`` (a manylinux tag), then the demo and a test
subset run from that venv, outside the source tree.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CODEC_LIBS = ("libzstd", "libblosc", "liblz4")
SUBSET = ["codecs/conftest.py", "codecs/test_clib_zstd.py", "codecs/test_clib_blosc.py",
          "codecs/test_clib_lz4.py", "codecs/test_clib_zlib.py", "tools/test_check.py",
          "tools/__init__.py", "tools/test_copy.py"]


def _clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH and friends: the venv must see only itself."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def _run(*cmd: str | Path, cwd: Path | None = None, env: dict | None = None) -> str:
    out = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env or _clean_env(),
                         capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _build(dist: Path) -> Path:
    """A repaired wheel with licenses, as ``make wheel`` makes it."""
    pytest.importorskip("auditwheel")
    tools = os.path.dirname(sys.executable)
    env = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", "ZARRX_BUILD_JOBS": "2"}
    raw = dist / "raw"
    _run(sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation", "-q",
         "-w", raw, cwd=ROOT, env=env)
    _run(sys.executable, "-m", "auditwheel", "repair", "-w", dist, *raw.glob("zarrx-*.whl"),
         env=env)
    wheel = next(dist.glob("zarrx-*manylinux*.whl"))
    _run(sys.executable, ROOT / "packaging" / "wheel_licenses.py", wheel)
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    given = os.environ.get("ZARRX_WHEEL")
    return Path(given) if given else _build(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    env = tmp_path_factory.mktemp("venv") / "env"
    _run(sys.executable, "-m", "venv", env)
    _run(env / "bin" / "python", "-m", "pip", "install", "-q", wheel, "pytest", "hypothesis")
    return env


def test_the_wheel_bundles_the_codec_libraries_and_their_licenses(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    libs = [n.rsplit("/", 1)[1] for n in names if n.startswith("zarrx.libs/") and ".so" in n]
    licenses = {n.rsplit("/", 1)[1] for n in names if "/licenses/" in n}
    for lib in CODEC_LIBS:
        assert any(name.startswith(lib + "-") for name in libs), (lib, libs)
    for name in libs:
        stem = re.sub(r"-[0-9a-f]{8}\.so.*$", "", name)
        assert f"{stem}.txt" in licenses, (name, licenses)
    assert re.search(r"-manylinux_\d+_\d+_", wheel.name)


def test_the_installed_extensions_need_no_system_codec_library(venv):
    site = Path(glob.glob(str(venv / "lib" / "python*" / "site-packages"))[0])
    extensions = list((site / "zarrx").rglob("*.so"))
    assert len(extensions) >= 9
    for ext in extensions:
        for line in _run("ldd", ext).splitlines():
            if not any(lib in line for lib in CODEC_LIBS + ("libdeflate", "libsnappy")):
                continue
            m = re.search(r"=> (\S+) \(", line)
            assert m is not None, f"{ext.name}: not resolved: {line.strip()}"
            resolved = Path(os.path.realpath(m.group(1)))
            assert resolved.parent == (site / "zarrx.libs").resolve(), \
                f"{ext.name}: {line.strip()}"


def test_the_demo_and_a_test_subset_run_from_the_wheel(venv, tmp_path):
    where = _run(venv / "bin" / "python", "-c", "import zarrx; print(zarrx.__file__)",
                 cwd=tmp_path)
    assert str(venv) in where
    out = _run(venv / "bin" / "zarrx", "demo", "--dir", tmp_path / "demo", cwd=tmp_path)
    assert "demo: all reads verified" in out
    tests = tmp_path / "tests"
    for rel in SUBSET:
        (tests / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "tests" / rel, tests / rel)
    out = _run(venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               tests, cwd=tmp_path)
    assert re.search(r"\d+ passed", out) and "failed" not in out
