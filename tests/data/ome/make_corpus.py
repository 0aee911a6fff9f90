"""Regenerates image-0.4.zarr and image-0.5.zarr beside this script (run by hand, with the
Python package ome-zarr installed): an OME-NGFF image of axes t, c, y, x with its default
pyramid and a label image "cells", written by ome-zarr-py's write_image and write_labels in
NGFF 0.4 (Zarr v2, dimension_separator "/") and 0.5 (Zarr v3)."""
import shutil
from pathlib import Path

import numpy as np
import zarr
from ome_zarr.format import FormatV04, FormatV05
from ome_zarr.io import parse_url
from ome_zarr.writer import write_image, write_labels

IMAGE = (np.arange(2 * 2 * 16 * 20) % 251).astype("uint8").reshape(2, 2, 16, 20)
LABELS = np.zeros((16, 20), dtype="uint16")
LABELS[2:6, 3:9] = 1
LABELS[10:14, 12:18] = 2


def main() -> None:
    here = Path(__file__).resolve().parent
    for version, fmt in (("0.4", FormatV04()), ("0.5", FormatV05())):
        path = here / f"image-{version}.zarr"
        shutil.rmtree(path, ignore_errors=True)
        store = parse_url(str(path), mode="w", fmt=fmt).store
        root = zarr.group(store=store, zarr_format=fmt.zarr_format)
        write_image(image=IMAGE, group=root, axes="tcyx", fmt=fmt,
                    storage_options={"chunks": (1, 1, 8, 8)})
        write_labels(labels=LABELS, group=root, name="cells", axes="yx", fmt=fmt)


if __name__ == "__main__":
    main()
