//! How files are opened: [`OpenOptions`] and the [`ReferencePolicy`].

/// Options for [`crate::Open`] (all at once: [`crate::Open::options`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Validate the tree against the schemas of its tags (default on). Violations are
    /// reported as [`crate::Warning::Invalid`] on the file, which opens: reading never refuses a file
    /// whose data Python asdf reads. See [`OpenOptions::strict`].
    pub validate: bool,
    /// With `validate`: refuse a file whose tree violates its schemas ([`crate::Error::Invalid`])
    /// instead of opening it with warnings (default off; `asdf-cli validate` is strict, and
    /// writing always is).
    pub strict: bool,
    /// Verify block checksums whenever a block is read (default off).
    pub verify_checksums: bool,
    /// Memory-map the file (default off). A mapped file that another process truncates while
    /// it is read kills the reading process with SIGBUS, which no error handling can catch;
    /// the default reads with positioned reads instead (as Python asdf does by default since
    /// 4.0). Turn it on for speed on files nobody else writes (`cargo xtask bench` measures
    /// both).
    pub memmap: bool,
    /// Layout limits.
    pub layout_limits: asdf_layout::Limits,
    /// YAML limits.
    pub yaml_limits: asdf_yaml::Limits,
    /// Which other files `$ref`s and external array sources may name.
    pub references: ReferencePolicy,
    /// The schemas the tree is read with: its defaults filled (files before 1.6.0, as
    /// Python asdf's default open does) and, with `validate`, validated. `None` (the default)
    /// means the standard's schemas ([`crate::schemas`]); give more with
    /// [`crate::schemas_to_extend`] and [`asdf_schema::AsdfSchemas::add_dir`] (an extension's
    /// schemas and manifests, as Python asdf has them from its installed packages).
    pub schemas: Option<std::sync::Arc<asdf_schema::AsdfSchemas>>,
    /// Take any scalar as a mapping key (null, floats, timestamps), as PyYAML and so Python
    /// asdf read them, each with a warning (`YamlWarning::NonstandardKey`; default off: the
    /// standard's keys are strings, integers and booleans, and other keys are refused with
    /// their line). Pointers name such keys by no token.
    pub any_scalar_keys: bool,
    /// Keep mapping keys as written, as libasdf (the C library) reads a tree: any node may be
    /// a key, and keys are the same only when their text is (`1`, `0x1` and `01`, or `true`
    /// and `True`, stay apart, where PyYAML makes one key of each group). For the C API
    /// (default off).
    pub keys_as_written: bool,
    /// Threads for the parallel work of this file's reads (decoding, checksums, `verify`):
    /// `None` (the default) is `ASDF_RS_THREADS`, else the machine's cores, at most 8; 1 is
    /// none beside the caller's. Each count has its own pool, made on first use.
    pub threads: Option<usize>,
}

pub use asdf_core_types::ReferencePolicy;

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            validate: true,
            strict: false,
            verify_checksums: false,
            memmap: false,
            layout_limits: asdf_layout::Limits::default(),
            yaml_limits: asdf_yaml::Limits::default(),
            references: ReferencePolicy::default(),
            schemas: None,
            any_scalar_keys: false,
            keys_as_written: false,
            threads: None,
        }
    }
}

impl OpenOptions {
    /// Sets validation on read.
    #[must_use]
    pub fn validate(mut self, yes: bool) -> Self {
        self.validate = yes;
        self
    }
    /// Sets strict validation on read (violations are errors, not warnings).
    #[must_use]
    pub fn strict(mut self, yes: bool) -> Self {
        self.strict = yes;
        self
    }
    /// Sets checksum verification on every block read.
    #[must_use]
    pub fn verify_checksums(mut self, yes: bool) -> Self {
        self.verify_checksums = yes;
        self
    }
    /// Sets which files references may open.
    #[must_use]
    pub fn references(mut self, policy: ReferencePolicy) -> Self {
        self.references = policy;
        self
    }
    /// Sets the schemas the tree is read with (see [`OpenOptions::schemas`]).
    #[must_use]
    pub fn schemas(mut self, schemas: std::sync::Arc<asdf_schema::AsdfSchemas>) -> Self {
        self.schemas = Some(schemas);
        self
    }
    /// Sets whether any scalar may be a mapping key (see [`OpenOptions::any_scalar_keys`]).
    #[must_use]
    pub fn any_scalar_keys(mut self, yes: bool) -> Self {
        self.any_scalar_keys = yes;
        self
    }
    /// Sets whether keys are kept as written (see [`OpenOptions::keys_as_written`]).
    #[must_use]
    pub fn keys_as_written(mut self, yes: bool) -> Self {
        self.keys_as_written = yes;
        self
    }
    /// Sets the threads of this file's reads (see [`OpenOptions::threads`]).
    #[must_use]
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }
    /// Sets memory mapping.
    #[must_use]
    pub fn memmap(mut self, yes: bool) -> Self {
        self.memmap = yes;
        self
    }
}
