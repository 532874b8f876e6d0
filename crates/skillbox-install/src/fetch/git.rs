//! Git sources through gitoxide: a shallow bare fetch of the one revision asked for into a
//! private folder, then the tree at the sub-path written out object by object through a
//! [`TreeWriter`]. Nothing of the repository runs: no hooks (gitoxide runs none), no checkout
//! filters (blobs are read raw, so an LFS file stays its pointer), no submodules (their
//! entries are skipped and reported). The connection to the server is skillbox's guarded one
//! ([`super::git_transport`]): every wait timed, the refs advertised bounded.

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gix::bstr::ByteSlice;

use super::git_transport::{CutShort, FetchWatch, GuardedHttp, daemon_transport, ssh_transport};
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
    /// The bare repository fetched into (to write whole folders from later).
    pub(crate) repository: gix::ThreadSafeRepository,
    /// How much was written: a tree that is one skill is written whole even when an outline
    /// was asked for.
    pub(crate) outline: TreeOutline,
}

/// What to fetch from git.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GitSource<'a> {
    /// The repository.
    pub(crate) url: &'a str,
    /// A branch, tag or commit id; the remote's HEAD without one.
    pub(crate) reference: Option<&'a str>,
    /// The folder of the repository to write out (`/`-separated, empty for all).
    pub(crate) subpath: &'a str,
    /// How much of it.
    pub(crate) outline: TreeOutline,
}

