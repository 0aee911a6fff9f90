"""Settings of a remote store: concurrency, coalescing, splitting, retries, timeouts."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from zarrx.errors import StoreError

__all__ = ["RemoteOptions", "duration_ms"]

KiB, MiB = 1 << 10, 1 << 20
#: the longest wait a backend is given, in seconds (about 31 years): a timeout of 0 ("no
#: limit") or longer is this
LONGEST = 10 ** 9


def duration_ms(seconds: float) -> int:
    """``seconds`` of a timeout as whole milliseconds (at least 1), for backends that take
    durations; 0 (no limit) and anything longer than :data:`LONGEST` is ``LONGEST``."""
    if seconds <= 0 or seconds > LONGEST:
        seconds = LONGEST
    return max(1, round(seconds * 1000))


@dataclass(frozen=True, slots=True)
class RemoteOptions:
    """How a remote store issues its requests.

    - ``in_flight``: the most requests one store keeps in flight at once (all calls together).
    - ``coalesce_gap``: two ranges of one object at most this many bytes apart are read with
      one request (the gap's bytes are read and dropped).
    - ``max_request``: a coalesced request never grows past this many bytes.
    - ``part_size``: a read of at least two parts is split into parts of this size fetched in
      parallel; a whole object of unknown size is read as its first part, then the rest.
    - ``min_part_size``: the ranges of a batch that would leave some of ``in_flight`` idle in
      parts of ``part_size`` are split into smaller parts, down to this size, so that the
      batch's bytes stream over every request the store may keep in flight (a link that
      limits each connection's speed then gives the whole batch more of it).
    - ``multipart_threshold``: values at least this large are uploaded in parts of
      ``part_size`` (where the backend offers multipart uploads), or of less (down to
      ``min_part_size`` and the 5 MiB object stores require) when fewer parts would leave
      some of ``in_flight`` idle.
    - ``tail_prefetch``: a snapshot reads this many trailing bytes in its first request, so a
      shard's trailing index (and the inner chunks near it) need no other request.
    - ``revalidate_after``: a snapshot of an object this store read or wrote less than this
      many seconds ago starts at the generation (ETag) seen then, without a request; its reads
      are still conditioned on it, so a change is found by its first ranged read (0: every
      snapshot starts with a request).
    - ``batch_delay``: snapshot reads of one object version arriving within this many seconds
      (from several threads or tasks reading parts of one shard at once) are combined, so their
      ranges coalesce. 0 (the default) sends each read at once: one array read already fetches
      each shard in one call.
    - ``retries``, ``backoff``, ``max_backoff``: transient failures (timeouts, dropped
      connections, HTTP 429 and 5xx) are retried up to ``retries`` times, waiting
      ``backoff * 2**attempt`` seconds (at most ``max_backoff``, with jitter) in between, or
      the seconds the server's ``Retry-After`` asks for (at most ``max_backoff``) where the
      backend shows that header (FsspecStore; obstore hides it).
    - ``timeout``, ``connect_timeout``: seconds for a whole request and for connecting (0: no
      limit).
    - ``conditional_writes``: whether the server honours conditional writes (If-Match /
      If-None-Match on PUT and DELETE). None: the backend's known default.
    - ``max_listed``: the most keys one listing takes from the server (all its pages
      together); a server that goes on naming new keys behind its continuation tokens (or
      its folder pages) fails the listing with a RemoteError once it passes this, rather
      than being listed without end in time and memory.
    - ``forbidden_is_missing``: a read answered with HTTP 403 reads as a missing key, for
      servers that answer 403 where a key is missing (S3 to a client without list
      permission, many static web hosts). Off by default: a 403 also means credentials that
      are wrong or missing, which would then read as fill values.
    """

    in_flight: int = 64
    coalesce_gap: int = 512 * KiB
    max_request: int = 32 * MiB
    part_size: int = 8 * MiB
    min_part_size: int = 4 * MiB
    multipart_threshold: int = 64 * MiB
    tail_prefetch: int = 64 * KiB
    revalidate_after: float = 1.0
    batch_delay: float = 0.0
    retries: int = 4
    backoff: float = 0.1
    max_backoff: float = 5.0
    timeout: float = 60.0
    connect_timeout: float = 10.0
    conditional_writes: bool | None = None
    max_listed: int = 10_000_000
    forbidden_is_missing: bool = False

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "conditional_writes":
                if v is not None and not isinstance(v, bool):
                    raise StoreError(f"RemoteOptions.conditional_writes: expected True, False "
                                     f"or None, found {v!r}")
                continue
            if f.name == "forbidden_is_missing":
                if not isinstance(v, bool):
                    raise StoreError(f"RemoteOptions.forbidden_is_missing: expected True or "
                                     f"False, found {v!r}")
                continue
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            if f.type == "int" and not isinstance(v, int):
                ok = False
            if not ok:
                raise StoreError(f"RemoteOptions.{f.name}: expected a non-negative "
                                 f"{f.type}, found {v!r}")
            if f.type == "float" and not math.isfinite(v):
                # (a backend's duration cannot hold it; 0 is "no limit" for the timeouts)
                raise StoreError(f"RemoteOptions.{f.name}: expected a finite number of "
                                 f"seconds, found {v!r}")
        for name in ("in_flight", "part_size", "min_part_size", "max_request", "max_listed"):
            if getattr(self, name) < 1:
                raise StoreError(f"RemoteOptions.{name}: expected at least 1, found "
                                 f"{getattr(self, name)!r}")

    @classmethod
    def make(cls, options: RemoteOptions | dict | None = None, **overrides: object
             ) -> RemoteOptions:
        """Options from an instance, a dict of field values, or None (the defaults), with
        ``overrides`` applied; unknown names raise StoreError."""
        if isinstance(options, RemoteOptions):
            base = dataclasses.asdict(options)
        elif options is None:
            base = {}
        elif isinstance(options, dict):
            base = dict(options)
        else:
            raise StoreError(f"remote options: expected a RemoteOptions or a dict, found "
                             f"{type(options).__name__}")
        base.update(overrides)
        known = {f.name for f in dataclasses.fields(cls)}
        if unknown := sorted(set(base) - known):
            raise StoreError(f"remote options: unknown setting(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(known))}")
        return cls(**base)  # type: ignore[arg-type]

