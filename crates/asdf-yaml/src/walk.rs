//! The one walk of a tree. Every whole-tree pass of the workspace goes through [`Walker`]:
//! [`Node::walk`] (aliases not followed), the schema validator's tag walk, the JSON writer,
//! and the command line's `info`, `search` and `diff`.
//!
//! A walk visits nodes in document order (a node before its children, a mapping's entries in
//! order) and tells a [`Visitor`] three things: a node is [entered](Visitor::enter) (the
//! visitor may skip its children or stop), a node is [left](Visitor::leave) (after its
//! children; every entered node is left unless the walk stopped), and a node is
//! [cut](Visitor::cut): not entered, with the reason ([`Cut`]).
//!
//! What a walk does with aliases is its [`Aliases`] policy: never follow them, follow each
//! anchored node once, or follow them until a budget of nodes reached through aliases is
//! spent (an alias bomb, a few hundred bytes whose aliases expand to millions of nodes, costs
//! the budget, not the memory or the output of a command). An alias back to one of its own
//! ancestors (a cycle) is never followed, and no walk goes deeper than its depth cap (aliases
//! can nest a tree deeper than the parser's own limit). The walk is iterative: no depth uses
//! the call stack.
//!
//! Pointers (RFC 6901) and paths are built on demand from the walk's own stack
//! ([`At::pointer`], [`At::path`]): a node reached through an alias has the pointer of the
//! place it is reached at.
//!
//! ```
//! use asdf_yaml::{Aliases, At, Cut, Limits, Visit, Visitor, Walker, parse};
//!
//! // The pointers of the tagged nodes, and the aliases not followed.
//! #[derive(Default)]
//! struct Tagged(Vec<String>, Vec<String>);
//! impl<'a> Visitor<'a> for Tagged {
//!     fn enter(&mut self, at: &At<'_, 'a>) -> Visit {
//!         if at.node().tag.is_some() {
//!             self.0.push(at.pointer());
//!         }
//!         Visit::Continue
//!     }
//!     fn cut(&mut self, at: &At<'_, 'a>, why: Cut) -> Visit {
//!         self.1.push(format!("{} {why:?}", at.pointer()));
//!         Visit::Continue
//!     }
//! }
//! let text = "a: &u !unit/unit-1.0.0 m\nb: [*u, *u]\n";
//! let doc = parse(text.as_bytes(), &Limits::default()).unwrap().document;
//! let mut t = Tagged::default();
//! Walker::new(Aliases::Once).walk(&doc, &mut t);
//! assert_eq!(t.0, ["/a", "/b/0"]);
//! assert_eq!(t.1, ["/b/1 Seen"]);
//! ```

use std::collections::HashSet;

use crate::node::{Anchor, Document, Node, NodeKind, Step, Visit};

/// The deepest level a walk of a whole tree enters by default (the YAML parser's own limit is
/// 1,000; aliases can nest a tree deeper than that).
pub const MAX_DEPTH: usize = 2_000;

/// The most nodes a walk reaches through aliases by default (the tree itself is walked whole).
pub const MAX_EXPANDED: u64 = 1_000_000;

/// What a walk does with an alias.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aliases {
    /// Aliases are not followed: each is [cut](Visitor::cut) with [`Cut::NotFollowed`].
    Never,
    /// Each anchored node is entered through an alias at most once; later aliases to it are
    /// cut with [`Cut::Seen`] (a printout costs a line per alias, not per expansion).
    Once,
    /// Aliases are followed until this many nodes were entered through aliases; the aliases
    /// met after that are cut with [`Cut::Budget`].
    Within(u64),
}

/// Why a node was not entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// An alias, and the policy is [`Aliases::Never`] (or the walk has no document to
    /// resolve aliases in). [`At::node`] is the alias node.
    NotFollowed,
    /// An alias to a node already entered through an alias ([`Aliases::Once`]).
    Seen,
    /// An alias met after the budget of [`Aliases::Within`] was spent.
    Budget,
    /// An alias back to one of its own ancestors.
    Cycle,
    /// An alias whose anchored node is no longer in the tree. [`At::node`] is the alias node.
    Orphan,
    /// The node is deeper than the walk's depth cap.
    Depth,
}

/// How a walk goes: its alias policy, its depth cap and whether mapping keys are visited.
#[derive(Debug, Clone, Copy)]
pub struct Walker {
    aliases: Aliases,
    max_depth: usize,
    keys: bool,
}

