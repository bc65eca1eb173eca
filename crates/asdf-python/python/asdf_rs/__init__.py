"""ASDF files from Python through asdf-rs.

    import asdf_rs
    with asdf_rs.open("obs.asdf") as f:            # or "https://...", "s3://bucket/obs.asdf"
        sci = f["/sci/data"]                         # a read-only numpy array
        f.tree["meta"]["instrument"]                 # the tree, read as it is asked for
        f.validate()
        d = f.to_dask("/sci/data")                   # a dask array, a task per block or rows

    asdf_rs.write("out.asdf", {"data": numpy_array, "meta": {...}}, compression="zlib")

Errors are `AsdfError` (and `AsdfValidationError` for schema violations; `AsdfKeyError`, also a
KeyError, for no node at a pointer; `AsdfIndexError`, also an IndexError, for an index outside an
array; `AsdfValueError`, also a ValueError, for a slice step of 0) with `pointer`, `line`, `column`
and `offset` where they apply.
"""

from collections.abc import Mapping, Sequence

import operator
import os

import numpy as np

from . import _native
from ._native import AsdfError, AsdfIndexError, AsdfKeyError, AsdfValidationError, AsdfValueError

__all__ = [
    "open",
    "write",
    "references",
    "to_dask",
    "File",
    "TreeMapping",
    "TreeSequence",
    "Tagged",
    "AsdfError",
    "AsdfIndexError",
    "AsdfKeyError",
    "AsdfValidationError",
    "AsdfValueError",
]
__version__ = _native.__version__


def _set_upload_guard():
    """Each multipart upload to object storage is guarded by a process of its own (this
    interpreter running `_native.upload_guard`), which aborts the upload if this process is
    killed before the upload settles: no parts are left behind."""
    import os
    import sys

    exe = sys.executable
    # Embedded interpreters (a server's plug-in) may name another program: no guard there.
    if exe and os.path.basename(exe).lower().startswith("python") and os.access(exe, os.X_OK):
        code = "import sys; from asdf_rs import _native; sys.exit(_native.upload_guard())"
        _native.set_upload_guard([exe, "-c", code])


_set_upload_guard()


def _settings(storage_options):
    """fsspec-style storage options as (key, value) pairs and the anonymous flag."""
    opts = dict(storage_options or {})
    anonymous = bool(opts.pop("anon", False))
    client = opts.pop("client_kwargs", None) or {}
    if "endpoint_url" in client:
        opts.setdefault("endpoint_url", client["endpoint_url"])
    if "region_name" in client:
        opts.setdefault("region", client["region_name"])
    return [(str(k), str(v)) for k, v in opts.items()], anonymous


def open(target, validate=True, storage_options=None, objects=False, memmap=False, references="inside"):
    """Opens a path or URL (http, https, s3); use as a context manager.

    Arrays are copied into memory when read (as Python asdf's default, `memmap=False`): they
    stay valid whatever happens to the file afterwards. With `memmap=True` (as Python asdf
    names it), an uncompressed block of a local file is mapped by numpy instead of read: no
    copy and no read until the values are used, but the array is then the file's bytes as
    they are when used. If another program truncates the file, using the array kills the
    interpreter (SIGBUS, no exception); if it rewrites the file in place, the array's values
    change. Use it only for files nothing else writes while the arrays are in use.

    With `objects=True`, `f.tree` gives each tagged node as the object Python asdf's
    converters make of it (astropy's `Quantity`, `Time`, `Table`, a `gwcs.WCS`, ...; see
    `File.to_objects`), converted when it is first reached, as Python asdf's `lazy_tree`.

    `references` is which other files the file may make asdf_rs read (external array blocks,
    `$ref`s, Zarr directory stores): `"inside"` (the default: relative paths inside the file's
    folder, links resolved), `"any"` (absolute paths and `..` too, as Python asdf follows them:
    for files you trust), or `"none"`; as asdf-cli's `--references`."""
    settings, anonymous = _settings(storage_options)
    if objects:
        # Validated, and (before ASDF 1.6.0) defaults filled, with the schemas of Python asdf's
        # installed extensions, as asdf.open does: done here in Rust, not by Python asdf.
        _load_extension_schemas()
    native = _native.open(
        _fspath(target),
        validate=validate,
        settings=settings,
        anonymous=anonymous,
        extension_schemas=objects,
        references=references,
    )
    _warn_invalid_keys(native)
    f = File(native, storage_options, objects=objects, memmap=memmap)
    f._references = references
    return f


def _warn_invalid_keys(native):
    """As Python asdf reading them: one warning for the keys the standard does not allow
    (null, floats, dates, tagged keys), which are read all the same."""
    bad = native.invalid_keys()
    if bad:
        import warnings

        shown = "; ".join(f"{p}: {k}" for p, k in bad[:20]) + (f"; ... ({len(bad)} in all)" if len(bad) > 20 else "")
        warnings.warn(
            f"Invalid mapping keys (not str, int or bool) detected while reading file: {shown}. "
            "They have been read, but the file should be fixed (asdf_rs.write refuses them, as Python asdf does).",
            UserWarning,
            stacklevel=3,
        )


