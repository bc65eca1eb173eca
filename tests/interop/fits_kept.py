"""FITS files whose other HDUs must survive a rewrite, for tests/tests/interop.rs.

    fits_kept.py make PATH           a FITS file made by astropy: a primary header with cards,
                                     an image SCI (named by the ASDF tree), an unnamed image, a
                                     BINTABLE, and the ASDF HDU (Appendix A's IMAGE form)
    fits_kept.py compare A B         astropy opens both: every HDU but ASDF has the same header
                                     cards (CHECKSUM/DATASUM aside) and data; prints "SAME" or
                                     what differs, exit 1 when something does
"""
import sys

import numpy as np
from astropy.io import fits


def make(path):
    pri = fits.PrimaryHDU()
    pri.header['OBSERVER'] = ('someone', 'who looked')
    pri.header['HISTORY'] = 'made by fits_kept.py'
    sci = fits.ImageHDU(np.arange(12, dtype='>f4').reshape(3, 4), name='SCI')
    sci.header['FOO'] = (3, 'a card nobody reads')
    unnamed = fits.ImageHDU(np.array([[1, -2], [3, 4]], dtype='>i2'))
    tab = fits.BinTableHDU.from_columns([fits.Column(name='a', format='J', array=np.array([1, 2, 3]))], name='TAB')
    tree = ("#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
            "sci: !core/ndarray-1.0.0\n  source: fits:SCI,1\n  datatype: float32\n  byteorder: big\n  shape: [3, 4]\n...\n")
    asdf = fits.ImageHDU(np.frombuffer(tree.encode(), dtype=np.uint8), name='ASDF')
    fits.HDUList([pri, sci, unnamed, tab, asdf]).writeto(path, overwrite=True)


def compare(a, b):
    with fits.open(a) as fa, fits.open(b) as fb:
        bad = []
        if len(fa) != len(fb):
            bad.append(f'{len(fa)} HDUs against {len(fb)}')
        for i, (ha, hb) in enumerate(zip(fa, fb)):
            if ha.name == 'ASDF' or hb.name == 'ASDF':
                if ha.name != hb.name:
                    bad.append(f'HDU {i}: {ha.name} against {hb.name}')
                continue
            skip = ('CHECKSUM', 'DATASUM')
            ka = [(c.keyword, c.value) for c in ha.header.cards if c.keyword not in skip]
            kb = [(c.keyword, c.value) for c in hb.header.cards if c.keyword not in skip]
            if ka != kb:
                bad.append(f'HDU {i} ({ha.name}): cards differ: {set(ka) ^ set(kb)}')
            if (ha.data is None) != (hb.data is None) or (ha.data is not None and not np.array_equal(ha.data, hb.data)):
                bad.append(f'HDU {i} ({ha.name}): data differs')
    print('SAME' if not bad else '\n'.join(bad))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    {'make': make, 'compare': compare}[sys.argv[1]](*sys.argv[2:])
