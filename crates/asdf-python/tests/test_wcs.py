"""`AsdfFile.wcs`: gwcs WCSs evaluated natively, against gwcs itself (the reference) on the
files the gwcs package ships and on pipelines built here; astropy objects as gwcs gives them;
refusals by name; the GIL released while points are evaluated."""
import pathlib
import threading
import time

import numpy as np
import pytest

import asdf
import asdf_rs
import gwcs
from astropy import coordinates as coord
from astropy import units as u
from astropy.modeling import models as m
from gwcs import coordinate_frames as cf
from gwcs import wcs as gwcs_wcs

DATA = pathlib.Path(gwcs.__file__).parent / "tests" / "data"


@pytest.mark.parametrize("name", ["nircamwcs.asdf", "miriwcs.asdf", "miri_lrs_wcs.asdf"])
def test_package_files_match_gwcs(name):
    path = DATA / name
    ref = asdf.open(path)["wcs"]
    with asdf_rs.open(path) as f:
        w = f.wcs()
    assert w.pixel_n_dim == ref.pixel_n_dim and w.world_n_dim == ref.world_n_dim
    rng = np.random.default_rng(3)
    bb = ref.bounding_box
    x = rng.uniform(bb[0][0] - 20, bb[0][1] + 20, 2000)
    y = rng.uniform(bb[1][0] - 20, bb[1][1] + 20, 2000)
    ours, theirs = w(x, y), ref(x, y)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        ok = ~np.isnan(b)
        assert np.max(np.abs(a[ok] - b[ok])) < 1e-9
    back, back_ref = w.invert(*theirs), ref.invert(*theirs)
    for a, b in zip(back, back_ref):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        ok = ~np.isnan(b)
        assert np.max(np.abs(a[ok] - b[ok]), initial=0) < 1e-6


def test_shapes_scalars_and_objects():
    path = DATA / "nircamwcs.asdf"
    ref = asdf.open(path)["wcs"]
    w = asdf_rs.open(path).wcs("/wcs")
    # Scalars give floats; arrays keep their shape (broadcast).
    ra, dec = w(100, 200)
    assert isinstance(ra, float) and abs(ra - ref(100, 200)[0]) < 1e-9
    grid = w(np.arange(6.0).reshape(2, 3), 100.0)
    assert grid[0].shape == (2, 3)
    assert grid[0].flags.writeable
    # Strided, transposed, big-endian, integer and unaligned inputs give what the same values
    # in a plain float64 array give (the points are read in place only when they are that).
    x = np.linspace(-5, 2050, 64).reshape(8, 8)
    y = x[::-1].T.copy()
    want = w(x.copy(), y.copy())
    buf = bytearray(8 * 64 + 1)
    unaligned = np.frombuffer(buf, dtype=np.float64, count=64, offset=1).reshape(8, 8)
    unaligned[...] = x
    assert not unaligned.flags.aligned
    for xs, ys in [(x.T.T, y), (np.asfortranarray(x), y), (x.astype(">f8"), y), (unaligned, y),
                   (np.repeat(x, 2, axis=1)[:, ::2], y)]:
        got = w(xs, ys)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    got = w(np.arange(64).reshape(8, 8), 7)
    for a, b in zip(got, w(np.arange(64.0).reshape(8, 8), np.full((8, 8), 7.0))):
        np.testing.assert_array_equal(a, b)
    # The native entry takes only C-contiguous aligned float64 buffers: anything else is a
    # Python error, never a crash.
    native = w._native
    for bad in [[b"\0" * 16, b"\0" * 16], [x[:, ::2], x[:, ::2]], [np.zeros(4, np.float32)] * 2,
                [unaligned.reshape(-1), unaligned.reshape(-1)], [1.0, 2.0], [np.zeros(3), np.zeros(4)]]:
        with pytest.raises((BufferError, ValueError, TypeError)):
            native.forward(bad)
    # Astropy objects, as gwcs's pixel_to_world gives them.
    sky = w.pixel_to_world(100, 200)
    want = ref.pixel_to_world(100, 200)
    assert isinstance(sky, coord.SkyCoord) and sky.frame.name == "icrs"
    assert sky.separation(want).to_value(u.arcsec) < 1e-5
    x, y = w.world_to_pixel(want)
    assert abs(x - 100) < 0.05 and abs(y - 200) < 0.05
    assert w.output_frame.axes_names == ("lon", "lat") and w.output_frame.unit == ("deg", "deg")
    assert w.bounding_box == ((-0.5, 2047.5), (-0.5, 2047.5))
    np.testing.assert_allclose(w.footprint(), ref.footprint(), atol=1e-9)
    assert asdf_rs.open(path).wcs_pointers() == ["/wcs"]