/// How much of a fetched tree is written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TreeOutline {
    /// Every entry.
    Whole,
    /// Only what finding skills needs: `SKILL.md` files and plugin manifests. The folders of
    /// the skills chosen are written whole later ([`write_folder`]), so a source of fifty
    /// skills costs the files of the ones installed, not of all fifty.
    SkillFilesOnly,
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
    source: &GitSource<'_>,
    work: &Path,
    into: &Path,
    limits: &InstallLimits,
    progress: &Progress,
) -> Result<GitTree, InstallError> {
    let GitSource {
        url,
        reference,
        subpath,
        outline,
    } = *source;
    let task = progress.start(&format!("git fetch {url}"), None);
    let shallow = fetch(url, reference, &work.join("shallow"), true, limits);
    let repository = match shallow {
        Ok(repository) => repository,
        // A server that refuses a commit id as a shallow want (no `allowAnySHA1InWant`) can
        // still serve it in a full fetch.
        Err(error) if reference.is_some_and(is_commit_id) => {
            tracing::debug!(%error, "a shallow fetch of a commit id failed; fetching everything");
            fetch(url, None, &work.join("full"), false, limits)?
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
    let is_one_skill = skillbox_core::loader::SKILL_MD_NAMES
        .iter()
        .any(|name| tree.find_entry(*name).is_some());
    let outline = if is_one_skill {
        TreeOutline::Whole
    } else {
        outline
    };
    let mut writer = TreeWriter::new(into, url, limits);
    let mut skipped_submodules = Vec::new();
    write_tree(
        &tree,
        "",
        &mut writer,
        &mut skipped_submodules,
        url,
        0,
        outline,
    )?;
    writer.finish()?;
    Ok(GitTree {
        revision,
        skipped_submodules,
        repository: repository.clone().into_sync(),
        outline,
    })
}

/// Write the folder at `path` of commit `revision` of the bare repository at `repository`
/// (fetched by [`fetch_tree`]) whole into the empty folder `into`.
///
/// # Errors
/// [`InstallError::Fetch`] when it is not there, [`InstallError::Refused`] for an unsafe tree.
pub(crate) fn write_folder(
    repository: &gix::ThreadSafeRepository,
    revision: &str,
    path: &str,
    into: &Path,
    url: &str,
    limits: &InstallLimits,
) -> Result<(), InstallError> {
    let fail = |error: &dyn std::fmt::Display| InstallError::fetch(url, error);
    let repository = repository.to_thread_local();
    let id = gix::ObjectId::from_hex(revision.as_bytes()).map_err(|error| fail(&error))?;
    let root = repository
        .find_commit(id)
        .map_err(|error| fail(&error))?
        .tree()
        .map_err(|error| fail(&error))?;
    let tree = if path.is_empty() {
        root
    } else {
        let entry = root
            .lookup_entry_by_path(path)
            .map_err(|error| fail(&error))?
            .filter(|entry| entry.mode().is_tree())
            .ok_or_else(|| {
                fail(&format!(
                    "there is no folder `{path}` at {}",
                    short(revision)
                ))
            })?;
        entry.object().map_err(|error| fail(&error))?.into_tree()
    };
    let mut writer = TreeWriter::new(into, url, limits);
    let mut submodules = Vec::new();
    write_tree(
        &tree,
        "",
        &mut writer,
        &mut submodules,
        url,
        0,
        TreeOutline::Whole,
    )?;
    writer.finish()
}

/// The tree digest ([`skillbox_trust::digest::TreeHasher`]) the folder at `path` of
/// commit `revision` would have once written out whole, computed from the repository's
/// objects without writing anything: an install whose store holds that tree already needs no
/// copy of it. `None` when it cannot be told that way (an entry the writer would refuse or
/// drop, a blob past the size limit): the folder is then written out and checked as usual.
pub(crate) fn folder_digest(
    repository: &gix::ThreadSafeRepository,
    revision: &str,
    path: &str,
    limits: &InstallLimits,
) -> Option<String> {
    use sha2::Digest as _;

    fn walk(
        tree: &gix::Tree<'_>,
        prefix: &str,
        hasher: &mut skillbox_trust::digest::TreeHasher,
        budget: &mut u64,
        depth: usize,
    ) -> Option<()> {
        if depth > 64 {
            return None;
        }
        let mut entries: Vec<(Vec<u8>, gix::object::tree::EntryMode, gix::ObjectId)> = Vec::new();
        for entry in tree.iter() {
            let entry = entry.ok()?;
            let name = entry.filename().to_vec();
            let text = std::str::from_utf8(&name).ok()?;
            let plain = !text.is_empty()
                && text != "."
                && text != ".."
                && !text.contains(['/', '\\', '\0'])
                && !text.eq_ignore_ascii_case(".git");
            if !plain {
                return None;
            }
            entries.push((name, entry.mode(), entry.object_id()));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, mode, id) in entries {
            let name = String::from_utf8(name).ok()?;
            let path = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if mode.is_commit() {
                // Submodules are never written out.
                continue;
            }
            let object = tree.repo.find_object(id).ok()?;
            if mode.is_tree() {
                hasher.folder_entry(path.as_bytes());
                walk(&object.into_tree(), &path, hasher, budget, depth + 1)?;
            } else if mode.is_link() {
                hasher.link(path.as_bytes(), &object.data);
            } else {
                *budget = budget.checked_sub(object.data.len() as u64)?;
                let content = sha2::Sha256::digest(&object.data);
                hasher.file(path.as_bytes(), &content, mode.is_executable());
            }
        }
        Some(())
    }

    let repository = repository.to_thread_local();
    let id = gix::ObjectId::from_hex(revision.as_bytes()).ok()?;
    let root = repository.find_commit(id).ok()?.tree().ok()?;
    let tree = if path.is_empty() {
        root
    } else {
        let entry = root.lookup_entry_by_path(path).ok()??;
        if !entry.mode().is_tree() {
            return None;
        }
        entry.object().ok()?.into_tree()
    };
    let mut hasher = skillbox_trust::digest::TreeHasher::folder();
    let mut budget = limits.max_bytes_per_skill;
    walk(&tree, "", &mut hasher, &mut budget, 0)?;
    Some(hasher.finish())
}

/// Whether an entry of a tree written as [`TreeOutline::SkillFilesOnly`] is written.
fn in_outline(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    skillbox_core::loader::SKILL_MD_NAMES.contains(&name)
        || path.contains(".claude-plugin/")
        || path.contains(".codex-plugin/")
}

/// The first 12 digits of a commit id, for messages.
fn short(revision: &str) -> &str {
    revision.get(..12).unwrap_or(revision)
}

/// How often the size of a fetch in progress is measured.
const FETCH_WATCH_INTERVAL: Duration = Duration::from_millis(50);

/// A bare clone of `url` at `reference` into `path` (shallow when asked), bounded: no object
/// may need more than [`InstallLimits::max_source_bytes`] of memory to unpack (a blob of zeros
/// packs to almost nothing), and the fetch stops once it has written more than
/// [`InstallLimits::max_download_bytes`].
fn fetch(
    url: &str,
    reference: Option<&str>,
    path: &Path,
    shallow: bool,
    limits: &InstallLimits,
) -> Result<gix::Repository, InstallError> {
    let fail = |error: &dyn std::fmt::Display| InstallError::fetch(url, error);
    let alloc_limit = format!("gitoxide.objects.allocLimit={}", limits.max_source_bytes);
    let mut prepare = gix::prepare_clone_bare(url, path)
        .map_err(|error| fail(&error))?
        .with_in_memory_config_overrides([alloc_limit.as_str()]);
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
    let token = parsed
        .as_ref()
        .and_then(|parsed| token_for(parsed).map(|token| (token, parsed.clone())));
    // Credentials never cross the network in clear text: for plain HTTP to another machine,
    // no helper is asked for them.
    let no_credentials = token.is_none()
        && parsed
            .as_ref()
            .is_some_and(|parsed| parsed.scheme() == "http" && !is_loopback(parsed));
    let is_http = parsed
        .as_ref()
        .is_some_and(|parsed| matches!(parsed.scheme(), "http" | "https"));
    let url_text = url.to_owned();
    let http_timeout = limits.git_http_timeout;
    let connect_timeout = limits.network_timeout;
    let fetch_watch = Arc::new(FetchWatch::default());
    let connection_watch = Arc::clone(&fetch_watch);
    let connection_limits = *limits;
    prepare = prepare.configure_connection(move |connection| {
        guard_transport(connection, &connection_limits, &connection_watch)?;
        if let Some((token, origin)) = &token {
            let token = token.clone();
            let origin = origin.clone();
            connection.set_credentials(move |action| match action {
                // Only for the URL the token is for: a redirect to another host (or port, or
                // scheme) is asked for credentials under its own URL, and gets none.
                gix::credentials::helper::Action::Get(context)
                    if asks_for_origin(context.url.as_ref(), &origin) =>
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
        } else if no_credentials {
            connection.set_credentials(|_| Ok(None));
        }
        if is_http {
            // The HTTP client's own default gives a whole request 30 seconds, too little for
            // a large repository on a slow link; the git configuration's options are kept.
            let options = connection
                .remote()
                .repo()
                .transport_options(gix::bstr::BStr::new(&url_text), None);
            if let Ok(Some(mut options)) = options
                && let Some(http) =
                    options.downcast_mut::<gix_transport::client::blocking_io::http::Options>()
            {
                let client = gix_transport::client::blocking_io::http::reqwest::Options {
                    configure_client: Some(Box::new(move |builder| {
                        Ok(builder
                            .timeout(http_timeout)
                            .connect_timeout(connect_timeout))
                    })),
                    ..Default::default()
                };
                http.backend = Some(std::sync::Arc::new(std::sync::Mutex::new(client)));
                connection.set_transport_options(options);
            }
        }
        Ok(())
    });
    let interrupt = AtomicBool::new(false);
    let too_large = AtomicBool::new(false);
    // The watcher wakes every interval, or at once when the fetch ends (the channel closes),
    // so a quick fetch waits for nothing.
    let (finished, watch) = std::sync::mpsc::channel::<()>();
    let fetched = std::thread::scope(|scope| {
        let too_large = &too_large;
        let interrupt = &interrupt;
        scope.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                watch.recv_timeout(FETCH_WATCH_INTERVAL)
            {
                if folder_bytes(path) > limits.max_download_bytes {
                    too_large.store(true, Ordering::Relaxed);
                    interrupt.store(true, Ordering::Relaxed);
                    break;
                }
            }
        });
        let fetched = prepare.fetch_only(gix::progress::Discard, interrupt);
        drop(finished);
        fetched
    });
    // A fetch quicker than the watch is measured once more whole.
    if too_large.load(Ordering::Relaxed) || folder_bytes(path) > limits.max_download_bytes {
        return Err(InstallError::refused(
            url,
            format!(
                "it sends more than {} bytes; the limit is for one download",
                limits.max_download_bytes
            ),
        ));
    }
    // A connection cut short says why in its own words; gitoxide's error wraps that deep.
    match (fetched, fetch_watch.cut_short()) {
        (Ok((repository, _)), _) => Ok(repository),
        (Err(_), Some(CutShort::Silent(limit))) => Err(InstallError::fetch(
            url,
            format!(
                "the server sent nothing for {} s, so the fetch was given up (`--network-timeout SECONDS` sets how long to wait)",
                limit.as_secs()
            ),
        )),
        (Err(_), Some(CutShort::Advertisement(limit))) => Err(InstallError::refused(
            url,
            format!(
                "the server sent more than {limit} bytes of refs and capabilities before any object was asked for; the fetch was stopped there"
            ),
        )),
        (Err(error), None) => Err(InstallError::fetch(url, with_causes(&error))),
    }
}

/// Put skillbox's guarded connection in place of the one gitoxide opened
/// ([`super::git_transport`]): its own for `git://` and for ssh (unless the user has an ssh
/// command of their own), gitoxide's HTTP client with its bodies guarded for HTTP(S). Local
/// (`file://`) repositories are read as they are.
fn guard_transport(
    connection: &mut gix::remote::Connection<
        '_,
        '_,
        '_,
        Box<dyn gix_transport::client::blocking_io::Transport + Send>,
    >,
    limits: &InstallLimits,
    watch: &Arc<FetchWatch>,
) -> gix::Result<()> {
    let (remote_url, version) = connection
        .remote()
        .sanitized_url_and_version(gix::remote::Direction::Fetch)?;
    let guarded = match remote_url.scheme {
        gix::url::Scheme::Git => Some(
            daemon_transport(&remote_url, version, limits, watch)
                .map_err(gix::Error::from_error)?,
        ),
        gix::url::Scheme::Ssh
            if runs_plain_ssh(&connection.remote().repo().ssh_connect_options()?) =>
        {
            Some(
                ssh_transport(&remote_url, version, limits, watch)
                    .map_err(gix::Error::from_error)?,
            )
        }
        gix::url::Scheme::Http | gix::url::Scheme::Https => {
            let client = GuardedHttp::new(
                gix_transport::client::blocking_io::http::reqwest::Remote::default(),
                limits,
                watch,
            );
            Some(
                Box::new(gix_transport::client::blocking_io::http::connect_http(
                    client, remote_url, version, false,
                )) as Box<dyn gix_transport::client::blocking_io::Transport + Send>,
            )
        }
        _ => None,
    };
    if let Some(guarded) = guarded {
        *connection.transport_mut() = guarded;
    }
    Ok(())
}

/// Whether gitoxide would run plain `ssh`: no ssh command of the user's own, no other variant.
fn runs_plain_ssh(options: &gix_transport::client::blocking_io::ssh::connect::Options) -> bool {
    options.command.is_none()
        && matches!(
            options.kind,
            None | Some(gix_transport::client::blocking_io::ssh::ProgramKind::Ssh)
        )
}

/// Whether a credential request is for the URL a token was given for: the same scheme, host
/// and port. A request without a URL is not.
fn asks_for_origin(asked: Option<&gix::bstr::BString>, origin: &url::Url) -> bool {
    let Some(asked) = asked.and_then(|asked| url::Url::parse(&asked.to_str_lossy()).ok()) else {
        return false;
    };
    asked.scheme() == origin.scheme()
        && asked.host_str() == origin.host_str()
        && asked.port_or_known_default() == origin.port_or_known_default()
}

/// The bytes of the files under `folder` (0 when it cannot be read).
fn folder_bytes(folder: &Path) -> u64 {
    let Ok(entries) = fs_err::read_dir(folder) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_bytes(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |metadata| metadata.len()),
            _ => 0,
        })
        .sum()
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
    outline: TreeOutline,
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
            // An outline makes only the folders its files need (as they are written).
            if outline == TreeOutline::Whole {
                writer.folder(path.as_bytes())?;
            }
            let subtree = entry.object().map_err(|error| fail(&error))?.into_tree();
            write_tree(
                &subtree,
                &path,
                writer,
                skipped_submodules,
                url,
                depth + 1,
                outline,
            )?;
        } else if mode.is_commit() {
            skipped_submodules.push(path);
        } else if outline == TreeOutline::SkillFilesOnly && !in_outline(&path) {
            continue;
        } else if mode.is_link() {
            let object = entry.object().map_err(|error| fail(&error))?;
            writer.link(path.as_bytes(), &object.data)?;
        } else {
            // The size from the object's header, before its bytes are read into memory: a
            // blob of zeros packs to almost nothing and would unpack to gigabytes.
            let size = entry.id().header().map_err(|error| fail(&error))?.size();
            writer.check_size(&path, size)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository whose one commit holds `SKILL.md` and `big.bin` of `content`.
    fn repository_with(content: &str) -> skillbox_testkit::GitRepo {
        let repo = skillbox_testkit::GitRepo::new();
        repo.write(&[
            (
                "SKILL.md",
                "---\nname: big\ndescription: Big. Use when big.\n---\n",
            ),
            ("big.bin", content),
        ]);
        repo.commit("first");
        repo
    }

    /// Fetch the whole of `url` (or its outline) into a new temporary folder: the folder
    /// (holding `tree/`) and what the fetch gave.
    fn fetch_into(
        url: &str,
        outline: TreeOutline,
        limits: &InstallLimits,
    ) -> (tempfile::TempDir, Result<GitTree, InstallError>) {
        let work = tempfile::tempdir().unwrap();
        let into = work.path().join("tree");
        std::fs::create_dir(&into).unwrap();
        let source = GitSource {
            url,
            reference: None,
            subpath: "",
            outline,
        };
        let fetched = fetch_tree(&source, work.path(), &into, limits, &Progress::default());
        (work, fetched)
    }

    fn fetch_with(repo: &skillbox_testkit::GitRepo, limits: &InstallLimits) -> String {
        let url = format!("file://{}", repo.path().display());
        match fetch_into(&url, TreeOutline::Whole, limits).1 {
            Ok(_) => String::new(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn an_object_too_large_to_unpack_is_refused_before_it_is_in_memory() {
        // 8 MiB of one byte packs to a few KiB.
        let repo = repository_with(&"0".repeat(8 * 1024 * 1024));
        let limits = InstallLimits {
            max_source_bytes: 1024 * 1024,
            ..InstallLimits::default()
        };
        let error = fetch_with(&repo, &limits);
        assert!(error.contains("too large"), "{error}");
        assert_eq!(fetch_with(&repo, &InstallLimits::default()), "");
    }

    #[test]
    fn a_fetch_past_the_download_limit_stops() {
        // Digits of a pseudo-random sequence: they do not compress away.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let content: String = (0..6 * 1024 * 1024)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'0' + u8::try_from(state % 10).unwrap_or(0))
            })
            .collect();
        let repo = repository_with(&content);
        let limits = InstallLimits {
            max_download_bytes: 512 * 1024,
            ..InstallLimits::default()
        };
        let error = fetch_with(&repo, &limits);
        assert!(error.contains("sends more than 524288 bytes"), "{error}");
    }

    #[test]
    fn a_git_request_over_http_is_bounded_by_the_configured_timeout_not_the_clients_default() {
        // A server that answers nothing for 5 seconds: with a 1-second limit the fetch gives
        // up at once (the HTTP client's own default would wait 30 seconds, and then the
        // server's answer would be a different error).
        let server = skillbox_testkit::StaticServer::without_folder();
        server.delayed(
            "/slow/repo.git/info/refs",
            skillbox_testkit::static_server::Response::ok("not git"),
            Duration::from_secs(5),
        );
        let limits = InstallLimits {
            git_http_timeout: Duration::from_secs(1),
            ..InstallLimits::default()
        };
        skillbox_services::tls::install_crypto_provider();
        let started = std::time::Instant::now();
        let error = fetch_into(&server.url("/slow/repo.git"), TreeOutline::Whole, &limits)
            .1
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(started.elapsed() < Duration::from_secs(4), "{error}");
        assert!(error.contains("timed out"), "{error}");
    }

    /// A repository with one skill and `count` more branches at its one commit, written as
    /// packed refs (quick to make, however many).
    fn repository_with_branches(count: usize) -> skillbox_testkit::GitRepo {
        let repo = repository_with("small");
        let head = repo.rev_parse("HEAD");
        let mut packed = String::from("# pack-refs with: peeled fully-peeled sorted \n");
        for index in 0..count {
            packed.push_str(&format!("{head} refs/heads/branch-{index:07}\n"));
        }
        std::fs::write(repo.git_dir().join("packed-refs"), packed).unwrap();
        repo
    }

    #[test]
    fn a_long_list_of_refs_is_cut_at_the_limit_over_git_and_http() {
        let repo = repository_with_branches(5_000);
        let daemon = skillbox_testkit::GitDaemon::start();
        daemon.add_repo("many/refs", &repo);
        let server = skillbox_testkit::GitHttpServer::start();
        server.add_repo("many/refs", &repo);
        skillbox_services::tls::install_crypto_provider();
        let limits = InstallLimits {
            max_advertised_bytes: 64 * 1024,
            ..InstallLimits::default()
        };
        for url in [daemon.url("many/refs"), server.url("many/refs")] {
            let error = fetch_into(&url, TreeOutline::Whole, &limits)
                .1
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default();
            assert!(
                error.contains("more than 65536 bytes of refs"),
                "{url}: {error}"
            );
            let fetched = fetch_into(&url, TreeOutline::Whole, &InstallLimits::default()).1;
            assert!(fetched.is_ok(), "{url}: {:?}", fetched.err());
        }
    }

    /// A TCP server on loopback that accepts every connection and never says a word: its
    /// port. The connections stay open while the returned listener's thread runs.
    fn silent_server() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                held.push(stream);
            }
        });
        port
    }

    #[test]
    fn a_git_or_ssh_server_that_says_nothing_is_given_up_on_at_the_network_timeout() {
        let port = silent_server();
        let limits = InstallLimits {
            network_timeout: Duration::from_secs(1),
            ..InstallLimits::default()
        };
        for url in [
            format!("git://127.0.0.1:{port}/o/r.git"),
            format!("ssh://127.0.0.1:{port}/o/r.git"),
        ] {
            let started = std::time::Instant::now();
            let error = fetch_into(&url, TreeOutline::Whole, &limits)
                .1
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default();
            assert!(error.contains("sent nothing for 1 s"), "{url}: {error}");
            assert!(started.elapsed() < Duration::from_secs(20), "{url}");
        }
    }

    #[test]
    fn a_folder_digested_from_git_objects_is_the_digest_of_the_folder_written_out() {
        let repo = skillbox_testkit::GitRepo::new();
        repo.write(&[
            (
                "skills/x/SKILL.md",
                "---\nname: x\ndescription: X. Use for x.\n---\n",
            ),
            ("skills/x/a.txt", "a"),
            ("skills/x/a/b.txt", "b"),
            ("skills/x/a-b/c.txt", "c"),
            ("skills/x/Z/deep/d.md", "d"),
        ]);
        repo.write_executable("skills/x/run.sh", "#!/bin/sh\n");
        repo.symlink("skills/x/alias.md", "SKILL.md");
        repo.commit("tree");
        let url = format!("file://{}", repo.path().display());
        let limits = InstallLimits::default();
        let (work, fetched) = fetch_into(&url, TreeOutline::SkillFilesOnly, &limits);
        let fetched = fetched.unwrap();
        let whole = work.path().join("whole");
        std::fs::create_dir(&whole).unwrap();
        write_folder(
            &fetched.repository,
            &fetched.revision,
            "skills/x",
            &whole,
            &url,
            &limits,
        )
        .unwrap();
        let written = skillbox_trust::digest::folder_inventory_at(&whole).unwrap();
        assert_eq!(
            folder_digest(&fetched.repository, &fetched.revision, "skills/x", &limits),
            Some(written.digest)
        );
        assert_eq!(
            folder_digest(
                &fetched.repository,
                &fetched.revision,
                "skills/none",
                &limits
            ),
            None
        );
    }

    #[test]
    fn a_token_is_only_for_its_own_scheme_host_and_port() {
        let origin = url::Url::parse("https://git.example.com/o/r.git").unwrap();
        let asked = |text: &str| asks_for_origin(Some(&text.into()), &origin);
        assert!(asked("https://git.example.com/o/r.git"));
        assert!(asked("https://git.example.com:443/other.git"));
        assert!(!asked("https://evil.example.com/o/r.git"));
        assert!(!asked("http://git.example.com/o/r.git"));
        assert!(!asked("https://git.example.com:8443/o/r.git"));
        assert!(!asked("https://git.example.com.evil.com/o/r.git"));
        assert!(!asks_for_origin(None, &origin));
    }
}
