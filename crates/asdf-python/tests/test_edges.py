"""Edges where asdf_rs meets the world around the values (docs/../shared/EDGES.md): files that
change under a reader, names that must stay one-to-one, YAML 1.1's own types, masks and 0-d
arrays through the chunked writers. Each test compares with Python asdf 6.0, the reference."""

import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import asdf
import asdf_rs


# --- Files that change -------------------------------------------------------------------

_TRUNCATE = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import asdf_rs
    path, memmap = sys.argv[1], sys.argv[2] == "1"
    f = asdf_rs.open(path, memmap=memmap)
    a = f["/x"]
    b = f.to_objects("/y")
    b[0]  # Python asdf's lazy ndarray: read when first used
    t = f.tree["x"]
    # Another program truncates the file after the arrays were handed out.
    os.truncate(path, 0)
    print(float(a.sum()), float(np.asarray(b).sum()), float(t.sum()), flush=True)
    """
)


def _truncated_run(tmp_path, memmap):
    path = tmp_path / "t.asdf"
    x = np.arange(1 << 20, dtype="f8")  # 8 MiB: mapped by numpy with memmap=True
    y = np.arange(1 << 18, dtype="f8")
    asdf.AsdfFile({"x": x, "y": y}).write_to(path)  # uncompressed blocks, as Python asdf writes
    return subprocess.run(
        [sys.executable, "-c", _TRUNCATE, str(path), "1" if memmap else "0"],
        capture_output=True,
        text=True,
        timeout=120,
    ), x, y


def test_truncation_after_reading_keeps_the_values_by_default(tmp_path):
    r, x, y = _truncated_run(tmp_path, memmap=False)
    assert r.returncode == 0, r.stderr
    got = [float(v) for v in r.stdout.split()]
    assert got == [float(x.sum()), float(y.sum()), float(x.sum())]


def test_truncation_under_memmap_true_is_the_documented_risk(tmp_path):
    # memmap=True maps the file: its arrays are the file's bytes when used. A truncated file
    # takes them away (SIGBUS on Linux), as `open`'s docstring says.
    r, _x, _y = _truncated_run(tmp_path, memmap=True)
    assert r.returncode == -signal.SIGBUS, (r.returncode, r.stdout, r.stderr)
    assert "memmap=True" in asdf_rs.open.__doc__ and "SIGBUS" in asdf_rs.open.__doc__


def test_memmap_true_maps_and_default_copies(tmp_path):
    path = tmp_path / "m.asdf"
    x = np.arange(1000, dtype=">i4")
    asdf.AsdfFile({"x": x}).write_to(path)
    with asdf_rs.open(path) as f:
        a = f["/x"]
        assert not isinstance(a.base, np.memmap) and not isinstance(a, np.memmap)
        np.testing.assert_array_equal(a, x)
        assert not a.flags.writeable
    with asdf_rs.open(path, memmap=True) as f:
        a = f["/x"]
        base = a
        while base is not None and not isinstance(base, np.memmap):
            base = base.base
        assert isinstance(base, np.memmap)
        np.testing.assert_array_equal(a, x)


# --- Names ---------------------------------------------------------------------------------

# Keys that collide as JSON pointer tokens, Zarr path segments or xarray names when merged by
# text: types (1, '1', True, 'true'), escapes ('/', '~', '~1', 'a/b', 'a~1b'), the empty key,
# '.', '..', the renames' own forms ('_._', '__', 'data'), Zarr's metadata keys, unicode.
_KEYS = [1, "1", True, "True", "true", False, "false", 0, "0", 2, "2", -1, "-1", "01", "", ".", "..",
         "/", "~", "~0", "~1", "a/b", "a~1b", "_._", "__", "data", "data_1", "é", "\u2215", ".zarray",
         ".zgroup", "x", "x_1"]
_DTYPES = ["<i1", "<u1", "<i2", ">i2", "<i4", ">u4", "<i8", ">i8", "<f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c16"]


def _colliding_tree(r, ids, depth=0):
    d = {}
    for _ in range(r.randint(1, 6)):
        d[r.choice(_KEYS)] = _value(r, ids, depth)
    return d


def _value(r, ids, depth):
    x = r.random()
    if x < 0.4:
        # Each array says which it is: its first element is its number.
        ids.append(len(ids) + 1)
        shape = r.choice([(), (3,), (2, 3), (1,), (4,)])
        a = np.arange(int(np.prod(shape)), dtype="f8").reshape(shape) + ids[-1]
        return a.astype(r.choice(_DTYPES))
    if x < 0.65 or depth >= 3:
        return r.choice([0, 7, -3, 2.5, "s", "", True, None, "é"])
    if x < 0.85:
        return _colliding_tree(r, ids, depth + 1)
    return [_value(r, ids, depth + 1) for _ in range(r.randint(0, 3))]


def _plain_rs(v):
    if isinstance(v, asdf_rs.TreeMapping):
        return {k: _plain_rs(v[k]) for k in v}
    if isinstance(v, asdf_rs.TreeSequence):
        return [_plain_rs(x) for x in v]
    return _plain_ref(v)


def _plain_ref(v):
    if isinstance(v, dict):
        return {k: _plain_ref(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain_ref(x) for x in v]
    if hasattr(v, "dtype") and hasattr(v, "shape") and not np.isscalar(v):
        return np.asarray(v)
    return v


def _differences(a, b, at="tree"):
    """What differs between two plain trees: keys by type and value, arrays by dtype, shape and
    every value, scalars by type and value."""
    if isinstance(a, dict) or isinstance(b, dict):
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return [f"{at}: {type(a).__name__} vs {type(b).__name__}"]
        ka = {(type(k), k) for k in a}
        kb = {(type(k), k) for k in b}
        if ka != kb or len(a) != len(b):
            return [f"{at}: keys {sorted(map(repr, a))} vs {sorted(map(repr, b))}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{at}[{k!r}]")]
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return [f"{at}: {a!r} vs {b!r}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{at}[{i}]")]
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return [f"{at}: {type(a).__name__} vs {type(b).__name__}"]
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
            return [f"{at}: array {a.dtype}{a.shape} vs {b.dtype}{b.shape}"]
        return []
    if type(a) is not type(b) or a != b:
        return [f"{at}: {a!r} vs {b!r}"]
    return []


def _arrays_by_id(tree, out):
    if isinstance(tree, dict):
        for v in tree.values():
            _arrays_by_id(v, out)
    elif isinstance(tree, list):
        for v in tree:
            _arrays_by_id(v, out)
    elif isinstance(tree, np.ndarray):
        out[int(tree.reshape(-1)[0].real)] = tree
    return out


def _by_id(found, expected, where):
    """Each array found (name -> values) is one of `expected` (id -> array), each exactly once."""
    diffs, seen = [], {}
    for name, values in found.items():
        values = np.asarray(values)
        key = int(values.reshape(-1)[0].real) if values.size else None
        if key not in expected:
            diffs.append(f"{where} {name!r}: no such array")
            continue
        if key in seen:
            diffs.append(f"{where} {name!r} and {seen[key]!r} are one array")
        seen[key] = name
        if not np.array_equal(values.astype(expected[key].dtype), expected[key]):
            diffs.append(f"{where} {name!r}: values differ")
    missing = set(expected) - set(seen)
    if missing:
        diffs.append(f"{where}: arrays missing ({len(missing)})")
    return diffs


def test_colliding_keys_stay_apart_everywhere(tmp_path):
    """1,000 random trees with keys that collide by text, type or escaping, written by Python
    asdf 6.0: asdf_rs's tree, to_dict, to_objects, the xarray engine (datasets and trees) and
    the Zarr references give every key and every array as Python asdf does, none merged."""
    import random

    import fsspec
    import xarray as xr
    import zarr

    r = random.Random(20261128)
    diffs, renames = [], 0
    n_trees = 1000
    for i in range(n_trees):
        ids = []
        tree = _colliding_tree(r, ids)
        path = tmp_path / f"k{i}.asdf"
        asdf.AsdfFile(tree).write_to(path)
        with asdf.open(path, lazy_load=False, memmap=False) as af:
            ref = _plain_ref({k: v for k, v in af.tree.items() if k not in ("asdf_library", "history")})
        expected = _arrays_by_id(ref, {})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with asdf_rs.open(path) as f:
                strip = lambda t: {k: v for k, v in t.items() if k not in ("asdf_library", "history")}  # noqa: E731
                diffs += [f"#{i} tree {d}" for d in _differences(ref, strip(_plain_rs(f.tree)))]
                diffs += [f"#{i} to_dict {d}" for d in _differences(ref, strip(f.tree.to_dict()))]
                diffs += [f"#{i} to_objects {d}" for d in _differences(ref, _plain_ref(strip(f.to_objects())))]
            ds = xr.open_dataset(path, engine="asdf_rs")
            diffs += [f"#{i} {d}" for d in _by_id({n: ds[n].values for n in ds.data_vars}, expected, "xarray variable")]
            ds.close()
            dt = xr.open_datatree(path, engine="asdf_rs")
            found = {f"{node.path}/{n}": node.dataset[n].values for node in dt.subtree for n in node.dataset.data_vars}
            diffs += [f"#{i} {d}" for d in _by_id(found, expected, "xarray tree variable")]
            dt.close()
            refs = asdf_rs.references(path)
            g = zarr.open_group(fsspec.filesystem("reference", fo=refs).get_mapper(""), mode="r")
            found = {}
            g.visititems(lambda name, obj: found.__setitem__(name, obj[...]) if isinstance(obj, zarr.Array) else None)
            diffs += [f"#{i} {d}" for d in _by_id(found, expected, "Zarr array")]
        renames += sum("renamed" in str(w.message) for w in caught)
    print(f"colliding keys: {n_trees} trees, {renames} rename warnings, {len(diffs)} differences")
    assert not diffs, diffs[:20]


def test_keys_of_one_text_by_hand(tmp_path):
    """A file written by hand: `1` and `'1'`, `true` and `'True'` are different keys, each
    with its own value and array, as Python asdf gives them."""
    path = tmp_path / "h.asdf"
    asdf.AsdfFile({1: np.arange(3), "1": np.arange(4) * 10, True: "b", "True": "c"}).write_to(path)
    with asdf.open(path) as af:
        want = _plain_ref({k: af.tree[k] for k in af.tree if k not in ("asdf_library", "history")})
    with asdf_rs.open(path) as f:
        np.testing.assert_array_equal(f.tree["1"], np.arange(4) * 10)
        assert f.tree[1] == "b"  # 1 and True are one Python key: the last written, as PyYAML
        assert f.tree["True"] == "c"
        assert not _differences(want, {k: v for k, v in f.tree.to_dict().items() if k in want})
        np.testing.assert_array_equal(f.lazy(f.tree._pointer + "/" + dict(f.tree._keys)["1"])[1:], [10, 20, 30])


# --- YAML 1.1's types ------------------------------------------------------------------------

_HEAD = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
_YAML11 = b"""s: !!set {a, b, 1}
o: !!omap [{x: 1}, {y: [2, 3]}, {a: null}]
p: !!pairs [{x: 1}, {x: 2}, {1: z}]
t: !!python/tuple [1, [2, !!python/tuple [3]]]
apply: !!python/object/apply:os.system [echo never]
new: !!python/object/new:builtins.dict {x: 1}
name: !!python/name:os.system ''
str: !!python/str abc
nested: {inner: !!set {? q}}
...
"""


def _as_asdf_gives(v):
    """A value with its Python type kept (Tagged* are their plain types with a tag)."""
    from collections import OrderedDict

    if isinstance(v, OrderedDict):
        return ("OrderedDict", [(k, _as_asdf_gives(x)) for k, x in v.items()])
    if isinstance(v, dict):
        return ("dict", getattr(v, "_tag", None), {k: _as_asdf_gives(x) for k, x in v.items()})
    if isinstance(v, (set, frozenset)):
        return ("set", frozenset(v))
    if isinstance(v, tuple):
        return ("tuple", [_as_asdf_gives(x) for x in v])
    if isinstance(v, list):
        return ("list", getattr(v, "_tag", None), [_as_asdf_gives(x) for x in v])
    if isinstance(v, str):
        return ("str", getattr(v, "_tag", None), str(v))
    return (type(v).__name__, v)


def test_yaml11_types_and_python_tags_as_python_asdf_gives_them(tmp_path):
    """`!!set`, `!!omap`, `!!pairs` as a set, an OrderedDict, a list of tuples; `python/` tags
    as tagged nodes with Python asdf's AsdfConversionWarning, never executed, never a refusal of
    the file: to_objects is Python asdf's tree; the plain tree and to_dict the same values."""
    path = tmp_path / "y.asdf"
    path.write_bytes(_HEAD + _YAML11)
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        with asdf.open(path) as af:
            want = {k: _as_asdf_gives(v) for k, v in af.tree.items() if k not in ("asdf_library", "history")}
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        with asdf_rs.open(path) as f:
            got = {k: _as_asdf_gives(v) for k, v in f.to_objects().items() if k not in ("asdf_library", "history")}
            plain = f.tree.to_dict()
            tree = f.tree
            for k in ("s", "o", "p"):
                assert _as_asdf_gives(plain[k]) == want[k]
                assert _as_asdf_gives(tree[k]) == want[k]
            assert _as_asdf_gives(tree["nested"]["inner"]) == want["nested"][2]["inner"]
            assert plain["t"] == [1, [2, [3]]]
            assert isinstance(tree["str"], asdf_rs.Tagged) and tree["str"].tag.endswith("python/str")
    assert got == want
    conv = lambda ws: sorted(str(w.message) for w in ws if w.category.__name__ == "AsdfConversionWarning")  # noqa: E731
    assert conv(got_w) == conv(want_w) and len(conv(want_w)) == 6


