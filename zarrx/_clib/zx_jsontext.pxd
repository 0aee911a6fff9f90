# Scanning JSON text byte by byte, shared by the value counter of stored documents
# (zarrx/codecs/_documents.pyx) and the metadata depth scan (zarrx/metadata/_jsonscan.pyx).

cdef inline Py_ssize_t zx_skip_string(const unsigned char[::1] data, Py_ssize_t i,
                                      Py_ssize_t n) noexcept nogil:
    # The index just past the string literal whose opening quote is at i - 1: past its
    # closing quote, or n or more when it is unclosed (a backslash escapes the next byte).
    cdef unsigned char c
    while i < n:
        c = data[i]
        i += 1
        if c == 92:                             # '\\': the next byte is escaped
            i += 1
        elif c == 34:                           # '"': the closing quote
            break
    return i
