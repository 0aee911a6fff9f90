"""Groups on zarr-python and on zarrx: members, info, creating arrays in them, moves,
hierarchies, member names and attributes."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")

from parity_helpers import both, both_errors, existing  # noqa: E402
from parity_helpers import _quiet  # noqa: E402, F401  (an autouse fixture)


def tree_of(lib):
    """/a (4,) i4, /sub (group) with /sub/b (2,) f8 and /sub/deeper/d2 (groups)."""
    g = lib.open_group({}, mode="w")
    g.create_array("a", shape=(4,), dtype="i4", chunks=(2,))
    sub = g.create_group("sub")
    sub.create_array("b", shape=(2,), dtype="f8")
    sub.create_group("deeper").create_group("d2")
    return g


def test_members_tree_and_counts():
    def case(lib):
        g = tree_of(lib)
        members = g.members()
        return (type(members), sorted(k for k, _ in members),
                sorted(k for k, _ in g.members(max_depth=1)),
                sorted(k for k, _ in g.members(max_depth=None)),
                g.nmembers(), g.nmembers(max_depth=None),
                [a.path for a in g.array_values()], [s.path for s in g.group_values()],
                str(g.tree()).rstrip("\n"), str(g.tree(level=1)).rstrip("\n"),
                sorted(g), len(g))
    got = both(case)
    assert got["zarrx"] == got["zarr"]


def test_group_info():
    def case(lib):
        g = tree_of(lib)
        rows = {}
        for line in str(g.info_complete()).splitlines():
            k, v = line.split(":", 1)
            rows[k.strip()] = v.strip()
        return {k: rows[k] for k in ("Zarr format", "Read-only", "No. members", "No. arrays",
                                     "No. groups")}
    got = both(case)
    assert got["zarrx"] == got["zarr"]


def test_group_array_creation():
    def case(lib):
        g = lib.open_group({}, mode="w")
        a = g.create_array("a", shape=(4,), dtype="i4", chunks=(2,), fill_value=7)
        made = [g.zeros(name="z", shape=(3,)), g.ones(name="o", shape=(3,)),
                g.full(name="f", shape=(3,), fill_value=4), g.empty(name="e", shape=(3,)),
                g.zeros_like(name="zl", data=a), g.ones_like(name="ol", data=a),
                g.full_like(name="fl", data=a), g.empty_like(name="el", data=a),
                g.create_dataset("ds", shape=(3,), dtype="i2"),
                g.require_dataset("ds", shape=(3,), dtype="i2"),
                g.require_array("a", shape=(4,), dtype="i8"),
                g.require_array("new", shape=(2,), dtype="u1")]
        g["si"] = np.arange(5)
        g["si"] = np.arange(6)
        made.append(g["si"])
        groups = g.require_groups("x", "y")
        same = g.update_attributes({"k": 1}) is g
        return ([(m.path, m.shape, str(m.dtype), m.fill_value, m[...].tolist()) for m in made],
                [s.path for s in groups], same, dict(g.attrs), sorted(g))
    got = both(case)
    assert got["zarrx"] == got["zarr"]


def test_group_array_and_create_dataset_from_data():
    """zarr-python 3.1 requires shape= and dtype= in Group.array and create_dataset (it
    raises TypeError without them); zarrx takes them from the data, as zarr-python 2 did."""
    g = zarrx.open_group({}, mode="w")
    np.testing.assert_array_equal(g.array("a", data=[1, 2, 3])[...], [1, 2, 3])
    np.testing.assert_array_equal(g.create_dataset("b", data=np.eye(2))[...], np.eye(2))


def test_move():
    """zarr-python 3.1 raises NotImplementedError for Group.move."""
    store: dict = {}
    g = zarrx.open_group(store, mode="w")
    g.create_group("src").create_array("x", shape=(3,), dtype="i4")[...] = [1, 2, 3]
    g.move("src", "dst/deeper")
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["dst", "dst/deeper",
                                                               "dst/deeper/x"]
    np.testing.assert_array_equal(zarrx.open(store, path="dst/deeper/x")[...], [1, 2, 3])
    with pytest.raises(KeyError, match="no member 'src' to move"):
        g.move("src", "other")
    with pytest.raises(FileExistsError, match="a node already exists there"):
        g.move("dst", "dst/deeper")


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("consolidated", [False, True])
def test_move_keeps_every_format_and_its_consolidated_metadata(tmp_path, zarr_format,
                                                               consolidated):
    g = zarrx.open_group(tmp_path, mode="w", zarr_format=zarr_format)
    g.create_group("src").create_array("x", shape=(3,), dtype="i4")[...] = [1, 2, 3]
    g["src"].attrs["k"] = "v"
    if consolidated:
        zarrx.consolidate_metadata(tmp_path)
    g.move("src", "dst")
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["dst", "dst/x"]
    np.testing.assert_array_equal(zarrx.open_array(tmp_path, path="dst/x", mode="r")[...],
                                  [1, 2, 3])
    assert dict(zarrx.open_group(tmp_path, path="dst", mode="r").attrs) == {"k": "v"}
    if consolidated and zarr_format == 2:
        # the consolidated listing follows the move, for zarrx and for zarr-python
        ours = zarrx.open_consolidated(tmp_path, mode="r")
        assert sorted(k for k, _ in ours.members(max_depth=None)) == ["dst", "dst/x"]
        theirs = zarr.open_consolidated(tmp_path, mode="r", zarr_format=2)
        assert sorted(k for k, _ in theirs.members(max_depth=None)) == ["dst", "dst/x"]
        np.testing.assert_array_equal(theirs["dst/x"][...], [1, 2, 3])


def test_create_hierarchy():
    """zarr-python's create_hierarchy takes a Store (not a dict)."""
    def case(lib):
        store = lib.storage.MemoryStore()
        group_meta = (zarr.core.group.GroupMetadata(attributes={"x": 1}) if lib is zarr else
                      zarrx.metadata.GroupMeta(attributes={"x": 1}))
        array_meta = lib.create_array({}, shape=(4,), dtype="i4").metadata
        made = lib.create_hierarchy(store=store, nodes={"a/b": group_meta, "a/c": array_meta})
        made = sorted((p, type(n).__name__) for p, n in made)
        keys = sorted(store._store_dict if lib is zarr else store.list_prefix(""))
        return made, keys, dict(lib.open_group(store, path="a/b").attrs)
    got = both(case)
    assert got["zarrx"] == got["zarr"]


