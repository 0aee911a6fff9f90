"""zarr-python 3's callables and error classes that zarrx shares, one case per name.

``test_api_surface.py`` checks that zarrx takes every parameter zarr-python takes, with the same
default. This module checks what that leaves out, name by name: that the parameters zarr-python
takes by position come in the same order (``zarr.open_array(store, mode)`` must not pass the
mode as another argument), that zarrx requires no argument zarr-python does not, and that each
of zarr-python's exception and warning classes is in ``zarrx.errors`` under its name, of every
builtin class zarr-python's is, so ``except`` clauses and warning filters written for
zarr-python keep working. A difference is allowed only where docs/guide/migrating.md lists it.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import zarrx
import zarrx.errors

zarr = pytest.importorskip("zarr")
import zarr.errors  # noqa: E402

from test_api_surface import listed  # noqa: E402

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _shared() -> dict[str, tuple[object, object]]:
    """``{key: (zarr-python callable, zarrx callable)}`` for the functions of ``zarr.__all__``
    and the methods of ``zarr.Array`` and ``zarr.Group`` zarrx has too."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in zarr.__all__:
            theirs, ours = getattr(zarr, name), getattr(zarrx, name, None)
            if callable(theirs) and callable(ours):
                out[name] = (theirs, ours)
        for cls in ("Array", "Group"):
            theirs_cls, ours_cls = getattr(zarr, cls), getattr(zarrx, cls)
            for name in dir(theirs_cls):
                if name.startswith("_") or not hasattr(ours_cls, name) or isinstance(
                        inspect.getattr_static(theirs_cls, name), property):
                    continue
                theirs, ours = getattr(theirs_cls, name), getattr(ours_cls, name)
                if callable(theirs) and callable(ours):
                    out[f"{cls}.{name}"] = (theirs, ours)
    return out


SHARED = _shared()


def _params(func: object) -> dict[str, inspect.Parameter] | None:
    try:
        sig = inspect.signature(func)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return {n: p for n, p in sig.parameters.items() if n not in ("self", "cls")}


def _positional(params: dict[str, inspect.Parameter]) -> list[str]:
    return [n for n, p in params.items() if p.kind in POSITIONAL]


def positional_differences(key: str, theirs: object, ours: object) -> set[str]:
    """``zarr.key(p=)`` for each parameter zarr-python takes by position that zarrx does not
    take at the same position."""
    zp, xp = _params(theirs), _params(ours)
    if zp is None or xp is None:
        return set()
    zpos, xpos = _positional(zp), _positional(xp)
    return {f"zarr.{key}({name}=)" for i, name in enumerate(zpos)
            if i >= len(xpos) or xpos[i] != name}


def required_differences(key: str, theirs: object, ours: object) -> set[str]:
    """``zarr.key(p=)`` for each parameter zarrx requires that zarr-python does not."""
    zp, xp = _params(theirs), _params(ours)
    if zp is None or xp is None:
        return set()
    return {f"zarr.{key}({name}=)" for name, p in xp.items()
            if p.kind not in VARIADIC and p.default is inspect.Parameter.empty
            and (name not in zp or zp[name].default is not inspect.Parameter.empty)}


@pytest.mark.parametrize("key", sorted(SHARED))
def test_positional_parameters_come_in_zarr_pythons_order(key):
    diffs = positional_differences(key, *SHARED[key])
    table = listed()
    assert not sorted(d for d in diffs if d not in table), (
        f"{key}: zarr-python's positional parameters are {_positional(_params(SHARED[key][0]))}, "
        f"zarrx's {_positional(_params(SHARED[key][1]))}")


