//! Tokens to events: the YAML grammar as a state machine (no recursion, so nesting depth costs
//! heap, not stack), with `%TAG` handles expanded to full tags.

use std::borrow::Cow;

use crate::error::Error;
use crate::node::ScalarStyle;
use crate::scanner::{Mark, Scanner, Tok, Token, syntax};

/// One parser event, borrowing from the text where it can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ev<'a> {
    StreamStart,
    StreamEnd,
    DocStart {
        explicit: bool,
        version: Option<(u8, u8)>,
        tags: Vec<(String, String)>,
    },
    DocEnd {
        explicit: bool,
    },
    Alias(&'a str),
    Scalar {
        anchor: Option<&'a str>,
        tag: Option<String>,
        value: Cow<'a, str>,
        style: ScalarStyle,
    },
    SeqStart {
        anchor: Option<&'a str>,
        tag: Option<String>,
        flow: bool,
    },
    SeqEnd,
    MapStart {
        anchor: Option<&'a str>,
        tag: Option<String>,
        flow: bool,
    },
    MapEnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    StreamStart,
    /// A document may start here; `bare` when it may start without `---`.
    DocStart {
        bare: bool,
    },
    DocContent,
    DocEnd,
    BlockNode,
    BlockSeqEntry,
    IndentlessSeqEntry,
    BlockMapKey,
    BlockMapValue,
    FlowSeqEntry {
        first: bool,
    },
    FlowSeqPairKey,
    FlowSeqPairValue,
    FlowSeqPairEnd,
    FlowMapKey {
        first: bool,
    },
    FlowMapValue,
    FlowMapEmptyValue,
    End,
}

pub(crate) struct Parser<'a> {
    s: Scanner<'a>,
    state: St,
    states: Vec<St>,
    /// `%TAG` handles of the current document.
    tags: Vec<(&'a str, String)>,
}

const YAML_PREFIX: &str = "tag:yaml.org,2002:";

impl<'a> Parser<'a> {
    pub fn new(text: &'a [u8]) -> Result<Self, Error> {
        Ok(Parser {
            s: Scanner::new(text)?,
            state: St::StreamStart,
            states: Vec::new(),
            tags: Vec::new(),
        })
    }

