//! The YAML event stream (what the parser sees before nodes are built), for tools and for
//! checking the parser against the yaml-test-suite.

use crate::grammar::{Ev, Parser};

use crate::error::Error;
use crate::node::{ScalarStyle, Span};

/// One parser event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// Start of the stream.
    StreamStart,
    /// End of the stream.
    StreamEnd,
    /// Start of a document; `explicit` when written with `---`.
    DocumentStart {
        /// `---` present.
        explicit: bool,
    },
    /// End of a document; `explicit` when written with `...`.
    DocumentEnd {
        /// `...` present.
        explicit: bool,
    },
    /// Start of a mapping.
    MappingStart {
        /// Anchor.
        anchor: Option<String>,
        /// Full tag.
        tag: Option<String>,
        /// Flow style.
        flow: bool,
    },
    /// End of a mapping.
    MappingEnd,
    /// Start of a sequence.
    SequenceStart {
        /// Anchor.
        anchor: Option<String>,
        /// Full tag.
        tag: Option<String>,
        /// Flow style.
        flow: bool,
    },
    /// End of a sequence.
    SequenceEnd,
    /// A scalar.
    Scalar {
        /// Anchor.
        anchor: Option<String>,
        /// Full tag.
        tag: Option<String>,
        /// Text after unescaping.
        value: String,
        /// Style.
        style: ScalarStyle,
    },
    /// An alias.
    Alias {
        /// The anchor referred to.
        anchor: String,
    },
}

/// Every event of `text` with its position, up to the end of the stream (several documents
/// allowed).
///
/// # Errors
/// The first syntax error, with its position.
pub fn events(text: &[u8]) -> Result<Vec<(Event, Span)>, Error> {
    let mut parser = Parser::new(text)?;
    let mut out = Vec::new();
    while let Some((ev, at)) = parser.next()? {
        let e = match ev {
            Ev::StreamStart => Event::StreamStart,
            Ev::StreamEnd => Event::StreamEnd,
            Ev::DocStart { explicit, .. } => Event::DocumentStart { explicit },
            Ev::DocEnd { explicit } => Event::DocumentEnd { explicit },
            Ev::Alias(a) => Event::Alias { anchor: a.to_owned() },
            Ev::Scalar {
                anchor,
                tag,
                value,
                style,
            } => Event::Scalar {
                anchor: anchor.map(str::to_owned),
                tag,
                value: value.into_owned(),
                style,
            },
            Ev::SeqStart { anchor, tag, flow } => Event::SequenceStart {
                anchor: anchor.map(str::to_owned),
                tag,
                flow,
            },
            Ev::SeqEnd => Event::SequenceEnd,
            Ev::MapStart { anchor, tag, flow } => Event::MappingStart {
                anchor: anchor.map(str::to_owned),
                tag,
                flow,
            },
            Ev::MapEnd => Event::MappingEnd,
        };
        out.push((e, at.into()));
    }
    Ok(out)
}

/// How many events `text` has (the parser alone, nothing built; for benchmarks).
///
/// # Errors
/// The first syntax error, with its position.
pub fn count(text: &[u8]) -> Result<usize, Error> {
    let mut parser = Parser::new(text)?;
    let mut n = 0;
    while parser.next()?.is_some() {
        n += 1;
    }
    Ok(n)
}
