"""The write of one variable by :func:`zarrx.xarray.writer.to_zarrx`: planned (CF-encoded,
its values checked against the stored type, its array's creation arguments tried) before the
store changes, then applied (the array created or grown, the values written; dask values as a
``Delayed``). Appended rows are claimed atomically, so concurrent appends never share rows."""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrx._compat import add_note
from zarrx.array import Array
from zarrx.array_shape import check_zero_chunks
from zarrx.chunk_io import check_value
from zarrx.creation import create_array
from zarrx.dask.graph import WriteGate, store_blocks
from zarrx.errors import (ArgumentError, ArgumentNotImplementedError, ArgumentTypeError,
                          ZarrError)
from zarrx.group import Group
from zarrx.hierarchy import write_hierarchy
from zarrx.metadata.in_step_batch import in_step_together
from zarrx.metadata.model import ArrayMeta
from zarrx.metadata.node_read import load_nodes
from zarrx.metadata.nodes import join
from zarrx.store.memory import MemoryStore
from zarrx.xarray.backend import variable_element
from zarrx.xarray.create_args import (asks_vlen_bytes as _asks_vlen_bytes,
                                      asks_vlen_utf8 as _asks_vlen_utf8,
                                      creation_kwargs as _creation_kwargs)
from zarrx.xarray.encoding import DIMENSION_KEY, cf_encode, encode_attr, encode_fill_attr, \
    storage_dtype
from zarrx.xarray.region import check_packed, check_width
from zarrx.xarray.time_values import cf_refused, check_encoded_times, check_times

__all__ = ["Plan", "plan_variable", "stored_arrays", "refresh_stored", "claim_rows", "create_arrays", "apply_plan", "CF_KEYS",
           "Claim", "failed_state"]

#: the encoding keys xarray's CF coders take
CF_KEYS = {"dtype", "_FillValue", "missing_value", "scale_factor", "add_offset", "units",
           "calendar", "_Encoding", "_Unsigned"}


@dataclass
class Plan:
    """One variable's write, checked and encoded: the array to create (``create``, the
    arguments of ``create_array``) or the stored array's new shape (``grow``, on append), and
    the values for ``selection``. ``made``: the array to create, as made on a scratch store
    (its metadata and its handle's settings); ``stored``: the stored array written into, as
    :func:`stored_arrays` opened it."""
    name: str
    data: Any
    selection: tuple
    create: dict | None = None
    grow: tuple[int, ...] | None = None
    axis: int | None = None
    target: Array | None = None
    write_empty: bool | None = None
    made: Array | None = None
    stored: Array | None = None


def _encode(var: Any, name: str, fmt: int, given: bool) -> Any:
    """``var`` CF-encoded by xarray's coders. What they refuse (an encoding the data cannot
    take: ``dtype="nope"``, a ``_FillValue`` of another type, text ASCII cannot hold) is an
    ArgumentTypeError or ArgumentError naming the variable. Keys of an encoding the user
    ``given`` that no coder used (``units`` for numbers) are refused, as xarray refuses them."""
    where = f"to_zarrx: variable {name!r}"
    try:
        encoded = cf_encode(var, name, fmt)
    except ZarrError:
        raise
    except NotImplementedError as exc:      # (a MultiIndex)
        raise ArgumentNotImplementedError(f"{where}: xarray's CF encoding refused it "
                                          f"({exc})") from exc
    except (TypeError, AttributeError, ValueError, LookupError, OverflowError) as exc:
        raise cf_refused(where, exc) from exc
    # (a _FillValue of None stays there: it asks for no fill value)
    unused = sorted(set(encoded.encoding) & CF_KEYS - {"_FillValue"})
    if given and unused:
        raise ArgumentError(f"to_zarrx: encoding of {name!r}: unexpected keys {unused} (they "
                            f"apply to no data of dtype {var.dtype})")
    return encoded


