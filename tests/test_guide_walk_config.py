"""zarr-python's user guide on configuration, done with zarrx: ``zarr.config.pprint`` and
``to_dict``, and the settings that switch on what zarrx always does
(``array.rectilinear_chunks``, which the guide's section on rectilinear chunk grids sets
first, and ``array.read_missing_chunks``)."""
from __future__ import annotations

import io

import pytest

import zarrx
from zarrx.errors import ArgumentError

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("key", ["array.rectilinear_chunks", "array.read_missing_chunks"])
def test_a_setting_zarrx_always_has_on_is_taken_as_true(key):
    """``zarr.config.set({"array.rectilinear_chunks": True})`` runs in both libraries, in the
    dotted and the nested form, and ``get`` gives the value (before: zarrx refused the key as
    unknown, so the guide's first step of that section failed)."""
    group, name = key.split(".")
    for lib in (zarr, zarrx):
        with lib.config.set({key: True}):
            assert lib.config.get(key) is True
        with lib.config.set({group: {name: True}}):
            assert lib.config.get(key) is True
    assert zarrx.config.get(key) is True              # what zarrx does without it too
    with zarrx.config.set({key: True}, threads=1):   # with others in one call
        assert zarrx.config.get("threads") == 1


@pytest.mark.parametrize("key", ["array.rectilinear_chunks", "array.read_missing_chunks"])
@pytest.mark.parametrize("value", [False, "true", 1, None])
def test_another_value_of_such_a_setting_is_refused_naming_it(key, value):
    before = zarrx.config.to_dict()
    with pytest.raises(ArgumentError) as info:
        zarrx.config.set({key: value}, threads=1)
    assert str(info.value).startswith(f"zarrx.config.{key}: expected True (zarrx always ")
    assert str(info.value).endswith(f"found {value!r}")
    assert isinstance(info.value, ValueError)
    assert zarrx.config.to_dict() == before          # nothing changed, threads neither


@pytest.mark.parametrize("key", ["array.sharding_coalesce_max_gap_bytes",
                                 "array.sharding_coalesce_max_bytes"])
def test_zarr_python_settings_without_a_counterpart_are_named_so(key):
    with pytest.raises(KeyError, match="is a zarr-python setting zarrx has no counterpart"):
        zarrx.config.set({key: 1024})


def test_pprint_and_to_dict_as_the_guide_calls_them():
    """The guide prints the configuration with ``zarr.config.pprint(stream=output,
    width=60)``: zarrx prints its own settings the same way."""
    out = {}
    for lib in (zarr, zarrx):
        stream = io.StringIO()
        lib.config.pprint(stream=stream, width=60)
        out[lib.__name__] = stream.getvalue()
        assert isinstance(lib.config.to_dict(), dict)
    assert out["zarr"].startswith("{'array': {'order': 'C'")
    settings = zarrx.config.to_dict()
    assert set(settings) == {"threads", "write_empty_chunks", "order", "consistency",
                             "memory_pool", "write_behind", "max_metadata_bytes",
                             "shard_index_cache_bytes", "decoded_shard_cache_bytes",
                             "default_zarr_format"}
    with zarrx.config.set({"array.order": "F"}):
        assert zarrx.config.to_dict()["order"] == "F"
        stream = io.StringIO()
        zarrx.config.pprint(stream=stream, width=60)
        assert "'order': 'F'," in stream.getvalue()
        assert max(map(len, stream.getvalue().splitlines())) <= 60
    assert out["zarrx"].startswith("{'consistency': ")
    settings["threads"] = 99                          # a copy
    assert zarrx.config.to_dict()["threads"] != 99
