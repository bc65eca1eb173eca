"""`File.to_objects`: the tree as Python asdf's converters make it.

The tree is built in one native call as Python asdf's YAML loader builds it (tagged nodes as
`asdf.tagged.TaggedDict`, `TaggedList`, `TaggedString`; untagged timestamps as PyYAML's
dates), with the arrays read by asdf_rs in place of the ndarray nodes; then Python asdf's
`tagged_tree_to_custom_tree` runs the installed extensions' converters over it, bottom up, as
`asdf.open` does.
"""

import json
from collections.abc import Mapping, MutableMapping

from . import _native
from ._native import AsdfError


def _tagged_scalar(tag, text):
    from asdf.tagged import TaggedString

    s = TaggedString(text)
    s._tag = tag
    return s


def _tagged_mapping(tag, d):
    from asdf.tagged import TaggedDict

    return TaggedDict(d, tag)


def _tagged_sequence(tag, items):
    from asdf.tagged import TaggedList

    return TaggedList(items, tag)


def tagged_tree(f, pointer, raw=False):
    """The subtree at `pointer` as Python asdf's loader gives it (tagged basic types), arrays
    read by asdf_rs; with `raw`, the node at `pointer` is given as written even if it is an
    array."""
    from . import _timestamp

    return f._native.convert(
        pointer,
        f._object_array,
        _tagged_scalar,
        _tagged_mapping,
        _tagged_sequence,
        timestamp=_timestamp,
        scalar_text=True,
        raw=raw,
        memo=f._anchors,
    )


_ZARR_TAGS = ["asdf://asdf-format.org/zarr/tags/zarr-*"]


class _ZarrGate:
    """The converter asdf_rs puts before asdf-zarr's for zarr-tagged nodes. asdf_rs reads
    every zarr array itself (in `File._object_array`, under the file's reference policy);
    a node that still reaches the converters is one it did not read, and this raises why, so
    that Python asdf warns and keeps the node as written. asdf-zarr's converter would open
    the store at the path written (relative to the working directory, outside any policy,
    creating it when missing)."""

    tags = _ZARR_TAGS
    types = []

    def __init__(self, f):
        import weakref

        self._file = weakref.ref(f)

    def to_yaml_tree(self, obj, tag, ctx):
        raise NotImplementedError("asdf_rs writes zarr arrays itself")

    def from_yaml_tree(self, node, tag, ctx):
        f = self._file()
        for i, (data, reason) in enumerate(f._unread if f is not None else []):
            if data == node:
                del f._unread[i]
                raise AsdfError(reason)
        raise AsdfError("a zarr array asdf_rs did not read (not an array of this file's tree)")


class _Gate:
    """The extension holding `_ZarrGate`."""

    extension_uri = None
    legacy_class_names = []

    def __init__(self, f):
        from asdf.config import get_config

        self.converters = [_ZarrGate(f)]
        # A converter is given only the tags its extension lists: every zarr tag an installed
        # extension lists (asdf-zarr's), and the one asdf-zarr writes today.
        prefix = _ZARR_TAGS[0][:-1]
        self.tags = sorted(
            {t.tag_uri for e in get_config().extensions for t in e.tags if t.tag_uri.startswith(prefix)}
            | {prefix + "1.0.0"}
        )


def context(version, f):
    """Python asdf's `AsdfFile` whose extensions convert the tagged nodes of the file `f`, its
    conversions remembered from call to call (an anchored node reached again, by another
    `to_objects` or another node of `objects=True`, gives the same object, as in the one
    tree Python asdf reads). Zarr-tagged nodes asdf_rs did not read meet `_ZarrGate`."""
    import asdf
    from asdf import treeutil

    class Remembering(treeutil._TreeModificationContext):
        def __exit__(self, exc_type, exc_value, traceback):
            self._depth -= 1
            if self._depth == 0:
                if exc_type is None:
                    self._drain_generators()
                self._generators = []
                self._pending = set()

    gate = [_Gate(f)]
    try:
        ctx = asdf.AsdfFile(version=version, extensions=gate)
    except ValueError:
        # A version Python asdf does not write (1.0.0, say): its default.
        ctx = asdf.AsdfFile(extensions=gate)
    ctx._tree_modification_context = Remembering()
    return ctx


