"""Fixtures of the asdf_rs suite: the conformance data, and servers started here on loopback
(the range-counting HTTP server of tests/servers, and moto's S3 server)."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def conformance_dir():
    d = os.environ.get("ASDF_CONFORMANCE_DIR") or str(REPO.parent / "shared" / "conformance")
    return Path(d)


@pytest.fixture(scope="session")
def conformance():
    d = conformance_dir()
    if not d.is_dir():
        if os.environ.get("ASDF_REQUIRE_CONFORMANCE"):
            pytest.fail(f"conformance data missing at {d} (ASDF_REQUIRE_CONFORMANCE is set)")
        pytest.skip(f"NOT RUN: conformance data missing at {d}")
    return d


class RangeServer:
    def __init__(self, root):
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "servers" / "range_server.py"), str(root)],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline().split()
        assert line and line[0] == "PORT", f"range server did not start: {line}"
        self.url = f"http://127.0.0.1:{line[1]}"

    def stats(self):
        with urllib.request.urlopen(self.url + "/__stats__") as r:
            return json.load(r)

    def reset(self):
        urllib.request.urlopen(self.url + "/__reset__").read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """A folder served over HTTP, and the server (stats(), reset(), url)."""
    root = tmp_path_factory.mktemp("served")
    server = RangeServer(root)
    yield root, server
    server.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3():
    """moto's S3 server on loopback, a bucket `data`, and the storage options to reach it."""
    from moto.server import ThreadedMotoServer
    import boto3

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(endpoint, timeout=1)
            break
        except Exception as e:  # noqa: BLE001 - until it answers
            if hasattr(e, "code"):
                break
            time.sleep(0.05)
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket="data")
    opts = {"endpoint_url": endpoint, "key": "testing", "secret": "testing", "region": "us-east-1"}
    yield client, opts
    server.stop()
