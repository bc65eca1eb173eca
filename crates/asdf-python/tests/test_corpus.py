"""asdf_rs against Python asdf 6.0 on the conformance corpora: every array and scalar that
Python asdf reads (with its own extensions only, so the tree is compared as the file holds
it) is read the same by asdf_rs."""
import glob
import math
import os
import sys
import warnings

import numpy as np
import pytest

import asdf
import asdf_rs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "interop"))
from core_only import core_only  # noqa: E402
from asdf.tags.core import IntegerType  # noqa: E402
from asdf.tags.core.ndarray import NDArrayType  # noqa: E402


def assembled(node):
    """ASDF.jl's chunked ndarray (a tagged dict to Python asdf) as ASDF.jl assembles it: its
    chunks placed at their starts in order, gaps zero (asdf_rs reads it so)."""
    shape = tuple(node["shape"])
    chunks = [(c["start"], np.asarray(c["ndarray"][...] if isinstance(c["ndarray"], NDArrayType) else c["ndarray"]))
              for c in node["chunks"]]
    out = np.zeros(shape, dtype=chunks[0][1].dtype if chunks else np.float64)
    for start, a in chunks:
        out[tuple(slice(s, s + n) for s, n in zip(start, a.shape))] = a
    return out


def python_values(node, path, out):
    if getattr(node, "_tag", "").startswith("tag:stsci.edu:asdf/core/chunked-ndarray-"):
        try:
            out[path] = ("array", assembled(node))
        except Exception as e:  # noqa: BLE001 - not assembled by these rules
            out[path] = ("error", type(e).__name__)
        return
    if isinstance(node, (NDArrayType, np.ndarray)):
        try:
            out[path] = ("array", np.ma.asarray(node[...]) if isinstance(node, NDArrayType) else node)
        except Exception as e:  # noqa: BLE001 - Python asdf cannot read it
            out[path] = ("error", type(e).__name__)
        return
    if isinstance(node, dict):
        for k, v in node.items():
            if path == () and k in ("asdf_library", "history"):
                continue
            python_values(v, path + (k,), out)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            python_values(v, path + (i,), out)
    elif isinstance(node, IntegerType):
        pass
    elif node is None or isinstance(node, (bool, int, float, complex, str)):
        out[path] = ("scalar", node)


def same_scalar(ours, theirs):
    if isinstance(ours, asdf_rs.Tagged):
        ours = ours.value
    if isinstance(theirs, str):
        return isinstance(ours, str) and ours == str(theirs)
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return type(ours) is type(theirs) and ours == theirs
    if isinstance(theirs, float) and isinstance(ours, float) and math.isnan(theirs):
        return math.isnan(ours)
    if isinstance(theirs, complex) and isinstance(ours, complex):
        return ours == theirs or repr(ours) == repr(theirs)
    return type(ours) is type(theirs) and ours == theirs or (
        isinstance(theirs, (int, float)) and not isinstance(theirs, bool) and ours == theirs
    )


def same_array(ours, theirs):
    ours = np.ma.asarray(ours)
    if ours.shape != theirs.shape:
        return False
    if ours.dtype.names or theirs.dtype.names:
        return ours.tobytes() == np.asarray(theirs).astype(ours.dtype).tobytes()
    a, b = np.ma.filled(ours, 0), np.ma.filled(theirs, 0)
    if not np.array_equal(np.ma.getmaskarray(ours), np.ma.getmaskarray(theirs)):
        return False
    if a.dtype.kind in "fc":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def corpus_files(root):
    return sorted(glob.glob(f"{root}/**/*.asdf", recursive=True))


def compare_with_python(files):
    """Every array and scalar Python asdf reads from `files`, read by asdf_rs: the counts and
    the differences."""
    counts = dict(files=0, python_refused=0, references_skipped=0, both_open=0, arrays=0, scalars=0)
    problems = []
    ctx = core_only()
    try:
        for p in files:
            counts["files"] += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with asdf.open(p, lazy_load=False, memmap=False) as af:
                        theirs = {}
                        python_values(af.tree, (), theirs)
            except Exception:  # noqa: BLE001 - Python asdf refuses it: nothing to compare
                counts["python_refused"] += 1
                continue
            with open(p, "rb") as raw:
                if b"$ref" in raw.read():
                    # JSON references (Python asdf follows them) are left as written here.
                    counts["references_skipped"] += 1
                    continue
            try:
                f = asdf_rs.open(p, validate=False)
            except asdf_rs.AsdfError as e:
                problems.append(f"{p}: asdf_rs refuses what Python asdf opens: {e}")
                continue
            counts["both_open"] += 1
            for path, (kind, value) in theirs.items():
                if kind == "error":
                    continue
                try:
                    ours = f.tree
                    for key in path:
                        ours = ours[key]
                except Exception as e:  # noqa: BLE001 - reported below
                    problems.append(f"{p} {path}: {type(e).__name__}: {e}")
                    continue
                if kind == "array":
                    counts["arrays"] += 1
                    if not same_array(ours, value):
                        problems.append(f"{p} {path}: array differs: {ours!r} vs {value!r}"[:400])
                else:
                    counts["scalars"] += 1
                    if not same_scalar(ours, value):
                        problems.append(f"{p} {path}: {ours!r} vs {value!r}"[:400])
    finally:
        ctx.__exit__(None, None, None)
    return counts, problems


def test_every_array_and_scalar_as_python_asdf_reads_them(conformance):
    files = corpus_files(conformance)
    assert len(files) > 100, f"only {len(files)} .asdf files under {conformance}"
    counts, problems = compare_with_python(files)
    print(f"\ncorpus: {counts}, {len(problems)} differences")
    for line in problems[:40]:
        print("  ", line)
    assert counts["arrays"] > 100 and counts["scalars"] > 300, counts
    assert not problems, f"{len(problems)} differences (first: {problems[0]})"


def test_random_python_files_as_python_asdf_reads_them(tmp_path):
    """The differential suite's random files (tests/interop/random_files.py: every dtype and
    byte order, records, strings, views, inline arrays, every compression, streamed, padded and
    updated files, standards 1.0.0 to 1.6.0), read by asdf_rs as Python asdf reads them.
    ASDF_DIFF_FILES files (100 here by default) from a fixed seed."""
    import subprocess

    n = int(os.environ.get("ASDF_DIFF_FILES", "100"))
    script = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "interop", "random_files.py")
    out = subprocess.run([sys.executable, script, str(tmp_path), str(n), "23"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) * 10 >= n * 9, out.stderr
    counts, problems = compare_with_python(corpus_files(tmp_path))
    print(f"\nrandom files: {counts}, {len(problems)} differences")
    for line in problems[:40]:
        print("  ", line)
    assert counts["both_open"] * 10 >= n * 9 and counts["arrays"] > n, counts
    assert not problems, f"{len(problems)} differences (first: {problems[0]})"
