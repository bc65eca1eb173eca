"""`asdf_rs.references`: random files written by Python asdf 6.0 (and asdf-zarr, and asdf_rs),
read back through the references by zarr-python + fsspec's reference file system, locally and
over the loopback HTTP server, every value compared with what Python asdf reads; the arrays the
references cannot express are listed and checked to be exactly those expected."""

import json
import warnings

import numpy as np
import pytest

import asdf
import asdf_rs

DTYPES = ["<f8", ">f8", "<f4", ">f4", "<i8", ">i4", "<i2", "|i1", "<u4", ">u2", "|u1", "<c16", ">c8", "<f2", "|b1", "|S5", "<U3"]
COMPRESSIONS = [None, "zlib", "bzp2", "zstd", "lz4", "blsc"]
# lz4: Python asdf's framing of one LZ4 block (arrays up to 4 MiB); blsc: one Blosc buffer.
EXPRESSIBLE = {None, "zlib", "bzp2", "zstd", "lz4", "blsc"}


def random_array(rng, dtype):
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(n) for n in rng.integers(0, 7, ndim)) if rng.random() < 0.1 else tuple(int(n) for n in rng.integers(1, 9, ndim))
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "S":
        a = np.array([bytes(rng.integers(97, 123, int(rng.integers(0, 6))).astype("u1")) for _ in range(n)], dtype=dt)
    elif dt.kind == "U":
        a = np.array(["".join(chr(c) for c in rng.integers(0x41, 0x3B0, int(rng.integers(0, 4)))) for _ in range(n)], dtype=dt)
    elif dt.kind == "b":
        a = rng.random(n) < 0.5
    elif dt.kind == "c":
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    elif dt.kind == "f":
        a = (rng.standard_normal(n) * 1e3).astype(dt)
        if n:
            a[rng.integers(0, n)] = np.nan
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("=")).astype(dt)
    return a.astype(dt).reshape(shape)


def random_file(rng, path):
    """A file of Python asdf's: random arrays, each alone in its block with a random
    compression, plus views (a strided one, a Fortran-ordered one, a contiguous slice of a
    shared base) and an inline array; returns {pointer: (array, expressible)}."""
    tree, expect = {"meta": {"seed": int(rng.integers(1 << 30))}, "group": {"inner": {}}}, {}
    compressions = {}
    for i in range(int(rng.integers(3, 8))):
        a = random_array(rng, DTYPES[int(rng.integers(len(DTYPES)))])
        where = tree if rng.random() < 0.5 else tree["group"]["inner"]
        where[f"a{i}"] = a
        pointer = ("/" if where is tree else "/group/inner/") + f"a{i}"
        label = COMPRESSIONS[int(rng.integers(len(COMPRESSIONS)))]
        compressions[id(a)] = label
        expect[pointer] = (a, label in EXPRESSIBLE or a.size == 0)
    base = np.arange(60, dtype="<f8").reshape(6, 10) * rng.random()
    tree["views"] = {"rows": base[2:4], "strided": base[:, ::3], "fortran": np.asfortranarray(random_array(rng, ">i4").reshape(-1, 1) * np.ones((1, 3), ">i4"))}
    tree["views"]["base"] = base
    expect["/views/rows"] = (base[2:4], True)
    # Python asdf 6 writes each view as a contiguous copy in a block of its own.
    expect["/views/strided"] = (base[:, ::3], True)
    expect["/views/base"] = (base, True)
    expect["/views/fortran"] = (tree["views"]["fortran"], True)
    tree["small"] = np.arange(4, dtype="<i4")
    expect["/small"] = (tree["small"], True)
    af = asdf.AsdfFile(tree)
    for a in list(tree.values()) + list(tree["group"]["inner"].values()):
        if isinstance(a, np.ndarray) and compressions.get(id(a)):
            af.set_array_compression(a, compressions[id(a)])
    af.set_array_storage(tree["small"], "inline")
    af.write_to(path)
    return expect


def read_by_references(refs):
    import fsspec
    import zarr

    fs = fsspec.filesystem("reference", fo=refs, remote_protocol=None)
    return zarr.open_group(fs.get_mapper(""), mode="r")


def check(refs, expect, skipped, path):
    group = read_by_references(refs)
    listed = {p for p, _ in skipped}
    n = 0
    for pointer, (a, expressible) in expect.items():
        with asdf.open(path) as af:
            node = af.tree
            for t in pointer.split("/")[1:]:
                node = node[t]
            theirs = np.asarray(node)
        np.testing.assert_array_equal(a, theirs)
        if not expressible:
            assert pointer in listed, (pointer, skipped)
            continue
        assert pointer not in listed, (pointer, skipped)
        ours = group[pointer.lstrip("/")][...]
        assert ours.dtype == theirs.dtype, (pointer, ours.dtype, theirs.dtype)
        assert ours.shape == theirs.shape, pointer
        np.testing.assert_array_equal(ours, theirs, err_msg=pointer)
        n += 1
    return n


