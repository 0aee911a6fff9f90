"""What zarr-python's user guide has its users do, done on zarr-python and on zarrx with the
results compared: numcodecs codecs under ``zarr.codecs.numcodecs``, the global ``array.order``
setting, and a group's ``metadata.consolidated_metadata``."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
LIBS = {"zarr": zarr, "zarrx": zarrx}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # zarr-python's numcodecs and v2 warnings
        yield


def both(case):
    """``{"zarr": result, "zarrx": result}``."""
    return {name: case(lib) for name, lib in LIBS.items()}


# -- zarr.codecs.numcodecs -------------------------------------------------------------------

FILTERS = {"Delta": {"dtype": "int32"}, "FixedScaleOffset": {"offset": 1, "scale": 10,
                                                             "dtype": "int32"},
           "AsType": {"encode_dtype": "int64", "decode_dtype": "int32"}}
COMPRESSORS = {"LZMA": {"preset": 1}, "BZ2": {"level": 5}, "Zlib": {"level": 3},
               "GZip": {"level": 3}, "Zstd": {"level": 2}, "LZ4": {"acceleration": 2},
               "Blosc": {"cname": "lz4", "clevel": 3, "shuffle": 1},
               "Shuffle": {"elementsize": 4}, "CRC32": {}, "CRC32C": {}, "Adler32": {},
               "Fletcher32": {}, "JenkinsLookup3": {}}


def _written(lib, store, **codecs):
    a = lib.create_array(store, shape=(20,), dtype="int32", chunks=(5,), **codecs)
    a[:] = np.arange(20, dtype="int32") * 3
    return a


@pytest.mark.parametrize("cls,kwargs", [*COMPRESSORS.items(), *FILTERS.items()],
                         ids=[*COMPRESSORS, *FILTERS])
def test_numcodecs_codec_names_write_what_zarr_python_writes(tmp_path, cls, kwargs):
    """``from zarr.codecs.numcodecs import LZMA`` and the like, as the user guide's compressor
    and filter examples use them: the array stores the codec under the same ``numcodecs.*``
    name as zarr-python's, and each library reads what the other wrote."""
    where = "filters" if cls in FILTERS else "compressors"

    def case(lib):
        codec = getattr(lib.codecs.numcodecs, cls)(**kwargs)
        _written(lib, str(tmp_path / lib.__name__), **{where: [codec]})
        doc = json.loads((tmp_path / lib.__name__ / "zarr.json").read_text())
        return [c["name"] for c in doc["codecs"]]
    names = both(case)
    assert names["zarrx"] == names["zarr"]
    assert f"numcodecs.{cls.lower()}" in [n.replace("_", "") for n in names["zarrx"]]
    want = np.arange(20, dtype="int32") * 3
    for reader, writer in (("zarr", "zarrx"), ("zarrx", "zarr")):
        got = LIBS[reader].open_array(str(tmp_path / writer), mode="r")[:]
        assert np.array_equal(got, want), (reader, writer)


def test_numcodecs_module_is_an_attribute_of_codecs():
    """``zarr.codecs.numcodecs.Delta`` works after ``import zarr`` alone, in both."""
    for lib in LIBS.values():
        assert callable(lib.codecs.numcodecs.Delta)
    from zarrx.codecs.numcodecs import LZMA
    assert LZMA is zarrx.codecs.numcodecs.LZMA


def test_numcodecs_codec_with_an_unknown_keyword_is_a_type_error():
    """A keyword numcodecs' codec does not take is a ``TypeError`` in both libraries
    (zarr-python raises it when the codec is first used; zarrx at once, naming the keyword)."""
    for lib in LIBS.values():
        with pytest.raises(TypeError):
            codec = lib.codecs.numcodecs.Zstd(levle=3)
            _written(lib, {}, compressors=[codec])
    with pytest.raises(zarrx.errors.CodecArgumentTypeError, match="levle: unknown field"):
        zarrx.codecs.numcodecs.Zstd(levle=3)


@pytest.mark.parametrize("cls,field", [("BitRound", "keepbits"), ("Quantize", "digits"),
                                       ("FixedScaleOffset", "offset")])
def test_numcodecs_codec_without_a_required_keyword_is_a_type_error(cls, field):
    """Leaving out a keyword numcodecs' codec requires is a ``TypeError`` in both libraries
    (zarr-python's when it builds the array; zarrx's at once, naming the keyword)."""
    for lib in LIBS.values():
        with pytest.raises(TypeError):
            _written(lib, {}, filters=[getattr(lib.codecs.numcodecs, cls)()])
    with pytest.raises(zarrx.errors.CodecArgumentTypeError,
                       match=f"numcodecs.{cls}: missing required field '{field}'"):
        getattr(zarrx.codecs.numcodecs, cls)()


