//! Where the blob store lives (`skillbox serve --blob-store URL`): a folder on this machine
//! (`file:///…`, the default under the data folder) or a bucket of an object store
//! (`s3://bucket/prefix`; `gs://` and `az://` too, as the `object_store` crate gives them)
//! configured by the provider's usual environment variables.
//!
//! The URL names a place, never credentials: a URL holding a user name, a password or a query
//! (where signed tokens travel) is refused, and every message shows the URL without them.

use std::path::PathBuf;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::AmazonS3ConfigKey;
use url::Url;

use crate::blobs::BlobError;

/// The flag a location comes from, named in every message about it.
const FLAG: &str = "--blob-store";
/// What a location may look like, for messages.
const EXPECTED: &str = "file:///absolute/folder or s3://bucket/prefix (also gs://bucket/prefix and az://container/prefix)";

/// Where the blob store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobLocation {
    /// A folder on this machine, private to the runtime's user.
    Local(PathBuf),
    /// A bucket (or container) of an object store, with an optional key prefix.
    Remote(RemoteLocation),
}

/// A bucket of an object store and the prefix of the keys used in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLocation {
    kind: RemoteKind,
    bucket: String,
    prefix: String,
}

/// The object stores a location may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RemoteKind {
    AmazonS3,
    GoogleCloudStorage,
    MicrosoftAzure,
}

impl RemoteKind {
    fn scheme(self) -> &'static str {
        match self {
            RemoteKind::AmazonS3 => "s3",
            RemoteKind::GoogleCloudStorage => "gs",
            RemoteKind::MicrosoftAzure => "az",
        }
    }
}

impl BlobLocation {
    /// Parse a `--blob-store` value.
    ///
    /// # Errors
    /// [`BlobError::Invalid`] naming `--blob-store` for anything but a supported URL without
    /// credentials in it.
    pub fn parse(text: &str) -> Result<Self, BlobError> {
        // The text is never repeated: it could hold a secret the URL parser could not place.
        let url = Url::parse(text).map_err(|error| {
            BlobError::Invalid(format!(
                "{FLAG} is not a URL ({error}); it must look like {EXPECTED}"
            ))
        })?;
        if !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return Err(BlobError::Invalid(format!(
                "{FLAG} `{}` holds credentials, a query or a fragment; name only the place in the URL and give credentials in the environment (for S3: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
                shown(&url)
            )));
        }
        let kind = match url.scheme() {
            "file" => return local(&url),
            "s3" | "s3a" => RemoteKind::AmazonS3,
            "gs" => RemoteKind::GoogleCloudStorage,
            "az" | "azure" => RemoteKind::MicrosoftAzure,
            other => {
                return Err(BlobError::Invalid(format!(
                    "{FLAG} has the scheme `{other}`, which is not supported; it must look like {EXPECTED}"
                )));
            }
        };
        let bucket = url.host_str().unwrap_or_default().to_owned();
        if bucket.is_empty() {
            return Err(BlobError::Invalid(format!(
                "{FLAG} `{}` names no bucket; it must look like {EXPECTED}",
                shown(&url)
            )));
        }
        // The URL parser has resolved `.` and `..` already: `s3://b/x/../y` is `s3://b/y`.
        let prefix = url.path().trim_matches('/').to_owned();
        Ok(BlobLocation::Remote(RemoteLocation {
            kind,
            bucket,
            prefix,
        }))
    }

    /// The location as it may be shown: a folder's path, or the URL (it holds no credentials).
    #[must_use]
    pub fn shown(&self) -> String {
        match self {
            BlobLocation::Local(folder) => folder.display().to_string(),
            BlobLocation::Remote(remote) => remote.to_string(),
        }
    }
}

impl std::fmt::Display for RemoteLocation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}://{}", self.kind.scheme(), self.bucket)?;
        if !self.prefix.is_empty() {
            write!(formatter, "/{}", self.prefix)?;
        }
        Ok(())
    }
}

