"""Random chunked arrays as Python asdf 6.0 + asdf-zarr write them (internal storage, and
directory stores beside the file).

Usage: zarr_random.py OUT N SEED. Writes OUT/NAME.asdf with Zarr arrays at /z and /w and an
ndarray at /n (in a block compressed at random), and OUT/NAME.json with what Python asdf +
asdf-zarr read back from the file: shape, dtype, chunks, compressor, the values in C order
(NaN as null, complex as [re, im]), and three random regions (numpy's basic slicing) with
their shapes and values. Prints how many files were written.

Drawn at random: dtype (every numeric kind in both byte orders), 1 to 3 dimensions, shapes
and chunk shapes that do not divide them, compressor (none, zlib, gzip, zstd, bz2, lz4, blosc
with each inner codec and shuffle), `order` C or F, fill value,
chunks left unwritten (they read as the fill value), a null fill value (every chunk then
written), and for /w the store: internal, a
`DirectoryStore` or a `NestedDirectoryStore` (`/` separator) beside the file.
"""

import json
import math
import os
import random
import sys

import asdf
import numcodecs
import numpy as np
import zarr

DTYPES = ["<f4", ">f4", "<f8", ">f8", "<i1", "<i2", ">i2", "<i4", ">i8", "|u1", "<u2", ">u4", "<u8", "|b1", "<c8", ">c16"]


def compressor(r):
    k = r.choice(["none", "zlib", "gzip", "zstd", "bz2", "blosc", "lz4"])
    if k == "none":
        return None
    if k == "zlib":
        return numcodecs.Zlib(level=r.randint(1, 9))
    if k == "gzip":
        return numcodecs.GZip(level=r.randint(1, 9))
    if k == "zstd":
        return numcodecs.Zstd(level=r.randint(1, 9))
    if k == "bz2":
        return numcodecs.BZ2(level=r.randint(1, 9))
    if k == "lz4":
        return numcodecs.LZ4(acceleration=r.randint(1, 5))
    return numcodecs.Blosc(
        cname=r.choice(["lz4", "lz4hc", "zstd", "zlib", "blosclz"]),
        clevel=r.randint(1, 9),
        shuffle=r.choice([0, 1, 2]),
    )


def values(r, dtype, shape):
    n = math.prod(shape)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([r.random() < 0.5 for _ in range(n)], dtype=dtype).reshape(shape)
    if kind in "iu":
        info = np.iinfo(np.dtype(dtype))
        lo, hi = max(info.min, -(10**6)), min(info.max, 10**6)
        return np.array([r.randint(lo, hi) for _ in range(n)], dtype=dtype).reshape(shape)
    if kind == "c":
        return np.array([complex(r.gauss(0, 100), r.gauss(0, 100)) for _ in range(n)], dtype=dtype).reshape(shape)
    a = np.array([r.gauss(0, 1000) for _ in range(n)], dtype=dtype)
    if n > 2 and r.random() < 0.3:
        a[r.randrange(n)] = np.nan
    return a.reshape(shape)


def fill(r, dtype):
    # `null` (zarr-python 2's fill_value=None, which asdf-zarr writes and reads), for every
    # dtype; complex ones included.
    if r.random() < 0.2:
        return None
    kind = np.dtype(dtype).kind
    if kind == "b":
        return r.choice([False, True])
    if kind in "iu":
        return r.choice([0, 7])
    if kind == "c":
        return 0
    return r.choice([0.0, -1.5, float("nan")])


def random_zarr(r, store=None):
    dtype = r.choice(DTYPES)
    ndim = r.randint(1, 3)
    shape = tuple(r.randint(1, 24 if ndim > 1 else 200) for _ in range(ndim))
    chunks = tuple(r.randint(1, s) for s in shape)
    fill_value = fill(r, dtype)
    z = zarr.create(
        shape,
        store=store,
        chunks=chunks,
        dtype=dtype,
        compressor=compressor(r),
        order=r.choice(["C", "F"]),
        fill_value=fill_value,
        # asdf-zarr 0.0.4 lists a store's top level for its chunks: with `/` it finds
        # folders, not chunks, and cannot write the file.
        dimension_separator="/" if isinstance(store, zarr.NestedDirectoryStore) else ".",
        write_empty_chunks=False,
    )
    v = values(r, dtype, shape)
    # With a null fill value, zarr-python leaves unwritten chunks uninitialised (any bytes):
    # every chunk is written then.
    if fill_value is not None and r.random() < 0.4:
        # Only a region is written: the chunks it misses stay unwritten.
        region = tuple(slice(0, r.randint(1, s)) for s in shape)
        z[region] = v[region]
    else:
        z[...] = v
    return z


