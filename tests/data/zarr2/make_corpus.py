"""Write the Zarr v2 corpus of this folder with zarr-python 2 (see README.md).

Run by hand, with zarr-python 2, numcodecs and xarray installed (not zarrx):

    python tests/data/zarr2/make_corpus.py

It replaces ``stores/`` and ``expected/`` next to this file. Every value is computed from
``np.arange``, so two runs write the same bytes for given library versions (but for the gzip
chunks, whose header holds the time they were written). ``expected/`` holds what zarr-python 2 and xarray read back:
``arrays.json`` (dtype, shape, chunks, order, fill value, attributes of every array; values of
object arrays), one ``.npy`` per other array, and ``datasets.json`` with one ``.npy`` per
variable of each xarray dataset as xarray decodes it.
"""
from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path

import numcodecs as nc
import numpy as np
import pandas as pd
import xarray as xr
import zarr
from corpus_json import jsonable

HERE = Path(__file__).resolve().parent
STORES = HERE / "stores"
EXPECTED = HERE / "expected"


def values(shape, dtype):
    """Deterministic values of a numeric, string or structured type."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape))
    i = np.arange(n)
    if dt.names:
        out = np.zeros(n, dtype=dt)
        for name in dt.names:
            sub = dt.fields[name][0]
            out[name] = values((n,) + sub.shape, sub.base)
        return out.reshape(shape)
    if dt.kind == "b":
        return (i % 3 == 0).reshape(shape).astype(dt)
    if dt.kind in "iu":
        span = min(np.iinfo(dt).max, 1000)
        v = (i * 7) % span
        if dt.kind == "i":
            v = v - (span // 3 if span > 10 else 0)
        return v.reshape(shape).astype(dt)
    if dt.kind == "f":
        return (i * 0.75 - 3.25).reshape(shape).astype(dt)
    if dt.kind == "c":
        return (i * 0.5 + 1j * (i - 2.0)).reshape(shape).astype(dt)
    if dt.kind == "S":
        return np.array([b"ab" * (k % 4) + bytes([65 + k % 26]) for k in i],
                        dtype=dt).reshape(shape)
    if dt.kind == "U":
        return np.array(["x\u00e9" * (k % 3) + chr(0x3b1 + k % 20) for k in i],
                        dtype=dt).reshape(shape)
    if dt.kind in "Mm":
        return (i * 37 - 5).astype("i8").view(dt.newbyteorder("=")).astype(dt).reshape(shape)
    raise ValueError(dt)


def object_values(kind, shape):
    n = int(np.prod(shape))
    out = np.empty(n, dtype=object)
    for k in range(n):
        if kind == "str":
            out[k] = "s" * (k % 4) + "\u00fc" * (k % 2)
        elif kind == "bytes":
            out[k] = bytes(range(k % 5))
        elif kind == "array":
            out[k] = np.arange(k % 4, dtype="<i4") - 1
        elif kind == "json":
            out[k] = ["a", k, {"b": k % 2 == 0}, None][k % 4]
        elif kind == "categories":
            out[k] = ["red", "green", "blue"][k % 3]
    return out.reshape(shape)


BLOSC = [(cname, shuffle) for cname in nc.blosc.list_compressors()
         for shuffle in (nc.Blosc.NOSHUFFLE, nc.Blosc.SHUFFLE, nc.Blosc.BITSHUFFLE,
                         nc.Blosc.AUTOSHUFFLE)]


def cases():
    """(name, zarr.create keywords, how to fill it) of every array."""
    out = []

    def add(name, fill="all", **kw):
        kw.setdefault("shape", (5, 3))
        kw.setdefault("chunks", (2, 2))
        out.append((name, kw, fill))

    for dt in ["|b1", "|i1", "|u1"]:
        add(f"dtype_{dt[1:]}", dtype=dt)
    for base in ["i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"]:
        for bo in "<>":
            add(f"dtype_{base}_{'le' if bo == '<' else 'be'}", dtype=bo + base)
    add("dtype_S5", dtype="|S5")
    add("dtype_U4_le", dtype="<U4")
    add("dtype_U4_be", dtype=">U4")
    for unit in ["ns", "us", "ms", "s", "m", "h", "D", "W", "M", "Y"]:
        add(f"dtype_M8_{unit}", dtype=f"<M8[{unit}]")
    for unit in ["ns", "ms", "s", "D"]:
        add(f"dtype_m8_{unit}", dtype=f"<m8[{unit}]")
    add("dtype_M8_ns_be", dtype=">M8[ns]")
    add("dtype_m8_s_be", dtype=">m8[s]")
    add("struct_flat", dtype=[("a", "<i4"), ("b", "<f8")])
    add("struct_be", dtype=[("a", ">i4"), ("b", ">f8")])
    add("struct_mixed", dtype=[("a", "<i2"), ("b", ">f4"), ("c", "|u1")])
    add("struct_nested", dtype=[("a", "<i2"), ("p", [("x", "<f4"), ("y", "|u1")])])
    add("struct_subarray", dtype=[("a", "<i4", (2,)), ("b", "<f8", (2, 2))])
    add("struct_strings", dtype=[("s", "|S3"), ("u", "<U2"), ("t", "<M8[s]")])

    # fill values
    add("fill_none_i4", dtype="<i4", fill_value=None, fill="part")
    add("fill_none_f8", dtype="<f8", fill_value=None, fill="part")
    add("fill_nan_f8", dtype="<f8", fill_value=np.nan, fill="part")
    add("fill_nan_f4", dtype="<f4", fill_value=np.nan, fill="part")
    add("fill_nan_f2", dtype="<f2", fill_value=np.nan, fill="part")
    add("fill_inf_f8", dtype="<f8", fill_value=np.inf, fill="part")
    add("fill_ninf_f4", dtype=">f4", fill_value=-np.inf, fill="part")
    add("fill_42_i2", dtype="<i2", fill_value=42, fill="part")
    add("fill_neg_i8", dtype="<i8", fill_value=-(2 ** 63), fill="part")
    add("fill_max_u8", dtype="<u8", fill_value=2 ** 64 - 1, fill="part")
    add("fill_true_b1", dtype="|b1", fill_value=True, fill="part")
    add("fill_float_f8", dtype="<f8", fill_value=-1.5, fill="part")
    add("fill_complex", dtype="<c16", fill_value=1.5 - 2j, fill="part")
    add("fill_complex_nan", dtype="<c8", fill_value=complex(np.nan, 1.0), fill="part")
    add("fill_S", dtype="|S4", fill_value=b"ab\x00c", fill="part")
    add("fill_U", dtype="<U3", fill_value="\u00e9z", fill="part")
    add("fill_M8", dtype="<M8[s]", fill_value=np.datetime64("2000-01-01T00:00:00", "s"),
        fill="part")
    add("fill_NaT", dtype="<M8[ns]", fill_value=np.datetime64("NaT"), fill="part")
    add("fill_m8", dtype="<m8[ms]", fill_value=np.timedelta64(-7, "ms"), fill="part")
    add("fill_struct", dtype=[("a", "<i4"), ("b", "<f8")], fill_value=(7, 2.5), fill="part")
    add("fill_struct_be", dtype=[("a", ">i4"), ("b", ">f8")], fill_value=(7, 2.5),
        fill="part")
    add("fill_struct_nested", dtype=[("a", "<i2"), ("p", [("x", "<f4"), ("y", "|u1")])],
        fill_value=(3, (1.5, 9)), fill="part")
    add("fill_struct_none", dtype=[("a", "<i4"), ("b", "<f8")], fill_value=None, fill="part")

    # layout
    for dt in ["<i4", ">f8", "|S3", "<U2", [("a", "<i2"), ("b", ">f4")], "<c8"]:
        tag = dt if isinstance(dt, str) else "struct"
        tag = tag.replace("<", "le").replace(">", "be").replace("|", "")
        add(f"order_F_{tag}", dtype=dt, order="F", shape=(5, 4, 3), chunks=(2, 3, 2))
    add("order_F_missing", dtype="<f4", order="F", shape=(5, 4), chunks=(3, 3), fill="part",
        fill_value=-1)
    add("sep_slash", dtype="<i4", dimension_separator="/", shape=(5, 4, 3), chunks=(2, 3, 2))
    add("sep_slash_F", dtype="<i4", dimension_separator="/", order="F")
    add("sep_slash_0d", dtype="<i4", dimension_separator="/", shape=(), chunks=())
    add("missing_chunks", dtype="<i4", fill="part", fill_value=-3)
    add("no_chunks", dtype="<f8", fill="none", fill_value=2.5)
    add("zero_length", dtype="<f8", shape=(0,), chunks=(2,), fill="none")
    add("zero_length_2d", dtype="<i2", shape=(3, 0), chunks=(2, 2), fill="none")
    add("zero_d", dtype="<f8", shape=(), chunks=())
    add("zero_d_be", dtype=">i8", shape=(), chunks=())
    add("zero_d_missing", dtype="<f8", shape=(), chunks=(), fill="none", fill_value=4.5)
    add("zero_d_struct", dtype=[("a", "<i4"), ("b", "<f8")], shape=(), chunks=())
    add("one_chunk", dtype="<u2", shape=(3, 4), chunks=(3, 4))
    add("chunks_past_edge", dtype="<i4", shape=(3, 2), chunks=(4, 4))
    add("ndim4", dtype="<i2", shape=(2, 3, 2, 3), chunks=(1, 2, 2, 2))

    # compressors
    for cname, shuffle in BLOSC:
        add(f"blosc_{cname}_{shuffle}", dtype="<f8",
            compressor=nc.Blosc(cname=cname, clevel=5, shuffle=shuffle))
    add("blosc_blocksize", dtype="<i2", compressor=nc.Blosc(cname="lz4", blocksize=16))
    add("blosc_autoshuffle_u1", dtype="|u1", compressor=nc.Blosc(shuffle=nc.Blosc.AUTOSHUFFLE))
    add("blosc_bitshuffle_b1", dtype="|b1", compressor=nc.Blosc(shuffle=nc.Blosc.BITSHUFFLE))
    add("blosc_struct", dtype=[("a", "<i4"), ("b", "<f8")], compressor=nc.Blosc())
    add("zstd", dtype="<f4", compressor=nc.Zstd(level=3))
    add("zstd_neg", dtype="<f4", compressor=nc.Zstd(level=-1))
    add("zstd_checksum", dtype="<f4", compressor=nc.Zstd(level=1, checksum=True))
    add("gzip", dtype="<i8", compressor=nc.GZip(level=6))
    add("zlib", dtype="<i8", compressor=nc.Zlib(level=1))
    add("bz2", dtype=">i4", compressor=nc.BZ2(level=9))
    add("lzma", dtype="<u4", compressor=nc.LZMA())
    add("lzma_xz_preset", dtype="<u4", compressor=nc.LZMA(preset=1))
    add("lz4", dtype="<f8", compressor=nc.LZ4(acceleration=1))
    add("no_compressor", dtype="<f8", compressor=None)
    add("no_compressor_be", dtype=">c16", compressor=None)
    add("default_compressor_S", dtype="|S3")

    # filters
    add("delta", dtype="<i4", filters=[nc.Delta(dtype="<i4")])
    add("delta_astype", dtype="<i4", filters=[nc.Delta(dtype="<i4", astype="<i2")])
    add("delta_be", dtype=">i8", filters=[nc.Delta(dtype=">i8")])
    add("fixedscaleoffset", dtype="<f8",
        filters=[nc.FixedScaleOffset(offset=-3, scale=4, dtype="<f8", astype="<u2")])
    add("fixedscaleoffset_i", dtype="<i4",
        filters=[nc.FixedScaleOffset(offset=100, scale=1, dtype="<i4", astype="|u1")])
    add("quantize", dtype="<f8", filters=[nc.Quantize(digits=2, dtype="<f8")])
    add("quantize_f4", dtype="<f4", filters=[nc.Quantize(digits=1, dtype="<f4", astype="<f4")])
    add("packbits", dtype="|b1", filters=[nc.PackBits()], shape=(13, 3), chunks=(5, 2))
    add("astype", dtype="<f8", filters=[nc.AsType(encode_dtype="<f4", decode_dtype="<f8")])
    add("astype_i", dtype="<i8", filters=[nc.AsType(encode_dtype="<i2", decode_dtype="<i8")])
    add("shuffle", dtype="<f8", filters=[nc.Shuffle(elementsize=8)])
    add("shuffle_mismatch", dtype="<i4", filters=[nc.Shuffle(elementsize=2)])
    add("bitround", dtype="<f4", filters=[nc.BitRound(keepbits=6)])
    add("bitround_f8", dtype="<f8", filters=[nc.BitRound(keepbits=20)])
    add("filter_chain", dtype="<f8",
        filters=[nc.FixedScaleOffset(offset=0, scale=8, dtype="<f8", astype="<i4"),
                 nc.Delta(dtype="<i4"), nc.Shuffle(elementsize=4)],
        compressor=nc.Zstd(level=1))
    add("filters_no_compressor", dtype="<i4", filters=[nc.Delta(dtype="<i4")], compressor=None)
    add("checksum_crc32", dtype="<i4", compressor=nc.CRC32())
    add("checksum_adler32", dtype="<i4", compressor=nc.Adler32())
    add("checksum_fletcher32", dtype="<i4", compressor=nc.Fletcher32())
    add("checksum_jenkins", dtype="<i4", compressor=nc.JenkinsLookup3())
    add("checksum_filter", dtype="<i4", filters=[nc.CRC32()], compressor=nc.Zlib())
    add("order_F_filters", dtype="<i4", order="F",
        filters=[nc.Delta(dtype="<i4"), nc.Shuffle(elementsize=4)])

    # object arrays
    add("obj_vlen_utf8", dtype=object, object_codec=nc.VLenUTF8())
    add("obj_vlen_utf8_F", dtype=object, object_codec=nc.VLenUTF8(), order="F")
    add("obj_vlen_utf8_missing", dtype=object, object_codec=nc.VLenUTF8(), fill="part")
    add("obj_vlen_utf8_fill", dtype=object, object_codec=nc.VLenUTF8(), fill_value="zz",
        fill="part")
    add("obj_vlen_utf8_blosc", dtype=object, object_codec=nc.VLenUTF8(),
        compressor=nc.Blosc(cname="zstd", shuffle=nc.Blosc.AUTOSHUFFLE))
    add("obj_vlen_bytes", dtype=object, object_codec=nc.VLenBytes())
    add("obj_vlen_bytes_missing", dtype=object, object_codec=nc.VLenBytes(), fill="part")
    add("obj_vlen_array", dtype=object, object_codec=nc.VLenArray("<i4"))
    add("obj_json", dtype=object, object_codec=nc.JSON())
    add("obj_msgpack", dtype=object, object_codec=nc.MsgPack())
    add("obj_json_F", dtype=object, object_codec=nc.JSON(), order="F")
    add("obj_msgpack_F", dtype=object, object_codec=nc.MsgPack(), order="F", fill="part")
    add("obj_str_zero_d", dtype=object, object_codec=nc.VLenUTF8(), shape=(), chunks=())
    add("obj_categorize", dtype=object,
        filters=[nc.Categorize(labels=["red", "green", "blue"], dtype=object, astype="|u1")])
    return out


def object_kind(kw):
    codec = kw.get("object_codec")
    if codec is None:
        return "categories"
    return {"vlen-utf8": "str", "vlen-bytes": "bytes", "vlen-array": "array",
            "json2": "json", "msgpack2": "json"}[codec.codec_id]


def data_of(kw):
    if np.dtype(kw["dtype"]) == object:
        return object_values(object_kind(kw), kw["shape"])
    return values(kw["shape"], kw["dtype"])


def fill_json(z):
    """zarr-python 2's fill value of ``z`` as JSON: its bytes in base64 (its own type), or None."""
    f = z.fill_value
    if f is None:
        return None
    if z.dtype == object:
        return {"object": jsonable(f)}
    return {"bytes": base64.b64encode(np.array(f, dtype=z.dtype).tobytes()).decode()}