    fn peek(&mut self) -> Result<&Token<'a>, Error> {
        // The scanner always ends with StreamEnd; past it the grammar is in `End`.
        match self.s.peek()? {
            Some(t) => Ok(t),
            None => Err(Error::Syntax {
                span: Default::default(),
                problem: "unexpected end of the token stream",
                context: None,
            }),
        }
    }

    fn peek_tok(&mut self) -> Result<(K, Mark), Error> {
        let t = self.peek()?;
        Ok((K::of(&t.tok), t.start))
    }

    /// Takes the next token (which `peek_tok` has shown exists).
    fn take(&mut self) -> Result<Tok<'a>, Error> {
        match self.s.pop_peeked() {
            Some(t) => Ok(t.tok),
            None => Err(Error::Syntax {
                span: Default::default(),
                problem: "unexpected end of the token stream",
                context: None,
            }),
        }
    }

    /// Drops the token `peek_tok` has shown.
    fn skip(&mut self) -> Result<(), Error> {
        self.s.pop_peeked();
        Ok(())
    }

    fn pop(&mut self) {
        self.state = self.states.pop().unwrap_or(St::End);
    }

    /// The next event and where it starts; `None` after the stream end.
    pub fn next(&mut self) -> Result<Option<(Ev<'a>, Mark)>, Error> {
        let ev = match self.state {
            St::End => return Ok(None),
            St::StreamStart => {
                let t = self.s.next_token()?;
                let at = t.map(|t| t.start).unwrap_or_default();
                self.state = St::DocStart { bare: true };
                (Ev::StreamStart, at)
            }
            St::DocStart { bare } => self.document_start(bare)?,
            St::DocContent => {
                let (t, at) = self.peek_tok()?;
                if matches!(t, K::Version | K::TagDirective | K::DocStart | K::DocEnd | K::StreamEnd) {
                    self.pop();
                    (empty(), at)
                } else {
                    self.node(true, false)?
                }
            }
            St::DocEnd => {
                let (t, at) = self.peek_tok()?;
                let explicit = t == K::DocEnd;
                if explicit {
                    self.skip()?;
                } else if !matches!(t, K::DocStart | K::StreamEnd | K::Version | K::TagDirective) {
                    return Err(syntax(
                        at,
                        "did not find expected <document start>",
                        Some("after the end of a document"),
                    ));
                } else if matches!(t, K::Version | K::TagDirective) {
                    return Err(syntax(
                        at,
                        "a directive must follow a document end marker ('...')",
                        Some("after the end of a document"),
                    ));
                }
                self.tags.clear();
                self.state = St::DocStart { bare: explicit };
                (Ev::DocEnd { explicit }, at)
            }
            St::BlockNode => self.node(true, false)?,
            St::BlockSeqEntry => {
                let (t, at) = self.peek_tok()?;
                match t {
                    K::BlockEntry => {
                        self.skip()?;
                        let (t, at2) = self.peek_tok()?;
                        if matches!(t, K::BlockEntry | K::BlockEnd) {
                            (empty(), at2)
                        } else {
                            self.states.push(St::BlockSeqEntry);
                            self.node(true, false)?
                        }
                    }
                    K::BlockEnd => {
                        self.skip()?;
                        self.pop();
                        (Ev::SeqEnd, at)
                    }
                    _ => {
                        return Err(syntax(
                            at,
                            "did not find expected '-' indicator",
                            Some("while parsing a block collection"),
                        ));
                    }
                }
            }
            St::IndentlessSeqEntry => {
                let (t, at) = self.peek_tok()?;
                if t == K::BlockEntry {
                    self.skip()?;
                    let (t, at2) = self.peek_tok()?;
                    if matches!(t, K::BlockEntry | K::Key | K::Value | K::BlockEnd) {
                        (empty(), at2)
                    } else {
                        self.states.push(St::IndentlessSeqEntry);
                        self.node(true, false)?
                    }
                } else {
                    self.pop();
                    (Ev::SeqEnd, at)
                }
            }
            St::BlockMapKey => {
                let (t, at) = self.peek_tok()?;
                match t {
                    K::Key => {
                        self.skip()?;
                        let (t, at2) = self.peek_tok()?;
                        if matches!(t, K::Key | K::Value | K::BlockEnd) {
                            self.state = St::BlockMapValue;
                            (empty(), at2)
                        } else {
                            self.states.push(St::BlockMapValue);
                            self.node(true, true)?
                        }
                    }
                    K::Value => {
                        self.state = St::BlockMapValue;
                        (empty(), at)
                    }
                    K::BlockEnd => {
                        self.skip()?;
                        self.pop();
                        (Ev::MapEnd, at)
                    }
                    _ => {
                        return Err(syntax(
                            at,
                            "did not find expected key",
                            Some("while parsing a block mapping"),
                        ));
                    }
                }
            }
            St::BlockMapValue => {
                let (t, at) = self.peek_tok()?;
                if t == K::Value {
                    self.skip()?;
                    let (t, at2) = self.peek_tok()?;
                    if matches!(t, K::Key | K::Value | K::BlockEnd) {
                        self.state = St::BlockMapKey;
                        (empty(), at2)
                    } else {
                        self.states.push(St::BlockMapKey);
                        self.node(true, true)?
                    }
                } else {
                    self.state = St::BlockMapKey;
                    (empty(), at)
                }
            }
            St::FlowSeqEntry { first } => {
                let (mut t, mut at) = self.peek_tok()?;
                if t != K::FlowSeqEnd {
                    if !first {
                        if t == K::FlowEntry {
                            self.skip()?;
                            (t, at) = self.peek_tok()?;
                        } else {
                            return Err(syntax(
                                at,
                                "did not find expected ',' or ']'",
                                Some("while parsing a flow sequence"),
                            ));
                        }
                    }
                    match t {
                        K::Key | K::Value => {
                            if t == K::Key {
                                self.skip()?;
                            }
                            self.state = St::FlowSeqPairKey;
                            return Ok(Some((
                                Ev::MapStart {
                                    anchor: None,
                                    tag: None,
                                    flow: true,
                                },
                                at,
                            )));
                        }
                        K::FlowSeqEnd => {}
                        _ => {
                            self.states.push(St::FlowSeqEntry { first: false });
                            return self.node(false, false).map(Some);
                        }
                    }
                }
                self.skip()?;
                self.pop();
                (Ev::SeqEnd, at)
            }
            St::FlowSeqPairKey => {
                let (t, at) = self.peek_tok()?;
                if matches!(t, K::Value | K::FlowEntry | K::FlowSeqEnd) {
                    self.state = St::FlowSeqPairValue;
                    (empty(), at)
                } else {
                    self.states.push(St::FlowSeqPairValue);
                    self.node(false, false)?
                }
            }
            St::FlowSeqPairValue => {
                let (t, at) = self.peek_tok()?;
                if t == K::Value {
                    self.skip()?;
                    let (t, at2) = self.peek_tok()?;
                    if !matches!(t, K::FlowEntry | K::FlowSeqEnd) {
                        self.states.push(St::FlowSeqPairEnd);
                        return self.node(false, false).map(Some);
                    }
                    self.state = St::FlowSeqPairEnd;
                    (empty(), at2)
                } else {
                    self.state = St::FlowSeqPairEnd;
                    (empty(), at)
                }
            }
            St::FlowSeqPairEnd => {
                let (_, at) = self.peek_tok()?;
                self.state = St::FlowSeqEntry { first: false };
                (Ev::MapEnd, at)
            }
            St::FlowMapKey { first } => {
                let (mut t, mut at) = self.peek_tok()?;
                if t != K::FlowMapEnd {
                    if !first {
                        if t == K::FlowEntry {
                            self.skip()?;
                            (t, at) = self.peek_tok()?;
                        } else {
                            return Err(syntax(
                                at,
                                "did not find expected ',' or '}'",
                                Some("while parsing a flow mapping"),
                            ));
                        }
                    }
                    match t {
                        K::Key => {
                            self.skip()?;
                            let (t, at2) = self.peek_tok()?;
                            if matches!(t, K::Value | K::FlowEntry | K::FlowMapEnd) {
                                self.state = St::FlowMapValue;
                                return Ok(Some((empty(), at2)));
                            }
                            self.states.push(St::FlowMapValue);
                            return self.node(false, false).map(Some);
                        }
                        K::Value => {
                            self.state = St::FlowMapValue;
                            return Ok(Some((empty(), at)));
                        }
                        K::FlowMapEnd => {}
                        _ => {
                            self.states.push(St::FlowMapEmptyValue);
                            return self.node(false, false).map(Some);
                        }
                    }
                }
                self.skip()?;
                self.pop();
                (Ev::MapEnd, at)
            }
            St::FlowMapValue => {
                let (t, at) = self.peek_tok()?;
                if t == K::Value {
                    self.skip()?;
                    let (t, at2) = self.peek_tok()?;
                    if !matches!(t, K::FlowEntry | K::FlowMapEnd) {
                        self.states.push(St::FlowMapKey { first: false });
                        return self.node(false, false).map(Some);
                    }
                    self.state = St::FlowMapKey { first: false };
                    (empty(), at2)
                } else {
                    self.state = St::FlowMapKey { first: false };
                    (empty(), at)
                }
            }
            St::FlowMapEmptyValue => {
                let (_, at) = self.peek_tok()?;
                self.state = St::FlowMapKey { first: false };
                (empty(), at)
            }
        };
        Ok(Some(ev))
    }

    fn document_start(&mut self, bare: bool) -> Result<(Ev<'a>, Mark), Error> {
        // Extra `...` lines between documents.
        let (mut t, mut at) = self.peek_tok()?;
        let mut bare = bare;
        while t == K::DocEnd {
            self.skip()?;
            bare = true;
            (t, at) = self.peek_tok()?;
        }
        if t == K::StreamEnd {
            self.skip()?;
            self.state = St::End;
            return Ok((Ev::StreamEnd, at));
        }
        if bare && !matches!(t, K::Version | K::TagDirective | K::DocStart) {
            self.tags.clear();
            self.states.push(St::DocEnd);
            self.state = St::BlockNode;
            return Ok((
                Ev::DocStart {
                    explicit: false,
                    version: None,
                    tags: Vec::new(),
                },
                at,
            ));
        }
        if !bare && matches!(t, K::Version | K::TagDirective) {
            return Err(syntax(
                at,
                "a directive must follow a document end marker ('...')",
                Some("while parsing directives"),
            ));
        }
        let mut version = None;
        let mut user = Vec::new();
        self.tags.clear();
        loop {
            let (t, at) = self.peek_tok()?;
            if !matches!(t, K::Version | K::TagDirective) {
                break;
            }
            match self.take()? {
                Tok::Version(ma, mi) => {
                    if version.is_some() {
                        return Err(syntax(at, "found duplicate %YAML directive", None));
                    }
                    if ma != 1 {
                        return Err(syntax(at, "found incompatible YAML document", None));
                    }
                    version = Some((ma, mi));
                }
                Tok::TagDirective(h, p) => {
                    if self.tags.iter().any(|(x, _)| *x == h) {
                        return Err(syntax(at, "found duplicate %TAG directive", None));
                    }
                    user.push((h.to_owned(), p.clone().into_owned()));
                    self.tags.push((h, p.into_owned()));
                }
                _ => {}
            }
        }
        let (t, at) = self.peek_tok()?;
        if t != K::DocStart {
            return Err(syntax(
                at,
                "did not find expected <document start>",
                Some("while parsing a document"),
            ));
        }
        self.skip()?;
        self.states.push(St::DocEnd);
        self.state = St::DocContent;
        Ok((
            Ev::DocStart {
                explicit: true,
                version,
                tags: user,
            },
            at,
        ))
    }

    fn resolve_tag(&self, handle: &str, suffix: &str, at: Mark) -> Result<String, Error> {
        if handle.is_empty() {
            return Ok(suffix.to_owned());
        }
        if handle == "!" && suffix.is_empty() {
            // The non-specific tag, whatever `!` is bound to.
            return Ok("!".to_owned());
        }
        if let Some((_, p)) = self.tags.iter().find(|(h, _)| *h == handle) {
            return Ok(format!("{p}{suffix}"));
        }
        match handle {
            "!" => Ok(format!("!{suffix}")),
            "!!" => Ok(format!("{YAML_PREFIX}{suffix}")),
            _ => Err(syntax(at, "found undefined tag handle", Some("while parsing a node"))),
        }
    }

    fn node(&mut self, block: bool, indentless: bool) -> Result<(Ev<'a>, Mark), Error> {
        let ctx = Some(if block {
            "while parsing a block node"
        } else {
            "while parsing a flow node"
        });
        let (t, start) = self.peek_tok()?;
        if t == K::Alias {
            let name = match self.take()? {
                Tok::Alias(name) => name,
                _ => "",
            };
            self.pop();
            return Ok((Ev::Alias(name), start));
        }
        let mut anchor = None;
        let mut tag = None;
        loop {
            let (t, at) = self.peek_tok()?;
            match t {
                K::Anchor if anchor.is_some() => {
                    return Err(syntax(at, "found a second anchor on one node", ctx));
                }
                K::Tag if tag.is_some() => {
                    return Err(syntax(at, "found a second tag on one node", ctx));
                }
                K::Anchor | K::Tag => match self.take()? {
                    Tok::Anchor(a) => anchor = Some(a),
                    Tok::Tag(h, s) => tag = Some(self.resolve_tag(h, &s, at)?),
                    _ => {}
                },
                _ => break,
            }
        }
        let (t, at) = self.peek_tok()?;
        let props = anchor.is_some() || tag.is_some();
        let ev = match t {
            K::BlockEntry if indentless => {
                self.state = St::IndentlessSeqEntry;
                Ev::SeqStart {
                    anchor,
                    tag,
                    flow: false,
                }
            }
            K::Scalar => {
                let (value, style) = match self.take()? {
                    Tok::Scalar(v, st) => (v, st),
                    _ => (Cow::Borrowed(""), ScalarStyle::Plain),
                };
                self.pop();
                Ev::Scalar {
                    anchor,
                    tag,
                    value,
                    style,
                }
            }
            K::FlowSeqStart => {
                self.skip()?;
                self.state = St::FlowSeqEntry { first: true };
                Ev::SeqStart {
                    anchor,
                    tag,
                    flow: true,
                }
            }
            K::FlowMapStart => {
                self.skip()?;
                self.state = St::FlowMapKey { first: true };
                Ev::MapStart {
                    anchor,
                    tag,
                    flow: true,
                }
            }
            K::BlockSeqStart if block => {
                self.skip()?;
                self.state = St::BlockSeqEntry;
                Ev::SeqStart {
                    anchor,
                    tag,
                    flow: false,
                }
            }
            K::BlockMapStart if block => {
                self.skip()?;
                self.state = St::BlockMapKey;
                Ev::MapStart {
                    anchor,
                    tag,
                    flow: false,
                }
            }
            _ if props => {
                self.pop();
                Ev::Scalar {
                    anchor,
                    tag,
                    value: Cow::Borrowed(""),
                    style: ScalarStyle::Plain,
                }
            }
            _ => return Err(syntax(at, "did not find expected node content", ctx)),
        };
        Ok((ev, if props { start } else { at }))
    }
}