def test_units_and_a_composite_frame(tmp_path):
    # DKIST's form: quantities in pixels and arcseconds, a spectral axis beside the sky.
    sky = (
        (m.Shift(-10 * u.pix) & m.Shift(-20 * u.pix))
        | (m.Multiply(0.5 * u.arcsec / u.pix) & m.Multiply(0.5 * u.arcsec / u.pix))
        | m.AffineTransformation2D(matrix=np.eye(2) * u.arcsec, translation=[0, 0] * u.arcsec)
        | m.Pix2Sky_Gnomonic()
        | m.RotateNative2Celestial(30 * u.arcsec, 40 * u.arcsec, 180 * u.deg)
    )
    t = sky & m.Linear1D(0.01 * u.nm / u.pix, 500 * u.nm)
    frame = cf.CompositeFrame(
        [
            cf.CelestialFrame(reference_frame=coord.ICRS(), unit=(u.arcsec, u.arcsec), axes_order=(0, 1)),
            cf.SpectralFrame(axes_order=(2,), unit=(u.nm,)),
        ]
    )
    ref = gwcs_wcs.WCS([(cf.CoordinateFrame(3, ["PIXEL"] * 3, (0, 1, 2), unit=[u.pix] * 3, name="p"), t), (frame, None)])
    asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "u.asdf")
    w = asdf_rs.open(tmp_path / "u.asdf").wcs()
    p = [np.linspace(0, 50, 20)] * 3
    for a, b in zip(w(*p), ref(*p)):
        assert np.max(np.abs(a - b)) < 1e-9 * max(1, np.max(np.abs(b)))


def test_refused_by_name(tmp_path):
    ref = gwcs_wcs.WCS([(cf.Frame2D(name="d"), m.Gaussian1D() & m.Shift(1)), (cf.Frame2D(name="w"), None)])
    asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "g.asdf")
    with pytest.raises(NotImplementedError, match="gaussian1d"):
        asdf_rs.open(tmp_path / "g.asdf").wcs()
    asdf.AsdfFile({"a": 1}).write_to(tmp_path / "n.asdf")
    with pytest.raises(LookupError):
        asdf_rs.open(tmp_path / "n.asdf").wcs()
    w = asdf_rs.open(DATA / "nircamwcs.asdf").wcs()
    with pytest.raises(TypeError):
        w(1.0)
    # A polynomial pipeline with no inverse: gwcs inverts it numerically, and so does asdf_rs.
    poly = gwcs_wcs.WCS([(cf.Frame2D(name="d"), m.Mapping((0, 1, 0, 1)) | (m.Polynomial2D(2, c1_0=1, c0_1=0.5, c2_0=1e-4) & m.Polynomial2D(1, c0_1=1))), (cf.Frame2D(name="w"), None)])
    poly.bounding_box = ((-0.5, 99.5), (-0.5, 99.5))
    asdf.AsdfFile({"wcs": poly}).write_to(tmp_path / "p.asdf")
    w = asdf_rs.open(tmp_path / "p.asdf").wcs()
    world = poly(20.0, 30.0)
    np.testing.assert_allclose(w.invert(*world), poly.invert(*world), atol=2e-5)
    np.testing.assert_allclose(w.invert(*world), (20.0, 30.0), atol=1e-9)
    # An inverse in the file that cannot be evaluated: the forward direction still is (as gwcs).
    bad = gwcs_wcs.WCS([(cf.Frame2D(name="d"), m.Shift(1) & m.Shift(2)), (cf.Frame2D(name="w"), None)])
    bad.forward_transform.inverse = m.Gaussian1D() & m.Gaussian1D()
    asdf.AsdfFile({"wcs": bad}).write_to(tmp_path / "b.asdf")
    wb = asdf_rs.open(tmp_path / "b.asdf").wcs()
    assert wb(1.0, 1.0) == (2.0, 3.0)
    with pytest.raises(NotImplementedError, match="gaussian1d"):
        wb.invert(1.0, 1.0)


