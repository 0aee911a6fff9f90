"""Random whole-array specs shared with zarr-python 3 and tensorstore in one store directory.

Each example draws (``strategies.array_specs``) a format, data type (byte orders,
fixed-length strings, datetimes), shape, chunks (sharding for v3), codecs, chunk key
encoding, fill value and ``write_empty_chunks``. One library creates the array (zarrx,
zarr-python or tensorstore); then region writes (slices, integers, scalars, broadcast or
wider-typed values) are made alternately by zarrx and the other library, and after each one
zarrx, zarr-python and (where it takes the array) tensorstore read the whole array and the
written region: each must equal a numpy model bit for bit (floats compared as their bytes, so
NaN payloads and signed zeros count). The chunks each write stores are checked against
``write_empty_chunks``.

``ZARRX_RANDOM_INTEROP_EXAMPLES`` raises the number of examples per test (default 60; run
with ``--hypothesis-seed=N --hypothesis-show-statistics`` to vary them and to see what was
left out). Combinations tensorstore refuses are listed in ``ts_refusal`` (the test checks
that it does refuse them); where zarr-python deviates, the model follows what it does and
docs/SPEC.md says so.
"""
from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st

import zarrx
from strategies import (array_specs, per_axis, random_values, region_writes, value_shape,
                        wider)

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")
numcodecs = pytest.importorskip("numcodecs")

# zarr-python warns that its v3 fixed-length string and datetime types have no spec yet
pytestmark = pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3")

