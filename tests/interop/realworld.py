"""The real-world interop suite's Python half (tests/tests/realworld.rs is the other).

    realworld.py make OUTDIR [CONFORMANCE]
                                 collects the .asdf files that the installed packages' wheels ship,
                                 writes files with the packages' own APIs, dumps the schema
                                 resources the packages register with asdf; prints a JSON list of
                                 {"path", "origin"}
    realworld.py dump LIST OUT   for each file named in the JSON list LIST: what Python asdf 6.0
                                 reads (the tree with only asdf's core converters, arrays by
                                 value), its verdict on validation with every installed extension,
                                 and the warnings a full open gives; written to OUT as JSON

Nothing here decides whether we agree: the Rust test compares.
"""
import datetime, glob, hashlib, importlib.metadata, json, math, os, shutil, sys, traceback, warnings

import numpy as np
import asdf
from core_only import core_only, enc_scalar

# Packages whose wheels ship .asdf files: the suite collects them all.
SHIPPING = ['asdf', 'gwcs', 'sunpy', 'reproject', 'dkist', 'stdatamodels', 'roman_datamodels', 'specutils',
            'ndcube', 'asdf_astropy', 'asdf_zarr', 'rad', 'docs']


def site_packages():
    return os.path.dirname(os.path.dirname(asdf.__file__))


def collect(outdir, files):
    sp = site_packages()
    for pkg in SHIPPING:
        for p in sorted(glob.glob(os.path.join(sp, pkg, '**', '*.asdf'), recursive=True)):
            rel = os.path.relpath(p, sp)
            dst = os.path.join(outdir, 'shipped', rel.replace(os.sep, '__'))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(p, dst)
            files.append({'path': dst, 'origin': f'{pkg} wheel: {rel}'})


def collect_conformance(conformance, outdir, files):
    """The standard's reference files (every version) and Python asdf's samples: the older
    ones are where default filling shows."""
    for sub in ['asdf-standard/reference_files', 'python-asdf-samples']:
        root = os.path.join(conformance, sub)
        for p in sorted(glob.glob(os.path.join(root, '**', '*.asdf'), recursive=True)):
            rel = os.path.relpath(p, conformance)
            if 'exploded0' in rel:
                continue  # a block file of an exploded sample, not a file of its own
            files.append({'path': p, 'origin': f'conformance: {rel}'})


def written(outdir, files, name, origin, make):
    """Runs make(path); a failure is reported as an entry with an error, never hidden."""
    path = os.path.join(outdir, 'written', name + '.asdf')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            make(path)
        files.append({'path': path, 'origin': origin})
    except Exception:
        files.append({'path': path, 'origin': origin, 'make_error': traceback.format_exc(limit=3)})


def write_tree(tree, **kw):
    def make(path):
        asdf.AsdfFile(tree).write_to(path, **kw)
    return make


