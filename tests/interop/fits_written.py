"""Judges the FITS files asdf-rs wrote in DIR (see the `fits_files_we_write` interop test):

- every FITS file asdf-rs wrote opens in astropy.io.fits with every warning an error, its
  CHECKSUM/DATASUM cards verified where present, and passes `hdulist.verify('exception')` and,
  when installed, HEASARC's fitsverify with 0 warnings and 0 errors;
- out_M.fits (stdatamodels' M.fits read and written again by asdf-rs) and rt_M.fits (M.fits
  converted to ASDF, then back to FITS) have M.fits's HDUs: the same headers card for card
  (CHECKSUM/DATASUM aside) and the same data; stdatamodels opens them as the same model with the
  same arrays and metadata (asdf_library, meta.filename and _fits_hash aside);
- rt_M.asdf opens in Python asdf 6.0 with every warning an error, and its arrays equal those
  stdatamodels reads from M.fits;
- new.fits (a tree asdf-rs made) holds in its HDUs the values new.json lists by EXTNAME.

Prints the counts; exits 1 on any disagreement."""
import json, os, shutil, subprocess, sys, warnings
import numpy as np
import asdf
from astropy.io import fits
from stdatamodels.jwst import datamodels as dm

d = sys.argv[1]
models = sorted(f[:-5] for f in os.listdir(d)
                if f.endswith('.fits') and not f.startswith(('out_', 'rt_', 'new')))
failures = []
counts = dict(astropy=0, fitsverify=0, models=0, headers=0, arrays=0, asdf_arrays=0, new=0)

def fail(msg):
    failures.append(msg)
    print('FAIL', msg)

ours = [f'out_{m}.fits' for m in models] + [f'rt_{m}.fits' for m in models] + ['new.fits']
for name in ours:
    path = os.path.join(d, name)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            with fits.open(path, checksum=True) as h:
                h.verify('exception')
                for hdu in h:
                    hdu.data  # read every HDU's data
        counts['astropy'] += 1
    except Exception as e:
        fail(f'{name}: astropy: {type(e).__name__}: {e}')
    if shutil.which('fitsverify'):
        r = subprocess.run(['fitsverify', path], capture_output=True, text=True)
        if r.returncode == 0 and 'found 0 warning(s) and 0 error(s)' in r.stdout:
            counts['fitsverify'] += 1
        else:
            fail(f'{name}: fitsverify: {r.stdout[-2000:]}')

def cards(hdu):
    return [(c.keyword, c.value, c.comment) for c in hdu.header.cards
            if c.keyword not in ('CHECKSUM', 'DATASUM')]

IGNORED = ('asdf_library.', 'meta.filename', '_fits_hash')

def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.names:
            return a.dtype.names == b.dtype.names and all(np.array_equal(a[n], b[n]) for n in a.dtype.names)
        return a.shape == b.shape and np.array_equal(a, b)
    return a == b

for m in models:
    orig = os.path.join(d, f'{m}.fits')
    for kind in ('out', 'rt'):
        path = os.path.join(d, f'{kind}_{m}.fits')
        with fits.open(orig) as a, fits.open(path) as b:
            na = [(x.name, x.ver) for x in a if x.name != 'ASDF']
            nb = [(x.name, x.ver) for x in b if x.name != 'ASDF']
            if na != nb:
                fail(f'{kind}_{m}: HDUs {nb} != {na}')
                continue
            for x in a:
                if x.name == 'ASDF':
                    continue
                y = b[(x.name, x.ver)]
                if cards(x) != cards(y):
                    fail(f'{kind}_{m} {x.name},{x.ver}: header differs')
                elif not same(x.data, y.data) if x.data is not None else y.data is not None:
                    fail(f'{kind}_{m} {x.name},{x.ver}: data differs')
                else:
                    counts['headers'] += 1
        with dm.open(orig) as m1, dm.open(path) as m2:
            if type(m1) is not type(m2):
                fail(f'{kind}_{m}: opened as {type(m2).__name__}, not {type(m1).__name__}')
                continue
            f1, f2 = m1.to_flat_dict(), m2.to_flat_dict()
            keys = {k for k in set(f1) | set(f2) if not k.startswith(IGNORED)}
            bad = [k for k in sorted(keys) if not same(f1.get(k), f2.get(k))]
            if bad:
                fail(f'{kind}_{m}: model differs at {bad[:5]}')
            else:
                counts['models'] += 1
                counts['arrays'] += sum(isinstance(f1[k], np.ndarray) for k in keys if k in f1)
    # The ASDF file converted from FITS, in Python asdf.
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with asdf.open(os.path.join(d, f'rt_{m}.asdf'), lazy_load=False) as af, dm.open(orig) as m1:
            inst = m1._instance
            def walk(node, ref, at):
                if isinstance(node, dict):
                    for k, v in node.items():
                        if at == '' and k == '_fits':
                            continue
                        walk(v, ref.get(k) if isinstance(ref, dict) else None, f'{at}/{k}')
                elif isinstance(node, list):
                    for i, v in enumerate(node):
                        walk(v, ref[i] if isinstance(ref, list) and i < len(ref) else None, f'{at}/{i}')
                elif isinstance(node, np.ndarray):
                    if ref is None or not same(np.asarray(node), np.asarray(ref)):
                        fail(f'rt_{m}.asdf {at}: differs from stdatamodels')
                    else:
                        counts['asdf_arrays'] += 1
            walk(af.tree, inst, '')

with open(os.path.join(d, 'new.json')) as f:
    want = json.load(f)
with fits.open(os.path.join(d, 'new.fits')) as h:
    for key, values in want.items():
        name, ver = key.split(',')
        got = np.asarray(h[(name, int(ver))].data).ravel().tolist()
        if got != values:
            fail(f'new.fits {key}: {got} != {values}')
        else:
            counts['new'] += 1

print(' '.join(f'{k}={v}' for k, v in counts.items()), 'fitsverify installed' if shutil.which('fitsverify') else 'fitsverify NOT RUN: not installed')
sys.exit(1 if failures else 0)