EXAMPLES = int(os.environ.get("ZARRX_RANDOM_INTEROP_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, HealthCheck.data_too_large])


def _special(spec: dict, rng: np.random.Generator) -> np.ndarray:
    """The fill value, or for float types -0.0, NaN, a NaN with a payload or -inf."""
    dt = spec["dtype"]
    options = [_fill_item(spec)]
    if dt.kind in "fc":
        size = dt.itemsize // (1 + (dt.kind == "c"))
        bits = {2: 0x7E01, 4: 0x7FC00001, 8: 0x7FF8000000000001}[size]
        part = np.array(bits, f"u{size}").view(f"f{size}")
        options += [np.array(-0.0, dt), np.array(np.nan, dt), np.array(part, dt),
                    np.array(-np.inf, dt)]
    return options[int(rng.integers(0, len(options)))].astype(dt)


# ---------------------------------------------------------------- values and comparison


def _native(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(x.dtype.newbyteorder("=")) if x.dtype.byteorder not in "=|" else x


def _same(got: Any, want: np.ndarray, who: str) -> None:
    got, want = _native(got), _native(want)
    assert got.shape == want.shape, f"{who}: shape {got.shape}, expected {want.shape}"
    assert (got.dtype.kind, got.dtype.itemsize) == (want.dtype.kind, want.dtype.itemsize), \
        f"{who}: dtype {got.dtype}, expected {want.dtype}"
    if got.tobytes() != want.tobytes():
        a = got.reshape(-1).view(f"V{got.dtype.itemsize}") if got.size else got
        b = want.reshape(-1).view(f"V{want.dtype.itemsize}") if want.size else want
        bad = np.flatnonzero(a != b)
        i = bad[0]
        raise AssertionError(f"{who}: {bad.size} of {got.size} items differ; first at flat "
                             f"index {i}: {got.reshape(-1)[i]!r}, expected {want.reshape(-1)[i]!r}")


def _given_fill(spec: dict) -> np.ndarray:
    dt, fill = spec["dtype"], spec["fill"]
    if fill is None:            # zarr-python's defaults: zero, NaT for datetimes
        return np.array("NaT", dt) if dt.kind in "Mm" else np.zeros((), dt)
    return np.asarray(fill).astype(dt)


def _plain_nans(x: np.ndarray) -> np.ndarray:
    """``x`` with every NaN (of a float, or a part of a complex) the plain NaN."""
    if x.dtype.kind == "c":
        native = x.astype(x.dtype.newbyteorder("=")).reshape(-1)
        parts = native.view(f"f{x.dtype.itemsize // 2}").copy()
        parts[np.isnan(parts)] = np.nan
        return parts.view(x.dtype.newbyteorder("=")).reshape(x.shape).astype(x.dtype)
    y = x.copy()
    y[np.isnan(y)] = np.nan
    return y


def _fill_item(spec: dict) -> np.ndarray:
    """The fill value as stored: a Zarr v2 document (and zarr-python) writes any NaN as "NaN";
    zarrx writes the bits of another NaN in a Zarr v3 document ("0x7e01")."""
    fill = _given_fill(spec)
    if fill.dtype.kind in "fc" and (spec["fmt"] == 2 or spec["creator"] == "zarr"):
        return _plain_nans(fill)
    return fill


def nan_bits_fill(spec: dict) -> bool:
    """A Zarr v3 fill value that is a NaN other than the plain one, which zarr-python 3.1.6
    reads as a Python float: a payload, a sign or a signalling NaN may be lost (the spec's
    "0x..." form holds the bits; zarrx and tensorstore keep them)."""
    fill = _fill_item(spec)
    if fill.dtype.kind not in "fc" or spec["fmt"] == 2:
        return False
    parts = fill.reshape(1).view(f"f{fill.dtype.itemsize // (1 + (fill.dtype.kind == 'c'))}")
    plain = np.full(parts.shape, np.nan, parts.dtype)
    return any(np.isnan(v) and v.tobytes() != plain[0].tobytes() for v in parts)


def v2_lost_nan_fill(spec: dict) -> bool:
    """A Zarr v2 fill value that is a NaN other than the plain one ("NaN" is all a v2 document
    can say: docs/guide/migrating.md)."""
    fill = _given_fill(spec)
    if spec["fmt"] != 2 or fill.dtype.kind not in "fc":
        return False
    return fill.tobytes() != _plain_nans(fill).tobytes()


# ---------------------------------------------------------------- the libraries


def _compressors(spec: dict) -> Any:
    name, dt = spec["compressor"], spec["dtype"]
    if spec["fmt"] == 2:
        shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2, "auto": -1}[spec["shuffle"]]
        return {"none": None, "gzip": numcodecs.GZip(level=1), "zstd": numcodecs.Zstd(level=1),
                "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=shuffle)}[name]
    comps: list[dict] = []
    if name == "gzip":
        comps.append({"name": "gzip", "configuration": {"level": 1}})
    elif name == "zstd":
        comps.append({"name": "zstd", "configuration": {"level": 1, "checksum": False}})
    elif name == "blosc":
        comps.append({"name": "blosc", "configuration": {
            "cname": "zstd", "clevel": 3,
            "shuffle": "shuffle" if spec["shuffle"] == "auto" else spec["shuffle"],
            "typesize": dt.itemsize,
            "blocksize": 0}})
    if spec["crc32c"]:
        comps.append({"name": "crc32c"})
    return comps or None


def create_kwargs(spec: dict) -> dict:
    kw: dict[str, Any] = dict(shape=spec["shape"], dtype=spec["dtype"], zarr_format=spec["fmt"],
                              compressors=_compressors(spec),
                              config={"write_empty_chunks": spec["write_empty_chunks"]})
    if spec["shape"]:
        kw["chunks"] = spec["chunks"]
    if spec["fill"] is not None:
        kw["fill_value"] = spec["fill"]
    if spec["fmt"] == 2:
        kw["order"] = spec["order"]
        kw["filters"] = None
        kw["chunk_key_encoding"] = spec["key"]
        return kw
    kw["chunk_key_encoding"] = spec["key"]
    kw["filters"] = ([{"name": "transpose", "configuration": {"order": list(spec["transpose"])}}]
                     if spec["transpose"] else None)
    dt = spec["dtype"]
    if spec["endian"] == "dtype":
        kw["dtype"] = dt.newbyteorder(">") if dt.kind not in "bS" else dt
    elif dt.kind == "S" or dt.itemsize == 1:
        kw["serializer"] = {"name": "bytes"}
    else:
        kw["serializer"] = {"name": "bytes", "configuration": {"endian": spec["endian"]}}
    if spec["shards"]:
        kw["shards"] = spec["shards"]
    return kw


def _ts_spec(path: str, spec: dict) -> dict:
    return {"driver": "zarr3" if spec["fmt"] == 3 else "zarr",
            "kvstore": {"driver": "file", "path": path}}


def ts_refusal(spec: dict) -> str | None:
    """Why tensorstore does not open an array of this spec (None: it opens it)."""
    dt = spec["dtype"]
    if dt.kind in "Mm":
        return "tensorstore has no datetime64/timedelta64 data type"
    if spec["fmt"] == 3 and dt.kind in "SU":
        return "tensorstore has no zarr-python v3 fixed-length string data types"
    if dt.kind == "U":
        return "tensorstore has no v2 '<U' / '>U' data type"
    if dt.kind == "S":          # not checked: it may open them (see below), or not
        return ("tensorstore opens v2 `S<n>` as `char` with an extra axis, which its Python "
                "binding hands out as numpy `S0` (no bytes), and refuses a fill value of fewer "
                "than n bytes (zarr-python writes it without its trailing zero bytes)")
    return None


def _ts_selection(sel: tuple, shape: tuple[int, ...]) -> tuple:
    """``sel`` for tensorstore, where an index is a coordinate (-1 is not the last)."""
    sel = per_axis(sel, len(shape))
    return tuple(i % n if isinstance(i, int) else i for i, n in zip(sel, shape))


class Lib:
    def __init__(self, name: str, path: str, spec: dict) -> None:
        self.name, self.path, self.spec = name, path, spec

    def _open(self, mode: str) -> Any:
        cfg = {"write_empty_chunks": self.spec["write_empty_chunks"]}
        if self.name == "zarrx":
            return zarrx.open_array(self.path, mode=mode, config=cfg)
        if self.name == "zarr":     # its open_array drops config= for an existing array
            return zarr.open_array(self.path, mode=mode).with_config(cfg)
        return ts.open(_ts_spec(self.path, self.spec), open=True).result()

    def read(self, sel: tuple = (Ellipsis,)) -> np.ndarray:
        a = self._open("r")
        if self.name == "ts":
            return a[_ts_selection(sel, a.shape)].read().result()
        x = a[sel]
        if isinstance(x, np.generic):           # 0-d arrays read as a scalar, as in numpy
            assert x.dtype.kind == self.spec["dtype"].kind, f"{self.name}: scalar {x!r}"
            return np.array(x, dtype=self.spec["dtype"])
        return x

    def write(self, sel: tuple, value: Any) -> None:
        a = self._open("r+")
        if self.name == "ts":       # an index is a coordinate there: -1 is not the last
            value = np.asarray(value, self.spec["dtype"])
            a[_ts_selection(sel, a.shape)].write(_native(value)).result()
        else:
            a[sel] = value


def create(path: str, spec: dict) -> None:
    if spec["creator"] == "ts":     # the document zarrx writes, as tensorstore writes it
        scratch = path + ".scratch"
        zarrx.create_array(scratch, **create_kwargs(spec))
        doc = json.loads(Path(scratch, "zarr.json" if spec["fmt"] == 3 else ".zarray").read_text())
        for k in ("zarr_format", "node_type", "attributes"):
            doc.pop(k, None)
        if spec["fmt"] == 2 and sum(c > 1 for c in spec["chunks"]) <= 1:
            # where "F" and "C" lay a chunk out alike, tensorstore writes "C" and then
            # refuses what it wrote ('Expected "order" of "F" but received: "C"')
            doc["order"] = "C"
        ts.open({**_ts_spec(path, spec), "metadata": doc}, create=True).result()
        return
    lib = zarrx if spec["creator"] == "zarrx" else zarr
    lib.create_array(path, **create_kwargs(spec))


def _regions(spec: dict) -> Any:
    """(chunk index, region) of every chunk of an unsharded array (inner chunks otherwise)."""
    shape, chunks = spec["shape"], spec["chunks"]
    for idx in itertools.product(*(range(-(-n // c)) for n, c in zip(shape, chunks))):
        yield idx, tuple(slice(i * c, min((i + 1) * c, n))
                         for i, c, n in zip(idx, chunks, shape)) + (Ellipsis,)


def _key(spec: dict, idx: tuple) -> str:
    sep, name = spec["key"]["separator"], spec["key"]["name"]
    if name == "default":
        return "c" + "".join(sep + str(i) for i in idx)
    return sep.join(map(str, idx)) or "0"


def _all_fill(spec: dict, part: np.ndarray, writer: str) -> bool:
    """Whether ``writer`` takes the chunk ``part`` for one holding only the fill value: equal
    to it bit for bit, or (zarrx, zarr-python) all NaN for a NaN fill value of a float type;
    zarr-python takes complex chunks equal by value (-0j for 0j, a NaN in either part for a
    fill with a NaN)."""
    fill = _fill_item(spec)
    if part.tobytes() == np.full(part.shape, fill, spec["dtype"]).tobytes():
        return True
    kind = spec["dtype"].kind
    if writer == "ts" or kind not in "fc":
        return False
    if kind == "f":
        return bool(np.isnan(fill)) and bool(np.isnan(part).all())
    return writer == "zarr" and np.array_equal(part, np.full(part.shape, fill), equal_nan=True)


def _drop_empty_chunks(spec: dict, model: np.ndarray, touched: np.ndarray, path: str,
                       writer: str) -> None:
    """Update the model for chunks a write left equal to the fill value (unless
    write_empty_chunks), and check which chunks the write stored."""
    for idx, region in _regions(spec):
        if not touched[region].any():
            continue
        empty = _all_fill(spec, model[region], writer)
        if empty and not spec["write_empty_chunks"]:
            model[region] = _fill_item(spec)           # NaN payloads are not kept
        if spec["shards"] is None and writer != "ts":
            stored = os.path.exists(os.path.join(path, _key(spec, idx)))
            assert stored == (spec["write_empty_chunks"] or not empty), \
                f"{writer} write: chunk {_key(spec, idx)!r} stored={stored}, " \
                f"write_empty_chunks={spec['write_empty_chunks']}, all fill={empty}"


def run(tmp_path: Any, spec: dict, ops: list, partner: str) -> None:
    """Create, then apply the writes alternately (zarrx first or the partner first) and read
    the whole array in every library after each one."""
    path = str(tmp_path / f"a{np.random.randint(1 << 30)}.zarr")
    note(f"path={path}")
    if spec["creator"] != "zarr" and v2_lost_nan_fill(spec):
        # zarrx refuses the fill value rather than write "NaN" and lose its bits (tensorstore's
        # arrays here are made from zarrx's document); zarr-python writes "NaN"
        with pytest.raises(zarrx.MetadataError, match='can write only the NaN .* \\("NaN"\\)'):
            create(path, spec)
        event("zarrx refuses: a Zarr v2 NaN fill value other than the plain NaN")
        return
    create(path, spec)
    model = np.full(spec["shape"], _fill_item(spec), dtype=spec["dtype"])
    refusal = ts_refusal(spec)
    with_zp = not nan_bits_fill(spec)
    if not with_zp:
        note("zarr-python left out: it reads the NaN fill value's bits through a Python float")
        event("zarr-python left out: a Zarr v3 NaN fill value other than the plain NaN")
        assume(partner == "ts")
    readers = [Lib("zarrx", path, spec)] + ([Lib("zarr", path, spec)] if with_zp else [])
    if refusal is None:
        readers.append(Lib("ts", path, spec))
    else:
        note(f"tensorstore refuses: {refusal}")
        event(f"tensorstore left out: {refusal.split(';')[0]}")
        if spec["dtype"].kind != "S":
            with pytest.raises(ValueError, match="data_type|dtype"):
                Lib("ts", path, spec).read()
    writers = [Lib("zarrx", path, spec), Lib(partner, path, spec)]
    if partner == "ts" and refusal is not None:
        writers[1] = Lib("zarr", path, spec)
    first = spec["creator"] != "zarrx"
    ours = zarrx.open_array(path, mode="r")
    _same(np.array(ours.fill_value, spec["dtype"]), _fill_item(spec), "zarrx fill_value")
    if with_zp:
        theirs = zarr.open_array(path, mode="r")
        _same(np.array(theirs.fill_value, spec["dtype"]), _fill_item(spec),
              "zarr-python fill_value")
        # zarrx hands out a big-endian v2 type in native order (docs/guide/migrating.md)
        assert (ours.dtype, ours.chunks, ours.shards, ours.shape) == \
            (theirs.dtype.newbyteorder("="), theirs.chunks, theirs.shards, theirs.shape)
    for r in readers:
        _same(r.read(), model, f"{r.name} read after create")
    for i, (sel, kind, seed) in enumerate(ops):
        rng = np.random.default_rng(seed)
        target = model[sel]
        shape = () if kind == "scalar" else value_shape(target.shape, kind, rng)
        value = (_special(spec, rng) if kind == "special" else
                 random_values(spec["dtype"], shape, rng))
        w = writers[(i + first) % 2]
        note(f"write {i} by {w.name}: [{sel}] = {value!r} ({kind})")
        given = value[()] if kind in ("scalar", "special") else \
            wider(value) if kind == "wide" else value
        if kind == "broadcast" and w.name == "zarr":    # zarr-python 3.1.6 broadcasts scalars only
            given = np.broadcast_to(value, target.shape)
        w.write(sel, given)
        model[sel] = given          # cast as numpy casts it
        touched = np.zeros(spec["shape"], bool)
        touched[sel] = True
        _drop_empty_chunks(spec, model, touched, path, w.name)
        for r in readers:
            _same(r.read(), model, f"{r.name} read after write {i} by {w.name}")
            _same(r.read(sel), np.array(model[sel], model.dtype),
                  f"{r.name} read of [{sel}] after write {i}")


@SETTINGS
@given(spec=array_specs(), ops=st.data())
def test_random_specs_shared_with_zarr_python(tmp_path_factory, spec, ops):
    note(f"spec={spec}")
    run(tmp_path_factory.mktemp("zp"), spec, ops.draw(region_writes(spec["shape"])), "zarr")


@SETTINGS
@given(spec=array_specs(), ops=st.data())
def test_random_specs_shared_with_tensorstore(tmp_path_factory, spec, ops):
    note(f"spec={spec}")
    if ts_refusal(spec) is None and ops.draw(st.booleans(), label="tensorstore creates"):
        spec = {**spec, "creator": "ts"}
    run(tmp_path_factory.mktemp("ts"), spec, ops.draw(region_writes(spec["shape"])), "ts")


@pytest.mark.parametrize("dtype,bits", [("float16", 0x7E01), ("float16", 0x7C01),
                                        ("float32", 0x7F800001)],
                         ids=["f2-payload", "f2-signalling", "f4-signalling"])
def test_a_v3_nan_fill_value_keeps_its_bits(tmp_path, dtype, bits):
    """A NaN fill value other than the plain NaN is written as its bits ("0x7e01", as the v3
    spec allows) and read back with them by zarrx and tensorstore, in chunks never written
    too. zarr-python 3.1.6 reads it through a Python float (the plain NaN for float16, a quiet
    NaN for a signalling one): the deviation this pins (docs/SPEC.md)."""
    dt = np.dtype(dtype)
    fill = np.array(bits, f"u{dt.itemsize}").view(dt)
    path = str(tmp_path / "a.zarr")
    z = zarrx.create_array(path, shape=(4,), chunks=(2,), dtype=dt, zarr_format=3,
                           fill_value=fill[()])
    z[0] = 1
    want = np.array([1, bits, bits, bits], f"u{dt.itemsize}")
    want[0] = np.array(1, dt).view(want.dtype)
    assert zarrx.open_array(path).metadata.json["fill_value"] == f"0x{bits:0{dt.itemsize * 2}x}"
    assert zarrx.open_array(path)[...].view(want.dtype).tolist() == want.tolist()
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
    assert t.read().result().view(want.dtype).tolist() == want.tolist()
    zp = np.asarray(zarr.open_array(path, mode="r")[...])
    assert np.isnan(zp[1:]).all() and zp[1:].view(want.dtype).tolist() != want[1:].tolist()
