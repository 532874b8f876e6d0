//! The skill catalog: discovery under several roots, loading in parallel, conflict resolution
//! between roots, versions, and include/exclude filters. A [`SkillCatalog`] is an immutable
//! snapshot; reloading builds a new one.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{Glob, GlobSet, GlobSetBuilder};
use rayon::prelude::*;
use serde::Serialize;

use crate::archive::unpack_archive_within;
use crate::diagnostic::{Diagnostic, DiagnosticCode, Severity};
use crate::discovery::{Candidate, discover};
use crate::error::CatalogError;
use crate::limits::CatalogLimits;
use crate::loader::{FolderListing, LoadOutcome, LoadRequest, load_skill, name_file};
use crate::printable::printable;
use crate::properties::ValidationMode;
use crate::skill::{Skill, SkillId};
use crate::source::{SkillFolder, SkillSource};

mod archive_budget;
mod precedence;
mod requires;
mod roots;

use archive_budget::{admit_archives, refuse_archives_past_the_unpacked_budget};
use precedence::{
    PrecedenceKey, add_diagnostic, apply_root_precedence, is_same_folder, kept_last_good,
    precedence_key, same_version_messages, shadowing_warning, warn_about_confusable_names,
};
pub use roots::{
    PROJECT_DEFAULT_ROOTS, PROTOCOL_GUIDE_SKILL_NAME, RESERVED_SKILL_NAMES,
    ROOTS_ENVIRONMENT_VARIABLE, RootOrigin, SkillRoot, USER_DEFAULT_ROOTS,
};

/// How to build a catalog.
#[derive(Debug, Clone, Default)]
pub struct CatalogOptions {
    /// Roots, lowest precedence first.
    pub roots: Vec<SkillRoot>,
    /// Keep only skills whose name matches one of these globs (all when empty).
    pub include: Vec<String>,
    /// Leave out skills whose name matches one of these globs.
    pub exclude: Vec<String>,
    /// Size and count limits.
    pub limits: CatalogLimits,
    /// Lenient or strict frontmatter rules.
    pub mode: ValidationMode,
}

/// An immutable snapshot of every skill found.
#[derive(Debug, Default)]
pub struct SkillCatalog {
    roots: Vec<SkillRoot>,
    skills: Vec<Arc<Skill>>,
    by_name: BTreeMap<String, Vec<usize>>,
    shadowed: Vec<Arc<Skill>>,
    skipped: Vec<SkippedSkill>,
    diagnostics: Vec<Diagnostic>,
    /// Built on first use ([`SkillCatalog::search_index`]).
    search_index: std::sync::OnceLock<crate::search::SkillIndex>,
    /// Every skill, in effect or shadowed, by its path in its root, the latest root's where
    /// two share one; built on first use ([`SkillCatalog::find_by_path`]).
    by_path: std::sync::OnceLock<HashMap<String, Arc<Skill>>>,
}

/// A skill folder or archive that could not be understood at all, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedSkill {
    /// The folder or archive.
    pub path: PathBuf,
    /// Why it was skipped (always at least one error).
    pub diagnostics: Vec<Diagnostic>,
}

impl SkillCatalog {
    /// Discover and load every skill under the roots.
    ///
    /// # Errors
    /// When an explicit root does not exist, or an include/exclude pattern is not a valid glob.
    /// Problems with individual skills never fail the load; they are diagnostics.
    pub fn load(options: &CatalogOptions) -> Result<SkillCatalog, CatalogError> {
        SkillCatalog::load_after(options, None)
    }

    /// Load again after files changed (the hot-reload path): as [`SkillCatalog::load`], except
    /// that a skill folder which `previous` served without errors and which now cannot be
    /// loaded, or loads with errors (a `SKILL.md` saved half-edited, say), keeps its copy from
    /// `previous`, with a `skill-kept-last-good` warning in the catalog's diagnostics saying
    /// what is wrong with the new one. A folder that is gone is gone.
    ///
    /// # Errors
    /// As [`SkillCatalog::load`].
    pub fn reload(
        options: &CatalogOptions,
        previous: &SkillCatalog,
    ) -> Result<SkillCatalog, CatalogError> {
        SkillCatalog::load_after(options, Some(previous))
    }

