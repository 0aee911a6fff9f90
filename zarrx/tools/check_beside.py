"""What ``check`` finds beside a node at the top of its store, outside the store it opens: the
hidden folders a killed ``copy`` or ``convert --overwrite`` of the node left (see
:mod:`zarrx.tools.swap`). Those whose record proves them a swap's leftovers of this node are
``temporary`` findings a repair removes once nothing in them is newer than ``temp_age``; a
folder only named as one is reported and left alone."""
from __future__ import annotations

import os
import time

from zarrx.store import LocalStore
from zarrx.tools.check_report import FAILED, CheckReport, Finding, age_text
from zarrx.tools.local_entries import newest
from zarrx.tools.location import Location
from zarrx.tools.swap import leftovers, remove_leftover

__all__ = ["check_beside"]

_HOLDS = {
    "new": "the new node a zarrx copy or convert --overwrite of {name!r} was writing when it "
           "was killed ({name!r} is as it was)",
    "old": "the old node a zarrx copy or convert --overwrite of {name!r} was removing when it "
           "was killed ({name!r} holds the new one)",
}


def check_beside(loc: Location, report: CheckReport, temp_age: float, repair: bool) -> None:
    """Add the findings beside the node of ``loc`` when it is a local store's root (and, with
    ``repair``, remove the proven leftovers)."""
    if loc.path or not isinstance(loc.store, LocalStore):
        return
    root = os.path.abspath(os.fspath(loc.store.root))
    name = os.path.basename(root)
    now = time.time()
    for path, holds in leftovers(root):
        try:
            age = now - newest(path)
        except OSError:
            continue                            # gone meanwhile
        if age < temp_age:
            report.recent_temporary.append(path)
            continue
        if holds is None:
            report.findings.append(Finding(
                "temporary", path, "/",
                f"a hidden folder named as zarrx copy and convert --overwrite name the folder "
                f"they write a new {name!r} in, left {age_text(age)} ago, but without the "
                f"record that proves it theirs (an earlier zarrx wrote none): left alone, "
                f"remove it if it is one", removable=False))
            continue
        found = Finding("temporary", path, "/", f"a hidden folder holding "
                        f"{_HOLDS[holds].format(name=name)}, left {age_text(age)} ago")
        report.findings.append(found)
        if not repair:
            continue
        try:
            removed = remove_leftover(path, name, holds, temp_age)
        except OSError as exc:
            report.repairs.append(f"{FAILED}{path}: {exc.strerror or exc}")
            continue
        if removed:
            report.repaired.append(found)
            report.repairs.append(f"removed the hidden folder {path}")
