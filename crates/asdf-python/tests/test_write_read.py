"""Write with asdf_rs, read with Python asdf 6.0; write with Python asdf, read with asdf_rs."""
import warnings

import numpy as np
import pytest

import asdf
import asdf_rs


ARRAYS = {
    "f8": np.arange(24.0).reshape(2, 3, 4),
    "f4_be": np.linspace(-1, 1, 7, dtype=">f4"),
    "i2": np.array([[-3, 0, 7]], dtype=np.int16),
    "u8": np.array([0, 2**63, 2**64 - 1], dtype=np.uint64),
    "c16": np.array([1 + 2j, -0.5j]),
    "b": np.array([True, False, True]),
    "s": np.array([b"ab", b"xyz"]),
    "u": np.array(["héllo", "ω"]),
}


@pytest.mark.parametrize("compression", [None, "zlib", "bzp2", "lz4"])
def test_asdf_rs_writes_python_asdf_reads(tmp_path, compression):
    p = tmp_path / "ours.asdf"
    tree = {"arrays": dict(ARRAYS), "meta": {"n": 3, "x": 2.5, "name": "obs", "flags": [True, None, "a"], "big": 2**80}}
    asdf_rs.write(p, tree, compression=compression)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(p, lazy_load=False, validate_checksums=True) as af:
            for k, v in ARRAYS.items():
                np.testing.assert_array_equal(np.asarray(af.tree["arrays"][k]), v, err_msg=k)
                assert np.asarray(af.tree["arrays"][k]).dtype.newbyteorder("=") == v.dtype.newbyteorder("="), k
            m = af.tree["meta"]
            assert (m["n"], m["x"], m["name"], list(m["flags"])) == (3, 2.5, "obs", [True, None, "a"])
            assert int(m["big"]) == 2**80
    # and back: asdf_rs reads what it wrote
    with asdf_rs.open(p) as f:
        for k, v in ARRAYS.items():
            np.testing.assert_array_equal(f["/arrays/" + k], v)


def test_python_asdf_writes_asdf_rs_reads(tmp_path):
    p = tmp_path / "theirs.asdf"
    af = asdf.AsdfFile({"arrays": dict(ARRAYS), "view": ARRAYS["f8"][:, 1, ::2], "meta": {"a": [1, 2], "z": 1 + 2j}})
    af.set_array_compression(af.tree["arrays"]["f8"], "zlib")
    af.write_to(p)
    with asdf_rs.open(p) as f:
        for k, v in ARRAYS.items():
            got = f["/arrays/" + k]
            np.testing.assert_array_equal(got, v, err_msg=k)
            assert not got.flags.writeable
        np.testing.assert_array_equal(f["/view"], ARRAYS["f8"][:, 1, ::2])
        assert list(f.tree["meta"]["a"]) == [1, 2]
        assert f.tree["meta"]["z"] == 1 + 2j
        assert f.tree.tag.startswith("tag:stsci.edu:asdf/core/asdf-")
        f.validate()
        assert [b["compression"] for b in f.blocks][0] == "zlib"
        assert f.element("/arrays/f8", (1, 2, 3)) == 23.0
    # asdf_rs re-writes the tree it read; Python asdf reads it again
    q = tmp_path / "again.asdf"
    with asdf_rs.open(p) as f:
        asdf_rs.write(q, {"arrays": f.tree["arrays"], "meta": {"a": f.tree["meta"]["a"]}})
    with asdf.open(q) as af:
        for k, v in ARRAYS.items():
            np.testing.assert_array_equal(np.asarray(af.tree["arrays"][k]), v)


