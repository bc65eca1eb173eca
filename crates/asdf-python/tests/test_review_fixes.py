"""Fixes of an independent review of the `asdf_rs` Python surface, each compared with what
Python asdf 6.0 (the reference) gives for the same file or the same call."""

import datetime
import warnings

import numpy as np
import pytest

import asdf
import asdf_rs

_HEAD = b"""#ASDF 1.0.0
#ASDF_STANDARD 1.5.0
%YAML 1.1
%TAG ! tag:stsci.edu:asdf/
--- !core/asdf-1.1.0
"""


def _write_yaml(path, body):
    path.write_bytes(_HEAD + body.encode() + b"\n...\n")
    return path


def _python_asdf_tree(path):
    """The tree as Python asdf reads it (its arrays as numpy arrays, tagged nodes as its
    tagged types)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf.open(path, lazy_load=False, memmap=False) as af:
            return _plain_ref(af.tree)


def _plain_ref(v):
    if hasattr(v, "_tag"):
        return v
    if isinstance(v, dict):
        return {k: _plain_ref(x) for k, x in v.items() if k not in ("asdf_library", "history")}
    if isinstance(v, list):
        return [_plain_ref(x) for x in v]
    return v


def _plain_rs(v):
    """A tree of asdf_rs's views, read key by key and item by item (the tree's own access)."""
    if isinstance(v, asdf_rs.TreeMapping):
        return {k: _plain_rs(v[k]) for k in v if k not in ("asdf_library", "history")}
    if isinstance(v, asdf_rs.TreeSequence):
        return [_plain_rs(x) for x in v]
    return v


def _strip(d):
    return {k: v for k, v in d.items() if k not in ("asdf_library", "history")}


# --- 1. Keys that are null, floats, dates --------------------------------------------------

_ODD_KEYS = """
m:
  null: a
  ~: b
  1.5: c
  2020-01-01: d
  2001-12-14t21:59:43.10-05:00: e
  true: f
  1: g
  '1': h
  .inf: i
  -0.5: j
  x: {2.5: [1, 2]}
"""


def test_keys_null_float_and_dates_are_read_as_python_asdf_reads_them(tmp_path):
    path = _write_yaml(tmp_path / "keys.asdf", _ODD_KEYS)
    ref = _python_asdf_tree(path)
    assert None in ref["m"] and datetime.date(2020, 1, 1) in ref["m"] and 1.5 in ref["m"]
    with pytest.warns(UserWarning, match=r"Invalid mapping keys .*/m: null; /m: 1.5; /m: 2020-01-01"):
        f = asdf_rs.open(path)
    with f:
        assert _plain_rs(f.tree) == ref
        assert _strip(f.tree.to_dict()) == ref
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert _strip(f.to_objects()) == ref
        m = f.tree["m"]
        # Key access by the keys Python asdf gives.
        assert m[None] == "b" and m[1.5] == "c" and m[datetime.date(2020, 1, 1)] == "d"
        when = datetime.datetime(2001, 12, 14, 21, 59, 43, 100000, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))
        assert m[when] == "e"
        assert m[True] == "g" and m["1"] == "h" and m[float("inf")] == "i" and m[-0.5] == "j"
        assert list(m["x"][2.5]) == [1, 2]
        assert list(m) == list(ref["m"])


def test_keys_python_asdf_refuses_to_write_are_refused_naming_the_place(tmp_path):
    for key in [None, 1.5, (1, 2), datetime.date(2020, 1, 1), b"x", 1 + 2j, np.int64(3), np.float64(2.0)]:
        tree = {"m": {"ok": [{key: 1}]}}
        with pytest.raises(asdf.exceptions.ValidationError, match="is not permitted"):
            asdf.AsdfFile(tree).write_to(tmp_path / "ref.asdf")
        with pytest.raises(asdf_rs.AsdfError, match=r"^/m/ok/0: the mapping key .* is not permitted"):
            asdf_rs.write(tmp_path / "rs.asdf", tree)
        assert not (tmp_path / "rs.asdf").exists()
    # What Python asdf writes (str, int, bool keys, a str subclass) asdf_rs writes, and both
    # read back the same.
    tree = {"m": {"s": 1, 2: "two", True: "yes", np.str_("n"): 3}}
    asdf.AsdfFile(tree).write_to(tmp_path / "ref.asdf")
    asdf_rs.write(tmp_path / "rs.asdf", tree)
    assert _python_asdf_tree(tmp_path / "rs.asdf") == _python_asdf_tree(tmp_path / "ref.asdf")


def test_dates_and_datetimes_are_written_as_python_asdf_writes_them(tmp_path):
    # Read as dates (item 3), they must also write back: as PyYAML's timestamps.
    values = {
        "d": datetime.date(2020, 1, 1),
        "t": datetime.datetime(2001, 12, 14, 21, 59, 43, 100000),
        "z": datetime.datetime(2001, 12, 14, 21, 59, 43, 100000, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        "u": datetime.datetime(2030, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
    }
    asdf.AsdfFile(values).write_to(tmp_path / "ref.asdf")
    asdf_rs.write(tmp_path / "rs.asdf", values)
    ref = _python_asdf_tree(tmp_path / "ref.asdf")
    assert _python_asdf_tree(tmp_path / "rs.asdf") == ref == values
    with asdf_rs.open(tmp_path / "rs.asdf") as f:
        assert _plain_rs(f.tree) == ref


# --- 3. Tags of YAML's namespace PyYAML does not build; timestamps -------------------------

_TAGS_AND_TIMES = """
x: !!x foo
n: !!x 5
v: !!value '='
p: !!python/str s
m: !!x {a: 1}
l: !!x [1, 2]
s: !!str 2020-01-01
d: 2020-01-01
t: 2001-12-14t21:59:43.10-05:00
u: 2001-12-14 21:59:43.10
z: 2002-12-14T21:59:43.1234567Z
e: !!timestamp 2001-12-14
q: !!timestamp '2002-12-14 01:02:03'
i: !!int '7'
b: !!binary aGk=
keys: {=: 1, 2020-01-01 10:00:00: 2}
"""


def test_unknown_yaml_tags_are_tagged_and_timestamps_are_dates_as_python_asdf_gives(tmp_path):
    path = _write_yaml(tmp_path / "tags.asdf", _TAGS_AND_TIMES)
    ref = _python_asdf_tree(path)
    assert isinstance(ref["x"], asdf.tagged.TaggedString) and ref["x"]._tag == "tag:yaml.org,2002:x"
    assert isinstance(ref["d"], datetime.date) and isinstance(ref["t"], datetime.datetime)
    tagged = {k: v for k, v in ref.items() if hasattr(v, "_tag")}
    assert set(tagged) == {"x", "n", "v", "p", "m", "l"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        objects = _strip(asdf_rs.open(path).to_objects())
        lazy_objects = asdf_rs.open(path, objects=True).tree
        lazy_objects = {k: lazy_objects[k] for k in ref}
    f = asdf_rs.open(path)
    tree = {k: f.tree[k] for k in ref}
    plain = _strip(f.tree.to_dict())
    for got in (tree, plain, objects, lazy_objects):
        assert got.keys() == ref.keys()
        for k, want in ref.items():
            if k in tagged:
                # asdf_rs's plain views: Tagged (tag, value); its objects: Python asdf's types.
                have = got[k]
                if not (got is plain and isinstance(have, (dict, list))):
                    # (to_dict gives tagged containers as plain dicts and lists, by design.)
                    tag = getattr(have, "_tag", None) or have.tag
                    assert tag == want._tag, k
                value = have.value if isinstance(have, asdf_rs.Tagged) else have
                if isinstance(value, (asdf_rs.TreeMapping, asdf_rs.TreeSequence)):
                    value = _plain_rs(value)
                if isinstance(want, dict):
                    assert dict(value) == dict(want), k
                elif isinstance(want, list):
                    assert list(value) == list(want), k
                else:
                    assert str(value) == str(want) and isinstance(value, str), k
            else:
                have = _plain_rs(got[k])
                assert have == want and type(have) is type(want), (k, have, want)
    assert type(objects["x"]) is asdf.tagged.TaggedString and type(objects["m"]) is asdf.tagged.TaggedDict


# --- 2. YAML merge keys --------------------------------------------------------------------

_MERGES = """
base: &b {x: 1, yy: 2, s: short}
other: &o {yy: 20, zz: 30, s: other, y: 9}
deep: &d {<<: *b, dd: 4, yy: 40}
arr: &a {data: !core/ndarray-1.0.0 {data: [1, 2, 3], datatype: int64, shape: [3]}, unit: m}
one: {<<: *b, yy: 5}
many:
  <<: [*b, *o]
  w: 0