def _fspath(target):
    """A path (str, bytes of any encoding, os.PathLike) or URL as the text the native side
    takes, as Python's `open` takes paths: bytes and PathLike through `os.fsdecode` (bytes that
    are not UTF-8 kept, as surrogate escapes, so the file named is the file opened)."""
    if isinstance(target, str):
        return target
    if hasattr(target, "read") or hasattr(target, "write"):
        # A file object (io.BytesIO, an open file): Python asdf takes them, asdf_rs reads and
        # writes by path or URL only (it maps, ranges and re-opens what it reads).
        name = getattr(target, "name", None)
        hint = f" (this one is the file {name!r}: pass that)" if isinstance(name, (str, bytes)) else ""
        raise TypeError(f"asdf_rs takes a path or a URL, not a file object ({type(target).__name__}){hint}")
    try:
        return os.fsdecode(os.fspath(target))
    except TypeError:
        # Not a path: its text (a URL object, say).
        return str(target)


def _load_extension_schemas():
    """Gives the native side, once per process, the schemas and manifests Python asdf's
    resource manager serves (the installed extensions' and the standard's)."""
    if _native.has_extension_schemas():
        return
    import asdf

    rm = asdf.get_config().resource_manager
    _native.set_extension_schemas([(uri, bytes(rm[uri])) for uri in rm])


def _child(pointer, token):
    return f"{pointer}/{token}"


class Tagged:
    """A tagged scalar: its `tag` and its `value`."""

    __slots__ = ("tag", "value")

    def __init__(self, tag, value):
        self.tag = tag
        self.value = value

    @property
    def _asdf_tag(self):
        return self.tag

    def __eq__(self, other):
        if isinstance(other, Tagged):
            return (self.tag, self.value) == (other.tag, other.value)
        return self.value == other

    def __hash__(self):
        return hash((self.tag, self.value))

    def __repr__(self):
        return f"Tagged({self.tag!r}, {self.value!r})"


class TreeMapping(Mapping):
    """A mapping of the tree, read as it is asked for; `tag` is its tag (or None)."""

    __slots__ = ("_file", "_pointer", "tag", "_keys")

    def __init__(self, file, pointer, tag, keys):
        self._file = file
        self._pointer = pointer
        self.tag = tag
        self._keys = dict((k, t) for k, t in keys)

    @property
    def _asdf_tag(self):
        return self.tag

    def __getitem__(self, key):
        try:
            token = self._keys[key]
        except (KeyError, TypeError):
            raise KeyError(key) from None
        return self._file._node(_child(self._pointer, token))

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)

    def __contains__(self, key):
        try:
            return key in self._keys
        except TypeError:
            return False

    def to_dict(self):
        """The mapping and everything under it as plain dicts, lists and numpy arrays (in
        one native call: the arrays are the only Python calls made per node)."""
        return self._file._plain(self._pointer)

    def __repr__(self):
        tag = f" {self.tag}" if self.tag else ""
        return f"<TreeMapping{tag} {self._pointer or '/'} keys={list(self._keys)}>"


class TreeSequence(Sequence):
    """A sequence of the tree, read as it is asked for; `tag` is its tag (or None)."""

    __slots__ = ("_file", "_pointer", "tag", "_len")

    def __init__(self, file, pointer, tag, length):
        self._file = file
        self._pointer = pointer
        self.tag = tag
        self._len = length

    @property
    def _asdf_tag(self):
        return self.tag

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        # As a list: integers (numpy's and bools too), else a TypeError; out of range, an
        # IndexError naming the index given.
        try:
            at = operator.index(i)
        except TypeError:
            raise TypeError(f"sequence indices must be integers or slices, not {type(i).__name__}") from None
        if at < 0:
            at += self._len
        if not 0 <= at < self._len:
            raise IndexError(f"index {i!r} out of range for a sequence of {self._len} items")
        return self._file._node(_child(self._pointer, at))

    def __len__(self):
        return self._len

    def to_list(self):
        """The sequence and everything under it as plain lists, dicts and numpy arrays."""
        return self._file._plain(self._pointer)

    def __repr__(self):
        return f"<TreeSequence {self._pointer or '/'} len={self._len}>"


