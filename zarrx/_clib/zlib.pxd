# Declarations only, mirroring zlib.h (zlib >= 1.2.9).
cdef extern from "zlib.h" nogil:
    ctypedef unsigned char Bytef
    ctypedef unsigned int uInt
    ctypedef unsigned long uLong

    ctypedef struct z_stream:
        Bytef* next_in
        uInt avail_in
        uLong total_in
        Bytef* next_out
        uInt avail_out
        uLong total_out
        const char* msg
        void* zalloc
        void* zfree
        void* opaque

    int Z_OK
    int Z_STREAM_END
    int Z_NEED_DICT
    int Z_ERRNO
    int Z_STREAM_ERROR
    int Z_DATA_ERROR
    int Z_MEM_ERROR
    int Z_BUF_ERROR
    int Z_NO_FLUSH
    int Z_FINISH
    int Z_DEFLATED
    int Z_DEFAULT_STRATEGY
    int Z_DEFAULT_COMPRESSION
    int MAX_WBITS

    const char* zlibVersion()
    int deflateInit2(z_stream* strm, int level, int method, int windowBits, int memLevel,
                     int strategy)
    int deflate(z_stream* strm, int flush)
    int deflateEnd(z_stream* strm)
    uLong deflateBound(z_stream* strm, uLong sourceLen)
    int inflateInit2(z_stream* strm, int windowBits)
    int inflate(z_stream* strm, int flush)
    int inflateReset(z_stream* strm)
    int inflateEnd(z_stream* strm)
