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