def test_python_tags_with_objects_true(tmp_path):
    path = tmp_path / "y.asdf"
    path.write_bytes(_HEAD + _YAML11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf.open(path) as af:
            want = _as_asdf_gives(af.tree["t"])
        with asdf_rs.open(path, objects=True) as f:
            assert _as_asdf_gives(f.tree["t"]) == want
            assert f.tree["t"]._tag == "tag:yaml.org,2002:python/tuple"


# --- Masks, 0-d arrays and every datatype through the chunked writers ----------------------

_ALL_DTYPES = ["|b1", "|i1", "|u1", "<i2", ">i2", "<u2", ">u2", "<i4", ">i4", "<u4", ">u4", "<i8", ">i8", "<u8",
               ">u8", "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c8", "<c16", ">c16"]


def _random_values(rng, dtype, shape):
    """An array (0-d ones too, never numpy scalars) of `dtype` and `shape`."""
    return np.array(_values(rng, dtype, shape), dtype=dtype).reshape(shape)


def _values(rng, dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt.newbyteorder("=")).astype(dt)
    if dt.kind == "c":
        v = rng.normal(size=shape) + 1j * rng.normal(size=shape)
        v.reshape(-1)[:1] = complex(np.nan, np.inf) if v.size else v.reshape(-1)[:1]
        return v.astype(dt)
    v = rng.normal(size=shape) * 1e3
    if v.size:
        v.reshape(-1)[0] = np.nan
    return v.astype(dt)


def _same_array(a, b):
    """Same dtype (byte order aside), shape, every value, and the same mask (or none)."""
    if np.ma.isMaskedArray(a) != np.ma.isMaskedArray(b):
        return f"masked {np.ma.isMaskedArray(a)} vs {np.ma.isMaskedArray(b)}"
    if a.dtype.newbyteorder("=") != b.dtype.newbyteorder("=") or a.shape != b.shape:
        return f"{a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if np.ma.isMaskedArray(a):
        if not np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b)):
            return "masks differ"
        a, b = np.ma.getdata(a), np.ma.getdata(b)
    if not np.array_equal(np.asarray(a), np.asarray(b), equal_nan=a.dtype.kind in "fc"):
        return "values differ"
    return None


