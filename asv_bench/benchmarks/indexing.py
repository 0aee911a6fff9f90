"""Indexing: small selections, where per-call overhead dominates, and strided/fancy ones."""
from __future__ import annotations

import numpy as np

from . import _common

SELECTIONS = ("element", "10x10", "row", "column", "strided", "oindex", "vindex", "mask")


class Read:
    """Selections out of a 1024×1024 float32 array with 128×128 chunks."""

    params = (list(SELECTIONS), ["raw", "zstd-0"])
    param_names = ["selection", "codec"]

    def setup(self, selection: str, codec: str) -> None:
        values = _common.data(1024)
        _, self.z = _common.array(values, (1024, 1024), (128, 128), codec)
        rng = np.random.default_rng(0)
        rows = np.sort(rng.choice(1024, 64, replace=False))
        mask = np.zeros((1024, 1024), dtype=bool)
        mask[rng.integers(0, 1024, 500), rng.integers(0, 1024, 500)] = True
        self.read = {
            "element": lambda: self.z[517, 301],
            "10x10": lambda: self.z[130:140, 260:270],
            "row": lambda: self.z[517, :],
            "column": lambda: self.z[:, 301],
            "strided": lambda: self.z[::7, 3::5],
            "oindex": lambda: self.z.oindex[rows, 100:400],
            "vindex": lambda: self.z.vindex[rows, rows[::-1]],
            "mask": lambda: self.z[mask],
        }[selection]

    def time_read(self, selection: str, codec: str) -> None:
        self.read()


class Write:
    """Writes into a 1024×1024 float32 array with 128×128 chunks (read-modify-write or not)."""

    params = (["element", "10x10", "aligned chunk", "row"], ["raw", "zstd-0"])
    param_names = ["selection", "codec"]

    def setup(self, selection: str, codec: str) -> None:
        values = _common.data(1024)
        _, self.z = _common.array(values, (1024, 1024), (128, 128), codec)
        self.sel, self.block = {
            "element": ((517, 301), np.float32(1.5)),
            "10x10": ((slice(130, 140), slice(260, 270)), values[:10, :10]),
            "aligned chunk": ((slice(256, 384), slice(512, 640)), values[:128, :128]),
            "row": ((517, slice(None)), values[0]),
        }[selection]

    def time_write(self, selection: str, codec: str) -> None:
        self.z[self.sel] = self.block