impl Default for Walker {
    /// Aliases followed within [`MAX_EXPANDED`] nodes, [`MAX_DEPTH`] levels, keys not visited.
    fn default() -> Self {
        Self {
            aliases: Aliases::Within(MAX_EXPANDED),
            max_depth: MAX_DEPTH,
            keys: false,
        }
    }
}

/// What a walk met, beside what its visitor saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Nodes entered through aliases.
    pub expanded: u64,
    /// Aliases cut because the budget was spent.
    pub over_budget: u64,
    /// Nodes cut because they were deeper than the depth cap.
    pub too_deep: u64,
    /// Whether the visitor stopped the walk.
    pub stopped: bool,
}

impl Summary {
    /// The warning for a walk that left aliases unfollowed because its budget was spent.
    #[must_use]
    pub fn warning(&self) -> Option<String> {
        (self.over_budget > 0).then(|| {
            format!(
                "aliases expand to more than {} nodes; the rest were left as references",
                self.expanded
            )
        })
    }
}

/// What a walk tells its visitor.
pub trait Visitor<'a> {
    /// A node is entered: return whether to go into its children, skip them or stop.
    fn enter(&mut self, at: &At<'_, 'a>) -> Visit;
    /// A node entered is left, after its children.
    fn leave(&mut self, at: &At<'_, 'a>) {
        let _ = at;
    }
    /// A node is not entered, for the reason `why`; return [`Visit::Stop`] to stop the walk.
    fn cut(&mut self, at: &At<'_, 'a>, why: Cut) -> Visit {
        let _ = (at, why);
        Visit::Continue
    }
}

/// One node of the walk's stack.
#[derive(Debug, Clone, Copy)]
struct Frame<'a> {
    /// The node (an alias resolved to its anchored node).
    node: &'a Node,
    /// The node as it is written where the walk met it (the alias itself when it is one).
    written: &'a Node,
    /// The anchor of the alias the node was reached through.
    alias: Option<&'a Anchor>,
    /// The key text when the node is a mapping's key or value.
    key: Option<&'a str>,
    /// Its place among its siblings, and their number.
    index: usize,
    siblings: usize,
    /// The next child slot to visit, and whether the children are visited at all.
    next: usize,
    open: bool,
}

/// Where a walk is: the node and how it was reached.
#[derive(Debug, Clone, Copy)]
pub struct At<'w, 'a> {
    frames: &'w [Frame<'a>],
    path: &'w [Step],
}

