"""``zarrx demo``: write an example hierarchy, read it back and verify it."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from zarrx.errors import ZarrError

__all__ = ["demo", "register"]


def demo(root: str | None = None, out=sys.stdout) -> int:
    """Write an example hierarchy (Zarr v3) and a Zarr v2 one, read slices back, verify them,
    print the trees and info. A hierarchy holds one Zarr format, so the v2 array has its own.
    ``root``: the directory to keep them in (default: a temporary one), which may not be in a
    Zarr hierarchy or an array."""
    import zarrx
    from zarrx.codecs import Zstd

    def say(*a: object) -> None:
        print(*a, file=out)

    tmp = None
    if root is None:
        tmp = tempfile.TemporaryDirectory(prefix="zarrx-demo-")
        root = tmp.name
    else:
        _refuse_inside_a_node(root)
    path = Path(root) / "example.zarr"
    legacy_path = Path(root) / "legacy_v2.zarr"
    for there in (path, legacy_path):
        if os.path.lexists(there):
            raise ZarrError(f"demo: {str(there)!r} exists; it is left alone: name another "
                            f"--dir, or remove it")
    say(f"writing an example hierarchy to {path} and a Zarr v2 one to {legacy_path}")
    g = zarrx.open_group(str(path), mode="w", attributes={"title": "zarrx demo"})
    rng = np.random.default_rng(42)
    z, y, x = np.meshgrid(np.linspace(0, 1, 64), np.linspace(0, 3, 128), np.linspace(0, 3, 128),
                          indexing="ij")
    volume = (np.sin(x * 3) * np.cos(y * 2) + z + rng.normal(0, 0.01, x.shape)).astype("f4")
    vol = g.create_array("volume", shape=volume.shape, dtype="f4", chunks=(16, 64, 64),
                         compressors=Zstd(level=3), fill_value=0,
                         dimension_names=("z", "y", "x"), attributes={"units": "K"})
    vol[...] = volume
    sharded = g.create_array("sharded", shape=(512, 512), dtype="u2", chunks=(64, 64),
                             shards=(256, 256), compressors=Zstd(level=0))
    counts = (rng.integers(0, 1000, (512, 512))).astype("u2")
    sharded[...] = counts
    g.attrs["history"] = "written by zarrx demo"
    lg = zarrx.open_group(str(legacy_path), mode="w", zarr_format=2)
    legacy = lg.create_array("legacy", shape=(100, 100), dtype="<i4", chunks=(30, 30),
                             fill_value=-1)
    legacy[10:90, 10:90] = np.arange(6400, dtype="<i4").reshape(80, 80)

    reopened = zarrx.open(str(path), mode="r")
    legacy_reopened = zarrx.open(str(legacy_path), mode="r")
    checks = [
        ("volume[5, 10:50, ::3]", reopened["volume"][5, 10:50, ::3], volume[5, 10:50, ::3]),
        ("volume[-1, -1, -1]", reopened["volume"][-1, -1, -1], volume[-1, -1, -1]),
        ("volume.oindex[[1, 9], :, [0, 5]]", reopened["volume"].oindex[[1, 9], :, [0, 5]],
         volume[np.ix_([1, 9], range(128), [0, 5])]),
        ("sharded[100:300, 250:260]", reopened["sharded"][100:300, 250:260], counts[100:300, 250:260]),
        ("legacy[0:20, 0:20] (v2)", legacy_reopened["legacy"][0:20, 0:20],
         np.pad(np.arange(6400, dtype="<i4").reshape(80, 80), 10, constant_values=-1)[0:20, 0:20]),
    ]
    ok = True
    for label, got, want in checks:
        same = np.array_equal(got, want)
        ok &= same
        say(f"  {'ok ' if same else 'BAD'} {label}")
    say("")
    say(reopened.tree())
    say(legacy_reopened.tree())
    say("")
    say(reopened["volume"].info)
    say("")
    if tmp is not None:
        tmp.cleanup()
        say("the example was written to a temporary directory, now removed; keep it with "
            "zarrx demo --dir DIR")
    else:
        say(f"the example is kept in {root}: try zarrx tree {path} or zarrx info {path}/volume")
    say("demo: all reads verified" if ok else "demo: VERIFICATION FAILED")
    return 0 if ok else 1


def _refuse_inside_a_node(root: str | os.PathLike) -> None:
    """Refuse a ``root`` in a Zarr hierarchy or an array: the examples would become nodes of
    it (and a hierarchy holds one Zarr format), or lie inside an array, which has no
    children. The error names the argument (``zarrx demo``: ``--dir``, exit status 2)."""
    from zarrx.errors import ContainsArrayError, ContainsGroupError
    from zarrx.tools.location import node_holding
    found = node_holding(os.fspath(root))
    if found is None:
        above = os.fspath(root)                 # the nearest existing directory up from root
        while above and not os.path.lexists(above) and os.path.dirname(above) != above:
            above = os.path.dirname(above)
        if above and os.path.lexists(above) and not os.path.isdir(above):
            exc0 = ZarrError(f"{os.fspath(root)!r}: {above!r} is a file, not a directory; name a "
                             f"directory (it is made when it does not exist)")
            exc0.arguments = ("root",)
            raise exc0
        return
    kind, at = found
    if kind == "array":
        exc: ZarrError = ContainsArrayError(
            f"{os.fspath(root)!r} is in the array at {at!r} (an array has no children); "
            f"name a directory outside it")
    else:
        exc = ContainsGroupError(
            f"{os.fspath(root)!r} is in the Zarr hierarchy at {at!r}: the examples "
            f"(a Zarr v3 hierarchy and a v2 one) would be written into it as its nodes; name "
            f"a directory outside it")
    exc.arguments = ("root",)
    raise exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="write, read back and verify an example hierarchy",
                       description="Write an example Zarr v3 hierarchy (sharded and compressed "
                                   "arrays) and a Zarr v2 one, read slices back and verify "
                                   "them. Exit status 1 when a read differs.")
    p.add_argument("--dir", default=None,
                   help="where to write example.zarr and legacy_v2.zarr (neither may exist), "
                        "kept afterwards (default: a temporary directory, removed at the end)")
    p.set_defaults(run=lambda args: demo(args.dir), flags={"root": "--dir"})
