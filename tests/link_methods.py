"""A fixture for tests of the local write kernel: each way it names a file it wrote (see
``zarrx.store._localwrite.link_method``). Import ``linking`` into a test module to use it."""
from __future__ import annotations

import pytest

from zarrx.store._localwrite import link_method, set_link_method


@pytest.fixture(params=["fd", "proc", "none"])
def linking(request):
    before = link_method()
    set_link_method(request.param)
    yield request.param
    set_link_method(before)
