//! Validates a tree against an extension's schemas as well as the standard's.
//!
//! `cargo run -p asdf-examples --example validate_extension`

const SCHEMA: &str = r#"%YAML 1.1
---
$schema: http://stsci.edu/schemas/yaml-schema/draft-01
id: http://example.org/schemas/exposure-1.0.0
type: object
properties:
  seconds: {type: number, minimum: 0}
  filter: {enum: [F090W, F150W, F444W]}
required: [seconds, filter]
...
"#;

const MANIFEST: &str = "id: http://example.org/manifests/example-1.0.0
extension_uri: http://example.org/extensions/example-1.0.0
tags:
- {tag_uri: 'tag:example.org:exposure-1.0.0', schema_uri: 'http://example.org/schemas/exposure-1.0.0'}
";

/// The schema violations of `tree` (YAML of an ASDF tree) under the standard's schemas and
/// the example extension's.
pub fn violations(tree: &str) -> Result<Vec<String>, asdf::Error> {
    let mut schemas = asdf::schemas_to_extend()?;
    schemas.add_schema(SCHEMA.as_bytes())?;
    schemas.add_manifest(MANIFEST.as_bytes())?;
    let mut file = asdf::AsdfFile::new(asdf::Version::STANDARD_LATEST)?;
    file.set_tree_yaml(tree.as_bytes())?;
    let report = file.validate(Some(&schemas), None)?;
    Ok(report.violations.iter().map(ToString::to_string).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tree = "%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n\
                exposure: !<tag:example.org:exposure-1.0.0> {seconds: -3, filter: F200W}\n...\n";
    for v in violations(tree)? {
        println!("{v}");
    }
    Ok(())
}
