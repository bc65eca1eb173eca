//! From a [`Document`] to YAML text, as Python asdf writes it: PyYAML's representer and
//! serializer decisions (which tags are implicit, flow style for collections of scalars), laid
//! out as the libyaml emitter behind PyYAML's `CSafeDumper` lays them out ([`crate::writer`]).

use crate::error::Error;
use crate::node::{Document, Node, NodeKind, Scalar, ScalarStyle, Value, tags};
use crate::resolve::implicit_tag;
use crate::writer::{Out, analyze, word_char};

/// How collections choose between block and flow style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FlowPolicy {
    /// PyYAML's `default_flow_style=None`: flow for collections that hold only unstyled
    /// scalars (and for empty ones), block otherwise. What Python asdf writes.
    Python,
    /// Keep each collection's `flow` flag as parsed or set.
    Preserve,
    /// Collections read from text keep the style they were read in; those built or set in
    /// memory (no source position) follow [`FlowPolicy::Python`]. A tree read and written
    /// unchanged comes out as it was read, whichever software wrote it.
    #[default]
    Read,
}

/// Emitter settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmitOptions {
    /// Preferred line width (PyYAML: 80).
    pub width: i32,
    /// Indentation (PyYAML: 2).
    pub indent: i32,
    /// Write non-ASCII characters as they are (Python asdf: `allow_unicode=True`).
    pub unicode: bool,
    /// Block or flow collections.
    pub flow: FlowPolicy,
    /// Keep each scalar's parsed style (quotes, block scalars) instead of letting the emitter
    /// choose as PyYAML does.
    pub preserve_scalar_styles: bool,
}

