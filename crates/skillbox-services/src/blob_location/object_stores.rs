//! Opening the object store a `--blob-store` URL names (S3, GCS, Azure), in builds with the
//! `object-storage` feature: the clients are configured from the environment, and an endpoint
//! that would carry blobs or credentials in the clear is refused.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::AmazonS3ConfigKey;
use url::Url;

use super::{FLAG, RemoteKind, RemoteLocation, shown};
use crate::blobs::BlobError;

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
