"""Imports go only downwards through the layers of docs/DESIGN.md."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "zarrx"

# module prefix -> layer; a module may import only from layers <= its own
LAYERS = [
    ("zarrx.errors", 0),
    ("zarrx.config", 0),
    ("zarrx._compat", 0),             # what differs between the supported Python versions
    ("zarrx._fork", 0),               # what a forked child makes again (locks, pools, caches)
    ("zarrx._pool", 0),
    ("zarrx._behind", 0),             # write-behind: one I/O thread per write (over _pool)
    ("zarrx._clib.zx_copy", 0),       # declarations of leaf C helpers of our own (csrc/), which
    ("zarrx._clib.zx_openat2", 0),    # any kernel may use: no Python behind them
    ("zarrx._clib.zx_dirlist", 0),    # a folder's names at one moment (getdents64, hashed)
    ("zarrx._clib.zx_hugepage", 0),
    ("zarrx._clib.zx_crc32c", 0),
    ("zarrx._clib.zx_shuffle", 0),
    ("zarrx._clib.zx_endian", 0),
    ("zarrx._clib.zx_outpool", 0),
    ("zarrx._clib.zx_jsontext", 0),   # scanning JSON text byte by byte (inline, no C behind)
    # the memory of the arrays reads return (a numpy memory handler over freed blocks)
    ("zarrx._outputs", 0),
    # a leaf kernel over those helpers: the codec plan and the memory store gather raw chunks
    ("zarrx._gather", 0),
    ("zarrx._outer_copy", 0),     # copies between outer products of index arrays
    ("zarrx._scatter", 0),        # a slab of decoded chunks copied into the box they lie in
    ("zarrx.metadata", 1),
    ("zarrx.store.sharded", 3),
    ("zarrx.store.shard_index", 3),
    ("zarrx.store.shard_write", 3),
    ("zarrx.store.shard_slots", 3),   # many inner chunks of a shard, described by arrays
    ("zarrx.store.chunks", 3),
    ("zarrx.store._shard_index", 3),
    ("zarrx.store._localshard", 3),   # a local shard's index and inner chunks in one call
    ("zarrx.store._memshard", 3),   # a memory store shard's index and inner chunks in one call
    ("zarrx.store._shardkernel", 3),   # what those two share: the index, its check, the spans
    ("zarrx.layout", 3),
    ("zarrx.shard_objects", 3),     # whole-shard codecs: a store view built from codecs
    ("zarrx.size_limits", 3),     # the most bytes a stored chunk or shard may hold
    ("zarrx.store._dictversion", 1),   # a dict's version tag: the dict store's listing
    ("zarrx.store._localstat", 1),   # generations of many local keys, each folder opened once
    ("zarrx.store._localversions", 1),   # versioned reads of many local keys in one call
    ("zarrx.store._localcond", 1),   # conditional writes of many local keys in one call
    ("zarrx.store.localbatch", 1),   # LocalStore's batch methods over those two kernels
    ("zarrx.store.keyindex", 1),   # sorted keys of memory, zip and dict stores
    ("zarrx.store.remote", 1),
    ("zarrx.store", 1),
    ("zarrx.storage", 1),
    ("zarrx._clib", 2),
    ("zarrx.codecs.chain", 2),   # a chunk's codec list checked and bound (under the plan)
    ("zarrx.codecs.plan", 2),    # CodecPipeline: the executable plan made from it
    ("zarrx.codecs._rows", 2),   # raw chunks of one buffer copied into rows (one kernel call)
    ("zarrx.codecs", 2),
    ("zarrx._indexing", 4),
    ("zarrx.selection", 4),
    ("zarrx.chunk_grid", 4),
    ("zarrx.slice_runs", 4),     # a slice's chunks on a regular axis, made as listed
    ("zarrx.indexing", 4),
    ("zarrx.selection_plan", 4),     # a selection's plan: its chunks listed lazily
    ("zarrx.fields", 4),
    ("zarrx.chunk_io", 4),
    ("zarrx.chunk_read", 4),
    ("zarrx.fill_region", 4),     # the missing chunks of a box read, filled together
    ("zarrx.chunk_write", 4),
    ("zarrx.box_read", 4),
    ("zarrx.box_write", 4),
    ("zarrx.shard_read", 4),     # box and point reads of small inner chunks, shard by shard
    ("zarrx.batch_read", 4),     # box, outer and point reads of small chunks, a slab at a time
    ("zarrx.batch_write", 4),    # box writes of small chunks, a slab of chunks at a time
    ("zarrx.batch_merge", 4),    # partial writes of small chunks, merged a slab at a time
    ("zarrx.shard_merge", 4),    # the inner chunks of a shard a write covers in part, together
    ("zarrx.shard_box", 4),      # the shards a box write covers in part, chunks encoded together
    ("zarrx.batch_points", 4),   # point and mask writes of small chunks, merged a run at a time
    ("zarrx.text_items", 4),     # the code units of fixed-length text read from chunks
    ("zarrx.attrs", 5),
    ("zarrx.node", 5),
    ("zarrx.info", 5),
    ("zarrx.array", 5),
    ("zarrx.array_selection", 5),   # the Array's indexing front-ends
    ("zarrx.array_shape", 5),       # the Array's resize and append
    ("zarrx.array_config", 5),      # the Array's runtime configuration (order, empty chunks)
    ("zarrx.group", 5),
    ("zarrx.group_get", 5),     # the Group's accessors of one kind of member (get_array, get_group)
    ("zarrx.shape_args", 5),    # shape= and chunks= of array creation
    ("zarrx.creation", 5),
    ("zarrx.node_paths", 5),    # node paths and the groups above a new node
    ("zarrx.like", 5),          # the arguments of the *_like functions
    ("zarrx.hierarchy", 5),
    ("zarrx.codec_args", 5),
    ("zarrx.shard_args", 5),    # the sharding serializer of array creation
    ("zarrx.codec_inputs", 5),  # codec arguments of array creation as codec objects
    ("zarrx.dask.chunks", 5),   # dask block layout and graphs over an Array handle
    ("zarrx.dask.graph", 5),
    ("zarrx.dask", 6),
    ("zarrx.xarray", 6),
    ("zarrx.api", 6),
    ("zarrx.open_args", 6),     # the modes and keywords of the open and create functions
    ("zarrx.convenience", 6),
    ("zarrx.bench", 6),
    ("zarrx.tools", 7),
    ("zarrx.cli", 8),
    ("zarrx.__main__", 8),
    ("zarrx", 6),
]
# same-layer pairs that must not meet: only metadata and api know the Zarr version
FORBIDDEN = {("zarrx.store", "zarrx.codecs"), ("zarrx.codecs", "zarrx.store")}


def layer_of(mod: str) -> int:
    for prefix, layer in LAYERS:
        if mod == prefix or mod.startswith(prefix + "."):
            return layer
    raise AssertionError(f"module {mod} is not assigned a layer")


def modules():
    for path in sorted(ROOT.rglob("*.py")) + sorted(ROOT.rglob("*.pyx")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def imports_of(path: Path) -> set[str]:
    src = path.read_text()
    if path.suffix == ".pyx":  # cimport / import lines only
        out = set()
        for line in src.splitlines():
            s = line.strip()
            for kw in ("from ", "cimport ", "import "):
                if s.startswith(kw) and "zarrx" in s.split()[1]:
                    out.add(s.split()[1])
        return out
    out = set()
    tree = ast.parse(src)
    for node in ast.walk(tree):            # imports for type checkers only do not run
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING"):
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.split(".")[0] == "zarrx"}


@pytest.mark.parametrize("mod,path", list(modules()), ids=[m for m, _ in modules()])
def test_imports_go_down(mod: str, path: Path) -> None:
    if mod == "zarrx":
        return
    mine = layer_of(mod)
    for imp in imports_of(path):
        if imp == "zarrx":
            continue
        assert layer_of(imp) <= mine, f"{mod} (layer {mine}) imports {imp} (layer {layer_of(imp)})"
        for a, b in FORBIDDEN:
            assert not (mod.startswith(a) and imp.startswith(b)), f"{mod} must not import {imp}"


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import that runs (``import m``: names empty)."""
    if path.suffix == ".pyx":
        return [(m, []) for m in imports_of(path)]
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING"):
            node.body = []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names)
    return [(m, n) for m, n in out if m.split(".")[0] == "zarrx"]


def _graph() -> dict[str, set[str]]:
    """Module -> the modules it imports; ``from pkg import submodule`` names the submodule."""
    mods = dict(modules())
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps = set()
        for module, names in _imports(path):
            subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in mods]
            targets = subs if subs and len(subs) == len(names) else [module, *subs]
            for imp in targets:
                while imp not in mods and "." in imp:
                    imp = imp.rsplit(".", 1)[0]
                if imp in mods and imp != mod and imp != "zarrx":
                    deps.add(imp)
        graph[mod] = deps
    return graph


def test_no_import_cycles():
    """No cycle anywhere, inside a layer too (imports inside functions count)."""
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
