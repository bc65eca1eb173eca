"""Edges where asdf_rs meets the world around the values (docs/../shared/EDGES.md): files that
change under a reader, names that must stay one-to-one, YAML 1.1's own types, masks and 0-d
arrays through the chunked writers. Each test compares with Python asdf 6.0, the reference."""

import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import asdf
import asdf_rs


# --- Files that change -------------------------------------------------------------------

_TRUNCATE = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import asdf_rs
    path, memmap = sys.argv[1], sys.argv[2] == "1"
    f = asdf_rs.open(path, memmap=memmap)
    a = f["/x"]
    b = f.to_objects("/y")
    b[0]  # Python asdf's lazy ndarray: read when first used
    t = f.tree["x"]
    # Another program truncates the file after the arrays were handed out.
    os.truncate(path, 0)
    print(float(a.sum()), float(np.asarray(b).sum()), float(t.sum()), flush=True)
    """
)


def _truncated_run(tmp_path, memmap):
    path = tmp_path / "t.asdf"
    x = np.arange(1 << 20, dtype="f8")  # 8 MiB: mapped by numpy with memmap=True
    y = np.arange(1 << 18, dtype="f8")
    asdf.AsdfFile({"x": x, "y": y}).write_to(path)  # uncompressed blocks, as Python asdf writes
    return subprocess.run(
        [sys.executable, "-c", _TRUNCATE, str(path), "1" if memmap else "0"],
        capture_output=True,
        text=True,
        timeout=120,
    ), x, y


def test_truncation_after_reading_keeps_the_values_by_default(tmp_path):
    r, x, y = _truncated_run(tmp_path, memmap=False)
    assert r.returncode == 0, r.stderr
    got = [float(v) for v in r.stdout.split()]
    assert got == [float(x.sum()), float(y.sum()), float(x.sum())]


def test_truncation_under_memmap_true_is_the_documented_risk(tmp_path):
    # memmap=True maps the file: its arrays are the file's bytes when used. A truncated file
    # takes them away (SIGBUS on Linux), as `open`'s docstring says.
    r, _x, _y = _truncated_run(tmp_path, memmap=True)
    assert r.returncode == -signal.SIGBUS, (r.returncode, r.stdout, r.stderr)
    assert "memmap=True" in asdf_rs.open.__doc__ and "SIGBUS" in asdf_rs.open.__doc__


def test_memmap_true_maps_and_default_copies(tmp_path):
    path = tmp_path / "m.asdf"
    x = np.arange(1000, dtype=">i4")
    asdf.AsdfFile({"x": x}).write_to(path)
    with asdf_rs.open(path) as f:
        a = f["/x"]
        assert not isinstance(a.base, np.memmap) and not isinstance(a, np.memmap)
        np.testing.assert_array_equal(a, x)
        assert not a.flags.writeable
    with asdf_rs.open(path, memmap=True) as f:
        a = f["/x"]
        base = a
        while base is not None and not isinstance(base, np.memmap):
            base = base.base
        assert isinstance(base, np.memmap)
        np.testing.assert_array_equal(a, x)