    fn load_after(
        options: &CatalogOptions,
        previous: Option<&SkillCatalog>,
    ) -> Result<SkillCatalog, CatalogError> {
        let started = std::time::Instant::now();
        let include = build_globs(&options.include)?;
        let exclude = build_globs(&options.exclude)?;
        let mut diagnostics = Vec::new();
        let mut candidates = Vec::new();
        let mut seen_roots: Vec<PathBuf> = Vec::new();
        for (root_index, root) in options.roots.iter().enumerate() {
            // The same folder named twice is searched once (at its first position).
            if let Ok(real) = fs_err::canonicalize(&root.path) {
                if seen_roots.contains(&real) {
                    continue;
                }
                seen_roots.push(real);
            }
            if !root.path.exists() {
                if root.origin == RootOrigin::Explicit {
                    return Err(CatalogError::RootMissing {
                        path: root.path.clone(),
                    });
                }
                if root.origin == RootOrigin::Environment {
                    diagnostics.push(
                        Diagnostic::warning(
                            DiagnosticCode::PathUnreadable,
                            format!("skill root `{}` from `{ROOTS_ENVIRONMENT_VARIABLE}` does not exist", root.path.display()),
                        )
                        .in_file(&root.path)
                        .with_hint(format!("fix or remove the entry in `{ROOTS_ENVIRONMENT_VARIABLE}`")),
                    );
                }
                continue;
            }
            let load = |path: &Path,
                        descriptor: BorrowedFd<'_>,
                        listing: FolderListing,
                        skill_md: Option<&std::fs::File>| {
                load_folder(
                    path,
                    root_index,
                    listing,
                    OpenFolder {
                        descriptor: Some(descriptor),
                        skill_md,
                    },
                    options,
                )
            };
            discover(
                &root.path,
                root_index,
                &options.limits,
                &load,
                &mut candidates,
                &mut diagnostics,
            );
        }

        tracing::debug!(
            candidates = candidates.len(),
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "discovery done"
        );
        let mut outcomes: Vec<(PathBuf, LoadOutcome)> = admit_archives(candidates, &options.limits)
            .into_par_iter()
            .map(|(candidate, allowance_bytes)| load_candidate(candidate, allowance_bytes, options))
            .collect();
        refuse_archives_past_the_unpacked_budget(&mut outcomes, &options.limits);

        tracing::debug!(
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "loading done"
        );
        let mut kept: Vec<Arc<Skill>> = Vec::with_capacity(outcomes.len());
        let mut index_by_key: HashMap<PrecedenceKey, usize> =
            HashMap::with_capacity(outcomes.len());
        let mut shadowed = Vec::new();
        let mut skipped = Vec::new();
        let last_good: HashMap<&Path, &Arc<Skill>> = previous
            .into_iter()
            .flat_map(|previous| previous.skills.iter().chain(&previous.shadowed))
            .filter(|skill| !skill.has_errors())
            .map(|skill| (skill.directory.as_path(), skill))
            .collect();
        for (path, outcome) in outcomes {
            let skill = match outcome {
                LoadOutcome::Loaded(skill) => match last_good.get(skill.directory.as_path()) {
                    Some(good) if skill.has_errors() => {
                        let problems: Vec<&Diagnostic> = skill
                            .diagnostics
                            .iter()
                            .filter(|d| d.severity == Severity::Error)
                            .collect();
                        diagnostics.push(kept_last_good(good, &problems));
                        Arc::clone(good)
                    }
                    _ => skill,
                },
                LoadOutcome::Skipped(skip_diagnostics) => {
                    if let Some(good) = last_good.get(path.as_path()) {
                        diagnostics.push(kept_last_good(
                            good,
                            &skip_diagnostics.iter().collect::<Vec<_>>(),
                        ));
                        Arc::clone(good)
                    } else {
                        skipped.push(SkippedSkill {
                            path,
                            diagnostics: skip_diagnostics,
                        });
                        continue;
                    }
                }
            };
            if let Some(refusal) = reserved_name_refusal(&skill, options) {
                skipped.push(SkippedSkill {
                    path,
                    diagnostics: vec![refusal],
                });
                continue;
            }
            let name = skill.name();
            let included = include.as_ref().is_none_or(|globs| globs.is_match(name));
            let excluded = exclude.as_ref().is_some_and(|globs| globs.is_match(name));
            if !included || excluded {
                continue;
            }
            match index_by_key.entry(precedence_key(&skill.id)) {
                Entry::Vacant(slot) => {
                    slot.insert(kept.len());
                    kept.push(skill);
                }
                Entry::Occupied(slot) if is_same_folder(&kept[*slot.get()], &skill) => {
                    // Two roots (or two paths in one root) that reach one folder, through a
                    // link such as the one `skillbox add --agent` makes: one skill, no
                    // override. The copy precedence would keep is kept, nothing shadowed.
                    let existing = *slot.get();
                    tracing::debug!(
                        skill = %skill.id,
                        kept = %kept[existing].directory.display(),
                        also = %skill.directory.display(),
                        "one skill folder reached by two paths"
                    );
                    if kept[existing].root_index != skill.root_index {
                        kept[existing] = skill;
                    }
                }
                Entry::Occupied(slot) => {
                    let existing = *slot.get();
                    // One version twice: in one root the first in path order stays, across
                    // roots the later root's copy replaces the earlier one.
                    let same_root = kept[existing].root_index == skill.root_index;
                    let mut loser = std::mem::replace(&mut kept[existing], skill);
                    if same_root {
                        std::mem::swap(&mut kept[existing], &mut loser);
                    }
                    let (for_winner, for_loser) =
                        same_version_messages(&kept[existing], &loser, same_root);
                    let on_winner = shadowing_warning(&for_winner, &kept[existing]);
                    add_diagnostic(&mut kept[existing], on_winner);
                    let on_loser = shadowing_warning(&for_loser, &loser);
                    add_diagnostic(&mut loser, on_loser.clone());
                    diagnostics.push(on_loser);
                    shadowed.push(loser);
                }
            }
        }
        tracing::debug!(
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "merge by name and version done"
        );
        let mut skills = apply_root_precedence(kept, &mut shadowed, &mut diagnostics);
        skills.par_sort_by(|a, b| {
            a.id.name
                .cmp(&b.id.name)
                .then_with(|| b.root_index.cmp(&a.root_index))
                .then_with(|| b.id.version.cmp(&a.id.version))
        });
        tracing::debug!(
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "root precedence done"
        );
        warn_about_confusable_names(&mut skills);
        requires::check_requires(&mut skills);
        tracing::debug!(
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "look-alike names done"
        );
        let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (index, skill) in skills.iter().enumerate() {
            by_name
                .entry(skill.id.name.clone())
                .or_default()
                .push(index);
        }
        Ok(SkillCatalog {
            roots: options.roots.clone(),
            skills,
            by_name,
            shadowed,
            skipped,
            diagnostics,
            search_index: std::sync::OnceLock::new(),
            by_path: std::sync::OnceLock::new(),
        })
    }

