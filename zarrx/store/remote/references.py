"""kerchunk reference sets (fsspec's ``reference://`` filesystem) as
:class:`~zarrx.store.remote.fsspecstore.FsspecStore` opens and reads them.

fsspec reads a JSON reference set and takes what it finds without a word: a document that is
no reference set fails with the ``AttributeError`` of its parser, and the ``gen`` entries of a
version 1 set are dropped unless ``simple_templates=False`` is given (their keys then read as
missing: the fill value, where the references say there is data). So zarrx reads the JSON
document itself (once: fsspec is given the parsed document), checks its layout, and has fsspec
expand ``gen`` entries. Parquet reference sets (read lazily) are left to fsspec.

The failures of a read are named here too: a reference fsspec cannot take apart, a target on a
protocol the filesystem has no filesystem for, a target shorter than its reference says.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from numbers import Integral
from typing import Any

from zarrx.errors import MissingDependencyError, StoreError, StoreNotFoundError
from zarrx.store.remote.common import Failure, first_line
from zarrx.store.remote.urls import redact, redact_urls, split_chain

__all__ = ["reference_options", "opening_failure", "bad_part", "malformed_reference",
           "short_target", "unknown_protocol", "is_reference_fs", "within_part",
           "whole_target_version", "ReferenceSet"]

_JSON = {dict: "object", list: "array", str: "string", int: "number", float: "number",
         bool: "boolean", type(None): "null"}
_FORMS = "inline data (text or 'base64:...'), [url] or [url, offset, length]"


def is_reference_fs(fs: Any) -> bool:
    return type(fs).__name__ == "ReferenceFileSystem"


class ReferenceSet(dict):
    """A reference set zarrx read from ``source``, as fsspec is given it: shown by its source,
    so that the token fsspec makes of a filesystem's arguments (the text of each) stays as
    cheap as for the path itself, and names the same instance for the same source."""

    source = ""
    version: tuple = ()

    def __repr__(self) -> str:
        return f"ReferenceSet({self.source!r}, {self.version!r})"


#: reference sets read for storage options (by their token): a store made again from the same
#: options (unpickled in a dask task, opened again) reads its reference set once per process,
#: as fsspec's own cache of filesystem instances read it before; at most _KEPT are kept
_READ: OrderedDict[str, dict] = OrderedDict()
_READ_LOCK = threading.Lock()
_KEPT = 8


def reference_options(url: str, so: dict, where: str) -> dict:
    """``so``, the storage options of ``url``, with the JSON reference set its ``fo`` names
    read and checked (``where`` begins the messages); ``so`` as it is for any other URL, or
    references held in Parquet files."""
    if len(split_chain(url)) != 1 or url.split("://", 1)[0].lower() != "reference":
        return so
    fo = so.get("fo")
    if not isinstance(fo, str):
        return _prepared(so, None, where)
    found = _version(fo, so, where)
    if found is None:                   # Parquet references, read lazily by fsspec
        return _prepared(so, None, where) if isinstance(so.get("fs"), dict) else so
    from fsspec.utils import tokenize
    # the same options and the same version of the file: the reference set read before; a
    # file whose filesystem says nothing but its size is read again, and fsspec makes its
    # reference filesystem anew (its cached instance holds what was read before)
    unversioned = not any(v != "None" for v in found[:-1])
    if unversioned:
        so = {**so, "skip_instance_cache": True}
    token = None if so.get("skip_instance_cache") else (tokenize(url, so), found)
    with _READ_LOCK:
        kept = _READ.get(token) if token is not None else None
        if kept is not None:
            _READ.move_to_end(token)
            return kept
    prepared = _prepared(so, _read_json(fo, so, where), where, found)
    if token is not None:
        with _READ_LOCK:
            _READ[token] = prepared
            while len(_READ) > _KEPT:
                _READ.popitem(last=False)
    return prepared


def _prepared(so: dict, doc: Any, where: str, version: tuple = ()) -> dict:
    """``so`` with the reference set ``doc`` read from its ``fo`` (None: ``fo`` as it is)
    checked, and the filesystems of its ``fs`` ready for fsspec."""
    if isinstance(so.get("fs"), dict):
        so = {**so, "fs": _awaitable_filesystems(so["fs"], so.get("asynchronous", False))}
    fo = so.get("fo")
    if doc is not None:
        if isinstance(doc, dict):
            doc = ReferenceSet(doc)
            doc.source, doc.version = redact(fo), version
        so = {**so, "fo": doc}
        shown = repr(redact(fo))
    elif isinstance(fo, dict):
        doc, shown = fo, "given as fo"
    else:
        return so                                # fsspec's own message says what it takes
    return _checked(doc, shown, so, where)


#: the wrapper of each synchronous filesystem (the same one each time: fsspec's token of the
#: reference filesystem's arguments names the same instance then)
_WRAPPED: dict = {}


def _awaitable_filesystems(given: dict, asynchronous: bool) -> dict:
    """The filesystems of the storage option ``fs`` (a protocol's filesystem, or the options
    to make it with), each synchronous one (local, memory, ...) wrapped to serve fsspec's
    coroutines, the local one for targets without a protocol among them: fsspec wraps them
    when it makes them itself (``remote_protocol``), but not those of ``fs``, whose reads then
    failed with "'LocalFileSystem' object has no attribute '_cat_file'"."""
    import fsspec
    try:
        from fsspec.implementations.asyn_wrapper import AsyncFileSystemWrapper
    except ImportError:                     # an fsspec that wraps none of them
        return given
    out = {}
    for protocol, value in {None: {}, **given}.items():
        name = str(protocol or "file").split(":", 1)[0]
        if isinstance(value, dict):
            try:
                if fsspec.get_filesystem_class(name).async_impl:
                    out[protocol] = value      # made by fsspec (in a forked child: anew)
                    continue
            except (ImportError, ValueError):
                out[protocol] = value          # fsspec's own message names what is missing
                continue
        fs = fsspec.filesystem(name, **value) if isinstance(value, dict) else value
        if not getattr(fs, "async_impl", True):
            try:
                wrapped = _WRAPPED.get((fs, asynchronous))
            except TypeError:                # a filesystem that cannot be a key
                wrapped = None
            if wrapped is None:
                wrapped = AsyncFileSystemWrapper(fs, asynchronous=asynchronous)
                try:
                    _WRAPPED[(fs, asynchronous)] = wrapped
                except TypeError:
                    pass
            fs = wrapped
        out[protocol] = fs
    return out


def _target_options(so: dict) -> dict:
    """The options fsspec's reference filesystem opens the file ``fo`` with."""
    return dict(so.get("ref_storage_args") or so.get("target_options") or {},
                protocol=so.get("target_protocol"))


