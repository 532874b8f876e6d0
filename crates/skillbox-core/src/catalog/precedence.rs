//! Which copy of a name is in effect, and every override said on both sides: copies merged by
//! name and version, later roots winning, look-alike names warned about.

use super::*;

/// Attach a diagnostic to a skill being merged. A skill kept from the previous snapshot
/// ([`SkillCatalog::reload`]) is shared with it and keeps the diagnostics it had; the new one
/// is logged instead (the catalog's own list has it too for shadowing, the only case).
pub(super) fn add_diagnostic(skill: &mut Arc<Skill>, diagnostic: Diagnostic) {
    match Arc::get_mut(skill) {
        Some(skill) => skill.diagnostics.push(diagnostic),
        None => {
            let skill = &skill.id;
            tracing::warn!(%skill, %diagnostic, "not attached to a skill kept from the previous load");
        }
    }
}

/// The warning for a skill whose last good copy a reload keeps: which skill, and what is
/// wrong with the files now.
pub(super) fn kept_last_good(good: &Skill, problems: &[&Diagnostic]) -> Diagnostic {
    let reasons: Vec<String> = problems
        .iter()
        .take(3)
        .map(|problem| problem.message.clone())
        .collect();
    let diagnostic = Diagnostic::warning(
        DiagnosticCode::SkillKeptLastGood,
        format!(
            "skill `{}` no longer loads cleanly ({}); its last good version is still served",
            good.id,
            reasons.join("; ")
        ),
    )
    .in_file(&good.skill_md_path)
    .with_hint("fix the files (`skillbox validate` shows every problem); the next save reloads it");
    tracing::warn!("{diagnostic}");
    diagnostic
}

/// What copies of a skill are merged by: the name, and the version without build metadata
/// (semver: build metadata has no precedence, so `1.0.0+a` and `1.0.0` are one version).
pub(super) type PrecedenceKey = (String, Option<semver::Version>);

pub(super) fn precedence_key(id: &SkillId) -> PrecedenceKey {
    let version = id.version.as_ref().map(|version| semver::Version {
        build: semver::BuildMetadata::EMPTY,
        ..version.clone()
    });
    (id.name.clone(), version)
}

/// Whether two copies are one folder on disk, reached by two paths (a root, or a skill folder,
/// that is a link to the other): they hold one skill, and neither overrides the other.
pub(super) fn is_same_folder(first: &Skill, second: &Skill) -> bool {
    match (&first.source, &second.source) {
        (SkillSource::Directory(first), SkillSource::Directory(second)) => {
            first.is_same_folder(second)
        }
        _ => false,
    }
}

/// The `skill-shadowed` warning on one side of an override, in that side's own file.
pub(super) fn shadowing_warning(message: &str, skill: &Skill) -> Diagnostic {
    Diagnostic::warning(DiagnosticCode::SkillShadowed, message)
        .in_file(&skill.skill_md_path)
        .with_hint(
            "remove or rename one copy; to use another version, ask for it (`show NAME --version V`)",
        )
}

/// Why `winner` is used instead of `loser`, which is the same name and version (build metadata
/// aside): the message on the winner, then the one on the loser. Across roots one message says
/// both; in one root each copy says which copy it is, which one models see, and how the other
/// is reached (by its path in the root, which every door takes as a skill name).
pub(super) fn same_version_messages(
    winner: &Skill,
    loser: &Skill,
    same_root: bool,
) -> (String, String) {
    let build = if winner.id == loser.id {
        ""
    } else {
        " (build metadata does not count)"
    };
    if same_root {
        let same = if loser.id.version.is_some() {
            "the same version"
        } else {
            "the same name, and no version"
        };
        let (winner_path, loser_path) = (winner.path_in_root(), loser.path_in_root());
        let on_winner = format!(
            "skill `{}` at `{winner_path}` is in effect: `{loser_path}` in the same root has {same}{build}, and the first in path order is the one models see; the other copy is reached by its path, `{loser_path}`, as the skill name",
            winner.id,
        );
        let on_loser = format!(
            "skill `{}` at `{loser_path}` is shadowed by `{winner_path}`, which has {same}{build} and comes first in path order in the same root; models see that copy; reach this one by its path, `{loser_path}`, as the skill name (`skillbox show {loser_path}`)",
            loser.id,
        );
        (on_winner, on_loser)
    } else {
        let why = if build.is_empty() {
            "the same version in a later root wins"
        } else {
            "build metadata does not count, so they are one version, and a later root wins"
        };
        let message = format!(
            "skill `{}` from root `{}` is in effect over `{}` from the earlier root `{}`: {why}; asking for either spelling of the version finds the one in effect",
            winner.id,
            winner.root.display(),
            loser.id,
            loser.root.display()
        );
        (message.clone(), message)
    }
}

