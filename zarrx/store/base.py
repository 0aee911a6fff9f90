"""The synchronous key -> bytes interface all format logic is written against.

A store implements :meth:`Store.get` (with an optional byte range), :meth:`Store.set`,
:meth:`Store.delete` and :meth:`Store.list_prefix`; everything else has a default derived from
those, which stores with real batching (thread pools, range coalescing) override. A missing key
reads as ``None``: absence is data (it means the fill value). Anything else that goes wrong raises
:class:`~zarrx.errors.StoreError`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from zarrx.errors import ReadOnlyError, StoreError

__all__ = ["ByteRange", "Store", "Request"]


@dataclass(frozen=True, slots=True)
class ByteRange:
    """Which bytes of a stored object to read: whole, a slice, or the last ``suffix`` bytes.

    A slice or suffix reaching past the end of the object is clipped, like an HTTP range.
    """

    offset: int = 0
    length: int | None = None
    suffix: int | None = None

    def __post_init__(self) -> None:
        for name in ("offset", "length", "suffix"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise StoreError(f"ByteRange.{name}: expected a non-negative int, found {v!r}")
        if self.suffix is not None and (self.offset != 0 or self.length is not None):
            raise StoreError(f"ByteRange: suffix={self.suffix} excludes offset/length, "
                             f"found offset={self.offset}, length={self.length}")

    @classmethod
    def full(cls) -> ByteRange:
        return _FULL

    @classmethod
    def slice(cls, offset: int, length: int | None = None) -> ByteRange:
        return cls(offset=offset, length=length)

    @classmethod
    def trusted(cls, offset: int, length: int) -> ByteRange:
        """``slice(offset, length)`` for values the caller has already checked (non-negative
        ints): skips validation on hot paths such as locating inner chunks of a shard."""
        r = object.__new__(cls)
        object.__setattr__(r, "offset", offset)
        object.__setattr__(r, "length", length)
        object.__setattr__(r, "suffix", None)
        return r

    @classmethod
    def last(cls, n: int) -> ByteRange:
        return cls(suffix=n)

    @property
    def is_full(self) -> bool:
        return self.suffix is None and self.offset == 0 and self.length is None

    def resolve(self, size: int) -> tuple[int, int]:
        """``(start, stop)`` of this range within an object of ``size`` bytes, clipped."""
        if self.suffix is not None:
            return max(0, size - self.suffix), size
        start = min(self.offset, size)
        stop = size if self.length is None else min(size, start + self.length)
        return start, stop

    def apply(self, data: bytes) -> bytes:
        """The bytes of ``data`` this range selects (no copy for a full range)."""
        if self.is_full:
            return data
        start, stop = self.resolve(len(data))
        return data[start:stop]

    def __repr__(self) -> str:
        if self.suffix is not None:
            return f"ByteRange.last({self.suffix})"
        if self.is_full:
            return "ByteRange.full()"
        return f"ByteRange.slice({self.offset}, {self.length})"


_FULL = ByteRange()

Request = tuple[str, "ByteRange | None"]


class Store:
    """Abstract key -> bytes store. Keys are ``/``-separated strings without a leading ``/``."""

    read_only: bool = False

    # -- the core a store implements -------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        raise NotImplementedError

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        raise NotImplementedError

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is not an error."""
        raise NotImplementedError

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix`` (a plain string prefix), in no particular order."""
        raise NotImplementedError

    # -- derived operations ----------------------------------------------------------------
    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        """Results of ``get(key, range)`` for each request, in request order."""
        return [self.get(key, rng) for key, rng in requests]

    def get_many_buffers(self, requests: Iterable[Request]) -> list[bytes | memoryview | None]:
        """``get_many``, except that a result may be any read-only bytes-like view (a
        ``memoryview`` into a larger stored object, say) instead of a fresh ``bytes``: the
        chunk reader uses it to avoid copying byte ranges. Defaults to ``get_many``."""
        return self.get_many(requests)  # type: ignore[return-value]

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        for key, value in items:
            self.set(key, value)

    def delete_many(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.delete(key)

    def getsize(self, key: str) -> int | None:
        """The size in bytes of the object at ``key``, or None when it is missing. Stores that
        know it without reading the value (a file's size, a zip entry's) override this."""
        value = self.get(key)
        return None if value is None else len(value)

    def exists(self, key: str) -> bool:
        return self.get(key, ByteRange(0, 0)) is not None

    def list(self) -> Iterator[str]:
        return self.list_prefix("")

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """Immediate children of ``prefix``: ``(keys, dirs)``, both sorted, as names relative to
        ``prefix`` (``dirs`` without a trailing ``/``). ``prefix`` is "" or ends with "/"."""
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        keys: set[str] = set()
        dirs: set[str] = set()
        n = len(prefix)
        for key in self.list_prefix(prefix):
            rest = key[n:]
            head, sep, _ = rest.partition("/")
            (dirs if sep else keys).add(head)
        return sorted(keys), sorted(dirs)

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix``."""
        self.delete_many(list(self.list_prefix(prefix)))

    def close(self) -> None:
        pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers for implementations -------------------------------------------------------
    def _check_writable(self, key: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"{self!r}: cannot write {key!r}: the store is read-only")


def check_key(key: object) -> str:
    """The key itself if it is a ``str``, else a StoreError (shape rules are per store)."""
    if not isinstance(key, str):
        raise StoreError(f"store key: expected str, found {type(key).__name__} {key!r}")
    return key


MAX_SEGMENT_BYTES = 255
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot name a file (or zip entry) safely below a root, or None if it can.

    A path-safe key is ``/``-separated names: no leading ``/``, no empty, ``.`` or ``..`` segment,
    no backslash, NUL or other control character, no drive letter, UTF-8 encodable, and no name
    longer than 255 bytes.
    """
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
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "found characters that are not encodable as UTF-8"
    for seg in key.split("/"):
        if not seg:
            return "found an empty segment ('//' or a trailing '/')"
        if seg in (".", ".."):
            return f"found a {seg!r} segment; keys may not step outside their directory"
        if _DRIVE.match(seg):
            return f"found a drive letter in segment {seg!r}"
        if (n := len(seg.encode("utf-8"))) > MAX_SEGMENT_BYTES:
            return f"found a segment of {n} bytes; at most {MAX_SEGMENT_BYTES} bytes are allowed"
    return None


def check_path_key(key: object, store: str) -> str:
    """``key`` if it is path-safe (see :func:`key_problem`), else a StoreError naming it."""
    if not isinstance(key, str):
        raise StoreError(f"{store}: key {key!r}: expected str, found {type(key).__name__}")
    if (problem := key_problem(key)) is not None:
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


def sequence_of(requests: Iterable[Request]) -> Sequence[Request]:
    return requests if isinstance(requests, Sequence) else list(requests)
