//! The AWS shared configuration files (`~/.aws/credentials`, `~/.aws/config`), which
//! object_store does not read: a profile's keys, token, region and endpoint become settings;
//! and whether any credentials are to be found at all (if not, requests go unsigned, for
//! public buckets, with a warning).
//!
//! The files are INI as the AWS CLI writes them: `[name]` sections in the credentials file,
//! `[profile name]` (or `[default]`) in the config file, `key = value` lines, `#`/`;`
//! comments; indented lines (nested service settings) are skipped. Parsed here in a few lines
//! rather than with an INI crate, none of which knows AWS's two section spellings.

use std::path::PathBuf;

/// The settings of the profile in force, as object_store names them: the profile named by
/// the `profile` setting, else (when no keys are in the environment) by `AWS_PROFILE`, else
/// `default`. Empty when there is no such profile or file.
pub(crate) fn profile_settings(settings: &[(String, String)]) -> Vec<(String, String)> {
    let named = settings
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("profile") || k.eq_ignore_ascii_case("aws_profile"))
        .map(|(_, v)| v.clone());
    if named.is_none() && env("AWS_ACCESS_KEY_ID").is_some() {
        return Vec::new();
    }
    let name = named
        .or_else(|| env("AWS_PROFILE"))
        .or_else(|| env("AWS_DEFAULT_PROFILE"))
        .unwrap_or_else(|| "default".to_string());
    let mut out = Vec::new();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = |var: &str, name: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(name)))
    };
    if let Some(text) = file("AWS_SHARED_CREDENTIALS_FILE", "credentials").and_then(|p| std::fs::read_to_string(p).ok())
    {
        out.extend(section(&text, &name, false));
    }
    if let Some(text) = file("AWS_CONFIG_FILE", "config").and_then(|p| std::fs::read_to_string(p).ok()) {
        for (k, v) in section(&text, &name, true) {
            if !out.iter().any(|(have, _)| *have == k) {
                out.push((k, v));
            }
        }
    }
    let region_in_env = env("AWS_REGION").is_some() || env("AWS_DEFAULT_REGION").is_some();
    out.into_iter()
        .filter_map(|(k, v)| {
            let key = match k.as_str() {
                "aws_access_key_id" | "aws_secret_access_key" | "aws_session_token" => k,
                "region" if !region_in_env => "aws_region".to_string(),
                "endpoint_url" if env("AWS_ENDPOINT_URL").is_none() => "aws_endpoint".to_string(),
                _ => return None,
            };
            Some((key, v))
        })
        .collect()
}

/// Whether credentials may be found by object_store's chain: keys in the settings or the
/// environment, a web identity token, a container's credentials, or an EC2 machine's
/// instance metadata.
pub(crate) fn aws_credentials_known(settings: &[(String, String)]) -> bool {
    let given = settings.iter().any(|(k, _)| {
        matches!(
            k.to_ascii_lowercase().as_str(),
            "key" | "aws_access_key_id" | "access_key_id" | "token" | "aws_session_token"
        )
    });
    given
        || [
            "AWS_ACCESS_KEY_ID",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        ]
        .iter()
        .any(|v| env(v).is_some())
        || on_ec2()
}

fn on_ec2() -> bool {
    ["/sys/devices/virtual/dmi/id/sys_vendor", "/sys/hypervisor/uuid"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .any(|t| t.contains("Amazon EC2") || t.starts_with("ec2"))
}

/// Says once per bucket that its requests go unsigned.
pub(crate) fn warn_anonymous(url: &str) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let bucket = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_default();
    if let Ok(mut said) = SAID.lock()
        && !said.contains(&bucket)
    {
        said.push(bucket.clone());
        crate::warn::warn(&format!(
            "no AWS credentials found (environment, ~/.aws profiles, instance metadata): requests to s3://{bucket} are unsigned, as for a public bucket"
        ));
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The `key = value` pairs of profile `name` in an AWS INI file (`config`: sections are
/// `[profile name]`, except `[default]`).
fn section(text: &str, name: &str, config: bool) -> Vec<(String, String)> {
    let want = if config && name != "default" {
        format!("profile {name}")
    } else {
        name.to_string()
    };
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(head) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let head = head.split_whitespace().collect::<Vec<_>>().join(" ");
            inside = head == want;
            continue;
        }
        if inside && let Some((k, v)) = line.split_once('=') {
            out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::section;

    #[test]
    fn sections_of_both_files() {
        let creds = "[default]\naws_access_key_id = A\naws_secret_access_key=B\n\n[work]\naws_access_key_id = C\n";
        assert_eq!(
            section(creds, "default", false),
            [
                ("aws_access_key_id".to_string(), "A".to_string()),
                ("aws_secret_access_key".to_string(), "B".to_string())
            ]
        );
        assert_eq!(
            section(creds, "work", false),
            [("aws_access_key_id".to_string(), "C".to_string())]
        );
        let config = "[default]\nregion = us-west-2\n[profile  work]\nregion = eu-west-1\ns3 =\n  max_concurrent_requests = 20\nendpoint_url = http://127.0.0.1:9000\n";
        assert_eq!(
            section(config, "default", true),
            [("region".to_string(), "us-west-2".to_string())]
        );
        assert_eq!(
            section(config, "work", true),
            [
                ("region".to_string(), "eu-west-1".to_string()),
                ("s3".to_string(), String::new()),
                ("endpoint_url".to_string(), "http://127.0.0.1:9000".to_string())
            ]
        );
        assert!(section(config, "work", false).is_empty());
    }
}
