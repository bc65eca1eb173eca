//! Errors loading and compiling schemas, and the violations validation reports.

use asdf_yaml::Span;

/// Why an instance fails a custom keyword, or why a keyword's value does not compile: the
/// implementation's own error type (its `Display` is the violation's message).
pub type KeywordError = Box<dyn std::error::Error + Send + Sync>;

/// A schema that cannot be loaded or compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema text is not valid YAML.
    #[error("schema {uri}: {source}")]
    Parse {
        /// The schema's URI or file.
        uri: String,
        /// The YAML error (with line:column).
        #[source]
        source: asdf_yaml::Error,
    },
    /// A `$ref` (or requested schema) that no document or id matches.
    #[error("cannot resolve `{reference}` against {base}")]
    Unresolvable {
        /// The reference.
        reference: String,
        /// The base URI it was resolved against.
        base: String,
    },
    /// A keyword with a value of the wrong shape.
    #[error("{location}: {problem}")]
    Invalid {
        /// `uri#/pointer` of the keyword.
        location: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// A `pattern` or `patternProperties` key that is not a valid regular expression.
    #[error("{location}: bad regular expression `{pattern}`: {source}")]
    Regex {
        /// `uri#/pointer` of the keyword.
        location: String,
        /// The expression.
        pattern: String,
        /// The regex error.
        #[source]
        source: Box<regex::Error>,
    },
    /// A custom keyword rejected its value.
    #[error("{location}: keyword `{keyword}`: {source}")]
    Keyword {
        /// `uri#/pointer` of the keyword.
        location: String,
        /// The keyword.
        keyword: String,
        /// What the keyword's implementation reported.
        #[source]
        source: KeywordError,
    },
}

/// One way an instance fails a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the failing node in the instance.
    pub instance: String,
    /// Position of the failing node in the YAML text (default for built trees).
    pub span: Span,
    /// `uri#/pointer` of the failing keyword in its schema.
    pub schema: String,
    /// The keyword.
    pub keyword: String,
    /// A message in the style of Python's jsonschema (`'x' is a required property`).
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.instance.is_empty() { "/" } else { &self.instance };
        write!(f, "{at} (line {}): {} [{}]", self.span, self.message, self.schema)
    }
}
