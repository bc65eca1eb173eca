"""Random valid ASDF files written by Python asdf 6.0, for the differential suite
(tests/tests/interop.rs): `random_files.py OUT N SEED` writes N files into OUT and prints how
many it wrote. Each file draws its standard (1.0.0 to 1.6.0), arrays of every numeric dtype in
both byte orders, records (fields of their own byte orders, nested fields, sub-arrays),
ASCII and UCS-4 strings, shapes of 0 to 3 dimensions (empty ones too), views (slices with
steps and offsets, transposes), inline storage, every compression label Python asdf and
asdf-compression write, checksums on or off, padded blocks, streamed blocks, arrays shared
by two keys, masked arrays (some inline, `null` where masked), scalars and nested lists and mappings; some files are then updated
in place. What Python reads back from each (tests/interop/dump_conformance.py OUT) is what
our reading is compared with, value by value.
"""
import os
import sys
import warnings

import numpy as np

import asdf

NUMERIC = ['i1', 'u1', 'i2', 'u2', 'i4', 'u4', 'i8', 'u8', 'f2', 'f4', 'f8', 'c8', 'c16', 'b1']
COMPRESSION = [None, None, 'zlib', 'bzp2', 'lz4', 'zstd', 'lz4f', 'blsc']
VERSIONS = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.6.0']


def numeric(rng, order=None, half=True):
    choices = NUMERIC if half else [t for t in NUMERIC if t != 'f2']
    d = np.dtype(choices[rng.integers(len(choices))])
    if d.itemsize > 1 and d.kind != 'b':
        d = d.newbyteorder(order or '<>'[rng.integers(2)])
    return d


HALF = [True]


def record(rng, depth=0):
    fields = []
    for i in range(int(rng.integers(1, 4))):
        k = rng.random()
        if k < 0.15 and depth == 0:
            d = record(rng, depth + 1)
        elif k < 0.3:
            d = np.dtype(('S' if rng.random() < 0.5 else 'U') + str(int(rng.integers(1, 5))))
            if d.kind == 'U':
                d = d.newbyteorder('<>'[rng.integers(2)])
        else:
            d = numeric(rng, half=HALF[0])
        if rng.random() < 0.15:
            fields.append((f'f{i}', d, (int(rng.integers(1, 3)),)))
        else:
            fields.append((f'f{i}', d))
    return np.dtype(fields)