/// A later root wins for a name, whatever the versions: every copy of a name from a root
/// before the latest root holding it gets a warning, as does the copy in effect. A versioned
/// copy stays (reachable by asking for its version); an unversioned one cannot be asked for
/// and goes to `shadowed`.
pub(super) fn apply_root_precedence(
    mut kept: Vec<Arc<Skill>>,
    shadowed: &mut Vec<Arc<Skill>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Arc<Skill>> {
    // With one root nothing is overridden across roots.
    if kept.first().is_none_or(|first| {
        kept.iter()
            .all(|skill| skill.root_index == first.root_index)
    }) {
        return kept;
    }
    // The copy in effect for each name: the latest root's, highest version.
    let mut in_effect: HashMap<&str, usize> = HashMap::with_capacity(kept.len());
    for (index, skill) in kept.iter().enumerate() {
        in_effect
            .entry(skill.name())
            .and_modify(|best| {
                let current = &kept[*best];
                if (skill.root_index, &skill.id.version) > (current.root_index, &current.id.version)
                {
                    *best = index;
                }
            })
            .or_insert(index);
    }
    let overridden: Vec<(usize, usize)> = kept
        .iter()
        .enumerate()
        .filter_map(|(index, skill)| {
            let winner = in_effect[skill.name()];
            (kept[winner].root_index > skill.root_index).then_some((index, winner))
        })
        .collect();
    if overridden.is_empty() {
        return kept;
    }
    let mut unreachable = vec![false; kept.len()];
    for (loser, winner) in overridden {
        let tail = match &kept[loser].id.version {
            Some(version) => format!("it is used only when version `{version}` is asked for"),
            None => {
                unreachable[loser] = true;
                "it has no version to ask for, so it is never used".to_owned()
            }
        };
        let message = format!(
            "skill `{}` from root `{}` is in effect over `{}` from the earlier root `{}`: a later root wins for a name, whatever the versions; {tail}",
            kept[winner].id,
            kept[winner].root.display(),
            kept[loser].id,
            kept[loser].root.display()
        );
        let on_winner = shadowing_warning(&message, &kept[winner]);
        add_diagnostic(&mut kept[winner], on_winner);
        let on_loser = shadowing_warning(&message, &kept[loser]);
        add_diagnostic(&mut kept[loser], on_loser.clone());
        diagnostics.push(on_loser);
    }
    let mut in_force = Vec::with_capacity(kept.len());
    for (skill, unreachable) in kept.into_iter().zip(unreachable) {
        if unreachable {
            shadowed.push(skill);
        } else {
            in_force.push(skill);
        }
    }
    in_force
}

/// A `name-confusable` warning on every skill whose name looks like another's (the same TR39
/// skeleton, [`crate::names::confusable_groups`]), naming the others and where they are.
pub(super) fn warn_about_confusable_names(skills: &mut [Arc<Skill>]) {
    // Skills are sorted by name: the first of each name is the copy in effect.
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    for (index, skill) in skills.iter().enumerate() {
        if !first_of.contains_key(skill.name()) {
            first_of.insert(skill.name(), index);
            names.push(skill.name());
        }
    }
    let groups = crate::names::confusable_groups(&names);
    if groups.is_empty() {
        return;
    }
    let mut warnings: Vec<(String, Diagnostic)> = Vec::new();
    for group in &groups {
        for name in group {
            let others: Vec<String> = group
                .iter()
                .filter(|other| *other != name)
                .map(|other| {
                    format!(
                        "`{}` (at `{}`)",
                        printable(other),
                        skills[first_of[other]].directory.display()
                    )
                })
                .collect();
            let foreign = crate::names::foreign_letters(name);
            let holds = if foreign.is_empty() {
                String::new()
            } else {
                format!("; it holds {foreign}")
            };
            let message = format!(
                "skill name `{}` looks like {} (the same Unicode TR39 confusable skeleton): a person or a model may take one for the other{holds}",
                printable(name),
                others.join(" and ")
            );
            warnings.push((
                (*name).to_owned(),
                Diagnostic::warning(DiagnosticCode::NameConfusable, message).with_hint(
                    "rename one of them so the names differ visibly; both skills still load",
                ),
            ));
        }
    }
    let by_name: HashMap<String, Diagnostic> = warnings.into_iter().collect();
    for skill in skills.iter_mut() {
        if let Some(warning) = by_name.get(skill.name()) {
            let warning = warning.clone().in_file(&skill.skill_md_path);
            add_diagnostic(skill, warning);
        }
    }
}
