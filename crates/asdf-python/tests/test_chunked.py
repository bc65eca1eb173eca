"""Chunked arrays (asdf-zarr) and lazy arrays: what Python asdf + asdf-zarr writes, read by
asdf_rs whole (`f[pointer]`) and by region (`f.lazy(pointer)[...]`), against numpy."""
import random

import numcodecs
import numpy as np
import pytest
import zarr

import asdf
import asdf_rs


def _zarr(shape, chunks, dtype, compressor, order):
    z = zarr.create(shape, chunks=chunks, dtype=dtype, compressor=compressor, order=order, fill_value=0)
    z[...] = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    return z


@pytest.mark.parametrize(
    "compressor",
    [None, numcodecs.Zlib(3), numcodecs.Zstd(3), numcodecs.Blosc("lz4", 5, 1), numcodecs.BZ2(2), numcodecs.LZ4(1)],
)
@pytest.mark.parametrize("order", ["C", "F"])
def test_chunked_arrays_read_whole_and_by_region(tmp_path, compressor, order):
    p = tmp_path / "z.asdf"
    z = _zarr((37, 23), (10, 7), ">f4", compressor, order)
    plain = np.arange(60.0).reshape(6, 10)
    asdf.AsdfFile({"z": z, "plain": plain}).write_to(p)
    expected = np.asarray(z[...])
    with asdf_rs.open(p) as f:
        np.testing.assert_array_equal(f["/z"], expected)
        x = f.lazy("/z")
        assert (x.shape, x.ndim, x.chunks, x.size) == ((37, 23), 2, (10, 7), 37 * 23)
        assert x.dtype.newbyteorder("=") == np.dtype("f4")
        r = random.Random(7)
        for _ in range(40):
            a0, b0 = sorted(r.sample(range(-40, 40), 2))
            key = (slice(a0, b0, r.choice([None, 1, 2, -1, -3])), r.choice([Ellipsis, slice(None), r.randrange(-23, 23)]))
            if key[1] is Ellipsis:
                key = (key[1], key[0])
            np.testing.assert_array_equal(x[key], expected[key], err_msg=str(key))
        assert x[3, 4] == expected[3, 4]
        np.testing.assert_array_equal(np.asarray(x), expected)
        y = f.lazy("plain")
        assert y.chunks is None
        np.testing.assert_array_equal(y[1:5:2, ::-3], plain[1:5:2, ::-3])
        with pytest.raises(TypeError):
            y[[0, 1]]
        with pytest.raises(asdf_rs.AsdfError):
            y[7]


DTYPES = ["<f4", ">f4", "<f8", ">f8", "<i1", "<i2", ">i2", "<i4", ">i8", "|u1", "<u2", ">u4", "<u8", "|b1", "<c8", ">c16"]


def _random_array(r, dtype, shape):
    kind = np.dtype(dtype).kind
    n = int(np.prod(shape))
    if kind == "b":
        a = np.array([r.random() < 0.5 for _ in range(n)])
    elif kind in "iu":
        info = np.iinfo(np.dtype(dtype))
        a = np.array([r.randint(max(info.min, -(10**6)), min(info.max, 10**6)) for _ in range(n)])
    elif kind == "c":
        a = np.array([complex(r.gauss(0, 9), r.gauss(0, 9)) for _ in range(n)])
    else:
        a = np.array([r.gauss(0, 1e3) for _ in range(n)])
        if n > 3:
            a[r.randrange(n)] = np.nan
    a = a.astype(dtype).reshape(shape)
    if n > 4 and r.random() < 0.5:
        # A run of zeros: chunks holding only the fill value are not stored.
        a.reshape(-1)[: n // 2] = 0
    return a


@pytest.mark.parametrize("seed", range(40))
def test_chunked_arrays_written_by_asdf_rs_read_by_python_asdf_zarr(tmp_path, seed):
    # Random arrays written chunked by asdf_rs (every numeric dtype in both byte orders, 1 to
    # 3 dimensions, chunk shapes that do not divide the shape, each compressor) read back by
    # Python asdf + asdf-zarr (as zarr arrays) and by asdf_rs, equal to what was written.
    r = random.Random(seed)
    ndim = r.randint(1, 3)
    shape = tuple(r.randint(1, 20 if ndim > 1 else 150) for _ in range(ndim))
    chunks = tuple(r.randint(1, s + 3) for s in shape)
    compression = r.choice([None, "zlib", "bzp2", "zstd", "lz4", "bls2"])
    a = _random_array(r, r.choice(DTYPES), shape)
    b = _random_array(r, "<f8", (5, 4))
    p = tmp_path / "ours.asdf"
    # (Python asdf reads a block compressed with bls2 only with an extension: then no block.)
    tree = {"a": a, "meta": {"seed": seed}} if compression == "bls2" else {"a": a, "b": b, "meta": {"seed": seed}}
    asdf_rs.write(p, tree, compression=compression, chunks=chunks)
    with asdf.open(p, lazy_load=False) as af:
        z = af["a"]
        assert isinstance(z, zarr.Array), type(z)
        assert z.chunks == chunks and z.shape == shape
        got = np.asarray(z[...])
        assert got.dtype == a.dtype
        np.testing.assert_array_equal(got, a)
        if "b" in tree:
            np.testing.assert_array_equal(af["b"], b)
        assert af["meta"]["seed"] == seed
    with asdf_rs.open(p) as f:
        np.testing.assert_array_equal(f["/a"], a)
        x = f.lazy("/a")
        assert x.chunks == chunks
        key = tuple(slice(r.randint(0, s - 1), None, r.choice([1, 2])) for s in shape)
        np.testing.assert_array_equal(x[key], a[key])
