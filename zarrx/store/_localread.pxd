# Shared with the other local-store kernels.
cdef bint _plain_key(const unsigned char* k, Py_ssize_t n) noexcept nogil
