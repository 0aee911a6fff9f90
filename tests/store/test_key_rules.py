"""The key rules of path-safe stores (``zarrx.store.inputs.key_problem``): its quick match for
plain keys judges every key exactly as the full checks do."""
from __future__ import annotations

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
