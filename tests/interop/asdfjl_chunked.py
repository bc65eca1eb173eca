"""Random chunked ndarrays in the layout ASDF.jl reads and writes, made with Python asdf 6.0.

Usage: asdfjl_chunked.py OUT N SEED. Writes OUT/NAME.asdf with a chunked ndarray at /c and
OUT/NAME.json with its values as ASDF.jl assembles them (and three random regions), in the
format of zarr_random.py.

The layout (ASDF.jl's source, `ChunkedNDArray` and `NDArrayChunk`): a mapping tagged
`tag:stsci.edu:asdf/core/chunked-ndarray-1.0.0` with `shape`, `datatype` and `chunks`, a list
of mappings tagged `tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0` each with `start` (one index
per dimension, in the order of `shape`) and `ndarray` (an ordinary ndarray in a block). Chunks
are copied in list order, so a later one wins where they overlap; ASDF.jl leaves gaps
undefined, and these files read them as zeros (the choice written down in ARCHITECTURE).

Drawn at random: dtype and byte order of each chunk, 1 to 3 dimensions, a chunk grid that
does not divide the shape, sometimes an overlapping chunk appended or a chunk left out (a
gap), each chunk inline in the tree (as asdf-cxx writes them) or in a block compressed with
none, zlib, bzp2 or lz4.
"""

import json
import math
import os
import random
import sys

import asdf
import numpy as np
from asdf.tagged import TaggedDict

sys.path.insert(0, os.path.dirname(__file__))
from zarr_random import as_json, random_region  # noqa: E402

DTYPES = ["f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "c8", "c16"]
NAMES = {
    "f4": "float32", "f8": "float64", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "c8": "complex64", "c16": "complex128",
}


def main():
    out, n, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.makedirs(out, exist_ok=True)
    r = random.Random(seed)
    written = 0
    for i in range(n):
        name = f"j{i:05d}"
        code = r.choice(DTYPES)
        ndim = r.randint(1, 3)
        shape = tuple(r.randint(1, 12 if ndim > 1 else 60) for _ in range(ndim))
        step = tuple(r.randint(1, s) for s in shape)
        full = np.zeros(shape, dtype=code)
        tiles, arrays = [], []
        grid = [range(0, s, c) for s, c in zip(shape, step)]
        starts = [()]
        for g in grid:
            starts = [s + (x,) for s in starts for x in g]
        gap = len(starts) > 1 and r.random() < 0.3
        if gap:
            starts.pop(r.randrange(len(starts)))
        if r.random() < 0.3:
            # An overlapping chunk at the end: it wins where it lies.
            starts.append(tuple(r.randrange(s) for s in shape))
        for st in starts:
            tshape = tuple(min(c, s - x) for c, s, x in zip(step, shape, st))
            order = r.choice(["<", ">"])
            v = np.array([r.gauss(0, 500) for _ in range(math.prod(tshape))])
            if code.startswith("c"):
                v = v + 1j * np.array([r.gauss(0, 5) for _ in range(math.prod(tshape))])
            v = v.astype(order + code).reshape(tshape)
            idx = tuple(slice(x, x + t) for x, t in zip(st, tshape))
            full[idx] = v
            arrays.append(v)
            tiles.append(TaggedDict({"start": list(st), "ndarray": v}, "tag:stsci.edu:asdf/core/ndarray-chunk-1.0.0"))
        node = TaggedDict(
            {"shape": list(shape), "datatype": NAMES[code], "chunks": tiles},
            "tag:stsci.edu:asdf/core/chunked-ndarray-1.0.0",
        )
        af = asdf.AsdfFile({"c": node})
        for v in arrays:
            if r.random() < 0.25 and code not in ("i8", "u8"):
                # Inline in the tree, as asdf-cxx writes ASDF.jl's chunks (not 64-bit integers,
                # which Python asdf refuses to write as literals beyond 2^53).
                af.set_array_storage(v, "inline")
            else:
                af.set_array_compression(v, r.choice([None, "zlib", "bzp2", "lz4"]))
        af.write_to(os.path.join(out, name + ".asdf"))
        regions = []
        for _ in range(3):
            text, index = random_region(r, shape)
            part = full[index]
            regions.append({"region": text, "shape": list(part.shape), "values": as_json(part)})
        expected = {"/c": {"shape": list(shape), "dtype": full.dtype.str, "values": as_json(full), "regions": regions}}
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(expected, f)
        written += 1
    print(written)


if __name__ == "__main__":
    main()