    /// The roots the catalog was built from, lowest precedence first.
    #[must_use]
    pub fn roots(&self) -> &[SkillRoot] {
        &self.roots
    }

    /// Every skill version that can be used, sorted by name, the copy in effect first (the
    /// latest root holding the name, then newest version first).
    #[must_use]
    pub fn skills(&self) -> &[Arc<Skill>] {
        &self.skills
    }

    /// The copy in effect of each skill, sorted by name: from the latest root holding its name,
    /// the highest version there.
    pub fn latest(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.by_name
            .values()
            .filter_map(|indices| indices.first().map(|index| &self.skills[*index]))
    }

    /// The copy in effect of every skill a model may see ([`Skill::visible_to_model`]), sorted
    /// by name: [`SkillCatalog::latest`] without the skills hidden from models.
    pub fn latest_visible_to_model(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.latest().filter(|skill| skill.visible_to_model())
    }

    /// The search index over the copies in effect ([`SkillCatalog::latest`]), built on first
    /// use and kept with this snapshot (a reload builds a new catalog, and so a new index).
    pub fn search_index(&self) -> &crate::search::SkillIndex {
        self.search_index.get_or_init(|| {
            let started = std::time::Instant::now();
            let index = crate::search::SkillIndex::build(self.latest());
            tracing::debug!(
                skills = index.len(),
                elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
                "search index built"
            );
            index
        })
    }