reversed:
  <<: [*o, *b]
first:
  yy: 7
  <<: *b
inline:
  <<: {p: 1, q: 0}
  q: 2
twice:
  <<: *b
  <<: *o
same_twice:
  <<: [*b, *b]
through: {<<: *d, e: 5}
with_array: {<<: *a, unit: km}
quoted: {'<<': *b, k: 1}
in_list: [{<<: *o, n: 1}, {<<: [*d, *o]}]
"""


def test_merge_keys_are_applied_as_python_asdf_applies_them(tmp_path):
    path = _write_yaml(tmp_path / "merge.asdf", _MERGES)
    ref = _python_asdf_tree(path)
    # The layouts do differ: the explicit key wins, the order of the list matters.
    assert ref["one"]["yy"] == 5 and ref["first"]["yy"] == 7 and ref["many"] != ref["reversed"]
    assert "<<" in ref["quoted"] and "<<" not in ref["many"]
    with asdf_rs.open(path) as f:
        tree = _plain_rs(f.tree)
        plain = _strip(f.tree.to_dict())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            objects = _strip(f.to_objects())
        for got in (tree, plain, objects):
            for k, want in ref.items():
                g = got[k]
                if k in ("arr", "with_array"):
                    np.testing.assert_array_equal(np.asarray(g["data"]), want["data"])
                    assert {a: b for a, b in g.items() if a != "data"} == {a: b for a, b in want.items() if a != "data"}
                    continue
                assert g == want, (k, g, want)
                if isinstance(want, dict):
                    assert list(g) == list(want), k
        # A merged entry is reached by key and by the pointer its token gives (through `<<`).
        assert f.tree["many"]["zz"] == 30 and f.tree["through"]["x"] == 1
        np.testing.assert_array_equal(f.tree["with_array"]["data"], [1, 2, 3])
        np.testing.assert_array_equal(f["/with_array/<</data"], [1, 2, 3])
        assert len(f.tree["many"]) == len(ref["many"])
        with open(tmp_path / "info.txt", "w") as out:
            text = f.info(file=out)
        assert "    zz: 30" in text and "  <<" in text.split("quoted")[1].split("in_list")[0]
        assert "  <<" not in text.split("quoted")[0]


def test_bad_merge_values_are_refused_naming_the_place_as_python_asdf_refuses_them(tmp_path):
    for body, where in [("m: {<<: 5, a: 1}", "/m/<<"), ("m: {<<: [{a: 1}, 2]}", "/m/<</1")]:
        path = _write_yaml(tmp_path / "bad.asdf", body)
        with pytest.raises(Exception, match="merg"):
            with asdf.open(path) as af:
                af.tree["m"]
        with asdf_rs.open(path) as f:
            with pytest.raises(asdf_rs.AsdfError, match=f"^{where}: a merge key"):
                f.tree["m"]
            with pytest.raises(asdf_rs.AsdfError, match=f"^{where}: a merge key"):
                f.tree.to_dict()


def test_a_mapping_merging_itself_is_read_as_python_asdf_reads_it(tmp_path):
    path = _write_yaml(tmp_path / "self.asdf", "m: &m {a: 1, <<: *m, b: 2}")
    ref = _python_asdf_tree(path)
    with asdf_rs.open(path) as f:
        assert {k: f.tree["m"][k] for k in f.tree["m"]} == dict(ref["m"])


# --- 4. asdf-zarr arrays of records and strings ----------------------------------------------

_ZARR_DTYPES = {
    "rec": np.array([(1, 2.5), (3, 4.5), (5, 6.5), (7, 8.5)], dtype=[("a", "<i4"), ("b", "<f8")]),
    "bytes": np.array([b"ab", b"cd", b"ef", b"gh"], dtype="S2"),
    "text": np.array(["ab", "cd", "ef", "g"], dtype="<U2"),
}


@pytest.mark.parametrize("name", sorted(_ZARR_DTYPES))
def test_asdf_zarr_records_and_strings_are_refused_naming_the_array_and_dtype(tmp_path, name):
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("asdf_zarr")
    a = _ZARR_DTYPES[name]
    path = tmp_path / "z.asdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asdf.AsdfFile({"grp": {"arr": zarr.array(a, chunks=(2,))}}).write_to(path)
        with asdf.open(path) as af:
            # Python asdf with asdf-zarr reads it: asdf_rs refuses it by name, never wrongly.
            np.testing.assert_array_equal(af["grp"]["arr"][:], a)
    dtype_text = {"rec": r'\[\["a", "<i4"\], \["b", "<f8"\]\]', "bytes": '"\\|S2"', "text": '"<U2"'}[name]
    with asdf_rs.open(path) as f:
        for read in (lambda: f["/grp/arr"], lambda: f.tree["grp"]["arr"], lambda: f.lazy("/grp/arr")):
            with pytest.raises(asdf_rs.AsdfError, match=f"^/grp/arr: an asdf-zarr array of Zarr dtype {dtype_text}"):
                read()
    with pytest.raises(asdf_rs.AsdfError, match=r"^/grp/arr: an array of dtype .* cannot be written chunked"):
        asdf_rs.write(tmp_path / "w.asdf", {"grp": {"arr": a}}, chunks=(2,))
    # Without chunks it is an ndarray, which Python asdf reads back equal.
    asdf_rs.write(tmp_path / "w.asdf", {"grp": {"arr": a}})
    with asdf.open(tmp_path / "w.asdf") as af:
        np.testing.assert_array_equal(af["grp"]["arr"], a)


# --- 5. Chunk sizes --------------------------------------------------------------------------


def test_chunk_sizes_follow_zarr_and_never_round(tmp_path):
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("asdf_zarr")
    a = np.arange(16.0).reshape(4, 4)
    for bad in [(0, 2), (2.5, 2), (2, 0.5), (-2, 2), (True, 2), 5, "22"]:
        with pytest.raises(ValueError, match=r"chunk"):
            asdf_rs.write(tmp_path / "c.asdf", {"a": a}, chunks=bad)
        assert not (tmp_path / "c.asdf").exists()
    with pytest.raises(ValueError, match=r"chunks\[0\] is 0"):
        asdf_rs._native.write(str(tmp_path / "c.asdf"), {"a": a}, chunks=[0, 2])
    # zarr: 0 is an error, -1 and None the whole axis, a numpy integer a size.
    with pytest.raises(ZeroDivisionError):
        zarr.array(a, chunks=(0, 2))
    for given in [(-1, 2), (None, 3), (np.int64(2), 2), (10, 1)]:
        want = zarr.array(a, chunks=given).chunks
        asdf_rs.write(tmp_path / "c.asdf", {"a": a}, chunks=given)
        with asdf.open(tmp_path / "c.asdf") as af:
            assert af["a"].chunks == want, given
            np.testing.assert_array_equal(af["a"][:], a)


# --- 6. Paths as bytes and os.PathLike -------------------------------------------------------


def test_paths_as_bytes_and_pathlike_work_as_for_python_open(tmp_path):
    import os

    a = np.arange(6, dtype="<i4").reshape(2, 3)
    names = [
        os.fsencode(tmp_path / "bytes.asdf"),
        os.fsencode(tmp_path) + b"/\xff\xfe-not-utf8.asdf",  # any bytes, as Linux names allow
        tmp_path / "pathlike.asdf",
        str(tmp_path / "text.asdf"),
    ]
    for p in names:
        asdf_rs.write(p, {"a": a, "m": {"k": 1}})
        # The file is where Python's open puts a file of that name.
        with open(p, "rb") as raw:
            assert raw.read(5) == b"#ASDF"
        # Python asdf reads what was written (it takes no bytes paths: their decoded name).
        with asdf.open(os.fsdecode(p)) as af:
            np.testing.assert_array_equal(af["a"], a)
        with asdf_rs.open(p) as f:
            np.testing.assert_array_equal(f["/a"], a)
            np.testing.assert_array_equal(f.lazy("/a")[1:], a[1:])
            np.testing.assert_array_equal(np.asarray(f.to_dask("/a")), a)
            assert f.tree["m"]["k"] == 1
        with asdf_rs.open(p, memmap=True) as f:
            np.testing.assert_array_equal(f["/a"], a)
    with pytest.raises(asdf_rs.AsdfError):
        asdf_rs.open(os.fsencode(tmp_path) + b"/\xff-missing.asdf")


# --- 7. Extensions of other formats ---------------------------------------------------------


def test_write_refuses_a_name_of_another_format(tmp_path):
    for name in ["a.fits", "a.FIT", "a.fts", "a.json", "a.yaml", "a.h5", "a.zarr", "a.npy"]:
        with pytest.raises(ValueError, match=r"writes ASDF files, not"):
            asdf_rs.write(tmp_path / name, {"a": 1})
        assert not (tmp_path / name).exists()
    with pytest.raises(ValueError, match=r"not FITS"):
        asdf_rs.write("s3://bucket/run/a.fits", {"a": 1})
    for name in ["a.asdf", "a", "a.dat", "a.fits.asdf"]:
        asdf_rs.write(tmp_path / name, {"a": 1})
        with asdf.open(tmp_path / name) as af:
            assert af["a"] == 1


# --- 8. xarray: user keys that look like generated dimension names -------------------------


def test_xarray_keeps_a_key_named_dim_0_and_renames_the_generated_dimension(tmp_path):
    xr = pytest.importorskip("xarray")
    path = tmp_path / "d.asdf"
    tree = {"dim_0": np.arange(3.0), "b": np.ones((3, 2)), "g": {"dim_1": np.arange(2)}}
    asdf.AsdfFile(tree).write_to(path)
    with asdf.open(path) as af:
        ref = {k: np.asarray(af[k]) for k in ("dim_0", "b")}
    with pytest.warns(UserWarning, match=r"xarray dimensions renamed.*'dim_0' -> 'dim_0_1'"):
        ds = xr.open_dataset(path, engine="asdf_rs")
    with ds:
        # The user's key stays a data variable of its own name, not a coordinate.
        assert "dim_0" in ds.data_vars and "dim_0" not in ds.coords and "dim_0" not in ds.dims
        assert ds["dim_0"].dims == ("dim_0_1",) and ds["b"].dims == ("dim_0_1", "dim_1")
        assert "g/dim_1" in ds.data_vars
        for k, v in ref.items():
            np.testing.assert_array_equal(ds[k].values, v)
    with pytest.warns(UserWarning, match=r"xarray dimensions renamed"):
        dt = xr.open_datatree(path, engine="asdf_rs")
    assert "dim_0" in dt.ds.data_vars and "dim_0" not in dt.ds.dims
    assert "dim_1" in dt["g"].ds.data_vars and "dim_1" not in dt["g"].ds.dims
    np.testing.assert_array_equal(dt["g"]["dim_1"].values, np.arange(2))


# --- 9. Recursive anchors ------------------------------------------------------------------

_RECURSIVE = """
a: &a {x: 1, self: *a, arr: !core/ndarray-1.0.0 {data: [1, 2], datatype: int8, shape: [2]}}
l: &l [1, *l]
"""


def test_recursive_anchors_are_marked_in_info_and_passed_over_by_xarray(tmp_path):
    xr = pytest.importorskip("xarray")
    path = _write_yaml(tmp_path / "r.asdf", _RECURSIVE)
    with asdf.open(path) as af:
        assert af.tree["a"]["self"] is af.tree["a"] and af.tree["l"][1] is af.tree["l"]
        import io

        out = io.StringIO()
        import contextlib

        with contextlib.redirect_stdout(out):
            af.info(max_rows=50)
        ref_info = out.getvalue()
    assert ref_info.count("(recursive reference)") == 2
    with asdf_rs.open(path) as f:
        d = f.tree.to_dict()
        assert d["a"]["self"] is d["a"] and d["l"][1] is d["l"]
        with open(tmp_path / "info.txt", "w") as out:
            text = f.info(file=out)
        assert text.count("(recursive reference)") == 2
        assert "self: (recursive reference)" in text and "[1]: (recursive reference)" in text
    with pytest.warns(UserWarning, match=r"tree\['a'\]\['self'\] \(/a/self\) is a recursive reference"):
        ds = xr.open_dataset(path, engine="asdf_rs")
    np.testing.assert_array_equal(ds["a/arr"].values, [1, 2])
    assert ds.attrs["a/x"] == 1 and ds.attrs["l/0"] == 1
    with pytest.warns(UserWarning, match=r"recursive reference"):
        dt = xr.open_datatree(path, engine="asdf_rs")
    np.testing.assert_array_equal(dt["a"]["arr"].values, [1, 2])
    assert "self" not in dt["a"].children


# --- 10. An external Zarr store outside the file's folder -----------------------------------


def test_a_store_outside_the_folder_is_refused_naming_the_python_keyword_that_reads_it(tmp_path):
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("asdf_zarr")
    a = np.arange(12.0).reshape(3, 4)
    store = zarr.storage.DirectoryStore(str(tmp_path / "store.zarr"))
    z = zarr.create(shape=a.shape, chunks=(2, 2), dtype=a.dtype, store=store)
    z[:] = a
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "f.asdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asdf.AsdfFile({"z": z}).write_to(path)
        with asdf.open(path) as af:
            np.testing.assert_array_equal(af["z"][:], a)
    with asdf_rs.open(path) as f:
        with pytest.raises(asdf_rs.AsdfError, match=r"outside the file's directory.*references=\"any\"` in asdf_rs") as e:
            f["/z"]
        assert "ReferencePolicy" not in str(e.value).split("asdf_rs")[0]
    with asdf_rs.open(path, references="any") as f:
        np.testing.assert_array_equal(f["/z"], a)
        np.testing.assert_array_equal(f.lazy("/z")[1:, 2:], a[1:, 2:])
    with asdf_rs.open(tmp_path / "sub" / ".." / "sub" / "f.asdf", references="none") as f:
        with pytest.raises(asdf_rs.AsdfError):
            f["/z"]
    with pytest.raises(ValueError, match=r"references='all'|references=\"all\""):
        asdf_rs.open(path, references="all")


# --- 11. Strict pointer tokens ---------------------------------------------------------------


def test_pointer_indices_and_entry_tokens_are_strict(tmp_path):
    path = tmp_path / "p.asdf"
    asdf.AsdfFile({"l": [10, 20, 30], "m": {"k": 1, 1: "int", "1": "str"}}).write_to(path)
    with asdf_rs.open(path) as f:
        assert f["/l/1"] == 20 and f["/l/0"] == 10 and f["/m/~e0"] == 1
        # RFC 6901: decimal digits, no sign, no leading zeros; `~e<i>` as strict.
        for bad in ["/l/+1", "/l/01", "/l/-1", "/l/ 1", "/l/1 ", "/l/1_0", "/l/", "/l/١",
                    "/m/~e00", "/m/~e+0", "/m/~e", "/m/~e-1", "/m/~e 1", "/m/~e01"]:
            with pytest.raises(asdf_rs.AsdfError, match="no node"):
                f[bad]
        # The integer key 1 beside '1' by its entry token, as the tree names it.
        tokens = dict(f._native.node("/m")[2])
        assert f["/m/" + tokens[1]] == "int" and f["/m/" + tokens["1"]] == "str"


# --- 12. Indices out of range ---------------------------------------------------------------


@pytest.mark.parametrize("chunks", [None, (2, 2)])
def test_out_of_range_indices_raise_index_error_as_numpy(tmp_path, chunks):
    path = tmp_path / "i.asdf"
    a = np.arange(16.0).reshape(4, 4)
    asdf_rs.write(path, {"a": a}, chunks=chunks)
    with asdf_rs.open(path) as f:
        lazy = f.lazy("/a")
        for key in [4, -5, (0, 4), (0, -5), (0, 0, 0), (Ellipsis, Ellipsis), 2**70]:
            with pytest.raises(IndexError) as numpy_error:
                a[key]
            with pytest.raises(IndexError) as ours:
                lazy[key]
            # One exception for both habits: numpy's IndexError and asdf_rs's AsdfError.
            assert isinstance(ours.value, asdf_rs.AsdfError) and isinstance(ours.value, asdf_rs.AsdfIndexError)
            assert numpy_error.value is not None
        for index in [(4, 0), (0, -5)]:
            with pytest.raises(IndexError):
                f.element("/a", index)
        # In range: the values numpy gives.
        np.testing.assert_array_equal(lazy[-1], a[-1])
        np.testing.assert_array_equal(lazy[1:3, -2:], a[1:3, -2:])


def test_a_block_claiming_more_than_the_file_holds_costs_no_memory(tmp_path):
    """Found by the second review: a 305-byte file whose block header claims 3 GB (stored, or
    decoded from zlib) took 2.9 GB and 15 s in `f["/a"]`, `f.tree` and `to_dict()` before its
    error. The claim is checked against the file (or read a piece at a time) first."""
    import resource
    import struct

    n = 3_000_000_000
    tree = f"a: !core/ndarray-1.1.0 {{source: 0, datatype: uint8, byteorder: little, shape: [{n}]}}\n"
    head = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.6.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
    data = b"\0" * 64
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for comp in (b"\0\0\0\0", b"zlib"):
        sizes = (n, n, n) if comp == b"\0\0\0\0" else (len(data), len(data), n)
        blk = b"\xd3BLK" + struct.pack(">H", 48) + struct.pack(">I", 0) + comp + struct.pack(">QQQ", *sizes) + b"\0" * 16
        path = tmp_path / f"claim-{comp[0]}.asdf"
        path.write_bytes(head + tree.encode() + b"...\n" + blk + data)
        for read in (lambda f: f["/a"], lambda f: f.tree["a"], lambda f: f.tree.to_dict()["a"]):
            with asdf_rs.open(path, validate=False) as f:
                with pytest.raises(asdf_rs.AsdfError):
                    read(f)
    # ru_maxrss is in KiB: far below the 3 GB claimed.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 256 * 1024


def test_to_objects_reads_external_zarr_stores_only_as_the_reference_policy_allows(tmp_path, monkeypatch):
    """Found by the second Python review: `to_objects()` and `objects=True` handed asdf-zarr's
    converter the store's path as written, which it opened from the working directory, under
    any policy, creating the store when missing. The zarr array is now read by asdf_rs, from
    the file's directory, under the policy; a refused node stays as written with Python
    asdf's conversion warning, and nothing is created."""
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("asdf_zarr")
    from asdf.exceptions import AsdfConversionWarning
    from asdf.tagged import TaggedDict

    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    inside = np.arange(20.0).reshape(4, 5)
    z = zarr.open_array(store=zarr.storage.DirectoryStore("inside.zarr"), mode="w", shape=(4, 5), chunks=(2, 2), dtype="f8")
    z[:] = inside
    outside = np.array([7, 8, 9], dtype="i4")
    z2 = zarr.open_array(store=zarr.storage.DirectoryStore(str(tmp_path / "outside.zarr")), mode="w", shape=(3,), chunks=(2,), dtype="i4")
    z2[:] = outside
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asdf.AsdfFile({"z": z}).write_to("in.asdf")
        asdf.AsdfFile({"z": z2}).write_to("out.asdf")
    # A store path written relative to the file's folder (asdf-zarr writes absolute ones).
    text = (tmp_path / "sub" / "in.asdf").read_bytes()
    rel = tmp_path / "sub" / "rel.asdf"
    rel.write_bytes(text.replace(str(tmp_path / "sub" / "inside.zarr").encode(), b"inside.zarr"))
    # A missing store: nothing may be created.
    missing = tmp_path / "sub" / "missing.asdf"
    missing.write_bytes(text.replace(str(tmp_path / "sub" / "inside.zarr").encode(), str(tmp_path / "nowhere.zarr").encode()))
    monkeypatch.chdir(tmp_path.parent)

    def objects(path, refs, objects_keyword=False):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            f = asdf_rs.open(tmp_path / "sub" / path, references=refs, objects=objects_keyword)
            z = f.tree["z"] if objects_keyword else f.to_objects()["z"]
        return z, [x for x in w if issubclass(x.category, AsdfConversionWarning)]

    for path in ("in.asdf", "rel.asdf"):
        for refs in ("inside", "any"):
            for kw in (False, True):
                z, warned = objects(path, refs, kw)
                assert isinstance(z, zarr.Array) and not warned, (path, refs)
                np.testing.assert_array_equal(z[...], inside)
                with pytest.raises(Exception):
                    z[0, 0] = 1.0
        z, warned = objects(path, "none")
        assert isinstance(z, TaggedDict) and len(warned) == 1
        assert "allows no other file" in str(warned[0].message)
    for refs in ("inside", "none"):
        for kw in (False, True):
            z, warned = objects("out.asdf", refs, kw)
            assert isinstance(z, TaggedDict) and len(warned) == 1, refs
            assert str(warned[0].message).startswith("A node failed to convert with: /z: ")
            assert z["store"]["path"] == str(tmp_path / "outside.zarr")
    z, warned = objects("out.asdf", "any")
    np.testing.assert_array_equal(z[...], outside)
    # A chunk file that is a link out of the folder is refused, as for `f["/z"]`.
    secret = tmp_path / "secret"
    secret.write_bytes(b"\0" * 16)
    chunk = tmp_path / "sub" / "inside.zarr" / "0.0"
    chunk.unlink()
    chunk.symlink_to(secret)
    z, warned = objects("in.asdf", "inside")
    with pytest.raises(asdf_rs.AsdfError, match=r"leads outside"):
        z[...]
    for refs in ("inside", "none", "any"):
        z, warned = objects("missing.asdf", refs)
        assert isinstance(z, TaggedDict) and len(warned) == 1
    assert not (tmp_path / "nowhere.zarr").exists()


