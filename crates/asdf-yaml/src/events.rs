//! The YAML event stream (what the parser sees before nodes are built), for tools and for
//! checking the parser against the yaml-test-suite.

use libyaml_safer::{EventData, Parser};

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
    let last = std::cell::Cell::new(Span::default());
    crate::parse::guarded(
        || {
            let mut out = Vec::new();
            collect(text, &mut out, &last).map(|()| out)
        },
        || Some(last.get()),
    )
}

fn collect(text: &[u8], out: &mut Vec<(Event, Span)>, last: &std::cell::Cell<Span>) -> Result<(), Error> {
    let mut input = text;
    let mut parser = Parser::new();
    parser.set_input_string(&mut input);
    loop {
        let ev = parser.parse().map_err(|e| Error::from_libyaml(&e))?;
        let at = crate::parse::span(ev.start_mark);
        last.set(at);
        let e = match ev.data {
            EventData::StreamStart { .. } => Event::StreamStart,
            EventData::StreamEnd => Event::StreamEnd,
            EventData::DocumentStart { implicit, .. } => Event::DocumentStart { explicit: !implicit },
            EventData::DocumentEnd { implicit } => Event::DocumentEnd { explicit: !implicit },
            EventData::Alias { anchor } => Event::Alias { anchor },
            EventData::Scalar {
                anchor,
                tag,
                value,
                style,
                ..
            } => Event::Scalar {
                anchor,
                tag,
                value,
                style: crate::parse::style(style),
            },
            EventData::SequenceStart { anchor, tag, style, .. } => Event::SequenceStart {
                anchor,
                tag,
                flow: style == libyaml_safer::SequenceStyle::Flow,
            },
            EventData::SequenceEnd => Event::SequenceEnd,
            EventData::MappingStart { anchor, tag, style, .. } => Event::MappingStart {
                anchor,
                tag,
                flow: style == libyaml_safer::MappingStyle::Flow,
            },
            EventData::MappingEnd => Event::MappingEnd,
        };
        let end = e == Event::StreamEnd;
        out.push((e, at));
        if end {
            return Ok(());
        }
    }
}
