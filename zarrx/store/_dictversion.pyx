"""The version tag CPython keeps in every dict (PEP 509): a number that changes with every
change of the dict, so a store over a caller's dict can tell whether anyone changed it since
it last looked, without scanning its keys. CPython 3.10 to 3.13 keep it (built with the GIL);
elsewhere :func:`version` returns None and the store scans the dict."""
from libc.stdint cimport uint64_t

cdef extern from *:
    """
    #include <stdint.h>
    static int zx_dict_version(PyObject *d, uint64_t *out) {
    #if defined(PYPY_VERSION) || PY_VERSION_HEX >= 0x030E0000 || defined(Py_GIL_DISABLED)
        (void)d; (void)out;
        return 0;
    #else
    #if defined(__GNUC__)
    #pragma GCC diagnostic push
    #pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    #endif
        *out = ((PyDictObject *)d)->ma_version_tag;
    #if defined(__GNUC__)
    #pragma GCC diagnostic pop
    #endif
        return 1;
    #endif
    }
    """
    int zx_dict_version(object d, uint64_t *out)


def version(dict d):
    """``d``'s version tag, or None where the interpreter keeps none."""
    cdef uint64_t v = 0
    if not zx_dict_version(d, &v):
        return None
    return v
