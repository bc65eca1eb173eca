//! Helpers shared by the facade's test files.

use asdf::{AsdfFile, Node, NodeKind};

/// JSON pointers of the ndarray nodes of `f`'s tree, in walk order; with `nested`, also of
/// ndarrays inside ndarrays (mask arrays).
pub fn ndarray_pointers(f: &AsdfFile, nested: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Node, String)> = vec![(f.tree(), String::new())];
    while let Some((n, p)) = stack.pop() {
        if n.tag.as_deref().is_some_and(asdf::is_ndarray_tag) {
            out.push(p.clone());
            if !nested {
                continue;
            }
        }
        match &n.kind {
            NodeKind::Mapping(m) => {
                for (k, v) in &m.entries {
                    let key = k
                        .as_scalar()
                        .map(|s| asdf::escape_pointer_token(&s.text))
                        .unwrap_or_default();
                    stack.push((v, format!("{p}/{key}")));
                }
            }
            NodeKind::Sequence(s) => stack.extend(s.items.iter().enumerate().map(|(i, v)| (v, format!("{p}/{i}")))),
            _ => {}
        }
    }
    out
}

/// The bytes of `f` written as `options` say, in memory.
pub fn bytes(f: &AsdfFile, options: &asdf::WriteOptions) -> Result<Vec<u8>, asdf::Error> {
    f.write(asdf::Target::Bytes, options).map(asdf::Written::into_bytes)
}

/// The bytes of `f` written as FITS, in memory.
pub fn fits_bytes(f: &AsdfFile, fits: asdf::FitsWriteOptions) -> Result<Vec<u8>, asdf::Error> {
    bytes(f, &asdf::WriteOptions::default().fits(fits))
}
