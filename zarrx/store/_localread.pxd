# Shared with the other local-store kernels.
cdef bint _plain_key(const unsigned char* k, Py_ssize_t n) noexcept nogil
# The racy-timestamp rule of held generations, with this module's least grain (tests set it).
cdef bint _stamps_recent(long long now_s, long now_ns, long long c_s, long c_ns,
                         long long m_s, long m_ns) noexcept nogil
