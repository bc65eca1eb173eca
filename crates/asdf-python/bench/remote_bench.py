"""Reading 256 MiB from loopback S3 servers, in one run, the readers taking turns:
asdf_rs, Python asdf 6 through s3fs, and zarr-python 3 through obstore on the same values
stored as a Zarr store (same chunks, same codec). Two arrays: raw float64 (one block), and the
same values zstd-compressed in chunks of 16 MiB (asdf-zarr's layout in the ASDF file; a Zarr v3
store for zarr-python). Each reading runs in a fresh process and times its open and read (not
its imports); the check value (the array's sum) must agree.

Two servers, the same bytes on each: moto's (the tests' S3; it reads a whole object for every
ranged GET, so a ranged read of one large object pays for the object each time, where a Zarr
store of small objects does not) and s3rver (an S3 server for Node, from npm, that serves a
range from the file's bytes, as S3 does).

Run: target/pyenv/bin/python crates/asdf-python/bench/remote_bench.py [ROUNDS]
(after `maturin develop --profile pyext`; zarr-python 3 and obstore are in a venv of their
own, target/benchenv, since asdf-zarr needs zarr 2, and s3rver in target/benchenv/node: both
made on first use; without node, moto only)."""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PY = REPO / "target/pyenv/bin/python"
ZPY = REPO / "target/benchenv/bin/python"
SHAPE = (4096, 8192)  # float64: 256 MiB
CHUNKS = (256, 8192)  # 16 MiB
BUCKET = "bench"
CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
NODE_DIR = REPO / "target/benchenv/node"
S3RVER = "s3rver@3.7.1"


def values():
    import numpy as np

    rng = np.random.default_rng(5)
    base = (np.arange(SHAPE[0] * SHAPE[1]) % 4099).astype("f8") * 0.25
    return (base + rng.integers(0, 8, base.size)).reshape(SHAPE)


