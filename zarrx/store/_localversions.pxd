# Shared with the conditional-write kernel (zarrx.store._localcond).
cdef bytes _path_of(object key, bytes root)