    /// Whether [`SkillCatalog::search_index`] is built (a search then costs no build).
    #[must_use]
    pub fn has_search_index(&self) -> bool {
        self.search_index.get().is_some()
    }

    /// Names of all skills, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// The copy of a skill in effect when no version is asked for: a later root wins for a name,
    /// whatever the versions; within that root the highest version (an unversioned copy counts
    /// lowest).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.by_name
            .get(name)
            .and_then(|indices| indices.first())
            .map(|index| &self.skills[*index])
    }

    /// One version of a skill, from whichever root holds it. Build metadata does not count
    /// (`1.0.0+a` finds `1.0.0`): the catalog holds one copy per name and version.
    #[must_use]
    pub fn get_version(&self, name: &str, version: &semver::Version) -> Option<&Arc<Skill>> {
        self.versions(name).find(|skill| {
            skill
                .id
                .version
                .as_ref()
                .is_some_and(|held| held.cmp_precedence(version).is_eq())
        })
    }

    /// Every version of a skill that can be asked for, the one in effect first.
    pub fn versions(&self, name: &str) -> impl Iterator<Item = &Arc<Skill>> {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|index| &self.skills[*index])
    }

    /// Look a skill up by name and optional version text.
    ///
    /// # Errors
    /// [`CatalogError::SkillNotFound`] when there is no such skill or version.
    pub fn find(&self, name: &str, version: Option<&str>) -> Result<&Arc<Skill>, CatalogError> {
        let not_found = || CatalogError::SkillNotFound {
            name: name.to_owned(),
            version: version.map(str::to_owned),
        };
        match version {
            None | Some("latest") if name.contains('/') => self
                .get(name)
                .or_else(|| self.find_by_path(name))
                .ok_or_else(not_found),
            None | Some("latest") => self.get(name).ok_or_else(not_found),
            Some(text) => {
                let wanted = semver::Version::parse(text.trim_start_matches('v'))
                    .map_err(|_| not_found())?;
                self.get_version(name, &wanted).ok_or_else(not_found)
            }
        }
    }

    /// The skill whose folder is at `path` within its root (`openai/skill-creator`; a
    /// trailing `/` or `/SKILL.md` is ignored), in effect or shadowed, the latest root first:
    /// how a copy that another of the same name shadows is still reached. `..`, empty and
    /// absolute paths find nothing.
    #[must_use]
    pub fn find_by_path(&self, path: &str) -> Option<&Arc<Skill>> {
        let wanted = path
            .strip_suffix("/SKILL.md")
            .or_else(|| path.strip_suffix("/skill.md"))
            .unwrap_or(path)
            .trim_end_matches('/');
        if wanted.is_empty()
            || wanted.starts_with('/')
            || wanted
                .split('/')
                .any(|part| part.is_empty() || part == "." || part == "..")
        {
            return None;
        }
        self.by_path
            .get_or_init(|| {
                let mut by_path: HashMap<String, Arc<Skill>> =
                    HashMap::with_capacity(self.skills.len() + self.shadowed.len());
                for skill in self.skills.iter().chain(&self.shadowed) {
                    match by_path.entry(skill.path_in_root()) {
                        Entry::Vacant(slot) => {
                            slot.insert(Arc::clone(skill));
                        }
                        Entry::Occupied(mut slot) if skill.root_index > slot.get().root_index => {
                            slot.insert(Arc::clone(skill));
                        }
                        Entry::Occupied(_) => {}
                    }
                }
                by_path
            })
            .get(wanted)
    }

    /// Whether `skill` is this very copy of its name in effect ([`SkillCatalog::get`]), as
    /// secrets granted by name see it: the one place that is decided. Copies are told apart
    /// by identity, so `skill` must come from this catalog (a copy from another snapshot is
    /// never the latest).
    #[must_use]
    pub fn is_latest(&self, skill: &Skill) -> bool {
        self.get(skill.name())
            .is_some_and(|latest| std::ptr::eq(latest.as_ref(), skill))
    }

    /// The copies of `skill`'s name that another root holds (any version, in effect or
    /// shadowed). One folder reached from two roots is one copy.
    pub fn copies_in_other_roots<'a>(
        &'a self,
        skill: &'a Skill,
    ) -> impl Iterator<Item = &'a Arc<Skill>> + 'a {
        // Through the name index (a call asks this on every run); shadowed copies are few.
        self.by_name
            .get(skill.name())
            .into_iter()
            .flatten()
            .map(|index| &self.skills[*index])
            .chain(
                self.shadowed
                    .iter()
                    .filter(|other| other.name() == skill.name()),
            )
            .filter(move |other| other.root != skill.root)
    }

    /// The copies that contest `skill`'s name: those in other roots when one of the two roots
    /// is a default one ([`RootOrigin::Project`], [`RootOrigin::User`]). Which of such copies is
    /// in effect depends on where the command runs and what a clone or an install put there,
    /// not on an order the person chose, so a grant given to the name (a secret, the network)
    /// may have meant either. Between roots the person named (`--root`, `SKILLBOX_ROOTS`) the
    /// later one wins by their own choice, and the copy in effect is the one they mean.
    pub fn contesting_copies<'a>(
        &'a self,
        skill: &'a Skill,
    ) -> impl Iterator<Item = &'a Arc<Skill>> + 'a {
        let by_default = |root: &Path| {
            self.roots.iter().any(|known| {
                known.path == root && matches!(known.origin, RootOrigin::Project | RootOrigin::User)
            })
        };
        let skill_by_default = by_default(&skill.root);
        self.copies_in_other_roots(skill)
            .filter(move |other| skill_by_default || by_default(&other.root))
    }

    /// The skill name closest to `wanted` by edit distance, when close enough to be a typo
    /// (for "did you mean …?" hints).
    #[must_use]
    pub fn closest_name(&self, wanted: &str) -> Option<&str> {
        self.closest_name_among(wanted, self.names())
    }

    /// [`SkillCatalog::closest_name`] among `names` only (the skills a caller may see).
    #[must_use]
    pub fn closest_name_among<'a>(
        &self,
        wanted: &str,
        names: impl Iterator<Item = &'a str>,
    ) -> Option<&'a str> {
        names
            .map(|name| (edit_distance(wanted, name), name))
            .filter(|(distance, name)| *distance <= (name.len() / 3).max(2))
            .min()
            .map(|(_, name)| name)
    }

    /// Skills that can never be used: the same name and version in a later root (or earlier in
    /// the same root), or an unversioned copy in a root before the one in effect.
    #[must_use]
    pub fn shadowed(&self) -> &[Arc<Skill>] {
        &self.shadowed
    }

    /// Skill folders and archives that could not be understood at all.
    #[must_use]
    pub fn skipped(&self) -> &[SkippedSkill] {
        &self.skipped
    }

    /// Catalog-level diagnostics: discovery limits, missing environment roots, shadowing.
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Number of skill versions in effect.
    #[must_use]
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether no skill was found.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Whether any skill (or the catalog itself) has an error-level diagnostic.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
            || self
                .skills
                .iter()
                .chain(&self.shadowed)
                .any(|skill| skill.has_errors())
    }
}