class File:
    """An open ASDF file (from `asdf_rs.open`)."""

    def __init__(self, native, storage_options=None, objects=False, memmap=False):
        self._native = native
        self._references = "inside"
        self._storage_options = storage_options
        self._objects = objects
        self._memmap = bool(memmap)
        self._converted = {}
        self._ctx = None
        # Chunked-array nodes asdf_rs did not read (refused by the reference policy, or
        # broken), with why: the converter in `_objects.context` raises it for them, in place of
        # asdf-zarr's (which would open the store by the path written).
        self._unread = []
        self._anchors = {}
        self._block_data = {}
        # A local file's identity when opened: Dask tasks, which read it again by its path,
        # refuse another version (a file replaced or rewritten since).
        self._local_stat = None
        try:
            target = native.target()[0]
            if "://" not in str(target):
                st = os.stat(target)
                self._local_stat = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
        except (OSError, AttributeError, TypeError):
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Releases the file (its handle or map, a remote file's cache); arrays already read
        stay valid, the tree's views and this object raise AsdfError from now on."""
        self._native = _Closed()

    @property
    def etag(self):
        """The ETag of the remote object as it was read (None for a local file, or a store that
        gives none): pass it to `asdf_rs.write(url, tree, etag=...)` to write back only over
        that version."""
        _target, _settings, _anonymous, version = self._native.target()
        return None if version is None else version[1]

    def resolve_references(self):
        """Resolves every JSON reference (`{$ref: "other.asdf#/path"}`, `{$ref: "#/path"}`) in
        the tree, as Python asdf's `AsdfFile.resolve_references`: the referenced nodes take
        their place (another file's arrays read into the tree). Python asdf leaves `$ref`s as
        they are on open; so does `asdf_rs.open`."""
        target, settings, anonymous, _version = self._native.target()
        self._native = _native.open(
            target,
            validate=False,
            settings=settings,
            anonymous=anonymous,
            resolve_references=True,
            extension_schemas=self._objects,
            references=self._references,
        )
        self._converted.clear()
        self._anchors.clear()
        self._ctx = None

    @property
    def tree(self):
        """The root of the tree (a `TreeMapping`)."""
        return self._node("")

    def __getitem__(self, pointer):
        """The node at a JSON pointer (`"/sci/data"`); ndarrays come as numpy arrays."""
        if not pointer.startswith("/") and pointer != "":
            pointer = "/" + pointer
        return self._node(pointer)

    def _node(self, pointer):
        kind, tag, payload = self._native.node(pointer)
        if tag in _YAML11 and kind in ("map", "seq"):
            # YAML 1.1's !!set, !!omap, !!pairs: a set, an OrderedDict, a list of tuples, as
            # Python asdf's loader gives them.
            return self._plain(pointer)
        if self._objects and pointer and _user_tag(tag):
            # Objects mode: a tagged node as Python asdf's converters make it, once.
            if pointer not in self._converted:
                self._converted[pointer] = self.to_objects(pointer)
            return self._converted[pointer]
        if kind == "map":
            m = TreeMapping(self, pointer, tag, payload)
            if tag and tag.startswith(_INTEGER) and "words" in m:
                words = [int(w) for w in m["words"]]
                value = sum(w << (32 * i) for i, w in enumerate(words))
                return -value if m.get("sign") == "-" else value
            return m
        if kind == "seq":
            return TreeSequence(self, pointer, tag, payload)
        if kind == "ndarray":
            valid, arr = self._valid_array(pointer, tag)
            if valid:
                return arr
            kind, tag, payload = self._native.node(pointer, raw=True)
            if kind == "map":
                return TreeMapping(self, pointer, tag, payload)
            return TreeSequence(self, pointer, tag, payload)
        if _user_tag(tag):
            return _tagged_scalar(tag, payload)
        if kind == "timestamp":
            # As Python asdf (PyYAML) reads it: a date or datetime.
            try:
                return _timestamp(payload)
            except ValueError as e:
                raise AsdfError(f"{pointer or '/'}: the timestamp {payload!r} is not a date: {e}") from None
        return payload

    def _valid_array(self, pointer, tag=None):
        """`(True, array)` for the ndarray at `pointer`; `(False, None)`, with a warning, when
        the node is not a valid ndarray (as Python asdf, it is then given as written); I/O,
        codec and file errors are errors, and so is any failure to read a chunked array (a
        chunked array is never given as its mapping: Python asdf's converter raises too)."""
        try:
            return True, self.array(pointer)
        except AsdfError as e:
            if getattr(e, "kind", None) != "Array" or _is_chunked(tag):
                raise
            import warnings

            warnings.warn(f"{pointer or '/'}: {e}; given as written", stacklevel=3)
            return False, None

    def _plain_array(self, pointer, tag):
        """An ndarray node in a plain conversion: the array, or the node as written."""
        valid, arr = self._valid_array(pointer, tag)
        if valid:
            return arr
        return self._native.convert(
            pointer, self._plain_array, _tagged_scalar, _plain_mapping, timestamp=_timestamp, raw=True
        )

    def _plain(self, pointer):
        """The subtree at `pointer` as plain Python, in one native call (timestamps as dates
        and datetimes, as Python asdf gives them)."""
        return self._native.convert(pointer, self._plain_array, _tagged_scalar, _plain_mapping, timestamp=_timestamp)

    def _context(self):
        """The Python asdf `AsdfFile` whose extensions convert tagged nodes (made once)."""
        if self._ctx is None:
            from ._objects import context

            self._ctx = context(self.standard, self)
        return self._ctx

    def _object_array(self, pointer, tag):
        """An ndarray or chunked array node for `to_objects`: as Python asdf's (lazy) ndarray,
        its block read by asdf_rs when first used; a zarr array for asdf-zarr's."""
        if tag and tag.startswith(_ZARR):
            from ._objects import tagged_tree, zarr_array

            try:
                return zarr_array(self, pointer)
            except AsdfError as e:
                # Given to the converters as written; the converter that asdf_rs puts before
                # asdf-zarr's raises why for it, and Python asdf warns and keeps the node (as
                # when asdf-zarr's converter fails). `f[p]` and the tree raise.
                node = tagged_tree(self, pointer, raw=True)
                self._unread.append((dict(node), str(e)))
                return node
        try:
            from ._objects import lazy_ndarray

            return lazy_ndarray(self, pointer)
        except AsdfError as e:
            if getattr(e, "kind", None) != "Array":
                raise
            # Not a valid ndarray: given to the converters as written (as Python asdf does).
            from ._objects import tagged_tree

            return tagged_tree(self, pointer, raw=True)

    def to_objects(self, pointer=""):
        """The subtree at `pointer` as Python asdf gives it, with the converters of the
        extensions installed (asdf-astropy's `Quantity`, `Time`, `Table`, `SkyCoord`;
        gwcs's `WCS`; stdatamodels', roman_datamodels', sunpy's, dkist's objects, ...): the
        tree is built in one native call, its arrays read by asdf_rs, then Python asdf's
        converters make the objects. Tags no extension converts come back as Python asdf
        gives them: tagged dicts, lists and strings, with its `AsdfConversionWarning`."""
        if not pointer.startswith("/") and pointer != "":
            pointer = "/" + pointer
        from ._objects import to_objects

        return to_objects(self, pointer)

    def wcs(self, pointer=None):
        """The gwcs WCS at `pointer` (default: the file's first), evaluated natively: `w(x, y)`
        gives world values as gwcs's `wcs(x, y)` does, `w.invert(...)` pixels, and
        `w.pixel_to_world(...)` astropy objects. Raises NotImplementedError naming a transform
        or frame asdf_rs does not evaluate (never a partial answer); LookupError when the file
        has no WCS."""
        if pointer is not None:
            if not isinstance(pointer, str):
                raise TypeError(f"the WCS's pointer must be a str (a JSON pointer), not {type(pointer).__name__}")
            if pointer in ("", "/"):
                pointer = ""
            elif not pointer.startswith("/"):
                pointer = "/" + pointer
        native = self._native.wcs(pointer)
        if native is None:
            raise LookupError("the file has no gwcs WCS")
        from ._wcs import Wcs

        return Wcs(native, pointer if pointer is not None else self._native.wcs_pointers()[0])

    def wcs_pointers(self):
        """The JSON pointers of the file's gwcs WCS nodes."""
        return self._native.wcs_pointers()

    def array(self, pointer):
        """The ndarray at `pointer` as a read-only numpy array, read (decoded) straight into
        memory; with `open(..., memmap=True)`, mapped from the file for an uncompressed block
        of a local file (see `open`)."""
        lay = self._native.layout(pointer)
        dtype = np.dtype(_dtype(lay["dtype"]))
        shape = tuple(lay["shape"])
        if lay.get("chunked"):
            # A chunked array (asdf-zarr): its chunks decoded in Rust, the GIL released.
            shape, buf, _ = self._native.region(pointer, "")
            return np.frombuffer(buf, dtype=dtype).reshape(shape)
        if lay.get("inline"):
            # Values in the tree have no byte order: this machine's, as Python asdf gives them.
            dtype = dtype.newbyteorder("=")
            data = self._native.inline_data(pointer)
            if dtype.names:
                data = _records(data, len(shape))
            arr = np.array(data, dtype=dtype).reshape(shape)
            arr.flags.writeable = False
        else:
            if "external" in lay:
                # Exploded form: the data is block 0 of the file its source names, found and
                # read by asdf_rs under the reference policy (a remote file's with its settings).
                buf = self._native.external_data(pointer)
                base = 0
            elif "path" in lay and self._memmap:
                # memmap=True only: the values are the file's as long as the array lives.
                buf = np.memmap(lay["path"], dtype=np.uint8, mode="r")
                base = lay["data_offset"]
            else:
                buf = self._native.block_bytes(lay["block"])
                base = 0
            arr = np.ndarray(
                shape,
                dtype=dtype,
                buffer=buf,
                offset=base + lay["offset"],
                strides=tuple(lay["strides"]),
            )
            if arr.flags.writeable:
                arr.flags.writeable = False
        if lay.get("masked"):
            arr = _masked(self, pointer, arr)
        return arr

    def lazy(self, pointer):
        """The ndarray at `pointer` as a `LazyArray`: nothing is read until it is indexed
        (`x[100:300, 1400:1600]` reads only what the region touches) or converted
        (`np.asarray(x)` reads it all)."""
        if not pointer.startswith("/") and pointer != "":
            pointer = "/" + pointer
        return LazyArray(self, pointer)

    def element(self, pointer, index):
        """One element of the ndarray at `pointer` (a tuple index): only its bytes are read
        from an uncompressed block (one small ranged request for a remote file)."""
        lay = self._native.layout(pointer)
        shape = tuple(lay["shape"])
        # One integer for a 1-d array, as `element("/v", 5)`.
        given = tuple(index) if isinstance(index, (tuple, list)) else (index,)
        # As numpy indexes: exactly one integer per axis (not a bool, not a float), negative
        # ones from the end; the index as given in the message. (Whatever the storage: an
        # element is never a sub-array.)
        if len(given) != len(shape) or any(
            isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) for i in given
        ):
            raise _index_error(pointer, f"{pointer}: index {given} is not one integer per axis of shape {shape}")
        index = tuple(int(i) + n if int(i) < 0 else int(i) for i, n in zip(given, shape))
        if any(not 0 <= i < n for i, n in zip(index, shape)):
            raise _index_error(pointer, f"{pointer}: index {given} out of range for shape {shape}")
        if "block" not in lay or lay.get("masked"):
            if lay.get("chunked"):
                # Only the chunk that holds it is read.
                return self.lazy(pointer)[index]
            return self.array(pointer)[index]
        dtype = np.dtype(_dtype(lay["dtype"]))
        at = lay["offset"] + sum(i * s for i, s in zip(index, lay["strides"]))
        raw = self._native.block_range(lay["block"], at, at + dtype.itemsize)
        return np.frombuffer(raw, dtype=dtype)[0]

    @property
    def blocks(self):
        """The blocks: a dict each (index, offset, data_offset, compression, data_len, ...)."""
        return self._native.blocks()

    def verify(self):
        """Reads, decodes and checksums every block and checks every array's view (as the CLI's
        verify, on every core, the GIL released); returns [(index, status)], or raises
        AsdfError naming every problem."""
        return self._native.verify()

    def validate(self):
        """Validates the tree against its schemas; raises AsdfValidationError if it fails."""
        problems = self._native.validate()
        if problems:
            err = AsdfValidationError("; ".join(m for _, m in problems))
            err.pointer = problems[0][0]
            err.violations = problems
            raise err

    @property
    def warnings(self):
        return self._native.warnings()

    @property
    def standard(self):
        return self._native.standard()

    def yaml(self):
        """The tree as YAML text."""
        return self._native.yaml()

    def info(self, file=None):
        """Prints the tree as an outline: keys, tags, ndarray shapes and datatypes."""
        lines = []
        _outline(self, "", "root", 0, lines)
        text = "\n".join(lines)
        print(text, file=file)
        return text

    @property
    def remote_stats(self):
        """(requests, bytes, ranges) fetched from a remote file so far; None for local files."""
        return self._native.remote_stats()

    def write_to(self, path, compression=None, checksums=True, validate=True):
        """Writes this file to `path` (or an `s3://`, `gs://`, `az://` URL) as it is, as Python
        asdf's `AsdfFile.write_to`: each block's compression kept (or `compression` for every
        block; `"none"` removes it), arrays that view one block still sharing it, chunked
        arrays chunked, exploded arrays brought into the file. Written atomically (a new file
        renamed over the old one); over the file's own path, refused when another writer
        changed the file since it was opened. To write a changed tree, build it with
        `tree.to_dict()` and `asdf_rs.write`."""
        self._native.write_to(os.fspath(path), compression, checksums, validate)

    def to_dask(self, pointer, chunk_bytes=64 << 20):
        """The ndarray at `pointer` as a dask array whose chunks follow the storage."""
        from ._dask import to_dask as _to_dask

        return _to_dask(self, pointer, chunk_bytes)