impl RemoteLocation {
    /// The object store this location names, configured from `environment` (the process's
    /// environment variables, as `(name, value)`; for GCS and Azure the process's own are
    /// read), and the prefix of the keys in it (empty for the whole bucket). Nothing is sent
    /// yet.
    ///
    /// # Errors
    /// A configuration the store refuses, or an endpoint that would send blobs in the clear.
    pub(crate) fn open(
        &self,
        environment: &[(String, String)],
    ) -> Result<(Arc<dyn ObjectStore>, String), BlobError> {
        let refused = |error: object_store::Error| {
            BlobError::Invalid(format!(
                "{FLAG} `{self}` cannot be used: {error}; {}",
                self.settings_hint()
            ))
        };
        crate::tls::install_crypto_provider();
        let store: Arc<dyn ObjectStore> = match self.kind {
            RemoteKind::AmazonS3 => {
                // As `AmazonS3Builder::from_env` reads them, from the environment given.
                let mut builder = object_store::aws::AmazonS3Builder::new();
                // The variables that set the endpoints, the last of each winning as in the
                // builder: the endpoint checked is the one the client will use.
                let (mut endpoint, mut s3_endpoint) = (None, None);
                for (name, value) in environment {
                    if let Some(key) = name
                        .strip_prefix("AWS_")
                        .and_then(|_| name.to_ascii_lowercase().parse().ok())
                    {
                        match key {
                            AmazonS3ConfigKey::Endpoint => endpoint = Some((name, value)),
                            AmazonS3ConfigKey::S3Endpoint => s3_endpoint = Some((name, value)),
                            _ => {}
                        }
                        builder = builder.with_config(key, value);
                    }
                }
                builder = builder.with_bucket_name(&self.bucket);
                let endpoint = s3_endpoint
                    .or(endpoint)
                    .filter(|(_, value)| !value.is_empty());
                if let Some(allow) = plain_http_allowed(endpoint, environment)? {
                    builder = builder.with_allow_http(allow);
                }
                Arc::new(builder.build().map_err(refused)?)
            }
            RemoteKind::GoogleCloudStorage => Arc::new(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_bucket_name(&self.bucket)
                    .build()
                    .map_err(refused)?,
            ),
            RemoteKind::MicrosoftAzure => Arc::new(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_container_name(&self.bucket)
                    .build()
                    .map_err(refused)?,
            ),
        };
        Ok((store, self.prefix.clone()))
    }

    /// The environment variables that configure this kind of store, for messages.
    pub(crate) fn settings_hint(&self) -> &'static str {
        match self.kind {
            RemoteKind::AmazonS3 => {
                "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or run with an instance role), AWS_REGION, and AWS_ENDPOINT_URL for a store other than Amazon's"
            }
            RemoteKind::GoogleCloudStorage => {
                "set GOOGLE_SERVICE_ACCOUNT (a service account key file) or run with the instance's service account"
            }
            RemoteKind::MicrosoftAzure => {
                "set AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or another Azure credential)"
            }
        }
    }
}

/// The value of the variable `name` in `environment`.
fn variable<'a>(environment: &'a [(String, String)], name: &str) -> Option<&'a str> {
    environment
        .iter()
        .find(|(candidate, _)| candidate == name)
        .map(|(_, value)| value.as_str())
}

