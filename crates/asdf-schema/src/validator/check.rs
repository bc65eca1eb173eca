//! Checking a node against compiled schemas: every keyword, with the closest branch of a
//! failed `anyOf`/`oneOf` named, and cycles through aliases stopped.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) struct Cx<'a> {
    pub(super) v: &'a Validator,
    pub(super) doc: &'a Document,
    /// (schema, node address) pairs being checked through aliases, to stop on cycles.
    pub(super) active: Vec<(usize, usize)>,
}

impl Cx<'_> {
    fn fail(
        &self,
        sink: &mut Option<&mut Vec<Violation>>,
        idx: usize,
        key: &str,
        node: &Node,
        path: &str,
        message: String,
    ) {
        if let Some(s) = sink.as_deref_mut() {
            s.push(Violation {
                instance: path.to_owned(),
                span: node.span,
                schema: format!("{}/{key}", self.v.nodes.get(idx).location),
                keyword: key.to_owned(),
                message,
            });
        }
    }

    /// For a failed `anyOf`/`oneOf`: the most specific reason among the branches (the deepest
    /// violation of a branch that did not fail on the node's type itself), as Python's
    /// jsonschema `best_match` would point at.
    fn closest(&mut self, branches: &[usize], node: &Node, path: &mut String) -> String {
        let mut best: Option<Violation> = None;
        for t in branches {
            let mut errs = Vec::new();
            self.check(*t, node, path, Some(&mut errs));
            for e in errs {
                if e.keyword == "type" && e.instance == *path {
                    continue;
                }
                if best.as_ref().is_none_or(|b| e.instance.len() > b.instance.len()) {
                    best = Some(e);
                }
            }
        }
        match best {
            Some(b) => {
                // A nested anyOf already names its own closest reason: keep the innermost.
                if let Some(i) = b.message.rfind(" (closest: ") {
                    let inner = b.message[i..].trim_end_matches(')');
                    return format!("{inner})");
                }
                let at = if b.instance.is_empty() { "/" } else { &b.instance };
                format!(" (closest: {at}: {})", b.message)
            }
            None => String::new(),
        }
    }

    /// Checks `node` against schema `idx`; with a sink, reports every failure, without one
    /// returns at the first.
    #[allow(clippy::too_many_lines)]
    pub(super) fn check(
        &mut self,
        idx: usize,
        node: &Node,
        path: &mut String,
        mut sink: Option<&mut Vec<Violation>>,
    ) -> bool {
        let original = node;
        let node = self.doc.resolve(node);
        if matches!(original.kind, NodeKind::Alias(_)) {
            let key = (idx, std::ptr::from_ref(node) as usize);
            if self.active.contains(&key) {
                return true;
            }
            self.active.push(key);
            let r = self.check_resolved(idx, node, path, sink.as_deref_mut());
            self.active.pop();
            return r;
        }
        self.check_resolved(idx, node, path, sink)
    }

    #[allow(clippy::too_many_lines)]
    fn check_resolved(
        &mut self,
        idx: usize,
        node: &Node,
        path: &mut String,
        mut sink: Option<&mut Vec<Violation>>,
    ) -> bool {
        let v = self.v;
        let mut ok = true;
        macro_rules! bad {
            ($key:expr, $msg:expr) => {{
                ok = false;
                if sink.is_none() {
                    return false;
                }
                self.fail(&mut sink, idx, $key, node, path, $msg);
            }};
        }
        // Checks `$node` against subschema `$t` (one step `$step` down the instance, if given);
        // a failure fails this schema too.
        macro_rules! sub {
            ($t:expr, $node:expr) => {{
                if !self.check($t, $node, path, sink.as_deref_mut()) {
                    ok = false;
                    if sink.is_none() {
                        return false;
                    }
                }
            }};
            ($t:expr, $node:expr, $step:expr) => {{
                let len = path.len();
                path.push('/');
                path.push_str(&$step);
                let good = self.check($t, $node, path, sink.as_deref_mut());
                path.truncate(len);
                if !good {
                    ok = false;
                    if sink.is_none() {
                        return false;
                    }
                }
            }};
        }
        let bits = type_bits(node);
        for (key, kw) in &v.nodes.get(idx).kws {
            match kw {
                Kw::Ref(t) => {
                    sub!(*t, node);
                }
                Kw::Unresolvable(r) => {
                    bad!(key, format!("cannot resolve the schema reference `{r}`"))
                }
                Kw::Type(t) => {
                    if bits & t == 0 {
                        let names: Vec<&str> = ["null", "boolean", "integer", "number", "string", "array", "object"]
                            .into_iter()
                            .filter(|n| type_bit(n).is_some_and(|b| b & t != 0))
                            .collect();
                        bad!(
                            key,
                            format!(
                                "{} is not of type {}",
                                repr(node),
                                names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
                            )
                        );
                    }
                }
                Kw::Enum(items, edoc) => {
                    if !items.iter().any(|i| json_eq(node, i, self.doc, edoc)) {
                        bad!(key, format!("{} is not one of the allowed values", repr(node)));
                    }
                }
                Kw::Minimum(lim, ex) | Kw::Maximum(lim, ex) => {
                    if let Some(n) = num_of(node) {
                        let c = cmp_num(&n, lim);
                        let is_min = matches!(kw, Kw::Minimum(..));
                        let fails = match c {
                            None => true,
                            Some(Ordering::Equal) => *ex,
                            Some(Ordering::Less) => is_min,
                            Some(Ordering::Greater) => !is_min,
                        };
                        if fails {
                            let rel = match (is_min, ex) {
                                (true, false) => "less than the minimum of",
                                (true, true) => "less than or equal to the minimum of",
                                (false, false) => "greater than the maximum of",
                                (false, true) => "greater than or equal to the maximum of",
                            };
                            let limit = match lim {
                                Num::I(i) => i.to_string(),
                                Num::F(f) => asdf_yaml::resolve::python_repr(*f),
                            };
                            bad!(key, format!("{} is {rel} {limit}", repr(node)));
                        }
                    }
                }
                Kw::MultipleOf(m) => {
                    if let Some(n) = num_of(node) {
                        let fails = match (&n, m) {
                            (Num::I(a), Num::I(b)) => b != &BigInt::from(0) && a % b != BigInt::from(0),
                            _ => {
                                let (a, b) = (
                                    match &n {
                                        Num::I(x) => big_to_f64(x),
                                        Num::F(x) => *x,
                                    },
                                    match m {
                                        Num::I(x) => big_to_f64(x),
                                        Num::F(x) => *x,
                                    },
                                );
                                let q = a / b;
                                if q.is_finite() { q.trunc() != q } else { (a % b) != 0.0 }
                            }
                        };
                        if fails {
                            bad!(key, format!("{} is not a multiple of the divisor", repr(node)));
                        }
                    }
                }
                Kw::MinLength(l) | Kw::MaxLength(l) => {
                    if bits == T_STRING {
                        let len = node.as_scalar().map_or(0, |s| s.text.chars().count()) as u64;
                        let is_min = matches!(kw, Kw::MinLength(_));
                        if (is_min && len < *l) || (!is_min && len > *l) {
                            bad!(
                                key,
                                format!("{} is too {}", repr(node), if is_min { "short" } else { "long" })
                            );
                        }
                    }
                }
                Kw::Pattern(re, text) => {
                    if bits == T_STRING
                        && let Some(s) = node.as_scalar()
                        && !re.is_match(&s.text)
                    {
                        let shown: String = text.chars().take(80).collect();
                        let more = if text.chars().count() > 80 { "..." } else { "" };
                        bad!(key, format!("{} does not match '{shown}{more}'", repr(node)));
                    }
                }
                Kw::Items(t) => {
                    if let NodeKind::Sequence(s) = &node.kind {
                        for (i, item) in s.items.iter().enumerate() {
                            sub!(*t, item, i.to_string());
                        }
                    }
                }
                Kw::ItemsTuple(ts, add) => {
                    if let NodeKind::Sequence(s) = &node.kind {
                        for (i, item) in s.items.iter().enumerate() {
                            let t = match (ts.get(i), add) {
                                (Some(t), _) => *t,
                                (None, AddItems::Schema(t)) => *t,
                                (None, AddItems::Any) => break,
                                (None, AddItems::No) => {
                                    bad!("additionalItems", "additional items are not allowed".to_owned());
                                    break;
                                }
                            };
                            sub!(t, item, i.to_string());
                        }
                    }
                }
                Kw::MinItems(l) | Kw::MaxItems(l) => {
                    if let NodeKind::Sequence(s) = &node.kind {
                        let n = s.items.len() as u64;
                        let is_min = matches!(kw, Kw::MinItems(_));
                        if (is_min && n < *l) || (!is_min && n > *l) {
                            bad!(
                                key,
                                format!("{} is too {}", repr(node), if is_min { "short" } else { "long" })
                            );
                        }
                    }
                }
                Kw::UniqueItems => {
                    if let NodeKind::Sequence(s) = &node.kind {
                        let dup = (0..s.items.len()).any(|i| {
                            (i + 1..s.items.len()).any(|j| json_eq(&s.items[i], &s.items[j], self.doc, self.doc))
                        });
                        if dup {
                            bad!(key, format!("{} has non-unique elements", repr(node)));
                        }
                    }
                }
                Kw::Properties(props) => {
                    if let NodeKind::Mapping(m) = &node.kind {
                        for (name, t) in props {
                            let Some((_, value)) = m.entries.iter().find(|(k, _)| key_is(k, name)) else {
                                continue;
                            };
                            sub!(*t, value, asdf_yaml::pointer::escape(name));
                        }
                    }
                }
                Kw::PatternProperties(pats) => {
                    if let NodeKind::Mapping(m) = &node.kind {
                        for (k, value) in &m.entries {
                            let Some(name) = key_text(k) else { continue };
                            for (re, t) in pats {
                                if re.is_match(&name) {
                                    sub!(*t, value, asdf_yaml::pointer::escape(&name));
                                }
                            }
                        }
                    }
                }
                Kw::AdditionalProperties {
                    names,
                    patterns,
                    schema,
                } => {
                    if let NodeKind::Mapping(m) = &node.kind {
                        let mut extra = Vec::new();
                        for (k, value) in &m.entries {
                            let name = key_text(k).unwrap_or_default();
                            if names.iter().any(|n| n == &name) || patterns.iter().any(|r| r.is_match(&name)) {
                                continue;
                            }
                            match schema {
                                None => extra.push(name),
                                Some(t) => {
                                    sub!(*t, value, asdf_yaml::pointer::escape(&name));
                                }
                            }
                        }
                        if !extra.is_empty() {
                            let list: Vec<String> = extra.iter().map(|e| format!("'{e}'")).collect();
                            bad!(
                                key,
                                format!("Additional properties are not allowed ({} unexpected)", list.join(", "))
                            );
                        }
                    }
                }
                Kw::Required(req) => {
                    if let NodeKind::Mapping(m) = &node.kind {
                        for r in req {
                            if !m.entries.iter().any(|(k, _)| key_is(k, r)) {
                                bad!(key, format!("'{r}' is a required property"));
                            }
                        }
                    }
                }
                Kw::MinProperties(l) | Kw::MaxProperties(l) => {
                    if let NodeKind::Mapping(m) = &node.kind {
                        let n = m.entries.len() as u64;
                        let is_min = matches!(kw, Kw::MinProperties(_));
                        if (is_min && n < *l) || (!is_min && n > *l) {
                            bad!(
                                key,
                                format!(
                                    "{} has too {} properties",
                                    repr(node),
                                    if is_min { "few" } else { "many" }
                                )
                            );
                        }
                    }
                }
                Kw::Dependencies(deps) => {
                    if let NodeKind::Mapping(m) = &node.kind {
                        for (name, dep) in deps {
                            if !m.entries.iter().any(|(k, _)| key_is(k, name)) {
                                continue;
                            }
                            match dep {
                                Dep::Props(props) => {
                                    for p in props {
                                        if !m.entries.iter().any(|(k, _)| key_is(k, p)) {
                                            bad!(key, format!("'{p}' is a dependency of '{name}'"));
                                        }
                                    }
                                }
                                Dep::Schema(t) => {
                                    sub!(*t, node);
                                }
                            }
                        }
                    }
                }
                Kw::AllOf(ts) => {
                    for t in ts {
                        sub!(*t, node);
                    }
                }
                Kw::AnyOf(ts) => {
                    if !ts.iter().any(|t| self.check(*t, node, path, None)) {
                        {
                            let hint = if sink.is_some() {
                                self.closest(ts, node, path)
                            } else {
                                String::new()
                            };
                            bad!(
                                key,
                                format!("{} is not valid under any of the given schemas{hint}", repr(node))
                            );
                        }
                    }
                }
                Kw::OneOf(ts) => {
                    let n = ts.iter().filter(|t| self.check(**t, node, path, None)).count();
                    if n == 0 {
                        {
                            let hint = if sink.is_some() {
                                self.closest(ts, node, path)
                            } else {
                                String::new()
                            };
                            bad!(
                                key,
                                format!("{} is not valid under any of the given schemas{hint}", repr(node))
                            );
                        }
                    } else if n > 1 {
                        bad!(
                            key,
                            format!("{} is valid under each of {n} of the given schemas", repr(node))
                        );
                    }
                }
                Kw::Not(t) => {
                    if self.check(*t, node, path, None) {
                        bad!(
                            key,
                            format!("{} should not be valid under the given schema", repr(node))
                        );
                    }
                }
                Kw::Format(f) => {
                    if v.check_formats
                        && bits == T_STRING
                        && let Some(s) = node.as_scalar()
                        && !format::check(f, &s.text)
                    {
                        bad!(key, format!("{} is not a '{f}'", repr(node)));
                    }
                }
                Kw::Tag(pattern) => {
                    let good = node.tag.as_deref().is_some_and(|t| glob_match(pattern, t));
                    if !good {
                        let has = node.tag.as_deref().unwrap_or("no tag");
                        bad!(key, format!("mismatched tags, wanted '{pattern}', got '{has}'"));
                    }
                }
                Kw::Custom(name, c) => {
                    if let Err(e) = c.validate(node, self.doc) {
                        bad!(name, e.to_string());
                    }
                }
                Kw::Deferred { .. } => {}
                Kw::Broken(message) => {
                    bad!(key, message.clone());
                }
            }
        }
        ok
    }
}

fn key_text(k: &Node) -> Option<String> {
    let s = k.as_scalar()?;
    match s.value {
        Value::Bool(b) => Some(if b { "true" } else { "false" }.to_owned()),
        _ => Some(s.text.to_string()),
    }
}

fn key_is(k: &Node, name: &str) -> bool {
    k.as_scalar().is_some_and(|s| match s.value {
        Value::Str => s.text == name,
        Value::Int(_) | Value::BigInt(_) => s.text == name,
        _ => false,
    })
}