_COMPLEX = "tag:stsci.edu:asdf/core/complex-"
_INTEGER = "tag:stsci.edu:asdf/core/integer-"
_ZARR = "asdf://asdf-format.org/zarr/tags/zarr-"
_CHUNKED_NDARRAY = "tag:stsci.edu:asdf/core/chunked-ndarray-"
_YAML = "tag:yaml.org,2002:"
_YAML11 = frozenset(_YAML + t for t in ("set", "omap", "pairs"))


# The tags PyYAML's safe constructor builds: nodes so tagged are read as if untagged.
_SAFE_CONSTRUCTOR = frozenset(
    _YAML + t for t in ("null", "bool", "int", "float", "binary", "timestamp", "omap", "pairs", "set", "str", "seq", "map")
)


def _user_tag(tag):
    """Whether a node's tag is not one PyYAML's safe constructor builds: other tags of YAML's
    namespace (`!!x`, `!!value`, PyYAML's `python/` tags) are kept, as Python asdf gives those
    nodes tagged (with a warning); nothing is ever executed."""
    return bool(tag) and tag != "!" and tag not in _SAFE_CONSTRUCTOR


def _is_chunked(tag):
    return bool(tag) and (tag.startswith(_ZARR) or tag.startswith(_CHUNKED_NDARRAY))


