"""The zarrx error family.

Catching :class:`ZarrError` catches everything zarrx raises for bad user input or bad stored
bytes. Each subclass also inherits the builtin that idiomatic code already catches, so
``except KeyError`` around ``group["missing"]`` or ``except ValueError`` around a corrupt chunk
keeps working. Messages are self-contained: where (key, field), what was found, what was expected.
"""
from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import FrozenInstanceError
from typing import Any, Callable, Iterable, TypeVar

__all__ = [
    "ZarrError", "MetadataError", "CodecError", "CodecArgumentTypeError", "UnknownCodecError",
    "UnknownCodecArgumentError", "ZarrFormatArgumentError", "StoreError", "ShardError",
    "IndexingError", "IndexingValueError", "IndexingTypeError", "BoundsCheckError", "VindexInvalidSelectionError",
    "SelectionSizeError",
    "NodeNotFoundError", "ArrayNotFoundError", "GroupNotFoundError", "NodeExistsError",
    "ContainsArrayError", "ContainsGroupError", "node_exists", "NodeMismatchError",
    "ReadOnlyError", "ConflictError",
    "ArgumentError", "ArgumentTypeError", "ArgumentKeyError", "StoreArgumentError",
    "ArgumentNotImplementedError",
    "ArgumentEncodeError", "ArgumentDecodeError",
    "DataTypeError", "DimensionNamesMissingError", "FillValueError", "FillValueOverflowError",
    "FrozenMetadataError",
    "expected", "refuse_keywords", "unexpected_keyword", "checked_call",
    "RemoteError", "RemoteAccessError", "RemoteNotFoundError", "RemoteTransientError",
    "RemoteThrottledError", "RemoteServerError", "RemoteTimeoutError", "RemoteConnectionError",
    "MissingDependencyError", "StoreNotFoundError", "StoreExistsError", "ListingUnsupportedError",
    "SchedulerError",
    "BaseZarrError", "MetadataValidationError", "NodeTypeValidationError",
    "ContainsArrayAndGroupError", "ArrayIndexError", "NegativeStepError",
    "ZarrDeprecationWarning", "ZarrUserWarning", "ZarrRuntimeWarning", "ZarrFutureWarning",
    "UnstableSpecificationWarning",
]


