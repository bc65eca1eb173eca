"""For each (original, rewritten) pair listed in PAIRS.json: Python asdf 6.0 opens the rewritten
file with validation on read and checksum validation, and its tree and arrays must equal the
original's (asdf_library and history aside). Prints 'N passed, M failed'."""
import json, sys, warnings
import numpy as np
import asdf
from core_only import core_only
from asdf.tags.core.ndarray import NDArrayType

def norm(node):
    if isinstance(node, (NDArrayType, np.ndarray)):
        a = np.asarray(node[...]) if isinstance(node, NDArrayType) else node
        return ('array', a.shape, str(a.dtype.newbyteorder('=')), a.tobytes() if a.dtype.kind != 'O' else repr(a.tolist()))
    if isinstance(node, dict):
        return {str(k): norm(v) for k, v in node.items() if k not in ('asdf_library', 'history')}
    if isinstance(node, (list, tuple)):
        return [norm(v) for v in node]
    if isinstance(node, float) and node != node:
        return 'nan'
    return repr(node)

core_only()  # for the whole run
ok = bad = 0
for orig, new in json.load(open(sys.argv[1])):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            with asdf.open(orig) as a:
                want = norm(a.tree)
            with asdf.config_context() as cfg:
                cfg.validate_on_read = True
                with asdf.open(new, validate_checksums=True) as b:
                    got = norm(b.tree)
                    b.validate()
        if got != want:
            bad += 1
            print(new, 'DIFFERS from', orig)
        else:
            ok += 1
    except Exception as e:
        bad += 1
        print(new, 'FAIL', type(e).__name__, str(e)[:200])
print(f'{ok} passed, {bad} failed')
sys.exit(1 if bad else 0)
