"""How the corpus records an object array's items in JSON (bytes and arrays tagged): shared by
make_corpus.py and tests/test_zarr2_corpus.py."""
import base64

import numpy as np


def jsonable(v):
    """An object array's item as JSON (bytes and arrays tagged)."""
    if isinstance(v, bytes):
        return {"bytes": base64.b64encode(v).decode()}
    if isinstance(v, np.ndarray):
        return {"array": v.tolist(), "dtype": v.dtype.str}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: jsonable(x) for k, x in v.items()}
    return v
