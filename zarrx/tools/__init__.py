"""The toolbox behind the ``zarrx`` command, as functions that return reports.

- :func:`convert` — a copy in another form (Zarr v2 <-> v3, chunks, shards, codecs, fill
  value), streamed block by block in bounded memory; resumable and verifiable;
- :func:`copy` — a node and everything below it, byte for byte, from one store to another;
- :func:`check` — every stored object decoded and checked; corrupt, torn and orphaned objects
  and temporary files found, and optionally repaired.

Each takes locations as the command does: a directory (``data.zarr/group/array``), a path
inside a zip archive (``archive.zip/group/array``), a URL with ``storage_options``, or a store.
"""
from zarrx.tools.check import CheckReport, Finding, check
from zarrx.tools.convert import ArrayConversion, ConvertReport, convert
from zarrx.tools.copy import CopyReport, copy
from zarrx.tools.target import KEEP

__all__ = ["convert", "copy", "check", "ConvertReport", "ArrayConversion", "CopyReport",
           "CheckReport", "Finding", "KEEP"]
