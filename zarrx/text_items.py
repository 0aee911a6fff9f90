"""Text items read from chunks, checked before they are handed out as text.

numpy's ``U<n>`` (Zarr v3 ``fixed_length_utf32``, Zarr v2 ``<U<n>``) items are UTF-32 code
units taken from the stored bytes as they are. A unit above ``0x10FFFF`` is no code point: numpy
holds it, but turning the item into a ``str`` (indexing one item, printing, ``tolist()``) raises
``SystemError``. A read checks the text it hands out once, and a unit out of range is a
:class:`~zarrx.errors.CodecError` naming the stored object it came from.

Variable-length strings (``string``) are decoded into objects and handed out as numpy's
``StringDType``. ``vlen-utf8`` decodes only ``str``; another object codec (``vlen-bytes``,
``numcodecs.json2``, ...) may decode bytes that are not UTF-8, numbers or ``null``, which the
conversion would turn into ``UnicodeDecodeError`` or into the text ``'None'``: they are a
CodecError naming the stored object too.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.chunk_io import ArrayIO, _located
from zarrx.errors import CodecError
from zarrx.metadata._util import short

__all__ = ["holds_text", "check_text", "as_strings", "text_as_bytes"]

LAST_CODE_POINT = 0x10FFFF


def holds_text(dtype: np.dtype) -> bool:
    """Whether items of ``dtype`` hold ``U`` text (itself, a field or a field's subarray)."""
    if dtype.names is not None:
        return any(holds_text(dtype.fields[name][0]) for name in dtype.names)
    if dtype.subdtype is not None:
        return holds_text(dtype.subdtype[0])
    return dtype.kind == "U"


def _largest_unit(values: np.ndarray) -> int:
    """The largest UTF-32 code unit in the text of ``values`` (0 when it holds none)."""
    dt = values.dtype
    if values.size == 0:
        return 0
    if dt.names is not None:
        return max(_largest_unit(values[name]) for name in dt.names)
    if dt.kind != "U":
        return 0
    unit = np.dtype(np.uint32).newbyteorder(dt.byteorder)
    # the same item size: a view of any layout, each item as its code units
    return int(values.view(np.dtype((unit, dt.itemsize // 4))).max())


def _error(dtype: np.dtype, found: int) -> CodecError:
    return CodecError(f"expected text of Unicode code points (at most 0x{LAST_CODE_POINT:X}) "
                      f"in items of {dtype}, found code unit 0x{found:X}")


def _locate(io: ArrayIO, plan: Any, out: np.ndarray, problem: Any, err: Any) -> None:
    """Raise ``err(found)`` located at the first chunk of ``plan`` (a
    :class:`~zarrx.indexing.SelectionPlan`) whose part of ``out`` has a ``problem`` (a
    function of that part: what is wrong in it, or None); else at the array."""
    # a field's subarray adds axes after those the plan indexes
    target = out.reshape((-1, *out.shape[len(plan.out_shape):])) if plan.flat else out
    for p in plan.chunks:
        found = problem(np.asarray(target[p.out_sel]))
        if found is not None:
            raise _located(err(found), io, p.coords, io.shape_of(p.coords))
    raise err(problem(out)).at(array=io.key)


def check_text(io: ArrayIO, plan: Any, out: np.ndarray) -> None:
    """Raise CodecError, located at the first chunk holding it, when the text read into ``out``
    by ``plan`` has a code unit past the last code point. One pass over ``out``; the chunks
    are looked at only when something is wrong."""
    if _largest_unit(out) <= LAST_CODE_POINT:
        return

    def problem(part: np.ndarray) -> int | None:
        unit = _largest_unit(part)
        return unit if unit > LAST_CODE_POINT else None
    _locate(io, plan, out, problem, lambda unit: _error(out.dtype, unit))


def _not_text(part: np.ndarray) -> str | None:
    """The first item of the object array ``part`` that is neither ``str`` nor UTF-8
    ``bytes``, described; None if there is none."""
    for v in part.reshape(-1):
        if type(v) is str:
            continue
        if type(v) is bytes:
            try:
                v.decode("utf-8")
                continue
            except UnicodeDecodeError as exc:
                return f"an item of {len(v)} bytes that are not UTF-8 ({exc.reason} at byte " \
                       f"{exc.start})"
        text = repr(v)
        return f"an item of type {type(v).__name__} " \
               f"({text if len(text) <= 60 else text[:57] + '...'})"
    return None


def as_strings(io: ArrayIO, plan: Any, values: np.ndarray, dtype: np.dtype,
               checked: bool) -> np.ndarray:
    """``values`` (an object array of a ``string`` array read by ``plan``) as ``dtype``
    (numpy's ``StringDType``); items that are not text raise CodecError naming the chunk they
    came from. ``checked``: the codec decodes ``str`` only (``vlen-utf8``), nothing to look at."""
    if not checked and values.dtype == object and _not_text(values) is not None:
        _locate(io, plan, values, _not_text,
                lambda found: CodecError(f"expected text (str, or UTF-8 bytes) for the data "
                                         f"type 'string', found {found}"))
    try:
        return values.astype(dtype)
    except UnicodeEncodeError:
        # text no UTF-8 holds (a lone surrogate: from the fill value of a document, or an item
        # numcodecs.json2 decoded), which numpy's StringDType refuses
        fill = io.fill

        def problem(part: np.ndarray) -> str | None:
            for v in part.reshape(-1):
                if type(v) is str and _unencodable(v):
                    where = " (the array's fill value)" if v == fill else ""
                    return f"{short(v)}{where}"
            return None
        _locate(io, plan, values, problem,
                lambda found: CodecError(f"expected text UTF-8 can encode (no lone surrogates) "
                                         f"for the data type 'string', found {found}"))
        raise           # pragma: no cover   (_locate raises)


def _unencodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def text_as_bytes(values: np.ndarray) -> None:
    """Replace the ``str`` items of ``values`` (an object array of a ``bytes`` array whose
    codec is ``vlen-utf8``, which decodes text) by their UTF-8 bytes, in place."""
    flat = values.reshape(-1) if values.flags.c_contiguous else None
    if flat is None:
        for idx in np.ndindex(values.shape):
            if type(values[idx]) is str:
                values[idx] = values[idx].encode("utf-8")
        return
    for i, v in enumerate(flat.tolist()):
        if type(v) is str:
            flat[i] = v.encode("utf-8")


def bytes_as_text(io: ArrayIO, plan: Any, values: np.ndarray) -> None:
    """The items of ``values`` (an object array of a ``string`` array read by ``plan``, under
    numpy 1) as ``str``, in place: UTF-8 ``bytes`` items (a codec such as ``vlen-bytes``)
    decoded, as :func:`as_strings` converts them under numpy 2; other items raise CodecError
    naming the chunk they came from."""
    if _not_text(values) is not None:
        _locate(io, plan, values, _not_text,
                lambda found: CodecError(f"expected text (str, or UTF-8 bytes) for the data "
                                         f"type 'string', found {found}"))
    for idx in np.ndindex(values.shape):
        if type(values[idx]) is bytes:
            values[idx] = values[idx].decode("utf-8")
