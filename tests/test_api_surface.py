"""zarr-python 3's public surface, name by name, against zarrx.

The names are enumerated from zarr-python itself: ``zarr.__all__``, the public attributes of
``zarr.Array`` and ``zarr.Group``, the exception and warning classes of ``zarr.errors``,
``zarr.storage.__all__`` (and its store classes' constructors) and the public attributes of
``zarr.config``. Each is either in zarrx
at the same place with a compatible signature (every parameter zarr-python takes is taken, with
the same default, and positional where zarr-python's is), or listed with its reason in the table
of docs/guide/migrating.md ("Names and signatures zarrx takes differently"). A name zarr-python
adds, or a table entry zarrx no longer needs, fails :func:`test_every_difference_is_listed`.
"""
from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx
import zarrx.errors
import zarrx.storage
from zarrx.metadata.make import DEFAULT_FILL

zarr = pytest.importorskip("zarr")
import zarr.errors  # noqa: E402
import zarr.storage  # noqa: E402

MIGRATING = Path(__file__).resolve().parent.parent / "docs" / "guide" / "migrating.md"
HEADING = "## Names and signatures zarrx takes differently"
EMPTY = inspect.Parameter.empty
VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

# zarrx callables whose ``**kwargs`` are another function's keywords: a zarr-python parameter
# missing from the signature is looked up there (and test_forwarded_keywords_are_taken calls it)
FORWARDS = {
    "create": zarrx.create_array, "open": zarrx.create_array, "open_array": zarrx.create_array,
    "Group.create_array": zarrx.create_array, "Group.create": zarrx.create_array,
    "Group.array": zarrx.create_array,
}


