//! The stores behind URLs (object_store's, set up from the options) and the runtime that
//! drives their requests.

use crate::error::{AnswerError, Error, Waited, answer_err};
use crate::location::{Location, Use, locate};
use crate::options::RemoteOptions;
use crate::profiles;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path as StorePath;
use object_store::{ClientConfigKey, ClientOptions, ObjectStore, RetryConfig};
use std::io;
use std::sync::{Arc, OnceLock};

/// The runtime that drives every store's requests (two worker threads; callers wait on a
/// channel, so a caller inside another async runtime blocks its thread but does not panic).
pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, Error> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("asdf-remote")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| Error::Runtime(io::Error::other(e.clone())))
}

pub(crate) fn run<T: Send + 'static>(fut: impl std::future::Future<Output = T> + Send + 'static) -> Result<T, Error> {
    let rt = runtime()?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv()
        .map_err(|_| Error::Runtime(io::Error::other("a request was dropped by the runtime")))
}

/// Runs `fut` (which may borrow the caller's buffers) on the I/O runtime and waits for it:
/// on this thread, or, when this thread is itself inside an async runtime (where blocking on
/// another would panic), on a thread of the executor's pool (`asdf_codecs::exec`, two
/// threads at least), which is in none.
pub(crate) fn block_on<F: std::future::Future + Send>(fut: F) -> Result<F::Output, Error>
where
    F::Output: Send,
{
    use asdf_layout::compression::exec;
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_err() {
        return Ok(rt.block_on(fut));
    }
    let two = exec::threads().max(2);
    Ok(exec::with_threads(Some(two), || exec::join(|| rt.block_on(fut), || ())).0)
}

pub(crate) use crate::error::CONNECT_TIMEOUT;

/// `fut` within `deadline`, or the deadline's error (which names what was `waited` for).
pub(crate) async fn within<T>(
    deadline: std::time::Duration,
    waited: Waited,
    fut: impl std::future::Future<Output = object_store::Result<T>>,
) -> object_store::Result<T> {
    within_left(deadline, deadline, waited, fut).await
}

/// `fut` within `left`, what remains of `deadline` (one operation's deadline shared by its
/// requests), or the error of `deadline`: the deadline a message states is the one kept.
pub(crate) async fn within_left<T>(
    deadline: std::time::Duration,
    left: std::time::Duration,
    waited: Waited,
    fut: impl std::future::Future<Output = object_store::Result<T>>,
) -> object_store::Result<T> {
    tokio::time::timeout(left, fut)
        .await
        .unwrap_or_else(|_| Err(answer_err(AnswerError::Deadline { deadline, waited })))
}

/// The HTTP client of `http(s)://` stores: object_store's settings that matter here
/// (timeouts, plain HTTP allowed, no transparent decompression, which would break lengths)
/// and a redirect policy: at most 10, and only to the same origin unless allowed.
#[derive(Debug)]
struct RedirectPolicyConnector {
    request_timeout: std::time::Duration,
    cross_origin: bool,
}

impl object_store::client::HttpConnector for RedirectPolicyConnector {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<object_store::client::HttpClient> {
        let cross_origin = self.cross_origin;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                return attempt.error("more than 10 redirects");
            }
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if same || cross_origin {
                attempt.follow()
            } else {
                let to = attempt.url().origin().ascii_serialization();
                attempt.error(format!(
                    "a redirect to another origin ({to}) is not followed (to follow it, {})",
                    crate::error::CROSS_ORIGIN_HOW
                ))
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(concat!("asdf-rs/", env!("CARGO_PKG_VERSION")))
            .timeout(self.request_timeout)
            .connect_timeout(self.request_timeout.min(CONNECT_TIMEOUT))
            .redirect(policy)
            .build()
            .map_err(|e| object_store::Error::Generic {
                store: "HTTP",
                source: Box::new(e),
            })?;
        Ok(object_store::client::HttpClient::new(client))
    }
}

/// fsspec's names for the S3 settings, mapped onto object_store's.
fn s3_key(key: &str) -> &str {
    match key {
        "endpoint_url" | "endpoint" => "aws_endpoint",
        "region" | "region_name" => "aws_region",
        "key" | "aws_access_key_id" => "aws_access_key_id",
        "secret" | "aws_secret_access_key" => "aws_secret_access_key",
        "token" | "session_token" | "aws_session_token" => "aws_session_token",
        other => other,
    }
}

