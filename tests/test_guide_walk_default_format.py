"""zarr-python's migration guide says to set ``default_zarr_format=2`` in the configuration to
keep making Zarr v2 nodes: zarrx has the setting, for every node created without
``zarr_format=`` where no group above it has a format."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError

zarr = pytest.importorskip("zarr")


def _made(lib):
    """What each creation function writes without ``zarr_format=``: the stored keys."""
    calls = {
        "create_group": lambda s: lib.create_group(s),
        "group": lambda s: lib.group(s),
        "open_group": lambda s: lib.open_group(s, mode="w"),
        "open": lambda s: lib.open(s, mode="w", shape=(2,)),
        "create": lambda s: lib.create(shape=(2,), store=s),
        "zeros": lambda s: lib.zeros((2,), store=s),
        "array": lambda s: lib.array(np.arange(3), store=s),
        "save": lambda s: lib.save(s, np.arange(3)),
    }
    out = {}
    for name, call in calls.items():
        store = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(store)
        out[name] = "zarr.json" in store, ".zgroup" in store or ".zarray" in store
    return out


@pytest.mark.parametrize("form", [{"default_zarr_format": 2}, "keyword"])
def test_default_zarr_format_2_makes_zarr_v2_nodes_as_in_zarr_python(form):
    got = {}
    for lib in (zarr, zarrx):
        setting = lib.config.set(default_zarr_format=2) if form == "keyword" and lib is zarrx \
            else lib.config.set({"default_zarr_format": 2})
        with setting:
            assert lib.config.get("default_zarr_format") == 2
            got[lib.__name__] = _made(lib)
        assert lib.config.get("default_zarr_format") == 3
    assert got["zarrx"] == got["zarr"]
    assert set(got["zarrx"].values()) == {(False, True)}      # every one Zarr v2


def test_the_setting_reaches_create_array_and_from_array_but_not_inside_a_group():
    """zarrx's ``create_array`` and ``from_array`` take the setting too (zarr-python's make
    Zarr v3 unless given ``zarr_format``); a node made inside an existing group takes the
    group's format, and ``zarr_format=`` wins over both."""
    v3 = zarrx.open_group({}, mode="w")
    with zarrx.config.set({"default_zarr_format": 2}):
        assert zarrx.create_array({}, shape=(2,), dtype="i4").metadata.zarr_format == 2
        assert zarrx.from_array({}, data=np.arange(3)).metadata.zarr_format == 2
        assert v3.create_array("a", shape=(2,), dtype="i4").metadata.zarr_format == 3
        assert zarrx.create_array({}, shape=(2,), dtype="i4",
                                  zarr_format=3).metadata.zarr_format == 3
    assert zarrx.create_array({}, shape=(2,), dtype="i4").metadata.zarr_format == 3


@pytest.mark.parametrize("value", [4, 1, "2", 2.0, True, None])
def test_a_format_other_than_2_or_3_is_refused(value):
    with pytest.raises(ArgumentError) as info:
        zarrx.config.set({"default_zarr_format": value})
    assert str(info.value) == (f"zarrx.config.default_zarr_format: expected 2 or 3, "
                               f"found {value!r}")
    assert zarrx.config.get("default_zarr_format") == 3
    with zarrx.config.set(default_zarr_format=np.int64(2)):      # a numpy integer: an int
        assert zarrx.config.get("default_zarr_format") == 2 and \
            type(zarrx.config.get("default_zarr_format")) is int


@pytest.mark.parametrize("text, said", [("2", "2"), ("x", "ArgumentError")])
def test_the_environment_variable_sets_it(text, said):
    code = ("import zarrx\n"
            "try:\n"
            "    print(zarrx.create_group({}).metadata.zarr_format)\n"
            "except Exception as exc:\n"
            "    print(type(exc).__name__)\n")
    env = dict(os.environ, ZARRX_DEFAULT_ZARR_FORMAT=text)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if said == "ArgumentError":                 # refused when zarrx is imported
        assert "ZARRX_DEFAULT_ZARR_FORMAT: expected 2 or 3, found 'x'" in run.stderr
    else:
        assert run.stdout.strip() == said, run.stderr