def test_group_create_hierarchy_is_below_the_group():
    def case(lib):
        sub = lib.open_group(existing(lib)).create_group("sub")
        group_meta = lib.create_group({}).metadata
        array_meta = lib.create_array({}, shape=(3,), dtype="i4").metadata
        made = sub.create_hierarchy({"a/b": group_meta, "x": array_meta})
        made = sorted((key, type(node).__name__, node.path) for key, node in made)
        again = both_errors(lambda: list(sub.create_hierarchy({"a/b": group_meta})))
        root = both_errors(lambda: list(sub.create_hierarchy({"": group_meta})))
        v2 = both_errors(lambda: list(sub.create_hierarchy(
            {"q": lib.create_group({}, zarr_format=2).metadata})))
        replaced = [key for key, _ in sub.create_hierarchy({"a/b": group_meta}, overwrite=True)]
        return made, replaced, sorted(sub.group_keys()), (again, root, v2)
    got = both(case)
    assert got["zarr"][:3] == got["zarrx"][:3]
    for theirs, ours in zip(got["zarr"][3], got["zarrx"][3]):
        assert theirs and theirs <= ours     # errors of zarr-python's builtin classes
    assert got["zarrx"][0] == [("a", "Group", "sub/a"), ("a/b", "Group", "sub/a/b"),
                               ("x", "Array", "sub/x")]
    ro = zarrx.open_group(existing(zarrx), mode="r")
    with pytest.raises(zarrx.ReadOnlyError, match="^group '/': cannot create a hierarchy: the "
                                                  "group is open read-only, in DictStore"):
        ro.create_hierarchy({"n": zarrx.create_group({}).metadata})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "create_hierarchy: the nodes are Zarr v2, but the group '/' is Zarr v3: a "
            "hierarchy holds one format")):
        zarrx.open_group(existing(zarrx)).create_hierarchy(
            {"n": zarrx.create_group({}, zarr_format=2).metadata})


def test_tree_max_nodes_truncates_with_zarr_python_note():
    g = zarrx.group({})
    g.create_group("s").create_array("x", shape=(2,), dtype="i4")
    for n in "abc":
        g.create_array(n, shape=(3,), dtype="f4")
    assert g.tree(max_nodes=3, plain=True) == (
        "Truncated at max_nodes=3, some nodes and their children may be missing\n"
        "/\n├── a (3,) float32\n├── b (3,) float32\n├── c (3,) float32")
    assert g.tree() == ("/\n├── a (3,) float32\n├── b (3,) float32\n├── c (3,) float32\n"
                        "└── s\n    └── x (2,) int32")
    with pytest.raises(zarrx.ArgumentError, match="tree: max_nodes: expected an int >= 0"):
        g.tree(max_nodes=-1)


