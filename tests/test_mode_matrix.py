"""Opening nodes in every mode over what a store already holds, next to zarr-python.

Each store state is made with zarr-python in a fresh directory, and the same call runs on it
through zarr-python and zarrx. Where zarr-python writes a node of the other Zarr format over an
existing one (two metadata documents for one path), or creates under an array, zarrx refuses;
the cases below check zarrx's error names what is in the way.
"""
from __future__ import annotations

import os
import warnings

import pytest

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # zarr-python's v3 and consolidated warnings
        yield


def make(state: str, root: str) -> str:
    """A directory holding ``state`` at ``x`` (or under the array ``a``)."""
    os.makedirs(root)
    store = zarr.storage.LocalStore(root)
    if state.startswith("array"):
        zarr.create_array(store, name="x", shape=(3,), dtype="i2", zarr_format=int(state[-1]))
    elif state.startswith("group"):
        zarr.create_group(store, path="x", zarr_format=int(state[-1]))
    elif state == "children":                 # a group's child, but no document at x or /
        zarr.create_group(store, path="x/y")
        os.remove(os.path.join(root, "zarr.json"))
        os.remove(os.path.join(root, "x", "zarr.json"))
    elif state == "under array":
        zarr.create_array(store, name="a", shape=(3,), dtype="i2")
    return root


def outcome(lib, call, state, tmp_path):
    root = make(state, str(tmp_path / lib.__name__))
    try:
        node = call(lib, root)
    except Exception as exc:  # noqa: BLE001 - compared by the test
        return exc
    return type(node).__name__, node.path, node.metadata.zarr_format


# (call, state, zarr-python's exception class): zarrx raises a ZarrError of the builtin
# classes it is, and of zarrx's class of that name where zarrx has one
AGREE = [
    (lambda L, s: L.open(s, path="x", mode="w-"), "children", FileExistsError),
    (lambda L, s: L.open(s, path="x", mode="w-", shape=(2,), dtype="i4"), "children",
     FileExistsError),
    (lambda L, s: L.open_array(s, path="x", mode="w-"), "children", FileExistsError),
    (lambda L, s: L.open_array(s, path="x", mode="w-", shape=(2,), dtype="i4"), "children",
     FileExistsError),
    (lambda L, s: L.open_group(s, path="x", mode="w-"), "children", FileExistsError),
    (lambda L, s: L.open(s, path="x", mode="r", shape=(2,), dtype="i4"), "nothing",
     zarr.errors.ArrayNotFoundError),
    (lambda L, s: L.open(s, path="x", mode="r+", shape=(2,), dtype="i4"), "children",
     zarr.errors.ArrayNotFoundError),
    (lambda L, s: L.open(s, path="x", mode="r"), "nothing", zarr.errors.GroupNotFoundError),
    (lambda L, s: L.open_group(s, path="x", mode="r", zarr_format=3), "array2",
     zarr.errors.GroupNotFoundError),
    (lambda L, s: L.open_array(s, path="x", mode="r+", zarr_format=2), "group3",
     zarr.errors.ArrayNotFoundError),
    (lambda L, s: L.open(s, path="x", mode="r", zarr_format=3, shape=(2,)), "array2",
     zarr.errors.ArrayNotFoundError),
    (lambda L, s: L.open(s, path="x", mode="r", zarr_format=2), "group3",
     zarr.errors.GroupNotFoundError),
]


@pytest.mark.parametrize("call, state, cls", AGREE)
def test_errors_agree_with_zarr_python(call, state, cls, tmp_path):
    found = {lib.__name__: outcome(lib, call, state, tmp_path) for lib in (zarr, zarrx)}
    assert type(found["zarr"]) is cls, found["zarr"]
    builtins = [c for c in cls.__mro__ if c.__module__ == "builtins" and c is not object]
    expected = getattr(zarrx.errors, cls.__name__, zarrx.ZarrError)
    assert all(isinstance(found["zarrx"], c)
               for c in (expected, zarrx.ZarrError, builtins[0])), found["zarrx"]
    assert len(os.listdir(tmp_path / "zarrx")) == len(os.listdir(tmp_path / "zarr"))


