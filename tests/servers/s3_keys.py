"""boto3 beside the object-store tests: what AWS's own client lists, writes and reads, on the
S3 server at ENDPOINT (moto on loopback, credentials `testing`).

    python s3_keys.py ENDPOINT list BUCKET PREFIX      # the keys under PREFIX, one JSON list
    python s3_keys.py ENDPOINT put BUCKET KEY FILE     # FILE's bytes as the object KEY
    python s3_keys.py ENDPOINT get BUCKET KEY FILE     # the object KEY's bytes into FILE

Keys are given and printed as JSON strings (so that any character survives the command line).
"""
import json
import sys

import boto3


def main():
    endpoint, command, bucket = sys.argv[1], sys.argv[2], sys.argv[3]
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    if command == "list":
        prefix = json.loads(sys.argv[4])
        keys = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            keys.extend(o["Key"] for o in page.get("Contents", []))
        print(json.dumps(sorted(keys)))
    elif command == "put":
        key = json.loads(sys.argv[4])
        with open(sys.argv[5], "rb") as f:
            client.put_object(Bucket=bucket, Key=key, Body=f.read())
    elif command == "get":
        key = json.loads(sys.argv[4])
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        with open(sys.argv[5], "wb") as f:
            f.write(body)
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
