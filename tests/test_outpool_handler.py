"""The numpy memory handler of read outputs (csrc/zx_outpool.c), called as numpy calls it
(NEP 49: malloc, calloc, realloc, free with a size), directly through its function table."""
from __future__ import annotations

import ctypes
import os
import gc

import numpy as np
import pytest

import zarrx
from zarrx import _outputs

MiB = 1 << 20
PAGE = 4096
SIZE_MAX = 2**64 - 1 if ctypes.sizeof(ctypes.c_size_t) == 8 else 2**32 - 1

_MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_CALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
_REALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class _Allocator(ctypes.Structure):       # PyDataMemAllocator
    _fields_ = [("ctx", ctypes.c_void_p), ("malloc", _MALLOC), ("calloc", _CALLOC),
                ("realloc", _REALLOC), ("free", _FREE)]


class _Handler(ctypes.Structure):         # PyDataMem_Handler
    _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8),
                ("allocator", _Allocator)]


_lib = ctypes.CDLL(_outputs.__file__)
_lib.zx_outpool_handler.restype = ctypes.c_void_p
H = _Handler.from_address(_lib.zx_outpool_handler())
A = H.allocator


@pytest.fixture(autouse=True)
def _empty_pool():
    gc.collect()
    _outputs.trim()
    with zarrx.config.set(memory_pool=64 * MiB):
        yield
    _outputs.trim()


def test_the_handler_is_named_and_versioned_as_numpy_expects():
    assert H.name == b"zarrx_outpool" and H.version == 1


def test_blocks_are_page_aligned_and_a_zero_size_is_a_block():
    for size in (0, 1, 16, PAGE, 3 * MiB + 5):
        p = A.malloc(None, size)
        assert p and p % PAGE == 0
        ctypes.memset(p, 1, max(size, 1))
        A.free(None, p, max(size, 1))
    assert _outputs.live() == 0


def test_calloc_zeroes_a_reused_block_and_sizes_that_overflow_fail_cleanly():
    p = A.malloc(None, 2 * MiB)
    ctypes.memset(p, 0xAB, 2 * MiB)
    A.free(None, p, 2 * MiB)
    q = A.calloc(None, MiB // 2, 4)
    assert q == p                                        # the very block, reused
    assert ctypes.string_at(q, 2 * MiB) == bytes(2 * MiB)
    A.free(None, q, 2 * MiB)
    for size in (SIZE_MAX, SIZE_MAX - PAGE + 2, SIZE_MAX // 2 + 1):
        assert A.malloc(None, size) is None
        assert A.calloc(None, size, 1) is None
    assert A.calloc(None, 2, SIZE_MAX // 2 + 1) is None   # the product wraps: refused
    assert A.calloc(None, SIZE_MAX // 8, 16) is None
    assert _outputs.live() == 0 and _outputs.pooled()[1] == 1


def test_realloc_keeps_the_contents_and_a_failed_one_keeps_the_block():
    p = A.malloc(None, MiB)
    ctypes.memset(p, 7, MiB)
    p = A.realloc(None, p, 3 * MiB)                       # grows into another block
    assert ctypes.string_at(p, MiB) == b"\7" * MiB
    same = A.realloc(None, p, 2 * MiB)                    # a little smaller: in place
    assert same == p
    small = A.realloc(None, p, 100)                       # much smaller: a block of its own
    assert ctypes.string_at(small, 100) == b"\7" * 100
    assert A.realloc(None, small, SIZE_MAX) is None       # fails: `small` is still valid
    assert ctypes.string_at(small, 100) == b"\7" * 100
    A.free(None, small, 100)
    assert _outputs.live() == 0


def test_more_blocks_freed_than_the_pool_has_slots_for():
    with zarrx.config.set(memory_pool=1 << 40):
        blocks = [A.malloc(None, PAGE * (1 + i % 3)) for i in range(700)]
        for p in blocks:
            A.free(None, p, PAGE)
        nbytes, n = _outputs.pooled()
        assert n == 512 and nbytes <= 3 * PAGE * 512        # the oldest released
    assert _outputs.live() == 0


def test_a_block_larger_than_the_limit_is_never_pooled():
    with zarrx.config.set(memory_pool=2 * MiB):
        for size in (2 * MiB + 1, 3 * MiB, 2 * MiB, MiB):
            A.free(None, A.malloc(None, size), size)
            assert _outputs.pooled()[0] <= 2 * MiB
        assert _outputs.pooled() == (MiB, 1)              # the 1 MiB one pushed it out


def test_arrays_of_the_handler_resize_through_it():
    x = _outputs.empty((MiB,), "u1")
    x[:] = 3
    x.resize((3 * MiB,), refcheck=False)                   # numpy calls realloc
    assert (x[:MiB] == 3).all() and not x[MiB:].any()
    x.resize((0,), refcheck=False)
    del x
    assert _outputs.live() == 0


def test_the_limit_bounds_the_memory_pooled_blocks_hold_header_pages_included():
    # a block holds its data and the page before it: at memory_pool=2 MiB a freed 2 MiB block
    # (2 MiB + 4 KiB) is released, where it was pooled and the pool held more than its limit
    with zarrx.config.set(memory_pool=2 * MiB):
        A.free(None, A.malloc(None, 2 * MiB), 2 * MiB)
        assert _outputs.pooled() == (0, 0)
    with zarrx.config.set(memory_pool=2 * MiB + PAGE):
        A.free(None, A.malloc(None, 2 * MiB), 2 * MiB)
        assert _outputs.pooled() == (2 * MiB, 1)
    with zarrx.config.set(memory_pool=10 * PAGE):             # 5 blocks of 1 page: 10 pages
        for p in [A.malloc(None, PAGE) for _ in range(8)]:
            A.free(None, p, PAGE)
        assert _outputs.pooled() == (5 * PAGE, 5)


def test_the_default_limit_keeps_an_output_of_the_whole_default_size():
    # by default the pool keeps an eighth of the machine's memory, at most 1 GiB, of data: a
    # freed output of that size is kept with its header page, so that reading it again reuses it
    with zarrx.config.set(memory_pool=None):
        data = zarrx.config.pool_limit() - zarrx.config._POOL_HEADERS
        assert data == min(1 << 30, (os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
                           // 8)
        size = data // PAGE * PAGE
        A.free(None, A.malloc(None, size), size)
        assert _outputs.pooled() == (size, 1)
        out = _outputs.empty((size // 4,), np.float32)       # the pooled block, reused
        assert _outputs.pooled() == (0, 0)
        del out