def test_projection_parameters_and_quantities(tmp_path):
    # CEA's lambda, as asdf-astropy writes it (`lam`).
    t = (m.Scale(0.01) & m.Scale(0.01)) | m.Pix2Sky_CEA(lam=0.5) | m.RotateNative2Celestial(10, 20, 180)
    ref = gwcs_wcs.WCS([(cf.Frame2D(name="d"), t), (cf.CelestialFrame(reference_frame=coord.ICRS(), name="sky", unit=(u.deg, u.deg)), None)])
    asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "cea.asdf")
    w = asdf_rs.open(tmp_path / "cea.asdf").wcs()
    x, y = np.linspace(-900, 900, 50), np.linspace(-500, 800, 50)
    for a, b in zip(w(x, y), ref(x, y)):
        assert np.max(np.abs(a - b)) < 1e-9
    # Quantities are converted to the frames' units, as gwcs converts them.
    ra, dec = ref(10.0, 20.0)
    got = w.invert(np.deg2rad(ra) * u.rad, dec * u.deg)
    # Quantities in, quantities out (as gwcs): the pixels in the input frame's unit.
    want = ref.invert(np.deg2rad(ra) * u.rad, dec * u.deg)
    assert all(isinstance(g, u.Quantity) for g in got) and [g.unit for g in got] == [x.unit for x in want]
    np.testing.assert_allclose([g.value for g in got], (10.0, 20.0), atol=1e-6)
    with pytest.raises(u.UnitConversionError):
        w.invert(1 * u.m, 1 * u.deg)


def test_objects_of_spectral_and_temporal_axes(tmp_path):
    from astropy.coordinates import SpectralCoord
    from astropy.time import Time

    t = m.Scale(0.1) & m.Shift(5.0)
    frame = cf.CompositeFrame(
        [
            cf.SpectralFrame(axes_order=(0,), unit=(u.nm,), name="wave"),
            cf.TemporalFrame(Time("2020-01-01T00:00:00"), axes_order=(1,), unit=(u.s,), name="time"),
        ]
    )
    ref = gwcs_wcs.WCS([(cf.CoordinateFrame(2, ["PIXEL"] * 2, (0, 1), unit=[u.pix] * 2, name="p"), t), (frame, None)])
    asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "st.asdf")
    w = asdf_rs.open(tmp_path / "st.asdf").wcs()
    ours, theirs = w.pixel_to_world(3.0, 4.0), ref.pixel_to_world(3.0, 4.0)
    assert isinstance(ours[0], SpectralCoord) and isinstance(ours[1], Time)
    assert abs(ours[0].to_value(u.nm) - theirs[0].to_value(u.nm)) < 1e-9
    assert abs((ours[1] - theirs[1]).to_value(u.s)) < 1e-6
    back = w.world_to_pixel(*theirs)
    np.testing.assert_allclose(back, (3.0, 4.0), atol=1e-9)


def test_the_gil_is_released_while_points_are_evaluated():
    w = asdf_rs.open(DATA / "nircamwcs.asdf").wcs()
    y, x = np.mgrid[0:1500, 0:1500].astype(float)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=tick)
    t.start()
    t0 = time.perf_counter()
    for _ in range(3):
        w(x, y)
    spent = time.perf_counter() - t0
    stop.set()
    t.join()
    # The other thread ran throughout (a held GIL would leave a gap as long as the call).
    during = [b - a for a, b in zip(ticks, ticks[1:]) if t0 <= a <= t0 + spent]
    assert during and max(during) < max(0.05, spent / 3)


def _sky_wcs(tmp_path, name, frame, transform=None):
    det = cf.Frame2D(name="detector", axes_order=(0, 1), unit=(u.pix, u.pix))
    tan = transform or ((m.Shift(-50) & m.Shift(-50)) | (m.Scale(1e-3) & m.Scale(1e-3)) | m.Pix2Sky_TAN()
                        | m.RotateNative2Celestial(30, 45, 180))
    ref = gwcs_wcs.WCS([(det, tan), (cf.CelestialFrame(reference_frame=frame, name="sky", unit=(u.deg, u.deg)), None)])
    path = tmp_path / name
    asdf.AsdfFile({"wcs": ref}).write_to(path)
    return asdf_rs.open(path).wcs(), asdf.open(path)["wcs"]


