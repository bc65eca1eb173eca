"""Reference values of gwcs (the Python implementation) for the WCS differential suite
(tests/tests/wcs.rs).

`wcs_reference.py random OUT N SEED` writes N files OUT/random-K.asdf: a gwcs WCS at /wcs built
from a random pipeline of astropy.modeling transforms (every transform asdf-rs evaluates, random
parameters, compositions, mappings, bounding boxes and units), written by Python asdf, beside the
points gwcs evaluated: /pixel (one row per pixel axis), /world (gwcs's `wcs(*pixel)`), /back
(gwcs's `wcs.invert(*world)`) or /back_error (why gwcs did not invert), and /kind (what was drawn).

`wcs_reference.py files OUT FILE...` reads the WCS nodes of each FILE (the gwcs, jwst and dkist
packages' data) and writes OUT/file-K.asdf with /source (the file), /pointer (the node), /pixel,
/world, /back as above.

Prints how many files it wrote and how many points they hold.
"""
import sys
import warnings

import asdf
import numpy as np
from astropy import coordinates as coord
from astropy import units as u
from astropy.modeling import models as m
from gwcs import coordinate_frames as cf
from gwcs import geometry
from gwcs import wcs as gwcs_wcs

warnings.simplefilter("ignore")

N_POINTS = 400

PROJECTIONS = [
    m.Pix2Sky_Gnomonic,
    m.Pix2Sky_ZenithalEquidistant,
    m.Pix2Sky_Stereographic,
    m.Pix2Sky_ZenithalEqualArea,
    m.Pix2Sky_SlantOrthographic,
    m.Pix2Sky_PlateCarree,
    m.Pix2Sky_Mercator,
    m.Pix2Sky_CylindricalEqualArea,
    m.Pix2Sky_SansonFlamsteed,
    m.Pix2Sky_HammerAitoff,
]


def det_frame(n, unit=None):
    if n == 2:
        return cf.Frame2D(name="detector", axes_names=("x", "y"), unit=(u.pix, u.pix) if unit else None)
    return cf.CoordinateFrame(
        naxes=n,
        axes_type=["PIXEL"] * n,
        axes_order=tuple(range(n)),
        name="detector",
        unit=[u.pix] * n if unit else None,
    )


def sky_frame():
    return cf.CelestialFrame(reference_frame=coord.ICRS(), name="world", unit=(u.deg, u.deg))


def linear_2d(rng, units=False):
    """A random 2-D linear part: shifts, scales, rotation, affine, polynomials, mappings."""
    parts = []
    for _ in range(int(rng.integers(1, 4))):
        k = rng.integers(0, 7)
        if k == 0:
            parts.append(m.Shift(rng.normal() * 100) & m.Shift(rng.normal() * 100))
        elif k == 1:
            parts.append(m.Scale(rng.uniform(0.5, 2)) & m.Scale(rng.uniform(0.5, 2)))
        elif k == 2:
            parts.append(m.Rotation2D(rng.uniform(-180, 180)))
        elif k == 3:
            a = rng.normal(size=(2, 2)) + np.eye(2) * 2
            parts.append(m.AffineTransformation2D(matrix=a, translation=rng.normal(size=2)))
        elif k == 4:
            parts.append(m.Multiply(rng.uniform(0.5, 2)) & m.Linear1D(rng.uniform(0.5, 2), rng.normal()))
        elif k == 5:
            parts.append(m.Mapping((1, 0)))
        else:
            parts.append(m.Identity(2))
    t = parts[0]
    for p in parts[1:]:
        t = t | p
    return t


