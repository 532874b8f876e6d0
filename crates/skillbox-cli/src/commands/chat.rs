//! `skillbox chat`: talk with a model that can load and run skills (line editing, history,
//! `/name args`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::ask::drive_turn;
use crate::arguments::{AgentArguments, ChatArguments, GlobalOptions};
use crate::output::agent_events::Printer;
use crate::setup::{self, Setup};

/// Completion of `/name` for the skills a person may invoke, and the chat's own commands.
struct SkillCompleter {
    names: Vec<String>,
}

impl rustyline::completion::Completer for SkillCompleter {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        position: usize,
        _context: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let typed = &line[..position];
        if !typed.starts_with('/') || typed.contains(char::is_whitespace) {
            return Ok((position, Vec::new()));
        }
        let candidates = self
            .names
            .iter()
            .filter(|name| name.starts_with(&typed[1..]))
            .map(|name| format!("/{name}"))
            .collect();
        Ok((0, candidates))
    }
}

impl rustyline::hint::Hinter for SkillCompleter {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for SkillCompleter {}
impl rustyline::validate::Validator for SkillCompleter {}
impl rustyline::Helper for SkillCompleter {}

const CHAT_COMMANDS: &[(&str, &str)] = &[
    ("skills", "list the skills you can invoke with /name args"),
    ("new", "start a new conversation"),
    ("help", "show these commands"),
    ("exit", "leave (Ctrl-D does too)"),
];

/// `chat --list`: reads the transcripts alone, so it needs no model, key or skills.
fn list_conversations(arguments: &AgentArguments, json: bool) -> anyhow::Result<ExitCode> {
    if arguments.no_transcript {
        bail!("--list reads transcripts; drop --no-transcript");
    }
    let summaries = setup::model::transcript_store(arguments.data_dir.as_deref())?.list()?;
    if json {
        crate::output::print_json(&summaries)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut stdout = std::io::stdout().lock();
    for summary in summaries {
        writeln!(
            stdout,
            "{}  {:>4} messages  {}  {}",
            summary.header.id,
            summary.messages,
            summary.header.model,
            skillbox_core::printable::printable_line(&summary.first_prompt)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skillbox chat`.
pub fn run(global: &GlobalOptions, arguments: &ChatArguments) -> anyhow::Result<ExitCode> {
    if arguments.list {
        return list_conversations(&arguments.agent, arguments.json);
    }
    let setup = setup::model::set_up(&Setup::new(global, &arguments.roots)?, &arguments.agent)?;
    let provider = setup.agent.provider();
    let mut names: Vec<String> = provider
        .catalog()
        .skills()
        .iter()
        .filter(|skill| skill.user_invocable())
        .map(|skill| skill.name().to_owned())
        .collect();
    names.extend(CHAT_COMMANDS.iter().map(|(name, _)| (*name).to_owned()));
    names.sort();
    names.dedup();
    let mut editor = rustyline::Editor::<SkillCompleter, rustyline::history::DefaultHistory>::new()
        .context("cannot set up line editing")?;
    editor.set_helper(Some(SkillCompleter { names }));
    // The history holds what people typed: kept beside the transcripts, never through a link.
    let history = setup
        .transcripts
        .as_ref()
        .map(|store| store.directory().join("chat-history.txt"))
        .filter(|path| {
            !fs_err::symlink_metadata(path).is_ok_and(|metadata| metadata.file_type().is_symlink())
        });
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    let runtime = setup::runtime()?;
    let mut conversation = setup.conversation(arguments.agent.resume.as_deref())?;
    let mut stderr = std::io::stderr();
    writeln!(
        stderr,
        "skillbox chat: {} via {} ({}); /help for commands, Ctrl-D to leave",
        setup.settings.model,
        skillbox_agent::shown_url(&setup.settings.base_url),
        setup.settings.format.name()
    )?;
    if arguments.agent.resume.is_some() {
        writeln!(
            stderr,
            "resumed conversation {} ({} messages)",
            conversation.id(),
            conversation.messages().len()
        )?;
    }
    loop {
        let line = match editor.readline("you> ") {
            Ok(line) => line,
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(error) => return Err(error).context("cannot read the terminal"),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(text);
        match text {
            "/exit" | "/quit" => break,
            "/help" => {
                for (name, help) in CHAT_COMMANDS {
                    writeln!(stderr, "  /{name:<8} {help}")?;
                }
                writeln!(stderr, "  /NAME ARGS invoke a skill (Tab completes names)")?;
                continue;
            }
            "/skills" => {
                print_invocable_skills(&provider)?;
                continue;
            }
            "/new" => {
                conversation = setup.conversation(None)?;
                writeln!(stderr, "new conversation {}", conversation.id())?;
                continue;
            }
            _ => {}
        }
        let input = match setup.agent.read_input(text) {
            Ok(input) => input,
            Err(message) => {
                writeln!(stderr, "{message}")?;
                continue;
            }
        };
        let mut printer = Printer::new(false);
        let agent = setup.agent_for(printer.progress.as_ref());
        let (next, _) = runtime.block_on(drive_turn(&agent, conversation, input, &mut printer))?;
        conversation = next;
    }
    if let Some(history) = &history {
        let _ = editor.save_history(history);
    }
    if let Some(note) = setup.saved_note(&conversation) {
        writeln!(stderr, "{note}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn print_invocable_skills(provider: &skillbox_tools::SkillsProvider) -> std::io::Result<()> {
    let mut stderr = std::io::stderr().lock();
    for skill in provider
        .catalog()
        .skills()
        .iter()
        .filter(|skill| skill.user_invocable())
    {
        let hint = skill.properties.argument_hint.as_deref().unwrap_or("");
        writeln!(
            stderr,
            "  /{} {}  {}",
            skill.name(),
            skillbox_core::printable::printable_line(hint),
            skillbox_core::printable::printable_line(&skill.description)
        )?;
    }
    Ok(())
}
