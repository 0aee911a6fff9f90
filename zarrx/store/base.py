"""The synchronous key -> bytes interface all format logic is written against.

A store implements :meth:`Store.get` (with an optional byte range), :meth:`Store.set`,
:meth:`Store.delete` and :meth:`Store.list_prefix`; everything else has a default derived from
those, which stores with real batching (thread pools, range coalescing) override. A missing key
reads as ``None``: absence is data (it means the fill value). Anything else that goes wrong raises
:class:`~zarrx.errors.StoreError`.

**Generations** (the consistency contract). Every stored object has a *generation*: an opaque,
hashable token that changes whenever the object is written and stays the same while it is only
read (``None`` means "no object"). :meth:`Store.get_versioned` says which generation a read came
from and can insist on one; :meth:`Store.snapshot` reads several ranges of one version;
:meth:`Store.set_if` and :meth:`Store.delete_if` write only when the object is still at the
expected generation (:data:`ABSENT`: only when it does not exist), raising
:class:`~zarrx.errors.ConflictError` otherwise. Snapshot reads and lost-update-free
read-modify-write are built on these operations alone. The defaults here are correct for any
store but slow (a generation is a digest of the whole object, and there are no conditional
writes); stores override them with stat calls, counters or object versions.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from zarrx.errors import ConflictError, ReadOnlyError, StoreError

__all__ = ["ByteRange", "Store", "Request", "ABSENT", "ObjectSnapshot", "HeldSnapshot",
           "Versioned"]


class _Absent:
    """The type of :data:`ABSENT` (one instance; it pickles as itself)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


#: ``if_generation`` of a conditional write meaning "the object must not exist"
ABSENT = _Absent()


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
#: what :meth:`Store.get_versioned` returns for an existing object: ``(value, generation)``
Versioned = tuple["bytes | bytearray | memoryview", Hashable]


class ObjectSnapshot:
    """A consistent view of one stored object for several ranged reads (a context manager).

    ``generation`` is the version every read comes from (``None`` until the first read for
    stores that learn it lazily); ``size`` is the object's size when known without another
    request. :meth:`read` returns the bytes of each range (clipped as by ``Store.get``), all from
    that one version, or raises :class:`~zarrx.errors.ConflictError` when the object has changed
    since (stores whose snapshots pin the version, like a file held open, never raise it).
    """

    key: str = ""
    generation: Hashable | None = None
    size: int | None = None
    #: whether reading the whole object costs no more requests than reading one range of it
    #: (a file held open: one ``pread``); a reader that wants most of the object then reads it
    #: in one go rather than its parts one after the other
    whole_reads: bool = False

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self) -> ObjectSnapshot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HeldSnapshot(ObjectSnapshot):
    """A snapshot holding the bytes of one version of the object (immutable: never written
    after they are handed over), so it never conflicts."""

    def __init__(self, key: str, value: bytes | bytearray | memoryview, generation: Hashable | None) -> None:
        self.key = key
        self.generation = generation
        self.size = len(value)
        self._view = memoryview(value)
        self._value: bytes | memoryview | None = value if type(value) is bytes else self._view

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        """Ranges are zero-copy views of the immutable value."""
        value = self._value
        if value is None:
            raise StoreError(f"snapshot of {self.key!r}: read after close")
        view, size, out = self._view, len(value), []
        for r in ranges:
            if r is None or r.is_full:
                out.append(value)
            else:
                start, stop = r.resolve(size)
                out.append(view[start:stop])
        return out

    def close(self) -> None:
        self._value = None


class VersionedSnapshot(ObjectSnapshot):
    """The generic snapshot: every read is a ``get_versioned`` conditioned on the generation the
    snapshot was opened at (or, when opened without one, on the generation of its first read)."""

    def __init__(self, store: Store, key: str, generation: Hashable | None = None,
                 size: int | None = None) -> None:
        self.store = store
        self.key = key
        self.generation = generation
        self.size = size

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        out: list[bytes | bytearray | memoryview] = []
        for rng in ranges:
            got = self.store.get_versioned(self.key, rng, if_generation=self.generation)
            if got is None:                 # opened lazily, and the object is gone
                raise conflict(self.store, self.key, "read a snapshot of", "an object", None)
            value, self.generation = got
            if rng is None or rng.is_full:
                self.size = len(value)
            out.append(value)
        return out

    def __repr__(self) -> str:
        return f"<snapshot of {self.key!r} in {self.store!r} at {self.generation!r}>"