def distortion(rng):
    """A polynomial distortion (no analytic inverse), as JWST's, with or without domain/window;
    an explicit inverse attached half the time."""
    deg = int(rng.integers(1, 5))

    def poly():
        kw = {}
        if rng.random() < 0.5:
            kw = {"x_domain": (-1000, 1000), "y_domain": (-1000, 1000)}
            if rng.random() < 0.5:
                kw.update({"x_window": (-1, 1), "y_window": (-2, 2)})
        p = m.Polynomial2D(deg, **kw)
        # A distortion as real ones are: each order smaller than the last over the detector.
        # With a domain mapped to (-1, 1), the coefficients are in pixels per unit of the
        # window (about 1000); without, per pixel.
        out = 1000.0 if kw else 1.0
        scale = 1.0 if kw else 1000.0
        for name in p.param_names:
            i, j = (int(v) for v in name[1:].split("_"))
            setattr(p, name, out * rng.normal() * 1e-3 / scale ** max(i + j - 1, 0))
        p.c1_0 = out * (1.0 + rng.normal() * 1e-3)
        return p, out

    (px, _), (py, out_y) = poly(), poly()
    py.c1_0 = 0.0
    py.c0_1 = out_y * (1.0 + rng.normal() * 1e-3)
    d = m.Mapping((0, 1, 0, 1)) | (px & py)
    if rng.random() < 0.5:
        # An approximate inverse as JWST's files carry (evaluated as written).
        d.inverse = m.Mapping((0, 1, 0, 1)) | (m.Polynomial2D(1, c1_0=1.0) & m.Polynomial2D(1, c0_1=1.0))
    return d


def projection(rng, k=None):
    k = int(rng.integers(len(PROJECTIONS))) if k is None else k
    if PROJECTIONS[k] is m.Pix2Sky_CylindricalEqualArea:
        return PROJECTIONS[k](lam=rng.uniform(0.3, 1.5))
    return PROJECTIONS[k]()


def celestial(rng, units=False):
    proj = projection(rng)
    lon = rng.uniform(0, 360)
    lat = rng.uniform(-89, 89)
    pole = 180.0 if rng.random() < 0.7 else rng.uniform(0, 360)
    return proj | m.RotateNative2Celestial(lon, lat, pole)


def imaging(rng):
    """pixel -> (distortion) -> linear -> degrees -> projection -> sky."""
    t = linear_2d(rng)
    kind = "imaging"
    if rng.random() < 0.4:
        t = distortion(rng) | t
        kind += "+distortion"
    # A field of at most a few degrees (a map of the sphere that does not fold over it).
    scale = rng.uniform(1e-5, 1e-3)
    t = t | (m.Scale(scale) & m.Scale(scale))
    if rng.random() < 0.25:
        # JWST's v2v3 to sky: spherical <-> cartesian and a sequence of rotations.
        ang = list(rng.uniform(-180, 180, size=5))
        t = (
            t
            | geometry.SphericalToCartesian(wrap_lon_at=180)
            | m.RotationSequence3D(ang, axes_order="zyxyz")
            | geometry.CartesianToSpherical(wrap_lon_at=360)
        )
        kind += "+v2v3"
    elif rng.random() < 0.2:
        t = t | m.SphericalRotationSequence(list(rng.uniform(-90, 90, size=3)), axes_order="zxz")
        t = t | m.RotateCelestial2Native(rng.uniform(0, 360), rng.uniform(-80, 80), 180.0)
        t = t | celestial(rng).right.inverse | celestial(rng)
        kind += "+rotations"
        if rng.random() < 0.5:
            axes = "".join(rng.choice(list("xyz"), size=3))
            t = t | m.EulerAngleRotation(*rng.uniform(-180, 180, size=3), axes_order=axes)
            kind += "+euler"
        if rng.random() < 0.5:
            # A reprojection: back to a plane by one projection, to the sphere by another.
            k = int(rng.integers(len(PROJECTIONS)))
            p = projection(rng, k)
            t = t | m.RotateCelestial2Native(rng.uniform(0, 360), rng.uniform(-30, 80), 180.0) | p.inverse
            t = t | p | m.RotateNative2Celestial(rng.uniform(0, 360), rng.uniform(-80, 80), 180.0)
            kind += "+sky2pix"
    else:
        t = t | celestial(rng)
        kind += "+celestial"
    return t, det_frame(2), sky_frame(), kind