def make_files(outdir):
    files = []
    collect(outdir, files)

    import astropy.units as u
    from astropy.table import Table, QTable, MaskedColumn
    from astropy.time import Time
    from astropy.coordinates import SkyCoord, EarthLocation, Angle
    from astropy.modeling import models

    rng = np.random.default_rng(7)

    def jwst(path):
        from stdatamodels.jwst import datamodels
        m = datamodels.ImageModel((16, 12))
        m.data[...] = rng.random((16, 12), dtype=np.float32)
        m.dq = np.zeros((16, 12), dtype=np.uint32)
        m.dq[3, 4] = 1
        m.err = np.full((16, 12), 0.5, dtype=np.float32)
        m.meta.instrument.name = 'NIRCAM'
        m.meta.instrument.detector = 'NRCA1'
        m.meta.exposure.type = 'NRC_IMAGE'
        m.meta.observation.date = '2024-01-02'
        m.meta.target.ra = 53.1
        m.save(path)
    written(outdir, files, 'jwst_image', 'stdatamodels: ImageModel.save', jwst)

    def jwst_table(path):
        from stdatamodels.jwst import datamodels
        m = datamodels.MultiSpecModel()
        spec = datamodels.SpecModel()
        n = 7
        tab = np.zeros(n, dtype=spec.get_dtype('spec_table'))
        tab['WAVELENGTH'] = np.linspace(1, 2, n)
        tab['FLUX'] = rng.random(n)
        spec.spec_table = tab
        m.spec.append(spec)
        m.meta.instrument.name = 'NIRSPEC'
        m.save(path)
    written(outdir, files, 'jwst_multispec', 'stdatamodels: MultiSpecModel (table) .save', jwst_table)

    def roman(path):
        import roman_datamodels.datamodels as rdm
        m = rdm.ImageModel.create_fake_data(shape=(8, 8))
        m.save(path)
    written(outdir, files, 'roman_image', 'roman_datamodels: ImageModel.create_fake_data().save', roman)

    def a_wcs():
        from gwcs import wcs, coordinate_frames as cf
        from astropy.coordinates import ICRS
        pix = (models.Shift(-10.5) & models.Shift(-13.2)) | (models.Scale(0.01) & models.Scale(0.04))
        tan = models.Pix2Sky_TAN()
        rot = models.RotateNative2Celestial(5.63, -72.05, 180)
        det = cf.Frame2D(name='detector', axes_names=('x', 'y'), unit=(u.pix, u.pix))
        sky = cf.CelestialFrame(reference_frame=ICRS(), name='icrs', unit=(u.deg, u.deg))
        return wcs.WCS([(det, pix | tan | rot), (sky, None)])
    written(outdir, files, 'gwcs_imaging', 'gwcs: WCS pipeline', lambda p: write_tree({'wcs': a_wcs()})(p))

    def astropy_objects(path):
        t = QTable()
        t['a'] = [1, 2, 3] * u.m
        t['b'] = MaskedColumn([1.5, 2.5, 3.5], mask=[False, True, False])
        t['c'] = ['x', 'yy', 'zzz']
        t.meta['origin'] = 'asdf-rs suite'
        tree = {
            'table': t,
            'plain_table': Table({'x': np.arange(4), 'y': np.arange(4.0) ** 2}),
            'quantity': np.linspace(0, 1, 5) * u.km / u.s,
            'scalar_quantity': 3.5 * u.Jy,
            'time': Time('2024-03-01T12:00:00.5', scale='utc'),
            'times': Time([59000.5, 59001.25], format='mjd', scale='tdb'),
            'skycoord': SkyCoord(ra=[10.1, 11.2] * u.deg, dec=[-5.0, 3.3] * u.deg, frame='icrs'),
            'galactic': SkyCoord(l=1 * u.deg, b=2 * u.deg, frame='galactic'),
            'location': EarthLocation.from_geodetic(-70.4 * u.deg, -24.6 * u.deg, 2635 * u.m),
            'angle': Angle([1, 2, 3], unit=u.hourangle),
            'model': models.Gaussian1D(1, 0, 0.2) + models.Polynomial1D(2, c0=1, c1=2, c2=3),
            'unit': u.erg / u.s / u.cm ** 2,
        }
        asdf.AsdfFile(tree).write_to(path)
    written(outdir, files, 'astropy_objects', 'asdf-astropy: Table, Quantity, Time, SkyCoord, models', astropy_objects)

    def spectrum(path):
        import specutils
        from astropy.nddata import StdDevUncertainty
        cls = getattr(specutils, 'Spectrum', None) or specutils.Spectrum1D
        s = cls(flux=rng.random(20) * u.Jy, spectral_axis=np.linspace(400, 700, 20) * u.nm,
                uncertainty=StdDevUncertainty(rng.random(20) * 0.1))
        asdf.AsdfFile({'spectrum': s}).write_to(path)
    written(outdir, files, 'specutils_spectrum', 'specutils: Spectrum', spectrum)

    def sunpy_map(path):
        import sunpy.map
        from astropy.coordinates import SkyCoord as SC
        from sunpy.coordinates import frames
        ref = SC(0 * u.arcsec, 0 * u.arcsec, obstime='2024-01-01T00:00:00',
                 observer='earth', frame=frames.Helioprojective)
        data = rng.random((12, 10))
        header = sunpy.map.make_fitswcs_header(data, ref, scale=[2, 2] * u.arcsec / u.pix,
                                               instrument='asdf-rs', wavelength=171 * u.angstrom)
        asdf.AsdfFile({'map': sunpy.map.Map(data, header)}).write_to(path)
    written(outdir, files, 'sunpy_map', 'sunpy: GenericMap', sunpy_map)

    def ndcube(path):
        from ndcube import NDCube
        w = a_wcs()
        w.bounding_box = None
        cube = NDCube(rng.random((6, 5)), wcs=w, unit=u.ct, meta={'note': 'asdf-rs'})
        asdf.AsdfFile({'cube': cube}).write_to(path)
    written(outdir, files, 'ndcube', 'ndcube: NDCube with a gwcs', ndcube)

    def zarr_internal(path):
        import zarr, asdf_zarr.storage
        z = zarr.creation.create((6, 9), chunks=(2, 3), dtype='f8', compressor=None)
        z[:] = np.arange(54, dtype='f8').reshape(6, 9)
        asdf.AsdfFile({'zarr': asdf_zarr.storage.to_internal(z)}).write_to(path)
    written(outdir, files, 'asdf_zarr', 'asdf-zarr: chunked array in internal blocks', zarr_internal)

    # Every compression Python asdf writes, with asdf-compression's.
    base = np.arange(3000, dtype='<f8').reshape(30, 100) / 7
    for label in ['zlib', 'bzp2', 'lz4', 'blsc', 'lz4f', 'zstd']:
        def comp(path, label=label):
            af = asdf.AsdfFile({'data': base.copy(), 'ints': np.arange(1000, dtype='>i4'),
                                'bytes': np.frombuffer(b'asdf-rs ' * 100, dtype='u1').copy()})
            af.write_to(path, all_array_compression=label)
        written(outdir, files, f'compression_{label}', f'asdf{"-compression" if label in ("blsc", "lz4f", "zstd") else ""}: {label}', comp)

    return files


