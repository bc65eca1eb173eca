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