impl Default for EmitOptions {
    fn default() -> Self {
        Self {
            width: 80,
            indent: 2,
            unicode: true,
            flow: FlowPolicy::Read,
            preserve_scalar_styles: false,
        }
    }
}

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
            Value::Float(f) => Cow::Owned(crate::resolve::python_float_repr(*f)),
            Value::Binary(b) => Cow::Owned(crate::resolve::base64_lines(b)),
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
        let read = n.span != crate::Span::default() && !n.span.is_filled();
        match self.opts.flow {
            FlowPolicy::Preserve => parsed,
            FlowPolicy::Read if read => parsed,
            FlowPolicy::Python | FlowPolicy::Read => match &n.kind {
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

/// Changes applied while a document is written, without copying it: nodes replaced by
/// others, entries put first in the root mapping, a `%YAML` version when the document has none.
#[derive(Debug, Default)]
pub struct Edits {
    replace: std::collections::HashMap<usize, Node>,
    prepend: Vec<(Node, Node)>,
    version: Option<(i32, i32)>,
}

impl Edits {
    /// Writes `with` where `original` (a node of the document being written) is.
    pub fn replace(&mut self, original: &Node, with: Node) {
        self.replace.insert(std::ptr::from_ref(original).addr(), with);
    }

    /// Writes `key: value` first in the root mapping.
    pub fn prepend_to_root(&mut self, key: Node, value: Node) {
        self.prepend.push((key, value));
    }

    /// The `%YAML` version written when the document has none.
    pub fn default_version(&mut self, v: (i32, i32)) {
        self.version = Some(v);
    }

    /// What `original` is to be written as, if it is replaced.
    #[must_use]
    pub fn replacement(&self, original: &Node) -> Option<&Node> {
        self.get(original)
    }

    /// Schema defaults filled in on reading a file older than 1.6.0 are not written (Python asdf
    /// fills them in memory only): each smallest subtree holding entries still marked
    /// [`crate::Span::FILLED`] (key and value as filled; a value the user replaced is written)
    /// is written as a copy without them, with the edits already made inside it carried over.
    /// Filled entries come last in their mappings, so leaving them out moves no other entry (and
    /// no alias's target).
    pub fn leave_out_filled(&mut self, doc: &Document) {
        let edits = self;
        fn filled(k: &Node, v: &Node) -> bool {
            k.span.is_filled() && v.span.is_filled()
        }
        fn holds_filled(n: &Node) -> bool {
            let mut stack = vec![n];
            while let Some(n) = stack.pop() {
                match &n.kind {
                    NodeKind::Mapping(m) => {
                        if m.entries.iter().any(|(k, v)| filled(k, v)) {
                            return true;
                        }
                        stack.extend(m.entries.iter().map(|(_, v)| v));
                    }
                    NodeKind::Sequence(s) => stack.extend(s.items.iter()),
                    _ => {}
                }
            }
            false
        }
        fn copy(n: &Node, edits: &Edits) -> Node {
            if let Some(r) = edits.replacement(n) {
                return r.clone();
            }
            let kind = match &n.kind {
                NodeKind::Mapping(m) => NodeKind::Mapping(crate::Mapping {
                    entries: m
                        .entries
                        .iter()
                        .filter(|(k, v)| !filled(k, v))
                        .map(|(k, v)| (copy(k, edits), copy(v, edits)))
                        .collect(),
                    flow: m.flow,
                }),
                NodeKind::Sequence(s) => NodeKind::Sequence(crate::Sequence {
                    items: s.items.iter().map(|i| copy(i, edits)).collect(),
                    flow: s.flow,
                }),
                other => other.clone(),
            };
            Node {
                tag: n.tag.clone(),
                anchor: n.anchor.clone(),
                span: n.span,
                kind,
            }
        }
        if !holds_filled(&doc.root) {
            return;
        }
        let mut copies = Vec::new();
        let mut stack: Vec<&Node> = vec![&doc.root];
        while let Some(n) = stack.pop() {
            let direct = n
                .as_mapping()
                .is_some_and(|m| m.entries.iter().any(|(k, v)| filled(k, v)));
            // The root is never copied (the library entry is an edit of its own): its filled
            // entries, if any, are written.
            if direct && !std::ptr::eq(n, &doc.root) {
                copies.push((n, copy(n, edits)));
                continue;
            }
            match &n.kind {
                NodeKind::Mapping(m) => stack.extend(m.entries.iter().map(|(_, v)| v).filter(|v| holds_filled(v))),
                NodeKind::Sequence(s) => stack.extend(s.items.iter().filter(|v| holds_filled(v))),
                _ => {}
            }
        }
        for (n, c) in copies {
            edits.replace(n, c);
        }
    }

    fn get(&self, n: &Node) -> Option<&Node> {
        if self.replace.is_empty() {
            return None;
        }
        self.replace.get(&std::ptr::from_ref(n).addr())
    }
}

/// Writes `doc` as YAML text: directives, `---`, the tree, `...`.
///
/// # Errors
/// [`Error::Emit`] when the emitter rejects the tree (an anchor or tag it cannot write).
pub fn emit(doc: &Document, opts: &EmitOptions) -> Result<Vec<u8>, Error> {
    emit_edited(doc, opts, &Edits::default())
}

/// As [`emit`], with `edits` applied as the document is written (the document itself is not
/// changed or copied).
///
/// # Errors
/// As [`emit`].
pub fn emit_edited(doc: &Document, opts: &EmitOptions, edits: &Edits) -> Result<Vec<u8>, Error> {
    let best_indent = usize::try_from(opts.indent)
        .ok()
        .filter(|i| (2..10).contains(i))
        .unwrap_or(2);
    let width = match usize::try_from(opts.width) {
        Err(_) => usize::MAX,
        Ok(w) if w <= 2 * best_indent => 80,
        Ok(w) => w,
    };
    let mut w = Walker {
        ctx: Ctx { doc, opts },
        edits,
        out: Out::new(best_indent, width, opts.unicode),
        directives: Vec::new(),
        written: std::collections::HashMap::new(),
        open_nodes: Vec::new(),
    };
    w.out.buf.reserve(4096);
    w.document()?;
    Ok(w.out.buf)
}

/// The position a node is written in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Root,
    Item,
    /// A mapping value.
    InMapping,
    /// A mapping key written with `?`.
    ComplexKey,
    /// A mapping key written without `?`.
    SimpleKey,
}

/// An open collection and how far it has been written.
enum Frame<'a> {
    Seq {
        items: &'a [Node],
        next: usize,
        flow: bool,
    },
    Map {
        /// Entries written first (edits to the root), then the mapping's own.
        first: &'a [(Node, Node)],
        entries: &'a [(Node, Node)],
        next: usize,
        flow: bool,
        /// The value still to write after its key, and whether the key was simple.
        value: Option<(&'a Node, bool)>,
    },
}

struct Walker<'a> {
    ctx: Ctx<'a>,
    edits: &'a Edits,
    out: Out,
    /// `%TAG` handles and prefixes in force, the document's first, then `!` and `!!`.
    directives: Vec<(&'a str, &'a str)>,
    /// Anchors written so far: name -> the node last written with it. An alias met before
    /// its anchored node was written (a mapping whose duplicate key moved a value, an edited
    /// tree) writes that node there, with its anchor; the node itself, met later, is then an
    /// alias. So the text never names an anchor before defining it.
    written: std::collections::HashMap<&'a str, usize>,
    /// The collections being written (their frames are open): an alias to one of them is
    /// always written as an alias, never in full (that would not end).
    open_nodes: Vec<usize>,
}

