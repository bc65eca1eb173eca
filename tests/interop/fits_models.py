"""Writes JWST-style FITS files with stdatamodels (ASDF in FITS as the pipelines write it) into
DIR, and DIR/expected.json with what the Python stack reads from them: every `fits:`-sourced
array's values as astropy.io.fits reads its HDU (scaling conventions applied), every scalar of
the tree as asdf 6.0 reads the ASDF HDU, and a check that stdatamodels opens each file as the
same model with the same arrays. Prints 'N files' and exits 1 on any disagreement."""
import io, json, sys
import numpy as np
import asdf
from astropy.io import fits
from stdatamodels.jwst import datamodels as dm

d = sys.argv[1]
rng = np.random.default_rng(7)
models = {}

m = dm.ImageModel()
m.data = rng.normal(size=(5, 7)).astype('f4')
m.err = rng.uniform(size=(5, 7)).astype('f4')
m.dq = rng.integers(0, 2**32, size=(5, 7), dtype='u4')
m.meta.telescope = 'JWST'
m.meta.instrument.name = 'NIRCAM'
models['image'] = m

s = dm.SpecModel()
dt = [(f['name'], f['datatype']) for f in s.schema['properties']['spec_table']['datatype']]
tab = np.zeros(4, dtype=dt)
for name, _ in dt:
    tab[name] = rng.integers(0, 1000, size=4) if name in ('DQ',) else rng.normal(size=4)
tab['DQ'] = [0, 1, 2**31 + 5, 2**32 - 1]
s.spec_table = tab
models['table'] = s

ms = dm.MultiSlitModel()
for i in range(3):
    sl = dm.SlitModel(rng.normal(size=(2 + i, 4)).astype('f4'))
    sl.dq = np.full((2 + i, 4), i, 'u4')
    sl.name = f'S{i}'
    ms.slits.append(sl)
models['multislit'] = ms

c = dm.CubeModel()
c.data = rng.normal(size=(3, 4, 5)).astype('f4')
c.dq = rng.integers(0, 2**32, size=(3, 4, 5), dtype='u4')
models['cube'] = c

def plain(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (bytes, np.bytes_)):
        return x.decode()
    return x

def flat(a):
    if getattr(a, 'dtype', None) is not None and a.dtype.names:
        # Column by column: astropy's FITS_rec applies TZEROn there (not in a plain view).
        cols = [np.asarray(a[n]).ravel() for n in a.dtype.names]
        return [[plain(c[i]) for c in cols] for i in range(len(cols[0]))]
    return [plain(v) for v in np.asarray(a).ravel()]

def scalars(node, at, out):
    if isinstance(node, dict):
        for k, v in node.items():
            scalars(v, f'{at}/{k}', out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            scalars(v, f'{at}/{i}', out)
    elif isinstance(node, (str, int, float, bool)) or node is None:
        out[at] = node

expected = {}
bad = 0
for name, model in models.items():
    path = f'{d}/{name}.fits'
    model.save(path)
    with fits.open(path) as hdul:
        raw = hdul['ASDF'].data['ASDF_METADATA'][0].tobytes()
        arrays = {}
        with asdf.open(io.BytesIO(raw), lazy_load=True, memmap=False) as af:
            def walk(node, at):
                if isinstance(node, dict):
                    for k, v in node.items():
                        walk(v, f'{at}/{k}')
                elif isinstance(node, list):
                    for i, v in enumerate(node):
                        walk(v, f'{at}/{i}')
                elif type(node).__name__ == 'NDArrayType':
                    src = node._source
                    ref = src[len('fits:'):]
                    hdu = hdul[int(ref)] if ',' not in ref else hdul[(ref.split(',')[0], int(ref.split(',')[1]))]
                    data = hdu.data
                    arrays[at] = {'source': src, 'shape': list(np.shape(data)), 'values': flat(data)}
            walk(af.tree, '')
            tree = {}
            scalars({k: v for k, v in af.tree.items()}, '', tree)
    # stdatamodels reads the same arrays.
    with dm.open(path) as back:
        for at, a in arrays.items():
            node = back
            for tok in at.strip('/').split('/'):
                node = node[int(tok)] if tok.isdigit() else getattr(node, tok)
            if flat(node) != a['values']:
                bad += 1
                print(name, at, 'stdatamodels disagrees with astropy')
    expected[name] = {'arrays': arrays, 'scalars': tree}
json.dump(expected, open(f'{d}/expected.json', 'w'), indent=1)
print(f'{len(expected)} files, {sum(len(e["arrays"]) for e in expected.values())} arrays')
sys.exit(1 if bad else 0)
