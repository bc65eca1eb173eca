"""Dask arrays over ASDF files: a task per storage unit, each reading only its own bytes.

An uncompressed, C-ordered block is cut into ranges of rows (about `chunk_bytes` each); a
compressed block is one chunk (its stored bytes fetched and decoded by its task), except a
Blosc2 frame: a task per frame chunk (in whole rows), fetching the frame's header, index and
its own chunks; a chunked
array (asdf-zarr, chunks in blocks) has one task per Zarr chunk, which fetches that chunk's
block and decodes it (a chunk never written is the fill value, fetched from nowhere). Each task
names the file by path or URL and reads its byte range with one ranged request, so the
graph pickles and runs on any worker that can reach the file (a dask.distributed cluster
on files in object storage).
"""

import numpy as np

from . import _native


def _descr(d):
    from . import _dtype

    return _dtype(d)


def _access(f):
    """How the tasks reach the file: (settings, anonymous, version, local), version the (size,
    ETag) of a remote file when it was opened, local the (size, mtime, inode, device) of a
    local file when it was opened (`File._local_stat`)."""
    _target, settings, anonymous, version = f._native.target()
    return (settings, anonymous, version, getattr(f, "_local_stat", None))


def _same_local(target, local):
    """Raises when the local file at `target` is no longer the one opened (replaced, rewritten
    or truncated): a task must not read another version than the one the graph was made from."""
    if local is None:
        return
    import os

    st = os.stat(target)
    if (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev) != tuple(local):
        raise OSError(f"{target}: the file changed since it was opened (size, time or inode): not read")


def _fetch(target, access, start, end):
    """The bytes start..end of the file, of the version the file had when it was opened:
    another version is an error, not a mix."""
    settings, anonymous, version, local = access
    size, etag = version if version is not None else (None, None)
    _same_local(target, local)
    data = _native.read_range(target, start, end, settings=settings, anonymous=anonymous, size=size, etag=etag)
    _same_local(target, local)
    return data


def read_rows(target, access, start, end, descr, shape):
    """Task: the bytes start..end of the file as an array of `shape` (C order)."""
    data = _fetch(target, access, start, end)
    arr = np.frombuffer(data, dtype=np.dtype(_descr(descr)))
    return arr.reshape(shape)


def read_frame_rows(target, access, stored, compression, data_len, lo, hi, descr, shape):
    """Task: decoded bytes lo..hi of a Blosc2 frame (`stored` = (offset, length) of its stored
    bytes) as an array of `shape`: only the frame's header, chunk index and the chunks the
    range touches are fetched."""
    settings, anonymous, version, local = access
    size, etag = version if version is not None else (None, None)
    _same_local(target, local)
    data = _native.read_block_range(
        target, stored[0], stored[1], compression, data_len, lo, hi,
        settings=settings, anonymous=anonymous, size=size, etag=etag,
    )
    _same_local(target, local)
    return np.frombuffer(data, dtype=np.dtype(_descr(descr))).reshape(shape)


def _frame_chunksize(target, access, start, stored_len):
    """The chunk size of the Blosc2 frame whose stored bytes start at `start`, None when it
    is not a frame (one Blosc2 chunk)."""
    head = bytes(_fetch(target, access, start, start + min(64, stored_len)))
    if not head.startswith(b"\x9e\xa8b2frame") or len(head) < 62 or head[57] != 0xD2:
        return None
    return int.from_bytes(head[58:62], "big") or None


def read_block(target, access, start, end, compression, data_len, descr, shape, offset, strides):
    """Task: a whole block, fetched (stored bytes start..end), decoded and viewed."""
    stored = _fetch(target, access, start, end)
    data = _native.decode_block(compression, stored, data_len)
    arr = np.ndarray(tuple(shape), dtype=np.dtype(_descr(descr)), buffer=data, offset=offset, strides=tuple(strides))
    return np.array(arr)