/// How a scalar is written: its text, the tag written before it (handle, suffix), the style.
struct ScalarPlan<'a> {
    text: std::borrow::Cow<'a, str>,
    tag: Option<(&'a str, &'a str)>,
    plain_implicit: bool,
    quoted_implicit: bool,
    allowed: crate::writer::Allowed,
}

fn check_anchor(name: &str, alias: bool) -> Result<(), Error> {
    if name.is_empty() {
        return Err(Error::Emit(if alias {
            "alias value must not be empty"
        } else {
            "anchor value must not be empty"
        }));
    }
    if !name.chars().all(word_char) {
        return Err(Error::Emit(if alias {
            "alias value must contain alphanumerical characters only"
        } else {
            "anchor value must contain alphanumerical characters only"
        }));
    }
    Ok(())
}

impl<'a> Walker<'a> {
    fn document(&mut self) -> Result<(), Error> {
        let doc = self.ctx.doc;
        for (h, p) in &doc.tag_directives {
            let inner = h
                .strip_prefix('!')
                .and_then(|h| h.strip_suffix('!').or(if h.is_empty() { Some("") } else { None }));
            match inner {
                None => return Err(Error::Emit("tag handle must start and end with '!'")),
                Some(i) if !i.chars().all(word_char) => {
                    return Err(Error::Emit("tag handle must contain alphanumerical characters only"));
                }
                _ => {}
            }
            if p.is_empty() {
                return Err(Error::Emit("tag prefix must not be empty"));
            }
            if self.directives.iter().any(|(dh, _)| dh == h) {
                return Err(Error::Emit("duplicate %TAG directive"));
            }
            self.directives.push((h, p));
        }
        for (h, p) in [("!", "!"), ("!!", tags::YAML)] {
            if !self.directives.iter().any(|(dh, _)| *dh == h) {
                self.directives.push((h, p));
            }
        }
        let out = &mut self.out;
        if let Some((major, minor)) = doc.version.or(self.edits.version) {
            if major != 1 || !(minor == 1 || minor == 2) {
                return Err(Error::Emit("incompatible %YAML directive"));
            }
            out.indicator("%YAML", true, false, false);
            out.indicator(if minor == 1 { "1.1" } else { "1.2" }, true, false, false);
            out.write_indent();
        }
        for (h, p) in &doc.tag_directives {
            out.indicator("%TAG", true, false, false);
            out.tag_handle(h);
            out.tag_content(p, true);
            out.write_indent();
        }
        out.write_indent();
        out.indicator("---", true, false, false);
        self.tree()?;
        let out = &mut self.out;
        out.write_indent();
        out.indicator("...", true, false, false);
        out.write_indent();
        Ok(())
    }

