"""Remote files over a range-counting HTTP server and moto's S3 server, both on loopback."""
import struct

import numpy as np

import asdf
import asdf_rs

N = 1 << 27  # float64 elements: 1 GiB


def sparse_gib(path, marks):
    """A 1 GiB single-block ASDF file, sparse on disk: zeros but for `marks` {index: value}."""
    tree = (
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n"
        b"--- !core/asdf-1.1.0\ndata: !core/ndarray-1.0.0\n  source: 0\n  datatype: float64\n"
        b"  byteorder: little\n  shape: [" + str(N).encode() + b"]\n...\n"
    )
    size = N * 8
    header = b"\xd3BLK" + struct.pack(">H", 48) + struct.pack(">I", 0) + b"\0\0\0\0" + struct.pack(">QQQ", size, size, size) + b"\0" * 16
    block_at = len(tree)
    with open(path, "wb") as f:
        f.write(tree + header)
        data_at = f.tell()
        for i, v in marks.items():
            f.seek(data_at + i * 8)
            f.write(struct.pack("<d", v))
        f.seek(data_at + size)
        f.write(b"#ASDF BLOCK INDEX\n%YAML 1.1\n---\n- " + str(block_at).encode() + b"\n...\n")


def test_one_element_of_a_remote_gib_costs_under_a_mib(served):
    root, server = served
    marks = {0: 1.5, 123_456_789: 42.0, N - 1: -7.0}
    sparse_gib(root / "gib.asdf", marks)
    with asdf.open(root / "gib.asdf") as af:  # Python asdf agrees on the file
        assert af.tree["data"][123_456_789] == 42.0
    server.reset()
    with asdf_rs.open(f"{server.url}/gib.asdf") as f:  # validating open
        value = f.element("/data", (123_456_789,))
        ours = f.remote_stats
    s = server.stats()
    print(f"\n1 GiB remote file, open + one element: {s['requests']} requests, {s['bytes']} bytes: {s['log']}")
    assert value == 42.0
    # The head, then the element's piece: the block index at the tail is not needed.
    assert s["requests"] == 2 and s["bytes"] <= 1 << 20, s
    # What reached the wire too (an open asking for more than it reads, as `park=true` does,
    # sends the sockets' buffers, about 6 MiB here, for nothing).
    assert s["sent"] <= 1 << 20, s
    assert ours[0] == s["requests"] and ours[1] == s["bytes"], (ours[:2], s)
    server.reset()
    with asdf_rs.open(f"{server.url}/gib.asdf", validate=False) as f:
        assert f.element("/data", (N - 1,)) == -7.0 and f.element("/data", (0,)) == 1.5


def test_one_block_of_a_hundred_fetches_that_block_only(served):
    root, server = served
    arrays = {f"a{i:03}": np.full(10_000, float(i)) + np.arange(10_000) for i in range(100)}
    asdf_rs.write(root / "hundred.asdf", arrays)
    with asdf_rs.open(root / "hundred.asdf") as local:
        blocks = local.blocks
    with asdf_rs.open(f"{server.url}/hundred.asdf") as f:
        server.reset()
        got = f["/a057"]
        s = server.stats()
    np.testing.assert_array_equal(got, arrays["a057"])
    b = blocks[57]
    lo, hi = b["offset"], b["data_offset"] + b["allocated"]
    # The first read past block 0 finds the blocks (they are found on need): the index at the
    # file's tail and the last block's header, which checks it; nothing else but block 57.
    last = blocks[-1]["offset"]
    print(f"\nblock 57 of 100 ({lo}..{hi}): {s['requests']} requests {s['log']}")
    assert 1 <= s["requests"] <= 4, s
    for _method, _path, start, end in s["log"]:
        assert (lo <= start and end <= hi) or start >= last, f"fetched {start}..{end} outside block 57 ({lo}..{hi}) and the tail ({last}..)"
    # The block's header page (64 KiB, mostly the block's data) is not fetched again: the
    # data read takes what the page holds and asks for the rest only (each byte once).
    assert sum(e - st for _, _, st, e in s["log"] if st < last) == hi - lo, s["log"]


def test_s3_files_open_with_credentials_and_anonymously(s3, tmp_path):
    client, opts = s3
    p = tmp_path / "s3.asdf"
    data = np.arange(100_000, dtype="<i4").reshape(1000, 100)
    asdf_rs.write(p, {"data": data, "meta": {"k": "v"}}, compression="zlib")
    client.upload_file(str(p), "data", "dir/s3.asdf")
    with asdf_rs.open("s3://data/dir/s3.asdf", storage_options=opts) as f:
        np.testing.assert_array_equal(f["/data"], data)
        assert f.tree["meta"]["k"] == "v"
        assert f.remote_stats[0] >= 1
    # a public object: anonymous (unsigned) requests reach it, as for public buckets
    client.put_object_acl(Bucket="data", Key="dir/s3.asdf", ACL="public-read")
    anon = dict(opts, anon=True)
    anon.pop("key"), anon.pop("secret")
    with asdf_rs.open("s3://data/dir/s3.asdf", storage_options=anon) as f:
        assert f.element("/data", (999, 99)) == 99_999
    try:
        asdf_rs.open("s3://data/missing.asdf", storage_options=opts)
    except asdf_rs.AsdfError as e:
        assert "missing.asdf" in str(e)
    else:
        raise AssertionError("a missing object opened")


def test_a_file_replaced_between_reads_is_an_error_not_a_mix(served):
    root, server = served
    asdf_rs.write(root / "moving.asdf", {"a": np.arange(100_000.0), "b": np.arange(100_000.0) * 2})
    f = asdf_rs.open(f"{server.url}/moving.asdf")
    np.testing.assert_array_equal(f["/a"], np.arange(100_000.0))
    # a second writer replaces the file (atomically, as asdf_rs.write does)
    asdf_rs.write(root / "moving.asdf", {"a": np.zeros(100_000), "b": np.ones(100_000)})
    try:
        f["/b"]
    except asdf_rs.AsdfError as e:
        assert "moving.asdf" in str(e), e
    else:
        raise AssertionError("read a block of a file replaced since it was opened")
