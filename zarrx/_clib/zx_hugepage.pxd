# Declarations of csrc/zx_hugepage.h (transparent huge pages for fresh buffers).
cdef extern from "zx_hugepage.h" nogil:
    void zx_advise_huge(void* p, size_t n)
