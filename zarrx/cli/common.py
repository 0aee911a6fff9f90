"""What the commands share: locations and storage options, progress, JSON output, codec and
shape arguments."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from zarrx.errors import ZarrError
from zarrx.tools.location import Location, parse_storage_options, resolve
from zarrx.tools.progress import BarProgress, Progress

__all__ = ["one_line", "add_storage", "add_progress", "add_json", "locate", "storage_options",
           "destination_storage_options", "progress_of", "print_json", "parse_shape",
           "shards_argument", "size_argument", "parse_codec", "parse_value", "workers_argument",
           "seconds_argument"]


def one_line(exc: BaseException) -> str:
    """An error's message on one line, as ``zarrx: <message>`` prints it."""
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _storage_item(text: str) -> str:
    """``-S``: ``key=value`` (the value is read later, as JSON when it parses)."""
    key, sep, _ = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, found {text!r}")
    return text


def add_storage(p: argparse.ArgumentParser, destination: bool = False) -> None:
    p.add_argument("-S", "--storage-option", action="append", metavar="KEY=VALUE",
                   type=_storage_item,
                   help="an option of the remote store a URL opens (repeatable; values are "
                        "read as JSON when they parse: true, 3)")
    if destination:
        p.add_argument("--dst-storage-option", action="append", metavar="KEY=VALUE",
                       type=_storage_item,
                       help="an option for the destination URL only (default: those of -S)")


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="draw a progress bar on standard error (default: when it is a "
                        "terminal)")
    p.add_argument("--no-progress", dest="progress", action="store_false")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def storage_options(args: argparse.Namespace) -> dict[str, Any]:
    return parse_storage_options(getattr(args, "storage_option", None))


def destination_storage_options(args: argparse.Namespace) -> dict[str, Any] | None:
    items = getattr(args, "dst_storage_option", None)
    return None if items is None else parse_storage_options(items)


def locate(text: str, args: argparse.Namespace, mode: str = "r") -> Location:
    return resolve(text, mode, storage_options(args) or None)


def progress_of(args: argparse.Namespace) -> Progress | None:
    want = getattr(args, "progress", None)
    if want is None:
        want = sys.stderr.isatty()
    return BarProgress() if want else None


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses (``3``, ``NaN``, ``true``), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_shape(text: str) -> tuple[int, ...]:
    """``--chunks``: positive integers separated by commas (a usage error otherwise)."""
    try:
        out = tuple(int(v) for v in text.replace("x", ",").split(","))
    except ValueError:
        out = ()
    if not out or any(v <= 0 or v >= 2**63 for v in out):
        raise argparse.ArgumentTypeError(f"expected positive integers below 2**63 separated "
                                         f"by commas (64,64), found {text!r}")
    return out


#: the most ``--workers`` (each holds up to a block or a batch of objects at a time)
MAX_WORKERS = 1024


def _number(text: str, kind: type, ok: Any, expected: str) -> Any:
    """``text`` as a ``kind`` that passes ``ok`` (an argparse usage error otherwise)."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, found {text!r}")
    return value


def workers_argument(text: str) -> int:
    """``--workers``: a number from 1 to :data:`MAX_WORKERS` (a usage error otherwise)."""
    return _number(text, int, lambda n: 1 <= n <= MAX_WORKERS,
                   f"a number of workers from 1 to {MAX_WORKERS}")


def seconds_argument(text: str) -> float:
    """``--temp-age``: a number of seconds, zero or more (a usage error otherwise)."""
    return _number(text, float, lambda v: 0 <= v < float("inf"),
                   "a number of seconds, 0 or more")


def shards_argument(text: str) -> tuple[int, ...] | None:
    """``--shards``: a shape, or ``none`` (None: no sharding)."""
    return None if text.lower() == "none" else parse_shape(text)


def size_argument(text: str) -> int:
    """``--max-memory``: a size in bytes, ``512M``, ``4GiB``."""
    from zarrx.tools.blocks import parse_size
    try:
        return parse_size(text)
    except ZarrError:
        raise argparse.ArgumentTypeError(f"expected a positive size with an optional unit "
                                         f"(512M, 4GiB, 1000000000), found {text!r}") from None


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets, braces and quotes, so that a value may
    be a JSON list or object (``transpose:order=[1,0]``)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_codec(text: str) -> dict[str, Any]:
    """``zstd``, ``zstd:level=5``, ``blosc:cname=lz4,shuffle=bitshuffle``,
    ``transpose:order=[1,0]`` or a JSON object
    (``{"name": "zstd", "configuration": {"level": 5}}`` or ``{"id": "zstd", "level": 5}``)."""
    from zarrx.metadata.codec_table import codec_info
    text = text.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError as exc:
            raise ZarrError(f"codec {text!r}: not valid JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise ZarrError(f"codec {text!r}: expected a JSON object")
        return obj
    name, _, rest = text.partition(":")
    conf: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in _top_level_split(rest))):
        key, sep, value = item.partition("=")
        if not sep:
            raise ZarrError(f"codec {text!r}: expected name:key=value,key=value, found "
                            f"{item!r}")
        if key.strip() in conf:
            raise ZarrError(f"codec {text!r}: {key.strip()!r} is given twice")
        conf[key.strip()] = parse_value(value.strip())
    name = name.strip()
    if codec_info(name) is None and codec_info(f"numcodecs.{name}") is not None:
        name = f"numcodecs.{name}"
    return {"name": name, "configuration": conf}