/// The refusal of a skill that uses a reserved name outside a built-in root.
fn reserved_name_refusal(skill: &Skill, options: &CatalogOptions) -> Option<Diagnostic> {
    let name = skill.name();
    let builtin = options
        .roots
        .get(skill.root_index)
        .is_some_and(|root| root.origin == RootOrigin::Builtin);
    if builtin || !RESERVED_SKILL_NAMES.contains(&name) {
        return None;
    }
    let file = name_file(skill.format, &skill.directory, &skill.skill_md_path);
    Some(
        Diagnostic::error(
            DiagnosticCode::NameReserved,
            format!(
                "skill name `{name}` is reserved for the runtime's built-in skill; this skill is not loaded"
            ),
        )
        .in_file(file)
        .for_field("name")
        .with_hint("give the skill another name; the built-in one always answers to this name"),
    )
}

fn build_globs(patterns: &[String]) -> Result<Option<GlobSet>, CatalogError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = Glob::new(pattern).map_err(|error| CatalogError::InvalidPattern {
            pattern: pattern.clone(),
            message: error.kind().to_string(),
        })?;
        builder.add(glob);
    }
    builder
        .build()
        .map(Some)
        .map_err(|error| CatalogError::InvalidPattern {
            pattern: patterns.join(", "),
            message: error.to_string(),
        })
}

