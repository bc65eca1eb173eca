"""Writes the blosc fixtures used by tests/layout.rs (run once with python-blosc2 4.x and
numpy installed; the outputs are committed). Each file holds int32 arange(100000)."""
import blosc2
import numpy as np

a = np.arange(100000, dtype=np.int32)
for name, codec in [("blosclz", blosc2.Codec.BLOSCLZ), ("lz4", blosc2.Codec.LZ4), ("zstd", blosc2.Codec.ZSTD), ("zlib", blosc2.Codec.ZLIB)]:
    with open(f"chunk_{name}.bls2", "wb") as f:
        f.write(blosc2.compress2(a.tobytes(), typesize=4, codec=codec))
    s = blosc2.SChunk(chunksize=40000 * 4, data=a, cparams={"typesize": 4, "codec": codec})
    with open(f"frame_{name}.bls2", "wb") as f:
        f.write(s.to_cframe())
