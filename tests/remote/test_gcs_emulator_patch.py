"""The tests' GCS server is gcp-storage-emulator with two handlers changed (suffix ranges and
listings in pages, as GCS answers them). A release whose handlers are not where the change
expects them stops with its own status, which fails the GCS tests rather than skipping them
as a server that cannot start here (before: an AttributeError, and every GCS test skipped)."""
from __future__ import annotations

import subprocess
import sys

import pytest
from remote.conftest import _CHANGED, _GCS_EMULATOR

_MAIN = "def main():\n    return 0\n"
_SERVER = ("from gcp_storage_emulator.handlers import objects\n"
           "HANDLERS = ((r'^/o$', {'GET': %s}),)\n")


@pytest.mark.parametrize("objects, handler", [
    ("def download(*a): pass\n", "objects.download"),                  # no ls
    ("def download(*a): pass\ndef ls(*a): pass\n", "lambda *a: None"),  # not the handlers
    ("def download(*a): pass\ndef ls(*a): pass\n", "objects.ls"),       # the download not
])
def test_an_emulator_release_the_change_does_not_fit_stops_with_its_status(
        tmp_path, objects, handler):
    pkg = tmp_path / "gcp_storage_emulator"
    (pkg / "handlers").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(_MAIN)
    (pkg / "server.py").write_text(_SERVER % handler)
    (pkg / "handlers" / "__init__.py").write_text("")
    (pkg / "handlers" / "objects.py").write_text(objects)
    done = subprocess.run([sys.executable, "-c", _GCS_EMULATOR], cwd=tmp_path,
                          capture_output=True, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == _CHANGED, done.stderr.decode()[-400:]


def test_an_emulator_release_the_change_fits_runs(tmp_path):
    pkg = tmp_path / "gcp_storage_emulator"
    (pkg / "handlers").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(_MAIN)
    (pkg / "server.py").write_text(
        "from gcp_storage_emulator.handlers import objects\n"
        "HANDLERS = ((r'^/o$', {'GET': objects.ls}), (r'^/d$', {'GET': objects.download}))\n")
    (pkg / "handlers" / "__init__.py").write_text("")
    (pkg / "handlers" / "objects.py").write_text("def download(*a): pass\ndef ls(*a): pass\n")
    done = subprocess.run([sys.executable, "-c", _GCS_EMULATOR], cwd=tmp_path,
                          capture_output=True, env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr.decode()[-400:]
