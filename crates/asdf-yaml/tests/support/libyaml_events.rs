//! libyaml's events (through libyaml-safer, a Rust port of the C parser) in this crate's event
//! type: the oracle of the agreement tests and the comparison on the yaml-test-suite.

use asdf_yaml::ScalarStyle;
use asdf_yaml::events::Event;
use libyaml_safer::{EventData, Parser};

/// The event stream as libyaml gives it, in this crate's event type (`None`: libyaml refuses
/// the text or fails on it).
pub fn libyaml_events(text: &[u8]) -> Option<Vec<Event>> {
    std::panic::catch_unwind(|| {
        let mut input = text;
        let mut parser = Parser::new();
        parser.set_input_string(&mut input);
        let mut out = Vec::new();
        loop {
            let ev = parser.parse().ok()?;
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
                    style: match style {
                        libyaml_safer::ScalarStyle::Plain => ScalarStyle::Plain,
                        libyaml_safer::ScalarStyle::SingleQuoted => ScalarStyle::SingleQuoted,
                        libyaml_safer::ScalarStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
                        libyaml_safer::ScalarStyle::Literal => ScalarStyle::Literal,
                        libyaml_safer::ScalarStyle::Folded => ScalarStyle::Folded,
                        _ => ScalarStyle::Any,
                    },
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
            out.push(e);
            if end {
                return Some(out);
            }
        }
    })
    .ok()
    .flatten()
}