def _read_python_asdf(path):
    with asdf.open(path, lazy_load=False, memmap=False) as af:
        out = {}
        for k, v in af.tree.items():
            if k in ("asdf_library", "history"):
                continue
            out[k] = v[...] if hasattr(v, "chunks") and not isinstance(v, np.ndarray) else np.ma.asarray(v) if np.ma.isMaskedArray(v) else np.asarray(v)
        return out


def _cli():
    import shutil
    from pathlib import Path

    cli = os.environ.get("ASDF_CLI")
    if cli and Path(cli).exists():
        return cli
    local = Path(__file__).resolve().parents[3] / "target" / "debug" / "asdf-cli"
    return str(local) if local.exists() else shutil.which("asdf-cli")


def test_chunked_writers_keep_masks_0d_complex_and_every_dtype(tmp_path):
    """200 random files of masked, 0-d, complex and every-dtype arrays (both byte orders)
    written chunked by `asdf_rs.write(chunks=...)`, and 50 written by Python asdf then
    rewritten by `asdf-cli defragment --chunks`: Python asdf + asdf-zarr and asdf_rs read every
    value and every mask back. Masked arrays are written as ndarrays with their masks (an
    asdf-zarr array has none), with a warning that says so; 0-d arrays are never chunked."""
    import subprocess

    rng = np.random.default_rng(20261128)
    cli = _cli()
    diffs, files, masked_seen, chunked_seen = [], 0, 0, 0
    for i in range(250):
        tree = {}
        for j in range(rng.integers(1, 5)):
            dtype = _ALL_DTYPES[rng.integers(len(_ALL_DTYPES))]
            ndim = int(rng.integers(0, 3))
            shape = tuple(int(n) for n in rng.integers(0, 6, ndim))
            a = _random_values(rng, dtype, shape)
            if rng.random() < 0.4:
                a = np.ma.masked_array(a, mask=rng.random(shape) < 0.3)
            tree[f"a{j}"] = a
        by_cli = i >= 200
        chunks = (2,) if rng.random() < 0.5 else (2, 3)
        path = tmp_path / f"c{i}.asdf"
        if by_cli:
            if cli is None:
                continue
            src = tmp_path / f"src{i}.asdf"
            # Python asdf 6.0 cannot write a masked 0-d array (its mask is a numpy bool).
            tree = {k: np.ma.getdata(v) if v.ndim == 0 else v for k, v in tree.items()}
            asdf.AsdfFile(tree).write_to(src)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = _read_python_asdf(src)  # as Python asdf reads the source (an empty mask is not written)
            r = subprocess.run([cli, "defragment", str(src), "-o", str(path), "--chunks", ",".join(map(str, chunks))],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            ranked = [k for k, v in tree.items() if v.ndim == len(chunks)]
            if any(np.ma.isMaskedArray(tree[k]) for k in ranked):
                assert "masked arrays left unchunked" in r.stderr, r.stderr
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                asdf_rs.write(path, tree, chunks=chunks, compression="zlib" if i % 2 else None)
            ranked = [k for k, v in tree.items() if v.ndim == len(chunks)]
            if any(np.ma.isMaskedArray(tree[k]) for k in ranked):
                assert any("not chunked" in str(w.message) for w in caught)
        files += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = _read_python_asdf(path)
            with asdf_rs.open(path) as f:
                own = {k: f[k] for k in tree}
                kinds = {k: f._native.node("/" + k)[1] or "" for k in tree}
        for k, want in tree.items():
            for who, g in (("asdf", got.get(k)), ("asdf_rs", own.get(k))):
                why = "missing" if g is None else _same_array(want, g)
                if why:
                    diffs.append(f"#{i} {'cli' if by_cli else 'write'} {who} {k} {want.dtype}{want.shape}: {why}")
            chunked = kinds[k].startswith("asdf://asdf-format.org/zarr/")
            masked_seen += np.ma.isMaskedArray(want)
            chunked_seen += chunked
            if chunked and (np.ma.isMaskedArray(want) or want.ndim == 0):
                diffs.append(f"#{i} {k}: a masked or 0-d array was chunked")
    print(f"chunked writers: {files} files, {chunked_seen} arrays chunked, {masked_seen} masked, {len(diffs)} differences")
    assert files >= 200
    assert chunked_seen > 100
    assert not diffs, diffs[:20]


# --- Chunked arrays: complex values with a null fill value, and failures -------------------


def _asdf_zarr_file(path, a, fill_value):
    import asdf_zarr.storage
    import zarr

    z = zarr.array(a, chunks=(2, 2), fill_value=fill_value, store=zarr.storage.KVStore({}))
    asdf.AsdfFile({"z": asdf_zarr.storage.to_internal(z)}).write_to(path)


@pytest.mark.parametrize("dtype", ["<c8", "<c16", ">c16", "<f8", "<i4"])
def test_asdf_zarr_arrays_with_null_fill_read_back_equal(tmp_path, dtype):
    """Complex (and other) arrays that asdf-zarr writes with `fill_value: null` (zarr-python's
    default for complex) read as Python asdf + asdf-zarr read them, through `f[p]`, the tree,
    `to_dict`, `to_objects` and `lazy` regions."""
    path = tmp_path / "z.asdf"
    a = (np.arange(15) + 1j * np.arange(15)[::-1]).reshape(3, 5) if dtype[1] == "c" else np.arange(15).reshape(3, 5)
    a = a.astype(dtype)
    _asdf_zarr_file(path, a, None)
    with asdf.open(path) as af:
        want = af.tree["z"][...]
    np.testing.assert_array_equal(want, a)
    with asdf_rs.open(path) as f:
        for got in (f["/z"], f.tree["z"], f.tree.to_dict()["z"], f.to_objects()["z"][...]):
            assert isinstance(got, np.ndarray), type(got)
            assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("=")
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(f.lazy("/z")[1:, 2:4], want[1:, 2:4])


def test_a_chunked_array_that_fails_to_read_is_never_its_mapping(tmp_path):
    """A chunked array asdf_rs cannot read raises by `f[p]`, the tree or `to_dict`: never the
    raw mapping in its place; `to_objects` gives what Python asdf + asdf-zarr give (the node as
    written, with their conversion warning)."""
    path = tmp_path / "z.asdf"
    _asdf_zarr_file(path, np.arange(12, dtype="<f8").reshape(3, 4), 0)
    raw = path.read_bytes()
    assert raw.count(b"dtype: <f8") == 1
    path.write_bytes(raw.replace(b"dtype: <f8", b"dtype: <x8"))  # the same length: blocks stay put
    with pytest.warns(asdf.exceptions.AsdfConversionWarning, match="failed to convert"):
        with asdf.open(path) as af:
            assert isinstance(af.tree["z"], dict)  # Python asdf: the node as written
    with asdf_rs.open(path, validate=False) as f:
        for read in (lambda: f["/z"], lambda: f.tree["z"], lambda: f.tree.to_dict()):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # not "given as written"
                with pytest.raises(asdf_rs.AsdfError):
                    read()
        # to_objects is Python asdf's tree: its conversion warning, and the node as written.
        with pytest.warns(asdf.exceptions.AsdfConversionWarning, match="failed to convert"):
            node = f.to_objects()["z"]
        assert node._tag.startswith("asdf://asdf-format.org/zarr/tags/zarr-")
        assert node["chunk_block_map"] == 4


def test_python_asdf_trees_are_written_whole_and_self_containing_trees_refused(tmp_path):
    """Found by the independent review: Python asdf's `AsdfObject` and `TaggedDict` (dicts that
    keep their items in a UserDict's `data`) were written empty; a tree that contains itself
    or nests past what a reader takes killed the interpreter (stack overflow)."""
    import subprocess
    import sys

    import asdf
    from asdf.tagged import TaggedDict

    src = tmp_path / "src.asdf"
    asdf.AsdfFile({"sci": np.arange(5.0), "meta": {"exp": 3}}).write_to(src)
    with asdf.open(src) as af:
        asdf_rs.write(tmp_path / "copy.asdf", af.tree)
    with asdf.open(tmp_path / "copy.asdf") as af:
        assert list(af["sci"]) == [0.0, 1.0, 2.0, 3.0, 4.0]
        assert af["meta"] == {"exp": 3}
    asdf_rs.write(tmp_path / "t.asdf", {"c": TaggedDict({"y": 1}, "tag:example.org:x-1.0.0")})
    with asdf_rs.open(tmp_path / "t.asdf") as f:
        assert f.tree["c"].to_dict() == {"y": 1}
    script = (
        "import asdf_rs, sys\n"
        "r = {}; r['self'] = r\n"
        "try:\n    asdf_rs.write(sys.argv[1], r)\nexcept Exception as e:\n    print('refused', type(e).__name__)\n"
        "d = cur = {}\n"
        "for _ in range(20000):\n    cur['a'] = {}; cur = cur['a']\n"
        "try:\n    asdf_rs.write(sys.argv[1], d)\nexcept Exception as e:\n    print('refused', type(e).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "r.asdf")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["refused AsdfError", "refused AsdfError"], out.stdout


def test_lazy_arrays_iterate_and_indices_are_numpy_s(tmp_path):
    """Found by the independent review: iterating a LazyArray raised at its end; `element`
    ignored extra indices and took floats and booleans as integers; a boolean index of a lazy
    array read a row."""
    p = tmp_path / "sl.asdf"
    asdf.AsdfFile({"v": np.arange(10, dtype="i2"), "x": np.arange(60.0).reshape(6, 10)}).write_to(p)
    with asdf_rs.open(p) as f:
        assert [int(v) for v in f.lazy("/v")] == list(range(10))
        assert 9 in f.lazy("/v") and 99 not in f.lazy("/v")
        for bad in [(1, 2, 7), (1.0, 2), (True, 1), (1,)]:
            with pytest.raises(IndexError):
                f.element("/x", bad)
        assert f.element("/x", (-1, -1)) == 59.0
        assert f.element("/x", (np.int64(1), 2)) == 12.0
        with pytest.raises(IndexError):
            f.lazy("/x")[True]


def test_to_dask_keeps_masks(tmp_path):
    """Found by the independent review: `to_dask` of a masked array gave its values as valid."""
    p = tmp_path / "mask.asdf"
    m = np.ma.array(np.arange(12, dtype="i4").reshape(3, 4), mask=np.arange(12).reshape(3, 4) % 5 == 0)
    asdf.AsdfFile({"m": m}).write_to(p)
    with asdf_rs.open(p) as f:
        got = f.to_dask("/m").compute()
    assert np.ma.isMaskedArray(got)
    assert (np.ma.getmaskarray(got) == m.mask).all() and (got.data == m.data).all()


def test_to_dask_refuses_a_local_file_replaced_since_it_was_opened(tmp_path):
    """Found by the independent review: a dask array of a local file read whichever file was at
    the path when computed (the File gave the old values, the graph the new)."""
    p = tmp_path / "dr.asdf"
    x = np.arange(1000.0)
    asdf.AsdfFile({"x": x}).write_to(p)
    with asdf_rs.open(p) as f:
        d = f.to_dask("/x")
        assert d[5].compute() == 5.0
        asdf.AsdfFile({"x": -x}).write_to(tmp_path / "new.asdf")
        os.replace(tmp_path / "new.asdf", p)
        with pytest.raises(OSError, match="changed since it was opened"):
            d[5].compute()
