"""moto's S3 server on loopback for the object-storage tests: a free port on 127.0.0.1,
a bucket `data`; prints `PORT <n>` when it answers, then serves until its standard input
closes (the test that started it ends)."""
import socket
import sys
import time
import urllib.request

import boto3
from moto.server import ThreadedMotoServer


def main():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(200):
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
    for bucket in sys.argv[1:] or ["data"]:
        client.create_bucket(Bucket=bucket)
    print(f"PORT {port}", flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
