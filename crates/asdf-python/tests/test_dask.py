"""Dask arrays over files on the S3 server: a dask.distributed LocalCluster (worker
processes) computes reductions equal to numpy's, each task fetching only its own bytes."""
import os
import pickle

import numpy as np

import asdf_rs


def test_local_cluster_sums_over_s3_equal_numpy(s3, tmp_path, monkeypatch):
    import dask
    from dask.distributed import Client, LocalCluster

    client, opts = s3
    rng = np.random.default_rng(7)
    big = rng.standard_normal((4000, 250))  # 8 MB, uncompressed: rows in 1 MB chunks
    packed = rng.integers(0, 1000, size=(300, 300)).astype("<i8")  # one zlib block
    cube = rng.random((20, 30, 40), dtype=np.float32)
    p = tmp_path / "multi.asdf"
    asdf_rs.write(p, {"big": big, "cube": cube})
    q = tmp_path / "packed.asdf"
    asdf_rs.write(q, {"packed": packed}, compression="zlib")
    client.upload_file(str(p), "data", "cluster/multi.asdf")
    client.upload_file(str(q), "data", "cluster/packed.asdf")

    log = tmp_path / "ranges.log"
    monkeypatch.setenv("ASDF_RS_RANGE_LOG", str(log))
    url = "s3://data/cluster/multi.asdf"
    with asdf_rs.open(url, storage_options=opts) as f:
        blocks = f.blocks
        d_big = f.to_dask("/big", chunk_bytes=1 << 20)
        d_cube = f.to_dask("/cube", chunk_bytes=48_000)
    d_packed = asdf_rs.to_dask("s3://data/cluster/packed.asdf", "/packed", storage_options=opts)
    assert d_big.numblocks[0] == 8 and d_cube.numblocks[0] == 2 and d_packed.numblocks == (1, 1)
    pickle.loads(pickle.dumps(dict(d_big.__dask_graph__())))  # the graph travels

    log.write_text("")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
        with dask.config.set(scheduler=None):
            s_big, s_cube, m_packed = dask.compute(d_big.sum(), d_cube.sum(axis=0), d_packed.max())
    np.testing.assert_allclose(s_big, big.sum(), rtol=1e-12)
    np.testing.assert_allclose(s_cube, cube.sum(axis=0), rtol=1e-5)
    assert m_packed == packed.max()

    lines = [line.split() for line in log.read_text().splitlines()]
    print(f"\nthe tasks' byte ranges ({len(lines)} requests):")
    for u, a, b in lines:
        print(f"   {u} {a}..{b}")
    multi = sorted((int(a), int(b)) for u, a, b in lines if u == url)
    b0, b1 = blocks[0], blocks[1]
    big_bytes = (b0["data_offset"], b0["data_offset"] + big.nbytes)
    cube_bytes = (b1["data_offset"], b1["data_offset"] + cube.nbytes)
    # every request of the tasks lies inside one array's data, and together they cover it once
    inside = [r for r in multi if big_bytes[0] <= r[0] and r[1] <= big_bytes[1]]
    inside_cube = [r for r in multi if cube_bytes[0] <= r[0] and r[1] <= cube_bytes[1]]
    assert len(inside) + len(inside_cube) == len(multi), multi
    assert sum(b - a for a, b in inside) == big.nbytes and len(inside) == 8
    assert sum(b - a for a, b in inside_cube) == cube.nbytes


def test_local_cluster_sums_a_chunked_array_over_http_one_task_per_chunk(served):
    # A chunked array (asdf-zarr's layout, 64 x 48 zstd chunks, a band of zeros left unstored)
    # on the loopback HTTP server: one task per Zarr chunk, the sum on a LocalCluster equal to
    # numpy's, and the server's log shows the tasks fetched each stored chunk's block exactly
    # once and nothing else.
    import dask
    from dask.distributed import Client, LocalCluster

    root, server = served
    rng = np.random.default_rng(11)
    a = rng.standard_normal((300, 200))
    a[64:128, :] = 0  # whole chunks of zeros: not stored, read as the fill value
    asdf_rs.write(root / "chunked.asdf", {"a": a}, compression="zstd", chunks=(64, 48))
    url = server.url + "/chunked.asdf"
    with asdf_rs.open(url) as f:
        d = f.to_dask("/a")
        found = f._native.chunk_map("/a")
    _, grid, chunks = found
    assert tuple(grid) == (5, 5) and d.numblocks == (5, 5), (grid, d.numblocks)
    assert d.chunks == ((64, 64, 64, 64, 44), (48, 48, 48, 48, 8))
    stored = [c for c in chunks if c is not None]
    assert len(stored) == 20, len(stored)  # the five chunks of the zero band are not stored
    pickle.loads(pickle.dumps(dict(d.__dask_graph__())))

    server.reset()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
        with dask.config.set(scheduler=None):
            total, cols = dask.compute(d.sum(), d[100:250, 30:170].mean(axis=0))
    np.testing.assert_allclose(total, a.sum(), rtol=1e-12)
    np.testing.assert_allclose(cols, a[100:250, 30:170].mean(axis=0), rtol=1e-12)
    log = [(start, end) for method, path, start, end in server.stats()["log"] if path == "/chunked.asdf"]
    want = sorted((off, off + n) for off, n, _, _ in stored)
    print(f"\nchunked array over HTTP: {len(d.__dask_graph__())} tasks; the server's log, {len(log)} ranges:")
    for r in sorted(log):
        print(f"   {r[0]}..{r[1]}")
    # Each stored chunk fetched whole, exactly once (the sum and the mean share the chunk
    # tasks), and nothing else: no tree, no index, no chunk of the zero band.
    assert sorted(log) == want, (sorted(log), want)


def test_a_blosc2_frame_is_one_task_per_frame_chunk_over_http(served):
    # A 12 MiB array in a Blosc2 frame (4 MiB chunks of 512 rows): three tasks, each fetching
    # the frame's header and index and its own chunk, never the whole frame. (Where rows do
    # not divide the frame's chunks, a task also fetches the chunk its last row begins.)
    import dask

    root, server = served
    a = np.random.default_rng(3).standard_normal((1536, 1024))  # hardly compresses
    asdf_rs.write(root / "frame.asdf", {"a": a}, compression="bls2")
    url = server.url + "/frame.asdf"
    with asdf_rs.open(url) as f:
        d = f.to_dask("/a")
        lay = f._native.layout("/a")
    assert d.numblocks == (3, 1), d.numblocks
    server.reset()
    with dask.config.set(scheduler="threads"):
        total = d.sum().compute()
    np.testing.assert_allclose(total, a.sum(), rtol=1e-12)
    log = [(s, e) for m, p, s, e in server.stats()["log"] if p == "/frame.asdf"]
    fetched = sum(e - s for s, e in log)
    print(f"\nBlosc2 frame over HTTP: 3 tasks, {len(log)} requests, {fetched} bytes of a {lay['stored_len']}-byte frame")
    # Each task fetches its own chunks: together about the frame once, never three times.
    assert fetched < lay["stored_len"] * 1.2, (fetched, lay["stored_len"])
    assert all(e - s < lay["stored_len"] for s, e in log)