def _check_time_dtype(var: Any, name: str) -> None:
    """An encoding ``dtype`` of times or time deltas is refused: xarray's coders store times as
    numbers in their ``units``, which they would then cast to it (2000-01-02 stored as 1 day
    since 2000-01-01 read back as 1970-01-01T00:00:00.000000001)."""
    dtype = var.encoding.get("dtype")
    try:
        kind = np.dtype(dtype).kind if dtype is not None else None
    except TypeError:                   # (a dtype xarray's coders refuse, naming it)
        return
    if kind in ("M", "m") or (kind is not None and kind not in "iuf"
                              and getattr(var.dtype, "kind", None) in ("M", "m")):
        raise ArgumentError(f"to_zarrx: encoding of {name!r}: dtype {np.dtype(dtype)}: expected "
                            f"the integer or float type to store its values as (xarray's "
                            f"coders store times as numbers in their units, which this "
                            f"dtype would read back as other times)")


def _nat_as_integer(fill: Any, dtype: np.dtype) -> Any:
    """A NaT fill value (of times read from a Zarr array of datetime64 or timedelta64, which
    xarray's coders store as integers) as the integer NaT is (the smallest int64), as
    zarr-python casts it for xarray's writer; other fill values as given."""
    if isinstance(fill, (np.datetime64, np.timedelta64)) and np.isnat(fill) \
            and dtype.kind in "iu":
        return int(np.iinfo(np.int64).min)
    return fill


def _check_text_fill(var: Any, dtype: Any, data: Any, where: str) -> None:
    """A bytes ``_FillValue`` (or ``missing_value``) of a variable stored as text is an
    ArgumentTypeError: engine "zarr" stores its repr (``b"a"`` as the text ``"b'a'"``), and
    taking it as the text it encodes would mask stored values that are that text."""
    text = dtype is str or np.dtype(data.dtype if dtype is None else dtype).kind in "UT"
    for key in ("_FillValue", "missing_value"):
        value = var.encoding.get(key, var.attrs.get(key))
        if text and isinstance(value, (bytes, np.bytes_)):
            raise ArgumentTypeError(f"{where}: {key}: expected str for text (dtype "
                                    f"{var.dtype}), found bytes {value!r}")


def stored_arrays(grp: Group | None, metas: list) -> dict[str, Array]:
    """The arrays of ``grp`` listed with their metadata (``metas``, from
    :func:`~zarrx.xarray.backend.array_metas`), by name: the write's checks, plans and writes
    share these handles, so each array's metadata is read once per write (growing an array
    reads its stored shape again, conditionally: see :func:`claim_rows`)."""
    if grp is None:
        return {}
    return {name: grp._wrap(join(grp.path, name), meta)  # type: ignore[misc]
            for name, meta in metas}


