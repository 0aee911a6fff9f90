import numpy as np

def scatter_chunks(dec: np.ndarray, counts: tuple[int, ...], dst: np.ndarray,
                   skip: tuple[int, ...]) -> None: ...