/// Whether plain HTTP must be allowed to the S3 `endpoint` (the variable that sets it and its
/// value, as the client reads them): `Some(true)` for an `http://` endpoint on loopback (a
/// store on this machine: nothing crosses the network), `None` to leave it to `AWS_ALLOW_HTTP`.
///
/// # Errors
/// An endpoint holding a user name or password (the client's errors repeat it), or an
/// `http://` endpoint on another host without `AWS_ALLOW_HTTP=true`: blobs and signed
/// requests would cross the network unencrypted.
fn plain_http_allowed(
    endpoint: Option<(&String, &String)>,
    environment: &[(String, String)],
) -> Result<Option<bool>, BlobError> {
    let Some((name, endpoint)) = endpoint else {
        return Ok(None);
    };
    let Ok(url) = Url::parse(endpoint) else {
        return Err(BlobError::Invalid(format!(
            "{name} is not a URL; set it to the store's address, such as https://s3.example.com or http://127.0.0.1:9000"
        )));
    };
    // The endpoint is repeated in the client's errors, and so in the log.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(BlobError::Invalid(format!(
            "{name} `{}` holds a user name or password; name only the store's address there and give credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
            shown(&url)
        )));
    }
    if url.scheme() != "http" {
        return Ok(None);
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    let allowed = variable(environment, "AWS_ALLOW_HTTP").is_some_and(|value| value == "true");
    if loopback {
        Ok(Some(true))
    } else if allowed {
        Ok(None)
    } else {
        Err(BlobError::Invalid(format!(
            "{name} is `{}`, plain HTTP to another machine: blobs would cross the network unencrypted; use https, or set AWS_ALLOW_HTTP=true if the network is private",
            shown(&url)
        )))
    }
}

/// `file:///folder`: an absolute folder on this machine, named plainly: no `..` and no NUL
/// byte once percent-decoded (`%2F..%2F` would name another folder than the one it seems to).
fn local(url: &Url) -> Result<BlobLocation, BlobError> {
    use std::os::unix::ffi::OsStrExt;
    let Some(folder) = url
        .to_file_path()
        .ok()
        .filter(|folder| folder.is_absolute() && folder.parent().is_some())
    else {
        return Err(BlobError::Invalid(format!(
            "{FLAG} `{}` is not a folder on this machine; it must look like file:///absolute/folder (not the root)",
            shown(url)
        )));
    };
    let plain = folder.components().all(|component| {
        matches!(
            component,
            std::path::Component::RootDir | std::path::Component::Normal(_)
        )
    }) && !folder.as_os_str().as_bytes().contains(&0);
    if !plain {
        return Err(BlobError::Invalid(format!(
            "{FLAG} `{}` names its folder through `..` or a NUL byte once percent-decoded; name the folder itself: file:///absolute/folder",
            shown(url)
        )));
    }
    Ok(BlobLocation::Local(folder))
}

/// A URL without credentials, query or fragment, for messages.
fn shown(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        match BlobLocation::parse(text) {
            Ok(location) => panic!("`{text}` was accepted as {location:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn locations_are_folders_or_buckets() {
        assert_eq!(
            BlobLocation::parse("file:///var/lib/skillbox/blobs").unwrap(),
            BlobLocation::Local(PathBuf::from("/var/lib/skillbox/blobs"))
        );
        let remote = BlobLocation::parse("s3://team-blobs/skillbox/prod/").unwrap();
        assert_eq!(remote.shown(), "s3://team-blobs/skillbox/prod");
        assert_eq!(
            BlobLocation::parse("s3a://team-blobs").unwrap().shown(),
            "s3://team-blobs"
        );
        assert_eq!(
            BlobLocation::parse("gs://bucket/p").unwrap().shown(),
            "gs://bucket/p"
        );
        assert_eq!(
            BlobLocation::parse("s3://bucket/a/../b").unwrap().shown(),
            "s3://bucket/b"
        );
    }

    #[test]
    fn bad_locations_are_refused_by_name_without_showing_secrets() {
        for (text, expected) in [
            ("blobs", "is not a URL"),
            ("ftp://host/x", "scheme `ftp`"),
            ("s3:///prefix", "names no bucket"),
            ("file:///", "not a folder on this machine"),
        ] {
            let message = refusal(text);
            assert!(
                message.contains("--blob-store") && message.contains(expected),
                "{text}: {message}"
            );
        }
        for text in [
            "s3://AKIAEXAMPLE:wJalrSECRET@bucket/prefix",
            "s3://bucket/prefix?X-Amz-Signature=wJalrSECRET",
            "az://AKIAEXAMPLE@container/prefix",
        ] {
            let message = refusal(text);
            assert!(message.contains("holds credentials"), "{message}");
            assert!(
                !message.contains("wJalrSECRET") && !message.contains("AKIAEXAMPLE"),
                "{message}"
            );
        }
    }
}
