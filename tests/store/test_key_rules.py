"""The key rules of path-safe stores (``zarrx.store.inputs.key_problem``): its quick match for
plain keys judges every key exactly as the full checks do."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.store.inputs import _problem, key_problem

_SEGMENTS = st.one_of(st.sampled_from([".", "..", "...", ".zarray", "c", "0", "a-b_c", ""]),
                      st.text(alphabet="aZ9.-_\\:\x00\n\x7fé", max_size=6),
                      st.integers(250, 260).map(lambda n: "x" * n))


@settings(max_examples=500, deadline=None)
@given(st.lists(_SEGMENTS, min_size=1, max_size=6), st.booleans(), st.booleans())
def test_the_quick_match_agrees_with_the_full_checks(segments, lead, files):
    key = ("/" if lead else "") + "/".join(segments)
    assert key_problem(key, files=files) == _problem(key, files)


def test_plain_keys_and_their_neighbours():
    assert key_problem("group/array/c/0/1") is None
    assert key_problem("a/.../.zattrs") is None
    assert key_problem("x" * 255) is None
    assert key_problem("x" * 256) == "found a segment of 256 bytes; at most 255 bytes are allowed"
    assert key_problem("a/../b") == "found a '..' segment; keys may not step outside their " \
                                    "directory"
    assert key_problem("./a") == "found a '.' segment; keys may not step outside their directory"
    assert key_problem("a//b") == "found an empty segment ('//' or a trailing '/')"
    assert key_problem("a/") == "found an empty segment ('//' or a trailing '/')"


def _lines_run(key: str, files: bool) -> tuple[str | None, int]:
    """What ``_problem`` says of ``key``, and how many of its lines ran."""
    import sys
    count = 0

    def local(frame, event, arg):
        nonlocal count
        count += event == "line"
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code is _problem.__code__ else None

    sys.settrace(tracer)
    try:
        got = _problem(key, files)
    finally:
        sys.settrace(None)
    return got, count


@pytest.mark.parametrize("tail", ["zarr.json", "../zarr.json", "x" * 300, "a//b", "a/"])
@pytest.mark.parametrize("files", [True, False], ids=["files", "objects"])
def test_a_key_of_many_segments_costs_no_step_per_segment(tail, files):
    """A key 3,000 groups deep is checked by scans of the whole key: as many lines of the
    checks run as for a key 200 groups deep (before: a loop over its segments, so that listing
    every level of such a hierarchy spent about 1 s on its keys' checks)."""
    shallow, deep = _lines_run("g/" * 200 + tail, files), _lines_run("g/" * 3000 + tail, files)
    assert deep == shallow