/// A token's kind, without its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    StreamStart,
    StreamEnd,
    Version,
    TagDirective,
    DocStart,
    DocEnd,
    BlockSeqStart,
    BlockMapStart,
    BlockEnd,
    FlowSeqStart,
    FlowSeqEnd,
    FlowMapStart,
    FlowMapEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias,
    Anchor,
    Tag,
    Scalar,
}

impl K {
    fn of(t: &Tok<'_>) -> K {
        match t {
            Tok::StreamStart => K::StreamStart,
            Tok::StreamEnd => K::StreamEnd,
            Tok::Version(..) => K::Version,
            Tok::TagDirective(..) => K::TagDirective,
            Tok::DocStart => K::DocStart,
            Tok::DocEnd => K::DocEnd,
            Tok::BlockSeqStart => K::BlockSeqStart,
            Tok::BlockMapStart => K::BlockMapStart,
            Tok::BlockEnd => K::BlockEnd,
            Tok::FlowSeqStart => K::FlowSeqStart,
            Tok::FlowSeqEnd => K::FlowSeqEnd,
            Tok::FlowMapStart => K::FlowMapStart,
            Tok::FlowMapEnd => K::FlowMapEnd,
            Tok::BlockEntry => K::BlockEntry,
            Tok::FlowEntry => K::FlowEntry,
            Tok::Key => K::Key,
            Tok::Value => K::Value,
            Tok::Alias(_) => K::Alias,
            Tok::Anchor(_) => K::Anchor,
            Tok::Tag(..) => K::Tag,
            Tok::Scalar(..) => K::Scalar,
        }
    }
}

fn empty<'a>() -> Ev<'a> {
    Ev::Scalar {
        anchor: None,
        tag: None,
        value: Cow::Borrowed(""),
        style: ScalarStyle::Plain,
    }
}
