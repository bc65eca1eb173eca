"""Writes to object storage and datasets of many files, on moto's S3 server on loopback:
files written by asdf_rs read back by Python asdf 6 through s3fs; a write over an object
changed since it was read refused; an upload interrupted by Ctrl-C (KeyboardInterrupt) or
killed (SIGKILL: its guard process aborts it) leaves no object and no parts; 1,000 small files written, stacked and summed on a
dask.distributed LocalCluster, and verified by `asdf-cli verify s3://bucket/prefix/`."""
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import asdf
import asdf_rs


def s3fs_of(opts):
    import s3fs

    return s3fs.S3FileSystem(
        key=opts["key"], secret=opts["secret"], client_kwargs={"endpoint_url": opts["endpoint_url"], "region_name": "us-east-1"}
    )


def test_python_writes_read_back_by_python_asdf_and_s3fs(s3):
    client, opts = s3
    rng = np.random.default_rng(11)
    tree = {
        "sci": {"data": rng.standard_normal((700, 900)).astype(">f4"), "dq": rng.integers(0, 2**16, (700, 900), dtype="<u2")},
        "wave": np.linspace(1.0, 5.0, 4001),
        "meta": {"telescope": "JWST", "exposure": {"start": 60000.25, "groups": 7}},
    }
    fs = s3fs_of(opts)
    for key, compression in [("py/raw.asdf", None), ("py/zlib.asdf", "zlib")]:
        asdf_rs.write(f"s3://data/{key}", tree, compression=compression, storage_options=opts)
        with fs.open(f"data/{key}", "rb") as remote, asdf.open(remote, lazy_load=False, memmap=False) as a:
            for name in ("data", "dq"):
                got = np.asarray(a.tree["sci"][name])
                assert got.dtype == tree["sci"][name].dtype
                np.testing.assert_array_equal(got, tree["sci"][name])
            np.testing.assert_array_equal(a.tree["wave"], tree["wave"])
            assert a.tree["meta"] == tree["meta"]
    assert client.list_multipart_uploads(Bucket="data").get("Uploads") is None


def test_a_write_over_a_changed_object_is_refused(s3):
    client, opts = s3
    url = "s3://data/py/etag.asdf"
    asdf_rs.write(url, {"x": np.arange(10)}, storage_options=opts)
    with asdf_rs.open(url, storage_options=opts) as f:
        etag = f.etag
        assert etag
    other = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n--- {y: 2}\n...\n"
    client.put_object(Bucket="data", Key="py/etag.asdf", Body=other)
    with pytest.raises(asdf_rs.AsdfError, match="changed since it was read"):
        asdf_rs.write(url, {"x": np.arange(11)}, storage_options=opts, etag=etag)
    assert client.get_object(Bucket="data", Key="py/etag.asdf")["Body"].read() == other
    # The ETag of what is there now: written.
    asdf_rs.write(url, {"x": np.arange(12)}, storage_options=opts, etag=client.head_object(Bucket="data", Key="py/etag.asdf")["ETag"])
    with asdf_rs.open(url, storage_options=opts) as f:
        np.testing.assert_array_equal(f["/x"], np.arange(12))


WRITER = """
import json, signal, sys
import numpy as np
import asdf_rs
# Ctrl-C's handler, as in an interactive session (a process started in the background by a
# non-interactive shell inherits SIGINT ignored, and Python then installs none).
signal.signal(signal.SIGINT, signal.default_int_handler)
data = np.random.default_rng(5).standard_normal(192 * 2**20 // 8)
try:
    asdf_rs.write(sys.argv[1], {"x": data}, storage_options=json.loads(sys.argv[2]))
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(3)
print("written", flush=True)
"""