def child(mode, target, endpoint, extra):
    """One reading, in this process: prints {"secs", "check"}."""
    import numpy as np

    key, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
    opts = {"endpoint_url": endpoint, "key": key, "secret": secret, "region": "us-east-1"}
    if mode == "asdf_rs":
        import asdf_rs

        if extra == "park":
            opts["park"] = "true"
        elif extra:
            opts["concurrency"] = extra
        t = time.perf_counter()
        with asdf_rs.open(target, storage_options=opts, validate=False) as f:
            a = np.asarray(f["/data"])
        secs = time.perf_counter() - t
    elif mode == "asdf":
        import asdf
        import s3fs

        fs = s3fs.S3FileSystem(key=key, secret=secret, client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"})
        t = time.perf_counter()
        with fs.open(target, "rb") as r, asdf.open(r, lazy_load=False, memmap=False) as af:
            a = np.asarray(af.tree["data"][...])
        secs = time.perf_counter() - t
    elif mode == "zarr3":
        import obstore.store
        import zarr
        import zarr.storage

        bucket, prefix = target[len("s3://") :].split("/", 1)
        t = time.perf_counter()
        s3 = obstore.store.S3Store(
            bucket, prefix=prefix, endpoint=endpoint, region="us-east-1", access_key_id=key, secret_access_key=secret, client_options={"allow_http": True}
        )
        z = zarr.open_array(zarr.storage.ObjectStore(s3, read_only=True), mode="r")
        a = z[...]
        secs = time.perf_counter() - t
    elif mode == "make-zarr":
        import obstore.store
        import zarr
        import zarr.storage
        from zarr.codecs import ZstdCodec

        bucket, prefix = target[len("s3://") :].split("/", 1)
        s3 = obstore.store.S3Store(
            bucket, prefix=prefix, endpoint=endpoint, region="us-east-1", access_key_id=key, secret_access_key=secret, client_options={"allow_http": True}
        )
        z = zarr.create_array(
            zarr.storage.ObjectStore(s3),
            shape=SHAPE,
            chunks=CHUNKS,
            dtype="f8",
            compressors=[ZstdCodec(level=3)] if extra == "zstd" else None,
        )
        z[...] = values()
        a = z[...]
        secs = 0.0
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(json.dumps({"secs": secs, "check": float(a.sum()), "shape": list(a.shape)}))


def run(py, *args, creds=CREDS):
    out = subprocess.run([str(py), __file__, "--child", *map(str, args)], capture_output=True, text=True, env=dict(os.environ, **creds))
    if out.returncode != 0:
        raise SystemExit(f"{args}: {out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto():
    import logging

    from moto.server import ThreadedMotoServer

    # Not a line per request on the bench's output.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    time.sleep(1)
    return f"http://127.0.0.1:{port}", CREDS, server.stop


def start_s3rver():
    """s3rver on loopback (installed from npm on first use), or None without node/npm."""
    exe = NODE_DIR / "node_modules/.bin/s3rver"
    if not exe.exists():
        if subprocess.run(["npm", "--version"], capture_output=True).returncode != 0:
            print("NOT RUN on s3rver: no npm here")
            return None
        subprocess.run(["npm", "install", "-s", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR), S3RVER], check=True)
    port = free_port()
    d = tempfile.mkdtemp(prefix="asdf-rs-s3rver-")
    proc = subprocess.Popen(
        [str(exe), "-d", d, "-a", "127.0.0.1", "-p", str(port), "-s", "--no-vhost-buckets", "--configure-bucket", BUCKET],
        stdout=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.05)
    creds = dict(CREDS, AWS_ACCESS_KEY_ID="S3RVER", AWS_SECRET_ACCESS_KEY="S3RVER")
    return endpoint, creds, proc.terminate


def bench_on(server_name, endpoint, creds, files, data, rounds):
    import boto3

    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=creds["AWS_ACCESS_KEY_ID"], aws_secret_access_key=creds["AWS_SECRET_ACCESS_KEY"]
    )
    if server_name == "moto":
        client.create_bucket(Bucket=BUCKET)
    for f in files:
        client.upload_file(str(f), BUCKET, f.name)
    run(ZPY, "make-zarr", f"s3://{BUCKET}/raw.zarr", endpoint, "none", creds=creds)
    run(ZPY, "make-zarr", f"s3://{BUCKET}/zstd.zarr", endpoint, "zstd", creds=creds)
    want = float(data.sum())
    mib = data.nbytes / 2**20
    readers = [
        ("asdf_rs (default: 8 requests at once)", PY, "asdf_rs", ""),
        ("asdf_rs (concurrency=1)", PY, "asdf_rs", "1"),
        ("asdf_rs (park=true)", PY, "asdf_rs", "park"),
        ("Python asdf 6 + s3fs", PY, "asdf", ""),
        ("zarr-python 3 + obstore (Zarr store)", ZPY, "zarr3", ""),
    ]
    print(f"| {mib:.0f} MiB float64 from {server_name} on loopback | " + " | ".join(r[0] for r in readers) + " |")
    print("|---|" + "---|" * len(readers))
    for kind in ("raw", "zstd"):
        times = {r[0]: [] for r in readers}
        for _ in range(rounds):
            for name, py, mode, extra in readers:
                target = f"s3://{BUCKET}/{kind}.zarr" if mode == "zarr3" else f"s3://{BUCKET}/{kind}.asdf"
                r = run(py, mode, target, endpoint, extra, creds=creds)
                assert abs(r["check"] - want) <= 1e-9 * abs(want), (name, r, want)
                times[name].append(r["secs"])
        med = {k: statistics.median(v) for k, v in times.items()}
        base = med["Python asdf 6 + s3fs"]
        zarr = med["zarr-python 3 + obstore (Zarr store)"]
        cells = [f"{med[r[0]]:.2f} s ({mib / med[r[0]]:.0f} MiB/s, {base / med[r[0]]:.1f}x asdf, {zarr / med[r[0]]:.2f}x zarr)" for r in readers]
        label = "raw (one block)" if kind == "raw" else "zstd, chunks of 16 MiB"
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    if not ZPY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(REPO / "target/benchenv")], check=True)
        subprocess.run([str(ZPY), "-m", "pip", "install", "-q", "zarr==3.1.6", "obstore==0.12.1", "numpy"], check=True)
    import asdf
    import asdf_rs

    d = Path(tempfile.mkdtemp(prefix="asdf-rs-remote-bench-"))
    data = values()
    asdf.AsdfFile({"data": data}).write_to(d / "raw.asdf")
    asdf_rs.write(d / "zstd.asdf", {"data": data}, compression="zstd", chunks=CHUNKS)
    files = [d / "raw.asdf", d / "zstd.asdf"]
    for name, start in (("moto's S3", start_moto), ("s3rver", start_s3rver)):
        started = start()
        if started is None:
            continue
        endpoint, creds, stop = started
        try:
            bench_on("moto" if name.startswith("moto") else name, endpoint, creds, files, data, rounds)
        finally:
            stop()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else "")
    else:
        main()