def test_keys_python_holds_equal_are_renamed_never_merged(tmp_path):
    """Found by the second Python review: keys `1` and `1.0` of one mapping became one dict key
    (one value lost, silently). The later is renamed to its text, with a warning; a key written
    twice (`1` and `true`, as PyYAML reads them) is a warning too, naming the line."""
    path = _write_yaml(tmp_path / "k.asdf", "m: {1: int, 1.0: float, true: bool}\nn: {2: a, '2': b, 2.0: c, '2.0': d}")
    with pytest.warns(UserWarning) as record:
        f = asdf_rs.open(path, validate=False)
        views = (f.tree.to_dict(), {"m": dict(f.tree["m"]), "n": dict(f.tree["n"])}, f.to_objects())
    messages = " ".join(str(w.message) for w in record)
    assert "duplicate mapping key `true`" in messages and "6:" in messages
    assert '/m: 1.0 read as "1.0"' in messages
    for got in views:
        assert got["m"] == {1: "bool", "1.0": "float"}
        # The float 2.0 renamed; the string key "2.0" of the file keeps its name.
        assert got["n"] == {2: "a", "2": "b", "2.0_1": "c", "2.0": "d"}
        # Every value of the file is there.
        assert sorted(got["n"].values()) == ["a", "b", "c", "d"]


