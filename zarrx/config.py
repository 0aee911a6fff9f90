"""Run-time settings: ``zarrx.config.threads`` and a context manager to change them.

Settings:

- ``threads``: how many threads decode/encode the chunks of one read or write (default: the
  CPU count). ``threads=1`` keeps the decoding and encoding on the calling thread: no pool is
  used at all.
- ``write_behind``: with ``threads=1``, a write of several stored objects to a store that
  writes in parallel (local files, remote objects) hands each encoded object to one I/O thread
  and encodes the next meanwhile (default True; see :mod:`zarrx._behind`). False keeps store
  calls on the calling thread too.
- ``write_empty_chunks``: store chunks that hold only the fill value (default False).
- ``order``: the memory layout (``"C"`` or ``"F"``) reads of a Zarr v3 array hand out when
  the handle is made (created or opened) without ``config={"order": ...}``, and the order a
  Zarr v2 array created without ``order=`` stores (default ``"C"``), as zarr-python's
  ``array.order``. Taken when the handle is made: a handle keeps its order after a
  ``with set(...)`` block ends.
- ``default_zarr_format``: the Zarr format (2 or 3) of a node created without
  ``zarr_format=`` where no group above it sets one (default 3), as zarr-python's setting of
  that name; a node created inside an existing group takes that group's format whatever this
  is.
- ``consistency``: ``"strict"`` (conditional writes keep updates from other processes) or
  ``"none"``.
- ``memory_pool``: how many bytes of freed memory the process keeps for reuse, in each of two
  pools: memory-store values and remote-store upload buffers (64 KiB and larger; see
  :mod:`zarrx.store.memory`), and the arrays reads return (1 MiB and larger; see
  :mod:`zarrx._outputs`). Default ``None``: an eighth of the machine's memory, at most 1 GiB,
  plus 2 MiB (room for the page each pooled read output keeps before its data, so that an
  output of the whole size is kept); ``0``: none. A change applies at once: the oldest blocks
  pooled over the new limit are released. Those arrays come from zarrx's own numpy memory handler (NEP 49), not from one
  the program set for itself; with ``0`` numpy's current handler allocates them.
- ``max_metadata_bytes``: the largest metadata document (``zarr.json``, ``.zarray``,
  ``.zmetadata``...) zarrx reads or writes, in bytes (default 64 MiB). A larger one is refused
  unread (at most this many bytes of it are fetched), with a ``MetadataError`` naming its key,
  its size and this setting. It bounds what a hostile store can cost; raise it to open the
  consolidated metadata of a very large hierarchy (tens of thousands of arrays), which
  zarr-python writes without a limit. Read at each use.
- ``shard_index_cache_bytes``: the bytes of decoded shard indexes each open sharded array keeps
  for its next reads (default 32 MiB; at most 16 indexes either way, the most recently used).
  An index larger than this (16 bytes an inner chunk: 16 MiB for a shard of 2^20) is used by
  the read that decoded it and not kept, so each read of that shard reads its index again;
  ``0`` keeps none. Read at each use: lowering it drops the oldest indexes over it at the
  array's next index lookup.
- ``decoded_shard_cache_bytes``: the bytes of decoded shards each open array whose shards are
  encoded as a whole (a bytes-to-bytes codec such as ``zstd`` after ``sharding_indexed``) keeps
  for its next reads (default 64 MiB; at most 4 shards either way, the most recently used). A
  read decodes each such shard it touches once, whatever this is; a decoded shard larger than
  this is then used by that read and not kept, so the next read of it decodes it again; ``0``
  keeps none. Read at each use, as ``shard_index_cache_bytes`` is.

Each setting starts from the environment variable ``ZARRX_<NAME>`` when it is set (read when
zarrx is imported, and again by ``refresh()``): ``ZARRX_THREADS=4``, ``ZARRX_WRITE_EMPTY_CHUNKS=true``
(``true``/``false``, ``1``/``0``, ``yes``/``no``, ``on``/``off``; the same for
``ZARRX_WRITE_BEHIND``), ``ZARRX_CONSISTENCY=none``,
``ZARRX_MEMORY_POOL=0``, ``ZARRX_MAX_METADATA_BYTES=268435456``,
``ZARRX_SHARD_INDEX_CACHE_BYTES=0``, ``ZARRX_DECODED_SHARD_CACHE_BYTES=0``,
``ZARRX_DEFAULT_ZARR_FORMAT=2``; ``none`` (or an
empty value) gives ``threads`` and ``memory_pool`` their defaults. A value that does not parse
is an :class:`~zarrx.errors.ArgumentError` naming the variable.

``set`` takes keywords or, as zarr-python's ``zarr.config.set`` does, a mapping with dotted keys
(nested mappings too). zarr-python's keys for the settings zarrx has are accepted as aliases:
``array.write_empty_chunks`` is ``write_empty_chunks``, ``array.order`` is ``order``; ``threading.max_workers`` and
``async.concurrency`` are ``threads`` (zarrx has one thread pool for decoding and for store
requests; ``None`` means the CPU count).
``array.rectilinear_chunks`` and ``array.read_missing_chunks`` switch on in zarr-python what
zarrx always does: ``set`` takes them with ``True`` only, and ``get`` gives ``True``.
``to_dict()`` gives every setting by zarrx's name; ``pprint(**kwargs)`` prints that.

    with zarrx.config.set(threads=1):
        z[:]                      # decoded on the calling thread only
    with zarrx.config.set({"array.write_empty_chunks": True}):
        z[:] = 0                  # chunks equal to the fill value are stored too
"""
from __future__ import annotations