def imaging_units(rng):
    """DKIST's form: shifts in pixels, a scale in arcsec/pix, an affine in arcsec, a projection
    and a rotation whose angles are quantities; a spectral and a temporal axis beside."""
    scale = rng.uniform(0.01, 1.0) * u.arcsec / u.pix
    a = rng.normal(size=(2, 2)) * 0.1 + np.eye(2)
    sky = (
        (m.Shift(rng.normal() * 100 * u.pix) & m.Shift(rng.normal() * 100 * u.pix))
        | (m.Multiply(scale) & m.Multiply(scale))
        | m.AffineTransformation2D(matrix=a * u.arcsec, translation=[0, 0] * u.arcsec)
        | m.Pix2Sky_Gnomonic()
        | m.RotateNative2Celestial(
            rng.uniform(-1000, 1000) * u.arcsec, rng.uniform(-1000, 1000) * u.arcsec, 180 * u.deg
        )
    )
    kind = "units"
    n = 2
    frames = [cf.CelestialFrame(reference_frame=coord.ICRS(), name="sky", unit=(u.arcsec, u.arcsec), axes_order=(0, 1))]
    t = sky
    if rng.random() < 0.5:
        t = t & m.Linear1D(rng.uniform(0.001, 0.1) * u.nm / u.pix, rng.uniform(300, 900) * u.nm)
        frames.append(cf.SpectralFrame(axes_order=(2,), unit=(u.nm,), name="wavelength"))
        n += 1
        kind += "+spectral"
    if rng.random() < 0.5:
        pts = np.arange(20) * u.pix
        lut = np.cumsum(rng.uniform(1, 10, size=20)) * u.s
        t = t & m.Tabular1D(pts, lut, bounds_error=False, fill_value=np.nan * u.s)
        frames.append(cf.TemporalFrame(coord.Time("2022-09-27T02:16:18"), axes_order=(n,), unit=(u.s,), name="time"))
        n += 1
        kind += "+temporal"
    out = frames[0] if len(frames) == 1 else cf.CompositeFrame(frames, name="world")
    return t, det_frame(n, unit=True), out, kind


def spectral(rng):
    k = rng.integers(0, 4)
    if k == 0:
        pts = np.sort(rng.uniform(0, 100, size=30))
        lut = np.cumsum(rng.uniform(0.1, 3, size=30)) * (1 if rng.random() < 0.5 else -1)
        t = m.Tabular1D(points=pts, lookup_table=lut, bounds_error=False, method="linear" if rng.random() < 0.7 else "nearest")
        kind = "tabular1d"
    elif k == 1:
        t = m.Polynomial1D(3, c0=500, c1=rng.uniform(0.1, 1), c2=rng.normal() * 1e-4, c3=rng.normal() * 1e-7)
        if rng.random() < 0.5:
            t = m.Polynomial1D(2, c0=1, c1=2, c2=0.5, domain=(0, 100), window=(-1, 1)) | m.Shift(3)
        kind = "polynomial1d"
    elif k == 2:
        t = m.Shift(rng.normal()) | m.Linear1D(rng.uniform(0.5, 2), rng.normal()) | m.Scale(3.0)
        kind = "linear1d"
    else:
        t = (m.Shift(1.0) + m.Scale(2.0)) | (m.Multiply(3.0) * m.Shift(-1)) | (m.Shift(2) / m.Const1D(4.0))
        t = t | (m.Identity(1) - m.Const1D(0.5)) | (m.Scale(0.01) ** m.Const1D(2.0))
        kind = "arithmetic"
    frame = cf.SpectralFrame(name="spectral", unit=(u.um,), axes_names=("lambda",))
    return t, det_frame(1), frame, kind


