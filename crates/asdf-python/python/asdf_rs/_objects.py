"""`File.to_objects`: the tree as Python asdf's converters make it.

The tree is built in one native call as Python asdf's YAML loader builds it (tagged nodes as
`asdf.tagged.TaggedDict`, `TaggedList`, `TaggedString`; untagged timestamps as PyYAML's
dates), with the arrays read by asdf_rs in place of the ndarray nodes; then Python asdf's
`tagged_tree_to_custom_tree` runs the installed extensions' converters over it, bottom up, as
`asdf.open` does.
"""

import json
from collections.abc import MutableMapping

from . import _native


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


def context(version):
    """Python asdf's `AsdfFile` whose extensions convert the tagged nodes of one file, its
    conversions remembered from call to call (an anchored node reached again, by another
    `to_objects` or another node of `objects=True`, gives the same object, as in the one
    tree Python asdf reads)."""
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

    try:
        ctx = asdf.AsdfFile(version=version)
    except ValueError:
        # A version Python asdf does not write (1.0.0, say): its default.
        ctx = asdf.AsdfFile()
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
            return _external(f, lay)
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


def _external(f, lay):
    """Block 0 of the file beside this one that holds an exploded array's data."""
    import os.path

    import numpy as np

    target, settings, anonymous, _version = f._native.target()
    other = os.path.join(os.path.dirname(target), lay["external"])
    raw = _native.open(other, validate=False, settings=settings, anonymous=anonymous).block_bytes(0)
    return np.frombuffer(raw, dtype=np.uint8)


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


def zarr_array(f, pointer):
    """The asdf-zarr array at `pointer` as a `zarr.Array`, as asdf-zarr's converter makes it:
    its chunks in the file's blocks read by asdf_rs; an external store opened by asdf-zarr."""
    found = f._native.chunk_map(pointer)
    if found is None:
        # Chunks in a store outside the file: asdf-zarr's converter opens it.
        import asdf.yamlutil

        node = tagged_tree(f, pointer, raw=True)
        return asdf.yamlutil.tagged_tree_to_custom_tree(node, f._context())
    import zarr

    _metadata, grid, chunks = found
    zarray = f._plain(pointer + "/.zarray")
    separator = zarray.get("dimension_separator") or "."
    store = zarr.storage.KVStore({".zarray": json.dumps(zarray)})
    chunk_store = zarr.storage.KVStore(_Chunks(f, grid, chunks, separator))
    return zarr.open_array(store=store, chunk_store=chunk_store, mode="r")