def plan_variable(grp: Group, name: str, var: Any, is_new: bool, fmt: int,
                   append_dim: Hashable | None, slices: dict,
                   write_empty: bool | None, given: bool = False,
                   stored: Array | None = None) -> Plan:
    where = f"to_zarrx: variable {name!r}"
    if is_new:      # (before xarray's coders cast them; dask values block by block)
        _check_time_dtype(var, name)
        var = check_width(check_packed(var, name), name)
        if _is_dask(var.data):
            var = check_times(var, name, "its encoding's")
    encoded = _encode(var, name, fmt, given)
    dtype, data = storage_dtype(encoded.data, encoded.dtype, fmt, where,
                                variable_text=is_new and _asks_vlen_utf8(encoded.encoding),
                                variable_bytes=is_new and _asks_vlen_bytes(encoded.encoding))
    attrs = dict(encoded.attrs)
    dims = tuple(str(d) for d in encoded.dims)
    if not is_new:
        arr = grp[name] if stored is None else stored
        assert isinstance(arr, Array)
        selection, grow = _target_selection(arr, dims, encoded.shape, append_dim, slices)
        axis = dims.index(str(append_dim)) if grow is not None else None
        if grow is not None:        # (refused now, not once the group's attributes are written)
            arr._check_regular_grid("append to")
            check_zero_chunks(arr.metadata, grow, arr.name)
        return Plan(name, _storable(arr, data, where), selection, grow=grow, axis=axis,
                     write_empty=write_empty, stored=arr)
    check_encoded_times(var, encoded, name)
    _check_text_fill(var, dtype, data, where)
    if encoded.dtype.kind in "OT" and _is_dask(encoded.data) and not _is_dask(data):
        # dask values of Python objects (or StringDType text stored fixed-width) were computed
        # to find their type or width, as xarray's writer computes them: their blocks no longer
        # give the chunks, as with engine "zarr"
        encoded = encoded.copy(deep=False, data=data)
    kw = _creation_kwargs(encoded, name, fmt, write_empty)
    fill = kw.pop("fill_value", None)
    np_dtype = np.dtype(object) if dtype is str else np.dtype(data.dtype) if dtype is None \
        else np.dtype(dtype)
    if fmt == 2:
        fill = attrs.pop("_FillValue", None)
    fill = _nat_as_integer(fill, np_dtype)
    if fmt == 3:
        if fill is None and np_dtype.kind == "f":
            fill = np.nan
        if attrs.get("_FillValue") is not None and np_dtype.kind in "OT":
            # (engine "zarr" cannot read one back, and xarray's writer refuses it)
            raise ArgumentError(f"{where}: a _FillValue cannot be given for variable-length "
                                f"strings in Zarr v3 (found {attrs['_FillValue']!r}); drop "
                                f"it from the variable's encoding, or write Zarr v2")
        if attrs.get("_FillValue") is not None:
            attrs["_FillValue"] = encode_fill_attr(attrs["_FillValue"], np_dtype, where)
        else:
            attrs.pop("_FillValue", None)
    attrs = {k: encode_attr(v) for k, v in attrs.items()}
    if fmt == 2:
        attrs[DIMENSION_KEY] = list(dims)
    # a scalar has no dimension_names, as xarray's writer (zarr-python) leaves them out
    dtype = dtype if dtype is not None else data.dtype
    if fmt == 3 and isinstance(dtype, np.dtype) and dtype.byteorder == ">":
        # (xarray's writer, through zarr-python, stores Zarr v3 numbers little-endian
        # whatever their byte order; Zarr v2 keeps it in the data type)
        dtype = dtype.newbyteorder("<")
    create = dict(shape=encoded.shape, dtype=dtype,
                  fill_value=fill, attributes=attrs,
                  dimension_names=dims if fmt == 3 and dims else None, zarr_format=fmt, **kw)
    # the same arguments, tried on an empty memory store: every codec and setting is checked
    # (a refusal names the variable's array)
    try:
        scratch = create_array(MemoryStore(), **create)
    except ZarrError as exc:
        raise exc.at(array=name)
    return Plan(name, _storable(scratch, data, where), (slice(None),) * encoded.ndim,
                 create=create, made=scratch)


def _storable(arr: Array, data: Any, where: str) -> Any:
    """``data`` checked against the array's type: numpy values converted (so that a value the
    type cannot hold is refused now), dask values by their dtype."""
    stored = arr.metadata.data_type
    text = stored.variable or stored.numpy.kind in "SU"
    # (not getattr with a default: that would compute dask values here)
    given = np.dtype(data.dtype if hasattr(data, "dtype") else np.asarray(data).dtype)
    if 0 in np.shape(data):     # no values (xarray's coders type empty Python objects float)
        return np.empty(np.shape(data), dtype=stored.numpy)
    if text != (given.kind in "OSUT"):
        kind = "strings" if text else f"{stored.numpy} values"
        raise ArgumentTypeError(f"{where}: the stored array holds {kind}; cannot store values "
                                f"of dtype {given}")
    if stored.numpy.kind in "SU" and given.kind == stored.numpy.kind \
            and given.itemsize > stored.numpy.itemsize:
        raise ArgumentError(f"{where}: values of dtype {given} do not fit the stored "
                            f"array's {stored.numpy}; they would be cut")
    if _is_dask(data):
        return data
    values = check_value(data, np.shape(data), stored.numpy, where)
    if stored.variable and values.size:
        flat = values.reshape(-1)
        element = variable_element(stored)
        bad = next((v for v in flat if not isinstance(v, element)), None)
        if bad is not None:
            raise ArgumentTypeError(f"{where}: the stored array holds {element.__name__} "
                                    f"values; cannot store {type(bad).__name__} {bad!r}")
    return values


