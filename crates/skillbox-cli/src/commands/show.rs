//! `skillbox show`: everything about one skill.

use std::process::ExitCode;

use serde::Serialize;
use skillbox_core::printable::{printable, printable_block, printable_line};
use skillbox_core::{Diagnostic, Skill, ToolDefinition};

use crate::EXIT_USAGE;
use crate::arguments::{GlobalOptions, ShowArguments};
use crate::output::{human_bytes, indent, print_json, print_text, trust_mark};
use crate::setup::{Setup, trust_gate};

#[derive(Serialize)]
struct ResourceView {
    path: String,
    size_bytes: u64,
    group: skillbox_core::skill::ResourceGroup,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<String>,
}

#[derive(Serialize)]
struct SkillView<'a> {
    /// The listing row without its `tools` and `mcp_servers` (names): the full definitions
    /// below take those keys.
    #[serde(flatten)]
    summary_fields: serde_json::Map<String, serde_json::Value>,
    frontmatter: &'a indexmap_json::Map,
    #[serde(skip_serializing_if = "Option::is_none")]
    manifest: Option<&'a serde_json::Value>,
    allowed_tools: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    argument_hint: Option<&'a str>,
    files: &'a [skillbox_core::properties::FileReference],
    declared_secrets: Vec<String>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    mcp_servers: &'a [skillbox_core::skill_servers::ServerDeclaration],
    tools: &'a [ToolDefinition],
    resources: Vec<ResourceView>,
    resources_truncated: bool,
    diagnostics: &'a [Diagnostic],
    /// For a skill under a project folder: whether its code may run.
    #[serde(skip_serializing_if = "Option::is_none")]
    trust: Option<&'static str>,
    #[serde(skip)]
    trust_command: Option<String>,
    body: String,
    body_truncated: bool,
}

mod indexmap_json {
    /// Frontmatter fields in file order.
    pub type Map = indexmap::IndexMap<String, serde_json::Value>;
}

