//! Pictures of the arrays of an ASDF file.
//!
//! ```no_run
//! # fn main() -> Result<(), asdf_preview::Error> {
//! let file = asdf::open("image.asdf")?;
//! let options = asdf_preview::Options::default();
//! let png = asdf_preview::draw(&file, "/sci/data", None, &options)?.to_png()?;
//! std::fs::write("image.png", png).ok();
//! # Ok(()) }
//! ```

mod error;
mod image;
mod pick;
mod plot;
mod stretch;

pub use error::Error;
pub use image::{Colormap, Image, Plane, Rgb, Style, contact_sheet, histogram, parse_color};
pub use pick::{Picture, Values, check_memory, default_region, default_slice, image_pointers, picture, read_values};
pub use plot::{label, line_plot, ticks};
pub use stretch::{Stretch, zscale};

/// How arrays are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Stretch, colour map, NaN and mask colours, orientation.
    pub style: Style,
    /// The largest side of an image in pixels (`None`: one pixel per value); larger arrays are
    /// reduced by averaging boxes.
    pub max_size: Option<usize>,
    /// The size of a line plot, width and height.
    pub plot_size: (usize, usize),
}

impl Default for Options {
    fn default() -> Self {
        Options {
            style: Style::default(),
            max_size: None,
            plot_size: (800, 400),
        }
    }
}

/// The picture of the array at `pointer` (a region of it, or [`default_region`]): an image
/// for two axes, a line plot for one.
///
/// # Errors
/// As [`picture`].
pub fn draw(
    file: &asdf::AsdfFile,
    pointer: &str,
    region: Option<&asdf::Region>,
    options: &Options,
) -> Result<Image, Error> {
    Ok(match picture(file, pointer, region)? {
        Picture::Image(plane) => match options.max_size {
            Some(m) => plane.reduced(m).render(&options.style),
            None => plane.render(&options.style),
        },
        Picture::Line(v) => line_plot(&v, options.plot_size.0, options.plot_size.1),
    })
}

/// A contact sheet of every image-like array of the file (each reduced to `tile` pixels at
/// most, captioned with its pointer).
///
/// # Errors
/// [`Error::NoImages`]; as [`draw`].
pub fn draw_all(file: &asdf::AsdfFile, tile: usize, options: &Options) -> Result<Image, Error> {
    let pointers = image_pointers(file)?;
    if pointers.is_empty() {
        return Err(Error::NoImages);
    }
    let each = Options {
        max_size: Some(tile),
        ..*options
    };
    let tiles = pointers
        .into_iter()
        .map(|p| draw(file, &p, None, &each).map(|img| (p, img)))
        .collect::<Result<Vec<_>, _>>()?;
    // A square-ish sheet: the fewest columns whose square holds every tile.
    let columns = (1..=tiles.len()).find(|c| c * c >= tiles.len()).unwrap_or(1);
    Ok(contact_sheet(&tiles, columns))
}