def test_python_values_are_written_as_python_asdf_writes_them(tmp_path):
    """Found by the second Python review: numpy scalars were written as 0-d arrays, a
    bytearray as a list of integers, an OrderedDict as a plain mapping, sets were refused.
    Each now reads back in Python asdf as the type it reads from its own files."""
    import collections

    tree = {
        "f": np.float32(1.5),
        "i": np.int32(3),
        "b": np.bool_(True),
        "u": np.uint8(255),
        "ba": bytearray(b"ab"),
        "od": collections.OrderedDict([("z", 1), ("a", np.arange(3))]),
        "s": {3, "a"},
        "fs": frozenset(),
    }
    path = tmp_path / "v.asdf"
    asdf_rs.write(path, tree)
    with asdf.open(path) as af:
        assert type(af["f"]) is float and af["f"] == 1.5
        assert type(af["i"]) is int and af["i"] == 3
        assert af["b"] is True
        assert type(af["u"]) is int and af["u"] == 255
        assert af["ba"] == b"ab"
        assert type(af["od"]) is collections.OrderedDict and list(af["od"]) == ["z", "a"]
        np.testing.assert_array_equal(af["od"]["a"], np.arange(3))
        assert af["s"] == {3, "a"} and af["fs"] == set()
    got = asdf_rs.open(path).tree.to_dict()
    assert type(got["od"]) is collections.OrderedDict and got["s"] == {3, "a"} and got["ba"] == b"ab"
    np.testing.assert_array_equal(got["od"]["a"], np.arange(3))


