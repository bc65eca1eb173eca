//! What can go wrong: every error names the place (the JSON pointer of the transform or frame)
//! and, for what is not evaluated, the tag.

use crate::units::UnitError;

/// An error of reading or evaluating a WCS.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not give a node or an array.
    #[error(transparent)]
    File(#[from] asdf::Error),
    /// A transform or frame this library does not evaluate: refused by name, never evaluated
    /// in part.
    #[error("{pointer}: {what} is not evaluated by asdf-rs (refused rather than approximated)")]
    Unsupported {
        /// Where it is.
        pointer: String,
        /// The tag, or the feature of it that is not supported.
        what: String,
    },
    /// A node is not what its tag's schema says.
    #[error("{pointer}: {reason}")]
    Malformed {
        /// Where it is.
        pointer: String,
        /// What is wrong.
        reason: String,
    },
    /// A unit that could not be read.
    #[error("{pointer}: {source}")]
    Unit {
        /// Where it is.
        pointer: String,
        /// The unit's error.
        source: UnitError,
    },
    /// Values whose units do not fit a transform (astropy raises `UnitsError` there too).
    #[error("{pointer}: {reason}")]
    Units {
        /// The transform.
        pointer: String,
        /// What does not fit.
        reason: String,
    },
    /// A transform has no inverse (none in the file, none analytic).
    #[error("{pointer}: {what} has no inverse{hint}")]
    NoInverse {
        /// The transform.
        pointer: String,
        /// What it is.
        what: String,
        /// More on why.
        hint: &'static str,
    },
    /// The caller's points are not what the transform takes.
    #[error("{0}")]
    Usage(String),
    /// A tabular transform that raises outside its table (`bounds_error: true`), given a
    /// point outside it, as scipy raises.
    #[error("{pointer}: a point ({value}) lies outside the table's bounds, and the table says bounds_error: true")]
    OutOfTable {
        /// The transform.
        pointer: String,
        /// The coordinate outside.
        value: f64,
    },
}