def listed() -> dict[str, str]:
    """``{key: reason}`` from the table under HEADING; a cell may name several keys."""
    text = MIGRATING.read_text()
    assert HEADING in text, f"{MIGRATING} has no section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    assert rows[1].replace("|", "").strip("- ") == "", "the table's second row is its rule"
    out: dict[str, str] = {}
    for row in rows[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 2 and cells[1], f"a row without a reason: {row}"
        keys = re.findall(r"`([^`]+)`", cells[0])
        assert keys, f"a row naming no zarr-python name: {row}"
        for key in keys:
            assert key not in out, f"{key} is listed twice"
            out[key] = cells[1]
    return out


def _same_default(theirs: object, ours: object) -> bool:
    if theirs is EMPTY:
        return True                      # required there: any default here takes the same calls
    if type(theirs).__name__ == "DefaultFillValue":
        return ours is DEFAULT_FILL
    try:
        return type(theirs) is type(ours) and bool(np.all(theirs == ours))
    except (TypeError, ValueError):     # defaults that do not compare: different
        return False


def _signature(func: object) -> inspect.Signature | None:
    try:
        return inspect.signature(func)   # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def signature_differences(key: str, theirs: object, ours: object) -> set[str]:
    """``zarr.f(p=)`` for each parameter ``p`` of ``theirs`` that ``ours`` does not take, takes
    with another default, or takes by keyword only where ``theirs`` takes it by position."""
    zs, xs = _signature(theirs), _signature(ours)
    if zs is None or xs is None:
        return set()
    forward = _signature(FORWARDS[key]) if key in FORWARDS else None
    out = set()
    for name, p in zs.parameters.items():
        if name in ("self", "cls") or p.kind in VARIADIC:
            continue
        q = xs.parameters.get(name)
        if q is None or q.kind in VARIADIC:
            q = forward.parameters.get(name) if forward is not None else None
            positional_ok = p.kind not in POSITIONAL or p.default is not EMPTY
        else:
            positional_ok = p.kind not in POSITIONAL or q.kind in POSITIONAL
        if q is None or not positional_ok or not _same_default(p.default, q.default):
            out.add(f"zarr.{key}({name}=)")
    return out


def _kind(cls: type, name: str) -> str:
    attr = inspect.getattr_static(cls, name)
    if isinstance(attr, classmethod):
        return "classmethod"
    return "callable" if isinstance(attr, staticmethod) or inspect.isfunction(attr) else "data"


def _builtin_bases(cls: type) -> set[type]:
    return {b for b in cls.__mro__ if b.__module__ == "builtins"} - {object, BaseException}


def _error_classes() -> dict[str, type]:
    return {name: obj for name, obj in vars(zarr.errors).items()
            if isinstance(obj, type) and issubclass(obj, BaseException)
            and not name.startswith("_")
            and (obj.__module__ == "zarr.errors" or name in zarr.errors.__all__)}


def _store_class_methods(cls: object) -> list[str]:
    """The constructors of a store class besides ``__init__`` (``FsspecStore.from_url``); its
    other methods are zarr-python's asynchronous store protocol, which zarrx's stores do not
    follow (zarrx takes zarr-python's store objects as they are)."""
    if not isinstance(cls, type):
        return []
    return [name for name, attr in vars(cls).items() if isinstance(attr, classmethod)
            and not name.startswith("_") and not inspect.iscoroutinefunction(attr.__func__)]


def survey() -> tuple[dict[str, str], set[str]]:
    """``({zarr-python name: "present" or "absent"}, keys of every difference)``."""
    names: dict[str, str] = {}
    diffs: set[str] = set()

    def check(key: str, present: bool, theirs: object = None, ours: object = None) -> None:
        names[f"zarr.{key}"] = "present" if present else "absent"
        if not present:
            diffs.add(f"zarr.{key}")
        elif callable(theirs) and callable(ours):
            diffs.update(signature_differences(key, theirs, ours))

    for name in zarr.__all__:
        ours = getattr(zarrx, name, None)
        check(name, ours is not None, getattr(zarr, name), ours)
    for cls in ("Array", "Group"):
        theirs_cls, ours_cls = getattr(zarr, cls), getattr(zarrx, cls)
        for name in sorted(dir(theirs_cls)):
            if name.startswith("_"):
                continue
            present = hasattr(ours_cls, name)
            if present and _kind(theirs_cls, name) != _kind(ours_cls, name):
                present = False          # a property for a method (or the other way round)
            check(f"{cls}.{name}", present, getattr(theirs_cls, name),
                  getattr(ours_cls, name, None))
    for name, theirs in _error_classes().items():
        ours = getattr(zarrx.errors, name, None)
        ok = isinstance(ours, type) and _builtin_bases(theirs) <= _builtin_bases(ours) and all(
            issubclass(ours, getattr(zarrx.errors, b.__name__, object))
            for b in theirs.__mro__ if b.__module__ == "zarr.errors")
        check(f"errors.{name}", ok)
    for name in zarr.storage.__all__:
        theirs, ours = getattr(zarr.storage, name), getattr(zarrx.storage, name, None)
        check(f"storage.{name}", ours is not None, theirs, ours)   # a class: its constructor
        for method in _store_class_methods(theirs):
            if ours is not None:
                check(f"storage.{name}.{method}", hasattr(ours, method),
                      getattr(theirs, method), getattr(ours, method, None))
    for name in dir(zarr.config):
        if not name.startswith("_"):
            ours = getattr(zarrx.config, name, None)
            check(f"config.{name}", ours is not None, getattr(zarr.config, name), ours)
    return names, diffs


@pytest.fixture(scope="module")
def surveyed():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return survey()


def test_every_difference_is_listed(surveyed):
    names, diffs = surveyed
    table = listed()
    assert len(names) > 150              # the enumeration found zarr-python's surface
    unlisted = sorted(diffs - set(table))
    assert not unlisted, f"add these to the table in {MIGRATING.name}: {unlisted}"
    stale = sorted(set(table) - diffs)
    assert not stale, f"zarrx now matches these; drop them from the table: {stale}"


def test_the_common_names_are_there(surveyed):
    names, _ = surveyed
    for key in ("zarr.tree", "zarr.from_array", "zarr.zeros_like", "zarr.Group.tree",
                "zarr.Group.require_array", "zarr.Group.move", "zarr.Array.info_complete",
                "zarr.Array.nbytes_stored", "zarr.Array.update_attributes",
                "zarr.Array.get_orthogonal_selection", "zarr.errors.ContainsArrayError",
                "zarr.errors.NodeTypeValidationError", "zarr.errors.ArrayNotFoundError",
                "zarr.errors.GroupNotFoundError", "zarr.errors.ZarrDeprecationWarning"):
        assert names[key] == "present", key


def test_the_survey_sees_a_missing_name_and_a_changed_default():
    def theirs(a, b=1, *, c=None, d="x"):
        pass

    def ours(a, *, b=1, c=None, **kwargs):
        pass

    assert signature_differences("f", theirs, ours) == {"zarr.f(b=)", "zarr.f(d=)"}
    assert signature_differences("f", theirs, lambda a, b=2, *, c=None, d="x": 0) == {
        "zarr.f(b=)"}
    assert signature_differences("f", lambda a, *, b=0: 0, lambda a, *, b=False: 0) == {
        "zarr.f(b=)"}                    # 0 and False are different defaults


@pytest.mark.parametrize("key", sorted(FORWARDS))
def test_forwarded_keywords_are_taken(key):
    """Each zarr-python keyword a FORWARDS entry takes through ``**kwargs`` works with
    zarr-python's default: the forwarding the survey assumes is real."""
    owner, _, name = key.rpartition(".")
    theirs = getattr(getattr(zarr, owner) if owner else zarr, name)
    ours_sig = inspect.signature(getattr(getattr(zarrx, owner) if owner else zarrx, name))
    forward = inspect.signature(FORWARDS[key]).parameters
    taken = [n for n, p in inspect.signature(theirs).parameters.items()
             if n not in ours_sig.parameters and n in forward and p.default is not EMPTY
             and type(p.default).__name__ != "DefaultFillValue"
             and n not in ("shape", "dtype", "data")]
    assert taken
    for kw in taken:
        value = inspect.signature(theirs).parameters[kw].default
        args = {"shape": (2,), "dtype": "i4", kw: value}
        if key.startswith("Group."):
            node = getattr(zarrx.group({}), name)("a", **args)
        elif key == "create":
            node = zarrx.create(store={}, **args)
        else:
            node = getattr(zarrx, key)({}, mode="w", **args)
        assert node.shape == (2,), kw


def test_tree_is_group_tree_with_zarr_pythons_deprecation():
    g = zarrx.group({})
    g.create_group("a").create_array("b", shape=(2,), dtype="i4")
    with pytest.warns(zarrx.errors.ZarrDeprecationWarning, match="Use Group.tree instead"):
        text = zarrx.tree(g, level=1)
    assert text == g.tree(level=1) and "a" in text
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="found Array"):
        zarrx.tree(g["a/b"])
    with pytest.warns(zarr.errors.ZarrDeprecationWarning):
        zarr.tree(zarr.group(), level=1)  # zarr-python warns the same way


