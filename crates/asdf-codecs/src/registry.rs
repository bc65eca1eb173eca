//! The [`Registry`]: labels to codecs, with every codec this build has by default.

use std::collections::BTreeMap;
use std::sync::Arc;

#[cfg(feature = "blsc")]
use crate::blosc::Blosc1;
#[cfg(feature = "bls2")]
use crate::blosc::{AbacusBlosc2, Blosc2};
use crate::bzp2::Bzp2;
use crate::codec::{Codec, Label};
use crate::lz4::Lz4;
#[cfg(feature = "lz4f")]
use crate::lz4f::Lz4Frame;
use crate::zlib::Zlib;
#[cfg(feature = "zstd")]
use crate::zstd::Zstd;

/// Maps labels to codecs.
#[derive(Debug, Clone)]
pub struct Registry {
    codecs: BTreeMap<Label, Arc<dyn Codec>>,
}

impl Default for Registry {
    /// Every codec built into this crate (depending on features).
    fn default() -> Self {
        // Inserted under their known labels: asking each codec would touch code of every
        // codec when a file is opened (a test checks the labels agree).
        let mut codecs: BTreeMap<Label, Arc<dyn Codec>> = BTreeMap::new();
        codecs.insert(Label::ZLIB, Arc::new(Zlib::default()));
        codecs.insert(Label::BZP2, Arc::new(Bzp2::default()));
        codecs.insert(Label::LZ4, Arc::new(Lz4));
        #[cfg(feature = "zstd")]
        codecs.insert(Label::ZSTD, Arc::new(Zstd::default()));
        #[cfg(feature = "lz4f")]
        codecs.insert(Label::LZ4F, Arc::new(Lz4Frame));
        #[cfg(feature = "blsc")]
        codecs.insert(Label::BLSC, Arc::new(Blosc1::default()));
        #[cfg(feature = "bls2")]
        codecs.insert(Label::BLS2, Arc::new(Blosc2::default()));
        #[cfg(feature = "bls2")]
        codecs.insert(AbacusBlosc2::LABEL, Arc::new(AbacusBlosc2::default()));
        Self { codecs }
    }
}

impl Registry {
    /// The default registry, built once per process and shared.
    #[must_use]
    pub fn shared_default() -> Arc<Registry> {
        static SHARED: std::sync::OnceLock<Arc<Registry>> = std::sync::OnceLock::new();
        SHARED.get_or_init(|| Arc::new(Registry::default())).clone()
    }
}

impl Registry {
    /// A registry with no codecs (only uncompressed blocks can be read).
    #[must_use]
    pub fn empty() -> Self {
        Self {
            codecs: BTreeMap::new(),
        }
    }

    /// Adds or replaces the codec for `codec.label()`.
    pub fn register(&mut self, codec: Arc<dyn Codec>) -> &mut Self {
        self.codecs.insert(codec.label(), codec);
        self
    }

    /// The codec for `label`, if registered.
    #[must_use]
    pub fn get(&self, label: Label) -> Option<&Arc<dyn Codec>> {
        self.codecs.get(&label)
    }

    /// The registered labels, sorted.
    #[must_use]
    pub fn labels(&self) -> Vec<Label> {
        self.codecs.keys().copied().collect()
    }
}
