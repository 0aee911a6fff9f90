"""Model-based tests of hierarchies: random sequences of user operations on zarrx groups and
arrays, checked step by step against a model (a dict of node paths), and every few steps
against zarr-python reading the same store.

Groups and arrays created (also with ``overwrite``, ``g[name] = data``, ``require_group``),
deleted, moved, their attributes changed, arrays resized, metadata consolidated at the root or
below it and opened with or without it, through fresh handles, through a held root and through
groups opened from consolidated metadata. Invariants: the members, attributes, shapes and
values seen every way equal the model. In a zip archive, which cannot replace or remove an
entry, each operation either does what it does elsewhere or raises the documented StoreError
leaving the archive as it was.

``ZARRX_SLOW=1`` runs many more examples (``ZARRX_STATEFUL_EXAMPLES`` sets how many).
"""
from __future__ import annotations

import copy
import functools
import os
import tempfile
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import zarrx
from zarrx.store import LocalStore, MemoryStore, ZipStore

zarr = pytest.importorskip("zarr")

from stateful_helpers import _finish, model_tests, quiet, same, zarr_python_store  # noqa: E402


ZIP_REFUSALS = ("zip entries cannot be", "cannot delete objects")


NAMES = st.sampled_from(["a", "b", "c"])
ATTRS = st.dictionaries(st.sampled_from(["x", "y"]),
                        st.one_of(st.integers(-3, 3), st.text(max_size=2)), max_size=2)
HOW = st.sampled_from(["plain", "consolidated", "held"])


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def guarded(rule_body: Any) -> Any:
    """In a zip archive an operation that would replace or remove an entry raises StoreError
    and changes nothing; elsewhere it must succeed."""
    @functools.wraps(rule_body)
    def run(self: TreeMachine, *args: Any, **kwargs: Any) -> None:
        if self.kind != "zip":
            rule_body(self, *args, **kwargs)
            return
        model, consolidated, before = copy.deepcopy(self.model), set(self.consolidated), \
            self.objects()
        try:
            rule_body(self, *args, **kwargs)
        except zarrx.StoreError as exc:
            assert any(s in str(exc) for s in ZIP_REFUSALS), exc
            assert self.objects() == before
            self.model, self.consolidated = model, consolidated
    return run