def _cannot_read(fo: str, exc: BaseException, where: str) -> StoreError:
    shown = redact(fo)
    if isinstance(exc, FileNotFoundError):
        return StoreNotFoundError(f"{where}: the reference set {shown!r} (storage option "
                                  f"'fo') does not exist")
    return StoreError(f"{where}: cannot read the reference set {shown!r} (storage option "
                      f"'fo'): {type(exc).__name__}: {redact_urls(first_line(exc))}")


#: what the ``info`` of a file names that changes with its contents: ETags, checksums,
#: generations and times, as fsspec's filesystems name them (HTTP: the response headers
#: ``ETag``, ``Last-Modified``, ``Content-MD5``, ``Digest``; S3: ``ETag``, ``LastModified``;
#: GCS: ``generation``, ``md5Hash``, ``crc32c``, ``updated``; Azure: ``etag``,
#: ``last_modified``; local: ``mtime``; memory: ``created``)
VALIDATORS = ("ETag", "etag", "Last-Modified", "Content-MD5", "Digest", "mtime", "LastModified",
              "last_modified", "created", "generation", "md5Hash", "crc32c", "updated",
              "VersionId", "version_id")


def _version(fo: str, so: dict, where: str) -> tuple | None:
    """The version of the file ``fo``: what its filesystem's ``info`` says of it that changes
    with its contents (:data:`VALIDATORS`, each ``"None"`` when not given), then its size;
    None for references held in Parquet files (a folder, as fsspec's reference filesystem
    tells them)."""
    import fsspec
    try:
        ref_fs, path = fsspec.core.url_to_fs(fo, **_target_options(so))
        if ".json" not in path and fo.endswith(("parq", "parquet", "/")):
            return None
        info = ref_fs.info(path)
    except Exception as exc:  # noqa: BLE001 - any filesystem's failure, named
        raise _cannot_read(fo, exc, where) from None
    if ".json" not in path and info.get("type") == "directory":
        return None
    return tuple(str(info.get(k)) for k in (*VALIDATORS, "size"))


