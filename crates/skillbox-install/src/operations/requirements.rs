//! The requirement graph: the skills a chosen skill `requires`, transitively, found among the
//! chosen, the rest of the source, or the lock; and the cycles refused.

use super::*;

/// `chosen` and the skills they require (`requires`, transitively): each found among the
/// chosen, taken from the `rest` of the source (said in `notes`), or installed already (in
/// `lock`).
///
/// # Errors
/// [`InstallError::NotFound`] for a required skill none of those holds, naming who needs it;
/// [`InstallError::Refused`] for skills that require each other in a cycle.
pub(super) fn with_requirements(
    mut chosen: Vec<Prepared>,
    mut rest: Vec<Prepared>,
    lock: &SkillLock,
    source_text: &str,
    notes: &mut Vec<String>,
    required_by: &mut BTreeMap<String, String>,
) -> Result<Vec<Prepared>, InstallError> {
    let mut next = 0;
    while next < chosen.len() {
        let needer = chosen[next].found.name.clone();
        let requires = chosen[next].found.requires.clone();
        next += 1;
        for name in requires {
            if chosen.iter().any(|prepared| prepared.found.name == name) {
                continue;
            }
            if let Some(position) = rest.iter().position(|prepared| prepared.found.name == name) {
                notes.push(format!("also adding `{name}`, which `{needer}` requires"));
                required_by.insert(name.clone(), needer.clone());
                chosen.push(rest.swap_remove(position));
                continue;
            }
            if lock.skills.contains_key(&name) {
                continue;
            }
            return Err(InstallError::NotFound {
                message: format!(
                    "`{needer}` requires the skill `{name}`, which `{source_text}` does not hold and which is not installed; add `{name}` first (`skillbox add SOURCE --skill {name}`), then `{needer}`"
                ),
            });
        }
    }
    let graph: BTreeMap<String, Vec<String>> = lock
        .skills
        .iter()
        .map(|(name, locked)| (name.clone(), locked.requires.clone()))
        .chain(
            chosen
                .iter()
                .map(|prepared| (prepared.found.name.clone(), prepared.found.requires.clone())),
        )
        .collect();
    for prepared in &chosen {
        if let Some(cycle) = requirement_cycle(&graph, &prepared.found.name) {
            return Err(InstallError::refused(
                source_text,
                format!(
                    "its skills require each other in a cycle ({}); a skill cannot need itself: remove one `requires` entry",
                    cycle.join(" -> ")
                ),
            ));
        }
    }
    Ok(chosen)
}

/// A path of `requires` from `start` back to itself, if there is one.
pub(super) fn requirement_cycle(
    graph: &BTreeMap<String, Vec<String>>,
    start: &str,
) -> Option<Vec<String>> {
    let mut path = vec![start.to_owned()];
    let mut seen = BTreeSet::new();
    fn walk(
        graph: &BTreeMap<String, Vec<String>>,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        let current = path.last().cloned().unwrap_or_default();
        for next in graph.get(&current).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    walk(graph, start, &mut path, &mut seen).then_some(path)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// A fetched skill named `name` that requires `requires`, as a source of this machine
    /// holds it.
    fn skill(name: &str, requires: &[&str]) -> Prepared {
        Prepared {
            found: FoundSkill {
                name: name.to_owned(),
                description: format!("The {name} skill."),
                folder: PathBuf::from("/source").join(name),
                path_in_source: name.to_owned(),
                requires: requires.iter().map(|&name| name.to_owned()).collect(),
            },
            kind: SourceKind::Path,
            spec: SourceSpec::parse("/source", Path::new("/")).unwrap(),
            revision: None,
            staging_guard: None,
            outline_of: None,
            in_store: false,
        }
    }

    fn names(prepared: &[Prepared]) -> Vec<&str> {
        prepared
            .iter()
            .map(|prepared| prepared.found.name.as_str())
            .collect()
    }

    /// [`with_requirements`] of `chosen` from a source holding nothing else, its notes dropped.
    fn alone_with(chosen: Prepared, lock: &SkillLock) -> Result<Vec<Prepared>, InstallError> {
        with_requirements(
            vec![chosen],
            Vec::new(),
            lock,
            "/source",
            &mut Vec::new(),
            &mut BTreeMap::new(),
        )
    }

    fn locked(requires: &[&str]) -> LockedSkill {
        LockedSkill {
            source: "/elsewhere".to_owned(),
            kind: SourceKind::Path,
            path: String::new(),
            reference: None,
            revision: None,
            digest: format!("sha256:{}", "0".repeat(64)),
            files: BTreeMap::new(),
            links: BTreeMap::new(),
            requires: requires.iter().map(|&name| name.to_owned()).collect(),
            agents: Vec::new(),
            copies: false,
            servers: BTreeMap::new(),
        }
    }

    #[test]
    fn requirements_come_from_the_source_transitively_and_each_is_said() {
        let chosen = vec![skill("report", &["charts"])];
        let rest = vec![
            skill("charts", &["colors"]),
            skill("colors", &[]),
            skill("unrelated", &[]),
        ];
        let mut notes = Vec::new();
        let mut required_by = BTreeMap::new();
        let all = with_requirements(
            chosen,
            rest,
            &SkillLock::new(),
            "/source",
            &mut notes,
            &mut required_by,
        )
        .unwrap();
        assert_eq!(names(&all), ["report", "charts", "colors"]);
        assert_eq!(
            notes,
            [
                "also adding `charts`, which `report` requires",
                "also adding `colors`, which `charts` requires"
            ]
        );
        assert_eq!(required_by["colors"], "charts");
    }

    #[test]
    fn a_requirement_installed_already_is_not_fetched_and_a_missing_one_names_who_needs_it() {
        let mut lock = SkillLock::new();
        lock.skills.insert("charts".to_owned(), locked(&[]));
        let all = alone_with(skill("report", &["charts"]), &lock).unwrap();
        assert_eq!(names(&all), ["report"]);
        let error = alone_with(skill("report", &["fonts"]), &lock)
            .err()
            .unwrap();
        let message = error.to_string();
        assert!(
            message.contains("`report` requires the skill `fonts`, which `/source` does not hold"),
            "{message}"
        );
    }

    #[test]
    fn a_cycle_through_the_lock_is_refused_with_its_path() {
        let mut lock = SkillLock::new();
        lock.skills.insert("b".to_owned(), locked(&["a"]));
        let error = alone_with(skill("a", &["b"]), &lock).err().unwrap();
        assert!(error.to_string().contains("a -> b -> a"), "{error}");
        let graph = BTreeMap::from([
            ("a".to_owned(), vec!["b".to_owned()]),
            ("b".to_owned(), vec!["c".to_owned()]),
            ("c".to_owned(), Vec::new()),
        ]);
        assert_eq!(requirement_cycle(&graph, "a"), None);
    }
}