def test_require_group_with_overwrite_replaces_the_group():
    def case(lib):
        g = tree_of(lib)
        sub = g.require_group("sub", overwrite=True)
        return list(sub.keys()), sorted(g.keys()), list(g.require_group("sub").keys())
    got = both(case)
    assert got["zarrx"] == got["zarr"] == ([], ["a", "sub"], [])


@pytest.mark.parametrize("call", [lambda g: g[0], lambda g: 0 in g], ids=["getitem", "in"])
def test_a_member_name_that_is_not_a_str_is_a_type_error(call):
    got = both(lambda lib: call(tree_of(lib)))
    assert isinstance(got["zarr"], TypeError) and isinstance(got["zarrx"], zarrx.ArgumentTypeError)
    assert str(got["zarrx"]) == "group '/': a member name is a str, found int 0"


WRITES = {"setitem": lambda g: g.__setitem__(0, np.arange(3)),
          "delitem": lambda g: g.__delitem__(0),
          "create_group": lambda g: g.create_group(0),
          "require_group": lambda g: g.require_group(0),
          "create_array": lambda g: g.create_array(0, shape=(2,), dtype="i4")}


@pytest.mark.parametrize("call", WRITES.values(), ids=list(WRITES))
def test_a_member_name_that_is_not_a_str_is_a_type_error_in_a_read_only_group(call):
    """The name is checked before the group's mode, as in zarr-python (before, zarrx raised
    ReadOnlyError, which is no TypeError)."""
    def case(lib):
        store = lib.storage.MemoryStore()
        tree = lib.open_group(store, mode="w")
        tree.create_group("sub")
        return call(lib.open_group(store, mode="r"))
    got = both(case)
    assert isinstance(got["zarr"], TypeError) and isinstance(got["zarrx"], zarrx.ArgumentTypeError)
    assert str(got["zarrx"]) == "group '/': a member name is a str, found int 0"


def test_a_member_name_that_is_not_a_str_is_a_type_error_in_move():
    g = zarrx.open_group(zarrx.storage.MemoryStore(), mode="w")
    g.create_group("sub")
    ro = zarrx.open_group(g.store, mode="r")
    for call in (lambda: ro.move(0, "x"), lambda: ro.move("sub", None)):
        with pytest.raises(zarrx.ArgumentTypeError, match="a member name is a str, found"):
            call()


def test_attribute_keys_that_are_not_str_are_type_errors():
    """json.dumps would store the key 1 as "1"; zarrx raises TypeError, at any depth
    (zarr-python 3.1 stores "1" while its handle keeps 1: see migrating.md)."""
    a = zarrx.create_array({}, shape=(2,), dtype="i4")
    for value, key in [({1: 2}, "int 1"), ({"a": [{"b": {None: 1}}]}, "NoneType None")]:
        with pytest.raises(zarrx.ArgumentTypeError) as info:
            a.attrs.update(value)
        assert str(info.value) == f"attributes of array '/' must be JSON-serialisable: keys " \
                                  f"must be str, found {key}"
    assert a.attrs.asdict() == {}


@pytest.mark.parametrize("value, found", [
    ("x", "str (dictionary update sequence element #0 has length 1; 2 is required)"),
    ([1], "list (cannot convert dictionary update sequence element #0 to a sequence)")])
def test_attributes_that_are_no_mapping_keep_the_builtin_class(value, found):
    got = both(lambda lib: lib.create_array({}, shape=(2,), dtype="i4").update_attributes(value))
    builtin = type(got["zarr"])
    assert builtin in (TypeError, ValueError) and isinstance(got["zarrx"], builtin)
    assert isinstance(got["zarrx"], zarrx.ArgumentTypeError)
    assert str(got["zarrx"]) == f"attributes update: expected a mapping or key-value pairs, " \
                                f"found {found}"


def test_an_empty_member_name_is_the_group_itself():
    def case(lib):
        g = tree_of(lib)
        return g[""].path, g["/"].path, "" in g, g["sub"][""].path, sorted(g["sub"][""].keys())
    got = both(case)
    assert got["zarrx"] == got["zarr"] == ("", "", True, "sub", ["b", "deeper"])


