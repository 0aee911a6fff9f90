"""Regenerates corpus.zarr beside this script (run by hand): Zarr v3 arrays written by zarrs
through its zarr-python codec pipeline (pip install zarrs), strict (no fallback to
zarr-python's own codecs). What each array holds and how it is written: pattern.py.
"""
import importlib
import shutil
from pathlib import Path

import zarr
from pattern import DATA, write
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, ZstdCodec)



def shard(inner, location="end", codecs=None, index_codecs=None):
    kw = {} if index_codecs is None else {"index_codecs": index_codecs}
    return ShardingCodec(chunk_shape=inner, codecs=codecs or [BytesCodec()],
                         index_location=location, **kw)


ARRAYS = {
    "shard_end": dict(codecs=[shard((2, 3))], chunk_shape=(4, 6)),
    "shard_start": dict(codecs=[shard((2, 3), "start")], chunk_shape=(4, 6)),
    "shard_start_zstd": dict(codecs=[shard((2, 3), "start", [BytesCodec(), ZstdCodec()])],
                             chunk_shape=(4, 6)),
    "shard_index_no_crc": dict(codecs=[shard((2, 3), index_codecs=[BytesCodec()])],
                               chunk_shape=(4, 6)),
    "shard_nested": dict(codecs=[ShardingCodec(chunk_shape=(2, 6), codecs=[shard((1, 3))])],
                         chunk_shape=(4, 6)),
    "shard_nested_start": dict(codecs=[ShardingCodec(
        chunk_shape=(2, 6), index_location="start",
        codecs=[shard((1, 3), "start", [BytesCodec(), GzipCodec()])])], chunk_shape=(4, 6)),
    "blosc": dict(codecs=[BytesCodec(), BloscCodec(cname="lz4", shuffle="bitshuffle",
                                                   typesize=4)], chunk_shape=(4, 5)),
    "crc32c_transpose_big": dict(codecs=[TransposeCodec(order=(1, 0)), BytesCodec(endian="big"),
                                         Crc32cCodec()], chunk_shape=(4, 5)),
    "partial_end": dict(codecs=[shard((2, 3))], chunk_shape=(4, 6)),
    "partial_start": dict(codecs=[shard((2, 3), "start")], chunk_shape=(4, 6)),
    "empty_written": dict(codecs=[shard((2, 3))], chunk_shape=(4, 6),
                          config={"write_empty_chunks": True}),
    "empty_skipped": dict(codecs=[shard((2, 3))], chunk_shape=(4, 6),
                          config={"write_empty_chunks": False}),
}


def main() -> None:
    importlib.import_module("zarrs")        # makes its pipeline known to zarr-python
    out = Path(__file__).resolve().parent / "corpus.zarr"
    shutil.rmtree(out, ignore_errors=True)
    zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline",
                     "codec_pipeline.strict": True})
    zarr.open_group(out, mode="w", zarr_format=3)
    for name, kw in ARRAYS.items():
        arr = zarr.create(store=out, path=name, shape=DATA.shape, dtype="i4", fill_value=0,
                          zarr_format=3, **kw)
        write(arr, name)


if __name__ == "__main__":
    main()
