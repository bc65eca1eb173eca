"""The cutout benchmark's Python side (see xtask/src/cutout.rs): one workload per process,
printing one JSON line {"secs", "rss_kib", "check", "bytes"}: the seconds from open to the
cutout in memory (imports done before), the peak RSS, the cutout's sum, and the bytes this
process read from files (rchar of /proc/self/io; over HTTP the harness counts what the server
sent instead).

  cutout.py make DIR               the test data (once): a 16384 x 16384 float32 image as
                                   DIR/zarr.asdf (asdf-zarr, 256 x 256 zstd chunks, written by
                                   Python asdf 6.0 + asdf-zarr 0.0.4), DIR/store.zarr (the same
                                   chunks in a zarr-python DirectoryStore), DIR/raw.asdf (one
                                   uncompressed block), DIR/zstd.asdf (one zstd block)
  cutout.py asdf PATH|URL Y X      Python asdf (+ asdf-zarr): af["image"][Y:Y+512, X:X+512]
  cutout.py zarr PATH|URL Y X      zarr-python on the store: z[Y:Y+512, X:X+512]
"""
import json
import sys
import time

import numpy as np

N, CHUNK, CUT = 16384, 256, 512


def rchar():
    for line in open("/proc/self/io"):
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


def peak_rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def image_rows(a, b):
    i = np.arange(a, b, dtype=np.float32)[:, None]
    j = np.arange(N, dtype=np.float32)[None, :]
    return (np.sin(i * 0.01) * np.cos(j * 0.013) * 1000 + (i + j) % 17).astype("<f4")


def make(out):
    import os
    import shutil

    import asdf
    import numcodecs
    import zarr

    os.makedirs(out, exist_ok=True)
    image = np.empty((N, N), dtype="<f4")
    for a in range(0, N, 1024):
        image[a : a + 1024] = image_rows(a, a + 1024)
    comp = numcodecs.Zstd(level=3)
    z = zarr.create((N, N), chunks=(CHUNK, CHUNK), dtype="<f4", compressor=comp, fill_value=0)
    z[...] = image
    asdf.AsdfFile({"image": z}).write_to(os.path.join(out, "zarr.asdf"))
    shutil.rmtree(os.path.join(out, "store.zarr"), ignore_errors=True)
    store = zarr.DirectoryStore(os.path.join(out, "store.zarr"))
    d = zarr.create((N, N), chunks=(CHUNK, CHUNK), dtype="<f4", compressor=comp, fill_value=0, store=store)
    d[...] = image
    asdf.AsdfFile({"image": image}).write_to(os.path.join(out, "raw.asdf"))
    af = asdf.AsdfFile({"image": image})
    af.set_array_compression(image, "zstd")
    af.write_to(os.path.join(out, "zstd.asdf"))
    print(json.dumps({"check": float(image[1000:1512, 7000:7512].astype(np.float64).sum())}))


def main():
    mode = sys.argv[1]
    if mode == "make":
        return make(sys.argv[2])
    target, y, x = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    import asdf
    import zarr

    if mode == "asdf":
        import asdf_zarr  # noqa: F401

        before, t = rchar(), time.perf_counter()
        with asdf.open(target, lazy_load=True) as af:
            cut = np.asarray(af["image"][y : y + CUT, x : x + CUT])
    elif mode == "zarr":
        before, t = rchar(), time.perf_counter()
        if target.startswith("http"):
            store = zarr.storage.FSStore(target)
        else:
            store = zarr.DirectoryStore(target)
        cut = zarr.open_array(store, mode="r")[y : y + CUT, x : x + CUT]
    else:
        raise SystemExit(f"unknown mode {mode}")
    secs = time.perf_counter() - t
    read = rchar() - before
    print(json.dumps({"secs": secs, "rss_kib": peak_rss_kib(), "check": float(cut.astype(np.float64).sum()), "bytes": read}))


if __name__ == "__main__":
    main()
