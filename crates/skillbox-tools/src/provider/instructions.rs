//! What `load_skill` (and MCP `prompts/get`) gives of a skill: its body with the arguments
//! substituted, its `` !`command` `` lines run in the sandbox when the operator turned that on
//! (bounded in count and output), notes on what was cut, and the listing of what the skill
//! offers next (files, scripts, its tools).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skillbox_core::{Skill, ToolDefinition};
use skillbox_exec::RunOptions;
use skillbox_services::RunContext as _;

use super::{
    MAX_LOADED_SKILL_BYTES, MAX_PREPROCESS_COMMANDS, MAX_PREPROCESS_OUTPUT_BYTES, SkillsProvider,
    declared_argument_names,
};
use crate::substitution::substitute;

/// The body of a skill's `SKILL.md`, or a message naming the skill.
fn read_body(skill: &Skill) -> Result<skillbox_core::skill::SkillBody, String> {
    skill
        .body()
        .map_err(|error| format!("cannot read skill `{}`: {error}", skill.name()))
}

/// The skill's folder as `${SKILL_DIR}` names it: canonical when it can be resolved.
fn skill_directory(skill: &Skill) -> PathBuf {
    fs_err::canonicalize(&skill.directory).unwrap_or_else(|_| skill.directory.clone())
}

impl SkillsProvider {
    /// The instructions of `skill` as `load_skill` gives them: the body with `raw_arguments`
    /// substituted (and its commands run when preprocessing is on), notes where it was cut,
    /// and the listing of its files. Visibility is the caller's business: front doors that
    /// serve people (MCP prompts) use it for skills hidden from models, too.
    ///
    /// # Errors
    /// A message naming the skill when its `SKILL.md` can no longer be read.
    pub async fn skill_instructions(
        &self,
        skill: &Arc<Skill>,
        raw_arguments: Option<&str>,
    ) -> Result<String, String> {
        if !self.options.preprocess_commands {
            return self.instructions_without_commands(skill, raw_arguments);
        }
        let body = read_body(skill)?;
        let names = declared_argument_names(skill);
        let directory = skill_directory(skill);
        let directory_text = directory.display().to_string();
        let (text, cut) = self
            .preprocess(skill, &body.text, raw_arguments, &names, &directory_text)
            .await;
        Ok(self.finish_instructions(skill, &directory, text, body.truncated, cut))
    }

    /// The instructions of `skill` as `load_skill` gives them when no command runs: the body
    /// with `raw_arguments` substituted, its `` !`command` `` lines left as written. Reads the
    /// skill's files: call it off the async threads.
    ///
    /// # Errors
    /// A message naming the skill when its `SKILL.md` can no longer be read.
    pub fn instructions_without_commands(
        &self,
        skill: &Arc<Skill>,
        raw_arguments: Option<&str>,
    ) -> Result<String, String> {
        let body = read_body(skill)?;
        let names = declared_argument_names(skill);
        let directory = skill_directory(skill);
        let directory_text = directory.display().to_string();
        let substituted = substitute(
            &body.text,
            raw_arguments,
            &names,
            &directory_text,
            MAX_LOADED_SKILL_BYTES,
        );
        Ok(self.finish_instructions(
            skill,
            &directory,
            substituted.text,
            body.truncated,
            substituted.cut,
        ))
    }

    /// The notes on what was cut, and the listing of the skill's files.
    fn finish_instructions(
        &self,
        skill: &Skill,
        directory: &Path,
        mut text: String,
        body_truncated: bool,
        cut: bool,
    ) -> String {
        if body_truncated {
            text.push_str(
                "\n\n[The skill's instructions are longer than the size limit and were cut here.]",
            );
        }
        if cut {
            text.push_str(&format!(
                "\n\n[The instructions with their arguments substituted are longer than {MAX_LOADED_SKILL_BYTES} bytes and were cut here; load the skill again with shorter arguments.]"
            ));
        }
        text.push_str(&self.resource_listing(skill, directory));
        text
    }