impl<'a> At<'_, 'a> {
    fn me(&self) -> &Frame<'a> {
        // The walk never hands out an empty stack.
        &self.frames[self.frames.len() - 1]
    }

    /// The node (an alias resolved to the node it refers to, except for [`Cut::NotFollowed`]
    /// and [`Cut::Orphan`]).
    #[must_use]
    pub fn node(&self) -> &'a Node {
        self.me().node
    }

    /// The node as written where the walk met it: the alias node when it was reached through one.
    #[must_use]
    pub fn written(&self) -> &'a Node {
        self.me().written
    }

    /// The anchor of the alias the node was reached through.
    #[must_use]
    pub fn alias(&self) -> Option<&'a Anchor> {
        self.me().alias
    }

    /// How deep the node is (0: the node the walk started at).
    #[must_use]
    pub fn depth(&self) -> usize {
        self.frames.len() - 1
    }

    /// Its place among its siblings (entries of a mapping, items of a sequence).
    #[must_use]
    pub fn index(&self) -> usize {
        self.me().index
    }

    /// Whether it is the last of its siblings.
    #[must_use]
    pub fn is_last(&self) -> bool {
        self.me().index + 1 >= self.me().siblings
    }

    /// The step from its parent (`None` for the start node).
    #[must_use]
    pub fn step(&self) -> Option<Step> {
        self.path.last().copied()
    }

    /// The key's text when the node is a mapping's value (or key).
    #[must_use]
    pub fn key(&self) -> Option<&'a str> {
        self.me().key
    }

    /// The key's text, or the item's index.
    #[must_use]
    pub fn label(&self) -> String {
        match (self.me().key, self.step()) {
            (Some(k), _) => k.to_owned(),
            (None, Some(Step::Item(i))) => i.to_string(),
            _ => String::new(),
        }
    }

    /// The steps from the start node (through aliases, the steps inside their anchored nodes).
    #[must_use]
    pub fn path(&self) -> &[Step] {
        self.path
    }

    /// The parent node (`None` for the start node).
    #[must_use]
    pub fn parent(&self) -> Option<&'a Node> {
        self.frames.len().checked_sub(2).map(|i| self.frames[i].node)
    }

    /// The JSON pointer of the node from the start node (`""` for the start node).
    #[must_use]
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for (f, s) in self.frames[1..].iter().zip(self.path) {
            out.push('/');
            match (f.key, s) {
                (Some(k), _) => out.push_str(&crate::pointer::escape(k)),
                (None, Step::Item(i)) => out.push_str(&i.to_string()),
                (None, _) => {}
            }
        }
        out
    }

    /// The JSON pointer of the node from the start node that names exactly it: as
    /// [`At::pointer`], but a key whose text leads to another entry of its mapping (an integer
    /// key `1` beside the string key `'1'`), or that has no text (a mapping as a key), is
    /// written `~e<i>`, its entry's position (see [`crate::pointer`]).
    #[must_use]
    pub fn pointer_exact(&self) -> String {
        let mut out = String::new();
        for ((parent, child), s) in self.frames.iter().zip(&self.frames[1..]).zip(self.path) {
            out.push('/');
            match (s, child.key) {
                (Step::Item(i), _) => out.push_str(&i.to_string()),
                (Step::Entry(i) | Step::Key(i), key) => match crate::pointer::entry_token(parent.node, *i) {
                    Some(t) => out.push_str(&t),
                    None => out.push_str(&crate::pointer::escape(key.unwrap_or_default())),
                },
            }
        }
        out
    }

    /// Whether [`At::pointer`] names this node: false where a key on the way is not a string
    /// (`1`, `true`) and its mapping also has a string key of the same text, which the pointer
    /// names instead (see [`crate::pointer::get`]).
    #[must_use]
    pub fn pointer_names_it(&self) -> bool {
        for (parent, child) in self.frames.iter().zip(&self.frames[1..]) {
            let (Some(key), NodeKind::Mapping(m)) = (child.key, &parent.node.kind) else {
                continue;
            };
            let this_is_str = m
                .entries
                .iter()
                .any(|(k, v)| std::ptr::eq(v, child.written) && k.as_str().is_some());
            if !this_is_str && m.entries.iter().any(|(k, _)| k.as_str() == Some(key)) {
                return false;
            }
        }
        true
    }

    /// Whether `node` is the node or one of its ancestors.
    #[must_use]
    pub fn is_open(&self, node: &Node) -> bool {
        self.frames.iter().any(|f| std::ptr::eq(f.node, node))
    }
}

impl Walker {
    /// A walk with alias policy `aliases`, [`MAX_DEPTH`] levels, keys not visited.
    #[must_use]
    pub fn new(aliases: Aliases) -> Self {
        Self {
            aliases,
            ..Self::default()
        }
    }

    /// The depth cap (`usize::MAX`: none; the walk is iterative).
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// Whether a mapping's keys are visited too (each key before its value, with a
    /// [`Step::Key`] step).
    #[must_use]
    pub fn keys(mut self, keys: bool) -> Self {
        self.keys = keys;
        self
    }

    /// Walks `doc`'s tree from its root.
    pub fn walk<'a, V: Visitor<'a> + ?Sized>(&self, doc: &'a Document, visitor: &mut V) -> Summary {
        self.walk_from(&doc.root, Some(doc), visitor)
    }

    /// Walks the tree under `start`; aliases are resolved in `doc` (with no document, none is
    /// followed).
    pub fn walk_from<'a, V: Visitor<'a> + ?Sized>(
        &self,
        start: &'a Node,
        doc: Option<&'a Document>,
        visitor: &mut V,
    ) -> Summary {
        let mut w = Walk {
            cfg: self,
            doc,
            frames: Vec::new(),
            path: Vec::new(),
            once: HashSet::new(),
            inside: 0,
            summary: Summary::default(),
        };
        if w.reach(start, None, None, 0, 1, visitor) {
            w.run(visitor);
        }
        w.summary
    }
}

/// One walk under way.
struct Walk<'c, 'a> {
    cfg: &'c Walker,
    doc: Option<&'a Document>,
    frames: Vec<Frame<'a>>,
    path: Vec<Step>,
    /// Nodes entered through an alias ([`Aliases::Once`]), by address.
    once: HashSet<usize>,
    /// How many frames on the stack were reached through an alias.
    inside: usize,
    summary: Summary,
}

