//! What can go wrong while drawing.

/// An array that cannot be drawn, or the file's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file (reading, the tree, the blocks).
    #[error(transparent)]
    Asdf(#[from] asdf::Error),
    /// Strings or records.
    #[error("{pointer}: an array of {datatype} cannot be drawn (numbers and booleans can)")]
    NotNumeric {
        /// The array.
        pointer: String,
        /// Its datatype.
        datatype: String,
    },
    /// A region with no axis or more than two.
    #[error(
        "{pointer}: the region drawn has shape {shape:?}; a picture needs one axis (a plot) or two (an image): choose a plane with --slice"
    )]
    NotAPicture {
        /// The array.
        pointer: String,
        /// The region's shape.
        shape: Vec<usize>,
    },
    /// A region with no element (an axis of length 0).
    #[error("{pointer}: the region drawn has shape {shape:?}, no element: there is nothing to draw")]
    Empty {
        /// The array.
        pointer: String,
        /// The region's shape.
        shape: Vec<usize>,
    },
    /// No array of the file looks like an image.
    #[error(
        "the file has no array that looks like an image (of numbers, with two or more dimensions, the last two each at least 2 long, as a (1, N) row is not): name an array to draw it (one with a single row or column is drawn as a line)"
    )]
    NoImages,
    /// The PNG encoder's.
    #[error("PNG: {0}")]
    Png(#[from] png::EncodingError),
}