def read_zarr_chunk(target, access, where, metadata, index, descr, full, shape):
    """Task: one Zarr chunk of shape `full` (its block's stored bytes `where` = (start, end,
    compression, data_len), or None for a chunk never written), decoded and cut to `shape` at
    the array's edges."""
    stored = None
    if where is not None:
        start, end, compression, data_len = where
        stored = _fetch(target, access, start, end)
        if compression != "none":
            stored = _native.decode_block(compression, stored, data_len)
    data = _native.decode_zarr_chunk(metadata, list(index), None if stored is None else bytes(stored))
    arr = np.frombuffer(data, dtype=np.dtype(_descr(descr)).newbyteorder("=")).reshape(full)
    return np.array(arr[tuple(slice(0, n) for n in shape)])


def zarr_to_dask(f, pointer, lay):
    """One task per Zarr chunk of a chunked array whose chunks are blocks of the file; None
    when they are not (a store beside the file)."""
    import dask.array as da
    from dask.base import tokenize

    found = f._native.chunk_map(pointer)
    if found is None:
        return None
    metadata, grid, chunks = found
    target = f._native.target()[0]
    access = _access(f)
    shape = tuple(lay["shape"])
    cshape = tuple(lay["chunks"])
    descr = lay["dtype"]
    name = "asdf-rs-zarr-" + tokenize(target, pointer, metadata, chunks)
    graph = {}
    for flat, where in enumerate(chunks):
        index, rest = [], flat
        for g in reversed(grid):
            index.insert(0, rest % g)
            rest //= g
        part = tuple(min(c, n - i * c) for i, c, n in zip(index, cshape, shape))
        where = None if where is None else (where[0], where[0] + where[1], where[2], where[3])
        graph[(name,) + tuple(index)] = (read_zarr_chunk, target, access, where, metadata, tuple(index), descr, cshape, part)
    dims = tuple(tuple(min(c, n - i * c) for i in range(g)) for c, n, g in zip(cshape, shape, grid))
    return da.Array(graph, name, chunks=dims, dtype=np.dtype(_descr(descr)).newbyteorder("="))