import contextlib
import importlib
import numbers
import os
import sys
import types
from collections.abc import Callable, Iterator, Mapping

from zarrx import _fork

__all__ = ["set", "get", "refresh", "reset", "to_dict", "pprint", "pool_limit", "ALIASES"]

_DEFAULTS = {"threads": os.cpu_count() or 1, "write_empty_chunks": False,
             "consistency": "strict", "memory_pool": None, "write_behind": True,
             "max_metadata_bytes": 64 << 20, "shard_index_cache_bytes": 32 << 20,
             "decoded_shard_cache_bytes": 64 << 20, "order": "C", "default_zarr_format": 3}
CONSISTENCY = ("strict", "none")
#: zarr-python's dotted keys -> zarrx settings
ALIASES = {"array.write_empty_chunks": "write_empty_chunks", "array.order": "order",
           "threading.max_workers": "threads",
           "async.concurrency": "threads"}
#: zarr-python settings that switch on what zarrx always does: ``set`` takes them with that
#: value and changes nothing, ``get`` gives it; another value is refused, naming why
ALWAYS = {"array.rectilinear_chunks": (True, "zarrx always reads and writes rectilinear chunk "
                                             "grids"),
          "array.read_missing_chunks": (True, "zarrx always reads a chunk that is not stored "
                                              "as the fill value")}
# zarr-python settings zarrx has no counterpart for (named in the error)
_FOREIGN = ("array.target_shard_size_bytes",
            "array.sharding_coalesce_max_gap_bytes", "array.sharding_coalesce_max_bytes",
            "async.timeout", "json_indent", "codec_pipeline", "codecs", "buffer", "ndbuffer")
ENV_PREFIX = "ZARRX_"
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
_BOOLS = ("write_empty_chunks", "write_behind")
_lock = _fork.lock()     # settings are replaced whole under it: a child keeps them


def _name(key: object) -> str:
    from zarrx.errors import ArgumentKeyError as ArgumentError   # a KeyError, as zarr-python's

    if isinstance(key, str):
        if key in _DEFAULTS:
            return key
        if key in ALIASES:
            return ALIASES[key]
        if any(key == f or key.startswith(f + ".") for f in _FOREIGN):
            raise ArgumentError(f"zarrx.config: {key!r} is a zarr-python setting zarrx has no "
                                f"counterpart for; zarrx settings: {_known()}")
    raise ArgumentError(f"zarrx.config: unknown setting {key!r}; known: {_known()}")


def _known() -> str:
    return ", ".join([*sorted(_DEFAULTS), *sorted(ALIASES)])


_NO_DEFAULT = "__no_default__"       # zarr-python's (donfig's) marker of no default


