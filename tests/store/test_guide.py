"""The code blocks of docs/guide/stores.md run, in order, in one namespace."""
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "stores.md"


def test_stores_guide_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{GUIDE.name}[block {i}]", "exec"), namespace)
    assert "key '../outside': found a '..' segment" in capsys.readouterr().out
