# Declarations of csrc/zx_dirlist.h (the names in an open directory, looked up by hash).

cdef extern from "zx_dirlist.h" nogil:
    ctypedef struct zx_names:
        size_t count

    enum:
        ZX_NAMES_OK
        ZX_NAMES_TOO_MANY
        ZX_NAMES_CHANGED
        ZX_NAMES_RECENT
        ZX_NAMES_FAILED

    void zx_names_init(zx_names* ns)
    int zx_names_list(zx_names* ns, int dirfd, size_t most)
    int zx_names_has(const zx_names* ns, const char* name, size_t n)
    void zx_names_clear(zx_names* ns)
    void zx_names_free(zx_names* ns)
    long long zx_stamp_grain(long nsec)
    int zx_stamps_recent(long long now_s, long now_ns, long long c_s, long c_ns,
                         long long m_s, long m_ns)
    long long zx_dirlist_min_grain(long long set)
    size_t zx_dirlist_recent_count()