def _tagged_scalar(tag, value):
    """A tagged scalar of the plain tree: a `complex` as Python's complex, others `Tagged`."""
    if tag.startswith(_COMPLEX) and isinstance(value, str):
        try:
            return _complex(value)
        except ValueError:
            pass
    return Tagged(tag, value)


def _plain_mapping(tag, d):
    """A tagged mapping of the plain tree: a `core/integer` as Python's int, others the dict."""
    if tag.startswith(_INTEGER) and isinstance(d.get("words"), list):
        value = sum(int(w) << (32 * i) for i, w in enumerate(d["words"]))
        return -value if d.get("sign") == "-" else value
    return d


_TIMESTAMP = None


def _timestamp(text):
    """A YAML timestamp as PyYAML's safe constructor (so Python asdf) reads it: a
    `datetime.date`, or a `datetime.datetime` (with a fixed-offset timezone when the text has
    one; fractions beyond microseconds cut). Its code, without needing PyYAML."""
    import datetime
    import re

    global _TIMESTAMP
    if _TIMESTAMP is None:
        _TIMESTAMP = re.compile(
            r"""^(?P<year>[0-9][0-9][0-9][0-9])
                -(?P<month>[0-9][0-9]?)
                -(?P<day>[0-9][0-9]?)
                (?:(?:[Tt]|[ \t]+)
                (?P<hour>[0-9][0-9]?)
                :(?P<minute>[0-9][0-9])
                :(?P<second>[0-9][0-9])
                (?:\.(?P<fraction>[0-9]*))?
                (?:[ \t]*(?P<tz>Z|(?P<tz_sign>[-+])(?P<tz_hour>[0-9][0-9]?)
                (?::(?P<tz_minute>[0-9][0-9]))?))?)?$""",
            re.X,
        )
    m = _TIMESTAMP.match(text)
    if m is None:
        raise ValueError(f"{text!r} is not a YAML timestamp")
    v = m.groupdict()
    year, month, day = int(v["year"]), int(v["month"]), int(v["day"])
    if not v["hour"]:
        return datetime.date(year, month, day)
    fraction = int(v["fraction"][:6].ljust(6, "0")) if v["fraction"] else 0
    tzinfo = None
    if v["tz_sign"]:
        delta = datetime.timedelta(hours=int(v["tz_hour"]), minutes=int(v["tz_minute"] or 0))
        tzinfo = datetime.timezone(-delta if v["tz_sign"] == "-" else delta)
    elif v["tz"]:
        tzinfo = datetime.timezone.utc
    return datetime.datetime(
        year, month, day, int(v["hour"]), int(v["minute"]), int(v["second"]), fraction, tzinfo=tzinfo
    )


