"""Random ASDF-in-FITS files written by asdf 2.15's fits_embed (the last Python asdf that wrote
them) over HDU lists built with astropy.io.fits, for the FITS differential suite
(tests/tests/interop.rs): `fits_random.py OUT N SEED` writes N files into OUT and OUT/expected.json
with every array of each tree as asdf 2.15 and astropy read it back. Prints how many files it
wrote.

Each file draws: a primary HDU with or without an image; 1 to 6 extensions, images of every
type astropy writes (unsigned ones under BZERO) of 1 to 4 dimensions with odd sizes, named or
not, names repeated with EXTVER, and binary tables; header cards of every kind (HISTORY,
COMMENT, long strings with CONTINUE, HIERARCH); a tree whose arrays are some of those HDUs'
data (`source: fits:NAME,VER`), arrays of its own (blocks in the ASDF HDU) and scalars; the
ASDF HDU as the ASDF BINTABLE or Appendix A's IMAGE of bytes.
"""
import json
import os
import sys
import warnings

import numpy as np
from astropy.io import fits

warnings.simplefilter('ignore')  # asdf 2.15 warns that fits_embed is deprecated
from asdf import fits_embed  # noqa: E402

IMAGE = ['u1', 'i2', 'i4', 'i8', 'f4', 'f8', 'u2', 'u4', 'u8', '>i2', '<f4']
NAMES = ['SCI', 'ERR', 'DQ', 'VAR_POISSON', 'WHT']


def enc(x):
    x = x.item() if isinstance(x, np.generic) else x
    if isinstance(x, float):
        if x != x:
            return 'nan'
        if x in (float('inf'), float('-inf')):
            return 'inf' if x > 0 else '-inf'
    return x


def image(rng):
    dt = np.dtype(IMAGE[rng.integers(len(IMAGE))])
    shape = tuple(int(s) for s in rng.integers(1, 8, size=int(rng.integers(1, 5))))
    if dt.kind == 'f':
        a = rng.normal(size=shape) * 10.0 ** int(rng.integers(-3, 4))
        if rng.random() < 0.3:
            a.flat[0] = np.nan
    else:
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=shape, dtype=dt.newbyteorder('='), endpoint=True)
    return a.astype(dt)


def header_cards(rng, h):
    for i in range(int(rng.integers(0, 6))):
        k = rng.random()
        if k < 0.2:
            h.add_history(f'step {i} ' + 'x' * int(rng.integers(0, 90)))
        elif k < 0.4:
            h.add_comment('a comment ' * int(rng.integers(1, 12)))
        elif k < 0.6:
            h[f'LONG{i}'] = 'a long value ' * int(rng.integers(5, 20))  # CONTINUE cards
        elif k < 0.8:
            h[f'HIERARCH ESO DET CHIP{i} NAME'] = f'chip {i}'
        else:
            h[f'KEY{i}'] = (float(rng.normal()), 'a float card')


def one(rng, path):
    hdus = [fits.PrimaryHDU(image(rng) if rng.random() < 0.3 else None)]
    header_cards(rng, hdus[0].header)
    used = {}
    for _ in range(int(rng.integers(1, 7))):
        if rng.random() < 0.2:
            n = int(rng.integers(1, 6))
            cols = [fits.Column(name='A', format='J', array=rng.integers(-1000, 1000, size=n)),
                    fits.Column(name='B', format='D', array=rng.normal(size=n)),
                    fits.Column(name='C', format='8A', array=np.array([f'r{i}' for i in range(n)]))]
            hdu = fits.BinTableHDU.from_columns(cols, name='TAB')
        else:
            name = NAMES[rng.integers(len(NAMES))] if rng.random() < 0.8 else None
            hdu = fits.ImageHDU(image(rng), name=name)
            if name is not None:
                used[name] = used.get(name, 0) + 1
                hdu.ver = used[name]
        header_cards(rng, hdu.header)
        hdus.append(hdu)
    hdul = fits.HDUList(hdus)
    tree = {'meta': {'seed_file': os.path.basename(path), 'n': int(rng.integers(0, 100)),
                     'x': float(rng.normal()), 'flag': bool(rng.random() < 0.5)}}
    for i, h in enumerate(hdul):
        if isinstance(h, (fits.ImageHDU, fits.PrimaryHDU)) and h.data is not None and h.name and rng.random() < 0.8:
            tree[f'hdu{i}'] = h.data
    for i in range(int(rng.integers(0, 3))):
        tree[f'own{i}'] = image(rng)
    ff = fits_embed.AsdfInFits(hdul, tree)
    ff.write_to(path, use_image_hdu=bool(rng.random() < 0.5))
    # What asdf 2.15 reads back, and astropy for the arrays that are HDUs.
    out = {}
    with fits_embed.AsdfInFits.open(path) as back, fits.open(path) as raw:
        for k, v in back.tree.items():
            if isinstance(v, np.ndarray) or hasattr(v, '__array__') and k != 'meta':
                a = np.asarray(v)
                if k.startswith('hdu'):
                    direct = raw[int(k[3:])].data
                    if not np.array_equal(a, direct, equal_nan=True):
                        raise SystemExit(f'{path} /{k}: asdf 2.15 and astropy disagree')
                out['/' + k] = {'shape': list(a.shape), 'values': [enc(x) for x in a.ravel()]}
        out['/meta/n'] = {'scalar': back.tree['meta']['n']}
        out['/meta/x'] = {'scalar': enc(back.tree['meta']['x'])}
        out['/meta/flag'] = {'scalar': back.tree['meta']['flag']}
    return out


def main():
    d, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(seed)
    expected = {}
    for i in range(n):
        p = os.path.join(d, f'r{i:05}.fits')
        try:
            expected[os.path.basename(p)] = one(rng, p)
        except SystemExit:
            raise
        except Exception as e:  # noqa: BLE001 - a file asdf 2.15 could not write: counted
            print(f'{p}: not written: {type(e).__name__}: {e}', file=sys.stderr)
            if os.path.exists(p):
                os.remove(p)
    with open(os.path.join(d, 'expected.json'), 'w') as f:
        json.dump(expected, f)
    print(len(expected))


main()
