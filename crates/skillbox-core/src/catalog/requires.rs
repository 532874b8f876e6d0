//! `requires` across a catalog: each skill a skill requires must be in the catalog, not be the
//! skill itself, and no chain of requirements may come back to where it started. Problems are
//! errors on the skill that names them (a cycle on the first of its skills by name, once).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, DiagnosticCode};
use crate::skill::Skill;

use super::precedence::add_diagnostic;

fn requires_error(skill: &Skill, message: String, hint: &str) -> Diagnostic {
    Diagnostic::error(DiagnosticCode::RequiresInvalid, message)
        .in_file(&skill.skill_md_path)
        .for_field("requires")
        .with_hint(hint.to_owned())
}

/// Check the `requires` of every skill in `skills` (the copies in effect).
pub(super) fn check_requires(skills: &mut [Arc<Skill>]) {
    let graph: BTreeMap<&str, Vec<&str>> = skills
        .iter()
        .map(|skill| {
            (
                skill.name(),
                skill
                    .properties
                    .requires
                    .iter()
                    .map(String::as_str)
                    .collect(),
            )
        })
        .collect();
    let mut found: Vec<(usize, Diagnostic)> = Vec::new();
    for (index, skill) in skills.iter().enumerate() {
        for required in &skill.properties.requires {
            if required == skill.name() {
                found.push((
                    index,
                    requires_error(
                        skill,
                        format!("skill `{required}` requires itself"),
                        "remove its own name from `requires`",
                    ),
                ));
            } else if !graph.contains_key(required.as_str()) {
                found.push((
                    index,
                    requires_error(
                        skill,
                        format!(
                            "`requires` names `{required}`, which is not among the skills found"
                        ),
                        "install it (`skillbox add …`), add its root, or remove it from `requires`",
                    ),
                ));
            }
        }
    }
    for cycle in cycles(&graph) {
        let Some(index) = skills.iter().position(|skill| skill.name() == cycle[0]) else {
            continue;
        };
        let shown = cycle
            .iter()
            .chain(std::iter::once(&cycle[0]))
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(" → ");
        found.push((
            index,
            requires_error(
                &skills[index],
                format!("`requires` goes round in a cycle: {shown}"),
                "break the cycle: a skill cannot need a skill that needs it",
            ),
        ));
    }
    for (index, diagnostic) in found {
        add_diagnostic(&mut skills[index], diagnostic);
    }
}

/// The cycles of `graph` (other than a skill requiring itself), each as its names in order from
/// its smallest name: one per edge that leads back into the path of a depth-first walk, so
/// every node and edge is walked once.
fn cycles<'a>(graph: &BTreeMap<&'a str, Vec<&'a str>>) -> Vec<Vec<&'a str>> {
    let mut found: BTreeSet<Vec<&str>> = BTreeSet::new();
    let mut finished: BTreeSet<&str> = BTreeSet::new();
    for &start in graph.keys() {
        if finished.contains(start) {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        let mut path: Vec<&str> = vec![start];
        while let Some((node, next)) = stack.pop() {
            let edges = graph.get(node).map_or(&[][..], Vec::as_slice);
            let Some(&target) = edges.get(next) else {
                path.pop();
                finished.insert(node);
                continue;
            };
            stack.push((node, next + 1));
            if target == node || finished.contains(target) || !graph.contains_key(target) {
                continue;
            }
            if let Some(at) = path.iter().position(|on| *on == target) {
                let mut cycle = path[at..].to_vec();
                let smallest = cycle
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, name)| **name)
                    .map_or(0, |(index, _)| index);
                cycle.rotate_left(smallest);
                found.insert(cycle);
            } else {
                path.push(target);
                stack.push((target, 0));
            }
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn each_cycle_is_found_once_from_its_smallest_name() {
        let graph: BTreeMap<&str, Vec<&str>> = BTreeMap::from([
            ("a", vec!["b"]),
            ("b", vec!["c"]),
            ("c", vec!["a", "d"]),
            ("d", vec![]),
            ("e", vec!["f"]),
            ("f", vec!["e"]),
            ("g", vec!["g"]),
        ]);
        assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"], vec!["e", "f"]]);
        let acyclic: BTreeMap<&str, Vec<&str>> =
            BTreeMap::from([("a", vec!["b", "c"]), ("b", vec!["c"]), ("c", vec![])]);
        assert!(cycles(&acyclic).is_empty());
    }
}