def test_an_unknown_node_type_is_caught_as_in_zarr_python():
    doc = b'{"zarr_format": 3, "node_type": "folder"}'
    with pytest.raises(zarr.errors.NodeTypeValidationError):
        zarr.open_array(zarr.storage.MemoryStore({"zarr.json": _buffer(doc)}), mode="r")
    with pytest.raises(zarrx.errors.NodeTypeValidationError) as exc:
        zarrx.open_array({"zarr.json": doc}, mode="r")
    assert isinstance(exc.value, zarrx.errors.MetadataValidationError)
    assert isinstance(exc.value, zarrx.MetadataError) and isinstance(exc.value, ValueError)
    assert str(exc.value) == ("zarr.json node_type: expected 'array' or 'group', "
                              "found 'folder'")


@pytest.mark.parametrize("doc, message", [
    (b'{"zarr_format": 2, "node_type": "group"}', "zarr_format: expected 3, found 2"),
    (b'{"node_type": "group"}', "missing required field 'zarr_format'"),
    (b'{"zarr_format": 3}', "missing required field 'node_type'"),
])
def test_a_zarr_json_of_another_format_is_a_metadata_validation_error(doc, message):
    with pytest.raises(zarrx.errors.MetadataValidationError, match=message):
        zarrx.open_group({"zarr.json": doc}, mode="r")