class Store:
    """Abstract key -> bytes store. Keys are ``/``-separated strings without a leading ``/``."""

    read_only: bool = False
    #: True when ``set_if``/``delete_if`` are implemented (atomically, for every caller of the
    #: same store in any thread or process)
    supports_conditional_writes: bool = False
    #: False when the store cannot remove an object it holds (a zip archive): operations that
    #: must delete what they copied (moving a node) are then refused before writing anything
    supports_deletes: bool = True
    #: True when ``set``/``set_if`` copy the value out (into a file, say) before they return
    #: and keep no reference to it: a writer may then reuse the value's buffer afterwards
    copies_values: bool = False
    #: True when ``set``/``set_if`` keep a :class:`~zarrx.store._values.Value` as it is given
    #: (sealed, not copied): a writer may assemble a large value in ``Value.empty(n)``
    keeps_values: bool = False
    #: True when ``set``/``set_if`` also take a :class:`~zarrx.store.pieces.Pieces` (a value
    #: given as consecutive buffers) and write it without joining it into one buffer first
    writes_pieces: bool = False
    #: False when a request costs work on this machine rather than a wait (a file, memory):
    #: callers then issue small requests one after another instead of spreading them over
    #: threads or asking for several keys in case one is there
    latency_bound: bool = True
    #: False when writing a small object is work under the GIL (a dict, an archive): a write
    #: then stores small objects one after another instead of spreading them over threads
    parallel_writes: bool = True
    #: What stores naming the same objects as this one have in common (two handles over one
    #: backend object, say), for the in-process locks of :mod:`zarrx.store.locks`; None: the
    #: store's ``root`` or ``inner`` store, else the instance itself
    shared_identity: Hashable | None = None

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
        chunk reader uses it to avoid copying byte ranges. Defaults to ``get_many``.

        A store whose :meth:`new_arena` makes arenas also takes ``arena=`` here: the results
        are then views into that arena, valid until its next use."""
        return self.get_many(requests)  # type: ignore[return-value]

    def get_many_sized(self, requests: Iterable[Request], arena: object | None = None,
                       ) -> tuple[list[bytes | memoryview | None], list[int | None]]:
        """``get_many_buffers`` (with ``arena`` when given), and the whole size of each object
        read where the read itself tells it (None elsewhere: the default, which knows none).
        A caller reading parts of objects checks their sizes with it, asking ``getsize`` for
        those it does not give."""
        reqs = sequence_of(requests)
        got = self.get_many_buffers(reqs) if arena is None else \
            self.get_many_buffers(reqs, arena=arena)  # type: ignore[call-arg]
        return got, [None] * len(reqs)

    def new_arena(self) -> object | None:
        """A buffer one thread reuses across its ``get_many_buffers(..., arena=)`` calls, so
        that reading many objects does not allocate (and page-fault) fresh memory for each;
        None (the default) when the store has no use for one."""
        return None

    def box_reader(self, head: str, sep: str) -> Callable[..., list[int]] | None:
        """Optionally, a reader of raw chunks stored one per object under keys ``head`` +
        coordinates joined by ``sep``, straight into an output array (see
        :meth:`zarrx.store.local.LocalStore.box_reader`); None (the default) when the store
        has none, or not for these keys."""
        return None

    def box_writer(self, head: str, sep: str) -> Any | None:
        """Optionally, a writer of raw chunks stored one per object under keys ``head`` +
        coordinates joined by ``sep``, straight from a value array (see
        :class:`zarrx.store.local.BoxWriter`); None (the default) when the store has none, or
        not for these keys."""
        return None

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

    def getsize_many(self, keys: Iterable[str]) -> list[int | None]:
        """``getsize`` of each key, in order; a remote store asks for all of them at once."""
        return [self.getsize(k) for k in keys]

    def exists(self, key: str) -> bool:
        return self.get(key, ByteRange(0, 0)) is not None

    def address(self, key: str) -> str | None:
        """Where ``key`` lives, to show in messages (a URL without credentials), or None when
        the store's ``repr`` and the key say it all."""
        return None

    def content_type(self, key: str) -> str | None:
        """The media type the store records for the object at ``key`` (a web server's
        ``Content-Type``), or None when it records none or cannot say; asked only to explain
        a document that is not what was expected, so it may cost a request."""
        return None

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

    # -- generations and conditional writes (see the module docstring) ---------------------
    def generation(self, key: str) -> Hashable | None:
        """The generation of the object at ``key``, or None when it is missing. Stores answer
        this cheaply (a stat, a HEAD request); the default reads and digests the object."""
        got = self.get_versioned(key)
        return None if got is None else got[1]

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        """``(value, generation)``: the bytes of ``byte_range`` (clipped as by :meth:`get`) and
        the generation of the object they were read from; None when the object is missing.
        With ``if_generation`` (not None), raise ConflictError when the object is missing or at
        another generation (:data:`ABSENT`: when it exists).

        The default reads the whole object and uses a digest of its bytes as the generation."""
        value = self.get(key)
        if value is None:
            check_generation(self, key, if_generation, None, "read")
            return None
        gen = ("blake2b", hashlib.blake2b(value, digest_size=16).digest())
        check_generation(self, key, if_generation, gen, "read")
        return (value if byte_range is None else byte_range.apply(value)), gen

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        """A consistent view of the object at ``key`` for several ranged reads (close it, or
        use ``with``), or None when it is missing. The default asks :meth:`generation` (a stat
        or HEAD where a store implements it) and conditions every read on that generation;
        ``VersionedSnapshot(store, key)`` without a generation is the lazy form, for stores
        that would rather learn it from the first read. A store whose generations are digests
        of the whole object (the default :meth:`get_versioned`) reads it once and serves every
        range from those bytes."""
        if type(self).get_versioned is Store.get_versioned:
            got = self.get_versioned(key)
            return None if got is None else HeldSnapshot(key, got[0], got[1])
        gen = self.generation(key)
        return None if gen is None else VersionedSnapshot(self, key, gen)

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        """Write ``value`` only if the object is at generation ``if_generation`` (:data:`ABSENT`
        or None: only if it does not exist), atomically with respect to every other
        ``set_if``/``delete_if`` on this store; return the new generation. ConflictError names
        the key, the expected and the found state. Plain ``set`` calls are not ordered with
        conditional writes (last writer wins)."""
        if self.supports_conditional_writes:
            raise NotImplementedError(f"{type(self).__name__}.set_if")
        raise StoreError(f"{self!r} does not support conditional writes (cannot write {key!r})")

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        """Delete the object only if it is at generation ``if_generation``; ConflictError
        otherwise. A missing key is a conflict unless ``if_generation`` is :data:`ABSENT`/None,
        for which a missing key is a no-op (and an existing one a conflict)."""
        if self.supports_conditional_writes:
            raise NotImplementedError(f"{type(self).__name__}.delete_if")
        raise StoreError(f"{self!r} does not support conditional writes (cannot delete {key!r})")

    def with_read_only(self, read_only: bool = False) -> Store:
        """A store over the same objects, read-only or not (zarr-python's method); stores that
        cannot make one (their kind fixes it when they are opened) raise
        :class:`~zarrx.errors.StoreError`."""
        raise StoreError(f"{self!r}: with_read_only is not supported by {type(self).__name__}; "
                         f"open the store again with the read_only (or mode) wanted")

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


