"""Looking at data: ``info``, ``tree``, ``ls``, ``attrs``, ``cat``, ``chunk``."""
from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any


from zarrx.array import Array
from zarrx.errors import IndexingError, StoreError, ZarrError
from zarrx.info import array_info, array_line, tree
from zarrx.metadata._util import printable, short
from zarrx.store import LocalStore, ZipStore
from zarrx.store.localfs import temp_name
from zarrx.cli.common import add_json, add_storage, locate, print_json
from zarrx.tools.location import open_node
from zarrx.tools.text import npy_pieces, text_pieces
from zarrx.tools.summary import (chunk_report, format_chunk_report, group_summary, members,
                                 node_info, objects, parse_selection, to_jsonable)

__all__ = ["register"]

PATH_HELP = ("a directory (data.zarr, data.zarr/group/array), a path in a zip archive "
             "(archive.zip/group/array) or a URL")


def _node(args: argparse.Namespace) -> Any:
    return open_node(locate(args.path, args))


def info(args: argparse.Namespace) -> int:
    node = _node(args)
    if args.json:
        print_json(node_info(node))
    else:
        print(array_info(node) if isinstance(node, Array) else group_summary(node))
    return 0


def show_tree(args: argparse.Namespace) -> int:
    node = _node(args)
    if isinstance(node, Array):
        print(array_line(node, attrs=args.attrs))
    else:
        print(tree(node, max_depth=args.depth, attrs=args.attrs))
    return 0


def ls(args: argparse.Namespace) -> int:
    node = _node(args)
    rows = objects(node) if isinstance(node, Array) else members(node)
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        if "key" in row:
            print(f"{row['key']}\t{row['size']}")
        elif row["node_type"] == "array":
            print(f"{printable(row['name'])}\t{tuple(row['shape'])}\t{row['dtype']}")
        else:
            print(f"{printable(row['name'])}/")
    return 0


def attrs(args: argparse.Namespace) -> int:
    node = _node(args)
    values = dict(node.attrs)
    if args.key is None:
        print_json(to_jsonable(values))
        return 0
    if args.key not in values:
        raise ZarrError(f"{node.name}: no attribute {short(args.key)}; it has "
                        f"{', '.join(map(repr, sorted(values))) or 'none'}")
    print_json(to_jsonable(values[args.key]))
    return 0


def cat(args: argparse.Namespace) -> int:
    try:
        selection = parse_selection(args.selection)     # before anything is opened
    except ZarrError as exc:                            # a usage error (exit status 2)
        exc.arguments = ("selection",)
        raise
    node = _node(args)
    if not isinstance(node, Array):
        arrays, groups = sorted(node.array_keys()), sorted(node.group_keys())
        within = ", ".join(arrays) if arrays else \
            f"it holds none directly; its groups: {', '.join(groups)}" if groups else \
            "it holds none"
        raise ZarrError(f"cat: {node.name} is a group; name an array in it ({within})")
    if not args.output and sys.stdout is None:
        raise ZarrError("cat: standard output is closed; write to a file with -o FILE")
    if args.output:
        _refuse_output_in_store(node, args.output)
    try:
        if args.npy:
            _write_npy(node, selection, args.output)
        elif args.output:
            with _output(args.output, "w", encoding="utf-8") as f:
                f.writelines(text_pieces(node, selection))
        else:
            sys.stdout.writelines(text_pieces(node, selection))
    except MemoryError:
        raise ZarrError(f"cat: {node.name}: not enough memory for the values "
                        f"selected") from None
    except IndexingError as exc:                # out of bounds: say of which array
        raise exc.at(array=node.name)
    except (ZarrError, BrokenPipeError):        # (zarrx cat ... | head: not an error)
        raise
    except OSError as exc:                      # a full disk below > out.txt, say
        raise StoreError(f"cat: cannot write to standard output: "
                         f"{exc.strerror or exc}") from None
    return 0


def _refuse_output_in_store(node: Array, output: str) -> None:
    """ZarrError when the file ``output`` lies in the directory of the store ``node`` is read
    from, or is its zip archive: written there, it would replace an object of the hierarchy
    (a metadata document, a chunk, the archive) or add a stray one."""
    store = node.store
    where = store.root if isinstance(store, LocalStore) else \
        store.path if isinstance(store, ZipStore) else None
    if where is None:
        return
    base, out = os.path.realpath(where), os.path.realpath(output)
    if os.path.commonpath([base, out]) == base:
        raise ZarrError(f"cat: the output file {output!r} lies in the Zarr data it reads "
                        f"({store!r}): it would replace or add an object there; write it "
                        f"elsewhere")