def _region_text(key, ndim):
    """numpy's basic slicing (an index, a slice, `...`, or a tuple of them) as the text the
    native `region` parses; anything else (lists, arrays, `None`) is refused."""
    if not isinstance(key, tuple):
        key = (key,)
    parts = []
    for k in key:
        if k is Ellipsis:
            parts.append("...")
        elif isinstance(k, (bool, np.bool_)):
            # numpy takes a boolean as a mask (a new axis), not as the integer 0 or 1.
            raise IndexError(f"a boolean ({k!r}) is a mask, not basic slicing: index a lazy array with integers")
        elif isinstance(k, slice):
            f = lambda v: "" if v is None else str(operator.index(v))  # noqa: E731
            parts.append(f"{f(k.start)}:{f(k.stop)}:{f(k.step)}")
        else:
            try:
                parts.append(str(operator.index(k)))
            except TypeError:
                raise TypeError(
                    f"only integers, slices and ... index a lazy array (basic slicing), not {k!r}"
                ) from None
    return ", ".join(parts)


def _index_error(pointer, message):
    """An AsdfIndexError (an AsdfError and an IndexError, as the native ones)."""
    e = AsdfIndexError(message)
    e.kind, e.pointer, e.line, e.column, e.offset = "Usage", pointer, None, None, None
    return e