def dump_resources(outdir):
    """The schema documents the installed packages register, one file each (as the CLI's
    validate --python-resources does)."""
    d = os.path.join(outdir, 'resources')
    os.makedirs(d, exist_ok=True)
    rm = asdf.get_config().resource_manager
    for uri in rm:
        name = hashlib.sha1(uri.encode()).hexdigest() + '.yaml'
        with open(os.path.join(d, name), 'wb') as f:
            f.write(rm[uri])


# ---- dump -------------------------------------------------------------------------------------

def enc(raw, conv, full=None):
    """The tree with every tag as written (`raw`, read with _force_raw_types) and the values of
    asdf's core converters for arrays, integers and complex numbers (`conv`, the same tree read
    with only asdf's own extensions); chunked arrays (asdf-zarr's) with the values that every
    installed extension reads (`full`, the tree of Python asdf's default open)."""
    from asdf.tags.core.ndarray import NDArrayType
    tag = getattr(raw, '_tag', None)
    if tag and tag.startswith('asdf://asdf-format.org/zarr/tags/zarr-') and hasattr(full, 'chunks'):
        a = np.asarray(full[...])
        return {'chunked': {'shape': list(a.shape), 'values': [enc_scalar(v) for v in a.ravel()]}}
    if tag and tag.startswith('tag:stsci.edu:asdf/core/ndarray-') and isinstance(conv, (NDArrayType, np.ndarray)):
        a = conv[...] if isinstance(conv, NDArrayType) else conv
        m = np.ma.getmaskarray(a).ravel().tolist() if np.ma.isMaskedArray(a) else None
        keys = sorted(str(k) for k in raw) if isinstance(raw, dict) else None
        return {'ndarray': {'shape': list(np.shape(a)), 'keys': keys,
                            'values': [enc_scalar(v) for v in np.asarray(a).ravel()], 'mask': m}}
    if tag and tag.startswith('tag:stsci.edu:asdf/core/integer-'):
        return {'integer': str(int(conv))}
    if tag and tag.startswith('tag:stsci.edu:asdf/core/complex-'):
        return {'value': enc_scalar(conv)}
    if isinstance(raw, dict):
        sub = conv if isinstance(conv, dict) else {}
        fsub = full if isinstance(full, dict) else {}
        return {'tag': tag, 'map': [[enc(k, k), enc(v, sub.get(k), fsub.get(k))] for k, v in raw.items()]}
    if isinstance(raw, (list, tuple)):
        sub = conv if isinstance(conv, (list, tuple)) and len(conv) == len(raw) else [None] * len(raw)
        fsub = full if isinstance(full, (list, tuple)) and len(full) == len(raw) else [None] * len(raw)
        return {'tag': tag, 'seq': [enc(v, c, f) for v, c, f in zip(raw, sub, fsub)]}
    if isinstance(raw, str):
        return {'tag': tag, 'str': str(raw)}
    if isinstance(raw, (datetime.datetime, datetime.date)):
        return {'timestamp': str(raw)}
    if isinstance(raw, bytes):
        return {'binary': raw.hex()}
    if raw is None:
        return {'null': None}
    if isinstance(raw, (bool, int, float, complex, np.generic)):
        return {'value': enc_scalar(raw)}
    return {'unknown': type(raw).__name__}