def to_objects(f, pointer):
    import asdf.yamlutil

    from asdf import schema, versioning
    from asdf.config import get_config

    ctx = f._context()
    tagged = tagged_tree(f, pointer)
    if (
        not f._objects
        and ctx.version <= versioning.FILL_DEFAULTS_MAX_VERSION
        and get_config().legacy_fill_schema_defaults
    ):
        # As asdf.open: files before 1.6.0 have their schemas' defaults filled (with the
        # schemas of every installed extension) before the converters see them. A file opened
        # with objects=True had them filled on open, in Rust, from the same schemas. (Not a
        # second open here for that: the file may have changed since, and a tree of one version
        # with the blocks of another is what must never happen.)
        schema.fill_defaults(tagged, ctx, reading=True)
    tree = asdf.yamlutil.tagged_tree_to_custom_tree(tagged, ctx)
    if pointer == "":
        # As asdf.open: a warning for each extension the file was written with that is not
        # installed (or is older than the one that wrote it).
        ctx._check_extensions(tree)
    return tree


# Blocks smaller than this are read rather than mapped: a map costs more than reading a small
# block (a DKIST dataset has hundreds of blocks of a few KiB).
_MAP_AT_LEAST = 1 << 20


def _block_data(f, lay, pointer):
    """The data callback of a lazy ndarray: its block's decoded bytes as a flat uint8 array
    (mapped for an uncompressed block of a local file opened with `memmap=True`), read once
    per block and shared by the arrays that view it (Python asdf's `cached_data`)."""
    import numpy as np

    def callback(_attr=None):
        if _attr not in (None, "cached_data", "data"):
            # "_fd": no file of Python asdf's behind this array.
            raise AttributeError(_attr)
        if "external" in lay:
            return _external(f, pointer)
        key = lay["block"]
        buf = f._block_data.get(key)
        if buf is None:
            if f._memmap and "path" in lay and lay["data_len"] >= _MAP_AT_LEAST:
                buf = np.memmap(lay["path"], dtype=np.uint8, mode="r", offset=lay["data_offset"], shape=(lay["data_len"],))
            else:
                buf = np.frombuffer(f._native.block_bytes(key), dtype=np.uint8)
            f._block_data[key] = buf
        return buf

    return callback


def _external(f, pointer):
    """Block 0 of the file that holds an exploded array's data, found and read by asdf_rs
    under the reference policy."""
    import numpy as np

    return np.frombuffer(f._native.external_data(pointer), dtype=np.uint8)


def lazy_ndarray(f, pointer):
    """The ndarray at `pointer` as Python asdf gives it from a lazily loaded file: an
    `asdf.tags.core.NDArrayType` whose block asdf_rs reads (decodes, or maps) when the array is
    first used. Inline and chunked ndarrays (ASDF.jl's) come as numpy arrays."""
    import numpy as np
    from asdf.tags.core import NDArrayType

    from . import _dtype

    lay = f._native.layout(pointer)
    if lay.get("inline") or lay.get("chunked") or ("block" not in lay and "external" not in lay):
        return f.array(pointer)
    mask = None
    if lay.get("masked"):
        kind, _tag, _ = f._native.node(pointer + "/mask")
        mask = lazy_ndarray(f, pointer + "/mask") if kind == "ndarray" else f._plain(pointer + "/mask")
    dtype = np.dtype(_dtype(lay["dtype"]))
    source = lay["external"] if "external" in lay else lay["block"]
    a = NDArrayType(
        source, list(lay["shape"]), dtype, lay["offset"], list(lay["strides"]), "A", mask, _block_data(f, lay, pointer)
    )
    # Python asdf's converters walk the tree asking each node for its `_tag`; an NDArrayType
    # answers unknown attributes from its array, which would read it: it has none.
    a._tag = None
    return a


