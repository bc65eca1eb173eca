"""For every .asdf under CONFORMANCE that Python asdf 6.0 opens, records the arrays and scalars it
reads (path -> values), as JSON on stdout, for tests/tests/interop.rs to compare with ours."""
import glob, json, math, os, sys, warnings
import numpy as np
import asdf
from core_only import core_only, enc_scalar as enc
from asdf.tags.core import IntegerType
from asdf.tags.core.ndarray import NDArrayType

root = sys.argv[1]

def walk(node, path, out):
    if isinstance(node, (NDArrayType, np.ndarray)):
        try:
            a = np.asarray(node[...]) if isinstance(node, NDArrayType) else node
            m = np.ma.getmaskarray(node[...]).ravel().tolist() if isinstance(node, NDArrayType) and np.ma.isMaskedArray(node[...]) else None
            out[path] = {'shape': list(a.shape), 'values': [enc(v) for v in np.asarray(a).ravel()], 'mask': m}
        except Exception as e:
            out[path] = {'error': type(e).__name__}
        return
    if isinstance(node, dict):
        for k, v in node.items():
            if path == '' and k in ('asdf_library', 'history'):
                continue
            walk(v, f'{path}/{str(k).replace("~", "~0").replace("/", "~1")}', out)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            walk(v, f'{path}/{i}', out)
    elif isinstance(node, IntegerType):
        out[path] = {'int': str(int(node))}
    elif node is None or isinstance(node, (bool, int, float, complex, str)):
        out[path] = {'scalar': enc(node) if node is not None else None}

core_only()  # for the whole run
result = {}
for p in sorted(glob.glob(f'{root}/**/*.asdf', recursive=True)):
    rel = os.path.relpath(p, root)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with asdf.open(p) as af:
                out = {}
                walk(af.tree, '', out)
                result[rel] = out
    except Exception as e:
        result[rel] = {'__open_error__': type(e).__name__}
json.dump(result, sys.stdout)