def test_numcodecs_codec_takes_its_own_id():
    """``Delta(**numcodecs_codec.get_config())`` keeps working: the ``id`` member is dropped
    when it names the codec, and refused naming both ids otherwise."""
    import numcodecs
    config = numcodecs.Delta(dtype="int32").get_config()
    same = zarrx.codecs.numcodecs.Delta(dtype="int32", astype="int32")
    assert zarrx.codecs.numcodecs.Delta(**config) == same
    with pytest.raises(zarrx.errors.CodecError, match="id: expected 'zstd' or nothing, "
                                                      "found 'delta'"):
        zarrx.codecs.numcodecs.Zstd(**config)


# -- config: array.order ---------------------------------------------------------------------

def test_array_order_setting_as_in_zarr_python():
    """``zarr.config.set({"array.order": "F"})``: arrays made meanwhile (v3 handles created or
    opened, v2 arrays created) read in Fortran layout and keep it after the block; an explicit
    ``config={"order": "C"}`` wins; the setting is back to ``"C"`` after the block."""
    def case(lib):
        before = lib.config.get("array.order")
        with lib.config.set({"array.order": "F"}):
            inside = lib.config.get("array.order")
            v3 = lib.create_array({}, shape=(4, 6), dtype="i4", chunks=(2, 3))
            v3[:] = np.arange(24).reshape(4, 6)
            v2 = lib.create_array({}, shape=(4, 6), dtype="i4", chunks=(2, 3), zarr_format=2)
            c = lib.create_array({}, shape=(4, 6), dtype="i4", config={"order": "C"})
            opened = lib.open_array(v3.store, mode="r")
        data = v3[:]
        return (before, inside, lib.config.get("array.order"), v3.order, v3.config.order,
                data.flags.f_contiguous, data.tolist(), v2.order, c.order, opened.order,
                lib.open_array(v3.store, mode="r").order)
    got = both(case)
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"][:6] == ("C", "F", "C", "F", "F", True)


def test_array_order_setting_refuses_other_layouts():
    """zarrx checks the value when it is set (zarr-python takes any and fails later)."""
    with pytest.raises(zarrx.ArgumentError, match=r"array.order: expected 'C' or 'F', "
                                                  r"found 'K'"):
        zarrx.config.set({"array.order": "K"})
    assert zarrx.config.get("order") == "C"


# -- metadata.consolidated_metadata ------------------------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_metadata_of_a_group(fmt):
    """The consolidated-metadata guide's look at ``group.metadata.consolidated_metadata``: the
    children by name (``metadata``), every node below by path (``flattened_metadata``), a
    child group's own entries, and None for a group without consolidated metadata."""
    def case(lib):
        root = lib.create_group({}, zarr_format=fmt)
        root.create_array("a", shape=(2,), dtype="f8")
        child = root.create_group("child", attributes={"kind": "child"})
        child.create_array("b", shape=(3, 3), dtype="i4")
        plain = root.metadata.consolidated_metadata
        lib.consolidate_metadata(root.store)
        g = lib.open_group(root.store, mode="r")
        cm = g.metadata.consolidated_metadata
        return (plain, cm.kind, cm.must_understand, sorted(cm.metadata),
                sorted(cm.flattened_metadata), tuple(cm.metadata["a"].shape),
                cm.metadata["child"].attributes, tuple(cm.flattened_metadata["child/b"].shape),
                sorted(g["child"].metadata.consolidated_metadata.metadata))
    got = both(case)
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"][3:5] == (["a", "child"], ["a", "child", "child/b"])


# -- info and tree in an interactive session ---------------------------------------------------

@pytest.mark.parametrize("what", ["tree", "group info", "group info_complete", "array info",
                                  "array info_complete"])
def test_info_and_tree_show_as_their_text(what):
    """The guide's ``root.tree()`` and ``z.info`` typed at a prompt show the table or tree
    itself (their ``repr`` is their text), not a quoted string; zarrx's are still ``str``."""
    def case(lib):
        root = lib.create_group({})
        z = root.create_group("foo").create_array("bar", shape=(4,), dtype="i4", chunks=(2,))
        value = {"tree": lambda: root.tree(), "group info": lambda: root.info,
                 "group info_complete": lambda: root.info_complete(),
                 "array info": lambda: z.info,
                 "array info_complete": lambda: z.info_complete()}[what]()
        return repr(value) == str(value).rstrip("\n") or repr(value) == str(value)
    assert both(case) == {"zarr": True, "zarrx": True}
    root = zarrx.create_group({})
    root.create_group("foo")
    assert isinstance(root.tree(), str) and root.tree() == "/\n└── foo"
