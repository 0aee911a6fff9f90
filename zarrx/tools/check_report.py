"""What :func:`zarrx.tools.check.check` reports: each problem found (:class:`Finding`, of one of
the :data:`KINDS`) and the report of a check and its repairs (:class:`CheckReport`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from zarrx.errors import StoreError
from zarrx.store import ZipStore

__all__ = ["CheckReport", "Finding", "KINDS", "not_handed_over", "age_text", "FAILED"]

KINDS = ("metadata", "unsupported", "corrupt", "torn", "orphaned", "stale", "unreadable",
         "temporary")


def not_handed_over(store: Any, exc: BaseException) -> bool:
    """Whether the failed read ``exc`` of an object of ``store`` is the store's failing to hand
    its bytes over (no read permission, an I/O error, a request that failed): its data may be
    sound. The rest are damaged bytes: those that do not decode or whose checksum does not
    match, and a zip entry failing the archive's own checks (its CRC-32, its headers)."""
    if not isinstance(exc, StoreError):
        return False
    return not isinstance(store, ZipStore) or isinstance(exc.__cause__, OSError)


@dataclass(frozen=True)
class Finding:
    """One problem: its ``kind`` (see :data:`KINDS`), the store ``key`` (for a temporary file,
    its path below the store's root), the ``node`` it belongs to, the inner chunk (``inner``,
    for a problem inside a shard) and what is wrong (``detail``)."""

    kind: str
    key: str
    node: str
    detail: str
    inner: str | None = None
    #: the object's generation when it was found (a repair touches only that version)
    generation: Any = field(default=None, compare=False, repr=False)
    #: False for an object the store cannot address by its name (a file name that is not
    #: UTF-8, say): ``key`` shows the name escaped, and a repair leaves it alone
    removable: bool = field(default=True, compare=False, repr=False)
    #: True for an orphaned object that is not a chunk outside its array's grid: what no node
    #: names may still be data (a node whose metadata was lost), removed only on request
    stray: bool = field(default=False, compare=False, repr=False)
    #: True when ``detail`` names the key itself (a metadata document's parse error names the
    #: document), which the finding's text then does not repeat
    named: bool = field(default=False, compare=False, repr=False)

    def __str__(self) -> str:
        if self.named:
            return f"{self.kind}: {self.detail}"
        inner = f" inner chunk {self.inner}" if self.inner is not None else ""
        return f"{self.kind}: {self.key}{inner}: {self.detail}"


#: control characters of stored names, escaped in the report's text (never printed raw)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _escaped(match: re.Match) -> str:
    return f"\\x{ord(match.group()):02x}"


def age_text(seconds: float) -> str:
    """An age as a report gives it: ``90 s``, ``12 min``, ``2.0 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


#: how a repair that failed begins its line of ``CheckReport.repairs``
FAILED = "could not repair "


@dataclass
class CheckReport:
    """What :func:`check` found (``findings``) and, with ``repair``, did (``repairs``: one line
    per action; ``repaired``: the findings dealt with)."""

    location: str
    arrays: int = 0
    groups: int = 0
    objects: int = 0
    findings: list[Finding] = field(default_factory=list)
    repaired: list[Finding] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    recent_temporary: list[str] = field(default_factory=list)
    #: how the check went about it where that limits what it can find (a store that offers
    #: no listing)
    notes: list[str] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        """True when nothing was found."""
        return not self.findings

    @property
    def remaining(self) -> list[Finding]:
        """The findings not repaired."""
        done = set(map(id, self.repaired))
        return [f for f in self.findings if id(f) not in done]

    def counts(self) -> dict[str, int]:
        return {k: sum(f.kind == k for f in self.findings) for k in KINDS}

    def __str__(self) -> str:
        lines = [f"checked {self.location}: {self.groups} groups, {self.arrays} arrays, "
                 f"{self.objects} stored objects in {self.elapsed:.1f} s"]
        lines += [f"  note: {n}" for n in self.notes]
        lines += [f"  {_CONTROL.sub(_escaped, str(f))}" for f in self.findings]
        lines += [f"  left alone (recent, a writer may be running): temporary file {p}"
                  for p in self.recent_temporary]
        lines += [f"  not repaired: {r[len(FAILED):]}" if r.startswith(FAILED) else
                  f"  repaired: {r}" for r in self.repairs]
        counts = ", ".join(f"{n} {k}" for k, n in self.counts().items() if n)
        if not self.findings:
            lines.append("no problems found")
        else:
            left = len(self.remaining)
            lines.append(f"found {counts}; " + (f"{left} not repaired" if left else
                                                 "all repaired"))
        return "\n".join(lines)