@pytest.mark.parametrize("node", ["array", "group"])
def test_a_missing_attribute_is_a_key_error_naming_the_node(node):
    got = both(lambda lib: (lib.create_array({}, shape=(1,), dtype="i4") if node == "array"
                            else lib.create_group({})).attrs["nope"])
    assert isinstance(got["zarr"], KeyError)
    assert isinstance(got["zarrx"], zarrx.ArgumentKeyError) and isinstance(got["zarrx"], KeyError)
    g = zarrx.create_group({})
    n = g.create_array("a/b", shape=(1,), dtype="i4") if node == "array" else \
        g.create_group("a/b")
    for call in (lambda: n.attrs["nope"], lambda: n.attrs.__delitem__("nope"),
                 lambda: n.attrs.pop("nope")):
        with pytest.raises(KeyError) as info:
            call()
        assert str(info.value) == f"attributes of {node} '/a/b': no attribute 'nope'"
    assert n.attrs.get("nope", 5) == 5 and "nope" not in n.attrs
    assert n.attrs.pop("nope", 6) == 6 and n.attrs.setdefault("k", 1) == 1
    assert dict(n.attrs) == {"k": 1}
    for call in (lambda: n.attrs[["k"]], lambda: n.attrs.__setitem__(["k"], 1)):
        with pytest.raises(TypeError) as info:        # an unhashable key, as in a dict
            call()
        assert isinstance(info.value, zarrx.ZarrError)
        assert str(info.value) == f"attributes of {node} '/a/b': a key is a str, found list ['k']"
    assert dict(n.attrs) == {"k": 1}


def test_group_create_is_create_array():
    got = both(lambda lib: (lambda a: (type(a).__name__, a.path, a.shape, a.dtype))(
        lib.create_group({}).create("x", shape=(3,), dtype="i2")))
    assert got["zarrx"] == got["zarr"] == ("Array", "x", (3,), np.dtype("i2"))


@pytest.mark.parametrize("depth, cls", [("a", TypeError), (-1, ValueError)])
def test_members_max_depth_of_another_type_is_a_type_error(depth, cls):
    got = both(lambda lib: tree_of(lib).members(max_depth=depth))
    assert isinstance(got["zarr"], cls) and isinstance(got["zarrx"], cls)
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]) == f"members: max_depth: expected None or an int >= 0, found " \
                                f"{depth!r}"


@pytest.mark.parametrize("value, found", [
    (np.int64(1), "Object of type int64 is not JSON serializable; store it as a Python value: .item() of a numpy scalar, .tolist() of an array"),
    (np.arange(2), "Object of type ndarray is not JSON serializable; store it as a Python value: .item() of a numpy scalar, .tolist() of an array"),
    (b"x", "Object of type bytes is not JSON serializable"),
    ({"a": {1, 2}}, "Object of type set is not JSON serializable")])
def test_attribute_values_that_are_not_json_are_type_errors_naming_the_key(value, found):
    got = both(lambda lib: lib.create_group({}).create_group("g").attrs.__setitem__("v", value))
    assert isinstance(got["zarr"], TypeError)
    assert isinstance(got["zarrx"], zarrx.ArgumentTypeError)
    assert str(got["zarrx"]) == f"attributes of group '/g' must be JSON-serialisable: 'v': {found}"


@pytest.mark.parametrize("value, found", [
    (b"x", "'v': Object of type bytes is not JSON serializable"),
    ({"a": {1, 2}}, "'v': Object of type set is not JSON serializable"),
    ({3: 1}, "keys must be str, found int 3"),
    (np.int64(1), "'v': Object of type int64 is not JSON serializable; store it as a Python value: .item() of a numpy scalar, .tolist() of an array"),
    (np.bool_(True), "'v': Object of type bool is not JSON serializable; store it as a Python value: .item() of a numpy scalar, .tolist() of an array")])
def test_creation_attributes_that_are_not_json_are_type_errors_naming_the_key(value, found):
    """As zarr-python raises (a TypeError; it stores a nested key 3 as "3", zarrx refuses it as
    it refuses one set through attrs): the values ``attrs`` refuses, with its message."""
    attributes = {"v": value}
    for call, where in [(lambda lib: lib.create_group({}, attributes=attributes), "create_group"),
                        (lambda lib: lib.create_group({}).create_group("g", attributes=attributes),
                         "create_group"),
                        (lambda lib: lib.create_array({}, shape=(1,), dtype="i4",
                                                      attributes={"v": value}), "create_array")]:
        got = both(call)
        assert isinstance(got["zarr"], TypeError) or "keys" in found
        assert isinstance(got["zarrx"], zarrx.ArgumentTypeError)
        assert str(got["zarrx"]) == f"{where}: attributes must be JSON-serialisable: {found}"


