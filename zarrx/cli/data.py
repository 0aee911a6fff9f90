"""Moving data: ``convert`` and ``copy``."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from zarrx.cli.common import (add_progress, add_storage, destination_storage_options, one_line,
                              parse_codec, parse_shape, parse_value, progress_of,
                              shards_argument, size_argument, storage_options,
                              workers_argument)
from zarrx.errors import ZarrError
from zarrx.tools.blocks import DEFAULT_MAX_MEMORY
from zarrx.tools.convert import convert
from zarrx.tools.copy import copy
from zarrx.tools.location import interrupted_at, side_options
from zarrx.tools.target import KEEP

__all__ = ["register", "EXIT_ERROR"]

EXIT_ERROR = 3

WHERE = ("a directory (data.zarr, data.zarr/group/array), a path in a zip archive "
         "(archive.zip/group/array) or a URL")


#: the options of ``convert`` by the keyword of :func:`zarrx.convert` they give
CONVERT_FLAGS = {"zarr_format": "--zarr-format", "chunks": "--chunks", "shards": "--shards",
                 "compressors": "--compressor", "filters": "--filter",
                 "fill_value": "--fill-value"}


def _codecs(texts: list[str] | None, keyword: str) -> Any:
    """``--compressor``/``--filter``: KEEP when not given, None for ``none``."""
    if texts is None:
        return KEEP
    if texts == ["none"]:
        return None
    try:
        return [parse_codec(c) for c in texts]
    except ZarrError as exc:                # a usage error (exit status 2)
        exc.arguments = (keyword,)
        raise


def run_convert(args: argparse.Namespace) -> int:
    compressors = _codecs(args.compressor, "compressors")
    filters = _codecs(args.filter, "filters")
    dst_opts = destination_storage_options(args)
    if dst_opts is None:
        dst_opts = side_options(args.destination, args.source, storage_options(args) or None)
    before = interrupted_at(args.destination, dst_opts)
    try:
        report = _convert(args, compressors, filters)
    except ZarrError as exc:
        if exc.arguments or not interrupted_at(args.destination, dst_opts) or \
                (before and not (args.overwrite or args.resume)):
            raise                       # the destination is as it was
        print(f"zarrx: {one_line(exc)}; the destination {args.destination} is left "
              f"incomplete (it does not open until finished): run the conversion again with "
              f"--resume to finish it", file=sys.stderr)
        return EXIT_ERROR
    if not args.quiet or not report.ok:
        print(report)
    return 0 if report.ok else 1


def _convert(args: argparse.Namespace, compressors: Any, filters: Any) -> Any:
    return convert(
        args.source, args.destination,
        zarr_format=KEEP if args.zarr_format is None else args.zarr_format,
        chunks=args.chunks,
        shards=args.shards, compressors=compressors, filters=filters,
        fill_value=KEEP if args.fill_value is None else parse_value(args.fill_value),
        max_memory=args.max_memory, workers=args.workers, resume=args.resume,
        verify=args.verify, overwrite=args.overwrite,
        storage_options=storage_options(args) or None,
        destination_storage_options=destination_storage_options(args),
        progress=progress_of(args))


def run_copy(args: argparse.Namespace) -> int:
    report = copy(args.source, args.destination, overwrite=args.overwrite,
                  workers=args.workers, storage_options=storage_options(args) or None,
                  destination_storage_options=destination_storage_options(args),
                  progress=progress_of(args))
    if not args.quiet:
        print(report)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "convert", help="copy into another form: v2 <-> v3, rechunk, reshard, recompress",
        description="Convert an array or a hierarchy into a new one: another Zarr format, "
                    "chunk or shard shape, codecs or fill value (everything not given is kept). "
                    "The data streams block by block in bounded memory, several blocks at a "
                    "time. Exit status 1 when --verify finds a difference.")
    p.add_argument("source", help=WHERE)
    p.add_argument("destination", help=WHERE)
    p.add_argument("--zarr-format", type=int, choices=(2, 3), default=None,
                   help="the destination's Zarr format (default: the source's)")
    p.add_argument("--chunks", default=KEEP, metavar="64,64", type=parse_shape,
                   help="chunk shape (the inner chunks when sharded); in a hierarchy, of "
                        "the arrays with as many dimensions")
    p.add_argument("--shards", default=KEEP, metavar="256,256|none", type=shards_argument,
                   help="shard shape (in a hierarchy, of the arrays with as many "
                        "dimensions), or 'none' for no sharding")
    p.add_argument("--compressor", action="append", default=None, metavar="CODEC",
                   help="compressor, e.g. zstd:level=5, blosc:cname=lz4,shuffle=bitshuffle, "
                        "gzip, 'none' (repeatable, in order)")
    p.add_argument("--filter", action="append", default=None, metavar="CODEC",
                   help="filter (an array->array codec such as delta:dtype=<i4), or 'none' "
                        "(repeatable, in order)")
    p.add_argument("--fill-value", default=None, metavar="VALUE",
                   help="new fill value (JSON: 0, -1.5, NaN, \"text\")")
    p.add_argument("--max-memory", default=DEFAULT_MAX_MEMORY, metavar="SIZE",
                   type=size_argument,
                   help="bound on the memory the copy holds, e.g. 512M, 4GiB (default: 1GiB)")
    p.add_argument("--workers", type=workers_argument, default=None, metavar="N",
                   help="blocks converted at a time (default: up to 4)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted conversion: keep the stored objects already "
                        "in the destination")
    p.add_argument("--verify", action="store_true",
                   help="afterwards, read every block back from both sides and compare")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing destination (in a zip archive, which is written "
                        "anew, only when it holds nothing else)")
    p.add_argument("-q", "--quiet", action="store_true", help="print no report")
    add_progress(p)
    add_storage(p, destination=True)
    p.set_defaults(run=run_convert, flags=CONVERT_FLAGS)

    p = sub.add_parser(
        "copy", help="copy a node and everything below it, byte for byte",
        description="Copy an array or a hierarchy from one store to another as stored: every "
                    "chunk, shard, metadata document and attribute, unchanged.")
    p.add_argument("source", help=WHERE)
    p.add_argument("destination", help=WHERE)
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing destination (in a zip archive, which is written "
                        "anew, only when it holds nothing else)")
    p.add_argument("--workers", type=workers_argument, default=None, metavar="N",
                   help="batches of objects copied at a time (default: up to 4)")
    p.add_argument("-q", "--quiet", action="store_true", help="print no report")
    add_progress(p)
    add_storage(p, destination=True)
    p.set_defaults(run=run_copy)