def _read_json(fo: str, so: dict, where: str) -> Any:
    """The JSON document at ``fo``, read as fsspec's reference filesystem reads it (with
    ``target_options`` / ``target_protocol``)."""
    import fsspec
    try:
        with fsspec.open(fo, "rb", **_target_options(so)) as f:
            text = f.read()
    except Exception as exc:  # noqa: BLE001 - any filesystem's failure, named
        raise _cannot_read(fo, exc, where) from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise StoreError(f"{where}: the reference set {redact(fo)!r} is not JSON: "
                         f"{first_line(exc)}") from None


def _checked(doc: Any, shown: str, so: dict, where: str) -> dict:
    """``so`` for the reference set ``doc`` (named ``shown``), whose layout is checked: a
    version 0 set (an object of references) or a version 1 one (``refs``, ``templates``,
    ``gen``); with ``gen`` entries, fsspec is told to expand them."""
    def bad(what: str, found: object) -> StoreError:
        text = repr(found) if len(repr(found)) <= 60 else type(found).__name__
        return StoreError(f"{where}: the reference set {shown}{what} {text}")

    if not isinstance(doc, dict):
        found = _JSON.get(type(doc), type(doc).__name__)
        raise StoreError(f"{where}: the reference set {shown} is no kerchunk reference set: "
                         f"expected a JSON object, found {'an' if found[0] in 'aeiou' else 'a'} "
                         f"{found}")
    version = doc.get("version")
    if version is None:
        return so
    if version != 1 or isinstance(version, bool):
        raise bad(": 'version': expected 1 (or no 'version', for version 0), found", version)
    for field, kind in (("refs", dict), ("templates", dict), ("gen", list)):
        if field in doc and not isinstance(doc[field], kind):
            raise bad(f": {field!r}: expected a JSON {_JSON[kind]}, found",
                      doc[field])
    for name, value in (doc.get("templates") or {}).items():
        if not isinstance(value, str):
            raise bad(f": 'templates'.{name}: expected a string, found", value)
    if doc.get("gen"):
        _check_gen(doc["gen"], bad, shown, where)
        if so.get("simple_templates") is True:
            raise StoreError(f"{where}: the reference set {shown} has 'gen' entries, which "
                             f"fsspec expands only with simple_templates=False (with True, "
                             f"their keys would read as missing)")
        try:
            import jinja2  # noqa: F401 - fsspec renders 'gen' entries with it
        except ImportError:
            raise MissingDependencyError(f"{where}: the reference set {shown} has 'gen' "
                                         f"entries, which fsspec expands with jinja2; install "
                                         f"it (pip install jinja2)") from None
        so = {**so, "simple_templates": False}
    return so


#: the most keys the 'gen' entries of a reference set may generate: fsspec renders each with
#: jinja2 when the set is opened (about a millisecond a key) and holds them all in memory
GEN_KEYS = 1_000_000


def _check_gen(gen: list, bad: Any, shown: str, where: str) -> None:
    """Check the layout of the ``gen`` entries of a reference set and count the keys they
    generate (from their dimensions alone, none generated): more than :data:`GEN_KEYS` is a
    ``StoreError``, before fsspec spends time and memory on them."""
    total = 0
    for n, entry in enumerate(gen):
        at = f": 'gen'[{n}]"
        if not isinstance(entry, dict):
            raise bad(f"{at}: expected a JSON object, found", entry)
        for field in ("key", "url"):
            if not isinstance(entry.get(field), str):
                raise bad(f"{at}.{field}: expected a string, found", entry.get(field))
        dims = entry.get("dimensions")
        if not isinstance(dims, dict):
            raise bad(f"{at}.dimensions: expected a JSON object, found", dims)
        count = 1
        for name, dim in dims.items():
            if isinstance(dim, list):
                count *= len(dim)
                continue
            if not isinstance(dim, dict):
                raise bad(f"{at}.dimensions.{name}: expected an array or an object with "
                          f"'stop' (and 'start', 'step'), found", dim)
            bounds = (dim.get("start", 0), dim.get("stop"), dim.get("step", 1))
            if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds) \
                    or bounds[2] == 0:
                raise bad(f"{at}.dimensions.{name}: expected whole numbers 'start', 'stop' "
                          f"and 'step' (not 0), found", dim)
            count *= len(range(*bounds))
        total += count
        if total > GEN_KEYS:
            raise StoreError(f"{where}: the reference set {shown}: 'gen'[{n}]: the 'gen' "
                             f"entries generate {total} keys or more, expected at most "
                             f"{GEN_KEYS} (fsspec renders each one when the set is opened)")


