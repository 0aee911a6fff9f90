"""zarr-python's ``GroupMetadata.consolidated_metadata``: the consolidated entries of a group,
as ``ConsolidatedMetadata`` shows them (``metadata``: the group's children by name;
``flattened_metadata``: every node below it by relative path; ``kind``; ``must_understand``).

The entries are zarrx's node metadata (:class:`~zarrx.metadata.model.ArrayMeta`,
:class:`~zarrx.metadata.model.GroupMeta`), parsed when these mappings are made: a malformed
entry raises its ``MetadataError`` then, as it does when its node is used.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ConsolidatedMetadata"]


class ConsolidatedMetadata:
    """The consolidated entries below one group (read only)."""

    kind = "inline"
    must_understand = False

    def __init__(self, entries: Mapping[str, Any]) -> None:
        self._entries = entries

    @property
    def metadata(self) -> dict[str, Any]:
        """The group's children: name -> metadata (a child group's entries are its own
        ``consolidated_metadata``, when it has them)."""
        return {p: self._entries[p] for p in sorted(self._entries) if "/" not in p}

    @property
    def flattened_metadata(self) -> dict[str, Any]:
        """Every node below the group: relative path -> metadata."""
        return {p: self._entries[p] for p in sorted(self._entries)}

    def to_dict(self) -> dict[str, Any]:
        """The ``consolidated_metadata`` object of a Zarr v3 group's ``zarr.json``."""
        return {"kind": self.kind, "must_understand": self.must_understand,
                "metadata": {p: m.to_dict() for p, m in self.flattened_metadata.items()}}

    def __repr__(self) -> str:
        return (f"ConsolidatedMetadata(<{len(self._entries)} entries>, kind={self.kind!r}, "
                f"must_understand={self.must_understand})")