class ZarrError(Exception):
    """Anything wrong with user input or stored bytes.

    Where it happened is carried as fields, set once by the layer that knows them (chunk I/O
    for chunk errors): ``array`` (the array's path), ``key`` (the stored object) and ``inner``
    (the inner chunk's key inside a shard), and for a chunk that does not decode on a remote
    store, ``address`` (its URL; and ``served_as``, an HTML page's media type). The message is the detail;
    ``str()`` puts the location in front of it: ``array 'a' chunk 'a/c/0': <detail>``, ``array 'a' shard 'a/c/0'
    inner chunk 'c/1': <detail>`` (the root array reads ``array '/'``). Nothing rewrites a
    message: a layer that knows more of the location calls :meth:`at` and re-raises the same
    exception.
    """

    #: how ``key`` is named when there is no ``inner`` ("shard" for errors about a shard object)
    key_noun: str = "chunk"
    array: str | None = None
    key: str | None = None
    inner: str | None = None
    #: where a remote store keeps ``key`` (a URL without credentials), and the media type the
    #: server gave it when that explains the error (an HTML page where a chunk was expected)
    address: str | None = None
    served_as: str | None = None
    #: the arguments of the call whose values the error is about (keywords of a tool, such
    #: as ``fill_value`` of :func:`zarrx.convert`), set by the tool that was given them: the
    #: ``zarrx`` command names the matching options and exits with status 2
    arguments: tuple[str, ...] = ()

    def at(self, *, array: str | None = None, key: str | None = None,
           inner: str | None = None, address: str | None = None,
           served_as: str | None = None) -> ZarrError:
        """Set the location fields not set yet; returns ``self``."""
        if self.array is None and array is not None:
            self.array = array
        if self.key is None and key is not None:
            self.key = key
        if self.inner is None and inner is not None:
            self.inner = inner
        if self.address is None and address is not None:
            self.address = address
            self.served_as = served_as
        return self

    @property
    def where(self) -> str:
        parts = []
        if self.array is not None:
            parts.append(f"array {(self.array or '/')!r}")
        if self.key is not None:
            noun = "shard" if self.inner is not None else self.key_noun
            parts.append(f"{noun} {self.key!r}")
        if self.inner is not None:
            parts.append(f"inner chunk {self.inner!r}")
        if self.address is not None:
            served = f", served as {self.served_as}" if self.served_as else ""
            parts.append(f"(at {self.address}{served})")
        return " ".join(parts)

    @property
    def detail(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()

    def __str__(self) -> str:  # KeyError would quote the message; every subclass reads plainly
        where = self.where
        return f"{where}: {self.detail}" if where else self.detail


class MetadataError(ZarrError, ValueError):
    """A metadata document (zarr.json, .zarray, .zgroup, .zattrs, .zmetadata) is malformed."""


class MetadataValidationError(MetadataError):
    """A metadata document's ``zarr_format`` is not the format of the document (``2`` in a
    ``zarr.json``); zarr-python's name."""


class NodeTypeValidationError(MetadataValidationError):
    """A ``zarr.json`` whose ``node_type`` is neither ``"array"`` nor ``"group"``, or is not
    the kind the document is read as; zarr-python's name."""


class ContainsArrayAndGroupError(MetadataError):
    """Consolidated Zarr v2 metadata that lists both a ``.zarray`` and a ``.zgroup`` for one
    node; zarr-python's name (a ``ValueError`` there too)."""


#: zarr-python's name of the base of its errors. Every zarrx error is a :class:`ZarrError`, so
#: ``except zarrx.errors.BaseZarrError`` catches them all (zarr-python's is a ``ValueError``;
#: zarrx's store errors are ``OSError`` instead).
BaseZarrError = ZarrError


class CodecError(ZarrError, ValueError):
    """A codec is unknown, misconfigured, or its encoded bytes are corrupt."""


class UnknownCodecError(CodecError):
    """A codec name (or numcodecs id) no codec is registered under; zarr-python's name."""


class StoreError(ZarrError, OSError):
    """A store operation failed, or a key is not acceptable to the store."""


class StoreNotFoundError(StoreError, FileNotFoundError):
    """The file a store opens for reading does not exist: a zip archive opened in mode ``r``;
    or the folder a zip archive is to be written in (a ``FileNotFoundError``, as
    zarr-python's ZipStore raises)."""


class StoreExistsError(StoreError, FileExistsError):
    """The file a store must create exists already: a zip archive opened in mode ``x`` (a
    ``FileExistsError``, as zarr-python's ZipStore raises)."""


class ShardError(ZarrError, ValueError):
    """A shard object or its index is corrupt. ``key`` is the shard's stored key and ``inner``
    (nested sharding) the inner shard's key inside it."""

    key_noun = "shard"


class IndexingError(ZarrError, IndexError):
    """A selection is out of range or ill-formed."""


class BoundsCheckError(IndexingError):
    """An index outside the array (or a block index outside its chunk grid); zarr-python's
    name."""


class VindexInvalidSelectionError(IndexingError):
    """A coordinate selection (``vindex``) with something other than integer arrays, or a
    boolean mask of another shape than the array's; zarr-python's name."""


class ArrayIndexError(IndexingError):
    """zarr-python's name, kept so that ``except`` clauses naming it work; zarrx raises the
    other :class:`IndexingError` classes (zarr-python 3.1 raises it nowhere either)."""


class NegativeStepError(IndexingError):
    """zarr-python's error for a negative slice step, kept so that ``except`` clauses naming
    it work; zarrx never raises it: negative steps select as in numpy."""


class IndexingValueError(IndexingError, ValueError):
    """An ill-formed selection that numpy or zarr-python reports as a ``ValueError``: a slice
    step of zero, index arrays that cannot be broadcast together, an index array-like whose
    ``__array__`` returns no array."""


class IndexingTypeError(IndexingError, TypeError):
    """A selection item of a kind numpy and zarr-python report as a ``TypeError``: a slice
    bound that is not an integer or None (``z[1.5:3]``)."""


class SelectionSizeError(IndexingError, MemoryError):
    """A selection touches more chunks than one call reads or writes
    (:data:`zarrx.indexing.MAX_CHUNKS`); the message gives the count per axis. Also a
    ``MemoryError``, what listing that many chunks would raise. Also raised for index arrays
    (as given, or broadcast together) of more positions than memory holds."""


class NodeNotFoundError(ZarrError, KeyError, ValueError, FileNotFoundError):
    """No array or group exists at a path (``group["x"]``, ``zarrx.open(path, mode="r")``).
    A ``KeyError`` for ``group[name]``; a ``ValueError`` and ``FileNotFoundError`` as
    zarr-python's ``GroupNotFoundError`` / ``ArrayNotFoundError`` are."""


class ArrayNotFoundError(NodeNotFoundError):
    """No array exists where one was to be opened (``open_array``); zarr-python's name."""


class GroupNotFoundError(NodeNotFoundError):
    """No group exists where one was to be opened (``open_group``, ``consolidate_metadata``),
    or nothing at all where ``open`` was to open a node; zarr-python's name."""


class NodeExistsError(ZarrError, ValueError, FileExistsError):
    """A node exists where mode ``w-`` or a create call required none (a ``ValueError``, as
    zarr-python's ``ContainsArrayError`` / ``ContainsGroupError`` are)."""


class ContainsArrayError(NodeExistsError):
    """The node in the way is an array; zarr-python's name."""


class ContainsGroupError(NodeExistsError):
    """The node in the way is a group; zarr-python's name."""


def node_exists(is_array: bool, message: str) -> NodeExistsError:
    """The :class:`NodeExistsError` naming the kind of node in the way: a
    :class:`ContainsArrayError` for an array, else a :class:`ContainsGroupError`."""
    return (ContainsArrayError if is_array else ContainsGroupError)(message)


class NodeMismatchError(NodeExistsError, TypeError):
    """A node exists but is not what was asked for: a group where an array was required, or an
    array of another shape or dtype (``require_array``); a ``TypeError``, as zarr-python
    raises there."""


class ReadOnlyError(StoreError, PermissionError, ValueError):
    """A write was attempted through a store or node opened read-only (a ``ValueError``, as
    zarr-python raises there)."""


class ArgumentError(ZarrError, ValueError):
    """An argument has a value zarrx cannot use: a shape, chunk shape, mode, Zarr format, ..."""


class ArgumentTypeError(ArgumentError, TypeError):
    """An argument of the wrong kind: an unknown keyword, attributes that are not JSON,
    ``out=`` that is not a numpy array, a codec in the wrong argument (a ``TypeError``, as
    zarr-python raises there)."""


class CodecArgumentTypeError(CodecError, ArgumentTypeError):
    """A codec object's argument of another Python type than its setting takes (``level="x"``
    for ``ZstdCodec``); a ``TypeError``, as zarr-python's codec classes raise."""


class StoreArgumentError(StoreError, ArgumentTypeError):
    """``storage_options`` given with a local path or a store object, which takes none (a
    ``TypeError``, as zarr-python raises there, and a ``ValueError``, as xarray's writer raises
    for a store object)."""


class ArgumentKeyError(ArgumentError, KeyError):
    """An argument looks for a label that is not there: a coordinate value of
    ``to_zarrx(region="auto")`` missing from the stored coordinate (a ``KeyError``, as xarray
    raises there), or a key missing from a node's attributes (``z.attrs["x"]``, ``del
    z.attrs["x"]``: a ``KeyError``, as a dict raises)."""


class UnknownCodecArgumentError(UnknownCodecError, ArgumentKeyError):
    """A codec dict given as an argument (``compressors={"name": "zstdd"}``, ``filters=``,
    ``serializer=``, ``codecs=``) names no registered codec: also a ``KeyError``, as zarr-python
    raises there. A stored document naming an unknown codec is an :class:`UnknownCodecError`
    only (not a ``KeyError``, which ``except KeyError`` around ``group[name]`` would take for
    a missing member)."""


class ZarrFormatArgumentError(ArgumentError, MetadataValidationError):
    """A ``zarr_format`` argument other than 2 or 3 (or None where the format is detected):
    also a :class:`MetadataValidationError`, the class zarr-python raises for it in ``open``,
    ``open_group``, ``open_array``, ``group`` and ``consolidate_metadata``."""


class ArgumentNotImplementedError(ArgumentError, NotImplementedError):
    """A value xarray's CF coders cannot write yet, such as a ``MultiIndex`` given to
    ``zarrx.xarray.to_zarrx`` (a ``NotImplementedError``, as xarray's writer raises there)."""


class ArgumentOverflowError(ArgumentError, OverflowError):
    """A value outside the range of the array's data type, such as ``2**40`` written to an
    ``int32`` array (an ``OverflowError``, as numpy and zarr-python raise there)."""


def _unicode_fields(error: UnicodeError | tuple) -> tuple:
    """``(encoding, object, start, end, reason)`` of a Unicode error (or such a tuple)."""
    if isinstance(error, tuple):
        return error
    return (error.encoding, error.object, error.start,        # type: ignore[attr-defined]
            error.end, error.reason)                           # type: ignore[attr-defined]


class _UnicodeArgument(ArgumentError):
    """An ArgumentError that is also the builtin Unicode error (``_unicode``) of the conversion
    that failed, with its fields (``encoding``, ``object``, ``start``, ``end``, ``reason``)
    taken from ``cause`` (that error, or the tuple of its fields)."""

    _unicode: type[UnicodeError]

    def __init__(self, message: str, cause: UnicodeError | tuple) -> None:
        self._unicode.__init__(self, *_unicode_fields(cause))
        self.args = (message,)

    def __reduce__(self) -> tuple:     # plain fields: pickled as they are by any pickler
        return type(self), (self.args[0], _unicode_fields(self)), self.__dict__


class ArgumentEncodeError(_UnicodeArgument, UnicodeEncodeError):
    """Text written to an array that the array's encoding cannot hold: a ``str`` with a lone
    surrogate written to a string array (UTF-8), non-ASCII text written to a bytes array. Also
    the ``UnicodeEncodeError`` zarr-python lets through there."""

    _unicode = UnicodeEncodeError


class ArgumentDecodeError(_UnicodeArgument, UnicodeDecodeError):
    """Bytes written to a text array that do not decode as its text (``b"\\xff"`` written to a
    string or fixed-length text array). Also the ``UnicodeDecodeError`` zarr-python lets
    through there."""

    _unicode = UnicodeDecodeError


class DimensionNamesMissingError(MetadataError, KeyError):
    """An array read by engine ``"zarrx"`` naming no dimensions (no v3 ``dimension_names``,
    v2 ``_ARRAY_DIMENSIONS`` nor NCZarr ``dimrefs``), as engine ``"zarr"``'s ``KeyError``."""


class DataTypeError(MetadataError, TypeError):
    """A data type given by the user is unknown or unsupported: a metadata error that is also
    the ``TypeError`` numpy and zarr-python raise for a bad dtype."""


class FillValueError(MetadataError, TypeError):
    """A fill value given by the user that the data type cannot hold (``"abc"`` or ``[1, 2]``
    for integers): a metadata error naming the field, also the ``TypeError`` zarr-python
    raises there."""


class FrozenMetadataError(ZarrError, FrozenInstanceError, TypeError):
    """A change in place of metadata a handle shows (``z.metadata``, its codecs'
    configurations, its document as read): that metadata is shared by every handle opened on
    the same stored document, so it is read-only. Also an attribute of a codec object
    assigned (codec objects are immutable, as zarr-python's). Also the ``FrozenInstanceError``
    (``AttributeError``) zarr-python's frozen metadata raises when a field is assigned, and the
    ``TypeError`` a read-only mapping or a tuple raises when an item is."""


class FillValueOverflowError(MetadataError, OverflowError):
    """A fill value given by the user outside the range of an integer type (``1000`` or
    infinity for ``int8``) or of the int64 count of a date or duration type: also the
    ``OverflowError`` numpy and zarr-python raise there."""


class ListingUnsupportedError(StoreError):
    """The store cannot list its keys (a web server without directory listings): a hierarchy
    there is found through consolidated metadata, an array's chunks through its chunk grid."""


class ConflictError(StoreError):
    """A conditional store operation found the object changed: its generation (version) was not
    the one the caller expected, or it exists where it must not (or the other way round); or an
    update gave up after retrying."""


class RemoteError(StoreError):
    """A request to a remote store (object store, HTTP server) failed. ``url`` is the object's
    address without credentials, ``key`` the store key and ``status`` the HTTP status (None when
    no response came back)."""

    url: str | None = None
    status: int | None = None


class RemoteAccessError(RemoteError, PermissionError):
    """The server refused the credentials or the request (HTTP 401/403). Not retried."""


class RemoteNotFoundError(RemoteError):
    """The bucket, container or server path itself does not exist (HTTP 404 on something other
    than a key read: a missing key reads as None). Not retried."""


class RemoteTransientError(RemoteError):
    """A failure worth retrying: it is retried with backoff before it reaches the caller."""


class RemoteThrottledError(RemoteTransientError):
    """The server asked to slow down (HTTP 429, or 503 SlowDown)."""


class RemoteServerError(RemoteTransientError):
    """The server failed (HTTP 5xx)."""


class RemoteTimeoutError(RemoteTransientError, TimeoutError):
    """A request timed out."""


class RemoteConnectionError(RemoteTransientError, ConnectionError):
    """The connection could not be made, or was dropped."""


class SchedulerError(ZarrError, RuntimeError):
    """A dask write into an in-memory array on worker processes or ``dask.distributed``
    (copies of its data), a ``RuntimeError`` as ``dask.array.to_zarr`` raises there."""


class MissingDependencyError(ZarrError, ImportError):
    """An optional package a store needs is not installed; the message names it."""


def refuse_keywords(what: str, kwargs: dict, names: tuple[str, ...]) -> None:
    """An ArgumentTypeError worded as Python's own (``zeros() got an unexpected keyword
    argument 'fill_value'``) for the first of ``names`` in ``kwargs``: keywords a function
    sets itself before passing ``kwargs`` on, which Python would report as given twice to a
    function the caller never called."""
    for name in names:
        if name in kwargs:
            raise ArgumentTypeError(f"{what}() got an unexpected keyword argument {name!r}")


def unexpected_keyword(what: str, name: str, known: Iterable[str]) -> ArgumentTypeError:
    """``ArgumentTypeError("<what>() got an unexpected keyword argument '<name>'")``, worded as
    Python's own, with the closest keyword ``what`` takes when ``name`` looks like a typo of it
    (``chunk`` for ``chunks``); never a private one (``_mode``), which is not for callers."""
    public = sorted(k for k in known if not k.startswith("_"))
    close = difflib.get_close_matches(name, public, n=1, cutoff=0.75)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return ArgumentTypeError(f"{what}() got an unexpected keyword argument {name!r}{hint}")


_F = TypeVar("_F", bound=Callable[..., Any])


def checked_call(func: _F) -> _F:
    """``func``, whose arguments that Python refuses before it runs (an unknown keyword,
    a missing or extra positional one) raise an ``ArgumentTypeError`` (still a
    ``TypeError``) with Python's message, naming the closest keyword to a misspelt one.
    Nothing changes for a call Python accepts."""
    params = inspect.signature(func).parameters.values()
    known = frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                            p.KEYWORD_ONLY))

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TypeError as exc:
            # raised by the call itself, not in func's body: the arguments did not bind
            if isinstance(exc, ZarrError) or exc.__traceback__.tb_next is not None:
                raise
            unknown = [key for key in kwargs if key not in known]
            if unknown:
                raise unexpected_keyword(func.__qualname__, unknown[0], known) from None
            raise ArgumentTypeError(str(exc)) from None
    return call  # type: ignore[return-value]


def expected(where: str, want: str, got: object) -> MetadataError:
    """``MetadataError("<where>: expected <want>, found <got!r>")``."""
    return MetadataError(f"{where}: expected {want}, found {got!r}")


class ZarrDeprecationWarning(DeprecationWarning):
    """A spelling that will go: ``zarr_version=`` for ``zarr_format=``; zarr-python's name."""


class ZarrUserWarning(UserWarning):
    """A zip entry skipped: it cannot be a key, or a later same-named entry replaces it."""


class ZarrFutureWarning(FutureWarning):
    """zarr-python's name, kept for warning filters that name it; zarrx gives none."""


class UnstableSpecificationWarning(ZarrFutureWarning):
    """zarr-python's warning for data types without a v3 specification; zarrx gives none."""


class ZarrRuntimeWarning(RuntimeWarning):
    """A failure that could not be raised: a zip archive finished while the interpreter exits
    (or a store is collected) that another writer finished first; zarr-python's name."""
