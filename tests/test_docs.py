"""Every ```python block of the docs (and the README) runs on its own: in a fresh namespace and
an empty working directory, as a reader who copies just that block would run it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


CASES = [(p, i, src) for p in FILES for i, src in enumerate(blocks(p))]


@pytest.mark.parametrize("path,i,src", CASES,
                         ids=[f"{p.relative_to(ROOT)}[{i}]" for p, i, _ in CASES])
def test_doc_block_runs_on_its_own(path: Path, i: int, src: str, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        exec(compile(src, f"{path.name}[block {i}]", "exec"), {"__name__": "__doc__"})
    except Exception as exc:
        raise AssertionError(f"{path.name} block {i} failed: {exc!r}\n{src}") from exc


def test_no_block_imports_the_test_runner() -> None:
    assert not [f"{p.name}[{i}]" for p, i, src in CASES if re.search(r"^\s*import pytest", src,
                                                                         re.M)]
