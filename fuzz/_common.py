"""What every harness shares.

A harness module defines ``test_one_input(data: bytes) -> None``. It runs each step on the input
under :func:`expected`, so a :class:`zarrx.ZarrError` is an expected outcome; anything else
escapes and is a finding: another exception, a failed assertion, a crash or a sanitizer report,
a hang or an allocation past the memory limit.

Run as a script (``python fuzz/fuzz_zip.py [libFuzzer flags] [corpus dirs]``) a harness fuzzes
with atheris; imported (``tests/test_fuzz_corpus.py``), it is a plain function and atheris is not
needed. Importing zarrx inside :func:`instrumented` gives atheris coverage of zarrx's Python code;
the compiled kernels report coverage themselves when built with ``ZARRX_SANITIZE=fuzzer``.
"""
from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
import warnings
from collections.abc import Callable, Iterator

#: zarrx modules left uninstrumented: they need optional packages and take no stored bytes
_SKIP = ("zarrx.bench", "zarrx.dask", "zarrx.xarray", "zarrx.cli", "zarrx.__main__")


@contextlib.contextmanager
def instrumented(fuzzing: bool, *extra: str) -> Iterator[None]:
    """Imports inside the block are instrumented for coverage when ``fuzzing`` (the harness runs
    as a script). Every zarrx module is imported here, so that lazily imported ones (the codec
    classes) are instrumented too."""
    if not fuzzing:
        yield
        return
    import atheris

    with atheris.instrument_imports(include=["zarrx", *extra]):
        import zarrx

        for mod in pkgutil.walk_packages(zarrx.__path__, "zarrx."):
            if not mod.name.startswith(_SKIP):
                with contextlib.suppress(ImportError):
                    importlib.import_module(mod.name)
        yield


def expected() -> contextlib.AbstractContextManager[None]:
    """A ZarrError is an expected outcome for hostile input; nothing else is."""
    from zarrx.errors import ZarrError

    return contextlib.suppress(ZarrError)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Warnings (a skipped zip entry, say) are expected outcomes too, and not printed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def fuzz(test_one_input: Callable[[bytes], None]) -> None:
    """Fuzz ``test_one_input`` with atheris; libFuzzer's flags come from the command line."""
    import atheris

    warnings.simplefilter("ignore")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


#: arrays up to this many elements (and chunks) are read and written whole
SMALL = 4096


def exercise_node(store: object, path: str = "", *, write: bool = True) -> None:
    """Open the node at ``path`` of ``store`` as a user would: list a group's members (to
    ``max_depth`` 2); read a small array whole and, if ``write``, write it back (every chunk
    encoded, even fill-only ones) and read it again. Each step is expected to succeed or raise a
    ZarrError."""
    import zarrx

    with expected(), zarrx.config.set(threads=1, write_empty_chunks=True):
        node = zarrx.open(store, mode="r+" if write else "r", path=path)
        if isinstance(node, zarrx.Group):
            for _, member in node.members(max_depth=2):
                if isinstance(member, zarrx.Array):
                    exercise_array(member, write=write)
        else:
            exercise_array(node, write=write)


def exercise_array(a: object, *, write: bool = True) -> None:
    """Read a small array (``SMALL`` elements, ``SMALL // 64`` chunks) whole; if ``write`` and
    its stored objects are small too (``SMALL_OBJECT``: a write builds whole chunks, whatever
    the array's size), write it back and reread it. Just describe a large one."""
    repr(a)
    if a.size > SMALL or a.nchunks > SMALL // 64:
        return
    with expected():
        value = a[...]
        assert value.shape == a.shape, (value.shape, a.shape)
        if write and object_nbytes(a.metadata) <= SMALL_OBJECT:
            a[...] = value
            again = a[...]
            assert again.shape == a.shape and again.dtype == value.dtype


#: the largest stored object (chunk or shard) a harness writes, in bytes
SMALL_OBJECT = 1 << 20


def object_nbytes(meta: object) -> int:
    """The size of the largest chunk (the shard, when sharded) that ``meta`` declares."""
    from zarrx.metadata.model import RegularGrid

    grid = meta.chunk_grid
    if isinstance(grid, RegularGrid):
        edges = grid.chunk_shape
    else:
        edges = tuple(max(sizes, default=0) for sizes in grid.chunk_sizes)
    n = 1
    for e in edges:
        n *= e
    return n * max(meta.data_type.numpy.itemsize, 8)
