"""Write ``values.zarr``: arrays through ``scale_offset`` and ``cast_value`` as zarr-python's
main branch (3.3+, with cast-value-rs) writes them, and ``cases.json``: what was written to
each and what zarr-python reads back. Run by hand with that zarr-python (Python >= 3.12):

    python make_fixtures.py          # from this directory; replaces values.zarr and cases.json
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import zarr
from zarr.codecs import BytesCodec, CastValue, ScaleOffset, ShardingCodec

HERE = Path(__file__).resolve().parent
NAN = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
ROUND = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.7, 200.0]

# name: (dtype, fill value, filters, shape, chunks, shards, [(selection start, stop, values)])
CASES = {
    "float32_scale_offset": ("float32", 0.0, [ScaleOffset(offset=5, scale=0.1)], 8, 4, None,
                             [(0, 8, [5, 15, 25, 6, 7.5, 100, -3, 0])]),
    "uint16_range": ("uint16", 1000, [ScaleOffset(offset=1000), CastValue(data_type="uint8")],
                     8, 4, None, [(0, 4, [1000, 1001, 1255, 1100])]),
    "float64_nan_uint8": ("float64", "NaN", [ScaleOffset(offset=-10, scale=0.1),
                                             CastValue(data_type="uint8", scalar_map=NAN)],
                          8, 4, None, [(0, 4, [0.0, 2540.0, "NaN", 123.4])]),
    "numpy_compat": ("float64", 0.0, [CastValue(
        data_type="uint8", rounding="towards-zero", out_of_range="wrap",
        scalar_map={"encode": [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]]})],
        8, 8, None, [(0, 8, ["NaN", "Infinity", "-Infinity", 3.7, -3.7, 300.9, -1.0, 2.0])]),
    **{f"round_{mode}": ("float64", 0.0, [CastValue(data_type="int8", rounding=mode,
                                                    out_of_range="clamp")],
                         8, 8, None, [(0, 8, ROUND)])
       for mode in ("nearest-even", "towards-zero", "towards-positive", "towards-negative",
                    "nearest-away")},
    "int8_wrap": ("int32", 0, [CastValue(data_type="int8", out_of_range="wrap")], 8, 8, None,
                  [(0, 8, [128, -129, 32767, 255, 256, -1, 0, 1000])]),
    "int64_to_float64": ("int64", 0, [CastValue(data_type="float64")], 4, 4, None,
                         [(0, 4, [2**53 + 1, 2**53 + 3, -(2**53) - 2, 2**60])]),
    "float64_to_float16": ("float64", 0.0, [CastValue(data_type="float16",
                                                      out_of_range="clamp")], 6, 6, None,
                           [(0, 6, [1e6, 65519.0, 65520.0, -0.0, 1.0009765625, 1e-8])]),
    "sharded_inner": ("int32", 3, [ScaleOffset(offset=3, scale=2),
                                   CastValue(data_type="int16")], 16, 4, 8,
                      [(0, 6, [3, 4, 5, 6, 7, 8]), (8, 12, [3, 3, 3, 3])]),
    # the value codecs before the sharding codec (applied to whole shards)
    "sharded_outer": ("float64", -1.0, [ScaleOffset(offset=-1, scale=2),
                                        CastValue(data_type="int16")], 16, 4, ("outer", 8),
                      [(0, 6, [0, 1, 2, 3, 4, 5]), (8, 12, [-1, -1, -1, -1])]),
}


def _values(vals):
    return [float(v) if isinstance(v, str) else v for v in vals]


def main() -> None:
    out = HERE / "values.zarr"
    shutil.rmtree(out, ignore_errors=True)
    root = zarr.open_group(str(out), mode="w", zarr_format=3)
    cases = {}
    for name, (dtype, fill, filters, shape, chunks, shards, writes) in CASES.items():
        kw = {}
        if isinstance(shards, tuple):       # ("outer", shard length)
            kw["serializer"] = ShardingCodec(chunk_shape=(chunks,), codecs=[BytesCodec()])
            chunks, shards = shards[1], None
        a = root.create_array(name, shape=(shape,), chunks=(chunks,), dtype=dtype,
                              shards=None if shards is None else (shards,),
                              fill_value=float(fill) if isinstance(fill, str) else fill,
                              filters=filters, compressors=None, **kw)
        for start, stop, vals in writes:
            a[start:stop] = np.array(_values(vals), dtype=dtype)
        cases[name] = {"writes": writes, "read": a[:].tolist()}
    (HERE / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    main()
