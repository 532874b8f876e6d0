//! The archives a catalog admits: all of them share a budget of bytes held and of bytes they
//! expand to, given in path order.

use super::*;

/// Give each archive its size out of the catalog's archive budget
/// ([`CatalogLimits::max_catalog_archive_bytes`]), in path order, before any is read: an archive
/// that does not fit is refused with an error. Returns each candidate with the bytes its archive
/// may take (unused for folders).
pub(super) fn admit_archives(
    candidates: Vec<Candidate>,
    limits: &CatalogLimits,
) -> Vec<(Candidate, u64)> {
    let mut remaining_bytes = limits.max_catalog_archive_bytes;
    candidates
        .into_iter()
        .map(|candidate| {
            let Candidate::Archive { path, root_index } = candidate else {
                return (candidate, 0);
            };
            // An unreadable or oversized archive is reported by `unpack_archive` itself and
            // takes nothing from the budget.
            let size = match fs_err::metadata(&path) {
                Ok(metadata) if metadata.len() <= limits.max_archive_bytes => metadata.len(),
                _ => return (Candidate::Archive { path, root_index }, remaining_bytes),
            };
            if size > remaining_bytes {
                let message = format!(
                    "archive is {size} bytes and only {remaining_bytes} of the {} bytes all archives of a catalog may take are left (archives are given theirs in path order)",
                    limits.max_catalog_archive_bytes
                );
                let refusal = Diagnostic::error(DiagnosticCode::ArchiveInvalid, message)
                    .in_file(&path)
                    .with_hint("unpack large archives into skill folders, or load fewer archives");
                let outcome = LoadOutcome::Skipped(vec![refusal]);
                return (Candidate::Loaded { path, outcome }, 0);
            }
            remaining_bytes -= size;
            (Candidate::Archive { path, root_index }, size)
        })
        .collect()
}

/// Give each loaded archive what it expands to out of
/// [`CatalogLimits::max_catalog_archive_unpacked_bytes`], in path order: running every archive
/// of a catalog writes that much to the runtime folder. An archive past the budget is skipped
/// with an error.
pub(super) fn refuse_archives_past_the_unpacked_budget(
    outcomes: &mut [(PathBuf, LoadOutcome)],
    limits: &CatalogLimits,
) {
    let mut remaining_bytes = limits.max_catalog_archive_unpacked_bytes;
    for (path, outcome) in outcomes.iter_mut() {
        let LoadOutcome::Loaded(skill) = outcome else {
            continue;
        };
        let SkillSource::Archive(files) = &skill.source else {
            continue;
        };
        let unpacked_bytes = files.unpacked_bytes();
        if unpacked_bytes <= remaining_bytes {
            remaining_bytes -= unpacked_bytes;
            continue;
        }
        let message = format!(
            "archive expands to {unpacked_bytes} bytes and only {remaining_bytes} of the {} bytes all archives of a catalog may expand to are left (archives are given theirs in path order)",
            limits.max_catalog_archive_unpacked_bytes
        );
        let refusal = Diagnostic::error(DiagnosticCode::ArchiveInvalid, message)
            .in_file(path.as_path())
            .with_hint("unpack large archives into skill folders, or load fewer archives");
        *outcome = LoadOutcome::Skipped(vec![refusal]);
    }
}
