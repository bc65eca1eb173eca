"""`File.to_objects` and `open(..., objects=True)` against Python asdf's own `asdf.open(...).tree`
over the real-world files of the interop suite (tests/interop/realworld.py: JWST and Roman
models, gwcs, astropy's objects, specutils, sunpy, ndcube, asdf-zarr, the files the packages'
wheels ship, DKIST's tiled datasets among them), compared through Python asdf's own
serialisation of both trees."""

import io
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import asdf
import asdf_rs

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "interop"))


def serialise(tree):
    """The file Python asdf writes of `tree` (the same asdf_library and history for both),
    its lazy ndarrays (Python asdf's and ours alike) as the arrays they give: Python asdf
    writes a lazily loaded masked array back without its mask, and cannot write a lazily
    loaded exploded array to a buffer."""
    from asdf import treeutil
    from asdf.tags.core import NDArrayType

    tree = treeutil.walk_and_modify(tree, lambda n: n[...] if isinstance(n, NDArrayType) else n)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        af = asdf.AsdfFile(dict(tree))
        af.write_to(buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def realworld_files(tmp_path_factory):
    import realworld

    out = str(tmp_path_factory.mktemp("realworld"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = realworld.make_files(out)
    conformance = os.environ.get("ASDF_CONFORMANCE_DIR")
    if conformance and os.path.isdir(conformance):
        realworld.collect_conformance(conformance, out, files)
    return [f for f in files if "make_error" not in f]


def arrays_of(tree, out, path=""):
    """Every array of a tree Python asdf read (ndarrays, zarr arrays) by path, as numpy."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            arrays_of(v, out, f"{path}/{k}")
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            arrays_of(v, out, f"{path}/{i}")
    elif hasattr(tree, "shape") and hasattr(tree, "dtype"):
        out[path] = np.asarray(tree[...])
    return out


def same_but_block_order(ours, theirs):
    """The same YAML and equal arrays, the blocks in another order: asdf-zarr writes chunks
    in the order of a Python set of their keys (string hashing's, which differs from run to
    run), so two files of the same tree differ in block order even from Python asdf itself."""
    if ours.split(b"\xd3BLK")[0] != theirs.split(b"\xd3BLK")[0]:
        return False
    with asdf.open(io.BytesIO(ours)) as a, asdf.open(io.BytesIO(theirs)) as b:
        x, y = arrays_of(a.tree, {}), arrays_of(b.tree, {})
        return x.keys() == y.keys() and all(np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind in "fc") for k in x)


def python_asdf_tree_bytes(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf.open(path) as af:
            return serialise(af.tree)


def materialise(v):
    """A tree of objects mode (lazy mappings and sequences) as dicts and lists."""
    if isinstance(v, asdf_rs.TreeMapping):
        return {k: materialise(v[k]) for k in v}
    if isinstance(v, asdf_rs.TreeSequence):
        return [materialise(x) for x in v]
    return v


def ours_bytes(path, objects_mode=False, node_by_node=False):
    """Our tree of objects serialised: `to_objects()` of a plain open (Python asdf fills the
    defaults of files before 1.6.0) or of an `objects=True` open (filled in Rust from the
    installed extensions' schemas), or node by node through `objects=True`'s lazy tree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf_rs.open(path, objects=objects_mode) as f:
            if node_by_node:
                tree = asdf.tags.core.AsdfObject({k: materialise(f.tree[k]) for k in f.tree})
            else:
                tree = f.to_objects()
            return serialise(tree)


def test_to_objects_equals_python_asdf_on_real_world_files(realworld_files):
    equal, differ, python_fails, ours_fails = [], [], [], []
    for entry in realworld_files:
        path = entry["path"]
        try:
            theirs = python_asdf_tree_bytes(path)
        except Exception as e:  # noqa: BLE001 - a file Python asdf cannot open is not compared
            python_fails.append((entry["origin"], f"{type(e).__name__}: {str(e)[:120]}"))
            continue
        for mode in ("to_objects", "objects=True"):
            origin = f"{entry['origin']} ({mode})"
            try:
                ours = ours_bytes(path, objects_mode=mode == "objects=True")
            except Exception as e:  # noqa: BLE001 - counted and named below
                ours_fails.append((origin, f"{type(e).__name__}: {str(e)[:300]}"))
                continue
            if ours == theirs or same_but_block_order(ours, theirs):
                equal.append(origin)
            else:
                differ.append(origin)
    print(
        f"\nto_objects vs asdf.open(...).tree: {len(equal)} of {len(equal) + len(differ) + len(ours_fails)} "
        f"trees equal (through Python asdf's serialisation; each file opened plainly and with "
        f"objects=True); {len(python_fails)} files Python asdf cannot open were not compared"
    )
    for origin in differ:
        print(f"  DIFFERS: {origin}")
    for origin, e in ours_fails:
        print(f"  OURS FAILED: {origin}: {e}")
    for origin, e in python_fails:
        print(f"  (Python asdf cannot open: {origin}: {e})")
    assert len(equal) >= 80
    assert not differ and not ours_fails


def test_objects_mode_gives_the_same_objects_node_by_node(realworld_files):
    by_name = {Path(f["path"]).name: f["path"] for f in realworld_files}
    path = by_name["astropy_objects.asdf"]
    import astropy.units as u
    from astropy.coordinates import SkyCoord
    from astropy.table import QTable
    from astropy.time import Time

    with asdf_rs.open(path, objects=True) as f:
        t = f.tree
        assert isinstance(t["quantity"], u.Quantity) and t["quantity"].unit == u.km / u.s
        assert isinstance(t["time"], Time) and t["time"].isot == "2024-03-01T12:00:00.500"
        assert isinstance(t["table"], QTable) and (t["table"]["a"] == [1, 2, 3] * u.m).all()
        assert isinstance(t["skycoord"], SkyCoord)
        assert t["time"] is t["time"]  # converted once
        assert t["unit"] == u.erg / u.s / u.cm**2
    assert ours_bytes(path, objects_mode=True, node_by_node=True) == python_asdf_tree_bytes(path)
    with asdf_rs.open(by_name["gwcs_imaging.asdf"], objects=True) as f:
        import gwcs

        w = f.tree["wcs"]
        assert isinstance(w, gwcs.WCS)
        with asdf.open(by_name["gwcs_imaging.asdf"]) as af:
            np.testing.assert_allclose(w(3.0, 4.0), af.tree["wcs"](3.0, 4.0))


def test_unknown_tags_come_back_as_python_asdf_gives_them(tmp_path):
    path = tmp_path / "unknown.asdf"
    asdf_rs.write(
        path,
        {"thing": asdf_rs.Tagged("tag:example.org:thing-1.0.0", "text")},
        validate=False,
    )
    with pytest.warns(asdf.exceptions.AsdfConversionWarning, match="example.org:thing-1.0.0"):
        with asdf_rs.open(path) as f:
            ours = f.to_objects()
    with pytest.warns(asdf.exceptions.AsdfConversionWarning):
        with asdf.open(path) as af:
            theirs = af.tree["thing"]
    assert ours["thing"] == theirs and ours["thing"]._tag == theirs._tag


def test_to_objects_is_faster_than_asdf_open(realworld_files):
    """Times (medians of 5, the two taking turns) of a fresh open giving the whole tree as
    objects: the DKIST tiled dataset and a JWST model."""
    wanted = {
        "dkist tiled dataset": "test_tiled_dataset-1.3.0_dataset-1.2.0.asdf",
        "JWST ImageModel": "jwst_image.asdf",
        "gwcs (NIRCam)": "nircamwcs.asdf",
    }
    paths = {}
    for f in realworld_files:
        for label, name in wanted.items():
            if f["path"].endswith(name):
                paths[label] = f["path"]
    assert set(paths) == set(wanted), paths

    def python_asdf(path):
        with asdf.open(path) as af:
            tree = af.tree
            return len(tree)

    def ours(path):
        with asdf_rs.open(path) as f:
            return len(f.to_objects())

    def ours_objects(path):
        with asdf_rs.open(path, objects=True) as f:
            return len(f.to_objects())

    warnings.simplefilter("ignore")
    runs = (("python", python_asdf), ("ours", ours), ("objects", ours_objects))
    for label, path in paths.items():
        for _name, fn in runs:
            fn(path)  # imports and caches warmed for each
        times = {name: [] for name, _ in runs}
        for _ in range(5):
            for name, fn in runs:
                t0 = time.perf_counter()
                fn(path)
                times[name].append(time.perf_counter() - t0)
        p, o, b = (statistics.median(times[n]) for n in ("python", "ours", "objects"))
        print(f"\n{label} ({os.path.getsize(path):,} bytes): asdf.open(...).tree {p * 1000:.1f} ms; "
              f"asdf_rs.open(...).to_objects() {o * 1000:.1f} ms ({p / o:.2f}x); "
              f"asdf_rs.open(..., objects=True).to_objects() {b * 1000:.1f} ms ({p / b:.2f}x)")


def test_to_objects_of_remote_files_equal_python_asdfs(served, realworld_files):
    """Over HTTP (Python asdf fills the defaults of files before 1.6.0 there): an old gwcs
    file whose transforms need their schemas' defaults, and astropy's objects."""
    import shutil

    root, server = served
    wanted = ["5d_gwcs.asdf", "astropy_objects.asdf", "jwst_image.asdf"]
    done = 0
    for f in realworld_files:
        name = Path(f["path"]).name
        if any(name.endswith(w) for w in wanted):
            shutil.copyfile(f["path"], root / f"objects_{name}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with asdf_rs.open(f"{server.url}/objects_{name}") as rf:
                    ours = serialise(rf.to_objects())
            assert ours == python_asdf_tree_bytes(f["path"]), name
            done += 1
    assert done == len(wanted)


def test_to_objects_arrays_are_lazy_as_python_asdfs(served):
    """Ndarrays come as Python asdf's lazy `NDArrayType`: nothing of a block is fetched until
    the array is used (counted on the loopback server), then equal to Python asdf's."""
    import astropy.units as u
    from asdf.tags.core import NDArrayType

    root, server = served
    data = np.random.default_rng(5).standard_normal((512, 512))
    af = asdf.AsdfFile({"img": data, "q": data[:4] * u.Jy})
    af.set_array_compression(af.tree["img"], "zlib")
    af.write_to(root / "lazy_objects.asdf")
    with asdf_rs.open(f"{server.url}/lazy_objects.asdf") as f:
        server.reset()
        tree = f.to_objects()
        fetched = server.stats()["bytes"]
        assert isinstance(tree["img"], NDArrayType)
        assert fetched < 64 << 10, server.stats()["log"]  # the block index and headers at most, no data
        np.testing.assert_array_equal(tree["img"][...], data)
        assert server.stats()["bytes"] > 1 << 20  # the zlib block, fetched when used
        assert isinstance(tree["q"], u.Quantity)
        np.testing.assert_array_equal(tree["q"].value, data[:4])