def test_errors_carry_their_place(tmp_path):
    p = tmp_path / "bad.asdf"
    p.write_bytes(b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n--- !core/asdf-1.1.0\na: [1, 2\n...\n")
    with pytest.raises(asdf_rs.AsdfError) as e:
        asdf_rs.open(p)
    assert e.value.line is not None and e.value.line >= 4, (e.value, e.value.line)
    good = tmp_path / "good.asdf"
    asdf_rs.write(good, {"x": 1})
    with asdf_rs.open(good) as f:
        with pytest.raises(asdf_rs.AsdfError) as e:
            f["/nope"]
        assert e.value.pointer == "/nope" and e.value.kind == "NotFound"
    invalid = tmp_path / "invalid.asdf"
    invalid.write_bytes(
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
        b"s: !core/software-1.0.0 {name: 3}\n...\n"
    )
    with pytest.raises(asdf_rs.AsdfValidationError) as e:
        asdf_rs.open(invalid)
    assert e.value.pointer.startswith("/s"), e.value.pointer
    with asdf_rs.open(invalid, validate=False) as f:
        with pytest.raises(asdf_rs.AsdfValidationError):
            f.validate()


def test_a_closed_file_says_so(tmp_path):
    p = tmp_path / "c.asdf"
    asdf_rs.write(p, {"x": {"y": 1}, "a": np.arange(3)})
    with asdf_rs.open(p) as f:
        a = f["/a"]
        x = f.tree["x"]
    np.testing.assert_array_equal(a, [0, 1, 2])  # arrays read stay valid
    with pytest.raises(asdf_rs.AsdfError, match="closed"):
        x["y"]


def test_structured_and_masked_arrays_written_read_by_python_asdf(tmp_path):
    """Random records (fields of every scalar kind, both byte orders, sub-arrays) and masked
    arrays written by asdf_rs, read by Python asdf equal (masks included)."""
    rng = np.random.default_rng(21)
    kinds = ["<i4", ">i2", "<f8", ">f4", "|u1", "<c8", "|b1", "|S4", "<u8"]
    for k in range(20):
        fields = []
        for j in range(int(rng.integers(1, 5))):
            sub = () if rng.random() < 0.7 else (int(rng.integers(1, 4)),)
            fields.append((f"f{j}_{k}", kinds[int(rng.integers(len(kinds)))], sub))
        dt = np.dtype(fields)
        n = int(rng.integers(0, 9))
        rec = np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype="u1").tobytes(), dtype=dt).copy()
        for name in dt.names:  # no NaN payloads: compare by value
            if dt[name].base.kind in "fc":
                rec[name] = rng.standard_normal(rec[name].shape)
        data = rng.standard_normal((3, 5))
        mask = rng.random((3, 5)) < 0.3
        ints = np.ma.masked_array(np.arange(7, dtype=">i2"), mask=rng.random(7) < 0.5)
        path = tmp_path / f"rec{k}.asdf"
        asdf_rs.write(path, {"rec": rec, "masked": np.ma.masked_array(data, mask=mask), "ints": ints})
        with asdf.open(path) as af:
            theirs = af.tree["rec"][...]
            assert theirs.dtype.names == dt.names
            for name in dt.names:
                np.testing.assert_array_equal(theirs[name], rec[name])
            m = af.tree["masked"][...]
            assert isinstance(m, np.ma.MaskedArray)
            np.testing.assert_array_equal(m.mask, mask)
            np.testing.assert_array_equal(m.data, data)
            np.testing.assert_array_equal(af.tree["ints"][...].mask, ints.mask)
        with asdf_rs.open(path) as f:  # and back
            np.testing.assert_array_equal(f["/masked"].mask, mask)
            for name in dt.names:
                np.testing.assert_array_equal(f["/rec"][name], rec[name])


def test_references_resolved_as_python_asdf_resolves_them(tmp_path):
    other = tmp_path / "other.asdf"
    asdf.AsdfFile({"cal": {"gain": np.arange(5.0), "name": "gain table"}}).write_to(other)
    main = tmp_path / "main.asdf"
    tree = {
        "local": {"x": 3, "y": [1, 2]},
        "same": {"$ref": "#/local/y"},
        "far": {"$ref": "other.asdf#/cal"},
    }
    asdf.AsdfFile(tree).write_to(main)
    with asdf.open(main) as af:
        assert af.tree["far"] == {"$ref": "other.asdf#/cal"}  # left as they are on open
        af.resolve_references()
        theirs_far, theirs_same = af.tree["far"], af.tree["same"]
        np.testing.assert_array_equal(np.asarray(theirs_far["gain"]), np.arange(5.0))
        with asdf_rs.open(main) as f:
            assert f.tree["far"].to_dict() == {"$ref": "other.asdf#/cal"}
            assert f.to_objects()["same"] == {"$ref": "#/local/y"}
            f.resolve_references()
            assert f.tree["same"].to_list() == list(theirs_same) == [1, 2]
            far = f.tree["far"].to_dict()
            assert far["name"] == theirs_far["name"] == "gain table"
            np.testing.assert_array_equal(far["gain"], np.asarray(theirs_far["gain"]))


def test_exploded_arrays_read_from_a_remote_file(served):
    root, server = served
    data = np.arange(24, dtype="<f4").reshape(4, 6)
    af = asdf.AsdfFile({"data": data, "inside": np.ones(3)})
    af.set_array_storage(data, "external")
    af.write_to(root / "exploded_main.asdf")
    server.reset()
    with asdf_rs.open(f"{server.url}/exploded_main.asdf") as f:
        np.testing.assert_array_equal(f["/data"], data)
        np.testing.assert_array_equal(f["/inside"], np.ones(3))
    assert any("exploded_main0000" in r[1] for r in server.stats()["log"]), server.stats()["log"]
