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

Beside the contract: :data:`ABSENT` and the conflict errors are :mod:`zarrx.store.generations`,
the snapshot classes :mod:`zarrx.store.snapshots`, the checks of keys and values stores share
:mod:`zarrx.store.inputs` (all importable from here too).
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from zarrx.errors import ReadOnlyError, StoreError
# the generation vocabulary, the key and value checks and the snapshots, importable from here
# too, with the contract they serve
from zarrx.store.generations import ABSENT, check_generation, conflict, is_absent
from zarrx.store.inputs import (MAX_SEGMENT_BYTES, absolute_path, as_buffer, as_bytes,
                                check_key, check_path_key, check_prefix, key_problem)
from zarrx.store.snapshots import HeldSnapshot, ObjectSnapshot, VersionedSnapshot

__all__ = ["ByteRange", "Store", "Request", "ABSENT", "ObjectSnapshot", "HeldSnapshot",
           "address_fields", "refuse_unnamable",
           "VersionedSnapshot", "Versioned", "sequence_of", "is_absent", "conflict",
           "check_generation", "absolute_path", "check_key", "check_prefix", "key_problem",
           "check_path_key", "MAX_SEGMENT_BYTES", "as_buffer", "as_bytes"]


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

class Store:
    """Abstract key -> bytes store. Keys are ``/``-separated strings without a leading ``/``."""

    read_only: bool = False
    #: why a store that cannot be written is read-only, when that is not the caller's choice
    #: (named by the errors refusing a write)
    read_only_reason: str | None = None
    #: True when ``set_if``/``delete_if`` are implemented (atomically, for every caller of the
    #: same store in any thread or process)
    supports_conditional_writes: bool = False
    #: False when the store cannot remove an object it holds (a zip archive): operations that
    #: must delete what they copied (moving a node) are then refused before writing anything
    supports_deletes: bool = True
    #: True when ``delete_prefix`` also removes what a listing names against the store's key
    #: rules (``key_problem``: an object another tool named so); otherwise a prefix delete
    #: finding one refuses before removing anything (:func:`refuse_unnamable`)
    removes_unnamable: bool = False
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
    #: True when reading a range of an object may cost reading all of it (a zip entry stored
    #: compressed is inflated whole, once, to check its CRC-32) while ``getsize`` costs no I/O:
    #: a reader that refuses objects past some size then asks their sizes before reading
    ranges_read_whole: bool = False
    #: True when reading an object whole costs no more than reading a range of it (a view of
    #: memory the store holds): a reader that refuses objects past some size then reads them
    #: whole and checks their length, rather than asking for a range
    reads_are_views: bool = False
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

    def known_absent(self, keys: Sequence[str]) -> list[bool]:
        """For each of ``keys`` (many, in key order), True when the store can tell for much
        less than a read that it is not there (a folder listing), False when it cannot tell
        (the default: for every key). A reader of large objects skips those it is told of."""
        return [False] * len(keys)

    def box_reader(self, head: str, sep: str) -> Callable[..., list[int]] | None:
        """Optionally, a reader of raw chunks stored one per object under keys ``head`` +
        coordinates joined by ``sep``, straight into an output array (see
        :meth:`zarrx.store.local.LocalStore.box_reader`); None (the default) when the store
        has none, or not for these keys."""
        return None

    def kernel_paths(self) -> tuple[bytes, int, int] | None:
        """Optionally, ``(root, flags, resolve)``: a kernel may read the object of a plain key
        (see :mod:`zarrx.store._localread`) as the file ``root + b"/" + key``, opened with
        ``openat2(flags, resolve)``, one version of it through that descriptor, as
        :meth:`snapshot` reads it (:mod:`zarrx.store._localshard`); None (the default) when
        it may not."""
        return None

    def kernel_values(self) -> dict | None:
        """Optionally, the dict of the store's kept values: a kernel may read the object of a
        key as the ``bytes`` or :class:`~zarrx.store._values.Value` found there, a value the
        store never changes, only replaces (one version of it, as :meth:`snapshot` reads it;
        :mod:`zarrx.store._memshard`); None (the default) when it may not."""
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

    def stored_size(self, key: str) -> int | None:
        """The bytes the object at ``key`` takes where the store keeps it (a compressed zip
        entry: its compressed bytes), or None when it is missing: on a store whose ranged reads
        may cost a whole object (``ranges_read_whole``), ``getsize(key) / stored_size(key)`` is
        how much work each stored byte may cost."""
        return self.getsize(key)

    def exists(self, key: str) -> bool:
        return self.get(key, ByteRange(0, 0)) is not None

    def key_problem(self, key: str) -> str | None:
        """Why this store refuses ``key`` (the StoreError it raises for it would say so), or
        None when it takes it: asked of names a listing gave, which another tool may have
        made against the store's key rules."""
        return None

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
        check_prefix(prefix, self)
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
        keys = list(self.list_prefix(check_prefix(prefix, self)))
        refuse_unnamable(self, prefix, keys)
        self.delete_many(keys)

    # -- generations and conditional writes (see the module docstring) ---------------------
    def generation(self, key: str) -> Hashable | None:
        """The generation of the object at ``key``, or None when it is missing. Stores answer
        this cheaply (a stat, a HEAD request); the default reads and digests the object."""
        got = self.get_versioned(key)
        return None if got is None else got[1]

    def generations(self, keys: Sequence[str]) -> list[Hashable | None]:
        """:meth:`generation` of each of ``keys``, in order (a store may ask for all of them
        at once: a ``LocalStore`` in one call, :mod:`zarrx.store._localstat`)."""
        return [self.generation(key) for key in keys]

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
            why = f": {self.read_only_reason}" if self.read_only_reason else ""
            raise ReadOnlyError(f"{self!r}: cannot write {key!r}: the store is read-only{why}")


def sequence_of(requests: Iterable[Request]) -> Sequence[Request]:
    return requests if isinstance(requests, Sequence) else list(requests)


def refuse_unnamable(store: Store, prefix: str, keys: Sequence[str]) -> None:
    """A StoreError when ``store`` cannot remove everything a delete of ``prefix`` listed
    (``keys``): one of them is named against its key rules and ``store.removes_unnamable`` is
    False. Raised before anything is removed, so a delete (an overwrite) fails whole."""
    if store.removes_unnamable:
        return
    bad = [k for k in keys if store.key_problem(k) is not None]
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise StoreError(f"{store!r}: cannot delete {prefix or '<root>'!r}: the object "
                         f"{bad[0]!r}{more} below it has a name the store refuses "
                         f"({store.key_problem(bad[0])}), so it cannot remove it; nothing was "
                         f"deleted: remove it with another tool, then delete again")


def address_fields(store: Store, key: str) -> dict[str, str | None]:
    """The ``address`` and ``served_as`` location fields (:meth:`zarrx.errors.ZarrError.at`) of an
    error about what is stored at ``key``: its address on a remote store, and the media type
    the server gives it when that is a web page (a host answering 200 with an HTML page for a
    missing key); one request, made only once something went wrong. ``{}`` on a store whose
    ``repr`` and keys say it all."""
    url = store.address(key)
    if url is None:
        return {}
    ctype = store.content_type(key)
    return {"address": url, "served_as": ctype if ctype and "html" in ctype.lower() else None}
