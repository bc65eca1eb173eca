"""Opens every file listed in DIR/expected.json (written by tests/tests/interop.rs) with Python
asdf 6.0, validation on read and checksum validation on, and checks the values; prints
'N passed, M failed' and exits 1 on any failure or warning."""
import json, sys, warnings
import numpy as np
import asdf

asdf.get_config().validate_on_read = True
d = sys.argv[1]
expected = json.load(open(f'{d}/expected.json'))

def dname(dt):
    dt = np.dtype(dt)
    if dt.kind == 'U':
        return f'U{dt.itemsize // 4}'
    if dt.kind == 'S':
        return f'S{dt.itemsize}'
    return dt.newbyteorder('=').name

def same(a, b):
    if isinstance(b, list) and len(b) == 2 and isinstance(a, complex):
        return same(a.real, b[0]) and same(a.imag, b[1])
    if b is None:
        return isinstance(a, float) and np.isnan(a)
    if b in ('inf', '-inf'):
        return a == float(b)
    if isinstance(a, bytes):
        a = a.decode()
    return a == b

ok = bad = 0
for name, want in expected.items():
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with asdf.open(f'{d}/{name}.asdf', validate_checksums=True) as af:
                for k, a in want.get('arrays', {}).items():
                    arr = np.asarray(af[k])
                    assert dname(arr.dtype) == a['dtype'], (k, arr.dtype, a['dtype'])
                    assert list(arr.shape) == a['shape'], (k, arr.shape)
                    vals = [complex(x) if arr.dtype.kind == 'c' else x.item() if hasattr(x, 'item') else x for x in arr.ravel()]
                    for i, (x, y) in enumerate(zip(vals, a['values'])):
                        assert same(x, y), (k, i, x, y)
                for k, v in want.get('scalars', {}).items():
                    assert af[k] == v, (k, af[k], v)
                for k, m in want.get('masks', {}).items():
                    got = np.ma.getmaskarray(af[k]).ravel().tolist()
                    assert got == m, (k, got, m)  # all False unless Python reads it as masked
                if 'same' in want:
                    a, b = want['same']
                    assert af[a] is af[b] and af[a] == {'x': 1, 'y': 'two'}, (a, b, af[a], af[b])
                for k, v in want.get('bigints', {}).items():
                    got = getattr(af[k], '_value', af[k])  # asdf wraps it in IntegerType
                    assert isinstance(got, int) and str(got) == v, (k, got, v)
                af.validate()
            msgs = [str(x.message)[:120] for x in w if 'ResourceWarning' not in str(x.category)]
        if msgs:
            bad += 1
            print(name, 'WARN', msgs)
        else:
            ok += 1
    except Exception as e:
        bad += 1
        print(name, 'FAIL', type(e).__name__, str(e)[:300])
print(f'{ok} passed, {bad} failed')
sys.exit(1 if bad else 0)