/// Run the command.
pub fn run(global: &GlobalOptions, arguments: &ShowArguments) -> anyhow::Result<ExitCode> {
    let catalog = Setup::new(global, &arguments.roots)?.catalog()?;
    let skill = match catalog.find(&arguments.name, arguments.version.as_deref()) {
        Ok(skill) => skill,
        Err(error) => {
            let known: Vec<&str> = catalog.names().collect();
            eprintln!("error: {}", printable(&error.to_string()));
            // The closest name is a skill's, whatever it holds.
            if let Some(close) = catalog.closest_name(&arguments.name) {
                eprintln!("  hint: did you mean `{}`?", printable(close));
            } else if known.is_empty() {
                eprintln!(
                    "  hint: no skills were found; name a root after the skill (`skillbox show NAME DIR`), pass --root DIR, or set SKILLBOX_ROOTS"
                );
            } else {
                eprintln!(
                    "  hint: `skillbox list` shows the {} skill(s) found",
                    known.len()
                );
            }
            return Ok(ExitCode::from(EXIT_USAGE));
        }
    };
    let latest = catalog.is_latest(skill);
    let trust = trust_mark(&trust_gate(catalog.roots()), skill);
    let body = skill.body()?;
    let (resources, resources_truncated) = skill.resources();
    let summary = skill.summary(latest);
    let mut summary_fields = match serde_json::to_value(&summary)? {
        serde_json::Value::Object(fields) => fields,
        _ => serde_json::Map::new(),
    };
    summary_fields.shift_remove("tools");
    summary_fields.shift_remove("mcp_servers");
    let view = SkillView {
        summary_fields,
        frontmatter: skill.properties.raw(),
        manifest: skill.manifest.as_ref().map(|manifest| &manifest.raw),
        allowed_tools: &skill.properties.allowed_tools,
        model: skill.properties.model.as_deref(),
        argument_hint: skill.properties.argument_hint.as_deref(),
        files: &skill.properties.files,
        declared_secrets: skill.declared_secrets(),
        mcp_servers: &skill.properties.mcp_servers,
        tools: &skill.tools,
        resources: resources
            .iter()
            .map(|resource| ResourceView {
                path: resource.path.clone(),
                size_bytes: resource.size_bytes,
                group: resource.group,
                sha256: arguments
                    .json
                    .then(|| skill.resource_sha256(&resource.path).ok())
                    .flatten(),
            })
            .collect(),
        resources_truncated,
        diagnostics: &skill.diagnostics,
        trust: trust.as_ref().map(|mark| mark.label),
        trust_command: trust.and_then(|mark| mark.command),
        body: body.text.to_string(),
        body_truncated: body.truncated,
    };
    if arguments.json {
        print_json(&view)?;
    } else {
        print_text(&render(skill, &summary, &view))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn render(skill: &Skill, summary: &skillbox_core::SkillSummary, view: &SkillView<'_>) -> String {
    let mut text = String::new();
    // Every value quotes what the skill wrote: one line each, escaped for the terminal.
    let mut line = |label: &str, value: String| {
        text.push_str(&format!("{label:<15}{}\n", printable_line(&value)));
    };
    line("name", summary.name.clone());
    if let Some(title) = &summary.title {
        line("title", title.clone());
    }
    line(
        "version",
        summary.version.clone().unwrap_or_else(|| "-".to_owned()),
    );
    line("description", summary.description.clone());
    line(
        "format",
        format!("{:?}, {}", summary.format, summary.kind)
            .to_lowercase()
            .replace("agentskill", "agent-skill")
            .replace("skillsprotocol", "skills-protocol"),
    );
    line("path", summary.path.display().to_string());
    line("root", summary.root.display().to_string());
    if let Some(label) = view.trust {
        line(
            "trust",
            match &view.trust_command {
                Some(command) => format!("{label}; `{command}` lets its code run"),
                None => label.to_owned(),
            },
        );
    }
    let mut invocation = Vec::new();
    if summary.model_invocable {
        invocation.push("model");
    }
    if summary.user_invocable {
        invocation.push("user");
    }
    line(
        "invocation",
        if invocation.is_empty() {
            "nobody".to_owned()
        } else {
            invocation.join(", ")
        },
    );
    if !view.allowed_tools.is_empty() {
        line("allowed-tools", view.allowed_tools.join(" "));
    }
    if let Some(model) = view.model {
        line("model", model.to_owned());
    }
    if let Some(hint) = view.argument_hint {
        line("argument-hint", hint.to_owned());
    }
    if let Some(license) = &skill.properties.license {
        line("license", license.clone());
    }
    if !view.declared_secrets.is_empty() {
        line("secrets", view.declared_secrets.join(", "));
    }
    if !summary.requires.is_empty() {
        line("requires", summary.requires.join(", "));
    }
    for server in view.mcp_servers {
        let how = match &server.transport {
            skillbox_core::skill_servers::ServerTransport::Stdio {
                command, args, env, ..
            } => {
                let mut how = std::iter::once(command.as_str())
                    .chain(args.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ");
                if !env.is_empty() {
                    how.push_str(&format!(" (env {})", env.join(", ")));
                }
                if let Some(Ok(package)) = server.package() {
                    how.push_str(&format!("; {}", package.describe()));
                }
                how
            }
            skillbox_core::skill_servers::ServerTransport::StreamableHttp { url } => url.clone(),
        };
        line(
            "mcp server",
            format!("{}: {how} [{}]", server.name, server.declared_in),
        );
    }
    if !view.tools.is_empty() {
        text.push_str("\ntools:\n");
        for tool in view.tools {
            let parameters: Vec<String> = tool.input_schema["properties"]
                .as_object()
                .map(|properties| {
                    properties
                        .iter()
                        .map(|(name, schema)| {
                            let optional = if tool.required_parameters().contains(&name.as_str()) {
                                ""
                            } else {
                                "?"
                            };
                            format!(
                                "{name}{optional}: {}",
                                schema["type"].as_str().unwrap_or("any")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            text.push_str(&format!(
                "  {}({}) - {}\n",
                printable_line(&tool.name),
                printable_line(&parameters.join(", ")),
                printable_line(&tool.description)
            ));
        }
    }
    if !view.files.is_empty() {
        text.push_str("\nfiles:\n");
        for file in view.files {
            text.push_str(&format!(
                "  {} - {}\n",
                printable_line(&file.path),
                printable_line(file.description.as_deref().unwrap_or(""))
            ));
        }
    }
    text.push_str("\nresources:\n");
    for resource in &view.resources {
        text.push_str(&format!(
            "  {:<40} {:>10}\n",
            printable_line(&resource.path),
            human_bytes(resource.size_bytes)
        ));
    }
    if view.resources_truncated {
        text.push_str("  … (more files not listed)\n");
    }
    if !view.diagnostics.is_empty() {
        text.push_str("\ndiagnostics:\n");
        for diagnostic in view.diagnostics {
            text.push_str(&indent(&diagnostic.to_string(), 2));
            text.push('\n');
        }
    }
    text.push_str("\n---\n");
    text.push_str(&printable_block(&view.body));
    text.push('\n');
    if view.body_truncated {
        text.push_str("\n[body truncated at the size limit]\n");
    }
    text
}