impl<'a> Walk<'_, 'a> {
    fn at(&self) -> At<'_, 'a> {
        At {
            frames: &self.frames,
            path: &self.path,
        }
    }

    fn run<V: Visitor<'a> + ?Sized>(&mut self, visitor: &mut V) {
        while let Some(top) = self.frames.last_mut() {
            let child = if top.open {
                child(top.node, top.next, self.cfg.keys)
            } else {
                None
            };
            match child {
                Some((step, node, key, index, siblings)) => {
                    top.next += 1;
                    let key = key.map(|k| self.doc.map_or(k, |d| d.resolve(k)));
                    let key = key.and_then(|k| k.as_scalar()).map(|s| s.text.as_str());
                    if !self.reach(node, Some(step), key, index, siblings, visitor) {
                        return;
                    }
                }
                None => {
                    visitor.leave(&self.at());
                    self.pop();
                }
            }
        }
    }

    fn pop(&mut self) {
        if let Some(f) = self.frames.pop() {
            if f.alias.is_some() {
                self.inside -= 1;
            }
            if !self.frames.is_empty() {
                self.path.pop();
            }
        }
    }

    /// The walk reaches `written` (a child, or the start node): cuts or enters it. False when
    /// the visitor stopped the walk.
    fn reach<V: Visitor<'a> + ?Sized>(
        &mut self,
        written: &'a Node,
        step: Option<Step>,
        key: Option<&'a str>,
        index: usize,
        siblings: usize,
        visitor: &mut V,
    ) -> bool {
        let (node, alias, cut) = match (&written.kind, self.doc) {
            (NodeKind::Alias(a), None) => (written, Some(&a.anchor), Some(Cut::NotFollowed)),
            (NodeKind::Alias(a), Some(doc)) => {
                let target = doc.resolve(written);
                let cut = self.alias_cut(target);
                (target, Some(&a.anchor), cut)
            }
            _ => (written, None, None),
        };
        let cut = cut.or_else(|| (self.frames.len() >= self.cfg.max_depth).then_some(Cut::Depth));
        if let Some(s) = step {
            self.path.push(s);
        }
        self.frames.push(Frame {
            node,
            written,
            alias,
            key,
            index,
            siblings,
            next: 0,
            open: false,
        });
        if let Some(why) = cut {
            match why {
                Cut::Budget => self.summary.over_budget += 1,
                Cut::Depth => self.summary.too_deep += 1,
                _ => {}
            }
            let go = visitor.cut(&self.at(), why);
            self.frames.pop();
            if step.is_some() {
                self.path.pop();
            }
            self.summary.stopped |= go == Visit::Stop;
            return go != Visit::Stop;
        }
        if alias.is_some() {
            self.inside += 1;
        }
        if self.inside > 0 {
            self.summary.expanded += 1;
        }
        match visitor.enter(&self.at()) {
            Visit::Stop => {
                self.summary.stopped = true;
                false
            }
            Visit::SkipChildren => true,
            Visit::Continue => {
                if let Some(top) = self.frames.last_mut() {
                    top.open = true;
                }
                true
            }
        }
    }

    /// Why an alias to `target` is not followed, if it is not.
    fn alias_cut(&mut self, target: &'a Node) -> Option<Cut> {
        if matches!(target.kind, NodeKind::Alias(_)) {
            return Some(Cut::Orphan);
        }
        match self.cfg.aliases {
            Aliases::Never => return Some(Cut::NotFollowed),
            Aliases::Once => {}
            Aliases::Within(budget) if self.summary.expanded >= budget => return Some(Cut::Budget),
            Aliases::Within(_) => {}
        }
        if self.frames.iter().any(|f| std::ptr::eq(f.node, target)) {
            return Some(Cut::Cycle);
        }
        if self.cfg.aliases == Aliases::Once && !self.once.insert(std::ptr::from_ref(target) as usize) {
            return Some(Cut::Seen);
        }
        None
    }
}

