//! World coordinates of ASDF files: the gwcs pipelines that JWST, Roman and DKIST files carry
//! (a `tag:stsci.edu:gwcs/wcs-*` node: steps of frames and astropy.modeling transforms),
//! evaluated natively, pixel to world and back, as gwcs evaluates them.
//!
//! ```no_run
//! use asdf_wcs::WcsExt;
//! let file = asdf::open("jw_cal.asdf")?;
//! let wcs = file.wcs("/meta/wcs")?;
//! let world = wcs.pixel_to_world(&[&[100.0, 200.0], &[50.0, 60.0]])?;
//! println!("ra {} dec {}", world[0][0], world[1][0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What is evaluated, and how each transform is checked against gwcs, is the transform table
//! of the crate's README. A transform or frame that is not evaluated is refused by name
//! ([`Error::Unsupported`]); a coordinate never comes from part of a pipeline.

mod cutout;
mod error;
mod frames;
mod kernels;
mod model;
mod parse;
mod pool;
mod sky;
mod trig;
pub mod units;
mod wcs;

pub use cutout::cutout_node;
pub use error::Error;
pub use frames::{Axis, Frame, FrameKind};
pub use model::Transform;
pub use wcs::{Step, Wcs};

/// `file.wcs(pointer)` on an open file.
pub trait WcsExt {
    /// The WCS at `pointer`.
    ///
    /// # Errors
    /// As [`Wcs::read`].
    fn wcs(&self, pointer: &str) -> Result<Wcs, Error>;

    /// The pointers of the file's gwcs WCS nodes, in document order.
    fn wcs_pointers(&self) -> Vec<String>;
}

impl WcsExt for asdf::AsdfFile {
    fn wcs(&self, pointer: &str) -> Result<Wcs, Error> {
        Wcs::read(self, pointer)
    }

    fn wcs_pointers(&self) -> Vec<String> {
        parse::wcs_pointers(self)
    }
}
