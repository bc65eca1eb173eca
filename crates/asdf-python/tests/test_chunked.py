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
    "compressor", [None, numcodecs.Zlib(3), numcodecs.Zstd(3), numcodecs.Blosc("lz4", 5, 1), numcodecs.BZ2(2)]
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
