//! Writing a file as one of the drafts before ASDF 1.0.0 (the ASDF 0.1.0 draft, FINF 0.1.0):
//! the standard's tags become the draft's, and each block is written decoded or encoded with an
//! encoding chain. Reading them is in `legacy`.

use asdf_drafts::chain::{Chain, Encoding};
use asdf_yaml::Node;

use crate::file::AsdfFile;
use asdf_drafts::legacy::{fields_explicit, rename_keys, tagged_paths};

/// The draft tag of a 1.x tag of the standard (`tag:stsci.edu:asdf/NAME-x.y.z`), if it is one.
fn downgrade_tag(tag: &str, dialect: asdf_layout::Dialect) -> Option<String> {
    let (name, _) = tag.strip_prefix("tag:stsci.edu:asdf/")?.rsplit_once('-')?;
    Some(match dialect {
        asdf_layout::Dialect::Finf => {
            let name = if name == "core/asdf" { "core/finf" } else { name };
            format!("tag:stsci.edu:finf/0.1.0/{name}")
        }
        _ => format!("tag:stsci.edu:asdf/0.1.0/{name}"),
    })
}

impl AsdfFile {
    /// Writes this file as a draft before 1.0.0 (`dialect`: [`asdf_layout::Dialect::Asdf010`],
    /// the ASDF 0.1.0 draft's layout, or [`asdf_layout::Dialect::Finf`]): the standard's tags become the
    /// draft's (`tag:stsci.edu:asdf/0.1.0/X`, FINF's `tag:stsci.edu:finf/0.1.0/X` with
    /// `core/finf` at the root and `dtype` for `datatype`), and each block is written decoded,
    /// or encoded with the chain `chain(block index, the array stored in it)` returns (ASDF
    /// 0.1.0 only). A block behind a `quantize` step is written big-endian (what decoding
    /// gives), so its array's `byteorder` becomes `big`. For round trips and for readers of the
    /// drafts; [`AsdfFile::write`] writes today's layout.
    ///
    /// # Errors
    /// [`crate::Error::Usage`] for arrays added since opening (write the file first) or
    /// [`asdf_layout::Dialect::Asdf`]; a chain that cannot encode its block; read and I/O
    /// errors.
    pub(crate) fn write_draft(
        &self,
        out: &mut dyn std::io::Write,
        dialect: asdf_layout::Dialect,
        chain: &dyn Fn(usize, Option<&crate::Array<'_>>) -> Option<Chain>,
    ) -> Result<u64, crate::Error> {
        if !dialect.is_legacy() {
            return Err(crate::Error::Usage(
                "write_draft writes the drafts before 1.0.0 (Asdf010, Finf)",
            ));
        }
        if !self.pending.is_empty() {
            return Err(crate::Error::Usage(
                "write the file before writing it as a draft: it has new arrays",
            ));
        }
        if self.fits.is_some() {
            // Arrays stored in FITS HDUs (`source: fits:SCI,1`) mean nothing outside FITS:
            // the file is first laid out as plain ASDF in memory, every array in a block.
            let plain = crate::open::Open::bytes(self.to_bytes(&crate::WriteOptions::default().validate(false))?)
                .options(self.options.clone().validate(false))
                .open()?;
            return plain.write_draft(out, dialect, chain);
        }
        let mut doc = self.doc()?.clone();
        // The arrays stored in each block, and the chains.
        let mut owner: Vec<Option<crate::Array<'_>>> = (0..self.reader.block_count()).map(|_| None).collect();
        for p in self.array_pointers()? {
            if let Ok(a) = self.array(&p)
                && let crate::Storage::Internal { block } = a.storage()
                && let Some(slot) = owner.get_mut(block)
                && slot.is_none()
            {
                *slot = Some(a);
            }
        }
        let chains: Vec<Option<Chain>> = owner.iter().enumerate().map(|(i, a)| chain(i, a.as_ref())).collect();
        // Arrays behind a quantize step are written big-endian.
        for (i, c) in chains.iter().enumerate() {
            if c.as_ref()
                .is_some_and(|c| c.0.iter().any(|e| matches!(e, Encoding::Quantize { .. })))
                && let Some(a) = &owner[i]
                && let Ok(n) = asdf_yaml::pointer::get_mut(&mut doc, a.pointer())
                && let Some(m) = n.as_mapping_mut()
            {
                m.insert("byteorder", Node::str("big"));
            }
        }
        for path in tagged_paths(&doc.root) {
            let Some(n) = doc.root.at_path_mut(&path) else { continue };
            let ndarray = n.tag.as_deref().is_some_and(asdf_core_types::is_ndarray_tag);
            if let Some(t) = n.tag.as_deref().and_then(|t| downgrade_tag(t, dialect)) {
                n.tag = Some(t.into());
            }
            if ndarray
                && dialect == asdf_layout::Dialect::Finf
                && let Some(m) = n.as_mapping_mut()
            {
                // FINF's fields default to big, not to the array's byte order: each field's
                // (inherited) byte order is written out.
                let order = m.get("byteorder").and_then(Node::as_str).unwrap_or("big").to_owned();
                if let Some(dt) = m.get_mut("datatype") {
                    fields_explicit(dt, &order, true);
                }
                for (k, v) in &mut m.entries {
                    if k.as_str() == Some("datatype") {
                        *k = Node::str("dtype");
                        rename_keys(v, "datatype", "dtype");
                    }
                }
            }
        }
        let prefix = match dialect {
            asdf_layout::Dialect::Finf => "tag:stsci.edu:finf/0.1.0/",
            _ => "tag:stsci.edu:asdf/0.1.0/",
        };
        doc.tag_directives = vec![("!".to_owned(), prefix.to_owned())];
        let tree = asdf_yaml::emit(&doc, &asdf_yaml::EmitOptions::default())?;
        let data: Vec<Vec<u8>> = (0..self.reader.block_count())
            .map(|i| self.reader.read_data(i).map(std::borrow::Cow::into_owned))
            .collect::<Result<_, _>>()?;
        let blocks: Vec<asdf_drafts::LegacyBlock<'_>> = data
            .iter()
            .enumerate()
            .map(|(i, d)| asdf_drafts::LegacyBlock {
                data: d,
                chain: chains[i].as_ref(),
                little_endian: owner[i]
                    .as_ref()
                    .is_some_and(|a| a.byte_order() == asdf_core_types::ByteOrder::Little),
            })
            .collect();
        Ok(asdf_drafts::write_file(out, dialect, &tree, &blocks)?)
    }
}