def test_writes_that_cannot_be_made_say_why_and_where(tmp_path):
    """Found by the second Python review: a tree that contains itself was refused with a
    pointer 990 keys long; `chunks=(10**20, 3)` raised OverflowError; `open(BytesIO(...))`
    said 'No such file or directory'."""
    import io

    d = {"a": [1]}
    d["a"].append(d)
    with pytest.raises(asdf_rs.AsdfError, match=r"^/a/1: the tree contains itself: this is the dict at /"):
        asdf_rs.write(tmp_path / "r.asdf", d)
    shared = [1, 2]
    asdf_rs.write(tmp_path / "shared.asdf", {"p": shared, "q": shared})
    assert asdf_rs.open(tmp_path / "shared.asdf").tree.to_dict()["q"] == [1, 2]
    with pytest.raises(ValueError, match=r"chunks\[0\] is 100000000000000000000: larger than any axis"):
        asdf_rs.write(tmp_path / "c.asdf", {"a": np.zeros((4, 3))}, chunks=(10**20, 3))
    with pytest.raises(asdf_rs.AsdfError, match=r"set member \(1, 2\) \(tuple\)"):
        asdf_rs.write(tmp_path / "s.asdf", {"s": {(1, 2)}})
    with pytest.raises(TypeError, match=r"not a file object \(BytesIO\)"):
        asdf_rs.open(io.BytesIO(b"#ASDF 1.0.0\n"))
    with open(tmp_path / "shared.asdf", "rb") as fobj:
        with pytest.raises(TypeError, match=r"shared.asdf"):
            asdf_rs.open(fobj)