def opening_failure(so: dict, exc: BaseException) -> str:
    """What is wrong when fsspec could not open a filesystem with the storage options ``so``
    (raising ``exc``); for a reference set, naming the reference: inline data that is not
    base64, a template no entry of 'templates' defines."""
    fo = so.get("fo")
    refs = fo.get("refs") if isinstance(fo, dict) else None
    found = _reference_problem(refs, exc) if isinstance(refs, dict) else None
    return found or (f"cannot open the filesystem: {type(exc).__name__}: "
                     f"{redact_urls(str(exc)):.200}")


def _reference_problem(refs: dict, exc: BaseException) -> str | None:
    import binascii

    from zarrx._compat import b64decode_strict
    if isinstance(exc, binascii.Error):
        for key, value in refs.items():
            if isinstance(value, str) and value.startswith("base64:"):
                try:
                    b64decode_strict(value[7:].encode("ascii", "replace"))
                except (binascii.Error, ValueError):
                    return (f"the reference of {key!r} is not base64 after its 'base64:' "
                            f"prefix: {first_line(exc)}")
        return None
    if isinstance(exc, KeyError) and exc.args:
        name = exc.args[0]
        for key, value in refs.items():
            if isinstance(value, list) and value and "{{" in str(value[0]) \
                    and f"{{{{{name}}}}}" in str(value[0]).replace(" ", ""):
                return (f"the reference of {key!r} names the template {name!r}, which its "
                        f"'templates' do not define")
    return None


# -- failures of a read ------------------------------------------------------------------------

def _reference_of(exc: BaseException, fs: Any) -> tuple[bool, object]:
    """Whether ``exc`` was raised by fsspec's reference filesystem taking a reference apart,
    and that reference (from the ``path`` of the failing frame)."""
    tb, path = exc.__traceback__, None
    found = False
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_globals.get("__name__") == "fsspec.implementations.reference":
            found = True
            path = frame.f_locals.get("path", path)
        tb = tb.tb_next
    try:
        ref = fs.references.get(fs._strip_protocol(path)) if isinstance(path, str) else None
    except Exception:  # noqa: BLE001 - a lazily loaded set that cannot say
        ref = None
    return found, ref


def malformed_reference(exc: BaseException, fs: Any) -> Failure | None:
    """The failure of a reference fsspec cannot take apart (a number, a list of two; its
    ``TypeError`` or ``ValueError``), or None when ``exc`` is no such failure."""
    if not is_reference_fs(fs) or not isinstance(exc, (TypeError, ValueError)):
        return None
    found, ref = _reference_of(exc, fs)
    if not found:
        return None
    if (bad := _part_failure(ref)) is not None:
        return bad
    text = repr(ref)
    text = text if len(text) <= 120 else text[:117] + "..."
    return Failure("bad_response", None, f"its reference, {text}, is not {_FORMS}")


def _part_failure(ref: object) -> Failure | None:
    """The failure of a ``[url, offset, length]`` reference whose offset or length is no
    whole number of bytes of 0 or more, or None."""
    if not isinstance(ref, (list, tuple)) or len(ref) != 3:
        return None
    if all(isinstance(n, Integral) and not isinstance(n, bool) and n >= 0 for n in ref[1:]):
        return None
    text = repr(ref) if len(repr(ref)) <= 120 else repr(ref)[:117] + "..."
    return Failure("bad_response", None, f"its reference, {text}, names no part of its target: "
                   f"expected [url, offset, length] with an offset and a length of 0 or more")


