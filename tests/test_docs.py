"""Every ```python block of the guide (and the README) runs, in order, per file."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(path: Path) -> list[str]:
    return BLOCK.findall(path.read_text(encoding="utf-8"))


CASES = [p for p in FILES if blocks(p)]


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(ROOT)) for p in CASES])
def test_doc_blocks_run(path: Path, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__doc__"}
    for i, src in enumerate(blocks(path)):
        try:
            exec(compile(src, f"{path.name}[block {i}]", "exec"), ns)
        except Exception as exc:
            raise AssertionError(f"{path.name} block {i} failed: {exc!r}\n{src}") from exc
