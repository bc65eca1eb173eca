"""`asdf_rs.references`: Kerchunk-style Zarr references to the arrays of an ASDF file.

Each ndarray becomes a Zarr (format 2) array at the path of its JSON pointer (`/sci/data` is
`sci/data`, its parents Zarr groups), its chunks references `[url, offset, length]` to the
bytes as they lie in the file, so that zarr-python (through fsspec's reference file system),
xarray or VirtualiZarr read them without asdf_rs:

- a block without compression: one chunk, the array's own bytes (C or Fortran order, either
  byte order, any offset in the block);
- a block compressed with `zlib`, `bzp2` or `zstd`: one chunk, the block's stored bytes with
  numcodecs' `zlib`, `bz2` or `zstd` as the compressor (the array must be the whole block);
  with `lz4` (Python asdf's framing) or `blsc`, when the block is one LZ4 block (arrays up to
  4 MiB) or one Blosc buffer: numcodecs' `lz4` or `blosc` on it;
- an asdf-zarr array with its chunks in the file's blocks: its own `.zarray` and a reference
  per chunk written;
- an array in the tree (inline): its bytes inline in the references (`base64:`).

What cannot be expressed so is listed, never left out in silence: a warning names each array
with the reason (`lz4` blocks of more than one LZ4 block, LZ4 frames, Blosc2 frames, a view that is not
contiguous, a part of a compressed block, masked arrays, arrays in external files or stores,
ASDF in FITS), and `skipped` (a list, when given) receives `(pointer, reason)` pairs.
"""

import base64
import json
import warnings

import numpy as np

from . import _native
from ._names import Namer, children, describe, warn_renamed

# Block compression labels whose stored bytes numcodecs decodes as one chunk.
_CODECS = {
    "zlib": {"id": "zlib", "level": 6},
    "bzp2": {"id": "bz2", "level": 9},
    "zstd": {"id": "zstd", "level": 3},
}
_WHY_NOT = {
    "lz4": "Python asdf's lz4 framing holds more than one LZ4 block (arrays over 4 MiB); numcodecs' lz4 reads one",
    "lz4f": "LZ4 frames are not a numcodecs codec",
    "blsc": "a Blosc block that is not one Blosc buffer",
    "bls2": "Blosc2 frames are not a numcodecs codec",
}


def _single_buffer(f, lay):
    """For `lz4` (Python asdf's framing: a 4-byte big-endian length before each LZ4 block)
    and `blsc` (Blosc buffers): `(offset, length, compressor)` of the one numcodecs chunk the
    block's stored bytes are, or None when they are more than one."""
    import struct

    target, settings, anonymous, version = f._native.target()
    size, etag = version if version else (None, None)
    at, n = lay["stored_offset"], lay["stored_len"]
    if n < 4:
        return None
    head = _native.read_range(target, at, at + min(n, 16), settings, anonymous, size, etag)
    if lay["compression"] == "lz4":
        # One LZ4 block stored with its size (python-lz4's store_size: a 4-byte
        # little-endian length first), as numcodecs' LZ4 reads it.
        if struct.unpack(">I", head[:4])[0] == n - 4:
            return at + 4, n - 4, {"id": "lz4", "acceleration": 1}
        return None
    # A Blosc (1) buffer: its compressed size at bytes 12..16 of its 16-byte header.
    if len(head) == 16 and head[0] in (1, 2) and struct.unpack("<I", head[12:16])[0] == n:
        return at, n, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
    return None


def _zarr_dtype(dtype):
    """numpy's dtype as Zarr format 2 writes it (a string, or a list of fields)."""
    if dtype.names:
        return [list(f) for f in dtype.descr]
    return dtype.str


def _zarr_ok(name):
    """A name Zarr (format 2) keeps as one path segment of its own: not empty, `.`, `..`,
    no `/`, not a metadata key (`.zarray`, `.zgroup`, `.zattrs`, `.zmetadata`)."""
    return name not in ("", ".", "..") and "/" not in name and not name.startswith(".z")


def _zarr_fix(name):
    if name == "":
        return "__"
    if name in (".", "..") or name.startswith(".z"):
        return f"_{name}_"
    return name.replace("/", "\u2215")