fn load_candidate(
    candidate: Candidate,
    allowance_bytes: u64,
    options: &CatalogOptions,
) -> (PathBuf, LoadOutcome) {
    match candidate {
        Candidate::Loaded { path, outcome } => (path, outcome),
        Candidate::Folder {
            path,
            root_index,
            listing,
        } => {
            let outcome = load_folder(&path, root_index, listing, OpenFolder::default(), options);
            (path, outcome)
        }
        Candidate::Archive { path, root_index } => {
            let outcome = match unpack_archive_within(&path, &options.limits, allowance_bytes) {
                Ok(unpacked) => load_skill(&LoadRequest {
                    source: SkillSource::Archive(unpacked.files),
                    directory: path.clone(),
                    folder_name: unpacked.folder_name,
                    parent_folder_name: None,
                    listing: None,
                    folder: None,
                    skill_md: None,
                    root: &options.roots[root_index].path,
                    root_index,
                    limits: &options.limits,
                    mode: options.mode,
                }),
                Err(diagnostic) => LoadOutcome::Skipped(vec![diagnostic]),
            };
            (path, outcome)
        }
    }
}

/// Load a skill folder: through what discovery holds open of it, else by path.
fn load_folder(
    path: &Path,
    root_index: usize,
    listing: FolderListing,
    open: OpenFolder<'_>,
    options: &CatalogOptions,
) -> LoadOutcome {
    // The folder's identity, as discovery opened it, is what every later read checks.
    let folder = match open.descriptor {
        Some(descriptor) => SkillFolder::opened(path.to_path_buf(), descriptor),
        None => SkillFolder::open(path),
    };
    let folder = match folder {
        Ok(folder) => folder,
        Err(error) => {
            return LoadOutcome::Skipped(vec![
                Diagnostic::error(DiagnosticCode::PathUnreadable, error.to_string())
                    .in_file(path)
                    .with_hint("check the folder's permissions"),
            ]);
        }
    };
    load_skill(&LoadRequest {
        source: SkillSource::Directory(folder),
        directory: path.to_path_buf(),
        folder_name: folder_name(path),
        parent_folder_name: path.parent().map(folder_name),
        listing: Some(listing),
        folder: open.descriptor,
        skill_md: open.skill_md,
        root: &options.roots[root_index].path,
        root_index,
        limits: &options.limits,
        mode: options.mode,
    })
}

/// What discovery holds open of a skill folder while it is loaded.
#[derive(Default)]
struct OpenFolder<'a> {
    descriptor: Option<BorrowedFd<'a>>,
    skill_md: Option<&'a std::fs::File>,
}

/// A folder's own name (resolved when the path ends in `.` or `..`).
fn folder_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .or_else(|| {
            fs_err::canonicalize(path).ok().and_then(|real| {
                real.file_name()
                    .map(|name| name.to_string_lossy().into_owned())
            })
        })
        .unwrap_or_default()
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("comit-message", "commit-message"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
