"""Print requirements declared in pyproject.toml, one a line, for ``pip install -r``.

    python packaging/requirements.py [--core] [EXTRA...]

``--core``: the project's own dependencies; each EXTRA: that optional-dependencies group. The
Makefile installs these into the venv without building zarrx through pip (it builds in place).
"""
from __future__ import annotations

import sys
from pathlib import Path

try:
    import tomllib
except ImportError:                 # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def main(argv: list[str]) -> int:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    lines: list[str] = []
    for arg in argv:
        if arg == "--core":
            lines += project.get("dependencies", [])
        elif arg in extras:
            lines += extras[arg]
        else:
            print(f"requirements: no extra {arg!r} in pyproject.toml; known: "
                  f"{', '.join(sorted(extras))}", file=sys.stderr)
            return 2
    print("\n".join(dict.fromkeys(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
