//! Writing a file as one of the drafts before ASDF 1.0.0 (the ASDF 0.1.0 draft, FINF 0.1.0):
//! the standard's tags become the draft's, and each block is written decoded or encoded with an
//! encoding chain. Reading them is in `legacy`.

use asdf_drafts::chain::{Chain, Encoding};

use crate::file::AsdfFile;
use asdf_drafts::legacy::downgrade;

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
        let mut doc = self.doc().clone();
        // The arrays stored in each block, and the chains.
        let mut owner: Vec<Option<crate::Array<'_>>> = (0..self.reader.block_count()).map(|_| None).collect();
        for p in self.array_pointers() {
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
        let big: Vec<&str> = chains
            .iter()
            .zip(&owner)
            .filter(|(c, _)| {
                c.as_ref()
                    .is_some_and(|c| c.0.iter().any(|e| matches!(e, Encoding::Quantize { .. })))
            })
            .filter_map(|(_, a)| a.as_ref().map(crate::Array::pointer))
            .collect();
        downgrade(&mut doc, dialect, &big);
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
