//! Chunked arrays (asdf-zarr's layout, ASDF.jl's chunked ndarrays): the one place the facade
//! meets `asdf-chunked` (feature `zarr`). Built without it, the same names exist: a chunked
//! array is then no ndarray, and writing one is refused ([`crate::Error::Chunked`]).

#[cfg(feature = "zarr")]
#[path = "zarr/on.rs"]
mod imp;

#[cfg(not(feature = "zarr"))]
#[path = "zarr/off.rs"]
mod imp;

pub use imp::*;
