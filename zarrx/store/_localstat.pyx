"""Generations of many keys below a :class:`~zarrx.store.local.LocalStore` root without
reading them (``LocalStore.generations``): what a write checks of the documents of every group
above its node, which another writer may have consolidated since they were read.

Nothing is read: per key one ``fstatat`` in its folder, which is opened (``O_PATH``, with the
link-refusing resolve flags of :mod:`zarrx.store._localread`) one name at a time, from the
folder of the key before when it lies below it (the documents of the groups above a node, from
the top: each folder of the path opened once, where a walk from the root per key would cost
the square of the depth), else from the root. As there, a key that is not plain, a link, and
any failure other than "no such file" come back as ``fallback`` for the Python path to word.
"""
from libc.stdint cimport uint64_t
from libc.string cimport memcmp, memcpy
from libc.errno cimport errno, ENOENT, ENOTDIR
from posix.unistd cimport close
from posix.stat cimport struct_stat, fstatat, S_ISREG, S_ISLNK
from cpython.bytes cimport PyBytes_AS_STRING

from zarrx._clib.zx_openat2 cimport zx_openat2, zx_openat2_at
from zarrx.store._localread cimport _plain_key

cdef extern from "<fcntl.h>" nogil:
    int O_DIRECTORY, O_CLOEXEC, O_PATH, AT_SYMLINK_NOFOLLOW

cdef enum:
    PATH_MAX = 4096
    NAME_MAX = 255

cdef long long _SEC_MAX = 9223372035    # seconds whose nanoseconds (plus < 1 s) fit 64 bits


cdef bytes _kernel_key(object key, Py_ssize_t rn):
    """The UTF-8 bytes of ``key`` when the kernel walk takes it (a plain ``str`` short enough
    beside a root of ``rn`` bytes), else None."""
    if type(key) is not str:
        return None
    cdef bytes kb = (<str>key).encode("utf-8", "surrogatepass")
    cdef Py_ssize_t kn = len(kb)
    if rn + 1 + kn < PATH_MAX and _plain_key(<const unsigned char*>PyBytes_AS_STRING(kb), kn):
        return kb
    return None


cdef object _stamp_ns(long long sec, long nsec):
    """A stamp in nanoseconds since 1970, as ``os.stat`` makes ``st_mtime_ns``: in 64 bits
    between the years 1677 and 2262, as a Python int beyond (where 64 bits would wrap)."""
    if -_SEC_MAX <= sec <= _SEC_MAX:
        return sec * 1000000000 + nsec
    return <object>sec * 1000000000 + nsec


def generations(bytes root, list keys, uint64_t resolve, object fallback):
    """``[tuple | None | fallback]``, one per key of ``keys`` (``str``): the generation of the
    regular file ``<root>/<key>`` as :func:`zarrx.store.localfs.generation_of` makes it from
    its ``stat``, None when there is none (absent, or not a regular file), ``fallback`` where
    the Python path must answer (see the module docstring)."""
    cdef Py_ssize_t rn = len(root), i, n = len(keys), hl = -1, fl, c, e
    cdef list out = [fallback] * n
    cdef char path[PATH_MAX]
    cdef char name[NAME_MAX + 1]
    cdef int top, at, nfd, err
    cdef struct_stat st
    cdef bytes kb, held = None
    cdef const char* kp
    if rn == 0 or rn >= PATH_MAX - 2:
        return out
    memcpy(path, PyBytes_AS_STRING(root), rn)
    path[rn] = 0
    top = zx_openat2(path, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve)
    if top < 0:
        return out
    at = top                                # the folder held: ``held[:hl]`` (-1: the root)
    try:
        for i in range(n):
            kb = _kernel_key(keys[i], rn)
            if kb is None:
                continue
            kp = PyBytes_AS_STRING(kb)
            fl = len(kb) - 1                # where the key's folder ends (-1: the root)
            while fl >= 0 and kp[fl] != 47:
                fl -= 1
            if not (held is not None and fl >= hl and (hl < 0 or (
                    kp[hl] == 47 and memcmp(kp, PyBytes_AS_STRING(held), hl) == 0))):
                if at != top:
                    close(at)
                at, hl = top, -1
            c = hl + 1                      # the names between the folder held and the key's
            err = 0
            while c < fl:
                e = c
                while kp[e] != 47:
                    e += 1
                memcpy(name, kp + c, e - c)
                name[e - c] = 0
                # (no O_NOFOLLOW: with O_PATH it would open a link itself; the resolve flags
                # refuse it, ELOOP, which the Python path words)
                nfd = zx_openat2_at(at, name, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve)
                if nfd < 0:
                    err = errno
                    break
                if at != top:
                    close(at)
                at, hl, c = nfd, e, e + 1
            held = kb
            if err != 0:
                if err == ENOENT or err == ENOTDIR:
                    out[i] = None
                continue
            if fstatat(at, kp + fl + 1, &st, AT_SYMLINK_NOFOLLOW) != 0:
                if errno == ENOENT:
                    out[i] = None
                continue
            if S_ISLNK(st.st_mode):
                continue
            if not S_ISREG(st.st_mode):
                out[i] = None
                continue
            out[i] = (st.st_dev, st.st_ino, st.st_size,
                      _stamp_ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec),
                      _stamp_ns(st.st_ctim.tv_sec, st.st_ctim.tv_nsec))
    finally:
        if at != top:
            close(at)
        close(top)
    return out
