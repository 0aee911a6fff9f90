"""Checks stores make of what they are handed: keys (a ``str``; for a store of files or zip
entries, a path-safe name below its root) and values (any bytes-like object, viewed without a
copy where it can be)."""
from __future__ import annotations

import os
import re

from zarrx.errors import StoreError

__all__ = ["absolute_path", "file_url_path", "local_chain", "home_expanded", "check_key",
           "check_prefix", "key_problem",
           "check_path_key", "one_slash_url",
           "MAX_SEGMENT_BYTES", "as_buffer", "as_bytes"]


def check_key(key: object) -> str:
    """The key itself if it is a ``str``, else a StoreError (shape rules are per store)."""
    if not isinstance(key, str):
        raise StoreError(f"store key: expected str, found {type(key).__name__} {key!r}")
    return key


def absolute_path(path: str) -> str:
    """``path`` made absolute as the system resolves it. A ``..`` goes up from the folder the
    path before it names, after following that path's links, as ``open`` and zarr-python go:
    not from its text, as ``os.path.abspath`` goes (``link/../data.zarr`` is the
    ``data.zarr`` beside the folder ``link`` points to, not the one beside ``link``). The
    parts after the last ``..`` are kept as written: a root that is a link stays that link.
    On Windows, where the system itself takes ``..`` from the text, ``os.path.abspath``. A
    relative path while the current directory is gone (removed) is a StoreError, as is a
    path holding a NUL character (no system call takes one)."""
    if "\x00" in path:
        raise StoreError(f"{path!r}: expected a path, found a NUL character in it")
    if not os.path.isabs(path):
        try:
            path = os.path.join(os.getcwd(), path)
        except OSError as exc:
            raise StoreError(f"{path!r}: expected a path the system can resolve: it is relative "
                             f"and the current directory is gone ({exc.strerror or exc}); give "
                             f"an absolute path") from None
    if os.name == "nt" or ".." not in path.split(os.sep):
        return os.path.abspath(path)
    parts = path.split(os.sep)
    last = len(parts) - parts[::-1].index("..")
    head = os.path.realpath(os.sep.join(parts[:last]) or os.sep)
    return os.path.join(head, *(p for p in parts[last:] if p not in ("", ".")))


def file_url_path(text: str) -> str | None:
    """The local path a ``file://`` URL names (the scheme in any case), as fsspec's local
    filesystem, and so zarr-python, reads it: the text after ``file://``, with a leading
    ``~`` taken for the home directory (``file://~/data.zarr``); the text as written
    otherwise (``%20`` stays three characters, ``file://data.zarr`` is relative). None when
    ``text`` is no ``file://`` URL."""
    if text[:7].lower() != "file://":
        return None
    path = text[7:]
    return os.path.expanduser(path) if path.startswith("~") else path


# the schemes of remote stores; written with one slash or none (``s3:/bucket/a``, which is
# also what ``pathlib.Path("s3://bucket/a")`` makes of a URL) they would name a local folder
_ONE_SLASH_URL = re.compile(r"(s3a?|gs|gcs|az|azure|abfss?|adl|https?):(?!//)/?(?=[^/])",
                            re.IGNORECASE)


#: the first link of an fsspec chain (``zip::``, ``simplecache::``, ``tar::``)
_CHAIN_HEAD = re.compile(r"([a-zA-Z][\w+.-]*)::")


def _local_chain_parts(path: str) -> tuple[str, str] | None:
    """The links before the last of an fsspec chain ending at a local path, and that path
    (``("zip", "/data/a.zip")`` for ``zip::/data/a.zip``); None for anything else."""
    m = _CHAIN_HEAD.match(path)
    if m is None or "://" in path:
        return None
    try:
        import fsspec
    except ImportError:
        return None
    if m.group(1).lower() not in fsspec.available_protocols():
        return None
    head, _, last = path.rpartition("::")
    return head, last


def local_chain(path: str) -> str | None:
    """An fsspec chain ending at a local path (``zip::/data/a.zip``, ``tar::data.tar``),
    written as the URL it means (``zip::file:///data/a.zip``, the path made absolute and a
    leading ``~`` taken for the home directory, as fsspec reads it); None for anything else
    (a path or URL whose first ``::`` follows no fsspec protocol stays a path)."""
    if (parts := _local_chain_parts(path)) is None:
        return None
    head, last = parts
    return f"{head}::file://{os.path.abspath(os.path.expanduser(last))}"


def one_slash_url(path: str) -> str | None:
    """Why ``path`` is refused when it starts with a remote store's scheme followed by one
    slash or none (``s3:/bucket/a``), or is an fsspec chain whose last link does
    (``simplecache::s3:/bucket/a``): a URL misspelt (or passed through ``pathlib.Path``)
    that would otherwise create a local folder named ``s3:``. None for any other path. The
    message shows the URL as meant, without credentials."""
    m = _ONE_SLASH_URL.match(path)
    if m is None:
        parts = _local_chain_parts(path)
        if parts is None or (why := one_slash_url(parts[1])) is None:
            return None
        return f"the last link of the fsspec chain '{parts[0]}::...': {why}"
    from zarrx.store.remote.urls import redact
    scheme = m.group(1)
    meant = redact(f"{scheme}://{path[m.end():]}")
    return (f"a path starting with {path[:m.end()]!r} is not a URL (a URL has two slashes "
            f"after '{scheme}:'): write {meant!r}, or give a local folder of that name as an "
            "absolute path")


