"""LocalStore key safety: keys that could name a path outside the root are refused and create
nothing, and listing and members stay below the root."""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.errors import StoreError, ZarrUserWarning
from zarrx.store import ByteRange, LocalStore

from .local_helpers import tree
from .local_helpers import store  # noqa: F401  (a fixture)


DOTDOT = "found a '..' segment; keys may not step outside their directory"
DOT = "found a '.' segment; keys may not step outside their directory"
LEADING = "found a leading '/'; keys are relative to the store root"
EMPTY_SEG = "found an empty segment ('//' or a trailing '/')"
BACKSLASH = "found a backslash; '/' is the only separator"
HOSTILE = {
    "dotdot": ("..", DOTDOT),
    "dotdot-escape": ("../escape", DOTDOT),
    "dotdot-deep-escape": ("a/../../escape", DOTDOT),
    "dotdot-last": ("a/..", DOTDOT),
    "dot": (".", DOT),
    "dot-middle": ("a/./b", DOT),
    "absolute": ("/etc/passwd", LEADING),
    "absolute-root": ("/", LEADING),
    "absolute-escape": ("/../escape", LEADING),
    "empty": ("", "expected a non-empty key"),
    "double-slash": ("a//b", EMPTY_SEG),
    "trailing-slash": ("a/", EMPTY_SEG),
    "backslash": ("a\\b", BACKSLASH),
    "backslash-escape": ("..\\escape", BACKSLASH),
    "nul": ("a\x00b", "found a NUL character"),
    "newline": ("a\nb", "found the control character '\\n'"),
    "escape-char": ("a\x1b[2J", "found the control character '\\x1b'"),
    "delete-char": ("a\x7f", "found the control character '\\x7f'"),
    "long-segment": ("x" * 256, "found a segment of 256 bytes; at most 255 bytes are allowed"),
    "long-utf8-segment": ("a/" + "é" * 128,
                          "found a segment of 256 bytes; at most 255 bytes are allowed"),
    "lone-surrogate": ("a\udc80", "found characters that are not encodable as UTF-8"),
    "temp-prefix": (".zarrx-tmp-0123", "found the reserved marker '.zarrx-tmp-'"),
    "temp-prefix-nested": ("a/.zarrx-tmp-x/b", "found the reserved marker '.zarrx-tmp-'"),
    "temp-name": ("a/.k.zarrx-tmp-12-0a1b", "found the reserved marker '.zarrx-tmp-'"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_key_is_refused(tmp_path, store, name):
    key, problem = HOSTILE[name]
    store.set("ok/value", b"1")                         # the root and a subfolder exist
    before = tree(tmp_path), sorted(os.listdir(tmp_path.parent))
    message = f"{store!r}: key {key!r}: {problem}"
    calls = [lambda: store.set(key, b"x"), lambda: store.get(key),
             lambda: store.get(key, ByteRange.last(1)), lambda: store.delete(key),
             lambda: store.exists(key), lambda: store.get_many([(key, None), ("ok/value", None)])]
    for call in calls:
        with pytest.raises(StoreError) as info:
            call()
        assert str(info.value) == message
    assert (tree(tmp_path), sorted(os.listdir(tmp_path.parent))) == before


@pytest.mark.parametrize("key", ["C:", "C:/Windows/x", "a/d:escape", "x:1/zarr.json"])
def test_a_drive_letter_is_an_ordinary_name_on_posix(tmp_path, key):
    """On POSIX file systems ``C:`` names a file below the root like any other (zarr-python
    creates children such as ``x:1``): stored, listed and read there."""
    store = LocalStore(tmp_path / "root")
    store.set(key, b"v")
    assert store.get(key) == b"v" and list(store.list_prefix("")) == [key]
    assert (tmp_path / "root" / key).read_bytes() == b"v"
    store.delete(key)
    assert store.get(key) is None


def test_a_child_the_store_refuses_is_left_out_of_members_with_a_warning(tmp_path):
    """A folder named with a control character (which zarr-python writes) no longer makes
    listing the members of its group fail: it is left out, with a warning naming it."""
    import zarrx
    root = tmp_path / "g.zarr"
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("ok", shape=(2,), dtype="i4")
    g.create_array("x:1", shape=(2,), dtype="i4", fill_value=3)
    (root / "t\x01").mkdir()
    (root / "t\x01" / "zarr.json").write_bytes((root / "ok" / "zarr.json").read_bytes())
    store = LocalStore(root, read_only=True)
    assert store.key_problem("t\x01") == "found the control character '\\x01'"
    assert store.key_problem("x:1") is None
    group = zarrx.open_group(str(root), mode="r")
    with pytest.warns(ZarrUserWarning) as record:
        assert [n for n, _ in group.members()] == ["ok", "x:1"]
    assert [str(w.message) for w in record] == [
        f"{group.store!r}: skipping the child 't\\x01': found the control character '\\x01'"]
    assert group["x:1"][...].tolist() == [3, 3]
    with pytest.warns(ZarrUserWarning):
        assert zarrx.consolidate_metadata(str(root)).keys() is not None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="a./\\:C\x00\né~", max_size=12))
def test_accepted_keys_stay_below_the_root(key):
    store = LocalStore("/srv/root")
    try:
        path = store._path(key)
    except StoreError:
        return
    assert os.path.normpath(path) == path and path.startswith("/srv/root/")
    assert path[len("/srv/root/"):].split(os.sep) == key.split("/")


def test_non_str_key_message(store):
    with pytest.raises(StoreError) as info:
        store.set(b"bytes", b"x")  # type: ignore[arg-type]
    assert str(info.value) == f"{store!r}: key b'bytes': expected str, found bytes"


def test_hostile_prefixes_list_nothing(tmp_path, store):
    store.set("a/b", b"1")
    (tmp_path / "outside").write_bytes(b"secret")
    for prefix in ("../", "../outside", "/", "/a", "a/../", "a\\", "C:/"):
        assert list(store.list_prefix(prefix)) == []
        assert store.list_dir(prefix) == ([], [])