def fill_from(core, full):
    """Adds to `core` (the tree the core-only open gives) the keys `full` (the same file read
    raw with every installed package, as Python asdf's default open reads it) has and `core`
    lacks: the defaults the packages' schemas fill in files before 1.6.0 (an astropy table's
    `meta` and `qtable`)."""
    if isinstance(core, dict) and isinstance(full, dict):
        for k, v in full.items():
            if k not in core:
                core[k] = v
            else:
                fill_from(core[k], v)
    elif isinstance(core, list) and isinstance(full, list) and len(core) == len(full):
        for a, b in zip(core, full):
            fill_from(a, b)


def dump_one(path):
    out = {}
    full = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with asdf.open(path, _force_raw_types=True) as everything:
                full = everything.tree
    except Exception:
        pass
    # The values of chunked arrays, as every installed extension (asdf-zarr) reads them.
    chunked = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            default = asdf.open(path)
            chunked = default.tree
    except Exception:
        default = None
    ctx = core_only()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with asdf.open(path, _force_raw_types=True) as raw, asdf.open(path) as af:
                if full is not None:
                    fill_from(raw.tree, full)
                out['tree'] = enc(raw.tree, af.tree, chunked)
    except Exception as e:
        out['open_error'] = f'{type(e).__name__}: {str(e)[:300]}'
    finally:
        ctx.__exit__(None, None, None)
        if default is not None:
            default.close()
    # The verdict, with every installed extension (as a user of these packages has it).
    try:
        with asdf.config_context() as cfg:
            cfg.validate_on_read = True
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                with asdf.open(path, _force_raw_types=True) as af:
                    af.validate()
        out['valid'] = True
    except asdf.ValidationError as e:
        out['valid'] = False
        out['why'] = str(e).splitlines()[0][:300]
    except Exception as e:
        out['valid'] = None
        out['why'] = f'{type(e).__name__}: {str(e)[:300]}'
    # Warnings on a full open (custom objects made, arrays read).
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        try:
            with asdf.open(path, lazy_load=False, memmap=False) as af:
                asdf.treeutil.walk(af.tree, lambda n: None)
        except Exception as e:
            out['full_open_error'] = f'{type(e).__name__}: {str(e)[:300]}'
    out['warnings'] = sorted({f'{w.category.__name__}: {str(w.message).splitlines()[0][:200]}'
                              for w in ws if 'asdf_library' not in str(w.message)})
    return out


def main():
    if sys.argv[1] == 'make':
        outdir = sys.argv[2]
        files = make_files(outdir)
        if len(sys.argv) > 3:
            collect_conformance(sys.argv[3], outdir, files)
        dump_resources(outdir)
        pkgs = {}
        for name in ['asdf', 'asdf-astropy', 'astropy', 'gwcs', 'stdatamodels', 'roman_datamodels',
                     'rad', 'specutils', 'sunpy', 'ndcube', 'asdf-zarr', 'zarr', 'asdf-compression']:
            try:
                pkgs[name] = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                pkgs[name] = None
        json.dump({'files': files, 'packages': pkgs}, sys.stdout)
    elif sys.argv[1] == 'dump':
        paths = json.load(open(sys.argv[2]))
        json.dump({p: dump_one(p) for p in paths}, open(sys.argv[3], 'w'))
    else:
        sys.exit('usage: realworld.py make OUTDIR | dump LIST OUT')


if __name__ == '__main__':
    main()
