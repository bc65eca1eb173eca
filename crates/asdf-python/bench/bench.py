"""asdf_rs against Python asdf 6.0, from Python, in one run: the programs take turns, medians
of N rounds. Run: target/pyenv/bin/python crates/asdf-python/bench/bench.py [N]
(after `maturin develop --profile pyext -m crates/asdf-python/Cargo.toml`)."""
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import asdf
import asdf_rs

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
REPO = Path(__file__).resolve().parents[3]
asdf.get_config().extensions  # Python asdf's extensions loaded before any clock


def timed(fn):
    gc.collect()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def compare(name, ours, theirs):
    a, b = [], []
    for _ in range(ROUNDS):
        a.append(timed(ours))
        b.append(timed(theirs))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {name} | {ma:.2e} | {mb:.2e} | {mb / ma:.1f}x |", flush=True)


def main():
    d = Path(tempfile.mkdtemp(prefix="asdf-rs-bench-"))
    raw = d / "raw.asdf"
    zl = d / "zlib.asdf"
    tree = d / "tree.asdf"
    data = np.random.default_rng(1).standard_normal(8 << 20)  # 64 MiB
    asdf.AsdfFile({"data": data}).write_to(raw)
    af = asdf.AsdfFile({"data": data})
    af.set_array_compression(af.tree["data"], "zlib")
    af.write_to(zl)
    asdf.AsdfFile({"items": [{"id": i, "name": f"n{i}", "x": i * 0.5} for i in range(20_000)]}).write_to(tree)

    print("| workload (64 MiB float64; tree: 20,000 mappings) | asdf_rs (s) | Python asdf (s) | speed-up |")
    print("|---|---|---|---|")

    def o_open():
        with asdf_rs.open(raw) as f:
            f.tree["data"]

    def p_open():
        with asdf.open(raw) as f:
            f.tree["data"]

    compare("open (validating)", o_open, p_open)

    def sums(path):
        """Open `path` and sum its /data: asdf_rs's reader, then Python asdf's."""

        def o():
            with asdf_rs.open(path) as f:
                float(f["/data"].sum())

        def p():
            with asdf.open(path) as f:
                float(f.tree["data"].sum())

        return o, p

    compare("open + sum", *sums(raw))

    def o_el():
        with asdf_rs.open(raw) as f:
            f.element("/data", (4_000_000,))

    def p_el():
        with asdf.open(raw) as f:
            f.tree["data"][4_000_000]

    compare("open + one element", o_el, p_el)

    def o_tree():
        with asdf_rs.open(tree) as f:
            f.tree["items"][19_999]["name"]

    def p_tree():
        with asdf.open(tree) as f:
            f.tree["items"][19_999]["name"]

    compare("tree open + touch", o_tree, p_tree)

    # The whole tree as plain Python: one native call (to_dict) against one call per node (how
    # to_dict went before), and against Python asdf's tree made plain.
    f_tree = asdf_rs.open(tree)

    def per_node(v):
        if isinstance(v, asdf_rs.TreeMapping):
            return {k: per_node(x) for k, x in v.items()}
        if isinstance(v, asdf_rs.TreeSequence):
            return [per_node(x) for x in v]
        return v

    assert f_tree.tree.to_dict() == per_node(f_tree.tree)
    compare("to_dict of the open tree: one native call (ours) vs one call per node (as before, in the Python asdf column)",
            lambda: f_tree.tree.to_dict(), lambda: per_node(f_tree.tree))

    # Objects through Python asdf's converters: a DKIST tiled dataset and a gwcs, a fresh open
    # each, to_objects() against asdf.open(...).tree.
    import os
    import warnings

    warnings.simplefilter("ignore")
    site = os.path.dirname(os.path.dirname(asdf.__file__))
    # A JWST ImageModel of 2048 x 2048 (data, err, dq; zlib), as stdatamodels saves it.
    from stdatamodels.jwst import datamodels

    jwst = d / "jwst.asdf"
    m = datamodels.ImageModel((2048, 2048))
    m.data[...] = np.random.default_rng(2).random((2048, 2048), dtype=np.float32)
    m.err = np.full((2048, 2048), 0.5, dtype=np.float32)
    m.meta.instrument.name = "NIRCAM"
    m.save(jwst, all_array_compression="zlib")
    for name, rel in [("DKIST tiled dataset", "dkist/data/test/test_tiled_dataset-1.3.0_dataset-1.2.0.asdf"),
                      ("gwcs NIRCam WCS", "gwcs/tests/data/nircamwcs.asdf"),
                      ("JWST ImageModel 2048x2048 zlib (arrays left lazy)", str(jwst))]:
        path = os.path.join(site, rel)
        if not os.path.exists(path):
            print(f"| {name}: not installed | - | - | - |")
            continue

        def o_obj(path=path):
            with asdf_rs.open(path, objects=True) as f:
                f.to_objects()

        def p_obj(path=path):
            with asdf.open(path) as af:
                af.tree

        o_obj(), p_obj()
        compare(f"objects: {name}, open(objects=True).to_objects() vs asdf.open().tree", o_obj, p_obj)

    compare("zlib read + sum", *sums(zl))

    # Two Python threads decoding two zlib blocks against one thread decoding both: the GIL is
    # released while a block decodes, so two threads on two cores take about half the time.
    import threading

    zl2 = d / "zlib2.asdf"
    af = asdf.AsdfFile({"a": data, "b": data[::-1].copy()})
    af.set_array_compression(af.tree["a"], "zlib")
    af.set_array_compression(af.tree["b"], "zlib")
    af.write_to(zl2)
    f2 = asdf_rs.open(zl2)

    def one_thread():
        f2["/a"]
        f2["/b"]

    def two_threads():
        ts = [threading.Thread(target=lambda p=p: f2[p]) for p in ("/a", "/b")]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    one, two = [], []
    for _ in range(ROUNDS):
        one.append(timed(one_thread))
        two.append(timed(two_threads))
    m1, m2 = statistics.median(one), statistics.median(two)
    print(f"| two zlib blocks: 1 thread {m1:.2e} s, 2 threads {m2:.2e} s | - | - | {m1 / m2:.2f}x from the 2nd thread |", flush=True)

    # Remote: a 1 GiB file (sparse here) over the range-counting HTTP server.
    sys.path.insert(0, str(REPO / "crates/asdf-python/tests"))
    from test_remote import sparse_gib  # noqa: E402
    import json
    import urllib.request

    sparse_gib(d / "gib.asdf", {123_456_789: 42.0})
    srv = subprocess.Popen([sys.executable, str(REPO / "tests/servers/range_server.py"), str(d)], stdout=subprocess.PIPE, text=True)
    port = srv.stdout.readline().split()[1]
    url = f"http://127.0.0.1:{port}/gib.asdf"
    times = []
    for _ in range(ROUNDS):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/__reset__").read()
        t = time.perf_counter()
        with asdf_rs.open(url) as f:
            f.element("/data", (123_456_789,))
        times.append(time.perf_counter() - t)
    s = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/__stats__"))
    print(f"| remote 1 GiB (HTTP, loopback): open + one element | {statistics.median(times):.2e} | - | {s['requests']} requests, {s['bytes']} bytes |")
    srv.terminate()


if __name__ == "__main__":
    main()
