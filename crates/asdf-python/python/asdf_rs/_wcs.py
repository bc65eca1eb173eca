"""World coordinates: a file's gwcs WCS evaluated natively by asdf-rs (no gwcs, no astropy
needed for values), with gwcs's calling conventions: `w(x, y)` and `w.invert(ra, dec)` take and
give numpy arrays (any shape, broadcast), NaN outside the bounding box; `pixel_to_world` gives
astropy objects as gwcs's does (astropy needed then)."""

import numpy as np


class Wcs:
    """A gwcs WCS of an ASDF file, evaluated natively (see `AsdfFile.wcs`)."""

    def __init__(self, native, pointer):
        self._native = native
        self.pointer = pointer
        self.pixel_n_dim, self.world_n_dim = native.dims()
        self.input_frame, self.output_frame = (_Frame(*f) for f in native.frames())

    def __repr__(self):
        return (
            f"<asdf_rs.Wcs {self.pointer}: {self.input_frame.name} ({self.pixel_n_dim} axes) -> "
            f"{self.output_frame.name} ({self.world_n_dim} axes)>"
        )

    @property
    def bounding_box(self):
        """Per pixel axis, `(low, high)` (None for an axis it ignores); None without one."""
        bb = self._native.bounding_box()
        return None if bb is None else tuple(bb)

    def footprint(self):
        """The world coordinates of the bounding box's corners, one row per corner (gwcs's
        `footprint()`)."""
        return np.array(self._native.footprint())

    def _run(self, method, args, n, frame):
        if len(args) != n:
            raise TypeError(f"expected {n} coordinates, got {len(args)}")
        arrays = np.broadcast_arrays(*[np.asarray(frame.plain(a, i), dtype=np.float64) for i, a in enumerate(args)])
        shape = arrays[0].shape
        out = [np.frombuffer(b, dtype=np.float64).reshape(shape) for b in method([np.require(a, np.float64, ['C', 'A']).reshape(-1) for a in arrays])]
        if shape == ():
            out = [float(o) for o in out]
        return out[0] if len(out) == 1 else tuple(out)

    def __call__(self, *pixel):
        """Pixel to world values (gwcs's `wcs(x, y)`): x (the column) first, 0 at the first
        pixel's centre; a tuple of arrays, or one array for one world axis. Quantities are
        converted to the input frame's units (an error when they do not convert)."""
        return self._run(self._native.forward, pixel, self.pixel_n_dim, self.input_frame)

    pixel_to_world_values = __call__

    def invert(self, *world):
        """World values to pixel (gwcs's `invert`): the file's inverse, the analytic one, or
        where there is neither a numerical one (as gwcs's, for as many world axes as pixel
        axes); NaN outside the footprint. Quantities are converted to the frame's units."""
        return self._run(self._native.backward, world, self.world_n_dim, self.output_frame)

    world_to_pixel_values = invert

    def pixel_to_world(self, *pixel):
        """Pixel to world as astropy objects, as gwcs's `pixel_to_world` gives them: a
        `SkyCoord` for the celestial axes, a `SpectralCoord` for a spectral axis, a `Time` for a
        temporal one (its frame's reference time plus the value), a `StokesCoord` for a Stokes
        axis, a `Quantity` for others (a list when there are several)."""
        values = self(*pixel)
        if self.world_n_dim == 1:
            values = (values,)
        return self.output_frame.objects(values)

    def world_to_pixel(self, *objects):
        """The pixel of astropy objects (a `SkyCoord`, `SpectralCoord`, `Time`, `Quantity`s) in
        the output frame."""
        values = self.output_frame.values(objects)
        return self.invert(*values)


_SKY_FRAMES = {"icrs", "fk5", "fk4", "fk4noeterms", "galactic", "supergalactic", "gcrs", "cirs", "itrs",
               "barycentrictrueecliptic", "geocentrictrueecliptic", "heliocentrictrueecliptic"}


class _Frame:
    """A frame's names, units and types (gwcs's `CoordinateFrame`, as values)."""

    def __init__(self, name, kind, axes, reference_frame, reference_time):
        self.name = name
        self.kind = kind
        self.axes_names = tuple(a[0] for a in axes)
        self.unit = tuple(a[1] for a in axes)
        self.axes_type = tuple(a[2] for a in axes)
        self.axis_physical_types = tuple(a[3] for a in axes)
        self.reference_frame = reference_frame
        self.reference_time = reference_time

    @property
    def naxes(self):
        return len(self.axes_names)

    def __repr__(self):
        return f"<Frame {self.name} ({self.kind}): {', '.join(self.axes_names)}>"

    def plain(self, value, i):
        """A coordinate as numbers in axis `i`'s unit: a quantity converted (as gwcs converts
        it: an error when the units do not convert), numbers as they are."""
        unit = getattr(value, "unit", None)
        if unit is None:
            return value
        from astropy import units as u

        if i < len(self.unit) and self.unit[i]:
            return u.Quantity(value).to_value(u.Unit(self.unit[i]), equivalencies=u.spectral())
        return u.Quantity(value).value

    def _sky_name(self):
        tag = self.reference_frame or ""
        name = tag.rsplit("/", 1)[-1].rsplit("-", 1)[0]
        if name not in _SKY_FRAMES:
            raise NotImplementedError(
                f"frame {self.name!r}: its reference frame ({tag or 'none'}) is not made into a SkyCoord "
                "by asdf_rs; use the values (`wcs(...)`)"
            )
        return name

    def _time(self):
        from astropy.time import Time

        if not self.reference_time:
            raise NotImplementedError(f"frame {self.name!r}: a temporal axis without a reference time")
        value, scale = self.reference_time
        return Time(value, scale=scale or "utc")

    def _axis_object(self, i, q):
        kind = (self.axes_type[i] if i < len(self.axes_type) else "").upper()
        if kind == "SPECTRAL":
            from astropy.coordinates import SpectralCoord

            return SpectralCoord(q)
        if kind == "TEMPORAL":
            return self._time() + q
        if kind == "STOKES":
            from astropy.coordinates import StokesCoord

            return StokesCoord(getattr(q, "value", q))
        return q

    def objects(self, values):
        from astropy import units as u

        quantities = [v * u.Unit(unit) if unit else v for v, unit in zip(values, self.unit)]
        spatial = [i for i, t in enumerate(self.axes_type) if t.upper() == "SPATIAL"]
        sky = len(spatial) == 2 and (self.kind == "Celestial" or self.reference_frame)
        out = []
        if sky:
            from astropy.coordinates import SkyCoord

            out.append(SkyCoord(quantities[spatial[0]], quantities[spatial[1]], frame=self._sky_name()))
        for i, q in enumerate(quantities):
            if not (sky and i in spatial):
                out.append(self._axis_object(i, q))
        return out[0] if len(out) == 1 else out

    def values(self, objects):
        from astropy import units as u
        from astropy.coordinates import SkyCoord
        from astropy.time import Time

        out = []
        for o in objects:
            if isinstance(o, SkyCoord):
                sph = o.transform_to(self._sky_name()).spherical
                units = [x for x, t in zip(self.unit, self.axes_type) if t.upper() == "SPATIAL"]
                out.append(sph.lon.to_value(units[0] or u.deg))
                out.append(sph.lat.to_value(units[1] or u.deg))
            elif isinstance(o, Time):
                unit = self.unit[len(out)] or "s"
                out.append((o - self._time()).to(unit).value)
            else:
                out.append(self.plain(o, len(out)))
        return out
