"""Writes a matrix of ASDF files with Python asdf 6.0 into OUT, and OUT/expected.json with the
values each holds, for the Rust side to read and check (tests/tests/interop.rs)."""
import json, sys, warnings
import numpy as np
import asdf

out = sys.argv[1]
expected = {}

def flat(a):
    a = np.asarray(a)
    if a.dtype.kind == 'c':
        return [[float(x.real), float(x.imag)] for x in a.ravel()]
    if a.dtype.kind in 'SU':
        return [x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()]
    if a.dtype.kind == 'f':
        return [None if np.isnan(x) else float(x) for x in a.ravel()]
    return [x.item() for x in a.ravel()]

def save(name, tree, version='1.6.0', **kw):
    path = f'{out}/{name}.asdf'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        af = asdf.AsdfFile(tree, version=version)
        af.write_to(path, **kw)
    def dname(d):
        d = np.dtype(d)
        if d.kind == 'U':
            return f'U{d.itemsize // 4}'
        if d.kind == 'S':
            return f'S{d.itemsize}'
        return d.newbyteorder('=').name
    arrays = {k: {'dtype': dname(np.asarray(v).dtype), 'shape': list(np.shape(v)), 'values': flat(v)}
              for k, v in tree.items() if isinstance(v, np.ndarray)}
    scalars = {k: v for k, v in tree.items() if isinstance(v, (int, str, float, bool)) or v is None}
    expected[name] = {'arrays': arrays, 'scalars': scalars}

rng = np.random.default_rng(7)
dtypes = ['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64',
          'float16', 'float32', 'float64', 'complex64', 'complex128', 'bool']
for dt in dtypes:
    for order in '<>':
        a = (rng.random(12) * 100).astype(dt).reshape(3, 4)
        a = a.astype(np.dtype(dt).newbyteorder(order)) if np.dtype(dt).itemsize > 1 else a
        save(f'dtype_{dt}_{"le" if order == "<" else "be"}', {'a': a})
for comp in ['zlib', 'bzp2', 'lz4', 'zstd', 'lz4f', 'blsc']:
    save(f'compression_{comp}', {'a': np.arange(5000, dtype='int32') % 97, 'b': np.linspace(0, 1, 300)},
         all_array_compression=comp)
for v in ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.6.0']:
    save(f'version_{v}', {'a': np.arange(10.0), 'name': 'v' + v, 'n': 7}, version=v)
save('strings', {'s': np.array(['a', 'bc', 'héllo']), 'b': np.array([b'ab', b'cd'])})
save('inline', {'a': np.arange(6, dtype='int64')}, all_array_storage='inline')
save('scalars', {'yes': 'yes', 'octal': '010', 'empty': '', 'big': 2**62, 'neg': -5, 'pi': 3.141592653589793,
                 'none': None, 'flag': True, 'ключ': 'значение'})
base = np.arange(20.0)
save('views', {'base': base, 'view': base[2:18:3]})
save('nochecksum', {'a': np.arange(4)}, write_checksums=False)
save('padded', {'a': np.arange(4)}, pad_blocks=True)
# Masked arrays, big integers, complex scalars, anchors (the same object twice), unicode keys.
m = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[False, True, False, True])
save('masked', {'m': m})
expected['masked']['masks'] = {'m': [False, True, False, True]}
expected['masked']['arrays'] = {'m': {'dtype': 'float64', 'shape': [4], 'values': [1.0, 2.0, 3.0, 4.0]}}
from asdf.tags.core import IntegerType
save('bigint', {'big': IntegerType(2**100), 'neg': IntegerType(-(2**70))})
expected['bigint']['scalars'] = {}
expected['bigint']['bigints'] = {'big': str(2**100), 'neg': str(-(2**70))}
shared = {'x': 1, 'y': [1, 2]}
save('anchors', {'first': shared, 'second': shared, 'c': 1 + 2j})
expected['anchors']['same'] = ['first', 'second']
# Streamed: rows appended after the header.
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    af = asdf.AsdfFile({'stream': asdf.Stream([4], np.float64)}, version='1.6.0')
    with open(f'{out}/streamed.asdf', 'wb') as fd:
        af.write_to(fd)
        for i in range(6):
            fd.write(np.arange(4.0 * i, 4.0 * i + 4).tobytes())
expected['streamed'] = {'arrays': {'stream': {'dtype': 'float64', 'shape': [6, 4], 'values': [float(x) for x in range(24)]}}, 'scalars': {}}
# Exploded: arrays in external files beside the main one.
save('exploded', {'a': np.arange(8, dtype='int16'), 'b': np.arange(3.0)}, all_array_storage='external')
with open(f'{out}/expected.json', 'w') as f:
    json.dump(expected, f, indent=1)
print(len(expected), 'files')