def get(key: str, default: object = _NO_DEFAULT) -> object:
    """The value of setting ``key`` (a zarrx name or a zarr-python alias). An unknown key
    returns ``default`` when one is given, else raises :class:`~zarrx.errors.ArgumentKeyError`
    (a ``KeyError``, as zarr-python raises, and a ``ValueError``)."""
    name = key
    try:
        return _values[name]
    except (KeyError, TypeError):           # (TypeError: a key that cannot be one, a list)
        pass
    if isinstance(name, str) and name in ALIASES:
        return _values[ALIASES[name]]
    if isinstance(name, str) and name in ALWAYS:
        return ALWAYS[name][0]
    if default is not _NO_DEFAULT:
        return default
    return _values[_name(name)]         # raises, naming the key


def _check(name: str, value: object, key: str, env: bool = False) -> object:
    from zarrx.errors import ArgumentError

    key = f"environment variable {key}" if env else f"zarrx.config.{key}"
    if name == "threads":
        if value is None:
            return os.cpu_count() or 1
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ArgumentError(f"{key}: expected an int >= 1, found {value!r}")
    if name in _BOOLS and not isinstance(value, bool):
        expected = f"one of {', '.join(_TRUE + _FALSE)}" if env else "a bool"
        raise ArgumentError(f"{key}: expected {expected}, found {value!r}")
    if name == "default_zarr_format":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or \
                int(value) not in (2, 3):
            raise ArgumentError(f"{key}: expected 2 or 3, found {value!r}")
        return int(value)
    if name == "order" and (not isinstance(value, str) or value not in ("C", "F")):
        raise ArgumentError(f"{key}: expected 'C' or 'F', found {value!r}")
    if name == "consistency" and (not isinstance(value, str) or value not in CONSISTENCY):
        raise ArgumentError(f"{key}: expected one of {', '.join(CONSISTENCY)}, "
                            f"found {value!r}")
    if name == "memory_pool" and value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ArgumentError(f"{key}: expected None or an int >= 0 (bytes), "
                            f"found {value!r}")
    if name == "max_metadata_bytes" and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ArgumentError(f"{key}: expected an int >= 1 (bytes), found {value!r}")
    if name in ("shard_index_cache_bytes", "decoded_shard_cache_bytes") and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ArgumentError(f"{key}: expected an int >= 0 (bytes), found {value!r}")
    return value


def _from_env(name: str, text: str) -> object:
    """The value the environment variable for setting ``name`` gives it, before checking."""
    word = text.strip().lower()
    if name in ("threads", "memory_pool", "max_metadata_bytes", "shard_index_cache_bytes",
                "decoded_shard_cache_bytes", "default_zarr_format"):
        if word in ("", "none", "null") and name in ("threads", "memory_pool"):
            return None
        try:
            return int(word, 10)
        except ValueError:
            return text
    if name in _BOOLS:
        return True if word in _TRUE else False if word in _FALSE else text
    return text.strip()


def _environment(environ: Mapping[str, str]) -> dict[str, object]:
    """The defaults, with every setting that has an environment variable taken from it."""
    values = dict(_DEFAULTS)
    for name in _DEFAULTS:
        var = ENV_PREFIX + name.upper()
        if var in environ:
            values[name] = _check(name, _from_env(name, environ[var]), var, env=True)
    return values


_machine_pool: int | None = None
_POOL_HEADERS = 512 * 4096      # the header pages of the most blocks zarrx._outputs pools
#: called, without arguments, after ``memory_pool`` may have changed (the pools apply it)
_pool_watchers: list[Callable[[], None]] = []


def watch_pool(apply: Callable[[], None]) -> None:
    """Call ``apply()`` whenever ``memory_pool`` may have changed (``set``, the end of its
    context, ``refresh``), so that a pool gives back what it holds over the new limit at once
    rather than at its next use."""
    _pool_watchers.append(apply)


def _pool_changed() -> None:
    for apply in tuple(_pool_watchers):
        apply()


