//! `preview`: an array as a PNG picture (an image, a plot, or a contact sheet of every image).

use std::process::ExitCode;

use asdf_preview::{Colormap, Options, Stretch, Style};

use crate::output;
use crate::schemas::read_options;

/// Draw an array as a PNG: a 2-D array (or a plane of a cube) as an image, a 1-D array as a
/// line plot; without POINTER the first image of the file, or with --all a contact sheet of
/// every image. Images are drawn with the array's first row at the bottom (as DS9 shows FITS)
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The ASDF file (or URL, or a FITS file with an ASDF extension).
    pub file: std::path::PathBuf,
    /// The array's JSON pointer (`/sci/data`); default: the first array of two or more dimensions.
    pointer: Option<String>,
    /// The PNG file to write (its name must end in `.png`; a device or FIFO gets PNG too).
    /// Never one of the files read.
    #[arg(short, long)]
    output: std::path::PathBuf,
    /// Limits and transfer function: zscale (IRAF's, the default), minmax, percentile (99.5%
    /// of the values), percentile=P, asinh, log.
    #[arg(long, default_value = "zscale", value_parser = str::parse::<Stretch>)]
    stretch: Stretch,
    /// Colour map: gray, viridis, inferno, magma, plasma, cividis, turbo, cubehelix.
    #[arg(long, default_value = "gray", value_parser = str::parse::<Colormap>)]
    cmap: Colormap,
    /// The largest side of an image in pixels (larger arrays are reduced by averaging boxes);
    /// default: one pixel per value. At least 1.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_size: Option<u64>,
    /// The region drawn, as numpy slices it: a plane of a cube (`"2, :, :"`), a cutout
    /// (`"100:300, 1400:1600"`); default: the whole array, or a cube's first plane.
    #[arg(long, allow_hyphen_values = true)]
    slice: Option<String>,
    /// Draw the first row at the top (as numpy prints arrays) instead of the bottom.
    #[arg(long)]
    origin_upper: bool,
    /// The colour of NaN and infinite values (#rrggbb).
    #[arg(long, default_value = "#ff00ff", value_parser = asdf_preview::parse_color)]
    nan_color: asdf_preview::Rgb,
    /// The colour of masked values (#rrggbb).
    #[arg(long, default_value = "#00a0ff", value_parser = asdf_preview::parse_color)]
    mask_color: asdf_preview::Rgb,
    /// A contact sheet of every array of two or more dimensions, each at most this many pixels
    /// on a side (256 unless --max-size says otherwise).
    #[arg(long, conflicts_with_all = ["pointer", "slice"])]
    all: bool,
}

impl Args {
    pub fn run(&self) -> Result<ExitCode, asdf::Error> {
        let region: Option<asdf::Region> = match self.slice.as_deref().map(str::parse).transpose() {
            Ok(r) => r,
            Err(e) => {
                crate::report::error(&format!("--slice: {e}"));
                return Ok(ExitCode::from(2));
            }
        };
        output::refuse_input_path(&self.file, &self.output)?;
        if let Err(code) = output::format("preview", &self.output, &["png"]) {
            return Ok(code);
        }
        let max_size = self.max_size.map(|m| usize::try_from(m).unwrap_or(usize::MAX));
        let file = asdf::Open::path_or_url(&self.file).options(read_options()).open()?;
        output::refuse_inputs(&file, std::slice::from_ref(&self.output), output::Own::Refused)?;
        let options = Options {
            style: Style {
                stretch: self.stretch,
                cmap: self.cmap,
                nan_color: self.nan_color,
                mask_color: self.mask_color,
                origin_lower: !self.origin_upper,
            },
            max_size,
            ..Options::default()
        };
        let drawn = if self.all {
            asdf_preview::draw_all(&file, max_size.unwrap_or(256), &options).map(|img| (img, "every image".to_owned()))
        } else {
            let pointer = match &self.pointer {
                Some(p) => Ok(p.clone()),
                None => asdf_preview::image_pointers(&file)
                    .and_then(|p| p.into_iter().next().ok_or(asdf_preview::Error::NoImages)),
            };
            pointer.and_then(|p| asdf_preview::draw(&file, &p, region.as_ref(), &options).map(|img| (img, p)))
        };
        let (img, what) = match drawn {
            Ok(d) => d,
            Err(asdf_preview::Error::Asdf(e)) => return Err(e),
            Err(e) => {
                crate::report::error(&e.to_string());
                return Ok(ExitCode::from(1));
            }
        };
        let png = match img.to_png() {
            Ok(p) => p,
            Err(e) => {
                crate::report::error(&format!("PNG: {e}"));
                return Ok(ExitCode::from(1));
            }
        };
        asdf::write_atomically(&self.output, |w| std::io::Write::write_all(w, &png))?;
        eprintln!("wrote {} ({}x{}, {what})", self.output.display(), img.width, img.height);
        Ok(ExitCode::SUCCESS)
    }
}