def values(rng, dtype, shape):
    n = int(np.prod(shape)) if shape else 1
    if dtype.names:
        a = np.zeros(shape, dtype=dtype)
        flat = a.reshape(-1)
        for name in dtype.names:
            sub = dtype.fields[name][0]
            base = sub.base if sub.subdtype else sub
            fshape = (n,) + (sub.shape if sub.subdtype else ())
            flat[name] = values(rng, base, fshape)
        return a
    if dtype.kind in 'SU':
        chars = 'abcxyz é' if dtype.kind == 'U' else 'abcxyz'
        size = dtype.itemsize // (4 if dtype.kind == 'U' else 1)
        words = [''.join(chars[int(j)] for j in rng.integers(len(chars), size=int(rng.integers(0, size + 1)))) for _ in range(n)]
        if dtype.kind == 'S':
            words = [w.encode() for w in words]
        return np.array(words, dtype=dtype).reshape(shape)
    if dtype.kind == 'b':
        return (rng.random(n) < 0.5).reshape(shape)
    if dtype.kind == 'f':
        v = rng.normal(0, 1e3, n)
        v[rng.random(n) < 0.05] = np.nan
        v[rng.random(n) < 0.02] = np.inf
        return v.astype(dtype).reshape(shape)
    if dtype.kind == 'c':
        return (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    lo, hi = max(int(info.min), -(2**62)), min(int(info.max), 2**62)
    return rng.integers(lo, hi, size=n, endpoint=True).astype(dtype).reshape(shape)


def an_array(rng):
    nd = int(rng.integers(1, 4))
    shape = tuple(int(x) for x in rng.integers(0 if rng.random() < 0.1 else 1, 7, size=nd))
    k = rng.random()
    if k < 0.2:
        dtype = record(rng)
    elif k < 0.3:
        dtype = np.dtype(('S' if rng.random() < 0.5 else 'U') + str(int(rng.integers(1, 6))))
    else:
        dtype = numeric(rng, half=HALF[0])
    a = values(rng, dtype, shape)
    # A view of a larger base: a slice with a step or an offset, or a transpose.
    if nd >= 1 and a.size > 0 and rng.random() < 0.3:
        if nd >= 2 and rng.random() < 0.4:
            a = a.T
        else:
            step = int(rng.integers(1, 3))
            start = int(rng.integers(0, max(1, a.shape[0] // 2)))
            a = a[start::step]
    return a


def one_file(rng, path):
    version = VERSIONS[rng.integers(len(VERSIONS))]
    HALF[0] = version == '1.6.0'  # float16 is a datatype of 1.6.0 on
    tree = {}
    arrays = []
    for i in range(int(rng.integers(1, 5))):
        a = an_array(rng)
        tree[f'a{i}'] = a
        arrays.append(a)
    if arrays and rng.random() < 0.15:
        tree['same'] = arrays[0]
    masked_inline = False
    if rng.random() < 0.15:
        m = values(rng, np.dtype('f8'), (5,))
        tree['masked'] = np.ma.array(m, mask=rng.random(5) < 0.4)
        # Half of them inline (`null` at the masked places, as Python asdf writes them),
        # decided without drawing from rng (the other files stay as they were).
        masked_inline = bool(m[0] >= 0)
    tree['meta'] = {'n': int(rng.integers(-10**6, 10**6)), 'x': float(rng.normal()), 'flag': bool(rng.random() < 0.5),
                    'name': 'run ' + str(int(rng.integers(1000))), 'none': None,
                    'list': [int(rng.integers(10)), 'two', [3.5, {'four': 4}]]}
    stream = rng.random() < 0.08
    stream_dtype = np.dtype('<f8') if rng.random() < 0.5 else np.dtype('>i4')
    if stream:
        tree['stream'] = asdf.Stream([3], stream_dtype)
    kw = {'all_array_compression': None}
    if rng.random() < 0.3:
        kw['pad_blocks'] = True
    if rng.random() < 0.2:
        kw['write_checksums'] = False
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        af = asdf.AsdfFile(tree, version=version)
        if masked_inline:
            af.set_array_storage(tree['masked'], 'inline')
        for a in arrays:
            comp = COMPRESSION[rng.integers(len(COMPRESSION))]
            if a.size <= 8 and rng.random() < 0.3 and a.dtype.names is None:
                af.set_array_storage(a, 'inline')
            elif comp is not None:
                af.set_array_compression(a, comp)
        if stream:
            with open(path, 'wb') as fd:
                af.write_to(fd, **kw)
                for _ in range(int(rng.integers(0, 4))):
                    fd.write(values(rng, stream_dtype, (3,)).tobytes())
        else:
            af.write_to(path, **kw)
        if not stream and rng.random() < 0.15:
            with asdf.open(path, mode='rw') as up:
                up.tree['meta']['name'] = 'updated ' * int(rng.integers(1, 200))
                up.tree['added'] = values(rng, numeric(rng, half=HALF[0]), (4,))
                up.update()


def main(out, n, seed):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(int(seed))
    written = 0
    for i in range(int(n)):
        path = os.path.join(out, f'r{i:06d}.asdf')
        try:
            one_file(rng, path)
            written += 1
        except Exception as e:  # a combination Python asdf refuses to write: not a file
            if os.path.exists(path):
                os.remove(path)
            print(f'{path}: not written ({type(e).__name__}: {e})', file=sys.stderr)
    print(written)


if __name__ == '__main__':
    main(*sys.argv[1:4])
