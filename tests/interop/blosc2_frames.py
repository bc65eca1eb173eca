"""Blosc2 contiguous frames both ways with python-blosc2 (C-Blosc2), for tests/tests/blosc2_frames.rs.

    blosc2_frames.py read LIST.json   each entry {"path", "md5", "nbytes"}: python-blosc2 opens
                                      the frame (schunk_from_cframe), decompresses every chunk
                                      and compares the MD5; prints one JSON object per frame
    blosc2_frames.py write DIR        writes a matrix of fresh frames (codec x filter x typesize,
                                      zero chunks, one partial last chunk) into DIR and prints
                                      their list as JSON: {"path", "md5", "nbytes", ...}
    blosc2_frames.py blsc DIR         `blsc` block bodies made by python-blosc (C-Blosc 1.x): one
                                      chunk (as asdf-compression writes) and AbacusSummit's
                                      framing (abacusutils' BloscCompressor: chunks of a fixed
                                      data size, each after its compressed length as a big-endian
                                      uint32; zstd level 1 and shuffle by default)
    blosc2_frames.py b2nd DIR N SEED  N b2nd arrays of random rank (1-4), shape, chunks and
                                      blocks (even and uneven, padded and not), dtype and
                                      codec, some with chunks of zeros; prints their list as
                                      JSON: {"path", "md5" of the C-order bytes, "nbytes",
                                      "shape", "chunks", "blocks"}
"""
import hashlib, json, os, sys

import numpy as np
import blosc2


def read(listing):
    out = []
    for case in json.load(open(listing)):
        try:
            data = open(case['path'], 'rb').read()
            s = blosc2.schunk_from_cframe(data, copy=True)
            got = b''.join(s.decompress_chunk(i) for i in range(s.nchunks))
            out.append({'path': case['path'], 'ok': hashlib.md5(got).hexdigest() == case['md5'] and len(got) == case['nbytes'],
                        'nbytes': len(got), 'nchunks': s.nchunks, 'typesize': s.typesize})
        except Exception as e:
            out.append({'path': case['path'], 'ok': False, 'error': f'{type(e).__name__}: {e}'})
    json.dump(out, sys.stdout)


def write(d):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(3)
    out = []
    for codec in [blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4, blosc2.Codec.LZ4HC, blosc2.Codec.ZLIB, blosc2.Codec.ZSTD]:
        for filt in [blosc2.Filter.NOFILTER, blosc2.Filter.SHUFFLE, blosc2.Filter.BITSHUFFLE]:
            for dtype in ['u1', '<i2', '<f4', '<f8']:
                a = (np.cumsum(rng.integers(-3, 4, size=30_001)) % 1000).astype(dtype)
                a[10_000:20_000] = 0  # whole chunks of zeros
                raw = a.tobytes()
                cp = blosc2.CParams(codec=codec, clevel=5, typesize=a.dtype.itemsize, filters=[filt])
                s = blosc2.SChunk(chunksize=8_000 * a.dtype.itemsize, data=raw, cparams=cp)
                name = f'py_{codec.name.lower()}_{filt.name.lower()}_{a.dtype.str[1:]}'
                path = os.path.join(d, name + '.b2frame')
                open(path, 'wb').write(s.to_cframe())
                out.append({'path': path, 'md5': hashlib.md5(raw).hexdigest(), 'nbytes': len(raw)})
    # b2nd N-d arrays with uneven chunks and blocks: their C-order bytes.
    for shape, chunks, blocks, dtype in [((17, 30, 11), (8, 16, 5), (3, 7, 2), '<f8'),
                                         ((1000,), (300,), (64,), '<i4'),
                                         ((5, 7), (5, 7), (2, 3), '<u2')]:
        a = (np.arange(np.prod(shape)) * 7 % 1001).astype(dtype).reshape(shape)
        nd = blosc2.asarray(a, chunks=chunks, blocks=blocks)
        path = os.path.join(d, f'py_b2nd_{"x".join(map(str, shape))}.b2frame')
        open(path, 'wb').write(nd.to_cframe())
        out.append({'path': path, 'nbytes': a.nbytes, 'md5': hashlib.md5(a.tobytes()).hexdigest(), 'b2nd': True})
    json.dump(out, sys.stdout)


def blsc(d):
    import struct
    import blosc
    os.makedirs(d, exist_ok=True)
    out = []
    for dtype in ['<f8', '<i4', 'u1']:
        a = (np.arange(300_001) % 977 * 3).astype(dtype)
        raw = a.tobytes()
        for form, cname, block in [('abacus', 'zstd', 1 << 18), ('abacus', 'lz4', 1 << 16), ('chunk', 'blosclz', None)]:
            if form == 'chunk':
                body = blosc.compress(raw, typesize=a.itemsize, clevel=5, shuffle=blosc.SHUFFLE, cname=cname)
            else:
                nelem = block // a.itemsize
                body = b''
                for i in range(0, len(a), nelem):
                    c = blosc.compress(a[i:i + nelem].tobytes(), typesize=a.itemsize, clevel=1,
                                       shuffle=blosc.SHUFFLE, cname=cname)
                    body += struct.pack('!I', len(c)) + c
            path = os.path.join(d, f'{form}_{cname}_{a.dtype.str[1:]}.blsc')
            open(path, 'wb').write(body)
            out.append({'path': path, 'md5': hashlib.md5(raw).hexdigest(), 'nbytes': len(raw), 'form': form})
    json.dump(out, sys.stdout)


def b2nd(d, n, seed):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(int(seed))
    out = []
    dtypes = ['u1', '<i2', '>i4', '<u4', '<f4', '<f8', '<i8', '<c8']
    for i in range(int(n)):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(x) for x in rng.integers(1, [40, 20, 9, 6][nd - 1] + 1, size=nd))
        chunks = tuple(int(rng.integers(1, s + 1)) for s in shape)
        blocks = tuple(int(rng.integers(1, c + 1)) for c in chunks)
        dtype = np.dtype(dtypes[int(rng.integers(len(dtypes)))])
        a = (rng.integers(-1000, 1000, size=shape)).astype(dtype)
        if rng.random() < 0.3:
            a[: max(1, shape[0] // 2)] = 0
        codec = [blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4, blosc2.Codec.ZSTD, blosc2.Codec.ZLIB][int(rng.integers(4))]
        nd_arr = blosc2.asarray(a, chunks=chunks, blocks=blocks, cparams=blosc2.CParams(codec=codec))
        path = os.path.join(d, f'b2nd_{i}.b2frame')
        open(path, 'wb').write(nd_arr.to_cframe())
        # The array's bytes in C order as python-blosc2 itself reads them back.
        c = np.ascontiguousarray(nd_arr[...])
        assert c.dtype == a.dtype and np.array_equal(c, a)
        out.append({'path': path, 'md5': hashlib.md5(c.tobytes()).hexdigest(), 'nbytes': c.nbytes,
                    'shape': shape, 'chunks': chunks, 'blocks': blocks, 'itemsize': dtype.itemsize})
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    {'read': read, 'write': write, 'blsc': blsc, 'b2nd': b2nd}[sys.argv[1]](*sys.argv[2:])