def random_region(r, shape):
    """A region in numpy's basic slicing, as text and as the index numpy takes."""
    text, index = [], []
    for n in shape:
        k = r.random()
        if k < 0.15:
            i = r.randrange(-n, n)
            text.append(str(i))
            index.append(i)
            continue
        start = r.choice([None, r.randint(-n - 2, n + 2)])
        stop = r.choice([None, r.randint(-n - 2, n + 2)])
        step = r.choice([None, None, 1, 2, 3, -1, -2])
        f = lambda v: "" if v is None else str(v)  # noqa: E731
        text.append(f"{f(start)}:{f(stop)}" + ("" if step is None else f":{step}"))
        index.append(slice(start, stop, step))
    # Sometimes trailing axes left out, or an ellipsis in front of the last.
    if len(shape) > 1 and r.random() < 0.2:
        text, index = text[:-1], index[:-1]
    elif len(shape) > 1 and r.random() < 0.2:
        text, index = ["..."] + text[1:], [Ellipsis] + index[1:]
    return ", ".join(text), tuple(index)


def as_json(a):
    out = []
    for x in a.ravel(order="C").tolist():
        if isinstance(x, complex):
            out.append([x.real, x.imag])
        elif isinstance(x, float) and math.isnan(x):
            out.append(None)
        else:
            out.append(x)
    return out


def main():
    out, n, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    r = random.Random(seed)
    written = 0
    for i in range(n):
        name = f"z{i:05d}"
        path = os.path.join(out, name + ".asdf")
        try:
            n_shape = tuple(r.randint(1, 30) for _ in range(r.randint(1, 3)))
            nd = values(r, r.choice(DTYPES), n_shape)
            if r.random() < 0.5:
                nd = np.asfortranarray(nd)
            # /w sometimes in a directory store beside the file (asdf-zarr's external storage:
            # the tree holds the store's path, the metadata and chunks are files of it).
            k = r.random()
            store = None
            if k < 0.2:
                store = zarr.DirectoryStore(os.path.join(out, name + ".zarr"))
            elif k < 0.3:
                store = zarr.NestedDirectoryStore(os.path.join(out, name + ".nested.zarr"))
            tree = {"z": random_zarr(r), "w": random_zarr(r, store), "n": nd}
            af = asdf.AsdfFile(tree)
            af.set_array_compression(nd, r.choice([None, "zlib", "bzp2", "lz4"]))
            af.write_to(path)
            expected = {}
            with asdf.open(path, lazy_load=False) as af:
                for key in ("z", "w", "n"):
                    a = af[key]
                    data = np.asarray(a[...])
                    regions = []
                    for _ in range(3):
                        text, index = random_region(r, data.shape)
                        # numpy's slicing of what Python read (zarr-python 2 refuses negative steps).
                        part = data[index]
                        regions.append({"region": text, "shape": list(part.shape), "values": as_json(part)})
                    e = {"shape": list(data.shape), "dtype": data.dtype.str, "values": as_json(data), "regions": regions}
                    if key == "w" and store is not None:
                        e["store"] = type(store).__name__
                    if key != "n":
                        e["chunks"] = list(a.chunks)
                        e["compressor"] = a.compressor.get_config()["id"] if a.compressor is not None else None
                    expected["/" + key] = e
            with open(os.path.join(out, name + ".json"), "w") as f:
                json.dump(expected, f)
            written += 1
        except Exception as e:  # noqa: BLE001 - reported, and the test counts the files
            print(f"{name}: {e!r}", file=sys.stderr)
    print(written)


if __name__ == "__main__":
    main()
