"""Helpers the interop scripts share: Python asdf with only its own extensions (and those that only add compressors): the interop
venv also holds astropy, gwcs, sunpy and the rest for the real-world suite, whose converters
would turn tagged nodes into objects (a quantity into an ndarray subclass, a frame into a
class) where the suites compare the tree as the file holds it."""
import math

import numpy as np
import asdf


def core_only():
    """An entered asdf.config_context() without the other packages' extensions; call
    .__exit__(None, None, None) on it when done, or use it in a with statement."""
    ctx = asdf.config_context()
    cfg = ctx.__enter__()
    for ext in list(cfg.extensions):
        if ext.package_name != 'asdf' and not ext.compressors:
            cfg.remove_extension(ext)
    # Kept here too: a caller that drops the returned context (`core_only()  # for the whole
    # run`) would otherwise have it collected at once, and its exit would restore the
    # extensions.
    _ENTERED.append(ctx)
    return ctx


_ENTERED = []


def enc_scalar(x):
    """A value as JSON the Rust side compares: floats nan/inf as strings, complex as
    {'complex': [re, im]}, bytes as latin-1 text, records as lists."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (complex, np.complexfloating)):
        return {'complex': [enc_scalar(float(x.real)), enc_scalar(float(x.imag))]}
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isnan(x):
            return 'nan'
        if math.isinf(x):
            return 'inf' if x > 0 else '-inf'
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, bytes):
        return x.decode('latin-1')
    if isinstance(x, np.void):
        if x.dtype.names:
            return [enc_scalar(x[n]) for n in x.dtype.names]
        t = x.tolist()
        return [enc_scalar(v) for v in t] if isinstance(t, tuple) else enc_scalar(t)
    if isinstance(x, np.ndarray):
        # A field's sub-array: its elements in C order, nested as the sub-array's shape.
        if x.ndim == 0:
            return enc_scalar(x[()])
        return [enc_scalar(v) for v in x]
    if isinstance(x, (tuple, list)):
        return [enc_scalar(v) for v in x]
    return str(x)
