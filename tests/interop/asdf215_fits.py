"""ASDF in FITS as asdf 2.15's asdf.fits_embed wrote it (the last release that had it).

`write DIR`: writes DIR/old_table.fits (the ASDF_METADATA BINTABLE) and DIR/old_image.fits
(use_image_hdu=True: Appendix A's IMAGE of bytes), each with SCI (float32), DQ (uint16 under
BZERO) and a tree linking them, and DIR/old.json with the values.
`read DIR`: opens DIR/ours_*.fits (written by asdf-rs) with fits_embed and checks the arrays
against DIR/ours.json. Prints counts; exits 1 on a disagreement."""
import json, os, sys, warnings
import numpy as np
from astropy.io import fits
warnings.simplefilter('ignore')  # asdf 2.15 warns that fits_embed is deprecated
from asdf import fits_embed

mode, d = sys.argv[1], sys.argv[2]
if mode == 'write':
    sci = (np.arange(12, dtype='f4') * 0.5 - 2).reshape(3, 4)
    dq = np.array([[0, 1, 32768], [65535, 7, 8]], dtype='u2')
    for form in ('table', 'image'):
        hdul = fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(sci, name='SCI'), fits.ImageHDU(dq, name='DQ')])
        tree = {'sci': hdul['SCI'].data, 'dq': hdul['DQ'].data, 'meta': {'telescope': 'JWST', 'form': form}}
        ff = fits_embed.AsdfInFits(hdul, tree)
        ff.write_to(os.path.join(d, f'old_{form}.fits'), use_image_hdu=(form == 'image'))
    with open(os.path.join(d, 'old.json'), 'w') as f:
        json.dump({'/sci': sci.ravel().tolist(), '/dq': dq.ravel().tolist()}, f)
    print('2 files')
else:
    with open(os.path.join(d, 'ours.json')) as f:
        want = json.load(f)
    n, bad = 0, 0
    for name in sorted(os.listdir(d)):
        if not (name.startswith('ours_') and name.endswith('.fits')):
            continue
        with fits_embed.AsdfInFits.open(os.path.join(d, name)) as ff:
            for p, values in want.items():
                got = np.asarray(ff.tree[p.strip('/')]).ravel().tolist()
                if got != values:
                    print('FAIL', name, p, got, values)
                    bad += 1
                else:
                    n += 1
    print(f'{n} arrays equal, {bad} differ')
    sys.exit(1 if bad else 0)
