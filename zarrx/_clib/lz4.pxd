# Declarations only, mirroring lz4.h (liblz4 >= 1.9).
cdef extern from "lz4.h" nogil:
    int LZ4_MAX_INPUT_SIZE
    int LZ4_compressBound(int inputSize)
    int LZ4_compress_fast(const char* src, char* dst, int srcSize, int dstCapacity,
                          int acceleration)
    int LZ4_decompress_safe(const char* src, char* dst, int compressedSize, int dstCapacity)
    int LZ4_versionNumber()
