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

    def _run(self, method, args, n):
        if len(args) != n:
            raise TypeError(f"expected {n} coordinates, got {len(args)}")
        arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
        shape = arrays[0].shape
        out = [np.frombuffer(b, dtype=np.float64).reshape(shape) for b in method([a.tobytes() for a in arrays])]
        if shape == ():
            out = [float(o) for o in out]
        return out[0] if len(out) == 1 else tuple(out)

    def __call__(self, *pixel):
        """Pixel to world values (gwcs's `wcs(x, y)`): x (the column) first, 0 at the first
        pixel's centre; a tuple of arrays, or one array for one world axis."""
        return self._run(self._native.forward, pixel, self.pixel_n_dim)

    pixel_to_world_values = __call__

    def invert(self, *world):
        """World values to pixel (gwcs's `invert`): the file's inverse or the analytic one;
        NaN outside the footprint. A WCS gwcs would invert numerically raises
        NotImplementedError."""
        return self._run(self._native.backward, world, self.world_n_dim)

    world_to_pixel_values = invert

    def pixel_to_world(self, *pixel):
        """Pixel to world as astropy objects, as gwcs's `pixel_to_world` gives them: a
        `SkyCoord` for a celestial frame, `Quantity` for other axes (a list for several
        frames)."""
        values = self(*pixel)
        if self.world_n_dim == 1:
            values = (values,)
        return self.output_frame.objects(values)

    def world_to_pixel(self, *objects):
        """The pixel of astropy objects (a `SkyCoord`, `Quantity`s) in the output frame."""
        values = self.output_frame.values(objects)
        return self.invert(*values)


_SKY_FRAMES = {"icrs", "fk5", "fk4", "fk4noeterms", "galactic", "supergalactic", "gcrs", "cirs", "itrs",
               "barycentrictrueecliptic", "geocentrictrueecliptic", "heliocentrictrueecliptic"}


class _Frame:
    """A frame's names, units and types (gwcs's `CoordinateFrame`, as values)."""

    def __init__(self, name, kind, axes, reference_frame):
        self.name = name
        self.kind = kind
        self.axes_names = tuple(a[0] for a in axes)
        self.unit = tuple(a[1] for a in axes)
        self.axes_type = tuple(a[2] for a in axes)
        self.axis_physical_types = tuple(a[3] for a in axes)
        self.reference_frame = reference_frame

    @property
    def naxes(self):
        return len(self.axes_names)

    def __repr__(self):
        return f"<Frame {self.name} ({self.kind}): {', '.join(self.axes_names)}>"

    def _sky_name(self):
        tag = self.reference_frame or ""
        name = tag.rsplit("/", 1)[-1].rsplit("-", 1)[0]
        if name not in _SKY_FRAMES:
            raise NotImplementedError(
                f"frame {self.name!r}: its reference frame ({tag or 'none'}) is not made into a SkyCoord "
                "by asdf_rs; use the values (`wcs(...)`)"
            )
        return name

    def objects(self, values):
        from astropy import units as u

        quantities = [v * u.Unit(unit) if unit else v for v, unit in zip(values, self.unit)]
        if self.kind == "Celestial" and len(values) == 2:
            from astropy.coordinates import SkyCoord

            return SkyCoord(quantities[0], quantities[1], frame=self._sky_name())
        if self.kind == "Composite" or len(values) > 1:
            # The celestial pair (the first two spatial axes), then the others.
            spatial = [i for i, t in enumerate(self.axes_type) if t.upper() == "SPATIAL"]
            out = []
            if len(spatial) == 2 and self.reference_frame:
                from astropy.coordinates import SkyCoord

                out.append(SkyCoord(quantities[spatial[0]], quantities[spatial[1]], frame=self._sky_name()))
            out.extend(q for i, q in enumerate(quantities) if not (len(spatial) == 2 and self.reference_frame and i in spatial))
            return out
        return quantities[0]

    def values(self, objects):
        from astropy import units as u
        from astropy.coordinates import SkyCoord

        out = []
        for o in objects:
            if isinstance(o, SkyCoord):
                sph = o.transform_to(self._sky_name()).spherical
                units = [x for x, t in zip(self.unit, self.axes_type) if t.upper() == "SPATIAL"]
                out.append(sph.lon.to_value(units[0] or u.deg))
                out.append(sph.lat.to_value(units[1] or u.deg))
            elif isinstance(o, u.Quantity):
                out.append(o.to_value(self.unit[len(out)]) if self.unit[len(out)] else o.value)
            else:
                out.append(np.asarray(o, dtype=float))
        return out