def test_references_read_by_zarr_equal_python_asdf(tmp_path, served):
    root, server = served
    rng = np.random.default_rng(11)
    local = remote = files = 0
    reasons = {}
    for k in range(25):
        name = f"refs{k}.asdf"
        path = root / name
        expect = random_file(rng, path)
        skipped = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            refs = asdf_rs.references(path, skipped=skipped)
        assert any("without Zarr references" in str(x.message) for x in w) == bool(skipped)
        json.dumps(refs)  # JSON as it is
        local += check(refs, expect, skipped, path)
        for _, why in skipped:
            reasons[why.split(" (")[0]] = reasons.get(why.split(" (")[0], 0) + 1
        url = f"{server.url}/{name}"
        refs = asdf_rs.references(url, skipped=[])
        assert all(v[0] == url for v in refs["refs"].values() if isinstance(v, list))
        remote += check(refs, expect, [*skipped], path)
        files += 1
    print(f"\nreferences: {files} random files of Python asdf: {local} arrays equal read by zarr-python "
          f"through local references, {remote} over HTTP; listed as not expressible: {reasons}")
    assert local > 100 and remote == local


def test_what_references_cannot_express_is_listed(tmp_path):
    """An lz4 block of more than one LZ4 block (over 4 MiB), a Blosc2 frame, an LZ4 frame and a
    masked array: named, with the reason; the others expressed and equal."""
    big = np.arange(600_000, dtype="<f8")  # 4.6 MiB: two LZ4 blocks in Python asdf's framing
    small = np.arange(100, dtype=">i4")
    tree = {"big": big, "frame": small.copy(), "lz4f": small.copy() * 2, "plain": small.copy() * 3,
            "masked": np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 0])}
    af = asdf.AsdfFile(tree)
    af.set_array_compression(tree["big"], "lz4")
    af.set_array_compression(tree["lz4f"], "lz4f")
    af.write_to(tmp_path / "mixed.asdf")
    asdf_rs.write(tmp_path / "frame.asdf", {"frame": small}, compression="bls2")
    skipped = []
    with pytest.warns(UserWarning, match="/big"):
        refs = asdf_rs.references(tmp_path / "mixed.asdf", skipped=skipped)
    assert [p for p, _ in skipped] == ["/big", "/lz4f", "/masked"], skipped
    g = read_by_references(refs)
    np.testing.assert_array_equal(g["plain"][...], small * 3)
    np.testing.assert_array_equal(g["frame"][...], small)
    skipped = []
    with pytest.warns(UserWarning, match="Blosc2"):
        asdf_rs.references(tmp_path / "frame.asdf", skipped=skipped)
    assert [p for p, _ in skipped] == ["/frame"]


def test_references_of_asdf_zarr_chunks_and_asdf_rs_files(tmp_path):
    import zarr
    import asdf_zarr.storage

    z = zarr.creation.create((37, 23), chunks=(8, 5), dtype=">f4", compressor=zarr.Zlib(level=3), fill_value=np.nan)
    values = np.arange(37 * 23, dtype=">f4").reshape(37, 23)
    z[:20] = values[:20]  # the other chunks never written: the fill value
    path = tmp_path / "zarr.asdf"
    asdf.AsdfFile({"z": asdf_zarr.storage.to_internal(z)}).write_to(path)
    refs = asdf_rs.references(path)
    got = read_by_references(refs)["z"][...]
    with asdf.open(path) as af:
        np.testing.assert_array_equal(got, af.tree["z"][...])
    # Ours, every codec we write, and chunked.
    ours = tmp_path / "ours.asdf"
    codecs = ["zlib", "bzp2", "zstd", "lz4", "blsc"]
    data = {f"c_{c}": np.arange(1000, dtype="<f8").reshape(10, 100) * 1.5 for c in codecs}
    for c in codecs:
        asdf_rs.write(ours, {"x": data[f"c_{c}"]}, compression=c)
        np.testing.assert_array_equal(read_by_references(asdf_rs.references(ours))["x"][...], data[f"c_{c}"])
    asdf_rs.write(ours, {"x": data["c_zlib"]}, compression="zstd", chunks=(3, 40))
    np.testing.assert_array_equal(read_by_references(asdf_rs.references(ours))["x"][...], data["c_zlib"])
    manifest = asdf_rs.references(ours, version="manifest")
    assert set(manifest) == {"x"} and len(manifest["x"]["chunks"]) == 4 * 3
