"""What the model-based tests of test_stateful_*.py share: their hypothesis settings (a fast
run, and a slow one with ``ZARRX_SLOW=1``; ``ZARRX_STATEFUL_EXAMPLES`` sets how many examples),
comparing with the model, and zarr-python reading the same store."""
from __future__ import annotations

import contextlib
import os
import shutil
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from zarrx.store import MemoryStore

zarr = pytest.importorskip("zarr")
from zarr.core.buffer import default_buffer_prototype  # noqa: E402


FAST = settings(max_examples=20, stateful_step_count=20, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))
# the slow run is derandomized too, so that a run passes or fails for the code alone;
# a larger ZARRX_STATEFUL_EXAMPLES explores further
SLOW = settings(FAST, max_examples=int(os.environ.get("ZARRX_STATEFUL_EXAMPLES", "120")),
                stateful_step_count=30)


def same(got: Any, expected: Any, dtype: np.dtype | None = None) -> None:
    """Equal shapes and values (NaN and NaT equal to themselves); one cell of variable-length
    strings comes as a str, as numpy gives it."""
    expected = np.asarray(expected, dtype=dtype)
    got = np.asarray(got, dtype=expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert np.array_equal(got, expected, equal_nan=expected.dtype.kind in "fcmM"), \
        (got, expected)


def zarr_python_store(store: Any, path: str | None) -> Any:
    """What zarr-python opens to read ``store``: a copy of a MemoryStore's objects, else the
    directory or archive at ``path``."""
    if isinstance(store, MemoryStore):
        make = default_buffer_prototype().buffer.from_bytes
        return zarr.storage.MemoryStore({k: make(store.get(k)) for k in store.list_prefix("")})
    if path.endswith(".zip"):
        return zarr.storage.ZipStore(path, mode="r")
    return zarr.storage.LocalStore(path, read_only=True)


@contextlib.contextmanager
def quiet():
    """zarr-python warns about v3 consolidated metadata and other things it reads."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _finish(machine: Any, handle: str) -> None:
    """A machine's last check (zarr-python reads what it holds), then its store closed and its
    directory removed."""
    if hasattr(machine, handle):
        machine.check_zarr_python()
        if machine.kind == "zip":
            machine.store.close()
    shutil.rmtree(getattr(machine, "tmp", ""), ignore_errors=True)


def model_tests(machines: list) -> tuple[Any, Any]:
    """The two tests of a list of state machines: a short run of each (every test run) and a
    long one (``ZARRX_SLOW=1``), parametrised by machine name."""
    from hypothesis.stateful import run_state_machine_as_test

    by_name = pytest.mark.parametrize("machine", machines, ids=lambda m: m.__name__)

    @by_name
    def test_operations_match_the_model(machine):  # type: ignore[no-untyped-def]
        run_state_machine_as_test(machine, settings=FAST)

    @by_name
    @pytest.mark.slow
    @pytest.mark.skipif(not os.environ.get("ZARRX_SLOW"), reason="set ZARRX_SLOW=1 to run")
    def test_many_operations_match_the_model(machine):  # type: ignore[no-untyped-def]
        run_state_machine_as_test(machine, settings=SLOW)

    return test_operations_match_the_model, test_many_operations_match_the_model
