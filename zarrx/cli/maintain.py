"""Keeping data sound: ``check`` (and ``--repair``) and ``consolidate``."""
from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from zarrx.cli.common import add_json, add_progress, add_storage, locate, print_json, \
    progress_of, seconds_argument, storage_options, workers_argument
from zarrx.errors import StoreError
from zarrx.store.locallist import SWEEP_AGE
from zarrx.tools.check import check

__all__ = ["register", "EXIT_FOUND", "EXIT_REPAIRED"]

EXIT_FOUND = 1
EXIT_REPAIRED = 4


def run_check(args: argparse.Namespace) -> int:
    for flag, given in (("--fill-corrupt", args.fill_corrupt),
                        ("--remove-strays", args.remove_strays)):
        if given and not args.repair:
            args.parser.error(f"{flag} needs --repair")        # exit status 2
    report = check(args.path, repair=args.repair, fill_corrupt=args.fill_corrupt,
                   remove_strays=args.remove_strays,
                   temp_age=args.temp_age, workers=args.workers,
                   storage_options=storage_options(args) or None,
                   progress=progress_of(args))
    if args.json:
        print_json({"location": report.location, "arrays": report.arrays,
                    "groups": report.groups, "objects": report.objects,
                    "findings": [dataclasses.asdict(f) for f in report.findings],
                    "repairs": report.repairs, "remaining": len(report.remaining),
                    "recent_temporary": report.recent_temporary, "notes": report.notes})
    else:
        print(report)
    if not report.findings:
        return 0
    return EXIT_FOUND if report.remaining else EXIT_REPAIRED


def _refuse_zip_rewrite(store: Any, path: str, shown: str) -> None:
    """Refuse consolidating a hierarchy of a zip archive when that would replace an entry (the
    group's ``zarr.json`` in Zarr v3, an existing ``.zmetadata`` in Zarr v2): zip entries
    cannot be rewritten, and the archive is left as it is."""
    from zarrx.store import ZipStore
    if not isinstance(store, ZipStore):
        return
    prefix = f"{path}/" if path else ""
    if store.exists(f"{prefix}zarr.json"):
        what = (f"the consolidated metadata of a Zarr v3 hierarchy goes into its group's "
                f"document '{prefix}zarr.json'")
    elif store.exists(f"{prefix}.zmetadata"):
        what = f"the archive holds consolidated metadata already ('{prefix}.zmetadata')"
    else:
        return                                  # Zarr v2: .zmetadata is a new entry
    raise StoreError(f"{shown}: cannot consolidate in place: {what}, and the entries of a zip "
                     f"archive cannot be rewritten; consolidate the hierarchy before zipping "
                     f"it, or copy it to a directory (zarrx copy), consolidate it there and "
                     f"zip it again")


def run_consolidate(args: argparse.Namespace) -> int:
    from zarrx.api import consolidate_metadata
    loc = locate(args.path, args, "r+")
    try:
        _refuse_zip_rewrite(loc.store, loc.path, args.path)
        group = consolidate_metadata(loc.store, loc.path)
        n = len(group.metadata.consolidated or {})
    finally:
        loc.store.close()
    print(f"consolidated the metadata of {n} nodes below {args.path}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="decode every chunk; find corrupt, torn and orphaned objects",
        description="Read and decode every stored object below a node (each inner chunk of "
                    "each shard), verifying checksums and shard indexes, and list what is "
                    "wrong: metadata that does not parse, codecs zarrx lacks, corrupt chunks, "
                    "torn shards, objects the store cannot read (unreadable: never repaired), "
                    "orphaned objects, data stored outside an array's shape (which a grow "
                    "would read back) and temporary files left by writers. "
                    "Exit status: 0 nothing found, 1 problems found (and not all repaired), 4 "
                    "problems found and all repaired.")
    p.add_argument("path", help="the array or group to check")
    p.add_argument("--repair", action="store_true",
                   help="remove chunks outside their array's grid, clear data stored outside "
                        "an array's shape, remove old temporary files")
    p.add_argument("--fill-corrupt", action="store_true",
                   help="with --repair, also rewrite corrupt and torn chunks as the fill value "
                        "(their data is lost)")
    p.add_argument("--remove-strays", action="store_true",
                   help="with --repair, also remove the other orphaned objects (files no "
                        "metadata names: they may be data of a node whose metadata is lost)")
    p.add_argument("--temp-age", type=seconds_argument, default=SWEEP_AGE, metavar="SECONDS",
                   help="temporary files younger than this may belong to a running writer "
                        "and are left alone (default: %(default)s)")
    p.add_argument("--workers", type=workers_argument, default=None, metavar="N",
                   help="stored objects read at a time (default: up to 4)")
    add_json(p)
    add_progress(p)
    add_storage(p)
    p.set_defaults(run=run_check, parser=p)

    p = sub.add_parser("consolidate", help="write consolidated metadata for a hierarchy",
                       description="Write consolidated metadata for the hierarchy below a "
                                   "group (v2: .zmetadata; v3: inside the group's zarr.json), "
                                   "so that opening it reads one document.")
    p.add_argument("path", help="the group")
    add_storage(p)
    p.set_defaults(run=run_consolidate)