class _ZarrPaths:
    """The Zarr path of each array's pointer (`/sci/data` is `sci/data`), one-to-one: each
    key a segment, its text as written; keys of one mapping whose texts are one (`1` and
    `'1'`), and texts Zarr cannot keep (empty, `.`, `..`, a `/`, `.zarray`), renamed."""

    def __init__(self, f):
        self._f = f
        self._paths = {"": ("", ())}
        self._children = {}
        self._namers = {}
        self.renamed = []

    def path(self, pointer):
        if pointer not in self._paths:
            parent, _, token = pointer.rpartition("/")
            if parent not in self._paths:
                self.path(parent)
            parent_path, keys = self._paths[parent]
            if parent not in self._children:
                self._children[parent] = {str(t): k for k, t in children(self._f, parent)[1]}
            key = self._children[parent][token]
            namer = self._namers.setdefault(parent, Namer(allowed=_zarr_ok, fix=_zarr_fix))
            keys = keys + (key,)
            name = namer.name(key if isinstance(key, str) else str(key), describe(keys))
            self._paths[pointer] = (f"{parent_path}/{name}" if parent_path else name, keys)
        self.renamed = [r for n in self._namers.values() for r in n.renamed]
        return self._paths[pointer][0]


def _contiguous_order(shape, strides, itemsize):
    """"C" or "F" when `strides` lay the array out contiguously in that order, else None."""
    def packed(dims):
        step = itemsize
        for n, s in dims:
            if n > 1 and s != step:
                return False
            step *= n
        return True

    dims = list(zip(shape, strides))
    if packed(reversed(dims)):
        return "C"
    if packed(dims):
        return "F"
    return None


def _zarray(shape, chunks, dtype, compressor, order="C", fill_value=None):
    return {
        "zarr_format": 2,
        "shape": list(shape),
        "chunks": [max(1, int(c)) for c in chunks],
        "dtype": _zarr_dtype(dtype),
        "compressor": compressor,
        "fill_value": fill_value,
        "order": order,
        "filters": None,
    }


def _key(ndim):
    return ".".join(["0"] * ndim) if ndim else "0"


def collect(f, url):
    """`(arrays, skipped)`: for each array expressed, its Zarr path, `.zarray` metadata and
    chunk references `{key: [url, offset, length] or "base64:..."}`; for each other array,
    `(pointer, reason)`."""
    from . import _dtype

    native = f._native
    arrays, skipped = [], []
    pointers = native.array_pointers()
    in_fits = native.in_fits()
    names = _ZarrPaths(f)
    taken = set()
    for pointer in pointers:
        if any(pointer.startswith(p + "/") for p in taken):
            skipped.append((pointer, "inside another array's node (a mask or a chunk table)"))
            continue
        try:
            lay = native.layout(pointer)
        except Exception as e:  # noqa: BLE001 - an array that does not read is listed
            skipped.append((pointer, f"does not read: {e}"))
            continue
        dtype = np.dtype(_dtype(lay["dtype"]))
        shape = tuple(lay["shape"])
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        path = names.path(pointer)
        if lay.get("masked"):
            skipped.append((pointer, "a masked array (Zarr has no mask; the data and mask are not expressed)"))
            taken.add(pointer)
            continue
        if lay.get("inline"):
            # The values as Python asdf gives them (inline data has no byte order of its own).
            data = np.ascontiguousarray(f.array(pointer))
            raw = data.tobytes()
            chunk = {_key(len(shape)): "base64:" + base64.b64encode(raw).decode()} if data.nbytes else {}
            arrays.append((path, _zarray(data.shape, data.shape, data.dtype, None), chunk))
            taken.add(pointer)
            continue
        if lay.get("chunked"):
            found = native.chunk_map(pointer)
            if found is None:
                tag = native.node(pointer)[1] or ""
                if tag.startswith("asdf://asdf-format.org/zarr/"):
                    why = "its chunks are in a Zarr store outside the file: open that store with zarr"
                else:
                    why = "a chunked ndarray of ASDF.jl's layout (its chunks need not form a Zarr grid)"
                skipped.append((pointer, why))
                continue
            _meta, grid, chunks = found
            zarray = f._plain(pointer + "/.zarray")
            separator = zarray.get("dimension_separator") or "."
            refs = {}
            why = None
            for flat, c in enumerate(chunks):
                if c is None:
                    continue
                stored_offset, stored_len, compression, _ = c
                if compression != "none":
                    why = f"a chunk's block is compressed with {compression} besides the Zarr compressor"
                    break
                index = []
                for n in reversed(grid):
                    index.append(flat % n)
                    flat //= n
                refs[separator.join(str(i) for i in reversed(index))] = [url, stored_offset, stored_len]
            if why:
                skipped.append((pointer, why))
                continue
            arrays.append((path, zarray, refs))
            taken.add(pointer)
            continue
        if in_fits:
            skipped.append((pointer, "ASDF in FITS: its blocks' offsets are not the file's"))
            continue
        if "external" in lay or "block" not in lay:
            skipped.append((pointer, "its data is in another file (the exploded form)"))
            continue
        order = _contiguous_order(shape, lay["strides"], dtype.itemsize)
        if order is None:
            skipped.append((pointer, "a view whose strides are not contiguous in C or Fortran order"))
            continue
        compression = lay["compression"]
        refs = {}
        if compression == "none" or nbytes == 0:
            if nbytes:
                refs[_key(len(shape))] = [url, lay["stored_offset"] + lay["offset"], nbytes]
            arrays.append((path, _zarray(shape, shape, dtype, None, order), refs))
        elif compression in _CODECS:
            if lay["offset"] != 0 or nbytes != lay["data_len"]:
                skipped.append((pointer, f"a part of a {compression} block (a Zarr chunk must be the whole block)"))
                continue
            if nbytes:
                refs[_key(len(shape))] = [url, lay["stored_offset"], lay["stored_len"]]
            arrays.append((path, _zarray(shape, shape, dtype, dict(_CODECS[compression]), order), refs))
        else:
            single = None
            if compression in ("lz4", "blsc") and lay["offset"] == 0 and nbytes == lay["data_len"]:
                single = _single_buffer(f, lay)
            if single is None:
                why = _WHY_NOT.get(compression, f"its compression {compression} is not a numcodecs codec")
                skipped.append((pointer, why))
                continue
            at, n, codec = single
            refs[_key(len(shape))] = [url, at, n]
            arrays.append((path, _zarray(shape, shape, dtype, codec, order), refs))
        taken.add(pointer)
    warn_renamed(names.renamed, "Zarr paths", stacklevel=4)
    return arrays, skipped