def write_arrays(root, expected, group_path):
    g = zarr.open_group(str(root), mode="a", path=group_path)
    for name, kw, fill in cases():
        kw = dict(kw)
        z = g.create(name, **kw)
        data = data_of(kw)
        if fill == "all":
            z[...] = data
        elif fill == "part":              # the first chunk row only: the others stay missing
            if data.ndim:
                rows = kw["chunks"][0]
                z[:rows] = data[:rows]
        z.attrs.update({"case": name, "n": len(name), "nested": {"list": [1, 2.5, None]}})
        written = None
        if kw.get("order") == "F" and object_kind(kw) == "json":
            # zarr-python 2 stores these chunks as nested lists in the array's axis order but
            # reads them back as if they were in Fortran order: the test expects what was
            # written, and the corpus records what zarr-python 2 reads too
            written = np.full(kw["shape"], 0, dtype=object)
            rows = kw["chunks"][0] if fill == "part" else kw["shape"][0]
            written[:rows] = data[:rows]
        record(z, expected, f"{group_path}/{name}", written)


def record(z, expected, path, written=None):
    got = z[...]
    entry = {"dtype": z.dtype.descr if z.dtype.names else z.dtype.str,
             "shape": list(z.shape), "chunks": list(z.chunks), "order": z.order,
             "fill_value": fill_json(z), "attrs": z.attrs.asdict()}
    if written is not None:
        entry["values"] = jsonable(written.tolist())
        entry["zarr2_reads"] = jsonable(got.tolist())
    elif z.dtype == object:
        entry["values"] = jsonable(got.tolist()) if got.ndim else jsonable(got[()])
    else:
        out = EXPECTED / (path.strip("/") + ".npy")
        out.parent.mkdir(parents=True, exist_ok=True)
        np.save(out, np.asarray(got), allow_pickle=False)
    expected[path] = entry