def test_review_frames_keep_their_attributes(tmp_path):
    # An FK5 frame of equinox J1975: the SkyCoord carries it, and a coordinate given in
    # another equinox is transformed to it (a review found both dropped: 1083" off).
    w, ref = _sky_wcs(tmp_path, "fk5.asdf", coord.FK5(equinox="J1975"))
    ours, theirs = w.pixel_to_world(10.0, 20.0), ref.pixel_to_world(10.0, 20.0)
    assert ours.frame.equinox == theirs.frame.equinox
    assert ours.separation(theirs).to_value(u.arcsec) < 1e-6
    other = theirs.transform_to(coord.FK5(equinox="J2000"))
    np.testing.assert_allclose(w.world_to_pixel(other), ref.world_to_pixel(other), atol=1e-6)
    # FK4: equinox and obstime (an alias in the file).
    w, ref = _sky_wcs(tmp_path, "fk4.asdf", coord.FK4(equinox="B1950"))
    assert w.pixel_to_world(3.0, 4.0).separation(ref.pixel_to_world(3.0, 4.0)).to_value(u.arcsec) < 1e-6
    # GCRS carries an observer position, which asdf_rs does not: refused by name, not dropped.
    w, ref = _sky_wcs(tmp_path, "gcrs.asdf", coord.GCRS(obstime="2020-01-01"))
    with pytest.raises(NotImplementedError, match="obsgeo"):
        w.pixel_to_world(10.0, 20.0)
    np.testing.assert_allclose(w(10.0, 20.0), ref(10.0, 20.0), atol=1e-9)


def test_review_footprint_edges_ignored_axes_and_arguments(tmp_path):
    # A world point on gwcs's footprint is inverted (our corners differ from gwcs's by ulps).
    path = DATA / "nircamwcs.asdf"
    w, ref = asdf_rs.open(path).wcs(), asdf.open(path)["wcs"]
    for corner in ref.footprint():
        np.testing.assert_allclose(w.invert(*corner), ref.invert(*corner), atol=1e-6)
    # with_bounding_box and fill_value, as gwcs takes them.
    x, y = np.array([-10.0, 100.0, 3000.0]), np.array([5.0, 100.0, 5.0])
    for kw in [dict(with_bounding_box=False), dict(fill_value=-1.0), dict(fill_value=0)]:
        for a, b in zip(w(x, y, **kw), ref(x, y, **kw)):
            np.testing.assert_allclose(a, b, atol=1e-9)
    # Not numbers: refused as gwcs refuses them.
    for bad in [None, "100", np.array(["1"]), np.array(["2020-01-01"], dtype="datetime64[D]")]:
        with pytest.raises(TypeError):
            w(bad, 200.0)
    # The pointer: a str; the root is "" or "/", and is not a WCS.
    with asdf_rs.open(path) as f:
        with pytest.raises(TypeError):
            f.wcs(5)
        with pytest.raises(ValueError, match="not a gwcs WCS"):
            f.wcs("/")
        with pytest.raises(LookupError):
            f.wcs("/no/such")
    # A bounding box that ignores an axis (a cube of sky and spectrum).
    from astropy.modeling.bounding_box import ModelBoundingBox

    sky = (m.Shift(-50) & m.Shift(-50)) | (m.Scale(1e-3) & m.Scale(1e-3)) | m.Pix2Sky_TAN() | m.RotateNative2Celestial(30, 45, 180)
    tr = sky & (m.Scale(0.01) | m.Shift(1.0))
    tr.bounding_box = ModelBoundingBox({"x0": (0, 100), "x1": (0, 100)}, tr, ignored=["x"])
    det = cf.CoordinateFrame(name="det", naxes=3, axes_order=(0, 1, 2), axes_type=("SPATIAL", "SPATIAL", "SPECTRAL"),
                             unit=(u.pix, u.pix, u.pix))
    world = cf.CompositeFrame([cf.CelestialFrame(reference_frame=coord.ICRS(), axes_order=(0, 1), unit=(u.deg, u.deg)),
                               cf.SpectralFrame(axes_order=(2,), unit=(u.um,))], name="world")
    ref = gwcs_wcs.WCS([(det, tr), (world, None)])
    asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "cube.asdf")
    w, ref = asdf_rs.open(tmp_path / "cube.asdf").wcs(), asdf.open(tmp_path / "cube.asdf")["wcs"]
    np.testing.assert_allclose(w.invert(30.0, 45.0, 1.0), ref.invert(30.0, 45.0, 1.0), atol=1e-6)
    np.testing.assert_allclose(w.footprint()[:, :2], ref.footprint()[:, :2], atol=1e-9)
    # Objects matched to axes by kind, in any order (as gwcs).
    from astropy.coordinates import SpectralCoord

    sc, spec = ref.pixel_to_world(10.0, 20.0, 5.0)
    np.testing.assert_allclose(w.world_to_pixel(SpectralCoord(spec), sc), (10.0, 20.0, 5.0), atol=1e-6)