class LazyArray:
    """An ndarray of an open file, not read yet, with h5py's dataset habits: `shape`, `dtype`,
    `ndim`, `size`, `chunks` (the chunk shape of a chunked array, else None), basic slicing
    reading only what it touches, `np.asarray(x)` reading it all."""

    def __init__(self, f, pointer):
        self._f = f
        self._pointer = pointer
        lay = f._native.layout(pointer)
        self._lay = lay
        self.dtype = np.dtype(_dtype(lay["dtype"]))
        self.shape = tuple(lay["shape"])
        self.chunks = tuple(lay["chunks"]) if lay.get("chunked") else None

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __getitem__(self, key):
        if self._lay.get("inline") or self._lay.get("masked") or self._lay.get("by_entry"):
            # In the tree, or masked: read whole (as Python asdf gives them), then sliced. So
            # is an array under a key no JSON pointer names (`1` beside `'1'`).
            return self._f.array(self._pointer)[key]
        text = _region_text(key, self.ndim)
        shape, buf, _ = self._f._native.region(self._pointer, text)
        a = np.frombuffer(buf, dtype=self.dtype).reshape(shape)
        return a[()] if a.ndim == 0 else a

    def __iter__(self):
        # The rows, one region read each (Python's fallback iteration over __getitem__ would
        # stop only on an IndexError).
        for i in range(len(self)):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        a = self._f.array(self._pointer)
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"<asdf_rs.LazyArray {self._pointer} shape={self.shape} dtype={self.dtype}>"


def _complex(text):
    """The core `complex` tag's text (`3+4i`, `nan+infj`, `3.14J`) as a Python complex."""
    t = text.strip().lower().replace("inf", "\0").replace("i", "j").replace("\0", "inf")
    return complex(t)


def _records(data, depth):
    """Nested lists whose lists at `depth` are records: those as tuples (numpy's form)."""
    if depth == 0:
        return tuple(data) if isinstance(data, list) else data
    return [_records(x, depth - 1) for x in data]


class _Closed:
    def __getattr__(self, name):
        raise AsdfError("the file is closed")


def _masked(f, pointer, arr):
    kind, _tag, _ = f._native.node(pointer + "/mask")
    if kind == "ndarray":
        return np.ma.masked_array(arr, mask=np.asarray(f.array(pointer + "/mask"), dtype=bool))
    value = f._node(pointer + "/mask")
    return np.ma.masked_equal(arr, value) if not isinstance(value, float) or value == value else np.ma.masked_invalid(arr)


def _dtype(descr):
    if isinstance(descr, list):
        return [tuple(_dtype(x) if i == 1 else x for i, x in enumerate(field)) for field in descr]
    return descr


def _outline(f, pointer, name, depth, lines, limit=2000, ancestors=frozenset()):
    if len(lines) >= limit:
        return
    kind, tag, payload = f._native.node(pointer)
    short = f" ({tag.rsplit('/', 2)[-2] + '/' + tag.rsplit('/', 1)[-1] if tag and '/' in tag else tag})" if tag else ""
    pad = "  " * depth
    if kind in ("map", "seq"):
        ident = f._native.node_id(pointer)
        if ident in ancestors:
            # A node that contains itself (`a: &a {self: *a}`): named, not walked again (as
            # Python asdf's info marks it).
            lines.append(f"{pad}{name}{short}: (recursive reference)")
            return
        ancestors = ancestors | {ident}
    if kind == "ndarray":
        lay = f._native.layout(pointer)
        lines.append(f"{pad}{name}{short}: shape={list(lay['shape'])} dtype={np.dtype(_dtype(lay['dtype']))}")
    elif kind == "map":
        lines.append(f"{pad}{name}{short}")
        for key, token in dict(payload).items():
            _outline(f, _child(pointer, token), str(key), depth + 1, lines, limit, ancestors)
    elif kind == "seq":
        lines.append(f"{pad}{name}{short}: [{payload} items]")
        for i in range(min(payload, 20)):
            _outline(f, _child(pointer, i), f"[{i}]", depth + 1, lines, limit, ancestors)
    else:
        lines.append(f"{pad}{name}{short}: {payload!r}")


def write(
    path,
    tree,
    compression=None,
    checksums=True,
    standard=None,
    validate=True,
    chunks=None,
    storage_options=None,
    etag=None,
):
    """Writes `tree` (dicts, lists, scalars, numpy arrays; a tree read by asdf_rs too) to
    `path`; arrays become blocks, compressed with `compression` ("zlib", "bzp2", "lz4",
    "zstd", ...) when given.

    `chunks` (a tuple, such as `(256, 256)`; -1 or None for an axis's whole length, as zarr
    takes them; 0 and fractions are a ValueError) stores every array with that many dimensions
    chunked, as asdf-zarr does (Python asdf reads them with asdf-zarr installed, as zarr
    arrays): each chunk a block compressed with `compression` as a Zarr compressor ("zlib",
    "bzp2", "zstd", "bls2"), so that `lazy(pointer)[...]` of a region decodes only the
    chunks it touches.

    `path` may be an object store's URL (`s3://bucket/key`, `gs://`, `az://`; credentials and
    endpoint from `storage_options`, as fsspec names them, or the environment): the file is
    uploaded in parts and appears only when complete; a failed upload leaves nothing. The
    write is refused (nothing written) when the object changed while it was written, or,
    with `etag` (the ETag of the version read, `File.etag`), when it is no longer that version."""
    settings, anonymous = _settings(storage_options)
    path = _fspath(path)
    _refuse_other_format(path)
    _native.write(
        path,
        tree,
        compression=compression,
        checksums=checksums,
        standard=standard,
        validate=validate,
        chunks=_chunk_sizes(chunks),
        settings=settings,
        anonymous=anonymous,
        etag=etag,
    )