def table2d(rng):
    shape = (int(rng.integers(3, 9)), int(rng.integers(3, 9)))
    pts = (np.sort(rng.uniform(0, 50, size=shape[0])), np.sort(rng.uniform(0, 50, size=shape[1])))
    lut = rng.normal(size=shape)
    method = "linear" if rng.random() < 0.6 else "nearest"
    fixed = {"y": 3.5} if rng.random() < 0.5 else {0: 2.5}
    t = m.Mapping((0, 1, 0, 1, 0, 1)) | (
        m.Tabular2D(points=pts, lookup_table=lut, bounds_error=False, fill_value=-1.0, method=method)
        & m.fix_inputs(m.Polynomial2D(2, c0_0=1, c1_0=0.5, c0_1=0.25, c1_1=0.01), fixed)
        & m.Const2D(7.0)
    )
    frame = cf.CoordinateFrame(naxes=3, axes_type=["CUSTOM"] * 3, axes_order=(0, 1, 2), name="out", unit=[u.one] * 3)
    return t, det_frame(2), frame, "tabular2d+fix_inputs+constant"


def random_wcs(rng):
    k = rng.random()
    if k < 0.5:
        t, fin, fout, kind = imaging(rng)
    elif k < 0.65:
        t, fin, fout, kind = imaging_units(rng)
    elif k < 0.9:
        t, fin, fout, kind = spectral(rng)
    else:
        t, fin, fout, kind = table2d(rng)
    n = t.n_inputs
    if rng.random() < 0.6:
        bb = []
        for _ in range(n):
            lo = rng.uniform(-10, 50)
            bb.append((lo, lo + rng.uniform(10, 2000)))
        if n == 1:
            bb = bb[0]
        try:
            t.bounding_box = bb
            kind += "+bbox"
        except Exception:
            t.bounding_box = None
    w = gwcs_wcs.WCS([(fin, t), (fout, None)])
    return w, kind


def points(rng, w, n):
    bb = w.bounding_box
    cols = []
    for i in range(w.pixel_n_dim):
        if bb is not None:
            lo, hi = (bb[i] if w.pixel_n_dim > 1 else bb.bounding_box())
            lo, hi = float(getattr(lo, "value", lo)), float(getattr(hi, "value", hi))
            span = hi - lo
            c = rng.uniform(lo - 0.1 * span, hi + 0.1 * span, size=n)
        else:
            c = rng.uniform(-20, 2100, size=n)
        cols.append(c)
    return cols


def values(x):
    return np.asarray(getattr(x, "value", x), dtype=float)


def evaluate(w, pix):
    res = {"pixel": np.array(pix)}
    try:
        world = w(*pix)
    except Exception as e:  # noqa: BLE001
        res["forward_error"] = f"{type(e).__name__}: {e}"
        return res
    if w.world_n_dim == 1:
        world = (world,)
    world = np.array([values(c) for c in world])
    res["world"] = world
    try:
        w.backward_transform
    except NotImplementedError:
        # gwcs inverts this WCS numerically (to its tolerance, 1e-5 pixels).
        res["numerical"] = True
    try:
        back = w.invert(*world)
        if w.pixel_n_dim == 1:
            back = (back,)
        res["back"] = np.array([values(c) for c in back])
        if res.get("numerical"):
            # Where gwcs's iteration did not converge its answer does not map back to the world
            # coordinates it was given: those points are marked (compared by round trip only).
            again = w(*res["back"], with_bounding_box=False)
            if w.world_n_dim == 1:
                again = (again,)
            d = np.abs(np.array([values(c) for c in again]) - world)
            d = np.minimum(d, np.abs(360 - d))
            res["back_ok"] = np.all((d < 1e-7) | np.isnan(d), axis=0)
    except Exception as e:  # noqa: BLE001
        res["back_error"] = f"{type(e).__name__}: {e}"
    return res


def random_files(out, n, seed):
    rng = np.random.default_rng(seed)
    written = points_total = 0
    for k in range(n):
        for _attempt in range(20):
            try:
                w, kind = random_wcs(rng)
                pix = points(rng, w, N_POINTS)
                res = evaluate(w, pix)
                if "forward_error" in res:
                    continue
                tree = {"wcs": w, "kind": kind, **res}
                asdf.AsdfFile(tree).write_to(f"{out}/random-{k}.asdf")
                # gwcs reads back what it wrote and gives the same values.
                with asdf.open(f"{out}/random-{k}.asdf") as af:
                    again = evaluate(af["wcs"], pix)
                    if not np.array_equal(again["world"], res["world"], equal_nan=True):
                        continue
                break
            except Exception:  # noqa: BLE001
                continue
        else:
            raise SystemExit(f"no random WCS could be written for file {k}")
        written += 1
        points_total += N_POINTS
    print(written, points_total)


