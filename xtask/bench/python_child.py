"""One benchmark workload with Python asdf 6.0 in this process; prints one JSON line with the
seconds, the peak RSS (VmHWM, KiB) and a check value (see xtask/src/bench.rs)."""
import json, sys, time
import numpy as np
import asdf

def peak_rss_kib():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1])
    return 0

mode, path = sys.argv[1], sys.argv[2]
check = 0.0
if mode in ('write', 'write-nochecksum'):
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 27
    data = np.arange(n, dtype='<f8') * 0.5
    t = time.perf_counter()
    asdf.AsdfFile({'data': data}).write_to(path, write_checksums=(mode == 'write'))
    secs = time.perf_counter() - t
    check = float(n)
elif mode in ('sum', 'sum-memmap'):
    t = time.perf_counter()
    with asdf.open(path, memmap=(mode == 'sum-memmap')) as af:
        check = float(np.asarray(af['data']).sum())
    secs = time.perf_counter() - t
elif mode in ('element', 'element-memmap'):
    t = time.perf_counter()
    with asdf.open(path, memmap=(mode == 'element-memmap')) as af:
        d = af['data']
        check = float(d[d.shape[0] // 2 + 7])
    secs = time.perf_counter() - t
elif mode == 'cli-make':
    # MIB MiB of float64 in blocks of 16 MiB (4 arrays for 64 MiB), compressed with CODEC.
    mib, codec = int(sys.argv[3]), sys.argv[4]
    n = 16 * 1024 * 1024 // 8
    tree = {f'a{i}': np.arange(i * n, (i + 1) * n, dtype='<f8') * 0.5 for i in range(mib // 16)}
    t = time.perf_counter()
    asdf.AsdfFile(tree).write_to(path, all_array_compression=(None if codec == 'none' else codec))
    secs = time.perf_counter() - t
    check = float(mib)
elif mode == 'verify':
    # What `asdf-cli verify` does: every block checked against its checksum, every array read.
    # The installed extensions (asdf-astropy, gwcs, sunpy, dkist... in this venv) load on the
    # first open, ~2 s: loaded before the clock starts, as imports are.
    asdf.get_config().extensions
    t = time.perf_counter()
    with asdf.open(path, validate_checksums=True, lazy_load=False) as af:
        n = 0
        for k, v in af.tree.items():
            if isinstance(v, np.ndarray):
                np.asarray(v)
                n += 1
    secs = time.perf_counter() - t
    check = 0.0
elif mode == 'fits-make':
    # A 1 GiB JWST-style file: stdatamodels' ImageModel, SCI float32 16384 x 16384.
    from stdatamodels.jwst import datamodels as dm
    n = 16384
    m = dm.ImageModel()
    m.data = (np.arange(n * n, dtype='f8') * 0.25).astype('f4').reshape(n, n)
    m.meta.telescope = 'JWST'
    t = time.perf_counter()
    m.save(path)
    secs = time.perf_counter() - t
    check = float(n)
elif mode in ('fits-stdatamodels', 'fits-stdatamodels-memmap'):
    from stdatamodels.jwst import datamodels as dm
    from astropy.io import fits
    t = time.perf_counter()
    if mode == 'fits-stdatamodels':
        # Its default: a path is opened with memmap=False.
        with dm.ImageModel(path) as m:
            check = float(m.data[m.data.shape[0] // 2, 7])
    else:
        # Memory-mapped: an HDUList astropy opened with memmap=True.
        with fits.open(path, memmap=True) as h, dm.ImageModel(h) as m:
            check = float(m.data[m.data.shape[0] // 2, 7])
    secs = time.perf_counter() - t
elif mode == 'fits-astropy':
    from astropy.io import fits
    t = time.perf_counter()
    with fits.open(path, memmap=True) as h:
        d = h['SCI'].data
        check = float(d[d.shape[0] // 2, 7])
    secs = time.perf_counter() - t
elif mode == 'codec-write':
    n = 1 << 26
    i = np.arange(n, dtype=np.uint64)
    data = ((i % 1000) + (((i * 2654435761) >> 13) & 7)).astype('<i4')
    t = time.perf_counter()
    asdf.AsdfFile({'data': data}).write_to(path, all_array_compression=sys.argv[3])
    secs = time.perf_counter() - t
    import os
    check = float(os.path.getsize(path))
elif mode == 'codec-read':
    t = time.perf_counter()
    with asdf.open(path) as af:
        check = float(np.asarray(af['data']).sum(dtype=np.int64))
    secs = time.perf_counter() - t
elif mode == 'tree-write':
    rows = [{'a': i, 'b': f'row {i}', 'c': 0.5, 'd': i % 2 == 0, 'e': None} for i in range(20000)]
    t = time.perf_counter()
    asdf.AsdfFile({'rows': rows}).write_to(path)
    secs = time.perf_counter() - t
elif mode == 'tree-open':
    def count(n):
        if isinstance(n, dict):
            return sum(count(v) for v in n.values())
        if isinstance(n, list):
            return sum(count(v) for v in n)
        return 1
    t = time.perf_counter()
    with asdf.open(path) as af:
        check = float(count(af['rows']))
    secs = time.perf_counter() - t
elif mode == 'tree-validate':
    with asdf.open(path) as af:
        t = time.perf_counter()
        af.validate()
        secs = time.perf_counter() - t
# The same workloads with numpy alone (raw .npy files, memory-mapped) and with h5py (HDF5).
elif mode in ('np-write', 'h5-write'):
    n = 1 << 27
    data = np.arange(n, dtype='<f8') * 0.5
    t = time.perf_counter()
    if mode == 'np-write':
        np.save(path, data)
    else:
        import h5py
        with h5py.File(path, 'w') as f:
            f.create_dataset('data', data=data)
    secs = time.perf_counter() - t
    check = float(n)
elif mode in ('np-sum', 'np-element'):
    t = time.perf_counter()
    d = np.load(path, mmap_mode='r')
    check = float(d.sum()) if mode == 'np-sum' else float(d[d.shape[0] // 2 + 7])
    secs = time.perf_counter() - t
elif mode in ('h5-sum', 'h5-element', 'h5-codec-read'):
    import h5py
    t = time.perf_counter()
    with h5py.File(path, 'r') as f:
        d = f['data']
        if mode == 'h5-sum':
            check = float(d[...].sum())
        elif mode == 'h5-codec-read':
            check = float(d[...].sum(dtype=np.int64))
        else:
            check = float(d[d.shape[0] // 2 + 7])
    secs = time.perf_counter() - t
elif mode == 'h5-codec-write':
    # zlib's deflate as HDF5 applies it: the gzip filter on 1 MiB chunks (level 6, as zlib's
    # default and ours).
    import h5py, os
    n = 1 << 26
    i = np.arange(n, dtype=np.uint64)
    data = ((i % 1000) + (((i * 2654435761) >> 13) & 7)).astype('<i4')
    t = time.perf_counter()
    with h5py.File(path, 'w') as f:
        f.create_dataset('data', data=data, chunks=(1 << 18,), compression='gzip', compression_opts=6)
    secs = time.perf_counter() - t
    check = float(os.path.getsize(path))
else:
    sys.exit(f'unknown mode {mode}')
print(json.dumps({'secs': secs, 'rss_kib': peak_rss_kib(), 'check': check}))
