"""Regenerates the GDAL corpus beside this script (run by hand; needs gdal_translate,
gdalmdimtranslate and gdalmdiminfo from the Debian package gdal-bin, and ncgen from netcdf-bin
for strings.zarr and unicode.zarr). ``python make_corpus.py [OUT_DIR]`` writes to OUT_DIR instead.

Each ``<name>.zarr`` is written by GDAL's Zarr driver from inputs made here (raw little-endian
rasters described by VRT files, a multidimensional VRT, a netCDF file from CDL), and
``<name>.json`` is what ``gdalmdiminfo -detailed`` reports about it: data types, dimensions,
block sizes, nodata values, attributes and values as GDAL reads them back.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
GEOTRANSFORM = "100, 10, 0, 500, 0, -10"
# the raster types GDAL 3.6 writes through gdal_translate: numpy type -> (GDAL type, nodata)
RASTER_TYPES = {
    "u1": ("Byte", "255"), "i2": ("Int16", "-32768"), "u2": ("UInt16", "65535"),
    "i4": ("Int32", "-2147483648"), "u4": ("UInt32", "0"), "i8": ("Int64", "7"),
    "u8": ("UInt64", "7"), "f4": ("Float32", "nan"), "f8": ("Float64", "-9999.5"),
}
# compress.zarr: array name -> creation options (every array int16, shape (9, 11))
COMPRESS = {
    "none": [], "blosc_lz4": ["COMPRESS=BLOSC"],
    "blosc_lz4hc": ["COMPRESS=BLOSC", "BLOSC_CNAME=lz4hc"],
    "blosc_blosclz": ["COMPRESS=BLOSC", "BLOSC_CNAME=blosclz", "BLOSC_CLEVEL=9"],
    "blosc_zlib": ["COMPRESS=BLOSC", "BLOSC_CNAME=zlib"],
    "blosc_zstd": ["COMPRESS=BLOSC", "BLOSC_CNAME=zstd", "BLOSC_SHUFFLE=2"],
    "blosc_noshuffle": ["COMPRESS=BLOSC", "BLOSC_SHUFFLE=0"],
    "zlib": ["COMPRESS=ZLIB", "ZLIB_LEVEL=9"], "gzip": ["COMPRESS=GZIP"],
    "zstd": ["COMPRESS=ZSTD"], "lz4": ["COMPRESS=LZ4"],
    "delta": ["FILTER=DELTA"], "delta_zlib": ["FILTER=DELTA", "COMPRESS=ZLIB"],
    "order_f": ["CHUNK_MEMORY_LAYOUT=F"], "slash": ["DIM_SEPARATOR=/"],
    "order_f_slash_gzip": ["CHUNK_MEMORY_LAYOUT=F", "DIM_SEPARATOR=/", "COMPRESS=GZIP"],
}
# quirks.zarr: what GDAL writes outside what numcodecs takes (see README.md)
QUIRKS = {
    "none": [],
    "blosc_bit": ["COMPRESS=BLOSC", "BLOSC_CNAME=zstd", "BLOSC_SHUFFLE=BIT"],
    "blosc_noshuffle": ["COMPRESS=BLOSC", "BLOSC_SHUFFLE=NONE"],
    "blosc_snappy": ["COMPRESS=BLOSC", "BLOSC_CNAME=snappy"],
    "lzma": ["COMPRESS=LZMA"], "lzma_delta": ["COMPRESS=LZMA", "LZMA_DELTA=2"],
    "delta_i4": ["FILTER=DELTA", "DELTA_DTYPE=<i4"],
}
NAMES = ["raster", "compress", "quirks", "mdim", "mdim_delta", "strings", "unicode", "draft_v3"]


def raster_values(code: str) -> np.ndarray:
    """The (4, 5) values of raster.zarr's array ``code``: a ramp from -3 (wrapping for the
    unsigned types, halved for the float types), the type's extremes at [0, 0] and [0, 1],
    its nodata value at [1, 2]."""
    dt = np.dtype(code)
    ramp = np.arange(20).reshape(4, 5) - 3
    out = (ramp / 2 if dt.kind == "f" else ramp).astype(dt)
    info = np.finfo(dt) if dt.kind == "f" else np.iinfo(dt)
    out[0, 0], out[0, 1] = info.min, info.max
    out[1, 2] = float(RASTER_TYPES[code][1]) if dt.kind == "f" else int(RASTER_TYPES[code][1])
    return out


def band_values() -> np.ndarray:
    """raster.zarr's two-band array ``bands``: (2, 5, 7) int16, nodata -20 at [0, 0, 0]."""
    return (np.arange(2 * 5 * 7).reshape(2, 5, 7) * 3 - 20).astype("<i2")


def compress_values() -> np.ndarray:
    """Every array of compress.zarr and quirks.zarr: (9, 11) int16, nodata -300 at [0, 0]."""
    return ((np.arange(9 * 11).reshape(9, 11) * 37) % 1000 - 300).astype("<i2")