def test_mode_w_minus_refuses_objects_below_the_path_and_writes_nothing(tmp_path):
    root = make("children", str(tmp_path / "s"))
    for call in (lambda: zarrx.open(root, path="x", mode="w-"),
                 lambda: zarrx.open_group(root, path="x", mode="w-"),
                 lambda: zarrx.open_array(root, path="x", mode="w-", shape=(2,), dtype="i4")):
        with pytest.raises(zarrx.errors.NodeExistsError) as info:
            call()
        assert str(info.value).endswith(
            f"mode 'w-' creates a node at 'x' in LocalStore({root!r}), but the store holds "
            f"'x/y/zarr.json' there (mode 'w' replaces it)")
    assert sorted(os.listdir(root)) == ["x"] and os.listdir(os.path.join(root, "x")) == ["y"]
    assert zarrx.open(root, path="x", mode="w").metadata.zarr_format == 3
    assert zarrx.open_group({}, mode="w-").path == ""           # an empty store is free


@pytest.mark.parametrize("fn, state, fmt, cls, found", [
    ("open", "array2", 3, zarrx.errors.ContainsArrayError, "Zarr v2 array"),
    ("open_group", "array2", 3, zarrx.errors.ContainsArrayError, "Zarr v2 array"),
    ("open_group", "group2", 3, zarrx.errors.ContainsGroupError, "Zarr v2 group"),
    ("open", "group3", 2, zarrx.errors.ContainsGroupError, "Zarr v3 group"),
    ("open_array", "group3", 2, zarrx.errors.ContainsGroupError, "Zarr v3 group"),
    ("open_array", "array3", 2, zarrx.errors.ContainsArrayError, "Zarr v3 array"),
])
def test_mode_a_names_the_node_of_the_other_format_in_the_way(fn, state, fmt, cls, found,
                                                               tmp_path):
    # zarr-python writes a second metadata document at 'x' here
    root = make(state, str(tmp_path / "s"))
    before = sorted(os.listdir(os.path.join(root, "x")))
    kwargs = {"shape": (2,), "dtype": "i4"} if fn == "open_array" else {}
    with pytest.raises(cls) as info:
        getattr(zarrx, fn)(root, path="x", mode="a", zarr_format=fmt, **kwargs)
    assert str(info.value) == (f"{fn}: the node at 'x' in LocalStore({root!r}) is a {found}, "
                               f"not Zarr v{fmt} as zarr_format={fmt} asks")
    assert sorted(os.listdir(os.path.join(root, "x"))) == before


def test_modes_r_and_r_plus_name_the_node_of_the_other_format(tmp_path):
    root = make("array2", str(tmp_path / "s"))
    with pytest.raises(zarrx.errors.ArrayNotFoundError) as info:
        zarrx.open_array(root, path="x", mode="r+", zarr_format=3)
    assert str(info.value) == (f"open_array: the node at 'x' in LocalStore({root!r}) is a "
                               f"Zarr v2 array, not Zarr v3 as zarr_format=3 asks")
    assert zarrx.open_array(root, path="x", mode="r", zarr_format=2).shape == (3,)


@pytest.mark.parametrize("call, what", [
    (lambda s: zarrx.open(s, path="a/x", mode="a"), "open"),
    (lambda s: zarrx.open(s, path="a/x", mode="a", zarr_format=2), "open"),
    (lambda s: zarrx.open(s, path="a/x", mode="w", shape=(2,), dtype="i4"), "open"),
    (lambda s: zarrx.open_group(s, path="a/x", mode="a"), "open_group"),
    (lambda s: zarrx.group(s, path="a/x"), "group"),
    (lambda s: zarrx.open_array(s, path="a/x", mode="a", shape=(2,), dtype="i4"), "open_array"),
    (lambda s: zarrx.create_group(s, path="a/x"), "create_group"),
    (lambda s: zarrx.create(shape=(2,), store=s, path="a/x"), "create"),
    (lambda s: zarrx.zeros((2,), store=s, path="a/x"), "zeros"),
    (lambda s: zarrx.full((2,), 7, store=s, path="a/x"), "full"),
    (lambda s: zarrx.array([1, 2], store=s, path="a/x"), "array"),
    (lambda s: zarrx.open_group(s, mode="r+").create_group("a/x"), "create_group"),
    (lambda s: zarrx.open_group(s, mode="r+").create_array("a/x", shape=(1,), dtype="i1"),
     "create_array"),
])
def test_creating_under_an_array_says_the_array_is_in_the_way(call, what, tmp_path):
    # mode 'a' said "no array or group at 'a/x'"; zarr-python creates a node under the array.
    # The error names the function called (open, open_group, group, open_array, create,
    # zeros, full, array named the create_group or create_array they call)
    root = make("under array", str(tmp_path / "s"))
    with pytest.raises(zarrx.errors.ContainsArrayError) as info:
        call(root)
    assert str(info.value) == (f"{what}: cannot create 'a/x': 'a' is an array in "
                               f"LocalStore({root!r}) (an array has no children)")
    assert sorted(os.listdir(os.path.join(root, "a"))) == ["zarr.json"]


