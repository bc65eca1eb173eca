"""Reads ASDF files from S3 with Python asdf 6 through s3fs (as a Python user would:
`asdf.open(fs.open(url))`) and compares each with a local file read by Python asdf: every
array's values, dtype and shape, and the tree's other values. Prints one JSON line per pair.

usage: s3_read_back.py ENDPOINT URL LOCAL [URL LOCAL ...]
ENDPOINT `-`: each URL is a local file (an object fetched by the store's own client)."""
import json
import sys

import asdf
import numpy as np
import s3fs


def plain(node, arrays, path="", skip=("asdf_library", "history")):
    if isinstance(node, dict):
        return {k: plain(v, arrays, f"{path}/{k}") for k, v in node.items() if not (path == "" and k in skip)}
    if isinstance(node, (list, tuple)):
        return [plain(v, arrays, f"{path}/{i}") for i, v in enumerate(node)]
    if isinstance(node, np.ndarray) or hasattr(node, "__array__") and hasattr(node, "dtype"):
        arrays[path] = np.asarray(node)
        return f"<array {path}>"
    return node


def main():
    endpoint = sys.argv[1]
    if endpoint == "-":
        fs = None
    else:
        fs = s3fs.S3FileSystem(key="testing", secret="testing", client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"})
    pairs = sys.argv[2:]
    for url, local in zip(pairs[::2], pairs[1::2]):
        with (fs.open(url, "rb") if fs else open(url, "rb")) as remote, asdf.open(remote, lazy_load=False, memmap=False) as a, asdf.open(
            local, lazy_load=False, memmap=False
        ) as b:
            ra, la = {}, {}
            rt, lt = plain(a.tree, ra), plain(b.tree, la)
            same_tree = rt == lt
            same = sorted(ra) == sorted(la) and all(
                ra[k].dtype == la[k].dtype and ra[k].shape == la[k].shape and np.array_equal(ra[k], la[k], equal_nan=True)
                for k in ra
            )
            values = sum(int(v.size) for v in ra.values())
        print(json.dumps({"url": url, "arrays": len(ra), "values": values, "tree_equal": same_tree, "arrays_equal": same}))


if __name__ == "__main__":
    main()
