"""Random images and the display limits astropy computes for them, to check the preview's.

Usage: preview_limits.py OUT N SEED. Writes OUT/NAME.asdf with an array at /a (Python asdf
6.0) and OUT/NAME.json with the region drawn (numpy's basic slicing) and, over that region,
what astropy.visualization computes: `ZScaleInterval().get_limits`, `MinMaxInterval`,
`PercentileInterval(p)` for a random p, and `AsinhStretch()` / `LogStretch()` of a few levels.
Prints how many files were written.

Drawn at random: dtype (floats, integers, in both byte orders), 1 to 4 dimensions with a 2-D
region (a plane of a cube, a cutout), sizes above and below zscale's 1000 samples and strides
that do not divide them, NaN and infinities, bright outliers, constant images, and
compression.
"""

import json
import os
import random
import sys

import asdf
import numpy as np
from astropy.visualization import AsinhStretch, LogStretch, MinMaxInterval, PercentileInterval, ZScaleInterval

DTYPES = ["<f4", ">f4", "<f8", ">f8", "<i2", ">i2", "<u2", ">i4", "|u1"]


def image(r, rng, dtype):
    h, w = r.randint(2, 120), r.randint(2, 120)
    kind = r.choice(["noise", "noise", "stars", "ramp", "constant"])
    if kind == "constant":
        a = np.full((h, w), r.uniform(-5, 5))
    elif kind == "ramp":
        a = np.add.outer(np.arange(h) * r.uniform(0, 3), np.arange(w) * r.uniform(-2, 2))
    else:
        a = rng.normal(r.uniform(-100, 1000), r.uniform(0.1, 50), (h, w))
        if kind == "stars":
            for _ in range(r.randint(1, 30)):
                a[r.randrange(h), r.randrange(w)] += r.uniform(100, 1e5)
    if np.dtype(dtype).kind == "f":
        for _ in range(r.randint(0, 3)):
            a[r.randrange(h), r.randrange(w)] = r.choice([np.nan, np.inf, -np.inf])
    elif np.dtype(dtype).kind == "u":
        a = np.clip(a, 0, np.iinfo(dtype).max)
    else:
        a = np.clip(a, np.iinfo(dtype).min, np.iinfo(dtype).max)
    return a.astype(dtype)


def main():
    out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    r = random.Random(seed)
    rng = np.random.default_rng(seed)
    for i in range(n):
        dtype = r.choice(DTYPES)
        plane = image(r, rng, dtype)
        lead = [r.randint(1, 3) for _ in range(r.choice([0, 0, 1, 2]))]
        arr = np.broadcast_to(plane, tuple(lead) + plane.shape).copy()
        idx = [r.randrange(k) for k in lead]
        h, w = plane.shape
        y0, x0 = r.randrange(h // 2 + 1), r.randrange(w // 2 + 1)
        cut = r.random() < 0.3 and h > 3 and w > 3
        axes = [str(k) for k in idx] + ([f"{y0}:", f"{x0}:"] if cut else [":", ":"])
        region = ", ".join(axes)
        sel = plane[y0:, x0:] if cut else plane
        p = r.choice([90.0, 99.0, 99.5, 100.0])
        finite = sel[np.isfinite(sel)]
        zmin, zmax = ZScaleInterval().get_limits(sel)
        levels = [0.0, 0.01, 0.1, 0.5, 0.9, 1.0]
        rec = {
            "region": region,
            "zscale": [float(zmin), float(zmax)],
            "minmax": [float(v) for v in MinMaxInterval().get_limits(finite)],
            "percentile": p,
            "percentile_limits": [float(v) for v in PercentileInterval(p).get_limits(sel)],
            "levels": levels,
            "asinh": [float(v) for v in AsinhStretch()(np.array(levels))],
            "log": [float(v) for v in LogStretch()(np.array(levels))],
        }
        comp = r.choice([None, None, "zlib", "bzp2"])
        af = asdf.AsdfFile({"a": arr})
        if comp:
            af.set_array_compression(arr, comp)
        name = f"p{i:03d}"
        af.write_to(os.path.join(out, name + ".asdf"))
        with open(os.path.join(out, name + ".json"), "w") as fh:
            json.dump(rec, fh)
    print(n)


if __name__ == "__main__":
    main()
