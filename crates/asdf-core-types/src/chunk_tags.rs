//! The tags of chunked arrays (asdf-zarr's, ASDF.jl's): known whether or not the `zarr`
//! feature reads them, so that every write keeps their blocks.

/// The tags of asdf-zarr's chunked arrays start with this.
pub const ZARR_TAG_PREFIX: &str = "asdf://asdf-format.org/zarr/tags/zarr-";

/// Whether `tag` is one of asdf-zarr's array tags.
#[must_use]
pub fn is_zarr_tag(tag: &str) -> bool {
    tag.starts_with(ZARR_TAG_PREFIX)
}

/// The tag of ASDF.jl's chunked ndarrays starts with this.
pub const CHUNKED_NDARRAY_TAG_PREFIX: &str = "tag:stsci.edu:asdf/core/chunked-ndarray-";

/// Whether `tag` is ASDF.jl's chunked ndarray tag (`core/chunked-ndarray-1.0.0`).
#[must_use]
pub fn is_chunked_ndarray_tag(tag: &str) -> bool {
    tag.starts_with(CHUNKED_NDARRAY_TAG_PREFIX)
}

/// Whether `tag` is a chunked array's that the facade's `AsdfFile::array` reads (with its
/// `zarr` feature): asdf-zarr's or ASDF.jl's.
#[must_use]
pub fn is_chunked_array_tag(tag: &str) -> bool {
    is_zarr_tag(tag) || is_chunked_ndarray_tag(tag)
}