/// Child slot `slot` of `node`: its step, the node, its key node, its index among its
/// siblings and their number.
fn child(node: &Node, slot: usize, keys: bool) -> Option<(Step, &Node, Option<&Node>, usize, usize)> {
    match &node.kind {
        NodeKind::Mapping(m) => {
            let (i, is_key) = if keys {
                (slot / 2, slot.is_multiple_of(2))
            } else {
                (slot, false)
            };
            let (k, v) = m.entries.get(i)?;
            Some(if is_key {
                (Step::Key(i), k, Some(k), i, m.entries.len())
            } else {
                (Step::Entry(i), v, Some(k), i, m.entries.len())
            })
        }
        NodeKind::Sequence(s) => s
            .items
            .get(slot)
            .map(|v| (Step::Item(slot), v, None, slot, s.items.len())),
        _ => None,
    }
}

/// The walks of a bare node, with its paths.
impl Node {
    /// Visits this node and every node below it in document order (a mapping's keys before
    /// their values), with its path from here, without following aliases; `f` returns whether
    /// to go on (`false` stops the walk). Iterative: any depth is fine.
    pub fn walk(&self, f: &mut dyn FnMut(&[Step], &Node) -> bool) {
        self.walk_with(&mut |p, n| if f(p, n) { Visit::Continue } else { Visit::Stop });
    }