def write_hierarchy(expected):
    """Nested groups with attributes, consolidated."""
    root = STORES / "hierarchy"
    g = zarr.open_group(str(root), mode="w")
    g.attrs.update({"title": "hierarchy", "version": 2, "tags": ["a", "b"]})
    sub = g.create_group("sub")
    sub.attrs["level"] = 1
    deep = sub.create_group("deeper/deepest")
    deep.attrs["level"] = 3
    a = sub.create("temps", shape=(4, 3), chunks=(3, 2), dtype="<f4", fill_value=np.nan)
    a[:] = values((4, 3), "<f4")
    a.attrs["units"] = "K"
    b = deep.create("names", shape=(3,), chunks=(2,), dtype=object, object_codec=nc.VLenUTF8())
    b[:] = np.array(["x", "yy", ""], dtype=object)
    g.create_group("empty")
    zarr.consolidate_metadata(str(root))
    for path, node in [("sub/temps", a), ("sub/deeper/deepest/names", b)]:
        record(node, expected, f"hierarchy/{path}")
    return {"": g.attrs.asdict(), "sub": sub.attrs.asdict(),
            "sub/deeper/deepest": deep.attrs.asdict(), "empty": {}, "sub/deeper": {}}


def datasets():
    x = np.arange(6)
    t = pd.date_range("2001-02-03", periods=6, freq="6h")
    ds1 = xr.Dataset(
        {"temp": (("time", "x"), values((6, 4), "<f8"), {"units": "K", "long_name": "t"}),
         "count": (("x",), np.arange(4, dtype="i2"))},
        coords={"time": t, "x": ["a", "bb", "ccc", "dddd"]},
        attrs={"title": "cf", "history": "made by make_corpus.py"})
    ds1["temp"][1, 2] = np.nan
    ds1["temp"].encoding = {"chunks": (4, 3)}
    ds2 = xr.Dataset(
        {"packed": (("y",), np.linspace(-1, 1, 7)),
         "dur": (("y",), pd.to_timedelta(x.tolist() + [7], unit="h")),
         "label": (("y",), np.array(["p", "q", "r", "s", "t", "u", "v"], dtype=object))},
        coords={"y": np.arange(7) * 10})
    ds2["packed"][3] = np.nan
    ds2["packed"].encoding = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 0.5,
                              "_FillValue": -9999, "chunks": (3,)}
    ds3 = xr.Dataset(
        {"v": (("t",), np.array([1.5, np.nan, 3.0], dtype="f4"))},
        coords={"t": pd.to_datetime(["2020-01-01", "2020-06-01", "2021-01-01"])})
    ds3["t"].encoding = {"units": "days since 2020-01-01", "calendar": "proleptic_gregorian",
                         "dtype": "i4"}
    ds3["v"].encoding = {"_FillValue": -1.0}
    return [("xr_cf", ds1, True), ("xr_packed", ds2, True), ("xr_unconsolidated", ds3, False)]


