"""The 'gen' entries of a kerchunk reference set are checked and their keys counted before
fsspec renders them: a set generating more keys than zarrx.store.remote.references.GEN_KEYS
is refused at once (fsspec renders each key with jinja2, about a millisecond apiece, and
holds them all), as is an entry fsspec cannot expand, naming the field."""
from __future__ import annotations

import json
import re

import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store.remote import references

pytest.importorskip("fsspec")
jinja2_sandbox = pytest.importorskip("jinja2.sandbox")


def _gen(dimensions, **entry):
    return {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}'},
            "gen": [{"key": "k/{{i}}", "url": "file:///nowhere", "offset": "{{i * 8}}",
                     "length": "8", "dimensions": dimensions, **entry}]}


@pytest.fixture
def renders(monkeypatch):
    """How many templates fsspec rendered; more than 100 fail the test at once."""
    made = []
    real = jinja2_sandbox.SandboxedEnvironment

    class Counted(real):
        def __init__(self, *args, **kwargs):
            made.append(1)
            if len(made) > 100:
                raise AssertionError("the 'gen' entries are being expanded")
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(jinja2_sandbox, "SandboxedEnvironment", Counted)
    return made


def _open(tmp_path, doc):
    fo = tmp_path / "refs.json"
    fo.write_text(json.dumps(doc))
    return zarrx.open_group("reference://", mode="r", storage_options={"fo": str(fo)}), str(fo)


@pytest.mark.parametrize("dims", [{"i": {"stop": 2_000_000_000}},
                                  {"i": {"stop": 50_000}, "j": list(range(50_000))}])
def test_gen_entries_of_too_many_keys_are_refused_without_expanding_them(tmp_path, renders,
                                                                        dims):
    with pytest.raises(StoreError, match=r"'gen'\[0\]: the 'gen' entries generate \d+ keys or "
                       rf"more, expected at most {references.GEN_KEYS}"):
        _open(tmp_path, _gen(dims))
    assert not renders


def test_gen_entries_within_the_limit_are_expanded(tmp_path, renders):
    g, _ = _open(tmp_path, _gen({"i": {"start": 2, "stop": 12, "step": 5}}))
    assert sorted(g.store.fs.references) == [".zgroup", "k/2", "k/7"]


@pytest.mark.parametrize("dims, what", [
    ({"i": {"stop": 4, "step": 0}}, ".dimensions.i: expected whole numbers 'start', 'stop' "
                                    "and 'step' (not 0), found {'stop': 4, 'step': 0}"),
    ({"i": {"start": 1}}, ".dimensions.i: expected whole numbers 'start', 'stop' and 'step' "
                          "(not 0), found {'start': 1}"),
    ({"i": 7}, ".dimensions.i: expected an array or an object with 'stop' (and 'start', "
               "'step'), found 7"),
    (None, ".dimensions: expected a JSON object, found None"),
])
def test_a_gen_entry_fsspec_cannot_expand_is_named(tmp_path, renders, dims, what):
    doc = _gen(dims)
    with pytest.raises(StoreError, match=re.escape(f"'gen'[0]{what}")):
        _open(tmp_path, doc)