def _chunk_sizes(chunks):
    """`write`'s `chunks` checked as zarr takes chunk shapes: a tuple of whole numbers of at
    least 1, or -1 or None for an axis's whole length (sent as -1). A size of 0, a fraction
    (zarr cuts 2.5 to 2 with a warning), a bool or a bare number is a ValueError, never
    rounded."""
    if chunks is None:
        return None
    if isinstance(chunks, (str, bytes)) or not hasattr(chunks, "__iter__"):
        raise ValueError(f"chunks must be a tuple of chunk sizes, one per axis (such as (256, 256)), not {chunks!r}")
    out = []
    for i, c in enumerate(chunks):
        if c is None:
            out.append(-1)
            continue
        if isinstance(c, (bool, np.bool_)):
            raise ValueError(f"chunks[{i}] is {c!r}: a chunk size is a whole number of at least 1 (or -1 or None for the whole axis)")
        try:
            n = operator.index(c)
        except TypeError:
            raise ValueError(
                f"chunks[{i}] is {c!r}: a chunk size is a whole number of at least 1 (or -1 or None for the whole axis), never rounded"
            ) from None
        if n == 0 or n < -1:
            raise ValueError(f"chunks[{i}] is {n}: a chunk size is a whole number of at least 1 (or -1 or None for the whole axis)")
        if n >= 1 << 63:
            raise ValueError(f"chunks[{i}] is {n}: larger than any axis can be (2**63 - 1 at most; -1 or None for the whole axis)")
        out.append(n)
    return out


# Extensions that name a format `write` does not write (it writes ASDF files only).
_OTHER_FORMATS = {
    ".fits": "FITS", ".fit": "FITS", ".fts": "FITS", ".fz": "FITS", ".json": "JSON", ".yaml": "YAML",
    ".yml": "YAML", ".zarr": "Zarr", ".h5": "HDF5", ".hdf5": "HDF5", ".hdf": "HDF", ".nc": "netCDF",
    ".nc4": "netCDF", ".npy": "NumPy", ".npz": "NumPy", ".parquet": "Parquet", ".csv": "CSV",
    ".tif": "TIFF", ".tiff": "TIFF", ".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG",
}


def _refuse_other_format(path):
    """`write` writes ASDF: a path whose extension names another format (`a.fits`) is refused
    rather than given an ASDF file under that name."""
    name = path.split("?", 1)[0] if "://" in path else path
    ext = os.path.splitext(name.rstrip("/"))[1].lower()
    if ext in _OTHER_FORMATS:
        raise ValueError(
            f"{path}: asdf_rs.write writes ASDF files, not {_OTHER_FORMATS[ext]} ({ext}): name the file "
            f"*.asdf (then `asdf-cli convert file.asdf file.fits` writes ASDF in FITS)"
        )


def to_dask(target, pointer, storage_options=None, chunk_bytes=64 << 20):
    """`open(target).to_dask(pointer)` without keeping the file open."""
    with open(target, validate=False, storage_options=storage_options) as f:
        return f.to_dask(pointer, chunk_bytes)


def stack(targets, pointer, storage_options=None, axis=0):
    """A dask array of the arrays at `pointer` of many files of one shape and dtype (paths or
    URLs, such as a run's 1,000 exposures in object storage), stacked along a new axis:
    one task per file, which opens its file on the worker that runs it (only the first file
    is opened here, for the shape and dtype). `asdf_rs.stack(urls, "/sci/data").sum()`
    runs on a dask.distributed cluster as it does locally."""
    from ._dask import stack as _stack

    return _stack(targets, pointer, storage_options=storage_options, axis=axis)


def list_files(prefix, storage_options=None):
    """The ASDF files under a folder or a prefix of an object store (`s3://bucket/run42/`):
    paths or URLs, sorted."""
    import os

    settings, anonymous = _settings(storage_options)
    if os.path.isdir(str(prefix)):
        found = []
        for root, _dirs, files in os.walk(str(prefix)):
            found.extend(os.path.join(root, n) for n in files if n.lower().endswith(".asdf"))
        return sorted(found)
    return [u for u, _size in _native.list(str(prefix), settings=settings, anonymous=anonymous) if u.lower().endswith(".asdf")]


def references(target, version=1, url=None, storage_options=None, skipped=None):
    """Kerchunk-style Zarr references to the arrays of the ASDF file at `target` (see
    `asdf_rs._references`): zarr-python, xarray and VirtualiZarr read the arrays through them
    without asdf_rs. Arrays that cannot be expressed are named in a warning (and appended to
    `skipped`, a list, when given)."""
    from ._references import references as _references

    return _references(target, version=version, url=url, storage_options=storage_options, skipped=skipped)
