//! Git sources through gitoxide: a shallow bare fetch of the one revision asked for into a
//! private folder, then the tree at the sub-path written out object by object through a
//! [`TreeWriter`]. Nothing of the repository runs: no hooks (gitoxide runs none), no checkout
//! filters (blobs are read raw, so an LFS file stays its pointer), no submodules (their
//! entries are skipped and reported).

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use gix::bstr::ByteSlice;

use super::http::token_for;
use super::tree::TreeWriter;
use crate::error::InstallError;
use crate::limits::InstallLimits;
use crate::progress::Progress;

/// What a git fetch gave.
pub(crate) struct GitTree {
    /// The commit id written out.
    pub(crate) revision: String,
    /// Submodule entries skipped (their paths).
    pub(crate) skipped_submodules: Vec<String>,
}

/// Whether a reference is a full commit id.
pub(crate) fn is_commit_id(reference: &str) -> bool {
    reference.len() == 40 && reference.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// Fetch `url` at `reference` (the remote's HEAD without one) into a bare repository in
/// `work`, and write the tree at `subpath` into the empty folder `into`.
///
/// # Errors
/// [`InstallError::Fetch`] when the repository, reference or path cannot be had,
/// [`InstallError::Refused`] for an unsafe tree.
pub(crate) fn fetch_tree(
    url: &str,
    reference: Option<&str>,
    subpath: &str,
    work: &Path,
    into: &Path,
    limits: &InstallLimits,
    progress: &Progress,
) -> Result<GitTree, InstallError> {
    let task = progress.start(&format!("git fetch {url}"), None);
    let shallow = fetch(url, reference, &work.join("shallow"), true);
    let repository = match shallow {
        Ok(repository) => repository,
        // A server that refuses a commit id as a shallow want (no `allowAnySHA1InWant`) can
        // still serve it in a full fetch.
        Err(error) if reference.is_some_and(is_commit_id) => {
            tracing::debug!(%error, "a shallow fetch of a commit id failed; fetching everything");
            fetch(url, None, &work.join("full"), false)?
        }
        Err(error) => return Err(error),
    };
    task.finish();
    let fail = |error: &dyn std::fmt::Display| InstallError::fetch(url, error);
    let commit = match reference.filter(|reference| is_commit_id(reference)) {
        Some(id) => {
            let id = gix::ObjectId::from_hex(id.as_bytes()).map_err(|error| fail(&error))?;
            repository.find_commit(id).map_err(|_| {
                InstallError::fetch(
                    url,
                    format!("commit `{}` is not in the repository", id.to_hex()),
                )
            })?
        }
        None => repository.head_commit().map_err(|error| fail(&error))?,
    };
    let revision = commit.id.to_hex().to_string();
    let root = commit.tree().map_err(|error| fail(&error))?;
    let tree = if subpath.is_empty() {
        root
    } else {
        let entry = root
            .lookup_entry_by_path(subpath)
            .map_err(|error| fail(&error))?
            .ok_or_else(|| {
                InstallError::fetch(
                    url,
                    format!("there is no `{subpath}` at {}", short(&revision)),
                )
            })?;
        if !entry.mode().is_tree() {
            return Err(InstallError::fetch(
                url,
                format!("`{subpath}` at {} is not a folder", short(&revision)),
            ));
        }
        entry.object().map_err(|error| fail(&error))?.into_tree()
    };
    let mut writer = TreeWriter::new(into, url, limits);
    let mut skipped_submodules = Vec::new();
    write_tree(&tree, "", &mut writer, &mut skipped_submodules, url, 0)?;
    writer.finish()?;
    Ok(GitTree {
        revision,
        skipped_submodules,
    })
}

/// The first 12 digits of a commit id, for messages.
fn short(revision: &str) -> &str {
    revision.get(..12).unwrap_or(revision)
}

/// A bare clone of `url` at `reference` into `path` (shallow when asked).
fn fetch(
    url: &str,
    reference: Option<&str>,
    path: &Path,
    shallow: bool,
) -> Result<gix::Repository, InstallError> {
    let fail = |error: &dyn std::fmt::Display| InstallError::fetch(url, error);
    let mut prepare = gix::prepare_clone_bare(url, path).map_err(|error| fail(&error))?;
    if shallow {
        prepare = prepare.with_shallow(gix::remote::fetch::Shallow::DepthAtRemote(NonZeroU32::MIN));
    }
    match reference {
        Some(id) if is_commit_id(id) && shallow => {
            prepare = prepare
                .with_revision(Some(id.to_ascii_lowercase()))
                .map_err(|error| fail(&error))?;
        }
        Some(id) if is_commit_id(id) => {}
        Some(name) => {
            prepare = prepare.with_ref_name(Some(name)).map_err(|error| {
                InstallError::fetch(
                    url,
                    format!("`{name}` is not a branch or tag name ({error})"),
                )
            })?;
        }
        None => {}
    }
    let parsed = url::Url::parse(url).ok();
    if let Some(parsed) = &parsed
        && let Some(token) = token_for(parsed)
    {
        let host = parsed.host_str().unwrap_or_default().to_owned();
        prepare = prepare.configure_connection(move |connection| {
            let token = token.clone();
            let host = host.clone();
            connection.set_credentials(move |action| match action {
                gix::credentials::helper::Action::Get(context)
                    if context.host.as_deref().is_none_or(|asked| {
                        asked == host
                            || asked.rsplit_once(':').is_some_and(|(name, _)| name == host)
                    }) =>
                {
                    Ok(Some(gix::credentials::protocol::Outcome {
                        identity: gix::sec::identity::Account {
                            username: "x-access-token".to_owned(),
                            password: token.clone(),
                            oauth_refresh_token: None,
                        },
                        next: context.into(),
                    }))
                }
                _ => Ok(None),
            });
            Ok(())
        });
    } else if parsed
        .as_ref()
        .is_some_and(|parsed| parsed.scheme() == "http" && !is_loopback(parsed))
    {
        // Credentials never cross the network in clear text: no helper is asked for them.
        prepare = prepare.configure_connection(|connection| {
            connection.set_credentials(|_| Ok(None));
            Ok(())
        });
    }
    let interrupt = AtomicBool::new(false);
    let (repository, _) = prepare
        .fetch_only(gix::progress::Discard, &interrupt)
        .map_err(|error| InstallError::fetch(url, with_causes(&error)))?;
    Ok(repository)
}

/// Whether a URL's host is this machine.
fn is_loopback(url: &url::Url) -> bool {
    matches!(
        url.host(),
        Some(url::Host::Ipv4(address)) if address.is_loopback()
    ) || matches!(url.host(), Some(url::Host::Ipv6(address)) if address.is_loopback())
        || url.host_str() == Some("localhost")
}

/// An error's text with the causes below it (`handshake failed: … 401 …`).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Write a tree's entries under `prefix`.
fn write_tree(
    tree: &gix::Tree<'_>,
    prefix: &str,
    writer: &mut TreeWriter<'_>,
    skipped_submodules: &mut Vec<String>,
    url: &str,
    depth: usize,
) -> Result<(), InstallError> {
    const MAX_DEPTH: usize = 64;
    if depth > MAX_DEPTH {
        return Err(InstallError::refused(
            url,
            format!("`{prefix}` is nested deeper than {MAX_DEPTH} folders"),
        ));
    }
    let fail = |error: &dyn std::fmt::Display| InstallError::fetch(url, error);
    for entry in tree.iter() {
        let entry = entry.map_err(|error| fail(&error))?;
        let name = entry.filename().to_str_lossy();
        let path = if prefix.is_empty() {
            name.into_owned()
        } else {
            format!("{prefix}/{name}")
        };
        let mode = entry.mode();
        if mode.is_tree() {
            writer.folder(path.as_bytes())?;
            let subtree = entry.object().map_err(|error| fail(&error))?.into_tree();
            write_tree(&subtree, &path, writer, skipped_submodules, url, depth + 1)?;
        } else if mode.is_commit() {
            skipped_submodules.push(path);
        } else if mode.is_link() {
            let object = entry.object().map_err(|error| fail(&error))?;
            writer.link(path.as_bytes(), &object.data)?;
        } else {
            let object = entry.object().map_err(|error| fail(&error))?;
            writer.file(
                path.as_bytes(),
                &mut object.data.as_slice(),
                mode.is_executable(),
            )?;
        }
    }
    Ok(())
}