def find_wcs(node, path=""):
    """The JSON pointers of the gwcs WCS nodes of a raw tagged tree."""
    tag = getattr(node, "_tag", None)
    if isinstance(tag, str) and tag.startswith("tag:stsci.edu:gwcs/wcs-"):
        yield path
        return
    if isinstance(node, dict):
        for key, v in node.items():
            yield from find_wcs(v, f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from find_wcs(v, f"{path}/{i}")


def wcs_at(af, pointer):
    """The gwcs object at `pointer` of the converted tree: mappings and lists by key and index,
    other objects (dkist's datasets) by attribute."""
    obj = af.tree
    for tok in pointer.split("/")[1:]:
        tok = tok.replace("~1", "/").replace("~0", "~")
        if isinstance(obj, dict):
            obj = obj[tok]
        elif isinstance(obj, (list, tuple)):
            obj = obj[int(tok)]
        elif hasattr(obj, tok):
            obj = getattr(obj, tok)
        else:
            return None
    return obj if isinstance(obj, gwcs_wcs.WCS) else None


def file_refs(out, files):
    rng = np.random.default_rng(1)
    written = points_total = 0
    for path in files:
        if path.endswith(".fits"):
            # ASDF in FITS: read by the data model package (Python asdf reads no FITS).
            from stdatamodels.jwst import datamodels as dm

            with dm.open(path) as model:
                w = model.meta.wcs
                pix = points(rng, w, N_POINTS)
                res = evaluate(w, pix)
            asdf.AsdfFile({"source": path, "pointer": "/meta/wcs", **res}).write_to(f"{out}/file-{written}.asdf")
            written += 1
            points_total += N_POINTS
            continue
        with asdf.open(path, lazy_load=False, memmap=False) as af:
            raw = asdf.util.load_yaml(path, tagged=True)
            for pointer in find_wcs(raw):
                w = wcs_at(af, pointer)
                if w is None:
                    print(f"unreachable {path}#{pointer}", file=sys.stderr)
                    continue
                if w.bounding_box is None and getattr(w, "pixel_shape", None):
                    pix = [rng.uniform(-0.5, s - 0.5, size=N_POINTS) for s in w.pixel_shape]
                else:
                    pix = points(rng, w, N_POINTS)
                res = evaluate(w, pix)
                tree = {"source": path, "pointer": pointer, **res}
                asdf.AsdfFile(tree).write_to(f"{out}/file-{written}.asdf")
                written += 1
                points_total += N_POINTS
    print(written, points_total)


def makers(out):
    """Files the pipelines' data model packages make: a Roman level 2 image
    (roman_datamodels' fake data: its WCS is a TAN projection), and a JWST image model
    (stdatamodels) carrying gwcs's NIRCam WCS, as ASDF and as FITS with its ASDF extension."""
    import pathlib

    import roman_datamodels.datamodels as rdm
    from stdatamodels.jwst import datamodels as dm

    rdm.ImageModel.create_fake_data(shape=(8, 64, 64)).save(f"{out}/roman_image.asdf")
    w = asdf.open(pathlib.Path(gwcs_wcs.__file__).parent.parent / "tests" / "data" / "nircamwcs.asdf")["wcs"]
    for ext in ("asdf", "fits"):
        j = dm.ImageModel((64, 64))
        j.meta.wcs = w
        j.save(f"{out}/jwst_image.{ext}")
    print(3, 0)


if __name__ == "__main__":
    if sys.argv[1] == "makers":
        makers(sys.argv[2])
    elif sys.argv[1] == "random":
        random_files(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        file_refs(sys.argv[2], sys.argv[3:])