@contextlib.contextmanager
def _output(path: str, mode: str, **kw: Any) -> Iterator[Any]:
    """The file ``-o`` names, opened for writing: a temporary file beside it that takes its
    name once every value is written, so a failed or interrupted ``cat`` leaves no partial
    file (a device or pipe, such as /dev/stdout, is written directly). StoreError naming
    the file when it cannot be written."""
    target, tmp = path, None
    if not os.path.exists(path) or os.path.isfile(path):
        target = os.path.realpath(path)         # a link's file: replaced, the link kept
        folder, name = os.path.split(target)
        tmp = os.path.join(folder, temp_name(name))
    try:
        with open(tmp or target, mode if tmp is None else mode.replace("w", "x"), **kw) as f:
            yield f
        if tmp is not None:
            os.replace(tmp, target)
            tmp = None
    except ZarrError:
        raise
    except OSError as exc:
        raise StoreError(f"cat: cannot write the output file {path!r}: "
                         f"{exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _write_npy(node: Array, selection: Any, output: str | None) -> None:
    pieces = npy_pieces(node, selection)
    if output:
        with _output(output, "wb") as f:
            f.writelines(pieces)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.writelines(pieces)
        sys.stdout.buffer.flush()


def _levels(text: str) -> int:
    """``--depth``: a positive number of levels."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of levels, found {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 level, found {n}")
    return n


def chunk(args: argparse.Namespace) -> int:
    node = _node(args)
    if not isinstance(node, Array):
        raise ZarrError(f"chunk: {node.name} is a group, not an array")
    rep = chunk_report(node, args.key)
    if args.json:
        print_json(rep)
    else:
        print(format_chunk_report(rep))
    return 1 if "error" in rep else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="describe an array or a group",
                       description="Describe an array (shape, type, chunks, codecs, sizes) or "
                                   "a group (members, attributes).")
    p.add_argument("path", help=PATH_HELP)
    add_json(p)
    add_storage(p)
    p.set_defaults(run=info)

    p = sub.add_parser("tree", help="the hierarchy below a group",
                       description="The hierarchy below a group, arrays with shape and dtype.")
    p.add_argument("path", help=PATH_HELP)
    p.add_argument("--depth", type=_levels, default=None, metavar="N",
                   help="show N levels below the group, N >= 1 (default: all)")
    p.add_argument("--attrs", action="store_true", help="show each node's attributes")
    add_storage(p)
    p.set_defaults(run=show_tree)

    p = sub.add_parser("ls", help="a group's members, or an array's stored objects",
                       description="A group's members (groups end in /; arrays with shape "
                                   "and dtype), or an array's stored objects (key and size).")
    p.add_argument("path", help=PATH_HELP)
    add_json(p)
    add_storage(p)
    p.set_defaults(run=ls)

    p = sub.add_parser("attrs", help="a node's attributes as JSON",
                       description="A node's attributes as JSON (one attribute with KEY).")
    p.add_argument("path", help=PATH_HELP)
    p.add_argument("key", nargs="?", default=None, help="print only this attribute")
    add_storage(p)
    p.set_defaults(run=attrs)

    p = sub.add_parser("cat", help="values of an array to standard output",
                       description="Values of an array (or of a selection of it) as text: one "
                                   "value per line for 1-d, one row per line for 2-d, numpy's "
                                   "brackets beyond, read and printed a block at a time; or as "
                                   "a .npy file with --npy (strings as fixed-width 'U').")
    p.add_argument("path", help=PATH_HELP)
    p.add_argument("selection", nargs="?", default=None,
                   help="numpy-style basic selection, e.g. '0:10, ::2', '5, ...' or -3: "
                        "(default: everything)")
    p.add_argument("--npy", action="store_true", help="write a .npy file instead of text")
    p.add_argument("-o", "--output", default=None, help="write to this file, not stdout")
    add_storage(p)
    p.set_defaults(run=cat, flags={"selection": "selection"})

    p = sub.add_parser("chunk", help="one stored object: size, codecs, decoded statistics",
                       description="One stored object of an array (a chunk, or a shard when "
                                   "sharded): its size, codec chain, shard index, and "
                                   "statistics of its decoded values. Exit status 1 when it "
                                   "does not decode, 3 when the store cannot read it.")
    p.add_argument("path", help="the array (" + PATH_HELP + ")")
    p.add_argument("key", help="the object's key relative to the array (c/0/1, 0.1), its key "
                               "in the store as ls and check print it (group/array/c/0/1), "
                               "or its grid coordinates (0,1)")
    add_json(p)
    add_storage(p)
    p.set_defaults(run=chunk)