def bad_part(exc: BaseException, fs: Any) -> Failure | None:
    """:func:`_part_failure` of the reference of the key fsspec's ReferenceNotReachable
    ``exc`` names (its target's filesystem refused the read)."""
    try:
        return _part_failure(fs.references.get(str(getattr(exc, "reference", ""))))
    except Exception:  # noqa: BLE001 - a lazily loaded set that cannot say
        return None


def unknown_protocol(cause: BaseException, target: str, fs: Any) -> str | None:
    """What is wrong when the reference filesystem ``fs`` had no filesystem for the protocol
    of ``target`` (its ``KeyError``), or None."""
    if not isinstance(cause, KeyError) or not cause.args or "://" not in target:
        return None
    protocol = target.split("://", 1)[0]
    if cause.args[0] != protocol:
        return None
    import fsspec
    if protocol not in fsspec.available_protocols():
        return f"fsspec knows no protocol {protocol!r}"
    return (f"the reference filesystem has no filesystem for its protocol {protocol!r}: give "
            f"remote_protocol={protocol!r} (and remote_options), or, for references on several "
            f"protocols, fs={{{protocol!r}: {{...options}}, ...}}")


def within_part(fs: Any, path: str, start: int | None, stop: int | None) -> dict:
    """The ``start`` and ``end`` to ask the filesystem ``fs`` for bytes ``[start, stop)`` of
    ``path`` (a negative ``start``: the last bytes), kept within the part of its target that
    a ``[url, offset, length]`` reference names: fsspec before 2026.9 adds them to the part's
    offset as they are, so a read past the part's end (a chunk read up to the bound of its
    encoded size) returned the bytes of the next chunks too. A part that is no range of bytes
    (a negative length, which fsspec reads as no bytes) is a bad response."""
    if not is_reference_fs(fs):
        return {"start": start, "end": stop}
    try:
        ref = fs.references.get(fs._strip_protocol(path))
    except Exception:  # noqa: BLE001 - a lazily loaded set that cannot say
        ref = None
    if (bad := _part_failure(ref)) is not None:
        raise bad
    if not isinstance(ref, (list, tuple)) or len(ref) != 3 or (start is None and stop is None):
        return {"start": start, "end": stop}
    size = int(ref[2])
    if start is not None:
        start = max(start, -size) if start < 0 else min(start, size)
    if stop is not None:
        stop = min(stop, size)
    return {"start": start, "end": stop}


def _reference(fs: Any, path: str, n: int) -> list | tuple | None:
    """The reference of the key ``path`` of ``fs`` when ``fs`` is a reference filesystem and
    the reference is a list of ``n`` items (1: a whole file, 3: a range of one); else None."""
    if not is_reference_fs(fs):
        return None
    try:
        ref = fs.references.get(fs._strip_protocol(path))
    except Exception:  # noqa: BLE001 - a lazily loaded set that cannot say
        return None
    return ref if isinstance(ref, (list, tuple)) and len(ref) == n else None


def whole_target_version(fs: Any, path: str, start: int | None, stop: int | None,
                         n: int) -> tuple[str, int] | None:
    """The version (as ``info`` gives it: its size, no ETag or time) of the key ``path`` of
    the reference filesystem ``fs`` whose reference is a whole file (``[url]``), when a read
    of ``[start, stop)`` that found ``n`` bytes says its size (the whole file, or fewer bytes
    than asked for); None otherwise. fsspec's ``info`` asks the target's filesystem for it:
    one more request (a HEAD) for each chunk read."""
    if (start or 0) < 0 or _reference(fs, path, 1) is None:
        return None
    if stop is None or n < stop - (start or 0):
        size = (start or 0) + n
        return f"{size}-None", size
    return None


def short_target(fs: Any, path: str, begin: int, end: int, n: int) -> Failure | None:
    """The failure of a read of bytes ``[begin, end)`` of the key ``path`` of the reference
    filesystem ``fs`` that found ``n`` of them, when its reference names a range of a target
    that is shorter: the file ends before the range the reference names."""
    ref = None if n >= end - begin else _reference(fs, path, 3)
    if ref is None:
        return None
    target, offset, length = ref
    first, last = offset + begin, offset + end - 1
    return Failure("bad_response", None, f"its reference names bytes {offset}-"
                   f"{offset + length - 1} of {redact(str(target))!r}, which ends before them: "
                   f"{n} bytes found of bytes {first}-{last} (the file is shorter than its "
                   f"references say)")