@dataclass
class Claim:
    """The arrays :func:`claim_rows` grew: ``(array, axis, length before, length after)``,
    the claiming array last."""
    grown: list[tuple[Array, int, int, int]]

    def undo(self) -> None:
        """Shrink each array back to its length before (never below the first claimed row),
        when it still has the length it was grown to (no writer has claimed rows after these
        since; otherwise the claimed rows stay, holding the fill value where nothing was
        written). The claiming array goes last, so rows claimed after these are never taken
        from another writer. Shrinking clears what was written into the claimed rows (see
        ``Array.resize``)."""
        for arr, axis, before, after in self.grown:
            def back(shape: tuple[int, ...], axis: int = axis, before: int = before,
                     after: int = after) -> tuple[int, ...]:
                if shape[axis] != after:
                    return shape
                return tuple(before if i == axis else n for i, n in enumerate(shape))
            arr._grow(back)

    def give_back(self, error: BaseException, gate: WriteGate | None = None) -> None:
        """:meth:`undo`, after the write failed with ``error``; its own failure (a store
        failing) is noted on ``error``, which the caller raises. Not when the write's blocks
        went to other processes (``gate.sent``): their writes may still land in the claimed
        rows, which another append could by then have claimed again; the rows are kept."""
        if gate is not None and gate.sent:
            add_note(error, "to_zarrx: the rows claimed for the append are kept (block writes "
                           "ran in other processes); see docs/guide/xarray.md, \"When a write "
                           "of dask values fails\"")
            return
        try:
            self.undo()
        except ZarrError as failed:
            add_note(error, f"to_zarrx: the rows claimed for the append could not be given "
                           f"back ({failed}); see docs/guide/xarray.md, \"When a write of "
                           f"dask values fails\"")


def claim_rows(grp: Group, plans: list[Plan], dim: str) -> Claim | None:
    """Place the appended rows so that concurrent appends to the dataset never share rows.

    The rows are claimed on one variable: the append dimension's coordinate when it is
    written, else the first appended variable by name (the same one for every writer of
    these variables). Its shape grows atomically from the shape as stored (as
    ``Array.append``), and the claimed rows are where every appended variable is written: the
    others grow to at least their end (never shrinking what another writer claimed further),
    and all are written through views reaching the end of the stored object holding their
    last row, so an object shared with another writer's rows is merged, never replaced."""
    growing = [p for p in plans if p.grow is not None]
    if not growing:
        return None
    # the consolidated documents listing the arrays list them as pending once, before the
    # first grows, and take their new shapes once, after the last (not twice an array)
    return in_step_together(grp.store, [join(grp.path, p.name) for p in growing],
                            grp.zarr_format, lambda: _claim(grp, growing, dim))


