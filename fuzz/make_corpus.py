"""Write the seed corpora under ``fuzz/corpus/<harness>/``. Run only to regenerate them:

    python fuzz/make_corpus.py            # needs zarr (zarr-python), tensorstore, numcodecs

Seeds come from three sources, named by prefix:

- ``zarr-python-*`` and ``tensorstore-*``: what those libraries write (metadata documents,
  shards and encoded chunks of the harnesses' own configurations, zip archives);
- ``table-*``: the hostile tables of the test suite (malformed metadata documents, corrupt
  shards and shard indexes, hostile codec streams, hostile zip archives);
- ``regression-*``: inputs a fuzzer found, kept by hand (never written or removed here).

Every other file of a harness's directory is replaced. Seeds longer than ``MAX_SEED`` bytes
are left out, so that the corpora stay small.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
MAX_SEED = 16 << 10
sys.path[:0] = [str(ROOT / "fuzz"), str(ROOT / "tests")]

Seeds = dict[str, bytes]


def load(path: str, name: str):
    """A module of the test suite by file (``tests/codecs`` would shadow the stdlib)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def files_under(folder: str | os.PathLike) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, folder)] = Path(p).read_bytes()
    return out


def attempt(label: str, fn: Callable[[], None]) -> None:
    """Writers differ in what they support: a case one of them refuses is reported and left out."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        print(f"  skipped {label}: {type(exc).__name__}: {str(exc)[:120]}")


def as_doc(doc: object) -> bytes:
    if isinstance(doc, bytes):
        return doc
    return json.dumps(doc, allow_nan=True).encode()


# -- metadata written by zarr-python and tensorstore ----------------------------------------------
def zarr_python_metadata() -> Seeds:
    import numcodecs
    import numcodecs.zarr3
    import zarr
    from zarr.codecs import BloscCodec, BytesCodec, GzipCodec, ShardingCodec, TransposeCodec
    from zarr.codecs import ZstdCodec

    seeds: Seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        def v3(name: str, **kw: object) -> None:
            def make() -> None:
                zarr.create_array(f"{tmp}/v3/{name}", zarr_format=3, **kw)
            attempt(f"zarr-python v3 {name}", make)

        def v2(name: str, **kw: object) -> None:
            def make() -> None:
                zarr.create_array(f"{tmp}/v2/{name}", zarr_format=2, **kw)
            attempt(f"zarr-python v2 {name}", make)

        v3("f4-zstd", shape=(10, 6), chunks=(4, 3), dtype="f4", compressors=ZstdCodec(level=3),
           fill_value=float("nan"), attributes={"units": "m", "scale": [1, 2]},
           dimension_names=["y", "x"])
        v3("i2-big-gzip", shape=(7,), chunks=(3,), dtype="i2", serializer=BytesCodec(endian="big"),
           compressors=GzipCodec(level=1), fill_value=-1)
        v3("u1-blosc", shape=(100,), chunks=(25,), dtype="u1",
           compressors=BloscCodec(cname="lz4", clevel=5, shuffle="bitshuffle"))
        v3("f8-sharded", shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="f8")
        v3("u2-sharded-start", shape=(8, 8), chunks=(2, 2), dtype="u2",
           serializer=ShardingCodec(chunk_shape=(2, 2), index_location="start"))
        v3("i4-transpose", shape=(4, 5), chunks=(2, 5), dtype="i4",
           filters=[TransposeCodec(order=(1, 0))])
        v3("bool", shape=(5,), chunks=(5,), dtype="bool", fill_value=True)
        v3("c8", shape=(3,), chunks=(3,), dtype="c8", fill_value=complex(1, -1))
        v3("f2-inf", shape=(3,), chunks=(2,), dtype="f2", fill_value=float("-inf"))
        v3("m8", shape=(3,), chunks=(3,), dtype="datetime64[s]")
        v3("u8-max", shape=(3,), chunks=(3,), dtype="u8", fill_value=2**64 - 1)
        v3("string", shape=(4,), chunks=(2,), dtype=str)
        v3("bytes", shape=(4,), chunks=(2,), dtype=np.dtypes.BytesDType(5))
        v3("fixed-utf32", shape=(4,), chunks=(2,), dtype="<U5")
        v3("structured", shape=(4,), chunks=(2,), dtype=[("a", "<i4"), ("b", "<f8")])
        v3("zero-dim", shape=(), chunks=(), dtype="i8", fill_value=3)
        v3("numcodecs-zlib", shape=(6,), chunks=(6,), dtype="f8",
           compressors=numcodecs.zarr3.Zlib(level=2))
        v3("numcodecs-delta", shape=(6,), chunks=(6,), dtype="i4",
           filters=[numcodecs.zarr3.Delta(dtype="<i4")])
        v2("f4-zlib", shape=(10, 6), chunks=(4, 3), dtype="<f4",
           compressors=numcodecs.Zlib(level=1), fill_value=float("nan"), attributes={"a": 1})
        v2("i8-fortran", shape=(4, 4), chunks=(2, 2), dtype=">i8", order="F", fill_value=5)
        v2("u1-blosc-delta", shape=(50,), chunks=(10,), dtype="|u1",
           filters=[numcodecs.Delta(dtype="|u1")], compressors=numcodecs.Blosc(cname="zstd"))
        v2("object-vlen", shape=(4,), chunks=(2,), dtype=str)
        v2("S5", shape=(4,), chunks=(2,), dtype="S5", fill_value=b"ab")
        v2("structured", shape=(3,), chunks=(3,), dtype=[("x", "<u2"), ("y", "<f4")])
        v2("M8-ns", shape=(3,), chunks=(3,), dtype="<M8[ns]")
        v2("c16-lz4", shape=(3,), chunks=(3,), dtype="<c16", compressors=numcodecs.LZ4())
        v2("slash-separator", shape=(4, 4), chunks=(2, 2), dtype="<i2",
           chunk_key_encoding={"name": "v2", "separator": "/"})
        for fmt in (2, 3):
            g = zarr.open_group(f"{tmp}/group-v{fmt}", mode="w", zarr_format=fmt,
                                attributes={"title": "t", "nested": {"k": [1, None]}})
            g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")
            g.create_group("sub").create_array("b", shape=(2, 2), chunks=(1, 2), dtype="f4")
            zarr.consolidate_metadata(f"{tmp}/group-v{fmt}")
        for rel, blob in files_under(tmp).items():
            name = os.path.basename(rel)
            if name in ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"):
                seeds[rel.replace("/", "-")] = blob
    return seeds


def tensorstore_metadata() -> Seeds:
    import tensorstore as ts

    seeds: Seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        def make(name: str, driver: str, metadata: dict) -> None:
            def go() -> None:
                ts.open({"driver": driver, "kvstore": {"driver": "file", "path": f"{tmp}/{name}"},
                         "metadata": metadata}, create=True).result()
            attempt(f"tensorstore {name}", go)

        make("v3-f4-blosc", "zarr3", {
            "shape": [10, 6], "data_type": "float32", "fill_value": "NaN",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 3]}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                                           "shuffle": "shuffle", "typesize": 4}}]})
        make("v3-u2-sharded", "zarr3", {
            "shape": [8, 8], "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 2], "index_location": "start",
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                           {"name": "gzip", "configuration": {"level": 5}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                 {"name": "crc32c"}]}}],
            "dimension_names": ["a", ""]})
        make("v3-i8-transpose-zstd", "zarr3", {
            "shape": [3, 4, 5], "data_type": "int64", "fill_value": 7,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2, 5]}},
            "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
            "codecs": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                       {"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 1, "checksum": True}}]})
        make("v3-bool-crc32c", "zarr3", {
            "shape": [9], "data_type": "bool",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "codecs": [{"name": "bytes"}, {"name": "crc32c"}]})
        make("v2-f8-zlib", "zarr", {"shape": [10, 6], "chunks": [4, 3], "dtype": "<f8",
                                    "compressor": {"id": "zlib", "level": 1},
                                    "fill_value": "NaN", "order": "F"})
        make("v2-i4-blosc", "zarr", {"shape": [100], "chunks": [30], "dtype": ">i4",
                                     "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5,
                                                    "shuffle": 2, "blocksize": 0},
                                     "fill_value": 0, "dimension_separator": "/"})
        make("v2-structured", "zarr", {"shape": [4], "chunks": [4],
                                       "dtype": [["a", "<u2"], ["b", "<f4", [2]]],
                                       "compressor": None, "fill_value": None})
        for rel, blob in files_under(tmp).items():
            if os.path.basename(rel) in ("zarr.json", ".zarray", ".zgroup", ".zattrs"):
                seeds[rel.replace("/", "-")] = blob
    return seeds


# -- shards and codec chains of the harnesses' configurations -------------------------------------
def _values(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype.kind in "OTU":
        words = ["", "a", "δx", "hello", "z" * 20]
        return np.array([words[i % len(words)] for i in range(n)], dtype=object).reshape(shape)
    if dtype.kind == "f":
        v = np.linspace(-1, 1, n)
        v[n // 3] = np.nan
        return v.astype(dtype).reshape(shape)
    return (np.arange(n) * 37 % 251).astype(dtype).reshape(shape)


def _with_zarr_python(folder: str, zarr_json: bytes, keys: list[str],
                      value_of: Callable[[np.dtype, tuple], object]) -> dict[str, bytes]:
    import zarr
    os.makedirs(folder)
    Path(folder, "zarr.json").write_bytes(zarr_json)
    a = zarr.open_array(folder, mode="r+")
    a[...] = value_of(a.dtype, a.shape)
    return {k: Path(folder, k).read_bytes() for k in keys if Path(folder, k).is_file()}


def _with_tensorstore(folder: str, zarr_json: bytes, keys: list[str],
                      value_of: Callable[[np.dtype, tuple], object]) -> dict[str, bytes]:
    import tensorstore as ts
    os.makedirs(folder)
    Path(folder, "zarr.json").write_bytes(zarr_json)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": folder}}).result()
    t[...] = value_of(np.dtype(t.dtype.numpy_dtype), tuple(t.shape))
    return {k: Path(folder, k).read_bytes() for k in keys if Path(folder, k).is_file()}


WRITERS = {"zarr-python": _with_zarr_python, "tensorstore": _with_tensorstore}


def shards() -> Seeds:
    import fuzz_shard

    seeds: Seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, doc) in enumerate(fuzz_shard.CONFIGS):
            for writer, write in WRITERS.items():
                def go(i: int = i, name: str = name, doc: bytes = doc, writer: str = writer,
                       write: Callable = write) -> None:
                    got = write(f"{tmp}/{writer}-{name}", doc, ["c/0/0", "c/1/1"], _values)
                    for key, blob in got.items():
                        for op in range(4):     # read units, read, write chunks, write part
                            seeds[f"{writer}-{name}-{key.replace('/', '')}-op{op}"] = \
                                bytes([op << 4 | i]) + blob
                attempt(f"{writer} shard {name}", go)
    return seeds


def codec_chunks() -> Seeds:
    import fuzz_codecs

    seeds: Seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (codecs, (dtype, shape))) in enumerate(fuzz_codecs.PIPELINES.items()):
            dt = np.dtype(dtype)
            doc = as_doc({
                "zarr_format": 3, "node_type": "array", "shape": list(shape),
                "data_type": ("string" if "utf8" in name else "variable_length_bytes")
                if dt.hasobject
                else dt.name,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
                "chunk_key_encoding": {"name": "default"},
                "fill_value": "" if dt.hasobject else 0,
                "codecs": [{"name": c.name, **({"configuration": c.configuration}
                                               if c.configuration else {})} for c in codecs]})

            def value_of(d: np.dtype, s: tuple, utf8: bool = "utf8" in name) -> object:
                v = _values(np.dtype("O") if d.hasobject or d.kind in "TSV" else d, s)
                if d.hasobject or d.kind in "TSV":
                    return v if utf8 else np.array([x.encode() for x in v.flat],
                                                   dtype=object).reshape(s)
                return v
            for writer, write in WRITERS.items():
                def go(i: int = i, name: str = name, doc: bytes = doc, writer: str = writer,
                       write: Callable = write, value_of: Callable = value_of) -> None:
                    got = write(f"{tmp}/{writer}-{name}", doc, ["c/0", "c/0/0"], value_of)
                    for blob in got.values():
                        seeds[f"{writer}-{name}"] = bytes([i]) + blob
                attempt(f"{writer} chunk {name}", go)
    return seeds


# -- zip archives -------------------------------------------------------------------------------
def zip_archives() -> Seeds:
    import zarr

    seeds: Seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in (2, 3):
            for comp, label in ((zipfile.ZIP_STORED, "stored"), (zipfile.ZIP_DEFLATED, "deflated")):
                path = f"{tmp}/v{fmt}-{label}.zip"

                def go(path: str = path, fmt: int = fmt, comp: int = comp) -> None:
                    store = zarr.storage.ZipStore(path, mode="w", compression=comp)
                    g = zarr.open_group(store, mode="w", zarr_format=fmt, attributes={"a": 1})
                    a = g.create_array("x", shape=(6,), chunks=(3,), dtype="i2")
                    a[...] = np.arange(6)
                    if fmt == 3:
                        s = g.create_array("s", shape=(4, 4), chunks=(2, 2), shards=(4, 4),
                                           dtype="u1")
                        s[...] = np.arange(16).reshape(4, 4)
                    store.close()
                    seeds[f"zarr-python-{os.path.basename(path)}"] = Path(path).read_bytes()
                attempt(f"zarr-python zip v{fmt} {label}", go)
    hostile = load("tests/store/zip_archives.py", "_zip_archives")
    entry, build, deflate = hostile.entry, hostile.build, hostile.deflate
    group = hostile.GROUP
    data = bytes(range(256)) * 4
    small_bomb = deflate(bytes(4 << 20))
    import zlib
    cases = {
        "bad-names": [entry("zarr.json", group)] + [entry(n, b"bad") for n in hostile.BAD_NAMES]
        + [entry("ok/zarr.json", group)],
        "duplicate-names": [entry("k", b"first"), entry("k", b"second")],
        "crc-stored": [entry("good", data), entry("bad", data, crc=zlib.crc32(data) ^ 1)],
        "crc-deflated": [entry("bad", deflate(data), method=8, usize=len(data),
                               crc=zlib.crc32(data) ^ 1)],
        "inflates-past-size": [entry("c/0", small_bomb, method=8, usize=1 << 10,
                                     crc=zlib.crc32(bytes(1 << 10)))],
        "declared-size-too-large": [entry("c/0", deflate(bytes(1000)), method=8, usize=1 << 30)],
        "inflates-short": [entry("k", deflate(b"abc" * 100), method=8, usize=400,
                                 crc=zlib.crc32(b"abc" * 100))],
        "stored-sizes-differ": [entry("k", b"12345", usize=1 << 30), entry("ok", b"1")],
        "overlapping": [entry("a", deflate(bytes(1000)), method=8, usize=1000,
                              crc=zlib.crc32(bytes(1000))),
                        entry("b", deflate(bytes(1000)), method=8, usize=1000,
                              crc=zlib.crc32(bytes(1000)), cd_name=b"a2", cd_offset=0)],
        "cd-names-other-header": [entry("abc", b"1"), entry("xyz", b"2", cd_name=b"k")],
        "group-and-array": [entry("zarr.json", group),
                            entry("x/zarr.json", as_doc(_shard_meta()))],
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, entries in cases.items():
            seeds[f"table-{name}.zip"] = build(Path(tmp, f"{name}.zip"), entries).read_bytes()
    return seeds


def _shard_meta() -> dict:
    import fuzz_shard
    return json.loads(fuzz_shard.CONFIGS[0][1])


# -- the hostile tables of the test suite -------------------------------------------------------
def malformed_metadata() -> dict[str, Seeds]:
    from metadata._malformed import CASES

    out: dict[str, Seeds] = {"fuzz_metadata_v2": {}, "fuzz_metadata_v3": {},
                             "fuzz_consolidated": {}}
    for case, kind, doc in CASES:
        if doc is None:                          # the huge document: too large for a seed
            continue
        blob = as_doc(doc)[:MAX_SEED]            # the nesting bombs, cut to size
        target = {"v3": "fuzz_metadata_v3", "zmeta": "fuzz_consolidated"}.get(
            kind, "fuzz_metadata_v2")
        out[target][f"table-{case}"] = blob
        if case.startswith("group-consolidated"):
            out["fuzz_consolidated"][f"table-{case}"] = blob
    return out


def hostile_codec_streams() -> Seeds:
    import fuzz_codecs
    hostile = load("tests/codecs/test_hostile.py", "_codecs_hostile")
    to_pipeline = {"raw": "bytes", "blosc": "blosc-lz4-shuffle"}
    seeds: Seeds = {}
    for case, (chain, factory, _) in hostile.CASES.items():
        name = to_pipeline.get(chain, chain)
        if name not in fuzz_codecs.PIPELINES:
            continue
        blob = factory()
        if len(blob) < MAX_SEED:
            seeds[f"table-{case}"] = bytes([fuzz_codecs.NAMES.index(name)]) + blob
    return seeds


def corrupt_shards() -> Seeds:
    corrupt = load("tests/store/test_shard_corrupt.py", "_shard_corrupt")
    index_tests = load("tests/store/test_shard_index.py", "_shard_index_tests")
    config = {("end", True): 0, ("start", True): 1, ("end", False): 2, ("start", False): 3}
    seeds: Seeds = {}
    ops = {"read": 1, "read-first": 0, "write": 3}
    for case, (loc, crc, blob, action, _) in corrupt.CASES.items():
        seeds[f"table-{case}"] = bytes([ops[action] << 4 | config[loc, crc]]) + blob
    for case, (blob, loc, _) in corrupt.LAZY.items():
        seeds[f"table-lazy-{case}"] = bytes([config[loc, True]]) + blob
    # the index kernels: 0x80, entry count, flags (end, crc32c, big-endian, size known), size
    for i, (entries, size, loc, _, _) in enumerate(_index_status_cases(index_tests)):
        flags = (loc == "end") | 2 | (8 if 0 <= size < 1 << 16 else 0)
        head = bytes([0x80, len(entries), flags]) + max(size, 0).to_bytes(2, "little")
        seeds[f"table-index-status-{i:02d}"] = head + index_tests.raw(entries)
    return seeds


def _index_status_cases(mod) -> list:
    for mark in mod.test_decode_statuses.pytestmark:
        if mark.name == "parametrize":
            return list(mark.args[1])
    raise LookupError("test_decode_statuses has no parameters")


# -- writing ------------------------------------------------------------------------------------
def write(harness: str, seeds: Seeds) -> None:
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if not old.name.startswith("regression-"):
            old.unlink()
    kept = 0
    for name, blob in sorted(seeds.items()):
        if len(blob) > MAX_SEED:
            print(f"  left out {harness}/{name}: {len(blob)} bytes")
            continue
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")
        (folder / safe).write_bytes(blob)
        kept += 1
    print(f"{harness}: {kept} seeds")


def main() -> None:
    warnings.simplefilter("ignore")
    zp, tsm = zarr_python_metadata(), tensorstore_metadata()
    written = {**{f"zarr-python-{k}": v for k, v in zp.items()},
               **{f"tensorstore-{k}": v for k, v in tsm.items()}}
    tables = malformed_metadata()

    def pick(*names: str) -> Seeds:
        return {k: v for k, v in written.items() if k.rsplit("-", 1)[-1] in names}
    write("fuzz_metadata_v2", {**pick(".zarray", ".zgroup", ".zattrs"),
                               **tables["fuzz_metadata_v2"]})
    write("fuzz_metadata_v3", {**{k: v for k, v in pick("zarr.json").items()
                                  if b"consolidated_metadata" not in v},
                               **tables["fuzz_metadata_v3"]})
    write("fuzz_consolidated", {**pick(".zmetadata"),
                                **{k: v for k, v in pick("zarr.json").items()
                                   if b'"consolidated_metadata"' in v and b'"kind"' in v},
                                **tables["fuzz_consolidated"]})
    write("fuzz_shard", {**shards(), **corrupt_shards()})
    write("fuzz_codecs", {**codec_chunks(), **hostile_codec_streams()})
    write("fuzz_zip", zip_archives())
    shutil.rmtree(ROOT / "fuzz" / "__pycache__", ignore_errors=True)


if __name__ == "__main__":
    main()
