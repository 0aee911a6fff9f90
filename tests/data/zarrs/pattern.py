"""What every array of corpus.zarr holds and how it was written: shared by make_corpus.py and
tests/test_producers_zarrs.py (which writes the same way with zarrx and compares the bytes)."""
import numpy as np

DATA = (np.arange(10 * 12, dtype="i4").reshape(10, 12) * 7) % 1000 + 1
PARTIAL = DATA.copy()
PARTIAL[1:3, 2:7] = -1
PARTIAL[6:10, 8:12] = 0         # back to the fill value: those inner chunks are dropped
EMPTY = np.zeros((10, 12), "i4")
EMPTY[0:3, 0:3] = 5


def expected(name):
    """What the array ``name`` holds."""
    return PARTIAL if name.startswith("partial") else EMPTY if name.startswith("empty") else DATA


def write(arr, name):
    """Write the array ``name`` as the corpus was written: "partial_*" whole, then in parts;
    "empty_*" one corner; the others whole."""
    if name.startswith("partial"):
        arr[...] = DATA
        arr[1:3, 2:7] = -1
        arr[6:10, 8:12] = 0
    elif name.startswith("empty"):
        arr[0:3, 0:3] = 5
    else:
        arr[...] = DATA
