"""World coordinates: a file's gwcs WCS evaluated natively by asdf-rs (no gwcs, no astropy
needed for values), with gwcs's calling conventions: `w(x, y)` and `w.invert(ra, dec)` take and
give numpy arrays (any shape, broadcast), NaN outside the bounding box; `pixel_to_world` gives
astropy objects as gwcs's does (astropy needed then)."""

import numpy as np


def _numbers(a):
    """`a` as an array of numbers: booleans, integers, floats (and complex, whose imaginary
    part numpy drops with a warning, as in gwcs); anything else is refused, as gwcs refuses
    it (strings, dates, None, objects)."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "biufc":
        raise TypeError(f"coordinates must be numbers, not {arr.dtype} ({type(a).__name__})")
    return arr


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

    def _run(self, method, args, n, frame, out_frame, with_bounding_box, fill_value):
        if len(args) != n:
            raise TypeError(f"expected {n} coordinates, got {len(args)}")
        quantities = any(hasattr(a, "unit") for a in args)
        arrays = np.broadcast_arrays(*[_numbers(frame.plain(a, i)) for i, a in enumerate(args)])
        shape = arrays[0].shape
        cols = [np.require(a, np.float64, ["C", "A"]).reshape(-1) for a in arrays]
        out = [np.frombuffer(b, dtype=np.float64).reshape(shape) for b in method(cols, bool(with_bounding_box))]
        fill = fill_value is not None and not (isinstance(fill_value, float) and np.isnan(fill_value))
        if fill and with_bounding_box:
            # gwcs's fill_value: the points outside the bounding box (forward: of the pixels;
            # inverse: the pixels found outside it, or NaN from the footprint) take it.
            outside = np.zeros(shape, dtype=bool)
            bb = self.bounding_box if method == self._native.forward else None
            if bb is not None:
                for c, iv in zip(arrays, bb):
                    if iv is not None:
                        outside |= (c < iv[0]) | (c > iv[1])
            else:
                outside = np.any([np.isnan(o) for o in out], axis=0)
            for o in out:
                o[outside] = fill_value
        if quantities:
            # Quantities in, quantities out (as gwcs): in the other frame's units.
            from astropy import units as u

            out = [o * u.Unit(unit) if unit else o for o, unit in zip(out, out_frame.unit)]
        if shape == ():
            out = [o[()] if quantities else float(o) for o in out]
        return out[0] if len(out) == 1 else tuple(out)

    def __call__(self, *pixel, with_bounding_box=True, fill_value=np.nan):
        """Pixel to world values (gwcs's `wcs(x, y)`): x (the column) first, 0 at the first
        pixel's centre; a tuple of arrays, or one array for one world axis. Quantities are
        converted to the input frame's units (an error when they do not convert) and the
        results are quantities then. `with_bounding_box=False` evaluates every point;
        `fill_value` is given to the points outside the bounding box (NaN by default)."""
        return self._run(self._native.forward, pixel, self.pixel_n_dim, self.input_frame, self.output_frame,
                         with_bounding_box, fill_value)

    pixel_to_world_values = __call__

    def invert(self, *world, with_bounding_box=True, fill_value=np.nan):
        """World values to pixel (gwcs's `invert`): the file's inverse, the analytic one, or
        where there is neither a numerical one (as gwcs's, for as many world axes as pixel
        axes); NaN outside the footprint. Quantities are converted to the frame's units.
        `with_bounding_box=False` applies neither the footprint nor the bounding box."""
        return self._run(self._native.backward, world, self.world_n_dim, self.output_frame, self.input_frame,
                         with_bounding_box, fill_value)

    world_to_pixel_values = invert

    def pixel_to_world(self, *pixel):
        """Pixel to world as astropy objects, as gwcs's `pixel_to_world` gives them: a
        `SkyCoord` for the celestial axes, a `SpectralCoord` for a spectral axis, a `Time` for a
        temporal one (its frame's reference time plus the value), a `StokesCoord` for a Stokes
        axis, a `Quantity` for others (a list when there are several)."""
        values = self(*pixel)
        if self.world_n_dim == 1:
            values = (values,)
        values = tuple(getattr(v, "value", v) for v in values)
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

    def __init__(self, name, kind, axes, reference_frame, reference_time, frame_attributes=()):
        self.frame_attributes = list(frame_attributes)
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

    def _sky_frame(self):
        """The astropy frame, with its attributes (`equinox`, `obstime`) as the file gives
        them; one whose attributes are not times (GCRS's observer position) is refused by
        name rather than made without them."""
        from astropy.coordinates import frame_transform_graph
        from astropy.time import Time

        cls = frame_transform_graph.lookup_name(self._sky_name())
        attrs = {}
        for key, time in self.frame_attributes:
            if time is None:
                raise NotImplementedError(
                    f"frame {self.name!r}: the reference frame's attribute {key!r} is not carried by "
                    "asdf_rs; use the values (`wcs(...)`)"
                )
            value, scale = time
            attrs[key] = Time(value, scale=scale) if scale else Time(value)
        return cls(**attrs)

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

            out.append(SkyCoord(quantities[spatial[0]], quantities[spatial[1]], frame=self._sky_frame()))
        for i, q in enumerate(quantities):
            if not (sky and i in spatial):
                out.append(self._axis_object(i, q))
        return out[0] if len(out) == 1 else out

    def values(self, objects):
        """The world values of astropy objects, each put on the axes of its kind (as gwcs
        matches them: a SkyCoord on the celestial axes, a Time on the temporal one, a
        SpectralCoord or spectral quantity on the spectral one, a StokesCoord on the Stokes
        one), then plain numbers and quantities on the axes left, in order."""
        from astropy import units as u
        from astropy.coordinates import SkyCoord, SpectralCoord
        from astropy.time import Time

        types = [t.upper() for t in self.axes_type]
        out = [None] * self.naxes
        rest = []

        def put(kind, value, what):
            for i, t in enumerate(types):
                if t == kind and out[i] is None:
                    out[i] = value
                    return
            raise ValueError(f"frame {self.name!r} has no {kind.lower()} axis left for {what}")

        for o in objects:
            if isinstance(o, SkyCoord):
                sph = o.transform_to(self._sky_frame()).spherical
                spatial = [i for i, t in enumerate(types) if t == "SPATIAL"]
                if len(spatial) != 2:
                    raise ValueError(f"frame {self.name!r} has no celestial axes for a SkyCoord")
                out[spatial[0]] = sph.lon.to_value(self.unit[spatial[0]] or u.deg)
                out[spatial[1]] = sph.lat.to_value(self.unit[spatial[1]] or u.deg)
            elif isinstance(o, Time):
                i = types.index("TEMPORAL") if "TEMPORAL" in types else None
                if i is None:
                    raise ValueError(f"frame {self.name!r} has no temporal axis for a Time")
                put("TEMPORAL", (o - self._time()).to(self.unit[i] or "s").value, "a Time")
            elif type(o).__name__ == "StokesCoord":
                put("STOKES", np.asarray(o.value, dtype=float), "a StokesCoord")
            elif isinstance(o, SpectralCoord) or (
                hasattr(o, "unit") and "SPECTRAL" in types and u.Quantity(o).unit.is_equivalent(
                    u.Unit(self.unit[types.index("SPECTRAL")] or "m"), equivalencies=u.spectral())
            ):
                i = types.index("SPECTRAL") if "SPECTRAL" in types else None
                if i is None:
                    raise ValueError(f"frame {self.name!r} has no spectral axis for {type(o).__name__}")
                put("SPECTRAL", self.plain(o, i), "a spectral coordinate")
            else:
                rest.append(o)
        for o in rest:
            try:
                i = out.index(None)
            except ValueError:
                raise TypeError(f"frame {self.name!r}: more coordinates than its {self.naxes} axes") from None
            out[i] = self.plain(o, i)
        if any(v is None for v in out):
            missing = [self.axes_names[i] or str(i) for i, v in enumerate(out) if v is None]
            raise TypeError(f"frame {self.name!r}: no coordinate given for {', '.join(missing)}")
        return out
