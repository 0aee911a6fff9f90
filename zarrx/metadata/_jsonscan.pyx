"""One pass over a JSON text for ``zarrx.metadata.json``: how deep its brackets nest and how
many object keys it writes; the keys held by the value parsed from it; whether a value is
made of the plain types JSON parses into; and the memory such a value holds (an estimate, for
the parse cache).

``scan`` masks string literals (an unclosed one runs to the end of the text; a backslash
escapes the character after it) and, outside them, counts bracket nesting and the object keys
written (string literals followed, after JSON whitespace, by a colon). ``tree_keys`` counts the
keys of every object in a parsed value. For a text that parses, the two key counts differ
exactly when some object repeats a key, since parsing keeps only the last of them. Errors are
worded by the caller. ``tree_keys`` and ``footprint`` recurse as a Python function would: a
value nested past the interpreter's recursion limit raises RecursionError.
"""

from cpython.object cimport Py_SIZE
from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND

from zarrx._clib.zx_jsontext cimport zx_skip_string


cdef extern from "Python.h":
    # the interpreter's recursion limit, as a recursive Python function has it: a value nested
    # deeper raises RecursionError instead of overflowing the C stack (non-zero: it is set)
    int Py_EnterRecursiveCall(const char* where)
    void Py_LeaveRecursiveCall()


def scan(const unsigned char[::1] data):
    """``(depth, keys)`` of the JSON text ``data``: the deepest bracket nesting outside string
    literals, and the number of object keys written."""
    cdef Py_ssize_t i = 0, n = data.shape[0], keys = 0, depth = 0, deepest = 0
    cdef unsigned char c
    with nogil:
        while i < n:
            c = data[i]
            i += 1
            if c == 91 or c == 123:             # '[' '{'
                depth += 1
                if depth > deepest:
                    deepest = depth
            elif c == 93 or c == 125:           # ']' '}'
                depth -= 1
            elif c == 34:                       # '"': a string literal
                i = zx_skip_string(data, i, n)
                while i < n and (data[i] == 32 or data[i] == 9 or data[i] == 10
                                 or data[i] == 13):
                    i += 1
                if i < n and data[i] == 58:     # ':': the string was a key
                    keys += 1
    return deepest, keys


cdef Py_ssize_t _tree(object value) except -1:
    cdef Py_ssize_t count = 0
    if Py_EnterRecursiveCall(" in tree_keys"):
        return -1
    try:
        if type(value) is dict:
            count = len(<dict>value)
            for v in (<dict>value).values():
                if type(v) is dict or type(v) is list:
                    count += _tree(v)
        elif type(value) is list:
            for v in <list>value:
                if type(v) is dict or type(v) is list:
                    count += _tree(v)
    finally:
        Py_LeaveRecursiveCall()
    return count


def tree_keys(value):
    """How many keys the dicts in ``value`` (a parsed JSON value) hold, nested ones included."""
    return _tree(value)


cdef bint _plain(object value, int depth):
    cdef type t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return True
    if depth > 64:
        return False
    if t is list:
        for v in <list>value:
            if not _plain(v, depth + 1):
                return False
        return True
    if t is dict:
        for k, v in (<dict>value).items():
            if type(k) is not str or not _plain(v, depth + 1):
                return False
        return True
    return False


def plain(value):
    """Whether ``value`` is made only of dict (with str keys), list, str, int, float, bool and
    None, exactly those types (no subclasses), nested at most 64 levels: what JSON parses into.
    The ``repr`` of such values tells any two of them apart."""
    return _plain(value, 0)


cdef inline Py_ssize_t _dict_size(Py_ssize_t n) noexcept:
    # CPython's dict of n keys, roughly (184 bytes up to 5 keys, about 37 per key beyond)
    return 184 if n <= 5 else 40 * n


cdef Py_ssize_t _footprint(object value) except -1:
    cdef type t = type(value)
    cdef Py_ssize_t size
    if t is str:
        return 49 + PyUnicode_GET_LENGTH(value) * PyUnicode_KIND(value)
    if t is int:                                # 30-bit digits after a 24-byte header
        size = Py_SIZE(value)
        return 28 if -1 <= size <= 1 else 24 + 4 * (size if size > 0 else -size)
    if t is float:
        return 24
    if t is not list and t is not dict:
        return 0                                # True, False, None: shared singletons
    if Py_EnterRecursiveCall(" in footprint"):
        return -1
    try:
        if t is list:
            size = 56 + 8 * len(<list>value)
            for v in <list>value:
                size += _footprint(v)
        else:
            size = _dict_size(len(<dict>value))
            for k, v in (<dict>value).items():
                size += _footprint(k) + _footprint(v)
    finally:
        Py_LeaveRecursiveCall()
    return size


def footprint(value, skip=None):
    """An estimate of the memory held by ``value`` (a parsed JSON value), in bytes: what its
    dicts, lists, strings and numbers take in CPython, counted as if none were shared. The
    entry of the top-level key ``skip`` (when ``value`` is a dict holding it) is left out."""
    cdef Py_ssize_t size
    if type(value) is dict and skip is not None and skip in <dict>value:
        size = _dict_size(len(<dict>value))
        for k, v in (<dict>value).items():
            if k != skip:
                size += _footprint(k) + _footprint(v)
        return size
    return _footprint(value)
