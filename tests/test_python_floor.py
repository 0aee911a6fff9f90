"""zarrx runs on the oldest Python pyproject.toml declares (``requires-python``): no module
uses syntax or a standard-library API that only newer versions have. Only one Python is
installed where the tests run, so this is checked on the source; what differs between
versions goes through ``zarrx._compat``."""
from __future__ import annotations

import ast
import binascii
import re
import sys
from pathlib import Path

import pytest

from zarrx._compat import add_note, b64decode_strict

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / "zarrx"

# name -> the version that added it, for names imported from (or read as attributes of)
# these modules
NEWER = {
    "tomllib": {"": (3, 11)},
    "typing": {n: (3, 11) for n in ("Self", "LiteralString", "Never", "assert_never",
                                    "reveal_type", "Required", "NotRequired", "TypeVarTuple",
                                    "Unpack", "dataclass_transform", "assert_type",
                                    "get_overloads", "clear_overloads")}
    | {"override": (3, 12), "TypeAliasType": (3, 12), "ReadOnly": (3, 13), "TypeIs": (3, 13)},
    "enum": {"StrEnum": (3, 11), "ReprEnum": (3, 11), "verify": (3, 11), "member": (3, 11),
             "nonmember": (3, 11), "global_enum": (3, 11), "EnumCheck": (3, 11)},
    "datetime": {"UTC": (3, 11)},
    "asyncio": {"TaskGroup": (3, 11), "timeout": (3, 11), "timeout_at": (3, 11),
                "Runner": (3, 11), "Barrier": (3, 11)},
    "hashlib": {"file_digest": (3, 11)},
    "operator": {"call": (3, 11)},
    "contextlib": {"chdir": (3, 11)},
    "itertools": {"batched": (3, 12)},
    "collections.abc": {"Buffer": (3, 12)},
    "builtins": {"ExceptionGroup": (3, 11), "BaseExceptionGroup": (3, 11)},
}
# methods and keyword arguments that are newer than their function
NEWER_METHODS = {"add_note": (3, 11)}
NEWER_KEYWORDS = {("a2b_base64", "strict_mode"): (3, 11), ("rmtree", "onexc"): (3, 12),
                  ("ZipFile", "metadata_encoding"): (3, 11)}


def floor() -> tuple[int, int]:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    m = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)"', text, re.M)
    assert m, "pyproject.toml: requires-python is not of the form '>=3.N'"
    return int(m.group(1)), int(m.group(2))


def sources(*suffixes: str) -> list[Path]:
    return sorted(p for s in suffixes for p in ROOT.rglob(f"*{s}"))


def findings(tree: ast.AST, low: tuple[int, int], here: Path) -> list[str]:
    found = []
    names = {m: {n for n, v in d.items() if v > low} for m, d in NEWER.items()}
    for node in ast.walk(tree):
        where = f"{here.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names
                      if "" in names.get(a.name, ())]
        elif isinstance(node, ast.ImportFrom) and node.module in names:
            found += [f"{where}: from {node.module} import {a.name}" for a in node.names
                      if a.name in names[node.module]]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.attr in names.get(node.value.id, ()):
            found.append(f"{where}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name) and node.id in names["builtins"]:
            found.append(f"{where}: {node.id}")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if isinstance(f, ast.Attribute) and NEWER_METHODS.get(name, (0, 0)) > low \
                    and here != ROOT / "_compat.py":
                found.append(f"{where}: .{name}() (use zarrx._compat)")
            found += [f"{where}: {name}({k.arg}=...)" for k in node.keywords
                      if NEWER_KEYWORDS.get((name, k.arg), (0, 0)) > low]
        elif isinstance(node, getattr(ast, "TryStar", ())):
            found.append(f"{where}: except*")
    return found


def test_python_sources_parse_and_use_nothing_newer_than_the_floor():
    low = floor()
    assert low == (3, 10), "the declared floor moved: check NEWER against it"
    found = []
    for path in sources(".py", ".pyi"):
        text = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(text, str(path), feature_version=low)
        except SyntaxError as exc:
            found.append(f"{path.relative_to(REPO)}:{exc.lineno}: not Python {low}: {exc.msg}")
            continue
        found += findings(tree, low, path)
    setup = REPO / "setup.py"
    found += findings(ast.parse(setup.read_text(encoding="utf-8"), feature_version=low),
                      low, setup)
    assert found == []


def test_cython_sources_use_nothing_newer_than_the_floor():
    low = floor()
    uses = [rf"\b{re.escape(m)}\.{n}\b" for m, d in NEWER.items() for n, v in d.items()
            if v > low and n]
    uses += [rf"\bfrom\s+{re.escape(m)}\s+import\s.*\b{n}\b"
             for m, d in NEWER.items() for n, v in d.items() if v > low and n]
    uses += [rf"\.{n}\(" for n, v in NEWER_METHODS.items() if v > low]
    uses += [rf"\b{k}\s*=" for (_, k), v in NEWER_KEYWORDS.items() if v > low]
    uses += [r"\bimport\s+tomllib\b", r"^\s*except\s*\*", r"\b(Base)?ExceptionGroup\b"]
    pattern = re.compile("|".join(uses))
    found = []
    for path in sources(".pyx", ".pxd"):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line.split("#", 1)[0]):
                found.append(f"{path.relative_to(REPO)}:{i}: {line.strip()}")
    assert found == []


class _OldException(Exception):
    """An exception as Python 3.10 has them: no add_note."""

    def __getattribute__(self, name):
        if name == "add_note":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_add_note_without_add_note_keeps_the_notes_in_order():
    exc = _OldException("failed")
    add_note(exc, "first")
    add_note(exc, "second")
    assert exc.__notes__ == ["first", "second"]
    new = ValueError("failed")
    add_note(new, "note")
    assert new.__notes__ == ["note"]


@pytest.mark.parametrize("text", [b"QQ==", b"", b"QUJD", b"QQ", b"QQ==QQ==", b"=QQ=",
                                  b"Q Q==", b"QU!J", b"Q===", b"QUJDRA==\n"])
def test_strict_base64_decodes_as_strict_mode_does(text):
    def outcome(decode):
        try:
            return decode(text)
        except binascii.Error:
            return "error"
    got = outcome(b64decode_strict)
    if sys.version_info >= (3, 11):
        assert got == outcome(lambda d: binascii.a2b_base64(d, strict_mode=True))
    assert got == ("error" if text not in (b"QQ==", b"", b"QUJD") else
                   {b"QQ==": b"A", b"": b"", b"QUJD": b"ABC"}[text])