def home_expanded(obj: object) -> object:
    """``obj`` with a ``str`` or path-like path starting with ``~`` made one in the home
    directory (a path-like is returned as its ``str``), as xarray reads the paths it is given
    (``to_zarr("~/data.zarr")``); anything else as it is. zarrx's own functions take a plain
    path as written, as zarr-python does."""
    if isinstance(obj, os.PathLike):
        obj = os.fspath(obj)
    if isinstance(obj, str) and obj.startswith("~"):
        return os.path.expanduser(obj)
    return obj


def check_prefix(prefix: object, store: object) -> str:
    """The prefix of a listing or prefix delete of ``store`` if it is a ``str`` (any text: one
    that no key starts with lists nothing), else a StoreError naming the store."""
    if not isinstance(prefix, str):
        raise StoreError(f"{store!r}: prefix {prefix!r}: expected str, found "
                         f"{type(prefix).__name__}")
    return prefix


MAX_SEGMENT_BYTES = 255
#: whether a segment such as ``C:`` would name a drive (on POSIX systems, ``x:1`` is a name
#: like any other, and zarr-python writes such children)
DRIVES = os.name == "nt"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: a segment (between two "/") starting with a drive letter, and one of more than 255 // 4
#: characters (what may hold more than 255 bytes of UTF-8)
_DRIVE_SEGMENT = re.compile(r"/[A-Za-z]:")
_LONG_SEGMENT = re.compile(r"/([^/]{%d,})(?=/)" % (MAX_SEGMENT_BYTES // 4 + 1))
#: a key of the characters chunk keys and most node names use, with no empty segment
_PLAIN = re.compile(r"[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*")


def key_problem(key: str, *, files: bool = True) -> str | None:
    """Why ``key`` cannot name a file (or zip entry) safely below a root, or None if it can.

    A path-safe key is ``/``-separated names: no leading ``/``, no empty, ``.`` or ``..`` segment,
    no backslash, NUL or other control character, no drive letter (on Windows), UTF-8
    encodable, and no name longer than 255 bytes. A short key of plain characters (a chunk
    key) is judged by one match, a third of the time of the full checks every store key and
    every listed key of a delete goes through.
    """
    if len(key) <= MAX_SEGMENT_BYTES and _PLAIN.fullmatch(key):
        s = f"/{key}/"
        if "/./" not in s and "/../" not in s:
            return None
    return _problem(key, files)


def _problem(key: str, files: bool) -> str | None:
    """The full checks of :func:`key_problem`, each a scan of the whole key by the string and
    regular expression machinery: a key of ``n`` segments costs O(len(key)), never a step per
    segment (a key 3,000 groups deep is checked at every level of a walk). Of the problems found
    in segments, the first segment's is named."""
    if not key:
        return "expected a non-empty key"
    if "\x00" in key:
        return "found a NUL character"
    if "\\" in key:
        return "found a backslash; '/' is the only separator"
    if m := _CONTROL.search(key):
        return f"found the control character {m.group()!r}"
    if key.startswith("/"):
        return "found a leading '/'; keys are relative to the store root"
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        return "found characters that are not encodable as UTF-8"
    s = f"/{key}/"                      # each segment between two "/": found by one search
    found: list[tuple[int, str]] = []   # (where the segment starts in s, its problem)
    if (at := s.find("//")) >= 0:
        found.append((at, "found an empty segment ('//' or a trailing '/')"))
    for seg in (".", ".."):
        if (at := s.find(f"/{seg}/")) >= 0:
            found.append((at, f"found a {seg!r} segment; keys may not step outside their "
                              f"directory"))
    if files:                       # object names: a ':' or a long name is an ordinary name
        if DRIVES and (m := _DRIVE_SEGMENT.search(s)):
            found.append((m.start(), f"found a drive letter in segment "
                                     f"{s[m.start() + 1:s.index('/', m.start() + 1)]!r}"))
        if size > MAX_SEGMENT_BYTES:    # a segment of more bytes has more than 255 // 4 characters
            for m in _LONG_SEGMENT.finditer(s):
                if (n := len(m.group(1).encode("utf-8"))) > MAX_SEGMENT_BYTES:
                    found.append((m.start(), f"found a segment of {n} bytes; at most "
                                             f"{MAX_SEGMENT_BYTES} bytes are allowed"))
                    break
    return min(found)[1] if found else None


def check_path_key(key: object, store: str, *, files: bool = True) -> str:
    """``key`` if it is path-safe (see :func:`key_problem`; ``files=False``: as an object
    name, where drive letters and names over 255 bytes are ordinary), else a StoreError."""
    if not isinstance(key, str):
        raise StoreError(f"{store}: key {key!r}: expected str, found {type(key).__name__}")
    if (problem := key_problem(key, files=files)) is not None:
        raise StoreError(f"{store}: key {key!r}: {problem}")
    return key


def as_buffer(value: object, key: str) -> memoryview:
    """A flat byte view of a bytes-like ``value`` (no copy when it is contiguous)."""
    try:
        view = memoryview(value)  # type: ignore[arg-type]
    except TypeError as exc:
        raise StoreError(f"store value for {key!r}: expected bytes-like, "
                         f"found {type(value).__name__}") from exc
    if view.ndim == 1 and view.format == "B" and view.contiguous:
        return view
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B")


def as_bytes(value: object, key: str) -> bytes:
    """``bytes`` of a bytes-like value, or a StoreError naming ``key``."""
    if isinstance(value, bytes):
        return value
    return bytes(as_buffer(value, key))
