//! The libyaml emitter (libyaml-safer) driven as the crate drove it before it had its own
//! writer: the oracle the own writer is compared with.

use asdf_yaml::node::{Document, Node, NodeKind, Scalar, ScalarStyle, Value, tags};
use asdf_yaml::resolve::implicit_tag;
use asdf_yaml::{EmitOptions, FlowPolicy};
use libyaml_safer::{Emitter, Encoding, Event, EventData, MappingStyle, Parser, ScalarStyle as LS, SequenceStyle};

/// The tag PyYAML's representer would give the node, and whether it is a YAML core tag.
fn effective_tag<'a>(n: &'a Node, s: &Scalar) -> &'a str {
    if let Some(t) = &n.tag {
        return t;
    }
    match s.value {
        Value::Null => tags::NULL,
        Value::Bool(_) => tags::BOOL,
        Value::Int(_) | Value::BigInt(_) => tags::INT,
        Value::Float(_) => tags::FLOAT,
        Value::Str => tags::STR,
        Value::Timestamp => tags::TIMESTAMP,
        Value::Binary(_) => tags::BINARY,
    }
}

fn ls(s: ScalarStyle) -> LS {
    match s {
        ScalarStyle::Any => LS::Any,
        ScalarStyle::Plain => LS::Plain,
        ScalarStyle::SingleQuoted => LS::SingleQuoted,
        ScalarStyle::DoubleQuoted => LS::DoubleQuoted,
        ScalarStyle::Literal => LS::Literal,
        ScalarStyle::Folded => LS::Folded,
    }
}

struct Ctx<'a> {
    doc: &'a Document,
    opts: &'a EmitOptions,
}

impl Ctx<'_> {
    /// The style a scalar is emitted with (PyYAML gives none but to binary data).
    fn scalar_style(&self, s: &Scalar) -> ScalarStyle {
        if matches!(s.value, Value::Binary(_)) {
            return ScalarStyle::Literal;
        }
        if self.opts.preserve_scalar_styles {
            s.style
        } else {
            ScalarStyle::Any
        }
    }

    /// The text written for a scalar: what Python's representer writes for values of the YAML
    /// core types (`null`, `true`, `42`, `0.5`, base64), the text itself otherwise or when
    /// styles are preserved.
    fn text<'s>(&self, tag: &str, s: &'s Scalar) -> std::borrow::Cow<'s, str> {
        use std::borrow::Cow;
        if self.opts.preserve_scalar_styles || !tag.starts_with(tags::YAML) {
            return Cow::Borrowed(&s.text);
        }
        match &s.value {
            Value::Null => Cow::Borrowed("null"),
            Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
            Value::Int(i) => Cow::Owned(i.to_string()),
            Value::BigInt(i) => Cow::Owned(i.to_string()),
            Value::Float(f) => Cow::Owned(asdf_yaml::resolve::python_float_repr(*f)),
            Value::Binary(b) => Cow::Owned(asdf_yaml::resolve::base64_lines(b)),
            Value::Str | Value::Timestamp => Cow::Borrowed(&s.text),
        }
    }

    /// PyYAML's `best_style`: every item a scalar with no explicit style.
    fn unstyled_scalar(&self, n: &Node) -> bool {
        match &self.doc.resolve(n).kind {
            NodeKind::Scalar(s) => self.scalar_style(s) == ScalarStyle::Any,
            _ => false,
        }
    }

    fn flow(&self, n: &Node, parsed: bool) -> bool {
        match self.opts.flow {
            FlowPolicy::Preserve => parsed,
            _ => match &n.kind {
                NodeKind::Sequence(s) => s.items.iter().all(|i| self.unstyled_scalar(i)),
                NodeKind::Mapping(m) => m
                    .entries
                    .iter()
                    .all(|(k, v)| self.unstyled_scalar(k) && self.unstyled_scalar(v)),
                _ => false,
            },
        }
    }
}

fn directives(
    doc: &Document,
) -> Result<
    (
        Option<libyaml_safer::VersionDirective>,
        Vec<libyaml_safer::TagDirective>,
    ),
    String,
> {
    // libyaml-safer's directive types cannot be built directly: parse a stub document.
    let mut stub = String::new();
    if let Some((a, b)) = doc.version {
        stub.push_str(&format!("%YAML {a}.{b}\n"));
    }
    for (h, p) in &doc.tag_directives {
        stub.push_str(&format!("%TAG {h} {p}\n"));
    }
    stub.push_str("--- ~\n");
    let mut bytes = stub.as_bytes();
    let mut p = Parser::new();
    p.set_input_string(&mut bytes);
    loop {
        let ev = p.parse().map_err(|e| e.to_string())?;
        match ev.data {
            EventData::DocumentStart {
                version_directive,
                tag_directives,
                ..
            } => return Ok((version_directive, tag_directives)),
            EventData::StreamEnd => return Ok((None, Vec::new())),
            _ => {}
        }
    }
}

