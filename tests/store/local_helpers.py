"""What the LocalStore tests share: a store in a temporary folder, a store that writes every
object through the Python path, and the files and folders below a path."""
import os

import pytest

from zarrx.store import LocalStore


class PythonWrites(LocalStore):
    """Every write through the Python path (as for keys the write kernel does not take)."""
    _put = None


@pytest.fixture
def store(tmp_path):
    return LocalStore(tmp_path / "root")


def tree(path):
    """Every file and directory below ``path``, relative to it."""
    out = set()
    for folder, dirs, files in os.walk(path):
        rel = os.path.relpath(folder, path)
        out.update(os.path.join(rel, n) for n in dirs + files)
    return out