def test_tree_sequences_index_as_lists_do(tmp_path):
    """Found by the second Python review: `tree['l']['x']` raised a comparison TypeError,
    `tree['l'][1.5]` an AsdfError 'no node', `tree['l'][-4]` an IndexError of -1."""
    path = _write_yaml(tmp_path / "l.asdf", "l: [10, 20, 30]")
    l = asdf_rs.open(path).tree["l"]
    plain = [10, 20, 30]
    for i in (0, -1, True, np.int64(2), np.uint8(1)):
        assert l[i] == plain[i]
    for bad in ("x", 1.5, None):
        with pytest.raises(TypeError):
            plain[bad]
        with pytest.raises(TypeError, match=type(bad).__name__):
            l[bad]
    for far in (3, -4, 10**30):
        with pytest.raises(IndexError, match=repr(far)):
            l[far]
    assert l[::-1] == plain[::-1]


def test_exploded_sources_are_uris_read_under_the_policy(tmp_path):
    """Found by the second Python review: `references="any"` did not follow `file://` sources
    (the Python side joined the text to the folder itself) nor percent-encoded names, which
    Python asdf decodes (`my%20file.asdf`); and `..%2F` must count as `..` for the policy."""
    (tmp_path / "sub").mkdir()
    asdf_rs.write(tmp_path / "secret.asdf", {"x": np.arange(3.0)})
    asdf_rs.write(tmp_path / "sub" / "my file.asdf", {"x": np.arange(3.0) + 10})
    head = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
    cases = {
        "rel": ("../secret.asdf", {"any"}),
        "abs": (str(tmp_path / "secret.asdf"), {"any"}),
        "file": ("file://" + str(tmp_path / "secret.asdf"), {"any"}),
        "pct": ("..%2Fsecret.asdf", {"any"}),
        "space": ("my%20file.asdf", {"any", "inside"}),
    }
    for name, (src, allowed) in cases.items():
        path = tmp_path / "sub" / f"{name}.asdf"
        path.write_bytes(
            head + f"a: !core/ndarray-1.0.0 {{source: '{src}', datatype: float64, byteorder: little, shape: [3]}}\n...\n".encode()
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with asdf.open(path) as af:
                want = np.array(af["a"])
        for refs in ("inside", "any", "none"):
            with asdf_rs.open(path, references=refs) as f:
                if refs in allowed:
                    np.testing.assert_array_equal(f["/a"], want)
                    np.testing.assert_array_equal(f.to_objects()["a"][:], want)
                else:
                    with pytest.raises(asdf_rs.AsdfError, match="unresolvable reference"):
                        f["/a"]


def test_numpy_scalars_without_a_python_value_are_refused_or_made_floats(tmp_path):
    """Found by the third Python review: a long double scalar crashed the interpreter (its
    `item()` is itself, recursion without end); a datetime64 of nanoseconds was written as an
    integer and NaT as null; a record scalar lost its field names. Long doubles are written
    as Python floats (as Python asdf writes them); the others are refused, as Python asdf does."""
    asdf_rs.write(tmp_path / "l.asdf", {"v": np.longdouble(1.5), "c": np.clongdouble(1 + 2j), "n": [np.longdouble("nan")]})
    with asdf.open(tmp_path / "l.asdf") as af:
        assert af["v"] == 1.5 and af["c"] == 1 + 2j and np.isnan(af["n"][0])
    for bad in (np.datetime64("2020-01-02T03:04:05.123456789"), np.datetime64("NaT"), np.timedelta64(3, "s"), np.zeros(1, [("a", "i4")])[0]):
        with pytest.raises(asdf_rs.AsdfError, match="cannot write a numpy"):
            asdf_rs.write(tmp_path / "b.asdf", {"v": bad})


def test_ordered_mappings_read_as_mappings_are(tmp_path):
    """Found by the third Python review: an `!!omap` with keys Python holds equal (`1`,
    `1.0`) lost entries silently when made an OrderedDict; they are renamed as a mapping's
    keys are, with the warning. The fourth review: a key written twice (`a`, `a`) is one entry
    with the later value, as Python asdf gives it and as a plain mapping's repeated key reads,
    with a warning naming its place. `!!pairs` keep every pair (a list)."""
    import collections

    path = _write_yaml(
        tmp_path / "o.asdf",
        "o: !!omap [{a: 1}, {b: 3}, {a: 2}, {1: x}, {1.0: y}, {true: z}]\np: !!pairs [{a: 1}, {a: 2}]\nq: !!omap [{a: 1}, {a: 2}]",
    )
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f = asdf_rs.open(path, validate=False)
        views = (f.tree.to_dict(), f.to_objects())
    messages = " ".join(str(x.message) for x in w)
    assert '/o: 1.0 read as "1.0"' in messages
    assert "/o/2: the key 'a' written again" in messages and "/o/5: the key True written again" in messages
    for got in views:
        assert type(got["o"]) is collections.OrderedDict
        # `true` is the key `1` written again (as in any mapping PyYAML reads).
        assert list(got["o"].items()) == [("a", 2), ("b", 3), (1, "z"), ("1.0", "y")]
        assert list(got["p"]) == [("a", 1), ("a", 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf.open(path) as af:
            assert af["q"] == views[0]["q"] == collections.OrderedDict(a=2)
            assert list(af["o"].items())[:2] == list(views[0]["o"].items())[:2]


def test_integer_keys_beyond_64_bits_are_refused_on_write(tmp_path):
    """Found by the third Python review: `write({"d": {2**70: "v"}})` wrote the key as a
    `core/integer` mapping, a file neither Python asdf nor asdf_rs can read (exit 0)."""
    # (The fourth review: -2**63 too, which Python asdf's validator refuses as a literal: its
    # literals are from -(2**63-2) to 2**63-1.)
    for key in (2**70, -(2**63) - 1, 2**63, -(2**63), -(2**63 - 1)):
        with pytest.raises(asdf_rs.AsdfError, match=r"/d: the mapping key .* must be from -\(2\*\*63-2\) to 2\*\*63-1"):
            asdf_rs.write(tmp_path / "k.asdf", {"d": {key: "v"}})
        with pytest.raises(asdf_rs.AsdfError, match=r"set member .* must be from"):
            asdf_rs.write(tmp_path / "k.asdf", {"d": {key}})
    assert not (tmp_path / "k.asdf").exists()
    # As values, every integer is written: beyond that range as `core/integer`, as Python
    # asdf writes them, and the file validates in Python asdf.
    values = [2**63 - 1, -(2**63 - 2), -(2**63 - 1), -(2**63), 2**63, 2**70, -(2**70)]
    asdf_rs.write(tmp_path / "ok.asdf", {"d": {2**63 - 1: "v", -(2**63 - 2): "w"}, "v": values, "m": -(2**63)})
    with asdf.open(tmp_path / "ok.asdf") as af:
        af.validate()
        assert af["d"] == {2**63 - 1: "v", -(2**63 - 2): "w"} and af["v"] == values and af["m"] == -(2**63)
    assert asdf_rs.open(tmp_path / "ok.asdf").tree.to_dict()["v"] == values


def test_complex_numbers_are_written_as_python_asdf_writes_them(tmp_path):
    """Found by the third Python review: a complex NaN was written `NaN+1j`, which the core
    schema's pattern refuses (it admits `nan`); the file failed validation."""
    values = [complex("nan+1j"), complex(1, float("nan")), complex("inf-infj"), 1e300 + 1e-300j, -0.0 + 0j, 2j, np.complex64(1.5 - 2j)]
    asdf_rs.write(tmp_path / "c.asdf", {"c": values})
    ref = tmp_path / "ref.asdf"
    asdf.AsdfFile({"c": [complex(v) for v in values]}).write_to(ref)
    # The same text as Python asdf writes, and the same values read back by both.
    ours = [l for l in (tmp_path / "c.asdf").read_text().splitlines() if "complex" in l]
    theirs = [l for l in ref.read_text().splitlines() if "complex" in l]
    assert ours == theirs
    with asdf.open(tmp_path / "c.asdf") as af:
        got = af["c"]
    for g, v in zip(got, values):
        np.testing.assert_equal(g, complex(v))
    assert asdf_rs.open(tmp_path / "c.asdf").validate() is None


def test_an_exploded_array_whose_file_is_missing_fails_only_when_used(tmp_path):
    """Found by the third Python review: `to_objects()` failed the whole tree for one exploded
    array whose file was missing or refused. As in Python asdf, the array is lazy and raises
    when its data is used; the rest of the tree is read."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asdf.AsdfFile({"a": np.arange(5.0), "b": np.arange(3), "m": 1}).write_to(tmp_path / "main.asdf", all_array_storage="external")
    (tmp_path / "main0000.asdf").unlink()
    for refs in ("inside", "none"):
        f = asdf_rs.open(tmp_path / "main.asdf", references=refs)
        t = f.to_objects()
        assert t["m"] == 1 and t["a"].shape == (5,) and t["a"].dtype == np.float64
        with pytest.raises(asdf_rs.AsdfError, match="main0000.asdf" if refs == "inside" else "allows no other file"):
            t["a"][0]
        with pytest.raises(asdf_rs.AsdfError):
            f["/a"]
        if refs == "inside":
            np.testing.assert_array_equal(t["b"][:], np.arange(3))
        # A file without `$ref`s resolves whatever its arrays' files are.
        f.resolve_references()
        assert f.tree["m"] == 1


def test_a_reference_cycle_is_an_error_and_an_alias_key_is_read(tmp_path):
    """Found by the third Python review: `$ref`s that lead only to one another resolved to
    None, silently; a key that is an alias (`{*k : 2}`), which Python asdf reads as the
    anchored scalar, was refused."""
    path = _write_yaml(tmp_path / "c.asdf", "a: {$ref: '#/b'}\nb: {$ref: '#/a'}\nc: {$ref: '#/d'}\nd: 4")
    f = asdf_rs.open(path)
    with pytest.raises(asdf_rs.AsdfError, match=r"cycle .*/a -> /b -> /a"):
        f.resolve_references()
    path = _write_yaml(tmp_path / "k.asdf", "a: &k name\nb: {*k : 2}")
    assert asdf_rs.open(path).tree.to_dict()["b"] == _python_asdf_tree(path)["b"] == {"name": 2}


def test_smaller_findings_of_the_third_python_review(tmp_path, monkeypatch):
    """The third Python review's smaller findings, each against what Python asdf, numpy or a
    dict gives."""
    # `f["/missing"]` raises what `af["missing"]` raises: a KeyError (and an AsdfError).
    asdf_rs.write(tmp_path / "a.asdf", {"x": np.arange(6).reshape(2, 3), "m": memoryview(b"xyz")})
    f = asdf_rs.open(tmp_path / "a.asdf")
    with pytest.raises(KeyError):
        f["/missing"]
    with pytest.raises(asdf_rs.AsdfKeyError):
        f["/x/nope"]
    # A memoryview is written as its bytes (a list of small integers before).
    with asdf.open(tmp_path / "a.asdf") as af:
        assert af["m"] == b"xyz"
    # to_dask's chunk_bytes: None is the default; a wrong type or size is said plainly.
    pytest.importorskip("dask")
    np.testing.assert_array_equal(f.to_dask("/x", chunk_bytes=None).compute(), np.arange(6).reshape(2, 3))
    with pytest.raises(TypeError, match="chunk_bytes must be a whole number"):
        f.to_dask("/x", chunk_bytes="1MB")
    with pytest.raises(ValueError, match="chunk_bytes is 0"):
        f.to_dask("/x", chunk_bytes=0)
    # A key rename is warned once per open file, not at every read of its mapping.
    path = _write_yaml(tmp_path / "k.asdf", "m: {1: a, 1.0: b}")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = asdf_rs.open(path, validate=False)
        for _ in range(3):
            g.tree["m"].to_dict() if hasattr(g.tree["m"], "to_dict") else dict(g.tree["m"])
            g.to_objects()
    assert sum("were renamed" in str(x.message) for x in w) == 1


def test_element_of_a_chunked_array_is_one_element(tmp_path):
    """Found by the third Python review: `element()` of a chunked array with too few indices
    gave a sub-array; an element is one value, one index per axis, as of a block's array."""
    data = np.arange(24.0).reshape(4, 6)
    asdf_rs.write(tmp_path / "c.asdf", {"c": data}, chunks=[2, 4])
    f = asdf_rs.open(tmp_path / "c.asdf")
    assert f.element("/c", (3, 5)) == data[3, 5] == data.item(3, 5)
    assert f.element("/c", (-1, 0)) == data[-1, 0]
    # numpy: a row, not an element; then three IndexErrors.
    assert np.ndim(data[(1,)]) == 1
    for bad in ((1,), (1, 2, 3), (1.0, 2), (4, 0)):
        if len(bad) != 1:
            with pytest.raises(IndexError):
                data[bad]
        with pytest.raises(IndexError):
            f.element("/c", bad)


def test_a_local_fsstore_is_read_as_a_folder_under_the_policy(tmp_path, monkeypatch):
    """Found by the third Python review: a zarr array in zarr-python's `FSStore` of a local
    path (which Python asdf + asdf-zarr read) was refused with "read only for a file opened
    from a URL". It is read as a directory store, under the reference policy."""
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("asdf_zarr")
    (tmp_path / "sub").mkdir()
    want = np.arange(10, dtype="i4")
    for name, where in (("in", tmp_path / "sub" / "fs.zarr"), ("out", tmp_path / "fs.zarr")):
        z = zarr.open_array(store=zarr.storage.FSStore(str(where)), mode="w", shape=(10,), chunks=(3,), dtype="i4")
        z[:] = want
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            asdf.AsdfFile({"z": z}).write_to(tmp_path / "sub" / f"{name}.asdf")
        with asdf.open(tmp_path / "sub" / f"{name}.asdf") as af:
            np.testing.assert_array_equal(af["z"][:], want)
    monkeypatch.chdir(tmp_path.parent)
    for refs in ("inside", "any"):
        np.testing.assert_array_equal(asdf_rs.open(tmp_path / "sub" / "in.asdf", references=refs)["/z"], want)
    np.testing.assert_array_equal(asdf_rs.open(tmp_path / "sub" / "out.asdf", references="any")["/z"], want)
    for refs in ("inside", "none"):
        with pytest.raises(asdf_rs.AsdfError, match="outside the file|allows no other file"):
            asdf_rs.open(tmp_path / "sub" / "out.asdf", references=refs)["/z"]


def test_write_to_keeps_compression_and_shared_blocks(tmp_path):
    """Found by the third Python review: rewriting a file meant `write(tree.to_dict())`, which
    lost each block's compression and made views of one array separate copies. `File.write_to`
    writes the file as it is, as Python asdf's `AsdfFile.write_to` does."""
    base = np.arange(100.0).reshape(10, 10)
    src = tmp_path / "src.asdf"
    af = asdf.AsdfFile({"base": base, "view": base[2:5], "other": np.arange(7, dtype="i2")})
    af.set_array_compression(af["base"], "zlib")
    af.set_array_compression(af["other"], "bzp2")
    af.write_to(src)

    def blocks(path):
        with asdf.open(path) as g:
            info = sorted((b.header["compression"], int(b.header["data_size"])) for b in g._blocks.blocks)
            values = {k: np.array(g[k]) for k in ("base", "view", "other")}
        return info, values

    want_blocks, want = blocks(src)
    out = tmp_path / "out.asdf"
    with asdf_rs.open(src) as f:
        f.write_to(out)
    got_blocks, got = blocks(out)
    assert got_blocks == want_blocks
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
    # Two arrays that view one block (as the standard allows: offset and strides into it)
    # still share it.
    shared = tmp_path / "shared.asdf"
    asdf.AsdfFile({"base": base, "other": np.arange(7, dtype="i2")}).write_to(shared, include_block_index=False)
    text = shared.read_bytes()
    view = b"view: !core/ndarray-1.1.0 {source: 0, datatype: float64, byteorder: little, shape: [3, 10], offset: 160, strides: [80, 8]}\n"
    shared.write_bytes(text.replace(b"\n...\n", b"\n" + view + b"...\n", 1))
    assert len(blocks(shared)[0]) == 2
    with asdf_rs.open(shared) as f:
        f.write_to(out)
    assert blocks(out)[0] == blocks(shared)[0]
    np.testing.assert_array_equal(blocks(out)[1]["view"], base[2:5])
    # Every block written without compression when asked.
    with asdf_rs.open(src) as f:
        f.write_to(tmp_path / "plain.asdf", compression="none")
    assert {c for c, _ in blocks(tmp_path / "plain.asdf")[0]} == {b"\0\0\0\0"}
    # Over its own path: written, and the values kept.
    f = asdf_rs.open(out)
    f.write_to(out, compression="zlib")
    np.testing.assert_array_equal(blocks(out)[1]["view"], base[2:5])
    with pytest.raises(asdf_rs.AsdfError, match="unknown compression"):
        asdf_rs.open(src).write_to(tmp_path / "x.asdf", compression="no such codec")
    assert not (tmp_path / "x.asdf").exists()


def test_fourth_python_review(tmp_path):
    """Found by the fourth Python review, each against Python asdf, numpy or RFC 6901."""
    # An alias of a `$ref` node meant nothing after resolve_references (None, or an error).
    path = _write_yaml(
        tmp_path / "r.asdf",
        "a: &R {$ref: '#/b'}\nb: 3\nc: *R\nl: [*R]\nd: {$ref: '#/b%20c'}\nb c: 7\ne: {$ref: '#/b', note: x}",
    )
    with asdf.open(path) as af:
        af.resolve_references()
        want = {k: af.tree[k] for k in "abcdle"}
    f = asdf_rs.open(path)
    f.resolve_references()
    got = f.tree.to_dict()
    assert {k: got[k] for k in "abcdle"} == want == {"a": 3, "b": 3, "c": 3, "d": 7, "l": [3], "e": 3}
    assert f.to_objects()["c"] == f["/c"] == 3
    f.write_to(tmp_path / "r2.asdf")
    with asdf.open(tmp_path / "r2.asdf") as af:
        assert af["c"] == 3 and af["l"] == [3]
    # -2**63 is written as core/integer (Python asdf's validator refuses it as a literal).
    asdf_rs.write(tmp_path / "m.asdf", {"v": -(2**63), "l": [-(2**63)]})
    with asdf.open(tmp_path / "m.asdf") as af:
        af.validate()
        assert af["v"] == -(2**63) and af["l"] == [-(2**63)]
    # A set of members Python asdf writes: None and floats too; read back without a warning.
    asdf_rs.write(tmp_path / "s.asdf", {"s": {1, "a", None, 2.5}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert asdf_rs.open(tmp_path / "s.asdf").tree.to_dict()["s"] == {1, "a", None, 2.5}
    with asdf.open(tmp_path / "s.asdf") as af:
        assert af["s"] == {1, "a", None, 2.5}
    # A renamed key is reached by a pointer of its text.
    path = _write_yaml(tmp_path / "z.asdf", "z: {1: p, 1.0: q}")
    with pytest.warns(UserWarning):
        g = asdf_rs.open(path, validate=False)
        assert g["/z/1.0"] == g.tree["z"]["1.0"] == "q"
    # element(): one integer for a 1-d array; errors as numpy's, and AsdfErrors.
    asdf_rs.write(tmp_path / "e.asdf", {"v": np.arange(5), "a": np.arange(12).reshape(3, 4), "m": {"x": 1}})
    h = asdf_rs.open(tmp_path / "e.asdf")
    assert h.element("/v", 3) == 3 and h.element("/v", np.int64(-1)) == 4
    for bad in ((3, 0), 5, (0,)):
        with pytest.raises(asdf_rs.AsdfIndexError):
            h.element("/a", bad)
    with pytest.raises(asdf_rs.AsdfError, match="/m: not an ndarray"):
        h.element("/m", (0,))
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        np.arange(12).reshape(3, 4)[::0]
    with pytest.raises(asdf_rs.AsdfValueError, match="slice step cannot be zero"):
        h.lazy("/a")[::0]
    # A lone surrogate: an error naming the place, no file left.
    with pytest.raises(asdf_rs.AsdfError, match=r"^/meta/bad: the string .* is not valid Unicode"):
        asdf_rs.write(tmp_path / "u.asdf", {"meta": {"bad": "x\ud800"}})
    assert not (tmp_path / "u.asdf").exists()
