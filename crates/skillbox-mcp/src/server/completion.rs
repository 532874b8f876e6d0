//! `completion/complete`: skill names, file paths and prompt arguments a client may offer.

use super::*;

impl SkillsMcpServer {
    pub(super) async fn completions(
        &self,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let provider = self.provider();
        let wanted = request.argument.value.clone();
        let values: Vec<String> = match &request.r#ref {
            Reference::Resource(reference) if reference.uri == uri::FILE_TEMPLATE => {
                match request.argument.name.as_str() {
                    "skill" => provider
                        .model_skills()
                        .iter()
                        .map(|skill| skill.name().to_owned())
                        .filter(|name| name.starts_with(&wanted))
                        .collect(),
                    "path" => {
                        let skill_name = request
                            .context
                            .as_ref()
                            .and_then(|context| context.arguments.as_ref())
                            .and_then(|arguments| arguments.get("skill"))
                            .cloned()
                            .unwrap_or_default();
                        match provider.find_model_skill(&skill_name, None) {
                            Ok(skill) => {
                                self.blocking(move || {
                                    Ok(catalog_view::skill_resources(&skill)
                                        .filter_map(|resource| {
                                            uri::parse(&resource.uri).ok().map(|uri| uri.path)
                                        })
                                        .filter(|path| path.starts_with(&wanted))
                                        .collect())
                                })
                                .await?
                            }
                            Err(_) => Vec::new(),
                        }
                    }
                    other => {
                        return Err(ErrorData::invalid_params(
                            format!(
                                "the skill-file template has the arguments `skill` and `path`, not `{other}`"
                            ),
                            None,
                        ));
                    }
                }
            }
            Reference::Resource(reference) => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no resource template `{}`; the template is `{}`",
                        reference.uri,
                        uri::FILE_TEMPLATE
                    ),
                    None,
                ));
            }
            Reference::Prompt(reference) => {
                let Some(skill) = catalog_view::prompt_skills(&provider)
                    .find(|skill| skill.name() == reference.name)
                else {
                    return Err(ErrorData::invalid_params(
                        format!("no prompt named `{}`", reference.name),
                        None,
                    ));
                };
                let known = catalog_view::prompt(skill)
                    .arguments
                    .unwrap_or_default()
                    .iter()
                    .any(|argument| argument.name == request.argument.name);
                if !known {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "prompt `{}` has no argument `{}`",
                            reference.name, request.argument.name
                        ),
                        None,
                    ));
                }
                // A skill's arguments are free text: the hint is the only suggestion there is.
                match (
                    &skill.properties.argument_hint,
                    request.argument.name.as_str(),
                ) {
                    (Some(hint), FREE_ARGUMENTS) if wanted.is_empty() => vec![hint.clone()],
                    _ => Vec::new(),
                }
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completions are offered for prompts and the skill-file template",
                    None,
                ));
            }
        };
        let total = values.len();
        let mut values = values;
        values.truncate(CompletionInfo::MAX_VALUES);
        let has_more = total > values.len();
        let completion =
            CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more)
                .map_err(|message| ErrorData::internal_error(message, None))?;
        Ok(CompleteResult::new(completion))
    }
}