@pytest.mark.parametrize("value, stored", [
    (np.float64(1.5), 1.5), ((1, (2, 3)), [1, [2, 3]]), (float("inf"), float("inf"))])
def test_creation_and_attrs_take_the_same_json_values(value, stored):
    """What zarr-python takes in both places (``numpy.float64`` is a float, a tuple a list) is
    stored alike by ``attributes=`` and by ``attrs``."""
    for lib in (zarr, zarrx):
        store = lib.storage.MemoryStore()
        a = lib.create_array(store, shape=(1,), dtype="i4", attributes={"v": value})
        a.attrs["w"] = value
        again = lib.open_array(store, mode="r")
        assert again.attrs.asdict() == {"v": stored, "w": stored}


@pytest.mark.parametrize("name", [".zarray", ".zgroup", ".zattrs", ".zmetadata", "zarr.json"])
@pytest.mark.parametrize("call, what", [
    (lambda g, n: g.create_group(n), "group '/': create_group"),
    (lambda g, n: g.require_group(f"sub/{n}"), "group '/': create_group"),
    (lambda g, n: g.create_array(n, shape=(1,), dtype="i4"), "create_array: name"),
    (lambda g, n: g.__setitem__(n, [1]), "create_array: name"),
    (lambda g, n: zarrx.create_group(g.store, path=f"a/{n}"), "create_group: path")],
    ids=["create_group", "require_group", "create_array", "setitem", "top-level"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_a_node_named_as_a_metadata_document_is_refused(tmp_path, fmt, call, what, name):
    """Its documents would be keys below its parent's document: on a local store a directory
    where the parent's file is (zarr-python 3.1 fails there with FileExistsError, or writes a
    node it does not list); in memory a node other readers do not see."""
    g = zarrx.create_group(str(tmp_path / "s"), zarr_format=fmt)
    g.attrs["k"] = 1
    with pytest.raises(zarrx.ArgumentError) as info:
        call(g, name)
    assert str(info.value).startswith(f"{what}: expected a node path without metadata document "
                                      f"names, found {name!r} in ")
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == \
        ([".zattrs", ".zgroup"] if fmt == 2 else ["zarr.json"])
    assert g.get(name) is None and name not in g and dict(g.attrs) == {"k": 1}


@pytest.mark.parametrize("key, cls, found", [
    ("../x", ValueError, "expected a node path without '.' or '..' segments, found '../x'"),
    ("a/./b", ValueError, "expected a node path without '.' or '..' segments, found 'a/./b'"),
    (1, TypeError, "expected a str, found int 1")])
@pytest.mark.parametrize("on_group", [False, True], ids=["top-level", "group"])
def test_create_hierarchy_checks_its_paths_as_zarr_python(key, cls, found, on_group):
    """They were written as given: '../x' as the keys '../x/zarr.json', 1 as '1'."""
    from zarr.core.group import GroupMetadata

    def case(lib):
        store = {} if lib is zarrx else zarr.storage.MemoryStore()
        target = lib.create_group(store) if on_group else lib
        kw = {} if on_group else {"store": store}
        return list(target.create_hierarchy(nodes={key: GroupMetadata()}, **kw))
    got = both(case)
    assert isinstance(got["zarr"], cls) and isinstance(got["zarrx"], cls)
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]) == f"create_hierarchy: nodes key {key!r}: {found}"


def test_create_hierarchy_normalises_repeated_slashes():
    from zarr.core.group import GroupMetadata
    got = [p for p, _ in zarrx.create_hierarchy(store={}, nodes={"/a//b/": GroupMetadata()})]
    assert got == ["", "a", "a/b"]


@pytest.mark.parametrize("name", ["sub", "new"], ids=["existing", "missing"])
def test_require_group_refuses_unknown_keywords_whether_the_group_exists_or_not(name):
    got = both(lambda lib: tree_of(lib).require_group(name, foo=1))
    assert isinstance(got["zarr"], TypeError) and isinstance(got["zarrx"], TypeError)
    g = zarrx.create_group({})
    assert dict(g.require_group("n", attributes={"a": 1}).attrs) == {"a": 1}
    assert dict(g.require_group("n", overwrite=True).attrs) == {}


def test_group_synchronizer_is_none_and_arrays_have_none():
    """zarr-python 3.1 keeps ``Group.synchronizer`` (always None); its arrays have none."""
    got = both(lambda lib: [hasattr(n, "synchronizer") and n.synchronizer for n in (
        tree_of(lib), tree_of(lib)["a"])])
    assert got["zarrx"] == got["zarr"] == [None, False]