def test_review_numerical_inverse_never_makes_up_a_pixel(tmp_path):
    # No analytic inverse (a distortion polynomial): the numerical one, checked. A longitude
    # of 1e20 degrees is the longitude 1e20 mod 360; an answer is verified forward or NaN.
    poly = m.Mapping((0, 1, 0, 1)) | (m.Polynomial2D(3, c1_0=1e-3, c0_1=1e-5, c2_0=1e-9)
                                       & m.Polynomial2D(3, c0_1=1e-3, c1_0=-1e-5, c0_2=1e-9))
    tr = poly | m.Pix2Sky_TAN() | m.RotateNative2Celestial(10, 20, 180)
    w, ref = _sky_wcs(tmp_path, "poly.asdf", coord.ICRS(), transform=tr)
    # Longitudes are taken modulo 360.
    np.testing.assert_allclose(w.invert(-349.5, 20.0), w.invert(10.5, 20.0), atol=1e-6)
    np.testing.assert_allclose(w(*w.invert(370.0, 20.0)), (10.0, 20.0), atol=1e-9)
    # Far from any pixel (1e20 degrees is 280 here, beyond the distortion's reach): NaN, or
    # an answer that maps back, never the starting guess (a review found (1.0, 1.0)).
    for lon in [1e20, 1e16]:
        px = w.invert(lon, 20.0)
        assert not np.allclose(px, (1.0, 1.0))
        if np.all(np.isfinite(px)):
            back = w(*px)
            assert abs(((back[0] - np.fmod(lon, 360.0)) + 180) % 360 - 180) < 1e-8 and abs(back[1] - 20.0) < 1e-8
    # Infinite pixels through a polynomial give what astropy gives (inf, not NaN).
    pt = m.Mapping((0, 1, 0, 1)) | (m.Polynomial2D(1, c0_0=1, c1_0=2, c0_1=3) & m.Polynomial2D(1, c1_0=1, c0_1=1))
    ref = gwcs_wcs.WCS([(cf.Frame2D(name="d"), pt), (cf.Frame2D(name="w"), None)])
    asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "p.asdf")
    w = asdf_rs.open(tmp_path / "p.asdf").wcs()
    np.testing.assert_array_equal(w(np.inf, 1.0), ref(np.inf, 1.0))


def test_review_a_bare_lookup_table_bounds_the_wcs(tmp_path):
    # gwcs's bounding box is the first transform's: for a bare Tabular1D, its points' range
    # (so an extrapolating table still gives NaN outside it, as gwcs gives).
    for fill in [np.nan, None]:
        t = m.Tabular1D(points=np.arange(10.0), lookup_table=np.arange(10.0) * 2 + 1, bounds_error=False,
                        fill_value=fill)
        ref = gwcs_wcs.WCS([(cf.CoordinateFrame(naxes=1, axes_type=("SPATIAL",), axes_order=(0,), name="d"), t),
                            (cf.CoordinateFrame(naxes=1, axes_type=("SPECTRAL",), axes_order=(0,), name="s"), None)])
        asdf.AsdfFile({"wcs": ref}).write_to(tmp_path / "tab.asdf")
        ref = asdf.open(tmp_path / "tab.asdf")["wcs"]
        w = asdf_rs.open(tmp_path / "tab.asdf").wcs()
        x = np.array([-1.0, 0.0, 4.5, 9.0, 9.5, 12.0])
        np.testing.assert_array_equal(w(x), ref(x))
        assert w.bounding_box == ((0.0, 9.0),)
