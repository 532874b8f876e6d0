//! Where the blob store lives (`skillbox serve --blob-store URL`): a folder on this machine
//! (`file:///…`, the default under the data folder) or a bucket of an object store
//! (`s3://bucket/prefix`; `gs://` and `az://` too, as the `object_store` crate gives them)
//! configured by the provider's usual environment variables.
//!
//! The URL names a place, never credentials: a URL holding a user name, a password or a query
//! (where signed tokens travel) is refused, and every message shows the URL without them.

use std::path::PathBuf;

use url::Url;

use crate::blobs::BlobError;

#[cfg(feature = "object-storage")]
mod object_stores;

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

#[cfg(not(feature = "object-storage"))]
impl RemoteLocation {
    /// The object store this location names: none in a build without the `object-storage`
    /// feature, which says so and how to get it.
    ///
    /// # Errors
    /// Always: this build reaches no object store.
    pub(crate) fn open(
        &self,
        _environment: &[(String, String)],
    ) -> Result<(std::sync::Arc<dyn object_store::ObjectStore>, String), BlobError> {
        Err(BlobError::Invalid(format!(
            "{FLAG} `{self}` names an object store, and this skillbox was built without them; build it with the `object-storage` feature (`cargo build --release --features object-storage`) or keep blobs in a folder (file:///absolute/folder)"
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