    /// Writes the root and everything under it, without recursion.
    fn tree(&mut self) -> Result<(), Error> {
        let mut stack: Vec<Frame<'a>> = Vec::new();
        if let Some(f) = self.node(&self.ctx.doc.root, Place::Root)? {
            stack.push(f);
        }
        while let Some(top) = stack.last_mut() {
            let (node, place) = match top {
                Frame::Seq { items, next, flow } => {
                    let out = &mut self.out;
                    let Some(item) = items.get(*next) else {
                        if *flow {
                            out.flow_level -= 1;
                            out.pop_indent();
                            out.indicator("]", false, false, false);
                        } else {
                            out.pop_indent();
                        }
                        stack.pop();
                        self.open_nodes.pop();
                        continue;
                    };
                    if *flow {
                        if *next > 0 {
                            out.indicator(",", false, false, false);
                        }
                        if out.column > out.width {
                            out.write_indent();
                        }
                    } else {
                        out.write_indent();
                        out.indicator("-", true, false, true);
                    }
                    *next += 1;
                    (item, Place::Item)
                }
                Frame::Map {
                    first,
                    entries,
                    next,
                    flow,
                    value,
                } => {
                    if let Some((v, simple)) = value.take() {
                        let out = &mut self.out;
                        if simple {
                            out.indicator(":", false, false, false);
                        } else if *flow {
                            if out.column > out.width {
                                out.write_indent();
                            }
                            out.indicator(":", true, false, false);
                        } else {
                            out.write_indent();
                            out.indicator(":", true, false, true);
                        }
                        (v, Place::InMapping)
                    } else {
                        let entry = if *next < first.len() {
                            first.get(*next)
                        } else {
                            entries.get(*next - first.len())
                        };
                        let Some((k, v)) = entry else {
                            let out = &mut self.out;
                            if *flow {
                                out.flow_level -= 1;
                                out.pop_indent();
                                out.indicator("}", false, false, false);
                            } else {
                                out.pop_indent();
                            }
                            stack.pop();
                            self.open_nodes.pop();
                            continue;
                        };
                        let flow = *flow;
                        let n = *next;
                        *next += 1;
                        let k = self.edits.get(k).unwrap_or(k);
                        let simple = self.simple_key(k)?;
                        *value = Some((v, simple));
                        let out = &mut self.out;
                        if flow {
                            if n > 0 {
                                out.indicator(",", false, false, false);
                            }
                            if out.column > out.width {
                                out.write_indent();
                            }
                        } else {
                            out.write_indent();
                        }
                        if simple {
                            (k, Place::SimpleKey)
                        } else {
                            out.indicator("?", true, false, !flow);
                            (k, Place::ComplexKey)
                        }
                    }
                }
            };
            if let Some(f) = self.node(node, place)? {
                stack.push(f);
            }
        }
        Ok(())
    }

    /// The handle and suffix a tag is written with.
    fn split_tag(&self, tag: &'a str) -> Result<(&'a str, &'a str), Error> {
        if tag.is_empty() {
            return Err(Error::Emit("tag value must not be empty"));
        }
        // The non-specific tag: a bare `!`, as PyYAML writes it.
        if tag == "!" {
            return Ok(("!", ""));
        }
        for (h, p) in &self.directives {
            if p.len() < tag.len()
                && let Some(rest) = tag.strip_prefix(p)
            {
                return Ok((h, rest));
            }
        }
        Ok(("", tag))
    }

    fn write_tag(&mut self, tag: Option<(&str, &str)>) {
        let Some((handle, suffix)) = tag else {
            return;
        };
        let out = &mut self.out;
        if handle.is_empty() {
            if suffix.is_empty() {
                return;
            }
            out.indicator("!<", true, false, false);
            out.tag_content(suffix, false);
            out.indicator(">", false, false, false);
        } else {
            out.tag_handle(handle);
            if !suffix.is_empty() {
                out.tag_suffix(suffix);
            }
        }
    }