def _vrt(path: Path, values: np.ndarray, gdal_type: str, nodata: str | None,
         geotransform: str | None = GEOTRANSFORM) -> Path:
    """A VRT of ``values`` (bands, rows, columns) over a raw little-endian file."""
    raw = path.with_suffix(".bin")
    values = np.ascontiguousarray(values.astype(values.dtype.newbyteorder("<")))
    values.tofile(raw)
    nb, h, w = values.shape
    size = values.dtype.itemsize
    nd = "" if nodata is None else f"<NoDataValue>{nodata}</NoDataValue>"
    bands = "".join(
        f'<VRTRasterBand dataType="{gdal_type}" band="{b + 1}" subClass="VRTRawRasterBand">'
        f'<SourceFilename relativetoVRT="1">{raw.name}</SourceFilename>'
        f"<ImageOffset>{b * h * w * size}</ImageOffset><PixelOffset>{size}</PixelOffset>"
        f"<LineOffset>{w * size}</LineOffset><ByteOrder>LSB</ByteOrder>{nd}</VRTRasterBand>"
        for b in range(nb))
    gt = "" if geotransform is None else f"<GeoTransform>{geotransform}</GeoTransform>"
    path.write_text(f'<VRTDataset rasterXSize="{w}" rasterYSize="{h}">{gt}{bands}'
                    "</VRTDataset>\n")
    return path


def _run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def _translate(src: Path, dst: Path, name: str, options: list[str], *extra: str) -> None:
    """gdal_translate ``src`` into the array ``name`` of the hierarchy ``dst`` (appended when
    ``dst`` exists)."""
    co = [f"ARRAY_NAME={name}", *options]
    if dst.exists():
        co.append("APPEND_SUBDATASET=YES")
    _run("gdal_translate", "-q", "-of", "Zarr", *extra,
         *[a for o in co for a in ("-co", o)], str(src), str(dst))


def write_raster(work: Path, out: Path) -> None:
    for code, (gdal_type, nodata) in RASTER_TYPES.items():
        vrt = _vrt(work / f"{code}.vrt", raster_values(code)[None], gdal_type, nodata)
        _translate(vrt, out, code, [])
    vrt = _vrt(work / "bands.vrt", band_values(), "Int16", "-20", "0, 0.5, 0, 10, 0, -0.5")
    _translate(vrt, out, "bands", ["BLOCKSIZE=2,3"], "-a_srs", "EPSG:4326")


def _write_compressed(work: Path, out: Path, arrays: dict[str, list[str]]) -> None:
    vrt = _vrt(work / "compress.vrt", compress_values()[None], "Int16", "-300")
    for name, options in arrays.items():
        _translate(vrt, out, name, ["BLOCKSIZE=4,5", *options])


def write_mdim(work: Path, out: Path, *options: str) -> None:
    _run("gdalmdimtranslate", "-q", "-of", "Zarr", "-co", "ARRAY:COMPRESS=ZLIB",
         *[a for o in options for a in ("-co", o)], str(HERE / "mdim.vrt"), str(out))


def _write_strings(work: Path, out: Path, string_format: str) -> None:
    nc = work / "strings.nc"
    _run("ncgen", "-4", "-o", str(nc), str(HERE / "strings.cdl"))
    _run("gdalmdimtranslate", "-q", "-of", "Zarr", "-co", f"ARRAY:STRING_FORMAT={string_format}",
         str(nc), str(out))


def write_draft_v3(work: Path, out: Path) -> None:
    vrt = _vrt(work / "draft.vrt", raster_values("i2")[None], "Int16", "-32768", None)
    _translate(vrt, out, "a", ["FORMAT=ZARR_V3", "COMPRESS=GZIP"])


WRITERS = {
    "raster": write_raster,
    "compress": lambda work, out: _write_compressed(work, out, COMPRESS),
    "quirks": lambda work, out: _write_compressed(work, out, QUIRKS),
    "mdim": write_mdim,
    "mdim_delta": lambda work, out: write_mdim(work, out, "ARRAY:FILTER=DELTA"),
    "strings": lambda work, out: _write_strings(work, out, "STRING"),
    "unicode": lambda work, out: _write_strings(work, out, "UNICODE"),
    "draft_v3": write_draft_v3,
}


def write(name: str, out_dir: Path) -> Path:
    """Writes ``<name>.zarr`` and, but for the v3 draft GDAL 3.6 reads back only partly,
    ``<name>.json`` into ``out_dir``; returns the store's path."""
    out = out_dir / f"{name}.zarr"
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as work:
        WRITERS[name](Path(work), out)
    if name != "draft_v3":
        info = _run("gdalmdiminfo", "-detailed", str(out))
        (out_dir / f"{name}.json").write_text(info)
    return out


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for name in NAMES:
        write(name, out_dir)


if __name__ == "__main__":
    main()