def test_zarr_version_warns_with_zarr_pythons_class():
    for lib in (zarr, zarrx):
        with pytest.warns(lib.errors.ZarrDeprecationWarning, match="zarr_version is deprecated"):
            lib.create((2,), zarr_version=3)
    assert issubclass(zarrx.errors.ZarrDeprecationWarning, DeprecationWarning)


def test_config_get_and_set_take_zarr_pythons_names():
    for lib in (zarr, zarrx):
        with lib.config.set(arg={"array.write_empty_chunks": True}):
            assert lib.config.get(key="array.write_empty_chunks") is True
        assert lib.config.get("no.such.setting", default=5) == 5
        with pytest.raises(KeyError):
            lib.config.get("no.such.setting")


def test_with_config_gives_a_handle_with_another_runtime_configuration():
    seen = {}
    for name, lib in (("zarr", zarr), ("zarrx", zarrx)):
        a = lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,), fill_value=0)
        b = a.with_config({"write_empty_chunks": True})
        b[...] = 0                        # only the fill value: stored all the same
        f = b.with_config({"order": "F"})
        seen[name] = (a.config.to_dict(), b.config.to_dict(), f.config.to_dict(),
                      b.nchunks_initialized, f.order)
        with pytest.raises(TypeError):
            a.with_config({"nope": 1})
        with pytest.raises(ValueError):
            a.with_config({"order": "K"})
    assert seen["zarrx"] == seen["zarr"] == (
        {"order": "C", "write_empty_chunks": False}, {"order": "C", "write_empty_chunks": True},
        {"order": "F", "write_empty_chunks": True}, 2, "F")


def test_with_config_takes_zarr_pythons_array_config():
    from zarr.core.array_spec import ArrayConfig
    a = zarrx.create_array({}, shape=(2, 2), dtype="i4", chunks=(1, 2))
    a[...] = [[1, 2], [3, 4]]
    f = a.with_config(ArrayConfig(order="F", write_empty_chunks=True))
    assert f.config.to_dict() == {"order": "F", "write_empty_chunks": True}
    assert f[...].flags.f_contiguous and f[...].tolist() == [[1, 2], [3, 4]]
    with zarrx.config.set(write_empty_chunks=True):  # a handle without its own follows it
        assert a.config.write_empty_chunks is True


def test_print_debug_info_names_the_versions_for_a_bug_report(capsys):
    zarr.print_debug_info()
    theirs = capsys.readouterr().out.splitlines()
    zarrx.print_debug_info()
    ours = capsys.readouterr().out.splitlines()
    assert ours[:2] == theirs[:2]          # platform and python, as zarr-python prints them
    assert f"zarrx: {zarrx.__version__}" in ours and f"numpy: {np.__version__}" in ours
    assert f"zarr: {zarr.__version__}" in ours      # an optional package that is installed


def test_base_zarr_error_catches_every_zarrx_error():
    with pytest.raises(zarrx.errors.BaseZarrError):
        zarrx.open_group({}, mode="r")
    with pytest.raises(zarrx.errors.BaseZarrError):
        zarrx.create_array({}, shape=(2,), dtype="int33")


def _buffer(data: bytes):
    from zarr.core.buffer import default_buffer_prototype
    return default_buffer_prototype().buffer.from_bytes(data)