def machine_memory() -> int:
    """The machine's memory in bytes (0 when it cannot be told)."""
    try:
        return max(0, os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0


def pool_limit() -> int:
    """``memory_pool`` in bytes: its value (at most ``sys.maxsize``: more than any process can
    hold), or by default an eighth of the machine's memory, at most 1 GiB (256 MiB when the
    memory cannot be told), plus 2 MiB for the pages the read-output pool keeps before its
    blocks' data."""
    global _machine_pool
    value = get("memory_pool")
    if value is not None:
        return min(value, sys.maxsize)          # any more is more than a machine has
    if _machine_pool is None:
        total = machine_memory() or 2 << 30
        # with room for the page each pooled read output keeps before its data (at most
        # _POOL_HEADERS of them), so that an output of the whole default size is kept
        _machine_pool = min(1 << 30, max(0, total // 8)) + _POOL_HEADERS
    return _machine_pool


def refresh() -> None:
    """Give every setting its default again, or the value of its environment variable
    (``ZARRX_THREADS``...) where that is set, as zarr-python's ``zarr.config.refresh()`` does
    with its own variables. Contexts of ``set`` that are still open restore their old values
    when they end."""
    values = _environment(os.environ)
    with _lock:
        _values.update(values)
    _pool_changed()


reset = refresh


def _flatten(mapping: Mapping, prefix: str = "") -> Iterator[tuple[str, object]]:
    for key, value in mapping.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping) and full not in _DEFAULTS and full not in ALIASES and \
                full not in ALWAYS:
            yield from _flatten(value, full + ".")
        else:
            yield full, value


@contextlib.contextmanager
def _restore(old: dict) -> Iterator[None]:
    try:
        yield
    finally:
        with _lock:
            _values.update(old)
        if "memory_pool" in old:
            _pool_changed()


def set(arg: Mapping[str, object] | None = None,  # noqa: A001
        **settings: object) -> contextlib.AbstractContextManager[None]:
    """Change settings now; the returned context manager gives the settings this call changed
    back the values they had before it, on exit (as zarr-python's does): a setting changed
    meanwhile by another call, on this thread or another, keeps its value. Every setting is
    checked before any is changed."""
    from zarrx.errors import ArgumentError, ArgumentTypeError

    mapping = arg
    if mapping is not None and not isinstance(mapping, Mapping):
        raise ArgumentTypeError(f"zarrx.config.set: expected a mapping of settings, found "
                                f"{type(mapping).__name__} {mapping!r}")
    pairs = [*_flatten(mapping or {}), *settings.items()]
    checked: dict[str, object] = {}
    keys: dict[str, str] = {}
    for key, value in pairs:
        if isinstance(key, str) and key in ALWAYS:
            fixed, why = ALWAYS[key]
            if type(value) is not type(fixed) or value != fixed:
                raise ArgumentError(f"zarrx.config.{key}: expected {fixed!r} ({why}; there is "
                                    f"no setting to change that), found {value!r}")
            continue
        name = _name(key)
        value = _check(name, value, key)
        if name in checked and checked[name] != value:
            raise ArgumentError(f"zarrx.config.set: {keys[name]!r} and {key!r} both set "
                                f"{name!r}, to {checked[name]!r} and {value!r}")
        checked[name], keys[name] = value, key
    with _lock:
        old = {name: _values[name] for name in checked}
        _values.update(checked)
    if "memory_pool" in checked:
        _pool_changed()
    return _restore(old)


def to_dict() -> dict[str, object]:
    """Every zarrx setting and its current value, by zarrx's names (a copy), as zarr-python's
    ``zarr.config.to_dict()`` gives its own settings."""
    with _lock:
        return dict(sorted(_values.items()))


def pprint(**kwargs: object) -> None:
    """Print :func:`to_dict` with :func:`pprint.pprint`, which takes the keywords (``stream=``,
    ``width=``, ...), as zarr-python's ``zarr.config.pprint`` does."""
    import pprint as _pprint

    _pprint.pprint(to_dict(), **kwargs)


def __getattr__(name: str) -> object:
    try:
        return _values[name]
    except KeyError:
        raise AttributeError(name) from None


class _Settings(types.ModuleType):
    """This module's type: assigning a setting (``zarrx.config.threads = 1``) changes it, as
    ``set`` does (without a context to restore it), instead of hiding it behind a module
    attribute that nothing reads."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _DEFAULTS:
            set(**{name: value})
            return
        super().__setattr__(name, value)

    def __reduce__(self) -> tuple:
        # pickled as its import, as pickle libraries treat plain modules (cloudpickle sends
        # this one along with any function pickled by value whose code names ``config``)
        return importlib.import_module, (self.__name__,)


_values = _environment(os.environ)
sys.modules[__name__].__class__ = _Settings
