"""One run of `cargo xtask bench-wcs` in this process: a 4096 x 4096 grid of pixel -> world
through the WCS of FILE, by gwcs (`gwcs`) or by asdf_rs's binding (`asdf_rs`); prints one JSON
line with the seconds of the evaluation (the grid made and the WCS read before the clock
starts), the peak RSS (VmHWM, KiB) and a check value (the sum of the finite world values)."""
import json
import sys
import time

import numpy as np


def peak_rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


mode, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "gwcs":
    import asdf

    af = asdf.open(path)
    w = af["wcs"]
else:
    import asdf_rs

    w = asdf_rs.open(path).wcs("/wcs")
y, x = np.mgrid[0:n, 0:n].astype(np.float64)
t = time.perf_counter()
ra, dec = w(x, y)
secs = time.perf_counter() - t
check = float(np.nansum(ra) + np.nansum(dec))
print(json.dumps({"secs": secs, "rss_kib": peak_rss_kib(), "check": check, "bytes": 0}))