    fn plan(&self, n: &'a Node, s: &'a Scalar) -> Result<ScalarPlan<'a>, Error> {
        // As PyYAML's serializer: the tag goes with flags saying whether a plain or a quoted
        // scalar reads back with that tag unwritten.
        let tag = effective_tag(n, s);
        let text = self.ctx.text(tag, s);
        let plain_implicit = implicit_tag(&text).unwrap_or(tags::STR) == tag;
        let quoted_implicit = tag == tags::STR;
        let written = if plain_implicit || quoted_implicit {
            None
        } else {
            Some(self.split_tag(tag)?)
        };
        let allowed = analyze(&text, self.out.unicode);
        Ok(ScalarPlan {
            text,
            tag: written,
            plain_implicit,
            quoted_implicit,
            allowed,
        })
    }

    /// The anchored node alias `n` stands for, with its anchor; `None` when it does not
    /// resolve to an anchored node (then the alias is written as it is).
    fn alias_target(&self, n: &'a Node) -> Option<(&'a Node, Option<&'a str>)> {
        let target = self.ctx.doc.resolve(n);
        let target = self.edits.get(target).unwrap_or(target);
        if std::ptr::eq(target, n) || matches!(target.kind, NodeKind::Alias(_)) {
            return None;
        }
        Some((target, target.anchor.as_deref()))
    }

    /// Writes `*name`.
    fn alias(&mut self, name: &str, simple_key: bool) -> Result<Option<Frame<'a>>, Error> {
        check_anchor(name, true)?;
        self.out.anchor(true, name);
        if simple_key {
            self.out.space_after_alias();
        }
        Ok(None)
    }

    /// Whether a key can be written without `?`: one line, at most 128 bytes with its anchor
    /// and tag, or an empty collection, or an alias.
    fn simple_key(&self, k: &'a Node) -> Result<bool, Error> {
        let anchor = k.anchor.as_deref().map_or(0, str::len);
        let tag_len = |t: Option<(&str, &str)>| t.map_or(0, |(h, s)| h.len() + s.len());
        let len = match &k.kind {
            NodeKind::Alias(a) => match self.alias_target(k) {
                Some((target, Some(name))) if self.written.get(name) == Some(&std::ptr::from_ref(target).addr()) => {
                    name.len()
                }
                // Written in full there (see `node`).
                Some((target, _)) if !self.open_nodes.contains(&std::ptr::from_ref(target).addr()) => {
                    return self.simple_key(target);
                }
                Some((_, Some(name))) => name.len(),
                _ => a.anchor.len(),
            },
            NodeKind::Scalar(s) => {
                let p = self.plan(k, s)?;
                if p.allowed.multiline {
                    return Ok(false);
                }
                anchor + tag_len(p.tag) + p.text.len()
            }
            NodeKind::Sequence(q) if q.items.is_empty() => anchor + tag_len(self.collection_tag(k, tags::SEQ)?),
            NodeKind::Mapping(m) if m.entries.is_empty() => anchor + tag_len(self.collection_tag(k, tags::MAP)?),
            _ => return Ok(false),
        };
        Ok(len <= 128)
    }

    fn collection_tag(&self, n: &'a Node, default: &str) -> Result<Option<(&'a str, &'a str)>, Error> {
        match n.tag.as_deref() {
            Some(t) if t != default => Ok(Some(self.split_tag(t)?)),
            _ => Ok(None),
        }
    }

    /// Writes a node: all of a scalar or an alias; a collection's start, returning its frame.
    fn node(&mut self, n: &'a Node, place: Place) -> Result<Option<Frame<'a>>, Error> {
        let n = self.edits.get(n).unwrap_or(n);
        let simple_key = place == Place::SimpleKey;
        // An alias is never written as a mapping key: the ASDF subset reads keys as scalars
        // only. A scalar key that an earlier alias already wrote (a duplicate key moved a
        // value ahead of it) is written again in full, without its anchor; Python reads the
        // same key either way.
        let scalar_key = matches!(place, Place::SimpleKey | Place::ComplexKey) && matches!(n.kind, NodeKind::Scalar(_));
        let mut anchor = n.anchor.as_deref();
        if let Some(a) = anchor {
            check_anchor(a, false)?;
            if self.written.get(a) == Some(&std::ptr::from_ref(n).addr()) {
                if !scalar_key {
                    // Written already, where an alias to it came first.
                    return self.alias(a, simple_key);
                }
                anchor = None;
            }
        }
        match &n.kind {
            NodeKind::Alias(a) => match self.alias_target(n) {
                // A key standing for a scalar: the scalar itself (see above).
                Some((target, _))
                    if matches!(place, Place::SimpleKey | Place::ComplexKey)
                        && matches!(target.kind, NodeKind::Scalar(_))
                        && !self.open_nodes.contains(&std::ptr::from_ref(target).addr()) =>
                {
                    self.node(target, place)
                }
                // The node it stands for, written already: an alias by that node's anchor
                // (which, after edits or a duplicate key, may not be the name parsed).
                Some((target, Some(name))) if self.written.get(name) == Some(&std::ptr::from_ref(target).addr()) => {
                    self.alias(name, simple_key)
                }
                // Not written yet (or, after a duplicate key replaced it, a node without an
                // anchor): written here in full, with its anchor if it has one.
                Some((target, _)) if !self.open_nodes.contains(&std::ptr::from_ref(target).addr()) => {
                    self.node(target, place)
                }
                Some((_, Some(name))) => self.alias(name, simple_key),
                // Orphaned: its node was removed from the tree. Writing `*name` would make
                // text that does not parse, or that means another node.
                _ => Err(Error::OrphanAlias(a.anchor.to_string())),
            },
            NodeKind::Scalar(s) => {
                let p = self.plan(n, s)?;
                let flow_level = self.out.flow_level;
                let mut style = match self.ctx.scalar_style(s) {
                    ScalarStyle::Any => ScalarStyle::Plain,
                    other => other,
                };
                if simple_key && p.allowed.multiline {
                    style = ScalarStyle::DoubleQuoted;
                }
                let no_tag = p.tag.is_none();
                if style == ScalarStyle::Plain
                    && ((flow_level > 0 && !p.allowed.flow_plain)
                        || (flow_level == 0 && !p.allowed.block_plain)
                        || (p.text.is_empty() && (flow_level > 0 || simple_key))
                        || (no_tag && !p.plain_implicit))
                {
                    style = ScalarStyle::SingleQuoted;
                }
                if style == ScalarStyle::SingleQuoted && !p.allowed.single_quoted {
                    style = ScalarStyle::DoubleQuoted;
                }
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded)
                    && (!p.allowed.block || flow_level > 0 || simple_key)
                {
                    style = ScalarStyle::DoubleQuoted;
                }
                let tag = if no_tag && !p.quoted_implicit && style != ScalarStyle::Plain {
                    // C libyaml (PyYAML's CSafeDumper) writes the non-specific `!` here, which
                    // reads back as a string: a timestamp in a flow collection would lose its
                    // type. The value's own tag is written instead (`!!timestamp '...'`), as
                    // PyYAML's pure-Python emitter does; strings are never in this case.
                    match effective_tag(n, s) {
                        t if t.starts_with(tags::YAML) && t != tags::STR => Some(self.split_tag(t)?),
                        _ => Some(("!", "")),
                    }
                } else {
                    p.tag
                };
                if let Some(a) = anchor {
                    self.out.anchor(false, a);
                    self.written.insert(a, std::ptr::from_ref(n).addr());
                }
                self.write_tag(tag);
                self.out.push_indent(true, false);
                self.out.scalar(&p.text, style, !simple_key);
                self.out.pop_indent();
                Ok(None)
            }
            NodeKind::Sequence(q) => {
                let tag = self.collection_tag(n, tags::SEQ)?;
                if let Some(a) = anchor {
                    self.out.anchor(false, a);
                    self.written.insert(a, std::ptr::from_ref(n).addr());
                }
                self.write_tag(tag);
                let flow = self.out.flow_level > 0 || self.ctx.flow(n, q.flow) || q.items.is_empty();
                self.open(flow, "[", place);
                self.open_nodes.push(std::ptr::from_ref(n).addr());
                Ok(Some(Frame::Seq {
                    items: &q.items,
                    next: 0,
                    flow,
                }))
            }
            NodeKind::Mapping(m) => {
                let tag = self.collection_tag(n, tags::MAP)?;
                if let Some(a) = anchor {
                    self.out.anchor(false, a);
                    self.written.insert(a, std::ptr::from_ref(n).addr());
                }
                self.write_tag(tag);
                let first: &'a [(Node, Node)] = if std::ptr::eq(n, &self.ctx.doc.root) {
                    &self.edits.prepend
                } else {
                    &[]
                };
                let flow =
                    self.out.flow_level > 0 || self.ctx.flow(n, m.flow) || (m.entries.is_empty() && first.is_empty());
                self.open(flow, "{", place);
                self.open_nodes.push(std::ptr::from_ref(n).addr());
                Ok(Some(Frame::Map {
                    first,
                    entries: &m.entries,
                    next: 0,
                    flow,
                    value: None,
                }))
            }
        }
    }

    fn open(&mut self, flow: bool, bracket: &str, place: Place) {
        let out = &mut self.out;
        if flow {
            out.indicator(bracket, true, true, false);
            out.push_indent(true, false);
            out.flow_level += 1;
        } else if bracket == "[" {
            // A block sequence as a mapping value starts at the key's column.
            let indentless = matches!(place, Place::InMapping | Place::ComplexKey | Place::SimpleKey) && !out.indention;
            out.push_indent(false, indentless);
        } else {
            out.push_indent(false, false);
        }
    }
}