/// How a bucket of S3 is listed by this crate's own requests (`crate::listing`), which
/// keep every key as S3 gives it.
pub(crate) enum S3Listing {
    /// By presigned requests (object_store's signer, its credentials).
    Signed,
    /// Unsigned, to this bucket endpoint (`https://s3.REGION.amazonaws.com/BUCKET`, or the
    /// endpoint set).
    Unsigned(String),
    /// Through object_store's listing (S3 Express One Zone, whose endpoints and sessions are
    /// object_store's own).
    ObjectStore,
}

/// The store behind a URL, typed where writes need more than [`ObjectStore`].
pub(crate) enum Built {
    Http(object_store::http::HttpStore),
    S3(object_store::aws::AmazonS3, S3Listing),
    Gcs(object_store::gcp::GoogleCloudStorage),
    Azure(object_store::azure::MicrosoftAzure),
}

impl Built {
    /// The store's multipart uploads (a plain HTTP server has none).
    pub(crate) fn multipart(&self) -> Option<&dyn object_store::multipart::MultipartStore> {
        match self {
            Built::Http(_) => None,
            Built::S3(s, _) => Some(s),
            Built::Gcs(s) => Some(s),
            Built::Azure(s) => Some(s),
        }
    }

    /// The store's paged listing (a plain HTTP server has none).
    pub(crate) fn paginated(&self) -> Option<&dyn object_store::list::PaginatedListStore> {
        match self {
            Built::Http(_) => None,
            Built::S3(s, _) => Some(s),
            Built::Gcs(s) => Some(s),
            Built::Azure(s) => Some(s),
        }
    }

    pub(crate) fn into_dyn(self) -> Arc<dyn ObjectStore> {
        match self {
            Built::Http(s) => Arc::new(s),
            Built::S3(s, _) => Arc::new(s),
            Built::Gcs(s) => Arc::new(s),
            Built::Azure(s) => Arc::new(s),
        }
    }
}

/// The store of the object `text` names, and the object's path in it (see [`crate::location`]).
pub(crate) fn build_store(text: &str, opts: &RemoteOptions) -> Result<(Arc<dyn ObjectStore>, StorePath), Error> {
    let (b, path) = build_typed(text, opts, Use::Object)?;
    Ok((b.into_dyn(), path))
}

