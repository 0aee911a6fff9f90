# zarrx-libs:
"""How many values a chunk stored as one document (numcodecs ``json2``, ``msgpack2``) holds,
counted in one pass over its bytes before it is parsed: parsing makes a Python object of every
value, so :mod:`zarrx.codecs.objects` refuses a document holding far more values than its chunk
has items before paying for them.

``json_values`` masks string literals (an unclosed one runs to the end; a backslash escapes the
character after it) and, outside them, counts ``1 + commas + opening brackets + colons``: an
upper bound of the values and object keys a JSON text parses into (exact but for empty
containers). ``msgpack_values`` counts the MessagePack headers of the bytes, skipping the
payloads of strings, binaries and extensions: each header is one value (a map's keys
included). A truncated or malformed text is counted as far as it goes; the parser words its
errors.
"""

from zarrx._clib.zx_jsontext cimport zx_skip_string


def json_values(const unsigned char[::1] data):
    """An upper bound of the values (and object keys) the JSON text ``data`` parses into."""
    cdef Py_ssize_t i = 0, n = data.shape[0], values = 1
    cdef unsigned char c
    with nogil:
        while i < n:
            c = data[i]
            i += 1
            if c == 44 or c == 58 or c == 91 or c == 123:   # ',' ':' '[' '{'
                values += 1
            elif c == 34:                                   # '"': a string literal
                i = zx_skip_string(data, i, n)
    return values


cdef inline Py_ssize_t _be(const unsigned char* p, int width) noexcept nogil:
    cdef Py_ssize_t v = 0
    cdef int k
    for k in range(width):
        v = (v << 8) | p[k]
    return v


def msgpack_values(const unsigned char[::1] data):
    """The values (map keys included) of the MessagePack bytes ``data``: its headers."""
    cdef Py_ssize_t i = 0, n = data.shape[0], values = 0, skip
    cdef unsigned char c
    cdef const unsigned char* p = &data[0] if n else NULL
    with nogil:
        while i < n:
            c = p[i]
            i += 1
            values += 1
            skip = 0
            if c <= 0x9f or c >= 0xe0 or c == 0xc0 or c == 0xc1 or c == 0xc2 or c == 0xc3:
                pass                                        # fixint, fixmap, fixarray, nil...
            elif c <= 0xbf:                                 # fixstr
                skip = c & 0x1f
            elif c == 0xc4 or c == 0xd9:                    # bin8, str8
                skip = 1 + (p[i] if i < n else 0)
            elif c == 0xc5 or c == 0xda:                    # bin16, str16
                skip = 2 + (_be(p + i, 2) if n - i >= 2 else 0)
            elif c == 0xc6 or c == 0xdb:                    # bin32, str32
                skip = 4 + (_be(p + i, 4) if n - i >= 4 else 0)
            elif c == 0xc7:                                 # ext8
                skip = 2 + (p[i] if i < n else 0)
            elif c == 0xc8:                                 # ext16
                skip = 3 + (_be(p + i, 2) if n - i >= 2 else 0)
            elif c == 0xc9:                                 # ext32
                skip = 5 + (_be(p + i, 4) if n - i >= 4 else 0)
            elif c == 0xca:                                 # float32
                skip = 4
            elif c == 0xcb:                                 # float64
                skip = 8
            elif c == 0xcc or c == 0xd0:                    # (u)int8
                skip = 1
            elif c == 0xcd or c == 0xd1:                    # (u)int16
                skip = 2
            elif c == 0xce or c == 0xd2:                    # (u)int32
                skip = 4
            elif c == 0xcf or c == 0xd3:                    # (u)int64
                skip = 8
            elif c >= 0xd4 and c <= 0xd8:                   # fixext 1, 2, 4, 8, 16
                skip = 1 + (1 << (c - 0xd4))
            elif c == 0xdc or c == 0xde:                    # array16, map16
                skip = 2
            elif c == 0xdd or c == 0xdf:                    # array32, map32
                skip = 4
            if skip >= n - i:
                break
            i += skip
    return values
