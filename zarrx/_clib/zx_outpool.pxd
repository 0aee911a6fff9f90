# Declarations of csrc/zx_outpool.h (a numpy memory handler over a pool of freed blocks).
cdef extern from "zx_outpool.h" nogil:
    void* zx_outpool_handler()
    void zx_outpool_set_limit(size_t limit)
    size_t zx_outpool_cached(size_t* blocks)
    size_t zx_outpool_trim()
    size_t zx_outpool_live()
