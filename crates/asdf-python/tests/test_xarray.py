"""xarray's backend (`engine="asdf_rs"`): variables, attributes, lazy region reads (counted
on the loopback range server), groups as a DataTree."""

import numpy as np
import pytest

import asdf
import asdf_rs

xr = pytest.importorskip("xarray")


def sample(path, rng):
    tree = {
        "sci": {
            "data": rng.standard_normal((64, 48)).astype(">f4"),
            "err": np.abs(rng.standard_normal((64, 48))),
            "wave": np.linspace(1.0, 2.0, 48),
            "name": "NIRCAM",
        },
        "cube": np.arange(4 * 5 * 6, dtype="<i2").reshape(4, 5, 6),
        "masked": np.ma.masked_array(np.arange(6.0), mask=[0, 1, 0, 0, 1, 0]),
        "meta": {"exposure": 12.5, "count": 3, "ok": True, "date": "2024-01-02"},
    }
    asdf.AsdfFile(tree).write_to(path)  # Python asdf's file
    return tree


def test_open_dataset_gives_every_array_lazily(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "x.asdf"
    tree = sample(path, rng)
    ds = xr.open_dataset(path, engine="asdf_rs")
    assert set(ds.data_vars) == {"sci/data", "sci/err", "sci/wave", "cube", "masked"}
    y, x = ds["sci/data"].dims
    assert y != x and ds["sci/err"].dims == (y, x) and ds["sci/wave"].dims == (x,)
    assert ds.sizes[y] == 64 and ds.sizes[x] == 48 and len(set(ds["cube"].dims)) == 3
    assert all(d.startswith("dim_") for d in ds.dims)
    # Nothing read yet: lazily indexed backend arrays.
    assert not isinstance(ds["sci/data"].variable._data, np.ndarray)
    np.testing.assert_array_equal(ds["sci/data"].values, tree["sci"]["data"])
    np.testing.assert_array_equal(ds["cube"][1:3, ::2, -1].values, tree["cube"][1:3, ::2, -1])
    np.testing.assert_array_equal(ds["sci/err"].isel({y: 5}).values, tree["sci"]["err"][5])
    masked = ds["masked"].values
    assert np.isnan(masked[1]) and np.isnan(masked[4]) and masked[2] == 2.0
    assert ds.attrs["meta/exposure"] == 12.5 and ds.attrs["meta/count"] == 3
    assert ds.attrs["sci/name"] == "NIRCAM"
    assert ds["sci/data"].attrs["asdf_pointer"] == "/sci/data"
    # Dask chunks through xarray.
    ds2 = xr.open_dataset(path, engine="asdf_rs", chunks={y: 16})
    assert float(ds2["sci/err"].sum().compute()) == pytest.approx(tree["sci"]["err"].sum())
    ds.close()
    ds2.close()


def test_lazy_slicing_reads_only_what_it_needs(served):
    root, server = served
    n = 2048
    data = np.arange(n * n, dtype="<f8").reshape(n, n)  # 32 MiB, uncompressed
    asdf_rs.write(root / "big_xr.asdf", {"img": data})
    server.reset()
    ds = xr.open_dataset(f"{server.url}/big_xr.asdf", engine="asdf_rs")
    opened = server.stats()["bytes"]
    cut = ds["img"][100:110, 200:260].values
    s = server.stats()
    np.testing.assert_array_equal(cut, data[100:110, 200:260])
    print(f"\nxarray over HTTP, a 10x60 cut of a 32 MiB array: {s['requests']} requests, "
          f"{s['bytes']:,} bytes ({opened:,} to open)")
    assert s["bytes"] < 1 << 20, s
    ds.close()


def test_round_trip_through_xarray(tmp_path):
    """A dataset written with asdf_rs from xarray's values reads back equal, attributes too."""
    src = xr.Dataset(
        {"flux": (("y", "x"), np.random.default_rng(1).random((5, 7))), "t": ("y", np.arange(5))},
        attrs={"telescope": "JWST", "exptime": 10.5},
    )
    path = tmp_path / "rt.asdf"
    asdf_rs.write(path, {**{k: v.values for k, v in src.data_vars.items()}, "meta": dict(src.attrs)})
    back = xr.open_dataset(path, engine="asdf_rs")
    for k in src.data_vars:
        np.testing.assert_array_equal(back[k].values, src[k].values)
    assert back.attrs["meta/telescope"] == "JWST" and back.attrs["meta/exptime"] == 10.5
    back.close()


def test_open_datatree_gives_the_trees_groups(tmp_path):
    path = tmp_path / "tree.asdf"
    tree = sample(path, np.random.default_rng(4))
    dt = xr.open_datatree(path, engine="asdf_rs")
    np.testing.assert_array_equal(dt["sci"]["data"].values, tree["sci"]["data"])
    np.testing.assert_array_equal(dt["cube"].values, tree["cube"])
    assert dt["sci"].attrs["name"] == "NIRCAM"
    assert dt["meta"].attrs["exposure"] == 12.5
    dt.close()