def references(target, version=1, url=None, storage_options=None, skipped=None):
    """Kerchunk references (`version=1`: `{"version": 1, "refs": {...}}`; `version=0`: the
    flat mapping) or VirtualiZarr's manifests (`version="manifest"`: `{path: {"zarray": ...,
    "chunks": {key: {"path", "offset", "length"}}}}`) to the arrays of the ASDF file at
    `target` (a path or URL). `url` is where readers will find the file (default: the URL,
    or the local file's absolute path). Arrays that cannot be expressed are named in a
    warning and appended to `skipped` (a list, if given) as `(pointer, reason)`."""
    import os

    from . import open as _open

    target = str(target)
    if url is None:
        from ._native import is_url

        url = target if is_url(target) else os.path.abspath(target)
    with _open(target, validate=False, storage_options=storage_options) as f:
        arrays, left = collect(f, url)
    if left:
        warnings.warn(
            "arrays without Zarr references: "
            + "; ".join(f"{p}: {why}" for p, why in left),
            stacklevel=2,
        )
        if skipped is not None:
            skipped.extend(left)
    if version == "manifest":
        out = {}
        for path, zarray, refs in arrays:
            chunks = {}
            for key, ref in refs.items():
                if isinstance(ref, str):
                    chunks = None  # inline bytes have no place in a manifest
                    break
                chunks[key] = {"path": ref[0], "offset": ref[1], "length": ref[2]}
            if chunks is not None:
                out[path] = {"zarray": zarray, "chunks": chunks}
        return out
    refs = {".zgroup": json.dumps({"zarr_format": 2})}
    for path, zarray, chunk_refs in arrays:
        parts = path.split("/")
        for i in range(1, len(parts)):
            refs.setdefault("/".join(parts[:i]) + "/.zgroup", json.dumps({"zarr_format": 2}))
        refs[f"{path}/.zarray"] = json.dumps(zarray)
        # Dimension names for xarray: each array its own (arrays of a group differ in shape).
        leaf = parts[-1]
        dims = [f"{leaf}_dim_{i}" for i in range(len(zarray["shape"]))]
        refs[f"{path}/.zattrs"] = json.dumps({"_ARRAY_DIMENSIONS": dims})
        for key, ref in chunk_refs.items():
            refs[f"{path}/{key}"] = ref
    if version == 0:
        return refs
    if version == 1:
        return {"version": 1, "refs": refs}
    raise ValueError(f"version must be 0, 1 or 'manifest', not {version!r}")