@pytest.mark.parametrize("key", sorted(SHARED))
def test_zarrx_requires_no_argument_zarr_python_does_not(key):
    theirs, ours = SHARED[key]
    zp, table = _params(theirs), listed()
    if zp is not None and (all(p.kind in VARIADIC for p in zp.values()) or any(
            f"zarr.{key}({n}=)" in table for n, p in zp.items()
            if p.default is inspect.Parameter.empty and p.kind not in VARIADIC)):
        # a stub taking anything (zarr.copy), or a call whose required arguments zarrx
        # takes differently, as listed (zarr.Array(_async_array=)): nothing to compare
        return
    assert not sorted(d for d in required_differences(key, theirs, ours) if d not in table), key


def test_the_checks_see_a_moved_and_a_required_parameter():
    def theirs(store, mode=None, *, path=None):
        pass

    def ours(store, path=None, mode=None, *, extra):
        pass

    assert positional_differences("f", theirs, ours) == {"zarr.f(mode=)"}
    assert required_differences("f", theirs, ours) == {"zarr.f(extra=)"}
    assert positional_differences("f", theirs, lambda store, mode=None, path=None: 0) == set()


def _error_classes() -> dict[str, type]:
    return {name: obj for name, obj in vars(zarr.errors).items()
            if isinstance(obj, type) and issubclass(obj, BaseException)
            and obj.__module__ == "zarr.errors"}


@pytest.mark.parametrize("name", sorted(_error_classes()))
def test_each_zarr_python_error_class_is_in_zarrx_errors(name):
    theirs, ours = _error_classes()[name], getattr(zarrx.errors, name, None)
    assert isinstance(ours, type), f"zarrx.errors has no {name}"
    if f"zarr.errors.{name}" in listed():   # BaseZarrError: zarrx's own bases, as listed
        return
    for base in theirs.__mro__:
        if base.__module__ == "builtins":
            assert issubclass(ours, base), f"{name} is no {base.__name__}"
        elif base.__module__ == "zarr.errors":
            assert issubclass(ours, getattr(zarrx.errors, base.__name__)), base.__name__
    if issubclass(ours, Exception) and not issubclass(ours, Warning):
        assert issubclass(ours, zarrx.ZarrError)


def test_zarr_python_warning_filters_work():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=zarrx.errors.UnstableSpecificationWarning)
        warnings.filterwarnings("ignore", category=zarrx.errors.ZarrFutureWarning)
        a = zarrx.create_array({}, shape=(2,), dtype="S3")
    assert issubclass(zarrx.errors.UnstableSpecificationWarning, FutureWarning)
    assert a.dtype == np.dtype("S3")


def test_except_clauses_naming_zarr_python_indexing_errors_work():
    a = zarrx.create_array({}, shape=(6,), dtype="i4", chunks=(2,))
    a[...] = np.arange(6)
    try:
        got = a[::-2]
    except (zarrx.errors.NegativeStepError, zarrx.errors.ArrayIndexError):
        pytest.fail("a negative step selects as in numpy")
    assert got.tolist() == [5, 3, 1]
    with pytest.raises(zarrx.errors.BoundsCheckError):
        try:
            a[6]
        except (zarrx.errors.NegativeStepError, zarrx.errors.ArrayIndexError):
            pytest.fail("an index past the end is a BoundsCheckError")


def test_consolidated_metadata_listing_an_array_and_a_group_is_contains_array_and_group():
    import json
    zarray = {"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<i4",
              "compressor": None, "fill_value": 0, "filters": None, "order": "C"}
    md = {".zgroup": {"zarr_format": 2}, "x/.zarray": zarray, "x/.zgroup": {"zarr_format": 2}}
    store = {".zgroup": b'{"zarr_format": 2}', ".zmetadata": json.dumps(
        {"zarr_consolidated_format": 1, "metadata": md}).encode()}
    with pytest.raises(zarrx.errors.ContainsArrayAndGroupError) as info:
        zarrx.open_consolidated(store, zarr_format=2)
    assert isinstance(info.value, zarrx.MetadataError) and isinstance(info.value, ValueError)
    assert str(info.value) == ('.zmetadata metadata["x/.zgroup"]: a node cannot be both an '
                               'array and a group (.zarray is present too)')
