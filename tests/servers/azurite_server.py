"""Azurite (Microsoft's Azure Storage emulator, installed from npm into tests/servers/azurite)
on loopback for the az:// object-storage tests, driven by Azure's own Python client.

usage:
  azurite_server.py serve AZURITE_BLOB   start it on a free port of 127.0.0.1 (in memory), make
                                         the container `data`, print `PORT <n>`, serve until
                                         standard input closes
  azurite_server.py get PORT BLOB OUT    write blob `data/BLOB` to OUT; print `missing` when
                                         there is no such (committed) blob
  azurite_server.py uncommitted PORT BLOB   print how many uncommitted blocks BLOB has
  azurite_server.py put PORT BLOB IN     replace blob `data/BLOB` with the bytes of IN
"""
import socket
import subprocess
import sys
import tempfile
import time

from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import BlobServiceClient

ACCOUNT = "devstoreaccount1"
# Azurite's development account key: public, the same in every installation (Azure's docs).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def service(port):
    return BlobServiceClient.from_connection_string(
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
        f"BlobEndpoint=http://127.0.0.1:{port}/{ACCOUNT};"
    )


def serve(azurite):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Its debug log and extent files in a folder that goes with it (nothing is persisted).
    with tempfile.TemporaryDirectory() as where:
        proc = subprocess.Popen(
            [azurite, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
             "--skipApiVersionCheck", "--silent"],
            cwd=where, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(f"{where}/stderr", "wb"),
        )
        try:
            t0 = time.monotonic()
            while True:
                try:
                    service(port).create_container("data")
                    break
                except Exception:  # noqa: BLE001 - until it answers
                    if proc.poll() is not None or time.monotonic() - t0 > 60:
                        why = open(f"{where}/stderr", "rb").read().decode(errors="replace") if proc.poll() is not None else "no answer in 60 s"
                        print(f"FAILED azurite: {why!r}", flush=True)
                        return
                    time.sleep(0.1)
            print(f"PORT {port}", flush=True)
            sys.stdin.read()
        finally:
            # In memory: nothing to save, no need to wait for its graceful close.
            proc.kill()
            proc.wait()


def main():
    cmd = sys.argv[1]
    if cmd == "serve":
        serve(sys.argv[2])
        return
    port, blob = int(sys.argv[2]), sys.argv[3]
    client = service(port).get_blob_client("data", blob)
    if cmd == "get":
        try:
            data = client.download_blob().readall()
        except ResourceNotFoundError:
            print("missing")
            return
        with open(sys.argv[4], "wb") as f:
            f.write(data)
        print(len(data))
    elif cmd == "uncommitted":
        try:
            _, uncommitted = client.get_block_list("uncommitted")
        except ResourceNotFoundError:
            uncommitted = []
        print(len(uncommitted))
    elif cmd == "put":
        with open(sys.argv[4], "rb") as f:
            client.upload_blob(f.read(), overwrite=True)
        print("put")
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