def write_datasets():
    out = {}
    for name, ds, consolidated in datasets():
        path = STORES / name
        ds.to_zarr(str(path), mode="w", consolidated=consolidated)
        back = xr.open_zarr(str(path), consolidated=consolidated).load()
        entry = {"attrs": back.attrs, "coords": list(back.coords), "variables": {}}
        for vname, var in back.variables.items():
            v = {"dims": list(var.dims), "attrs": var.attrs, "dtype": var.dtype.str}
            if var.dtype == object:
                v["values"] = var.values.tolist()
            else:
                f = EXPECTED / name / f"{vname}.npy"
                f.parent.mkdir(parents=True, exist_ok=True)
                np.save(f, var.values, allow_pickle=False)
            entry["variables"][vname] = v
        out[name] = entry
    return out


def main():
    for d in (STORES, EXPECTED):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()
    expected = {}
    write_arrays(STORES / "arrays", expected, "")
    groups = write_hierarchy(expected)
    meta = {"written_by": {"zarr": zarr.__version__, "numcodecs": nc.__version__,
                           "xarray": xr.__version__, "numpy": np.__version__,
                           "pandas": pd.__version__,
                           "python": sys.version.split()[0]},
            "arrays": {k.lstrip("/"): v for k, v in expected.items()},
            "groups": {"hierarchy": groups}}
    (EXPECTED / "arrays.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    (EXPECTED / "datasets.json").write_text(
        json.dumps(write_datasets(), indent=1, sort_keys=True, default=str) + "\n")


if __name__ == "__main__":
    main()