def test_mode_a_where_the_format_differs_from_the_parent_group_says_so(tmp_path):
    root = make("nothing", str(tmp_path / "s"))
    zarrx.create_group(root, zarr_format=3)
    with pytest.raises(zarrx.MetadataError, match="cannot create a Zarr v2 node at 'x' inside "
                       "the Zarr v3 group '/'"):
        zarrx.open_group(root, path="x", mode="a", zarr_format=2)


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidate_metadata_of_one_format_where_both_groups_are(fmt, tmp_path):
    # a Zarr v2 hierarchy with a v3 root document beside its .zgroup (as an in-place migration
    # leaves it): zarr_format=2 consolidated the v3 group and returned it
    root = str(tmp_path / "s")
    zarrx.create_group(root, zarr_format=2).create_array("a", shape=(2,), dtype="i4")
    with open(os.path.join(root, "zarr.json"), "w") as f:
        f.write('{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    g = zarrx.consolidate_metadata(root, zarr_format=fmt)
    assert g.metadata.zarr_format == fmt
    assert list(g.metadata.consolidated) == (["a"] if fmt == 2 else [])
    assert os.path.exists(os.path.join(root, ".zmetadata")) == (fmt == 2)
    if fmt == 2:
        assert list(zarr.open_consolidated(root, zarr_format=2, mode="r")) == ["a"]


@pytest.mark.parametrize("call, message", [
    (lambda s: zarrx.group(s, path="x"), "group: the node at 'x' in {store} is an array"),
    (lambda s: zarrx.open_consolidated(s, path="x", mode="r"),
     "open_consolidated: the node at 'x' in {store} is an array"),
    (lambda s: zarrx.open_consolidated(s, path="y", mode="r"),
     "open_consolidated: no group at 'y' in {store}"),
    (lambda s: zarrx.open_consolidated(s, mode="r"),
     "open_consolidated: the group at '/' in {store} has no consolidated metadata (write it "
     "with zarrx.consolidate_metadata)"),
    (lambda s: zarrx.open(s, mode="r", use_consolidated=True),
     "open: the group at '/' in {store} has no consolidated metadata (write it with "
     "zarrx.consolidate_metadata)"),
])
def test_functions_built_on_open_group_name_themselves(call, message, tmp_path):
    # they said "open_group: ..."
    root = make("array3", str(tmp_path / "s"))
    with pytest.raises(zarrx.ZarrError) as info:
        call(root)
    where = "LocalStore({!r}{})".format(root, "" if "group:" in message else ", read_only=True")
    assert str(info.value) == message.format(store=where)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("call, message", [
    (lambda s, f: zarrx.consolidate_metadata(s, path="x"),
     "consolidate_metadata: the node at 'x' in {store} is an array, not a group"),
    (lambda s, f: zarrx.consolidate_metadata(s, path="x", zarr_format=f),
     "consolidate_metadata: the node at 'x' in {store} is a Zarr v{fmt} array, not a group"),
    (lambda s, f: zarrx.consolidate_metadata(s, path="y", zarr_format=f),
     "consolidate_metadata: no Zarr v{fmt} group at 'y' in {store}"),
])
def test_consolidate_metadata_of_an_array_says_the_array_is_in_the_way(fmt, call, message,
                                                                        tmp_path):
    # it said "no group at 'x'" (a GroupNotFoundError), where open_consolidated and zarr-python
    # 3.1 (Zarr v3) raise ContainsArrayError
    root = make(f"array{fmt}", str(tmp_path / "s"))
    cls = zarrx.errors.GroupNotFoundError if "no " in message else zarrx.errors.ContainsArrayError
    with pytest.raises(cls) as info:
        call(root, fmt)
    assert str(info.value) == message.format(store=f"LocalStore({root!r})", fmt=fmt)
    if fmt == 3 and cls is zarrx.errors.ContainsArrayError:
        with pytest.raises(zarr.errors.ContainsArrayError):
            zarr.consolidate_metadata(root, path="x")