def chunk_plan(f, pointer, chunk_bytes=64 << 20):
    """The tasks' specifications: (kind, args, chunk shape) per chunk along the first axis."""
    lay = f._native.layout(pointer)
    target = f._native.target()[0]
    access = _access(f)
    dtype = np.dtype(_descr(lay["dtype"]))
    shape = tuple(lay["shape"])
    if lay.get("inline") or lay.get("masked") or "block" not in lay:
        return None, lay
    c_strides = []
    step = dtype.itemsize
    for n in reversed(shape):
        c_strides.insert(0, step)
        step *= n
    contiguous = tuple(lay["strides"]) == tuple(c_strides) or 0 in shape
    plan = []
    if lay["compression"] == "none" and contiguous and shape:
        row = dtype.itemsize
        for n in shape[1:]:
            row *= n
        rows = max(1, chunk_bytes // max(row, 1))
        base = lay["stored_offset"] + lay["offset"]
        for r0 in range(0, shape[0], rows):
            r1 = min(shape[0], r0 + rows)
            plan.append(
                (
                    "rows",
                    (target, access, base + r0 * row, base + r1 * row, lay["dtype"], (r1 - r0,) + shape[1:]),
                    (r1 - r0,) + shape[1:],
                )
            )
        if not plan:
            plan.append(("rows", (target, access, base, base, lay["dtype"], shape), shape))
    elif (
        lay["compression"] in ("bls2", "bsc2")
        and contiguous
        and shape
        and lay["offset"] == 0
        and (chunksize := _frame_chunksize(target, access, lay["stored_offset"], lay["stored_len"]))
    ):
        # A Blosc2 frame: a task per frame chunk (rows rounded to whole rows), each fetching
        # the frame's header and index and its own chunks (where rows do not divide a frame
        # chunk, also the chunk its last row begins).
        row = dtype.itemsize
        for n in shape[1:]:
            row *= n
        rows = max(1, chunksize // max(row, 1))
        stored = (lay["stored_offset"], lay["stored_len"])
        for r0 in range(0, shape[0], rows):
            r1 = min(shape[0], r0 + rows)
            cshape = (r1 - r0,) + shape[1:]
            plan.append(
                ("frame", (target, access, stored, lay["compression"], lay["data_len"], r0 * row, r1 * row, lay["dtype"], cshape), cshape)
            )
    else:
        start = lay["stored_offset"]
        plan.append(
            (
                "block",
                (
                    target,
                    access,
                    start,
                    start + lay["stored_len"],
                    lay["compression"],
                    lay["data_len"],
                    lay["dtype"],
                    shape,
                    lay["offset"],
                    tuple(lay["strides"]),
                ),
                shape,
            )
        )
    return plan, lay


def _chunk_bytes(chunk_bytes):
    """`chunk_bytes` checked: a whole number of at least 1; None for the default (64 MiB)."""
    import operator

    if chunk_bytes is None:
        return 64 << 20
    try:
        n = operator.index(chunk_bytes)
    except TypeError:
        raise TypeError(
            f"chunk_bytes must be a whole number of bytes (or None for 64 MiB), not {type(chunk_bytes).__name__}"
        ) from None
    if n < 1:
        raise ValueError(f"chunk_bytes is {n}: a chunk holds at least 1 byte")
    return n


def to_dask(f, pointer, chunk_bytes=64 << 20):
    import dask.array as da
    from dask.base import tokenize

    chunk_bytes = _chunk_bytes(chunk_bytes)

    lay = f._native.layout(pointer)
    if lay.get("chunked") and lay["shape"] and 0 not in lay["shape"]:
        d = zarr_to_dask(f, pointer, lay)
        if d is not None:
            return d
    plan, lay = chunk_plan(f, pointer, chunk_bytes)
    if plan is None:
        # In the tree, or masked: the array as `f[p]` gives it, masks kept (np.asarray dropped
        # them: masked values read as valid).
        return da.from_array(f.array(pointer), chunks=-1, asarray=False)
    dtype = np.dtype(_descr(lay["dtype"]))
    shape = tuple(lay["shape"])
    target = f._native.target()[0]
    name = "asdf-rs-" + tokenize(target, pointer, lay["stored_offset"], lay["stored_len"], chunk_bytes)
    graph = {}
    first = []
    for i, (kind, args, cshape) in enumerate(plan):
        func = {"rows": read_rows, "frame": read_frame_rows}.get(kind, read_block)
        key = (name, i) + (0,) * max(len(shape) - 1, 0)
        graph[key] = (func,) + tuple(args)
        first.append(cshape[0] if cshape else 1)
    if not shape:
        graph = {(name,): (read_block,) + tuple(plan[0][1])}
        return da.Array(graph, name, chunks=(), dtype=dtype)
    chunks = (tuple(first),) + tuple((n,) for n in shape[1:])
    return da.Array(graph, name, chunks=chunks, dtype=dtype)


def read_whole(target, pointer, storage_options, shape, dtype):
    """Task of `stack`: the array at `pointer` of one file, opened here (on the worker) and
    closed again; a file whose array has another shape or dtype is an error naming it."""
    from . import open as _open

    with _open(target, validate=False, storage_options=storage_options) as f:
        a = f.array(pointer)
    if tuple(a.shape) != tuple(shape) or a.dtype != np.dtype(dtype):
        raise ValueError(
            f"{target}{pointer}: {a.dtype}{list(a.shape)}, not the {np.dtype(dtype)}{list(shape)} of the first file"
        )
    return a


def stack(targets, pointer, storage_options=None, axis=0):
    """A dask array of the arrays at `pointer` of many files (paths or URLs) stacked along a
    new axis `axis`: one task per file, which opens the file on the worker that runs it. Only
    the first file is opened here, for the shape and dtype every file must have."""
    import dask
    import dask.array as da

    from . import open as _open

    targets = [str(t) for t in targets]
    if not targets:
        raise ValueError("stack: no files")
    if not pointer.startswith("/"):
        pointer = "/" + pointer
    with _open(targets[0], validate=False, storage_options=storage_options) as f:
        lazy = f.lazy(pointer)
        shape, dtype = tuple(lazy.shape), np.dtype(lazy.dtype)
    read = dask.delayed(read_whole, pure=True)
    parts = [
        da.from_delayed(read(t, pointer, storage_options, shape, dtype.str, dask_key_name=f"asdf-rs-read-{i}-{t}"), shape, dtype)
        for i, t in enumerate(targets)
    ]
    return da.stack(parts, axis=axis)