def is_absent(generation: object) -> bool:
    """True for the ``if_generation`` values that mean "no object": :data:`ABSENT` and None."""
    return generation is None or generation is ABSENT


def _state(generation: object) -> str:
    return "no object" if is_absent(generation) else f"generation {generation!r}"


def conflict(store: object, key: str, action: str, expected: object,
             found: Hashable | None) -> ConflictError:
    """``ConflictError("<store>: cannot <action> 'key': expected <state>, found <state>")``;
    ``expected`` is a generation, ABSENT, or a description such as ``"an object"``."""
    want = expected if isinstance(expected, str) else _state(expected)
    return ConflictError(f"{store!r}: cannot {action} {key!r}: expected {want}, "
                         f"found {_state(found)}")


def check_generation(store: object, key: str, expected: Hashable | None, found: Hashable | None,
                     action: str) -> None:
    """Raise :func:`conflict` unless ``found`` satisfies ``expected`` (None: anything)."""
    if expected is None:
        return
    if expected is ABSENT:
        if found is not None:
            raise conflict(store, key, action, ABSENT, found)
    elif found is None or found != expected:
        raise conflict(store, key, action, expected, found)


def check_key(key: object) -> str:
    """The key itself if it is a ``str``, else a StoreError (shape rules are per store)."""
    if not isinstance(key, str):
        raise StoreError(f"store key: expected str, found {type(key).__name__} {key!r}")
    return key


MAX_SEGMENT_BYTES = 255
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def key_problem(key: str, *, files: bool = True) -> str | None:
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
        if not files:
            continue                # object names: a ':' or a long name is an ordinary name
        if _DRIVE.match(seg):
            return f"found a drive letter in segment {seg!r}"
        if (n := len(seg.encode("utf-8"))) > MAX_SEGMENT_BYTES:
            return f"found a segment of {n} bytes; at most {MAX_SEGMENT_BYTES} bytes are allowed"
    return None


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


def sequence_of(requests: Iterable[Request]) -> Sequence[Request]:
    return requests if isinstance(requests, Sequence) else list(requests)
