"""zarr-python's runtime configuration of an array handle: :class:`ArrayConfig` (``order``,
``write_empty_chunks``), what ``Array.config`` returns and ``Array.with_config`` takes."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrx.errors import ArgumentError, ArgumentTypeError

__all__ = ["ArrayConfig", "merged_config"]

_FIELDS = ("order", "write_empty_chunks")


@dataclasses.dataclass(frozen=True)
class ArrayConfig:
    """How a handle reads and writes, as zarr-python's ``ArrayConfig`` has it: ``order``, the
    memory layout reads return (``"C"`` or ``"F"``), and ``write_empty_chunks``, whether a
    chunk holding only the fill value is stored."""

    order: str
    write_empty_chunks: bool

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "write_empty_chunks": self.write_empty_chunks}


def merged_config(current: ArrayConfig, config: Any, what: str) -> ArrayConfig:
    """``config`` (an :class:`ArrayConfig`, zarr-python's, or a mapping of some of its fields)
    over ``current``: the fields it does not give keep their values, as in zarr-python."""
    if hasattr(config, "to_dict") and not isinstance(config, Mapping):
        config = config.to_dict()                  # an ArrayConfig, ours or zarr-python's
    if not isinstance(config, Mapping):
        raise ArgumentTypeError(f"{what}: expected an ArrayConfig or a mapping with keys "
                                f"{', '.join(_FIELDS)}, found {type(config).__name__}")
    for key in config:
        if key not in _FIELDS:
            raise ArgumentTypeError(f"{what}: unknown key {key!r}; expected "
                                    f"{' or '.join(_FIELDS)}")
    merged = {**current.to_dict(), **config}
    if not isinstance(merged["order"], str) or merged["order"] not in ("C", "F"):
        raise ArgumentError(f"{what}: order: expected 'C' or 'F', found {merged['order']!r}")
    if not isinstance(merged["write_empty_chunks"], (bool, np.bool_)):
        raise ArgumentTypeError(f"{what}: write_empty_chunks: expected True or False, found "
                                f"{merged['write_empty_chunks']!r}")
    return ArrayConfig(order=merged["order"],
                       write_empty_chunks=bool(merged["write_empty_chunks"]))