class _Chunks(MutableMapping):
    """The chunks of an asdf-zarr array stored in the file's blocks, as a read-only Zarr
    store: each key's stored bytes fetched (a ranged read for a remote file) when zarr asks
    for them."""

    def __init__(self, f, grid, chunks, separator):
        self._target = f._native.target()
        self._keys = {}
        for flat, c in enumerate(chunks):
            if c is None:
                continue
            index = []
            for n in reversed(grid):
                index.append(flat % n)
                flat //= n
            self._keys[separator.join(str(i) for i in reversed(index))] = c

    def __getitem__(self, key):
        try:
            stored_offset, stored_len, compression, data_len = self._keys[key]
        except KeyError:
            raise KeyError(key) from None
        target, settings, anonymous, version = self._target
        size, etag = version if version else (None, None)
        raw = _native.read_range(
            target, stored_offset, stored_offset + stored_len, settings, anonymous, size, etag
        )
        if compression != "none":
            raw = _native.decode_block(compression, raw, data_len)
        return raw

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def __setitem__(self, key, value):
        raise PermissionError("a chunked array of an ASDF file opened by asdf_rs is read-only")

    def __delitem__(self, key):
        raise PermissionError("a chunked array of an ASDF file opened by asdf_rs is read-only")


class _StoreObjects(Mapping):
    """The store outside the file that holds an asdf-zarr array's chunks, as a read-only
    Zarr store whose every object asdf_rs reads (`chunk_store_object`): found from the file's
    directory, under the file's reference policy, links kept inside it."""

    def __init__(self, f, pointer):
        self._native = f._native
        self._pointer = pointer

    def __getitem__(self, key):
        try:
            found = self._native.chunk_store_object(self._pointer, key)
        except KeyError as e:
            # (An AsdfKeyError, of the tree, never a missing chunk: zarr would fill it.)
            raise AsdfError(str(e)) from e
        if found is None or found[2] is None:
            raise KeyError(key)
        return found[2]

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __iter__(self):
        # zarr lists a store only for summaries (chunks initialised): none listed here.
        return iter(())

    def __len__(self):
        return 0


def zarr_array(f, pointer):
    """The asdf-zarr array at `pointer` as a read-only `zarr.Array`, as asdf-zarr's converter
    makes it: its chunks read by asdf_rs, from the file's blocks or from the store outside the
    file (found from the file's directory under its reference policy; asdf-zarr would open the
    path written, from the working directory). Raises AsdfError for an array asdf_rs does not
    read (a store the policy refuses, say)."""
    import zarr

    found = f._native.chunk_map(pointer)
    if found is None:
        # The store outside the file: its metadata (and whether it is there) first, so that a
        # store the policy refuses fails here.
        meta, meta_key, attrs = f._native.chunk_store_object(pointer, ".zattrs") or (None, None, None)
        if meta is None:
            raise AsdfError(f"{pointer}: not a zarr array asdf_rs reads")
        if meta_key != ".zarray":
            raise AsdfError(f"{pointer}: a Zarr format 3 store (zarr-python 2, which asdf-zarr uses, reads format 2)")
        metadata = {".zarray": meta}
        if attrs is not None:
            metadata[".zattrs"] = attrs
        store = zarr.storage.KVStore(metadata)
        chunk_store = zarr.storage.KVStore(_StoreObjects(f, pointer))
        return zarr.open_array(store=store, chunk_store=chunk_store, mode="r")
    _metadata, grid, chunks = found
    zarray = f._plain(pointer + "/.zarray")
    separator = zarray.get("dimension_separator") or "."
    store = zarr.storage.KVStore({".zarray": json.dumps(zarray)})
    chunk_store = zarr.storage.KVStore(_Chunks(f, grid, chunks, separator))
    return zarr.open_array(store=store, chunk_store=chunk_store, mode="r")