def _claim(grp: Group, growing: list[Plan], dim: str) -> Claim:
    claim = min(growing, key=lambda p: (p.name != dim, p.name))
    arr = _stored_array(grp, claim)
    assert isinstance(arr, Array) and claim.axis is not None
    count = claim.selection[claim.axis].stop - claim.selection[claim.axis].start

    def claimed(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(n + count if i == claim.axis else n for i, n in enumerate(shape))

    old, _ = arr._grow(claimed)
    start = old[claim.axis]
    grown: list[tuple[Array, int, int, int]] = []
    try:
        _grow_others(grp, growing, claim, start, count, grown)
    except BaseException as exc:    # (another writer deleted or replaced an array meanwhile,
        # an interrupt): the rows claimed so far are given back, the arrays grown shrunk back,
        # so the group is not left with its variables of different lengths
        Claim(grown + [(arr, claim.axis, start, start + count)]).give_back(exc)
        raise
    for plan in growing:
        if plan is claim:
            plan.selection = tuple(slice(start, start + count) if i == claim.axis else s
                                   for i, s in enumerate(plan.selection))
            plan.grow = None
            plan.target = arr._growing_view(claim.axis)
    grown.append((arr, claim.axis, start, start + count))
    return Claim(grown)


def _grow_others(grp: Group, growing: list[Plan], claim: Plan, start: int, count: int,
                 grown: list[tuple[Array, int, int, int]]) -> None:
    """Grow each array of ``growing`` but the claiming one to reach the claimed rows
    (``start``, ``count`` of them), adding each one grown to ``grown``, and point its plan at
    those rows."""
    for plan in growing:
        if plan is claim:
            continue
        target = _stored_array(grp, plan)
        assert isinstance(target, Array) and plan.axis is not None
        axis = plan.axis
        before, after = target._grow(lambda shape, axis=axis: tuple(  # type: ignore[misc]
            max(n, start + count) if i == axis else n for i, n in enumerate(shape)))
        if after[axis] != before[axis]:     # (given back to the start of these rows at
            # most: rows before them are another writer's claim, not grown there yet)
            grown.append((target, axis, max(before[axis], start), after[axis]))
        plan.selection = tuple(slice(start, start + count) if i == axis else s
                               for i, s in enumerate(plan.selection))
        plan.grow = None
        plan.target = target._growing_view(axis)


def create_arrays(grp: Group, plans: list[Plan], new_group: bool = False) -> None:
    """Create the arrays of the ``plans`` that make one (replacing whatever is at their
    places) in ``grp``, together: their places are read in one batch, and each consolidated
    document listing them is edited a fixed number of times, however many there are (see
    :func:`~zarrx.hierarchy.write_hierarchy`), not four times an array. Each plan's
    ``target`` is then its new array. ``new_group``: ``grp`` was just created (or replaced),
    so it holds little: what is at the arrays' places is found by one listing of it, not one
    listing per array."""
    made = [(p, p.made) for p in plans if p.create is not None and p.made is not None]
    if not made:
        return
    keys = list(grp.store.list_prefix(grp.path + "/" if grp.path else "")) if new_group \
        else None
    written = dict(write_hierarchy(grp.store, {p.name: m.metadata for p, m in made},
                                   overwrite=True, group=grp.path, zarr_format=grp.zarr_format,
                                   keys_below=keys))
    grp._forget_consolidated()
    for plan, scratch in made:
        path = join(grp.path, plan.name)
        plan.target = Array(grp.store, path, written[path],  # type: ignore[arg-type]
                            write_empty_chunks=scratch._write_empty)


def refresh_stored(grp: Group, plans: list[Plan]) -> None:
    """Read again, in one batch, the metadata of the stored arrays the ``plans`` write into
    without growing them, just before the writes: another writer may have resized or replaced
    an array since the group was listed, and the values go into the array as stored now (a
    place outside a smaller shape is refused, a replaced array's chunks are written on its
    grid), never through the listing's stale handle. Grown arrays read theirs as they grow."""
    todo = [p for p in plans if p.target is None and p.stored is not None and p.grow is None]
    if not todo:
        return
    batch = load_nodes(grp.store, [join(grp.path, p.name) for p in todo], grp.zarr_format,
                       consolidated=False)
    for plan in todo:
        meta = batch[join(grp.path, plan.name)]
        # (not an array any more: the group's own lookup raises what it finds there)
        plan.stored = grp._wrap(join(grp.path, plan.name), meta) \
            if isinstance(meta, ArrayMeta) else None  # type: ignore[assignment]


def apply_plan(grp: Group, plan: Plan, gate: WriteGate | None = None) -> Any:
    """Grow the array (one :func:`create_arrays` made: ``plan.target``), then write (or
    return a ``Delayed`` writing) its values. ``gate``: what the writes of dask blocks pass
    through (:class:`~zarrx.dask.graph.WriteGate`)."""
    if plan.target is not None:
        arr = plan.target
    else:
        arr = _stored_array(grp, plan)
        if plan.grow is not None:
            arr.resize(plan.grow)
    return _store(arr, plan.data, plan.selection, gate)


def _stored_array(grp: Group, plan: Plan) -> Array:
    """The stored array ``plan`` writes into, storing chunks that hold only the fill value as
    the write's ``write_empty_chunks`` says (when given: it is a setting of the write, not of
    the array)."""
    arr = grp[plan.name] if plan.stored is None else plan.stored
    assert isinstance(arr, Array)
    if plan.write_empty is None:
        return arr
    return Array(arr.store, arr.path, arr.metadata, write_empty_chunks=plan.write_empty)


def _target_selection(arr: Array, dims: tuple[str, ...], shape: tuple[int, ...],
                      append_dim: Hashable | None,
                      slices: dict) -> tuple[tuple, tuple[int, ...] | None]:
    """Where the values go in the stored array, and its new shape when they are appended."""
    sel = []
    grow = None
    for axis, d in enumerate(dims):
        if d in slices:
            sel.append(slices[d])
        elif append_dim is not None and d == append_dim:
            start = arr.shape[axis]
            grow = tuple(start + shape[axis] if i == axis else n
                         for i, n in enumerate(arr.shape))
            sel.append(slice(start, start + shape[axis]))
        else:
            sel.append(slice(0, arr.shape[axis]))
    want = tuple(s.stop - s.start for s in sel)
    if want != tuple(shape):
        raise ArgumentError(f"to_zarrx: variable {arr.basename!r} has shape {tuple(shape)}, but "
                            f"its place in the stored array {arr.shape if grow is None else grow}"
                            f" has shape {want}")
    return tuple(sel), grow


def _is_dask(data: Any) -> bool:
    try:
        import dask.array as da
    except ImportError:
        return False
    return isinstance(data, da.Array)


def _store(arr: Array, data: Any, selection: tuple, gate: WriteGate | None = None) -> Any:
    if _is_dask(data):
        return store_blocks(data, arr, selection, compute=False, gate=gate)
    arr[selection] = data
    return None


def failed_state(mode: str, path: str, plans: list[Plan], writes: list[Any],
                 region: dict | None, gate: WriteGate | None) -> str:
    """What the store holds once the dask-backed values of a write (not an append: its claimed
    rows are given back, see :class:`Claim`) failed as they computed, to be noted on the
    error: everything but their blocks is written by then (docs/guide/xarray.md, "When a
    write of dask values fails")."""
    lazy = [p for p, w in zip(plans, writes) if w is not None]
    added = [p.name for p in lazy if p.create is not None]
    rewritten = [p.name for p in lazy if p.create is None]
    held = "the blocks written before the failure (writes under way finished, none started " \
        "after)"
    if gate is not None and gate.sent:
        held = "the blocks written before the failure (and any whose write another process " \
            "was running)"
    where = repr(path or "/")
    if region:
        spans = {dim: f"{s.start}:{s.stop}" for dim, s in region.items()}
        return (f"to_zarrx: the region {spans} of {where} is partly written: the variables "
                f"{rewritten} hold the new values in {held}, their previous values elsewhere; "
                f"write the region again")
    parts = []
    if mode in ("w", "w-"):
        parts.append(f"the group {where} was {'replaced' if mode == 'w' else 'created'}: it "
                     f"holds the dataset's attributes, every variable's metadata and the "
                     f"values of those held in memory"
                     + ("; what it held before is gone" if mode == "w" else ""))
    if added:
        parts.append(f"the dask-backed variables {added} hold {held}, the fill value "
                     f"elsewhere")
    if rewritten:
        parts.append(f"the stored variables {rewritten} hold the new values in {held}, their "
                     f"previous values elsewhere")
    again = "mode='w'" if mode in ("w", "w-") else f"mode={mode!r}"
    return f"to_zarrx: {'; '.join(parts)}; write the dataset again with {again}"