class TreeMachine(RuleBasedStateMachine):
    kind = "memory"

    @initialize(fmt=st.sampled_from([2, 3]), local=st.booleans())
    def create(self, fmt: int, local: bool) -> None:
        self.fmt = fmt
        self.tmp = tempfile.mkdtemp(prefix="zarrx-stateful-")
        if self.kind == "zip":
            self.path = os.path.join(self.tmp, "t.zip")
            self.store = ZipStore(self.path, mode="w")
        else:
            self.kind = "local" if local else "memory"
            self.path = os.path.join(self.tmp, "t.zarr")
            self.store = LocalStore(self.path) if local else MemoryStore()
        self.root = zarrx.open_group(self.store, mode="w", zarr_format=fmt)
        # path -> {"kind", "attrs", and for arrays "data" and "fill"}
        self.model: dict[str, dict[str, Any]] = {"": {"kind": "group", "attrs": {}}}
        self.consolidated: set[str] = set()     # groups holding consolidated metadata
        self.root_consolidated = False          # the held root answers from it
        self.root_stale = False                 # ... and others changed the hierarchy since
        self.n = self.steps = 0

    def teardown(self) -> None:
        _finish(self, "root")

    # -- helpers
    def objects(self) -> dict[str, bytes]:
        return {k: bytes(self.store.get(k)) for k in self.store.list_prefix("")}

    def groups(self) -> list[str]:
        return sorted(p for p, m in self.model.items() if m["kind"] == "group")

    def node(self, path: str, how: str) -> Any:
        """The node at ``path`` reached from a root opened without consolidated metadata,
        with it (when there is some), or from the root held since the last reopen."""
        if how == "plain":
            root = zarrx.open_group(self.store, mode="r+", use_consolidated=False)
        elif how == "consolidated":
            root = zarrx.open_group(self.store, mode="r+")
        else:
            root = self.root
        if self.root_consolidated and (how != "held" or path):
            # a root opened from consolidated metadata is a snapshot: it reads its own again
            # after changes made through itself only (as in zarr-python)
            self.root_stale = True
        return root[path] if path else root

    def forget(self, path: str) -> None:
        for p in list(self.model):
            if p == path or p.startswith(path + "/"):
                del self.model[p]
        self.consolidated &= set(self.model)

    def new_array(self, path: str, data: np.ndarray, fill: int, attrs: dict[str, Any]) -> None:
        self.model[path] = {"kind": "array", "attrs": dict(attrs), "data": data, "fill": fill}

    def parent(self, data: Any) -> str:
        return data.draw(st.sampled_from(self.groups()))

    # -- rules
    @rule(data=st.data(), name=NAMES, attrs=ATTRS, how=HOW)
    @guarded
    def create_group(self, data: Any, name: str, attrs: dict[str, Any], how: str) -> None:
        parent = self.parent(data)
        g, path = self.node(parent, how), join(parent, name)
        if path in self.model:
            cls = zarrx.errors.ContainsGroupError if self.model[path]["kind"] == "group" else \
                zarrx.errors.ContainsArrayError
            with pytest.raises(cls):
                g.create_group(name, attributes=attrs)
            return
        g.create_group(name, attributes=attrs)
        self.model[path] = {"kind": "group", "attrs": dict(attrs)}

    @rule(data=st.data(), name=NAMES, attrs=ATTRS, how=HOW,
          shape=st.lists(st.integers(0, 4), min_size=1, max_size=2).map(tuple))
    @guarded
    def create_array(self, data: Any, name: str, attrs: dict[str, Any], how: str,
                     shape: tuple[int, ...]) -> None:
        parent = self.parent(data)
        g, path = self.node(parent, how), join(parent, name)
        self.n += 1
        kw = {"shape": shape, "dtype": "i2", "chunks": (2,) * len(shape), "attributes": attrs,
              "fill_value": -self.n}
        if path in self.model:
            with pytest.raises(zarrx.NodeExistsError):
                g.create_array(name, **kw)
            return
        data = np.arange(int(np.prod(shape)), dtype="i2").reshape(shape) + self.n
        g.create_array(name, **kw)[...] = data
        self.new_array(path, data, -self.n, attrs)

    @rule(data=st.data(), name=NAMES, how=HOW,
          kind=st.sampled_from(["setitem", "overwrite group", "overwrite array",
                                "require group"]))
    @guarded
    def replace(self, data: Any, name: str, how: str, kind: str) -> None:
        parent = self.parent(data)
        g, path = self.node(parent, how), join(parent, name)
        if kind == "require group":
            if self.model.get(path, {}).get("kind") == "array":
                with pytest.raises(zarrx.NodeMismatchError):
                    g.require_group(name)
                return
            g.require_group(name)
            self.model.setdefault(path, {"kind": "group", "attrs": {}})
        elif kind == "overwrite group":
            g.create_group(name, overwrite=True)
            self.forget(path)
            self.model[path] = {"kind": "group", "attrs": {}}
        else:
            self.n += 1
            data = np.full((3,), self.n, "i2")
            if kind == "setitem":
                g[name] = data
                fill = 0
            else:
                g.create_array(name, shape=(3,), dtype="i2", overwrite=True, fill_value=self.n)
                fill = self.n
            self.forget(path)
            self.new_array(path, data, fill, {})

    @rule(data=st.data(), name=NAMES, how=HOW)
    @guarded
    def delete(self, data: Any, name: str, how: str) -> None:
        parent = self.parent(data)
        g, path = self.node(parent, how), join(parent, name)
        if path not in self.model:
            with pytest.raises(zarrx.NodeNotFoundError):
                del g[name]
            return
        del g[name]
        self.forget(path)

    @rule(data=st.data(), name=NAMES, how=HOW)
    @guarded
    def move(self, data: Any, name: str, how: str) -> None:
        if len(self.model) == 1:
            return
        src = data.draw(st.sampled_from(sorted(p for p in self.model if p)))
        dst = join(self.parent(data), name)
        g = self.node("", how)
        if dst in self.model or dst == src or dst.startswith(src + "/"):
            with pytest.raises(zarrx.ZarrError):
                g.move(src, dst)
            return
        g.move(src, dst)
        for p in sorted(self.model):
            if p == src or p.startswith(src + "/"):
                self.model[dst + p[len(src):]] = self.model.pop(p)
        self.consolidated &= set(self.model)

    @rule(data=st.data(), attrs=ATTRS, how=HOW)
    @guarded
    def set_attributes(self, data: Any, attrs: dict[str, Any], how: str) -> None:
        path = data.draw(st.sampled_from(sorted(self.model)))
        self.node(path, how).attrs.update(attrs)
        self.model[path]["attrs"].update(attrs)

    @rule(data=st.data(), how=HOW)
    @guarded
    def resize(self, data: Any, how: str) -> None:
        arrays = sorted(p for p, m in self.model.items() if m["kind"] == "array")
        if not arrays:
            return
        path = data.draw(st.sampled_from(arrays))
        m = self.model[path]
        new = tuple(data.draw(st.integers(0, 5)) for _ in m["data"].shape)
        self.node(path, how).resize(new)
        grown = np.full(new, m["fill"], "i2")
        common = tuple(slice(0, min(a, b)) for a, b in zip(m["data"].shape, new))
        grown[common] = m["data"][common]
        m["data"] = grown

    @rule(data=st.data(), below=st.booleans())
    @guarded
    def consolidate(self, data: Any, below: bool) -> None:
        path = self.parent(data) if below else ""
        if path:
            zarrx.consolidate_metadata(self.store, path=path)
        else:
            zarrx.consolidate_metadata(self.store)
        self.consolidated.add(path)

    @rule(how=st.sampled_from(["plain", "use_consolidated", "open_consolidated", "open"]))
    def reopen(self, how: str) -> None:
        with_it = "" in self.consolidated and how != "plain"
        if how == "plain" or not with_it:
            self.root = zarrx.open_group(self.store, mode="r+", use_consolidated=False)
        elif how == "use_consolidated":
            self.root = zarrx.open_group(self.store, mode="r+", use_consolidated=True)
        elif how == "open_consolidated":
            self.root = zarrx.open_consolidated(self.store, mode="r+")
        else:
            self.root = zarrx.open(self.store, mode="r+")
        self.root_consolidated, self.root_stale = with_it, False

    # -- invariants
    def expected(self, below: str = "") -> dict[str, dict[str, Any]]:
        out = {}
        for p, m in self.model.items():
            if below and not p.startswith(below + "/") or p == below:
                continue
            e = {"kind": m["kind"], "attrs": m["attrs"]}
            if m["kind"] == "array":
                e["shape"] = m["data"].shape
            out[p[len(below) + 1:] if below else p] = e
        return out

    @staticmethod
    def tree(group: Any, lib: Any) -> dict[str, dict[str, Any]]:
        out = {}
        for name, node in group.members(max_depth=None):
            e: dict[str, Any] = {"kind": "group" if isinstance(node, lib.Group) else "array",
                                 "attrs": dict(node.attrs)}
            if e["kind"] == "array":
                e["shape"] = node.shape
            out[name] = e
        return out

    @invariant()
    def matches_the_model(self) -> None:
        if not hasattr(self, "root"):
            return
        exp = self.expected()
        assert self.tree(zarrx.open_group(self.store, mode="r", use_consolidated=False),
                         zarrx) == exp
        assert self.tree(zarrx.open_group(self.store, mode="r"), zarrx) == exp
        if not self.root_stale:
            assert self.tree(self.root, zarrx) == exp
            assert sorted(self.root.keys()) == sorted(p for p in exp if "/" not in p)
        if "" in self.consolidated:
            assert self.tree(zarrx.open_consolidated(self.store, mode="r"), zarrx) == exp
        for p in self.consolidated - {""}:
            found = zarrx.open_group(self.store, path=p, mode="r", use_consolidated=True)
            assert self.tree(found, zarrx) == self.expected(p), p
        for p, m in self.model.items():
            if m["kind"] == "array":
                a = zarrx.open_array(self.store, path=p, mode="r")
                same(a[...], m["data"])
        self.steps += 1
        if self.steps % 5 == 0:
            self.check_zarr_python()

    def check_zarr_python(self) -> None:
        if self.kind == "zip":
            self.store.close()
        with quiet():
            zs = zarr_python_store(self.store, self.path)
            exp = self.expected()
            for use in [False, True] if "" in self.consolidated else [False]:
                g = zarr.open_group(zs, mode="r", use_consolidated=use, zarr_format=self.fmt)
                assert self.tree(g, zarr) == exp, f"zarr-python, use_consolidated={use}"
            for p, m in self.model.items():
                if m["kind"] == "array":
                    a = zarr.open_array(zs, path=p, mode="r", zarr_format=self.fmt)
                    same(a[...], m["data"])
            zs.close()
        if self.kind == "zip":
            self.store = ZipStore(self.path, mode="a")
            self.reopen("plain")


class ZipTreeMachine(TreeMachine):
    kind = "zip"


MACHINES = [TreeMachine, ZipTreeMachine]

test_operations_match_the_model, test_many_operations_match_the_model = model_tests(MACHINES)
