"""setup.py's decisions, checked without compiling: library discovery, rpaths, directives, and
one Cython minimum everywhere the build names it."""
from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def configure(monkeypatch, env: dict[str, str]) -> tuple[dict, dict]:
    """Run setup.py with setup() and cythonize() captured: (extensions by name, cythonize
    keyword arguments)."""
    import Cython.Build
    import setuptools

    captured: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: captured.update(kw))

    def cythonize(exts, **kw):
        captured["cythonize"] = kw
        return exts

    monkeypatch.setattr(Cython.Build, "cythonize", cythonize)
    for key in ("ZSTD", "ZLIB", "BLOSC", "LZ4", "DEFLATE"):
        monkeypatch.delenv(f"ZARRX_{key}_DIR", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(ROOT)
    spec = importlib.util.spec_from_file_location("zarrx_setup_under_test", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)     # dataclasses look their module up
    spec.loader.exec_module(module)
    return {e.name: e for e in captured["ext_modules"]}, captured["cythonize"]


def test_env_dir_libraries_get_an_rpath(monkeypatch, tmp_path) -> None:
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "zstd.h").write_text("")
    (tmp_path / "lib").mkdir()
    exts, _ = configure(monkeypatch, {"ZARRX_ZSTD_DIR": str(tmp_path)})
    zstd = exts["zarrx.codecs._zstd"]
    assert zstd.runtime_library_dirs == [str(tmp_path / "lib")]
    assert str(tmp_path / "lib") in zstd.library_dirs and "zstd" in zstd.libraries
    assert ("ZARRX_HAVE_ZSTD", "1") in zstd.define_macros
    assert exts["zarrx._gather"].runtime_library_dirs == []
    assert exts["zarrx.codecs._zlib"].runtime_library_dirs == []      # found elsewhere


def test_directives_in_one_dict_no_unused_switches(monkeypatch) -> None:
    _, kw = configure(monkeypatch, {})
    assert "compile_time_env" not in kw
    assert "freethreading_compatible" not in kw["compiler_directives"]
    assert kw["compiler_directives"]["boundscheck"] is True
    for pyx in sorted((ROOT / "zarrx").rglob("*.pyx")):
        header = pyx.read_text().splitlines()[:5]
        assert not any(re.match(r"#\s*cython:", line) for line in header), pyx


def test_one_cython_minimum() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    spec = next(r for r in requires if r.lower().startswith("cython"))
    minimum = spec.split(">=")[1]
    assert f'"Cython>={minimum}"' in (ROOT / "Makefile").read_text()
    assert f"cython >={minimum}" in (ROOT / "conda" / "meta.yaml").read_text()
    assert f"Cython: {minimum} or newer" in (ROOT / "setup.py").read_text()


def test_sanitize_switches(monkeypatch) -> None:
    """ZARRX_SANITIZE=1 adds ASan+UBSan; =fuzzer adds libFuzzer coverage, with clang only."""
    exts, _ = configure(monkeypatch, {"ZARRX_SANITIZE": "1"})
    flags = exts["zarrx.codecs._zstd"].extra_compile_args
    assert "-fsanitize=address,undefined" in flags
    assert exts["zarrx.codecs._zstd"].extra_link_args == [
        "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
    exts, _ = configure(monkeypatch, {"ZARRX_SANITIZE": ""})
    assert not any("sanitize" in f for f in exts["zarrx._gather"].extra_compile_args)
    monkeypatch.setattr("subprocess.run", lambda *a, **k: type("R", (), {"stdout": "clang 14"}))
    exts, _ = configure(monkeypatch, {"ZARRX_SANITIZE": "fuzzer", "CC": "clang"})
    assert "-fsanitize=address,undefined,fuzzer-no-link" in exts["zarrx._gather"].extra_link_args
    monkeypatch.setattr("subprocess.run", lambda *a, **k: type("R", (), {"stdout": "gcc 12"}))
    with pytest.raises(SystemExit, match="ZARRX_SANITIZE=fuzzer needs clang"):
        configure(monkeypatch, {"ZARRX_SANITIZE": "fuzzer", "CC": "gcc"})
    with pytest.raises(SystemExit, match="ZARRX_SANITIZE='yes': expected 1"):
        configure(monkeypatch, {"ZARRX_SANITIZE": "yes"})


def test_extensions_target_the_numpy_floor(monkeypatch) -> None:
    """Every extension is compiled for the C API of the oldest numpy pyproject allows, so a
    build against numpy 1.25's headers (which default to 1.19's API) links what numpy 2's do,
    and a build against numpy 2 refuses to import under a numpy older than the floor."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    floor = next(d for d in deps if d.startswith("numpy")).split(">=")[1]
    major, minor = floor.split(".")[:2]
    exts, _ = configure(monkeypatch, {})
    assert exts
    for name, ext in exts.items():
        assert ("NPY_TARGET_VERSION", f"NPY_{major}_{minor}_API_VERSION") in ext.define_macros, \
            name
