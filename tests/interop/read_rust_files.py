import asdf, numpy as np, warnings, glob, sys
asdf.get_config().validate_on_read = True
ok = 0; bad = 0
for p in sorted(glob.glob(sys.argv[1] + '/*.asdf')):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            with asdf.open(p, validate_checksums=True) as af:
                d = np.asarray(af['data']); i = np.asarray(af['ints'])
                assert d.shape == (10, 100) and d[0, 5] == 1.25 and d.dtype == np.float64, (d.shape, d[0,5])
                assert (i == np.arange(256) * 3).all(), i[:4]
                assert af['yes_string'] == 'yes' and af['count'] == 42
                af.validate()
            msgs = [str(x.message)[:100] for x in w if 'ResourceWarning' not in str(x.category)]
        ok += 1
        if msgs: print(p, 'WARN', msgs)
    except Exception as e:
        bad += 1
        print(p, 'FAIL', type(e).__name__, str(e)[:200])
print(f'{ok} passed, {bad} failed')
sys.exit(1 if bad else 0)
