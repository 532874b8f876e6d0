//! Why skill roots could not be opened.

/// Why [`crate::Provider::open`] failed. The message names the root, filter, folder or
/// option at fault and what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// No root was given.
    #[error("no skill root was given; pass at least one folder of skills")]
    NoRoots,
    /// A root is missing or a filter is not a valid glob.
    #[error(transparent)]
    Catalog(#[from] skillbox_core::CatalogError),
    /// The executor could not be set up: the sandbox policy cannot be met on this host, no
    /// sandbox helper was found, a folder is unwritable, or the working folder overlaps a root.
    #[error(transparent)]
    Executor(#[from] skillbox_exec::ExecError),
    /// The sandbox helper named does not exist.
    #[error("the sandbox helper `{}` does not exist; build it (`cargo build -p skillbox-exec --bin skillbox-sandbox`) or name another", .0.display())]
    MissingHelper(std::path::PathBuf),
    /// The sandbox helper named could be replaced by someone else.
    #[error("the sandbox helper `{}` is not trusted: it, or a folder above it, is owned by or writable for another user, who could replace it; the helper runs every sandboxed program with this process's rights", .0.display())]
    UntrustedHelper(std::path::PathBuf),
    /// The working folder named is not a folder.
    #[error("the working folder (`cwd`) `{}` is not a folder; name an existing folder, or none", .0.display())]
    WorkingDirectory(std::path::PathBuf),
}
