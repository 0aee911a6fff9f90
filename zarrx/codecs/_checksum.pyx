"""The 32-bit checksums numcodecs computes without a library, as HDF5 defines them: Fletcher-32
and Bob Jenkins' lookup3 hash (``hashlittle``), over any C-contiguous buffer, GIL released."""
from libc.stdint cimport uint8_t, uint32_t


cdef inline uint32_t _fold(uint32_t x) noexcept nogil:
    return (x & 0xffff) + (x >> 16)


def fletcher32(const uint8_t[::1] src):
    """Fletcher-32 of ``src`` as HDF5 computes it: big-endian 16-bit words (an odd last byte is
    the high byte of a last word), both sums folded (end-around carry) every 360 words and at
    the end; ``sum2 << 16 | sum1``."""
    cdef size_t n = <size_t>src.shape[0]
    cdef size_t i = 0, words = n // 2, end
    cdef uint32_t s1 = 0, s2 = 0
    with nogil:
        while i < words:
            end = i + 360 if words - i > 360 else words    # the sums cannot overflow 32 bits
            while i < end:
                s1 += (<uint32_t>src[2 * i] << 8) | src[2 * i + 1]
                s2 += s1
                i += 1
            s1 = _fold(s1)
            s2 = _fold(s2)
        if n % 2:
            s1 += <uint32_t>src[n - 1] << 8
            s2 += s1
            s1 = _fold(s1)
            s2 = _fold(s2)
        s1 = _fold(s1)
        s2 = _fold(s2)
    return (s2 << 16) | s1


cdef inline uint32_t _rot(uint32_t x, int k) noexcept nogil:
    return (x << k) | (x >> (32 - k))


cdef inline uint32_t _word(const uint8_t* p, size_t n) noexcept nogil:
    """The first ``n`` (at most 4) bytes at ``p`` as a little-endian word."""
    cdef uint32_t w = 0
    cdef size_t j
    for j in range(n if n < 4 else 4):
        w |= (<uint32_t>p[j]) << (8 * j)
    return w


def jenkins_lookup3(const uint8_t[::1] src, uint32_t initval=0):
    """Bob Jenkins' lookup3 ``hashlittle`` of ``src`` with seed ``initval``."""
    cdef size_t n = <size_t>src.shape[0]
    cdef size_t left = n, off = 0
    cdef uint32_t a, b, c
    cdef const uint8_t* p
    a = b = c = <uint32_t>0xdeadbeef + <uint32_t>n + initval
    if n == 0:
        return c
    p = &src[0]
    with nogil:
        while left > 12:
            a += _word(p + off, 4)
            b += _word(p + off + 4, 4)
            c += _word(p + off + 8, 4)
            a -= c; a ^= _rot(c, 4); c += b
            b -= a; b ^= _rot(a, 6); a += c
            c -= b; c ^= _rot(b, 8); b += a
            a -= c; a ^= _rot(c, 16); c += b
            b -= a; b ^= _rot(a, 19); a += c
            c -= b; c ^= _rot(b, 4); b += a
            off += 12
            left -= 12
        # the last 1..12 bytes
        a += _word(p + off, left)
        if left > 4:
            b += _word(p + off + 4, left - 4)
        if left > 8:
            c += _word(p + off + 8, left - 8)
        c ^= b; c -= _rot(b, 14)
        a ^= c; a -= _rot(c, 11)
        b ^= a; b -= _rot(a, 25)
        c ^= b; c -= _rot(b, 16)
        a ^= c; a -= _rot(c, 4)
        b ^= a; b -= _rot(a, 14)
        c ^= b; c -= _rot(b, 24)
    return c
