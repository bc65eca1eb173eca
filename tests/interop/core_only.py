"""Python asdf with only its own extensions (and those that only add compressors): the interop
venv also holds astropy, gwcs, sunpy and the rest for the real-world suite, whose converters
would turn tagged nodes into objects (a quantity into an ndarray subclass, a frame into a
class) where the suites compare the tree as the file holds it."""
import asdf


def core_only():
    """An entered asdf.config_context() without the other packages' extensions; call
    .__exit__(None, None, None) on it when done, or use it in a with statement."""
    ctx = asdf.config_context()
    cfg = ctx.__enter__()
    for ext in list(cfg.extensions):
        if ext.package_name != 'asdf' and not ext.compressors:
            cfg.remove_extension(ext)
    return ctx
