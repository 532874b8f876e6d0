//! The skills extension: `skills/list`, `skills/get` and `resources/directory/read`.

use super::*;

impl SkillsMcpServer {
    pub(super) async fn skills_page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let provider = self.provider();
        let cursor = cursor_of(request.as_ref()).map(str::to_owned);
        let pages = &self.shared.skill_pages;
        if let Some(page) = pages.get(&provider, &cursor) {
            return Ok(Arc::unwrap_or_clone(page));
        }
        let rendering = Arc::clone(&provider);
        let looked_up = cursor.clone();
        let page = self
            .blocking(move || skills_list_page(&rendering, looked_up.as_deref()))
            .await?;
        // Only pages this server led to are kept: the first, and those after a cursor it
        // handed out. A cursor a client made up is answered and forgotten, so made-up cursors
        // cannot fill the memory of a snapshot.
        let issued = cursor.is_none()
            || pages.any(&provider, |kept: &ListSkillsResult| {
                kept.next_cursor.as_deref() == cursor.as_deref()
            });
        if !issued {
            return Ok(page);
        }
        Ok(Arc::unwrap_or_clone(pages.keep(&provider, cursor, page)))
    }

    pub(super) async fn skill_entry_at(
        &self,
        request: GetSkillRequestParams,
    ) -> Result<GetSkillResult, ErrorData> {
        let provider = self.provider();
        self.blocking(move || {
            let unknown = || {
                ErrorData::invalid_params(
                    format!("no skill is served at `{}`; skills/list lists them", request.uri),
                    None,
                )
            };
            let (skill, path) = uri::locate(&provider, &request.uri).map_err(|_| unknown())?;
            if path != catalog_view::SKILL_MD {
                return Err(unknown());
            }
            let entry = catalog_view::skill_entry(&provider, &skill).map_err(|reason| {
                ErrorData::invalid_params(
                    format!(
                        "skill `{}` is served as tools and resources, but not as a skills-extension entry: {reason}",
                        skill.name()
                    ),
                    None,
                )
            })?;
            if entry.uri != request.uri {
                return Err(unknown());
            }
            Ok(GetSkillResult::new(entry))
        })
        .await
    }

    pub(super) async fn resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let provider = self.provider();
        self.blocking(move || {
            let (skill, path) = uri::locate(&provider, &request.uri)
                .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
            let children = catalog_view::directory_children(&skill, &path)?;
            let (children, next) = page(
                children.into_iter(),
                |child| {
                    // Files, then folders, each by name (the order they are listed in).
                    format!("{}\0{}", u8::from(child.is_directory()), child.name)
                },
                request.cursor.as_deref(),
                RESOURCES_PER_PAGE,
            )?;
            let mut result = ListResourcesResult::with_all_items(children);
            result.next_cursor = next;
            Ok(result)
        })
        .await
    }
}

/// One `skills/list` page of the skills a model may see, after `cursor`.
fn skills_list_page(
    provider: &SkillsProvider,
    cursor: Option<&str>,
) -> Result<ListSkillsResult, ErrorData> {
    // The copies in effect, then every other copy a model may see, each under its own URI:
    // two publishers' skills of one name are both listed, by name and by path.
    let mut skills: Vec<(String, Arc<skillbox_core::Skill>)> = provider
        .model_skills()
        .into_iter()
        .chain(provider.other_model_copies())
        .map(|skill| (uri::skill_segment(provider, &skill), skill))
        .collect();
    skills.sort_by(|a, b| a.0.cmp(&b.0));
    let (skills, next) = page(
        skills.iter(),
        |(segment, _)| segment.clone(),
        cursor,
        SKILLS_PER_PAGE,
    )?;
    let entries = skills
        .into_iter()
        .filter_map(
            |(_, skill)| match catalog_view::skill_entry(provider, skill) {
                Ok(entry) => Some(entry),
                Err(reason) => {
                    tracing::debug!(skill = skill.name(), %reason, "not in skills/list");
                    None
                }
            },
        )
        .collect();
    let mut result = ListSkillsResult::with_all_items(entries);
    result.next_cursor = next;
    Ok(result)
}
