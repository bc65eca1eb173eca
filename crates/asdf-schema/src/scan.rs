//! Line scans of the embedded schema and manifest texts: the top-level `id` of a schema and
//! the tags of a manifest, read without a YAML parser. Shared with the build script, which
//! runs them once so that start-up touches no schema text; a text they do not fully
//! understand gives `None` and is parsed instead. The tests check them against full parses.

/// A manifest as [`scan_manifest`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedManifest<'a> {
    /// `id`.
    pub id: &'a str,
    /// `extension_uri` (empty when absent).
    pub extension_uri: &'a str,
    /// `asdf_standard_requirement` when it is a single version (digits and dots).
    pub standard: Option<&'a str>,
    /// `asdf_standard_requirement` when it is a range: its `gte` and `lt` bounds.
    pub standard_range: (Option<&'a str>, Option<&'a str>),
    /// (`tag_uri`, `schema_uri`) of each tag, in file order.
    pub tags: Vec<(&'a str, &'a str)>,
}

/// A URI as the embedded files write it: a plain scalar that starts with a letter and holds
/// a `:` and no character that would need quoting (so it is a string in every YAML schema).
/// Double or single quotes around it are allowed too.
fn plain_uri(v: &str) -> Option<&str> {
    let v = match v.as_bytes().first() {
        Some(&q @ (b'"' | b'\'')) if v.len() >= 2 && v.as_bytes()[v.len() - 1] == q => &v[1..v.len() - 1],
        _ => v,
    };
    let ok = v.starts_with(|c: char| c.is_ascii_alphabetic())
        && v.contains(':')
        && !v.contains(": ")
        && !v.ends_with(':')
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b":/._~#+-?=&%".contains(&b));
    ok.then_some(v)
}

/// The top-level `id` (without fragment) of a one-document schema written in block style (a
/// column-0 `id: URI` line), or `None` when the text is not that simple (it is parsed instead).
pub fn scan_top_level_id(text: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(text).ok()?;
    let mut id = None;
    let mut documents = 0;
    for line in text.lines() {
        if line.starts_with("---") {
            documents += 1;
        } else if line.starts_with("$ref:") || line.starts_with('{') {
            return None;
        } else if let Some(v) = line.strip_prefix("id: ") {
            if id.is_some() {
                return None;
            }
            id = Some(plain_uri(v.trim_end())?.split('#').next()?);
        }
    }
    (documents <= 1).then_some(id?)
}

/// A manifest read line by line, for manifests written as the embedded ones are (block
/// style, one line per value, `title`/`description` the only free text); `None` for
/// anything else (the caller parses it).
pub fn scan_manifest(text: &[u8]) -> Option<ScannedManifest<'_>> {
    #[derive(PartialEq)]
    enum In {
        Top,
        Prose,
        Requirement,
        Tags,
        TagProse,
    }
    let text = std::str::from_utf8(text).ok()?;
    let (mut id, mut extension_uri, mut standard) = (None, None, None);
    let mut range = (None, None);
    let mut tags: Vec<(Option<&str>, Option<&str>)> = Vec::new();
    let mut state = In::Top;
    let mut documents = 0;
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') || (documents == 0 && line.starts_with('%')) {
            continue;
        }
        if line.starts_with("---") {
            documents += 1;
            if line != "---" || documents > 1 {
                return None;
            }
            continue;
        }
        if line == "..." {
            continue;
        }
        if !line.starts_with([' ', '-']) {
            let (k, v) = line.split_once(':')?;
            let v = v.trim();
            state = In::Top;
            match k {
                "id" => id = Some(plain_uri(v)?),
                "extension_uri" => extension_uri = Some(plain_uri(v)?),
                // A mapping (`gte: ...`, `lt: ...`): a range of versions.
                "asdf_standard_requirement" if v.is_empty() => state = In::Requirement,
                "asdf_standard_requirement" => {
                    if !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                        return None;
                    }
                    standard = Some(v);
                }
                "title" | "description" => state = In::Prose,
                "tags" if v.is_empty() => state = In::Tags,
                _ => return None,
            }
            continue;
        }
        if state == In::Prose {
            if !line.starts_with(' ') {
                return None;
            }
            continue;
        }
        if state == In::Requirement {
            let (k, v) = line.strip_prefix("  ")?.split_once(':')?;
            let v = v.trim();
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return None;
            }
            match k {
                "gte" if range.0.is_none() => range.0 = Some(v),
                "lt" if range.1.is_none() => range.1 = Some(v),
                _ => return None,
            }
            continue;
        }
        if state == In::Top {
            return None;
        }
        let entry = if let Some(rest) = line.strip_prefix("- ") {
            tags.push((None, None));
            rest
        } else if let Some(rest) = line.strip_prefix("  ")
            && !rest.starts_with(' ')
        {
            rest
        } else if state == In::TagProse && line.starts_with("   ") {
            continue;
        } else {
            return None;
        };
        let (k, v) = entry.split_once(':')?;
        let v = v.trim();
        let slot = tags.last_mut()?;
        state = In::Tags;
        match k {
            "tag_uri" if slot.0.is_none() => slot.0 = Some(plain_uri(v)?),
            "schema_uri" if slot.1.is_none() => slot.1 = Some(plain_uri(v)?),
            "title" | "description" => state = In::TagProse,
            _ => return None,
        }
    }
    if documents != 1 {
        return None;
    }
    let tags = tags
        .into_iter()
        .map(|(t, s)| Some((t?, s?)))
        .collect::<Option<Vec<_>>>()?;
    Some(ScannedManifest {
        id: id?,
        extension_uri: extension_uri.unwrap_or_default(),
        standard,
        standard_range: range,
        tags,
    })
}
