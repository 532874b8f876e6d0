//! The skills list (`GET /` and `GET /skills`): filtered and paged on the server, so 10,000
//! skills cost one page of rows, with the shared namespaces and the folders that could not be
//! loaded.

use std::collections::BTreeMap;
use std::sync::Arc;

use askama::Template;
use axum::Extension;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use skillbox_core::{Skill, SkillKind};

use super::rows::{DiagnosticRow, SkillRow};
use crate::WebState;
use crate::auth::Visitor;
use crate::pages::{Layout, encode_component, render};

/// Rows of the skills list per page.
pub const SKILLS_PER_PAGE: usize = 50;
/// Longest search text taken, in characters (the rest is ignored).
const MAX_QUERY_CHARS: usize = 200;

/// The list's filters, as the query string carries them.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct SkillFilter {
    #[serde(default)]
    q: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    errors: String,
    #[serde(default)]
    page: Option<usize>,
    /// `rows`: only the rows and the pager, for the search box's updates.
    #[serde(default)]
    fragment: String,
}

impl SkillFilter {
    fn query_words(&self) -> Vec<String> {
        self.q
            .chars()
            .take(MAX_QUERY_CHARS)
            .collect::<String>()
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }

    fn matches(&self, skill: &Skill, words: &[String]) -> bool {
        let kind_matches = match self.kind.as_str() {
            "action" => skill.kind() == SkillKind::Action,
            "instruction" => skill.kind() == SkillKind::Instruction,
            _ => true,
        };
        let errors_match = match self.errors.as_str() {
            "yes" => skill.has_errors(),
            "no" => !skill.has_errors(),
            "any-diagnostic" => !skill.diagnostics.is_empty(),
            _ => true,
        };
        kind_matches
            && errors_match
            && (self.namespace.is_empty() || skill.namespace() == self.namespace)
            && (words.is_empty() || {
                let haystack = format!(
                    "{} {} {}",
                    skill.name(),
                    skill.title.as_deref().unwrap_or_default(),
                    skill.description
                )
                .to_lowercase();
                words.iter().all(|word| haystack.contains(word.as_str()))
            })
    }

    /// The query string of this filter on another page.
    fn on_page(&self, page: usize) -> String {
        let mut pairs = Vec::new();
        for (name, value) in [
            ("q", &self.q),
            ("kind", &self.kind),
            ("namespace", &self.namespace),
            ("errors", &self.errors),
        ] {
            if !value.is_empty() {
                pairs.push(format!("{name}={}", encode_component(value)));
            }
        }
        pairs.push(format!("page={page}"));
        format!("/skills?{}", pairs.join("&"))
    }
}

/// A folder that could not be loaded, with why.
pub(crate) struct SkippedRow {
    path: String,
    diagnostics: Vec<DiagnosticRow>,
}

#[derive(Template)]
#[template(path = "skills.html")]
struct SkillsPage {
    layout: Layout,
    list: SkillList,
    filter: SkillFilter,
    namespaces: Vec<(String, usize)>,
    skipped: Vec<SkippedRow>,
    total_skills: usize,
}

#[derive(Template)]
#[template(path = "skill_rows.html")]
struct SkillList {
    rows: Vec<SkillRow>,
    matched: usize,
    page: usize,
    pages: usize,
    previous: Option<String>,
    next: Option<String>,
}

/// `GET /` and `GET /skills`: the list, filtered and paged; `?fragment=rows` answers the rows
/// alone for the search box.
pub(crate) async fn skills_page(
    State(state): State<Arc<WebState>>,
    Extension(visitor): Extension<Visitor>,
    Query(filter): Query<SkillFilter>,
) -> Response {
    let provider = state.provider();
    let catalog = provider.catalog();
    let words = filter.query_words();
    let matching: Vec<&Arc<Skill>> = catalog
        .latest()
        .filter(|skill| filter.matches(skill, &words))
        .collect();
    let pages = matching.len().div_ceil(SKILLS_PER_PAGE).max(1);
    let page = filter.page.unwrap_or(1).clamp(1, pages);
    let rows = matching
        .iter()
        .skip((page - 1) * SKILLS_PER_PAGE)
        .take(SKILLS_PER_PAGE)
        .map(|skill| SkillRow::of(skill, catalog.versions(skill.name()).count()))
        .collect();
    let list = SkillList {
        rows,
        matched: matching.len(),
        page,
        pages,
        previous: (page > 1).then(|| filter.on_page(page - 1)),
        next: (page < pages).then(|| filter.on_page(page + 1)),
    };
    if filter.fragment == "rows" {
        return render(&list, StatusCode::OK);
    }
    let mut namespace_counts: BTreeMap<&str, usize> = BTreeMap::new();
    for skill in catalog.latest() {
        *namespace_counts.entry(skill.namespace()).or_default() += 1;
    }
    // A namespace of one skill is just its name: the select lists the shared ones.
    let namespaces = namespace_counts
        .into_iter()
        .filter(|(name, count)| *count > 1 || *name == filter.namespace)
        .map(|(name, count)| (name.to_owned(), count))
        .collect();
    let skipped = catalog
        .skipped()
        .iter()
        .map(|skipped| SkippedRow {
            path: skipped.path.display().to_string(),
            diagnostics: skipped
                .diagnostics
                .iter()
                .map(|diagnostic| DiagnosticRow::of(diagnostic, None))
                .collect(),
        })
        .collect();
    let page = SkillsPage {
        layout: Layout::for_visitor(&visitor, "skills", "Skills".into()),
        total_skills: catalog.latest().count(),
        list,
        filter,
        namespaces,
        skipped,
    };
    render(&page, StatusCode::OK)
}