    /// Run the body's commands and substitute arguments in its text pieces only. At most
    /// [`MAX_PREPROCESS_COMMANDS`] commands run and they add at most
    /// [`MAX_PREPROCESS_OUTPUT_BYTES`] of output; the text stops at [`MAX_LOADED_SKILL_BYTES`]
    /// (the flag says it was cut there). Notes at the end say what was left out and why.
    async fn preprocess(
        &self,
        skill: &Arc<Skill>,
        body: &str,
        raw: Option<&str>,
        names: &[String],
        directory: &str,
    ) -> (String, bool) {
        let mut text = String::with_capacity(body.len().min(MAX_LOADED_SKILL_BYTES));
        let mut used = false;
        let mut commands_run = 0_usize;
        let mut commands_not_run = 0_usize;
        let mut output_left = MAX_PREPROCESS_OUTPUT_BYTES;
        let mut output_cut = false;
        let mut cut = false;
        for piece in crate::preprocess::pieces(body) {
            let room = MAX_LOADED_SKILL_BYTES.saturating_sub(text.len());
            match piece {
                crate::preprocess::Piece::Text(part) => {
                    let substituted =
                        crate::substitution::substitute_text(&part, raw, names, directory, room);
                    used |= substituted.used_arguments;
                    text.push_str(&substituted.text);
                    cut = substituted.cut;
                }
                crate::preprocess::Piece::Command(_) if commands_run == MAX_PREPROCESS_COMMANDS => {
                    commands_not_run += 1;
                    text.push_str("[command not run]");
                }
                crate::preprocess::Piece::Command(command) => {
                    commands_run += 1;
                    let result = self
                        .executor
                        .run_command_as(skill, self.copy_of(skill), &command, RunOptions::default())
                        .await;
                    let mut output = if result.success {
                        result.stdout.trim_end().to_owned()
                    } else {
                        let reason = result
                            .stderr
                            .lines()
                            .find(|line| !line.trim().is_empty())
                            .map(str::to_owned)
                            .or(result.error)
                            .unwrap_or_default();
                        format!("[error: {}]", reason.trim())
                    };
                    if crate::substitution::cut_at(&mut output, output_left) {
                        output_cut = true;
                        output.push_str("[output cut]");
                    }
                    output_left -= output.len().min(output_left);
                    text.push_str(&output);
                    cut = crate::substitution::cut_at(&mut text, MAX_LOADED_SKILL_BYTES);
                }
            }
            if cut {
                break;
            }
        }
        if !cut {
            cut = crate::substitution::finish(&mut text, raw, used, MAX_LOADED_SKILL_BYTES);
        }
        if commands_not_run > 0 {
            text.push_str(&format!(
                "\n\n[{commands_not_run} command(s) marked `[command not run]` were not run: a skill runs at most {MAX_PREPROCESS_COMMANDS} commands when it is loaded.]"
            ));
        }
        if output_cut {
            text.push_str(&format!(
                "\n\n[The command output was cut where marked `[output cut]`: the commands of a skill add at most {MAX_PREPROCESS_OUTPUT_BYTES} bytes when it is loaded.]"
            ));
        }
        (text, cut)
    }

    /// What the model can read or run next: `files:` entries, scripts, references, tools.
    fn resource_listing(&self, skill: &Skill, directory: &Path) -> String {
        let mut text = format!("\n\n---\nSkill directory: {}\n", directory.display());
        if !skill.properties.files.is_empty() {
            text.push_str("\nFiles you can read with read_skill_file:\n");
            for file in &skill.properties.files {
                match &file.description {
                    Some(description) => {
                        text.push_str(&format!("- {}: {description}\n", file.path))
                    }
                    None => text.push_str(&format!("- {}\n", file.path)),
                }
            }
        }
        let (resources, more) = skill.resources();
        let listed: Vec<&str> = skill
            .properties
            .files
            .iter()
            .map(|file| file.path.as_str())
            .collect();
        let group = |group: skillbox_core::skill::ResourceGroup| -> Vec<&str> {
            resources
                .iter()
                .filter(|resource| {
                    resource.group == group && !listed.contains(&resource.path.as_str())
                })
                .map(|resource| resource.path.as_str())
                .collect()
        };
        let scripts = group(skillbox_core::skill::ResourceGroup::Scripts);
        if !scripts.is_empty() {
            text.push_str("\nScripts you can run with use_skill:\n");
            for path in scripts {
                text.push_str(&format!("- {path}\n"));
            }
        }
        for (title, group_kind) in [
            (
                "References",
                skillbox_core::skill::ResourceGroup::References,
            ),
            ("Examples", skillbox_core::skill::ResourceGroup::Examples),
            ("Assets", skillbox_core::skill::ResourceGroup::Assets),
        ] {
            let paths = group(group_kind);
            if !paths.is_empty() {
                text.push_str(&format!("\n{title} (read_skill_file):\n"));
                for path in paths {
                    text.push_str(&format!("- {path}\n"));
                }
            }
        }
        if more {
            text.push_str("\n(more files exist than are listed)\n");
        }
        let owned: Vec<&ToolDefinition> = skill
            .tools
            .iter()
            .filter(|tool| self.owns_tool(skill, &tool.name))
            .collect();
        if !owned.is_empty() {
            text.push_str("\nTools this skill provides (call them directly):\n");
            for tool in owned {
                text.push_str(&format!("- {}: {}\n", tool.name, tool.description));
            }
        }
        text
    }
}
