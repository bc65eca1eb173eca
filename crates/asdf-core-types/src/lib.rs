//! Typed values of the ASDF core tags: the ndarray datatype model and the schema keywords built
//! on it (`datatype`, `exact_datatype`, `ndim`, `max_ndim`, registered with `asdf-schema`),
//! ndarray nodes and array layouts (`View`: offsets, typed copies, zero-copy slices, element
//! iterators), and typed values of the core, unit, time, table and fits tags.
//!
//! ```
//! use asdf_yaml::{parse, Limits};
//! let schemas = asdf_core_types::schemas().unwrap();
//! let text = b"%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\narr: !core/ndarray-1.1.0\n  data: [1, 2]\n  mask: !core/ndarray-1.1.0 {data: [a, b]}\n...\n";
//! let doc = parse(text, &Limits::default())?.document;
//! let report = schemas.validate_document(&doc);
//! assert!(!report.is_valid()); // a mask must be boolean
//! # Ok::<(), asdf_yaml::Error>(())
//! ```

pub mod astro;
pub mod chunk_tags;
pub mod complex;
pub mod datatype;
pub mod finish;
pub mod integer;
mod keywords;
pub mod ndarray;
pub mod numbering;
pub mod references;
pub mod region;
pub mod stored;
pub mod typed;
pub mod view;

pub use complex::Complex;
pub use datatype::{ByteOrder, Datatype, DatatypeError, Field, ScalarType};
pub use keywords::{KeywordFailure, SchemaCheck, check_embedded_schemas, compile_options, schemas, standard_tag};
pub use ndarray::{Decoded, Dim, Element, Mask, NdArray, NdArrayError, Source, is_ndarray_tag};
pub use references::ReferencePolicy;
pub use view::{Elements, Piece, Scalar, View};