/// The store `text` names (an object's or a prefix's) and the path in it.
pub(crate) fn build_typed(text: &str, opts: &RemoteOptions, what: Use) -> Result<(Built, StorePath), Error> {
    let Location { base: url, path } = locate(text, what)?;
    let url = &url;
    let store_err = |source| crate::location::store_error(text, source);
    let retry = RetryConfig {
        max_retries: opts.retries,
        retry_timeout: opts.deadline,
        ..RetryConfig::default()
    };
    let connect_timeout = opts.request_timeout.min(CONNECT_TIMEOUT);
    let client = || {
        ClientOptions::new()
            .with_timeout(opts.request_timeout)
            .with_connect_timeout(connect_timeout)
    };
    // The same timeouts as configuration keys: set on a builder made from the environment
    // without replacing its client options (`AZURE_ALLOW_HTTP`, proxies and the like, which
    // `with_client_options` would drop).
    let timeouts = [
        (
            ClientConfigKey::Timeout,
            format!("{}ms", opts.request_timeout.as_millis()),
        ),
        (
            ClientConfigKey::ConnectTimeout,
            format!("{}ms", connect_timeout.as_millis()),
        ),
    ];
    let container = url.host_str().unwrap_or_default();
    let anonymous = |settings: &[(String, String)]| {
        opts.anonymous
            || settings
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("anon") && matches!(v.as_str(), "1" | "true" | "True" | "yes"))
    };
    match url.scheme() {
        "http" | "https" => {
            // The whole URL (its escapes as written, its query kept), the object's path empty.
            let store = HttpBuilder::new()
                .with_url(url.as_str())
                .with_retry(retry)
                .with_client_options(client().with_allow_http(true))
                .with_http_connector(RedirectPolicyConnector {
                    request_timeout: opts.request_timeout,
                    cross_origin: opts.cross_origin_redirects,
                })
                .build()
                .map_err(store_err)?;
            Ok((Built::Http(store), path))
        }
        "s3" | "s3a" => {
            // The credential chain of the AWS SDKs as object_store knows it: AWS_* variables,
            // web identity tokens, ECS and EC2 instance metadata; then the shared config and
            // credentials files (profiles); settings given override them all.
            let mut b = AmazonS3Builder::from_env()
                .with_bucket_name(container)
                .with_retry(retry);
            let mut endpoint = std::env::var("AWS_ENDPOINT_URL")
                .ok()
                .or_else(|| std::env::var("AWS_ENDPOINT").ok());
            let profile = profiles::profile_settings(&opts.settings);
            for (k, v) in profile.iter().chain(&opts.settings) {
                let key = s3_key(&k.to_ascii_lowercase()).to_string();
                if key == "aws_endpoint" || key == "aws_endpoint_url" {
                    endpoint = Some(v.clone());
                    continue;
                }
                if key == "anon" || key == "profile" || key == "aws_profile" {
                    continue;
                }
                match key.parse::<AmazonS3ConfigKey>() {
                    Ok(k) => b = b.with_config(k, v.clone()),
                    Err(source) => return Err(store_err(source)),
                }
            }
            for (k, v) in timeouts {
                b = b.with_config(AmazonS3ConfigKey::Client(k), v);
            }
            if let Some(e) = endpoint {
                if e.starts_with("http://") {
                    b = b.with_config(AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp), "true");
                }
                b = b.with_endpoint(e).with_virtual_hosted_style_request(false);
            }
            let anon =
                anonymous(&opts.settings) || (profile.is_empty() && !profiles::aws_credentials_known(&opts.settings));
            if anon {
                if !anonymous(&opts.settings) {
                    profiles::warn_anonymous(text);
                }
                b = b.with_skip_signature(true);
            }
            let listing = s3_listing(&b, container, anon);
            let store = b.build().map_err(store_err)?;
            Ok((Built::S3(store, listing), path))
        }
        "gs" | "gcs" => {
            use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(container)
                .with_retry(retry);
            for (k, v) in timeouts {
                b = b.with_config(GoogleConfigKey::Client(k), v);
            }
            for (k, v) in config_keys::<GoogleConfigKey>(&opts.settings).map_err(store_err)? {
                b = b.with_config(k, v);
            }
            if anonymous(&opts.settings) {
                b = b.with_skip_signature(true);
            }
            Ok((Built::Gcs(b.build().map_err(store_err)?), path))
        }
        "az" | "abfs" | "abfss" => {
            use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
            // az://container/path, with the account from the settings or the environment
            // (AZURE_STORAGE_ACCOUNT_NAME); abfs://container@account.dfs.core.windows.net/path.
            let (container, account) = match url.username() {
                "" => (container, None),
                c => (c, container.split('.').next()),
            };
            let mut b = MicrosoftAzureBuilder::from_env()
                .with_container_name(container)
                .with_retry(retry);
            for (k, v) in timeouts {
                b = b.with_config(AzureConfigKey::Client(k), v);
            }
            if let Some(a) = account {
                b = b.with_account(a);
            }
            for (k, v) in config_keys::<AzureConfigKey>(&opts.settings).map_err(store_err)? {
                b = b.with_config(k, v);
            }
            if anonymous(&opts.settings) {
                b = b.with_skip_signature(true);
            }
            Ok((Built::Azure(b.build().map_err(store_err)?), path))
        }
        _ => Err(Error::Scheme { url: text.to_string() }),
    }
}

/// How the bucket `bucket` of the store `b` builds is listed (see [`S3Listing`]): its bucket
/// endpoint worked out as object_store's builder does, for unsigned requests.
fn s3_listing(b: &AmazonS3Builder, bucket: &str, unsigned: bool) -> S3Listing {
    let value = |k| b.get_config_value(&k);
    if value(AmazonS3ConfigKey::S3Express).is_some_and(|v| v == "true") {
        return S3Listing::ObjectStore;
    }
    if !unsigned {
        return S3Listing::Signed;
    }
    let region = value(AmazonS3ConfigKey::Region).unwrap_or_else(|| "us-east-1".to_string());
    let virtual_hosted = value(AmazonS3ConfigKey::VirtualHostedStyleRequest).is_some_and(|v| v == "true");
    let endpoint = value(AmazonS3ConfigKey::S3Endpoint).or_else(|| value(AmazonS3ConfigKey::Endpoint));
    S3Listing::Unsigned(match (endpoint, virtual_hosted) {
        (Some(e), true) => e,
        (Some(e), false) => format!("{}/{bucket}", e.trim_end_matches('/')),
        (None, true) => format!("https://{bucket}.s3.{region}.amazonaws.com"),
        (None, false) => format!("https://s3.{region}.amazonaws.com/{bucket}"),
    })
}

/// The settings as a store's configuration keys (`anon` aside: it is read by the caller).
fn config_keys<K: std::str::FromStr<Err = object_store::Error>>(
    settings: &[(String, String)],
) -> Result<Vec<(K, String)>, object_store::Error> {
    settings
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("anon"))
        .map(|(k, v)| Ok((k.to_ascii_lowercase().parse::<K>()?, v.clone())))
        .collect()
}