    /// As [`Node::walk`], where `f` may also skip the children of a node. One use of
    /// [`Walker`]: aliases not followed, keys visited, no depth cap.
    pub fn walk_with(&self, f: &mut dyn FnMut(&[Step], &Node) -> Visit) {
        struct Each<'f>(&'f mut dyn FnMut(&[Step], &Node) -> Visit);
        impl<'a> Visitor<'a> for Each<'_> {
            fn enter(&mut self, at: &At<'_, 'a>) -> Visit {
                (self.0)(at.path(), at.node())
            }
            fn cut(&mut self, at: &At<'_, 'a>, _: Cut) -> Visit {
                // An alias node, handed over as it is.
                (self.0)(at.path(), at.written())
            }
        }
        Walker::new(Aliases::Never)
            .keys(true)
            .max_depth(usize::MAX)
            .walk_from(self, None, &mut Each(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, parse};

    fn doc(t: &str) -> Document {
        parse(t.as_bytes(), &Limits::default()).unwrap().document
    }

    /// Records the walk as text: `+pointer` entered, `-pointer` left, `!pointer why` cut.
    #[derive(Default)]
    struct Log {
        lines: Vec<String>,
        skip: Option<String>,
        stop: Option<String>,
    }

    impl<'a> Visitor<'a> for Log {
        fn enter(&mut self, at: &At<'_, 'a>) -> Visit {
            let p = at.pointer();
            self.lines.push(format!("+{p}"));
            if self.stop.as_deref() == Some(p.as_str()) {
                Visit::Stop
            } else if self.skip.as_deref() == Some(p.as_str()) {
                Visit::SkipChildren
            } else {
                Visit::Continue
            }
        }
        fn leave(&mut self, at: &At<'_, 'a>) {
            self.lines.push(format!("-{}", at.pointer()));
        }
        fn cut(&mut self, at: &At<'_, 'a>, why: Cut) -> Visit {
            self.lines.push(format!("!{} {why:?}", at.pointer()));
            Visit::Continue
        }
    }

    fn log(walker: Walker, text: &str) -> (Vec<String>, Summary) {
        let d = doc(text);
        let mut l = Log::default();
        let s = walker.walk(&d, &mut l);
        (l.lines, s)
    }

    #[test]
    fn enters_and_leaves_in_document_order_with_pointers() {
        let (lines, s) = log(Walker::default(), "a: [1, {b~/c: 2}]\nd: x\n");
        assert_eq!(
            lines,
            [
                "+",
                "+/a",
                "+/a/0",
                "-/a/0",
                "+/a/1",
                "+/a/1/b~0~1c",
                "-/a/1/b~0~1c",
                "-/a/1",
                "-/a",
                "+/d",
                "-/d",
                "-"
            ]
        );
        assert_eq!(s, Summary::default());
    }

    #[test]
    fn skip_children_and_stop() {
        let d = doc("a: {x: 1}\nb: 2\nc: 3\n");
        let mut l = Log {
            skip: Some("/a".into()),
            stop: Some("/b".into()),
            ..Log::default()
        };
        let s = Walker::default().walk(&d, &mut l);
        assert_eq!(l.lines, ["+", "+/a", "-/a", "+/b"]);
        assert!(s.stopped);
    }

    const ALIASES: &str = "a: &x {k: 1}\nb: *x\nc: *x\n";

    #[test]
    fn alias_policies() {
        let (lines, s) = log(Walker::new(Aliases::Never), ALIASES);
        assert!(lines.contains(&"!/b NotFollowed".to_owned()), "{lines:?}");
        assert_eq!(s.expanded, 0);

        let (lines, s) = log(Walker::new(Aliases::Once), ALIASES);
        assert!(lines.contains(&"+/b/k".to_owned()), "{lines:?}");
        assert!(lines.contains(&"!/c Seen".to_owned()), "{lines:?}");
        assert_eq!(s.expanded, 2);

        let (lines, s) = log(Walker::new(Aliases::Within(u64::MAX)), ALIASES);
        assert!(
            lines.contains(&"+/b/k".to_owned()) && lines.contains(&"+/c/k".to_owned()),
            "{lines:?}"
        );
        assert_eq!(s.expanded, 4);
        assert_eq!(s.warning(), None);

        let (lines, s) = log(Walker::new(Aliases::Within(2)), ALIASES);
        assert!(lines.contains(&"!/c Budget".to_owned()), "{lines:?}");
        assert_eq!((s.expanded, s.over_budget), (2, 1));
        assert!(s.warning().is_some());
    }

    #[test]
    fn a_bomb_costs_the_budget() {
        // Nine levels of ten aliases each: 10^9 nodes if followed.
        let mut t = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            t.push_str(&format!(
                "l{i}: &l{i} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n"
            ));
        }
        struct Count(u64);
        impl<'a> Visitor<'a> for Count {
            fn enter(&mut self, _: &At<'_, 'a>) -> Visit {
                self.0 += 1;
                Visit::Continue
            }
        }
        let d = parse(t.as_bytes(), &Limits::unlimited()).unwrap().document;
        let mut c = Count(0);
        let s = Walker::new(Aliases::Within(10_000)).walk(&d, &mut c);
        // Past the budget, the aliases already entered are finished (their own aliases cut).
        assert!(s.expanded >= 10_000 && s.expanded < 10_100, "{s:?}");
        assert!(s.over_budget > 0);
        assert!(c.0 < 11_000, "{}", c.0);
    }

    #[test]
    fn cycles_are_cut() {
        // An alias inside its own anchored node (the parser allows this form).
        let d = doc("a: &x [1, *x]\n");
        let mut l = Log::default();
        let s = Walker::default().walk(&d, &mut l);
        assert!(l.lines.contains(&"!/a/1 Cycle".to_owned()), "{:?}", l.lines);
        assert!(!s.stopped);
    }

    #[test]
    fn depth_cap() {
        let d = doc("a: {b: {c: {d: 1}}}\n");
        let mut l = Log::default();
        let s = Walker::default().max_depth(2).walk(&d, &mut l);
        assert!(l.lines.contains(&"!/a/b Depth".to_owned()), "{:?}", l.lines);
        assert!(!l.lines.iter().any(|x| x.starts_with("+/a/b")));
        assert_eq!(s.too_deep, 1);
    }

    #[test]
    fn keys_and_paths() {
        let d = doc("k: [v]\n");
        struct Paths(Vec<Vec<Step>>);
        impl<'a> Visitor<'a> for Paths {
            fn enter(&mut self, at: &At<'_, 'a>) -> Visit {
                self.0.push(at.path().to_vec());
                Visit::Continue
            }
        }
        let mut p = Paths(Vec::new());
        Walker::new(Aliases::Never).keys(true).walk(&d, &mut p);
        assert_eq!(
            p.0,
            [
                vec![],
                vec![Step::Key(0)],
                vec![Step::Entry(0)],
                vec![Step::Entry(0), Step::Item(0)]
            ]
        );
    }

    #[test]
    fn a_deep_tree_does_not_use_the_call_stack() {
        let n = 100_000;
        let mut root = Node::int(1);
        for _ in 0..n {
            root = Node::seq(vec![root]);
        }
        struct Deepest(usize);
        impl<'a> Visitor<'a> for Deepest {
            fn enter(&mut self, at: &At<'_, 'a>) -> Visit {
                self.0 = self.0.max(at.depth());
                Visit::Continue
            }
        }
        let mut d = Deepest(0);
        Walker::new(Aliases::Never)
            .max_depth(usize::MAX)
            .walk_from(&root, None, &mut d);
        assert_eq!(d.0, n);
        // Dropping a deep tree is the tree's concern, not the walk's.
        std::mem::forget(root);
    }
}
