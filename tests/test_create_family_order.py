"""The order a Zarr v2 array of zarr-python's ``create`` family stores: ``order=``, else that of
``config=`` (a mapping or an ``ArrayConfig``), for the group methods too."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.array_config import ArrayConfig

from parity_helpers import both, doc
from parity_helpers import _quiet  # noqa: F401  (an autouse fixture)

ZarrArrayConfig = pytest.importorskip("zarr.core.array_spec").ArrayConfig

METHODS = {"zeros": {}, "ones": {}, "empty": {}, "full": {"fill_value": 3}}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("order", [None, "C", "F"])
@pytest.mark.parametrize("config", [{"order": "F"}, {"order": "C"}, {}], ids=["F", "C", "none"])
def test_group_methods_of_the_create_family_store_configs_order_in_zarr_v2(method, order,
                                                                            config):
    # before: C (or the array.order setting) whatever config said, unlike zarrx.zeros
    def case(lib):
        store: dict = {}
        g = lib.open_group(store, mode="w", zarr_format=2)
        # zarr_format=2 again: zarr-python 3.1's group methods otherwise make a Zarr v3 array
        a = getattr(g, method)(name="a", shape=(2, 3), order=order, config=config,
                               zarr_format=2, **METHODS[method])
        a[...] = np.arange(6).reshape(2, 3)
        return doc(store, "a/.zarray")["order"], a.order
    got = both(case)
    expected = order or config.get("order", "C")
    assert got["zarr"] == got["zarrx"] == (expected, expected)


def test_group_create_array_keeps_its_own_rule():
    # create_array stores order= or the array.order setting, in both libraries
    store: dict = {}
    g = zarrx.open_group(store, mode="w", zarr_format=2)
    g.create_array("a", shape=(2,), dtype="i4", config={"order": "F"})
    assert doc(store, "a/.zarray")["order"] == "C"


CONFIGS = {"zarr-python": lambda order: ZarrArrayConfig(order=order, write_empty_chunks=True),
           "zarrx": lambda order: ArrayConfig(order=order, write_empty_chunks=True)}


@pytest.mark.parametrize("kind", list(CONFIGS))
@pytest.mark.parametrize("call", ["create", "zeros", "ones", "empty", "open_array"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_an_array_config_object_is_taken_as_config_by_the_create_family(kind, call, fmt):
    # before: AttributeError ('ArrayConfig' object has no attribute 'get') for Zarr v2 without
    # order=, ArgumentTypeError 'expected a mapping' otherwise; zarr-python takes its own
    store: dict = {}
    kw = {"mode": "w"} if call == "open_array" else {}
    a = getattr(zarrx, call)(store=store, shape=(2, 3), dtype="i4", zarr_format=fmt,
                             config=CONFIGS[kind]("F"), **kw)
    assert a.order == "F" and a.config.write_empty_chunks is True
    a[...] = np.arange(6).reshape(2, 3)
    assert a[...].flags.f_contiguous
    if fmt == 2:
        assert doc(store, ".zarray")["order"] == "F"


def test_zarr_python_stores_the_order_of_its_array_config_as_zarrx_does():
    def case(lib):
        store: dict = {}
        lib.create(store=store, shape=(2,), dtype="i4", zarr_format=2,
                   config=ZarrArrayConfig(order="F", write_empty_chunks=False))
        return doc(store, ".zarray")["order"]
    got = both(case)
    assert got["zarr"] == got["zarrx"] == "F"


@pytest.mark.parametrize("call", [
    lambda cfg: zarrx.create((2,), zarr_format=2, config=cfg),
    lambda cfg: zarrx.create_array({}, shape=(2,), dtype="i4", config=cfg),
    lambda cfg: zarrx.open_group({}, mode="w", zarr_format=2).zeros(name="a", shape=(2,),
                                                                    config=cfg)])
def test_a_config_of_another_kind_is_refused_naming_what_is_taken(call):
    with pytest.raises(zarrx.errors.ArgumentTypeError,
                       match="config: expected a mapping or an ArrayConfig, found list"):
        call(["F"])


def test_an_array_config_object_applies_when_open_array_opens_an_existing_array():
    # as a mapping does (before: an ArrayConfig object was ignored there)
    store: dict = {}
    zarrx.create_array(store, shape=(2, 3), dtype="i4")
    a = zarrx.open_array(store, mode="r", config=ArrayConfig(order="F", write_empty_chunks=True))
    assert a.order == "F" and a.config.write_empty_chunks is True
    assert a[...].flags.f_contiguous
