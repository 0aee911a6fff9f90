"""No message is parsed and no ZarrError is re-worded: checked over the package's source.

Errors carry their location as fields (``ZarrError.at``) and kernels report status codes and
numbers, so nothing needs to read an exception's text. These tests walk the syntax tree of every
module of the package and fail on:

- an exception's text (``str(exc)``, ``repr(exc)``, ``f"{exc}"``, ``exc.args``, ``exc.detail``)
  that is inspected: compared, searched (``in``), given to a string method (``.startswith``...)
  or to the ``re`` module;
- a caught ZarrError (or a parameter typed as one) whose text goes into a new exception: a
  layer that knows more of the location sets fields and re-raises the same exception. Reports
  to the user (``print``, a warning, a log, a finding of ``zarrx check``) may quote it.

A foreign library's exception that has no code (json, zipfile, bz2, lzma) may still be quoted
in a new message; quoting is not parsing.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import zarrx
from zarrx import errors

PACKAGE = Path(zarrx.__file__).parent
SOURCES = sorted(PACKAGE.rglob("*.py"))
KERNELS = sorted(PACKAGE.rglob("*.pyx"))
FAMILY = {name for name in dir(errors)
          if isinstance(getattr(errors, name), type)
          and issubclass(getattr(errors, name), errors.ZarrError)}
STR_METHODS = {"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "split",
               "rsplit", "partition", "rpartition", "replace", "strip", "lower", "upper",
               "splitlines", "removeprefix", "removesuffix"}
RE_METHODS = {"search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _is_text_of(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is the text of the exception bound to ``name``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("str", "repr", "format") and node.args \
            and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
        return True
    if isinstance(node, ast.Attribute) and node.attr in ("args", "detail") \
            and isinstance(node.value, ast.Name) and node.value.id == name:
        return True
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
                   and v.value.id == name for v in node.values)
    return False


def _texts(tree: ast.AST, name: str) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if _is_text_of(n, name)]


def _names_bound_to_text(body: list[ast.stmt], name: str) -> set[str]:
    """Variables assigned the exception's text (``msg = str(exc)``)."""
    out = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and _texts(node.value, name):
                out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _inspections(scope: list[ast.stmt], name: str) -> list[ast.AST]:
    """Nodes of ``scope`` that inspect the text of the exception ``name``."""
    texts = _names_bound_to_text(scope, name)

    def text(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript):           # a slice of the text is text
            return text(node.value)
        return _is_text_of(node, name) or (isinstance(node, ast.Name) and node.id in texts)

    found = []
    for stmt in scope:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Compare) and any(text(n) for n in (node.left, *node.comparators)):
                found.append(node)
            elif isinstance(node, ast.Attribute) and node.attr in STR_METHODS and text(node.value):
                found.append(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in RE_METHODS \
                    and any(text(a) or (isinstance(a, ast.Name) and a.id == name)
                            for a in node.args):
                found.append(node)
    return found


def _makes_exception(call: ast.Call) -> bool:
    """A call that builds an exception: ``SomeError(...)`` or ``type(exc)(...)``."""
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    if name is not None:
        return name in FAMILY or name.endswith(("Error", "Exception"))
    return isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type"


def _formatted(body: list[ast.stmt], name: str) -> list[ast.AST]:
    """Texts of the exception ``name`` in ``body`` that go into a new exception."""
    inside: set[int] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and _makes_exception(node):
                inside |= {id(n) for a in [*node.args, *(k.value for k in node.keywords)]
                           for n in ast.walk(a)}
    return [n for stmt in body for n in _texts(stmt, name) if id(n) in inside]


def _caught(handler: ast.ExceptHandler) -> set[str]:
    t = handler.type
    items = t.elts if isinstance(t, ast.Tuple) else [t] if t is not None else []
    return {i.id if isinstance(i, ast.Name) else i.attr for i in items
            if isinstance(i, (ast.Name, ast.Attribute))}


def _annotation_names(arg: ast.arg) -> set[str]:
    if arg.annotation is None:
        return set()
    return {n.id if isinstance(n, ast.Name) else n.value for n in ast.walk(arg.annotation)
            if isinstance(n, ast.Name) or (isinstance(n, ast.Constant) and isinstance(n.value, str))}


def violations(source: str) -> list[tuple[int, str]]:
    """``(line, why)`` of every place ``source`` inspects an exception's text or formats a
    ZarrError."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ExceptHandler) and node.name:
            out += [(n.lineno, f"inspects the text of {node.name!r}")
                    for n in _inspections(node.body, node.name)]
            if _caught(node) & FAMILY:
                out += [(n.lineno, f"formats the caught ZarrError {node.name!r}")
                        for n in _formatted(node.body, node.name)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                if _annotation_names(arg) & FAMILY:
                    out += [(n.lineno, f"formats the ZarrError parameter {arg.arg!r}")
                            for n in _formatted(node.body, arg.arg)]
                    out += [(n.lineno, f"inspects the text of {arg.arg!r}")
                            for n in _inspections(node.body, arg.arg)]
    return sorted(set(out))


PROBE = """
import re
from zarrx.errors import CodecError
def relabel(exc: CodecError):
    return type(exc)("x" + str(exc))
try:
    pass
except CodecError as exc:
    raise CodecError(f"where: {exc}")
except ValueError as e:
    if "expected" in str(e):
        pass
    if str(e).startswith("x"):
        pass
    if re.search("y", str(e)):
        pass
    m = _SHORT.search(str(e))
    msg = str(e)
    if msg[:3] == "abc":
        pass
    raise CodecError(f"quoted: {e}")
except CodecError as exc:
    print(f"zarrx: {exc}")
    findings.append(Finding("corrupt", exc.detail))
    exc.at(key="k")
    raise
"""


def test_the_check_finds_what_it_looks_for() -> None:
    """Each pattern the checks exist for is found, on the line it is on; quoting a foreign
    error and locating a ZarrError are not."""
    found = violations(PROBE)
    assert found == [(5, "formats the ZarrError parameter 'exc'"),
                     (9, "formats the caught ZarrError 'exc'"),
                     *[(line, "inspects the text of 'e'") for line in (11, 13, 15, 17, 19)]]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_message_is_parsed_or_reworded(path: Path) -> None:
    assert violations(path.read_text()) == []


def test_codec_kernels_write_no_messages() -> None:
    """The codec kernels report ``KernelStatus(code, *numbers)``; only the codec modules word
    messages (``zarrx.codecs.status``)."""
    kernels = [p for p in KERNELS if p.parent.name == "codecs"]
    assert {p.stem for p in kernels} >= {"_zstd", "_zlib", "_blosc", "_lz4", "_crc32c",
                                          "_filters"}
    for path in kernels + [PACKAGE / "codecs" / "_common.pxd"]:
        text = path.read_text()
        assert "CodecError" not in text, path.name
        assert not re.search(r"\bstr\((exc|e|err)\)", text), path.name


def test_no_kernel_parses_exception_text() -> None:
    for path in KERNELS:
        assert not re.search(r"\bstr\((exc|e|err)\)", path.read_text()), path.name