def interrupted_write(client, opts, key, sig):
    """A Python process writing 192 MiB to s3://data/KEY, sent `sig` once its upload began."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, f"s3://data/{key}", json.dumps(opts)], stdout=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while not client.list_multipart_uploads(Bucket="data").get("Uploads"):
        assert proc.poll() is None, "the write ended before it was interrupted"
        assert time.monotonic() - t0 < 120, "no upload began"
        time.sleep(0.01)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=120)
    return proc.returncode, out


def uploads_left(client, wait=60.0):
    t0 = time.monotonic()
    while True:
        n = len(client.list_multipart_uploads(Bucket="data").get("Uploads") or [])
        if n == 0 or time.monotonic() - t0 > wait:
            return n
        time.sleep(0.05)


def test_an_interrupted_or_killed_python_write_leaves_no_object_and_no_parts(s3):
    client, opts = s3
    code, out = interrupted_write(client, opts, "py/ctrl-c.asdf", signal.SIGINT)
    assert (code, out.strip()) == (3, "KeyboardInterrupt"), (code, out)
    assert uploads_left(client, wait=0) == 0, "Ctrl-C: the upload was aborted before the exception"
    code, out = interrupted_write(client, opts, "py/killed.asdf", signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert uploads_left(client) == 0, "SIGKILL: the upload guard aborted the upload"
    for key in ("py/ctrl-c.asdf", "py/killed.asdf"):
        assert "Contents" not in client.list_objects_v2(Bucket="data", Prefix=key), key


N_FILES = 1000


def exposure(i):
    return np.random.default_rng(1000 + i).standard_normal((32, 48)).astype("<f4")


def test_a_thousand_files_stacked_on_a_local_cluster_and_verified(s3, tmp_path, monkeypatch):
    import dask
    from dask.distributed import Client, LocalCluster

    client, opts = s3
    urls = [f"s3://data/run42/exp{i:04d}.asdf" for i in range(N_FILES)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: asdf_rs.write(urls[i], {"sci": {"data": exposure(i)}, "index": i}, storage_options=opts), range(N_FILES)))
    t_write = time.perf_counter() - t0
    listed = asdf_rs.list_files("s3://data/run42/", storage_options=opts)
    assert listed == urls

    log = tmp_path / "ranges.log"
    monkeypatch.setenv("ASDF_RS_RANGE_LOG", str(log))
    stacked = asdf_rs.stack(listed, "/sci/data", storage_options=opts)
    assert stacked.shape == (N_FILES, 32, 48) and stacked.dtype == np.float32
    want = np.stack([exposure(i) for i in range(N_FILES)])
    log.write_text("")
    with LocalCluster(n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None) as cluster, Client(cluster):
        with dask.config.set(scheduler=None):
            t0 = time.perf_counter()
            total, mean_image = dask.compute(stacked.sum(dtype=np.float64), stacked.mean(axis=0, dtype=np.float64))
            t_sum = time.perf_counter() - t0
    np.testing.assert_allclose(total, want.sum(dtype=np.float64), rtol=1e-9)
    np.testing.assert_allclose(mean_image, want.mean(axis=0, dtype=np.float64), rtol=1e-9)
    requests = [line.split()[0] for line in log.read_text().splitlines()]
    per_file = len(requests) / N_FILES
    assert set(requests) == set(urls), "every file read, no other"
    print(
        f"\n1,000 files on S3: written in {t_write:.1f} s (8 threads); stacked sum and mean image on a "
        f"LocalCluster (2 processes x 4 threads) in {t_sum:.1f} s; {len(requests)} requests, {per_file:.2f} per file"
    )
    # Each task opens its file with one request (the head read holds a small file whole).
    assert per_file <= 1.0 + 1e-9, per_file

    cli = os.environ.get("ASDF_CLI")
    if not cli or not Path(cli).exists():
        if os.environ.get("ASDF_REQUIRE_CONFORMANCE"):
            pytest.fail("asdf-cli is not built (ASDF_CLI): the prefix verification must run in CI")
        print("NOT RUN: asdf-cli verify over the prefix (ASDF_CLI not set; build asdf-cli)")
        return
    env = dict(
        os.environ,
        AWS_ENDPOINT_URL=opts["endpoint_url"],
        AWS_ACCESS_KEY_ID=opts["key"],
        AWS_SECRET_ACCESS_KEY=opts["secret"],
        AWS_REGION="us-east-1",
    )
    env.pop("ASDF_RS_RANGE_LOG", None)
    t0 = time.perf_counter()
    out = subprocess.run([cli, "verify", "s3://data/run42/"], capture_output=True, text=True, env=env, timeout=600)
    t_verify = time.perf_counter() - t0
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    summary = out.stdout.strip().splitlines()[-1]
    print(f"asdf-cli verify s3://data/run42/ in {t_verify:.1f} s: {summary}")
    assert summary.startswith(f"{N_FILES} files: {N_FILES} verified, 0 failed"), summary
    # A damaged file among them is named and fails the run.
    bad = bytearray(client.get_object(Bucket="data", Key="run42/exp0500.asdf")["Body"].read())
    bad[-200] ^= 0xFF
    client.put_object(Bucket="data", Key="run42/exp0500.asdf", Body=bytes(bad))
    out = subprocess.run([cli, "verify", "s3://data/run42/"], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 1
    assert "FAIL  s3://data/run42/exp0500.asdf" in out.stdout
    assert f"{N_FILES} files: {N_FILES - 1} verified, 1 failed" in out.stdout