enum Work<'a> {
    Node(&'a Node),
    End(bool),
}

pub fn emit_libyaml(doc: &Document, opts: &EmitOptions) -> Result<Vec<u8>, String> {
    let ctx = Ctx { doc, opts };
    let (vd, td) = directives(doc)?;
    let mut out = Vec::new();
    {
        let mut e = Emitter::new();
        e.set_output_string(&mut out);
        e.set_width(opts.width);
        e.set_indent(opts.indent);
        e.set_unicode(opts.unicode);
        let em = |e: &mut Emitter<'_>, ev: Event| e.emit(ev).map_err(|x| x.to_string());
        em(&mut e, Event::stream_start(Encoding::Utf8))?;
        em(&mut e, Event::document_start(vd, &td, false))?;
        // Iterative walk: deep trees do not grow the stack.
        let mut work = vec![Work::Node(&doc.root)];
        while let Some(w) = work.pop() {
            let n = match w {
                Work::End(true) => {
                    em(&mut e, Event::mapping_end())?;
                    continue;
                }
                Work::End(false) => {
                    em(&mut e, Event::sequence_end())?;
                    continue;
                }
                Work::Node(n) => n,
            };
            let anchor = n.anchor.as_deref();
            match &n.kind {
                NodeKind::Alias(a) => em(&mut e, Event::alias(&a.anchor))?,
                NodeKind::Scalar(s) => {
                    // As PyYAML's serializer: the tag is always passed, with flags saying
                    // whether a plain or a quoted scalar reads back with that tag unwritten.
                    let tag = effective_tag(n, s);
                    let text = ctx.text(tag, s);
                    let plain_implicit = implicit_tag(&text).unwrap_or(tags::STR) == tag;
                    let quoted_implicit = tag == tags::STR;
                    let style = ls(ctx.scalar_style(s));
                    em(
                        &mut e,
                        Event::scalar(anchor, Some(tag), &text, plain_implicit, quoted_implicit, style),
                    )?;
                }
                NodeKind::Sequence(s) => {
                    let tag = n.tag.as_deref().unwrap_or(tags::SEQ);
                    let implicit = tag == tags::SEQ;
                    let style = if ctx.flow(n, s.flow) {
                        SequenceStyle::Flow
                    } else {
                        SequenceStyle::Block
                    };
                    em(&mut e, Event::sequence_start(anchor, Some(tag), implicit, style))?;
                    work.push(Work::End(false));
                    for item in s.items.iter().rev() {
                        work.push(Work::Node(item));
                    }
                }
                NodeKind::Mapping(m) => {
                    let tag = n.tag.as_deref().unwrap_or(tags::MAP);
                    let implicit = tag == tags::MAP;
                    let style = if ctx.flow(n, m.flow) {
                        MappingStyle::Flow
                    } else {
                        MappingStyle::Block
                    };
                    em(&mut e, Event::mapping_start(anchor, Some(tag), implicit, style))?;
                    work.push(Work::End(true));
                    for (k, v) in m.entries.iter().rev() {
                        work.push(Work::Node(v));
                        work.push(Work::Node(k));
                    }
                }
            }
        }
        em(&mut e, Event::document_end(false))?;
        em(&mut e, Event::stream_end())?;
    }
    Ok(fix_non_specific_tags(doc, out))
}

/// The libyaml emitter writes the non-specific tag `!` (which Python asdf gives times in
/// history entries) as the verbatim `!<%21>` once `!` is bound to the ASDF prefix; PyYAML
/// writes a bare `!`. Rewrite it, unless some scalar's own text contains that sequence.
fn fix_non_specific_tags(doc: &Document, out: Vec<u8>) -> Vec<u8> {
    const VERBATIM: &[u8] = b"!<%21>";
    if !out.windows(VERBATIM.len()).any(|w| w == VERBATIM) {
        return out;
    }
    let mut stack = vec![&doc.root];
    while let Some(n) = stack.pop() {
        match &n.kind {
            NodeKind::Scalar(s) if s.text.contains("!<%21>") => return out,
            NodeKind::Sequence(s) => stack.extend(s.items.iter()),
            NodeKind::Mapping(m) => stack.extend(m.entries.iter().flat_map(|(k, v)| [k, v])),
            _ => {}
        }
    }
    let mut fixed = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        if out[i..].starts_with(VERBATIM) {
            fixed.push(b'!');
            i += VERBATIM.len();
        } else {
            fixed.push(out[i]);
            i += 1;
        }
    }
    fixed
}
