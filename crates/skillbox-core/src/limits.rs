//! Named limits on what the catalog reads, so that a hostile or broken skill tree cannot make
//! discovery slow or memory-hungry. Each limit has a unit in its name and can be changed through
//! [`CatalogLimits`].

/// Bytes of `SKILL.md` read at discovery to find the frontmatter; the body is read later, lazily.
pub const MAX_FRONTMATTER_BYTES: u64 = 64 * 1024;
/// Bytes of a skill body kept in memory when it is loaded; the rest is cut with a note.
pub const MAX_BODY_BYTES: u64 = 1024 * 1024;
/// Bytes of `tools.json` read; a larger manifest is refused.
pub const MAX_TOOLS_MANIFEST_BYTES: u64 = 1024 * 1024;
/// Bytes of `skill.toml` read; a larger manifest is refused.
pub const MAX_SKILL_MANIFEST_BYTES: u64 = 256 * 1024;
/// How many folders below a root discovery descends.
pub const MAX_DISCOVERY_DEPTH: usize = 6;
/// How many directories discovery visits under one root before it stops with a warning.
pub const MAX_DIRECTORIES_PER_ROOT: usize = 50_000;
/// Files listed as one skill's resources; past this the list is cut with a warning.
pub const MAX_RESOURCES_PER_SKILL: usize = 5_000;
/// Bytes an archive (`.zip`/`.skill`) file may have on disk.
pub const MAX_ARCHIVE_BYTES: u64 = 64 * 1024 * 1024;
/// Total uncompressed bytes an archive may expand to.
pub const MAX_ARCHIVE_UNPACKED_BYTES: u64 = 256 * 1024 * 1024;
/// Entries an archive may hold.
pub const MAX_ARCHIVE_ENTRIES: usize = 10_000;
/// Largest allowed ratio of uncompressed to compressed size for one archive entry.
pub const MAX_ARCHIVE_COMPRESSION_RATIO: u64 = 200;
/// Bytes all the archives of one catalog may take together. An archive is held in memory as it
/// is on disk (compressed) for as long as the catalog lives; archives are given their size out of
/// this budget in path order, and one that does not fit is refused.
pub const MAX_CATALOG_ARCHIVE_BYTES: u64 = 256 * 1024 * 1024;
/// Bytes all the archives of one catalog may expand to together (the sum of their entries'
/// declared sizes), which is what running every one of them writes to the runtime folder; given
/// in path order like [`MAX_CATALOG_ARCHIVE_BYTES`].
pub const MAX_CATALOG_ARCHIVE_UNPACKED_BYTES: u64 = 1024 * 1024 * 1024;

/// The limits one catalog load applies; defaults are the constants of this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogLimits {
    /// See [`MAX_FRONTMATTER_BYTES`].
    pub max_frontmatter_bytes: u64,
    /// See [`MAX_BODY_BYTES`].
    pub max_body_bytes: u64,
    /// See [`MAX_TOOLS_MANIFEST_BYTES`].
    pub max_tools_manifest_bytes: u64,
    /// See [`MAX_SKILL_MANIFEST_BYTES`].
    pub max_skill_manifest_bytes: u64,
    /// See [`MAX_DISCOVERY_DEPTH`].
    pub max_discovery_depth: usize,
    /// See [`MAX_DIRECTORIES_PER_ROOT`].
    pub max_directories_per_root: usize,
    /// See [`MAX_RESOURCES_PER_SKILL`].
    pub max_resources_per_skill: usize,
    /// See [`MAX_ARCHIVE_BYTES`].
    pub max_archive_bytes: u64,
    /// See [`MAX_ARCHIVE_UNPACKED_BYTES`].
    pub max_archive_unpacked_bytes: u64,
    /// See [`MAX_ARCHIVE_ENTRIES`].
    pub max_archive_entries: usize,
    /// See [`MAX_ARCHIVE_COMPRESSION_RATIO`].
    pub max_archive_compression_ratio: u64,
    /// See [`MAX_CATALOG_ARCHIVE_BYTES`].
    pub max_catalog_archive_bytes: u64,
    /// See [`MAX_CATALOG_ARCHIVE_UNPACKED_BYTES`].
    pub max_catalog_archive_unpacked_bytes: u64,
}

impl Default for CatalogLimits {
    fn default() -> Self {
        CatalogLimits {
            max_frontmatter_bytes: MAX_FRONTMATTER_BYTES,
            max_body_bytes: MAX_BODY_BYTES,
            max_tools_manifest_bytes: MAX_TOOLS_MANIFEST_BYTES,
            max_skill_manifest_bytes: MAX_SKILL_MANIFEST_BYTES,
            max_discovery_depth: MAX_DISCOVERY_DEPTH,
            max_directories_per_root: MAX_DIRECTORIES_PER_ROOT,
            max_resources_per_skill: MAX_RESOURCES_PER_SKILL,
            max_archive_bytes: MAX_ARCHIVE_BYTES,
            max_archive_unpacked_bytes: MAX_ARCHIVE_UNPACKED_BYTES,
            max_archive_entries: MAX_ARCHIVE_ENTRIES,
            max_archive_compression_ratio: MAX_ARCHIVE_COMPRESSION_RATIO,
            max_catalog_archive_bytes: MAX_CATALOG_ARCHIVE_BYTES,
            max_catalog_archive_unpacked_bytes: MAX_CATALOG_ARCHIVE_UNPACKED_BYTES,
        }
    }
}
