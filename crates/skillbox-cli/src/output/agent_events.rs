//! How a turn of the agent loop looks on the terminal: the answer streams to stdout; tool
//! activity goes to stderr (a spinner on a terminal, plain lines otherwise, with one line per
//! round when the model is slow to answer); `--json` prints the events as JSON lines instead.
//! And the terminal's approval prompt, which shares the spinner's area.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use skillbox_agent::{AgentEvent, Approval, ApprovalDecision, ApprovalRequest, TurnEnd};

/// Characters of a tool result shown on stderr.
const MAX_SHOWN_RESULT_CHARS: usize = 160;
/// How long the model may think before a plain stderr (no spinner) says it is waiting for it:
/// longer than a quick answer takes, so a fast model or a failure at once adds no line.
pub(crate) const WAITING_NOTICE_AFTER: Duration = Duration::from_secs(2);

/// Asks on the terminal before code runs. Calls of one round run concurrently, so questions
/// wait for each other: one at a time on the terminal.
pub(crate) struct TerminalApproval {
    pub(crate) progress: Option<indicatif::MultiProgress>,
    asking: tokio::sync::Mutex<()>,
}

impl TerminalApproval {
    /// Questions drawn over `progress` (the spinner's area) when there is one.
    pub(crate) fn new(progress: Option<indicatif::MultiProgress>) -> Self {
        TerminalApproval {
            progress,
            asking: tokio::sync::Mutex::new(()),
        }
    }
}

#[async_trait::async_trait]
impl Approval for TerminalApproval {
    async fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let question = approval_question(request);
        // The whole request, for `v`: what a model wrote cannot drive the terminal.
        let whole = skillbox_core::printable::printable_block(&request.full_text()).into_owned();
        let progress = self.progress.clone();
        let _asking = self.asking.lock().await;
        let answer = tokio::task::spawn_blocking(move || {
            let ask = || -> std::io::Result<bool> {
                let mut terminal = fs_err::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/tty")?;
                let mut reader = std::io::BufReader::new(terminal.try_clone()?);
                loop {
                    write!(terminal, "{question}")?;
                    terminal.flush()?;
                    let mut line = String::new();
                    if std::io::BufRead::read_line(&mut reader, &mut line)? == 0 {
                        return Ok(false);
                    }
                    match line.trim() {
                        "y" | "Y" | "yes" | "Yes" => return Ok(true),
                        "v" | "V" | "view" => writeln!(terminal, "{whole}")?,
                        _ => return Ok(false),
                    }
                }
            };
            match &progress {
                Some(progress) => progress.suspend(ask),
                None => ask(),
            }
        })
        .await;
        match answer {
            Ok(Ok(true)) => ApprovalDecision::Approve,
            Ok(Ok(false)) => ApprovalDecision::Deny {
                reason: "the user said no".to_owned(),
            },
            _ => ApprovalDecision::Deny {
                reason: "there is no terminal to ask on".to_owned(),
            },
        }
    }
}

/// The terminal's question about `request`: one line (a model's arguments must not draw lines
/// of their own around it) with the summary and every argument, long values cut with a mark
/// saying how much is hidden, and `v` to see the whole request.
fn approval_question(request: &ApprovalRequest) -> String {
    let preview = request.preview();
    let summary = skillbox_core::printable::printable_line(&preview.summary);
    let arguments = skillbox_core::printable::printable(&preview.arguments);
    let hidden = if preview.hidden_chars == 0 {
        String::new()
    } else {
        format!(
            " ({} characters not shown: v shows the whole request)",
            preview.hidden_chars
        )
    };
    format!("allow: {summary} with {arguments}{hidden}? [y/N/v] ")
}

/// A model request under way, at one depth (the turn, or a sub-agent).
#[derive(Debug, Clone)]
struct Asking {
    depth: usize,
    /// The round of that agent, from 1.
    round: u32,
    /// When the request went out (or was sent again).
    since: tokio::time::Instant,
}

/// Where one agent (the turn, or a sub-agent) is: its model, its round, its calls running.
#[derive(Debug, Clone, Default)]
struct AgentState {
    model: String,
    round: u32,
    running: usize,
}

/// Prints a turn's events: the answer on stdout, activity on stderr.
pub(crate) struct Printer {
    json: bool,
    /// The terminal's progress area (only when stderr is a terminal and not `--json`).
    pub(crate) progress: Option<indicatif::MultiProgress>,
    /// The spinner while something runs.
    spinner: Option<indicatif::ProgressBar>,
    /// The model asked, for the spinner's message.
    model: String,
    answer_open: bool,
    /// The turn and its sub-agents, by depth.
    agents: Vec<AgentState>,
    /// The model request not yet answered nor noted, for the waiting line.
    asking: Option<Asking>,
    /// Rounds the model answered in this turn.
    answered: u32,
}

impl Printer {
    pub(crate) fn new(json: bool) -> Self {
        let progress = (!json && std::io::stderr().is_terminal()).then(|| {
            indicatif::MultiProgress::with_draw_target(indicatif::ProgressDrawTarget::stderr())
        });
        Printer::with_progress(json, progress)
    }

    /// A printer drawing its spinners on `progress` (none: plain lines or `--json`).
    fn with_progress(json: bool, progress: Option<indicatif::MultiProgress>) -> Self {
        Printer {
            json,
            progress,
            spinner: None,
            model: String::new(),
            answer_open: false,
            agents: Vec::new(),
            asking: None,
            answered: 0,
        }
    }

    /// When to say that the model is still thinking: only on a plain stderr (a terminal has
    /// the spinner, `--json` the events), once per round.
    pub(crate) fn waiting_deadline(&self) -> Option<tokio::time::Instant> {
        if self.json || self.progress.is_some() {
            return None;
        }
        self.asking
            .as_ref()
            .map(|asking| asking.since + WAITING_NOTICE_AFTER)
    }

    /// The deadline passed: one line saying whom we wait for.
    pub(crate) fn still_waiting(&mut self) {
        let Some(asking) = self.asking.take() else {
            return;
        };
        let model = self
            .agents
            .get(asking.depth)
            .map(|agent| agent.model.clone())
            .unwrap_or_default();
        self.status(&format!(
            "{}waiting for the model {model} (round {})",
            "  ".repeat(asking.depth),
            asking.round
        ));
    }

    fn agent(&mut self, depth: usize) -> &mut AgentState {
        if self.agents.len() <= depth {
            self.agents.resize(depth + 1, AgentState::default());
        }
        &mut self.agents[depth]
    }

    /// The agent at `depth` asks its model (a new round, or the same one again).
    fn ask(&mut self, depth: usize, next_round: bool) {
        let agent = self.agent(depth);
        if next_round {
            agent.round += 1;
        }
        let round = agent.round;
        self.asking = Some(Asking {
            depth,
            round,
            since: tokio::time::Instant::now(),
        });
    }

    /// Follow where each agent is, for the waiting line.
    fn track(&mut self, event: &AgentEvent, depth: usize) {
        match event {
            AgentEvent::TurnStarted { model, .. } => {
                *self.agent(depth) = AgentState {
                    model: model.clone(),
                    round: 0,
                    running: 0,
                };
                if depth == 0 {
                    self.answered = 0;
                }
                self.ask(depth, true);
            }
            AgentEvent::ModelChanged { model, .. } => {
                model.clone_into(&mut self.agent(depth).model)
            }
            AgentEvent::Retry { .. } => self.ask(depth, false),
            AgentEvent::TextDelta { .. } => self.asking = None,
            AgentEvent::Usage { .. } => {
                self.asking = None;
                if depth == 0 {
                    self.answered += 1;
                }
            }
            AgentEvent::ToolCallStarted { .. } => {
                self.asking = None;
                self.agent(depth).running += 1;
            }
            AgentEvent::ToolCallFinished { .. } => {
                let agent = self.agent(depth);
                agent.running = agent.running.saturating_sub(1);
                if agent.running == 0 {
                    self.ask(depth, true);
                }
            }
            AgentEvent::Final { .. } | AgentEvent::Error { .. } => self.asking = None,
            _ => {}
        }
    }

    pub(crate) fn status(&self, line: &str) {
        let line = skillbox_core::printable::printable_block(line).into_owned();
        let printed = self
            .progress
            .as_ref()
            .is_some_and(|progress| progress.println(&line).is_ok());
        if !printed {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    fn working(&mut self, message: &str) {
        let Some(progress) = &self.progress else {
            return;
        };
        let spinner = self.spinner.get_or_insert_with(|| {
            let spinner = progress.add(indicatif::ProgressBar::new_spinner());
            spinner.enable_steady_tick(std::time::Duration::from_millis(120));
            spinner
        });
        // The model names tools and skills name models: escape what a terminal would obey.
        spinner.set_message(skillbox_core::printable::printable_line(message));
    }

    fn idle(&mut self) {
        if let (Some(progress), Some(spinner)) = (&self.progress, self.spinner.take()) {
            spinner.finish_and_clear();
            progress.remove(&spinner);
        }
    }

    fn close_answer(&mut self) -> std::io::Result<()> {
        if self.answer_open {
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout)?;
            stdout.flush()?;
            self.answer_open = false;
        }
        Ok(())
    }

    /// Print one event; returns how the turn ended when this is the last one.
    pub(crate) fn event(
        &mut self,
        event: &AgentEvent,
        depth: usize,
    ) -> std::io::Result<Option<TurnEnd>> {
        if !matches!(event, AgentEvent::Fork { .. }) {
            self.track(event, depth);
        }
        if self.json {
            let mut stdout = std::io::stdout().lock();
            serde_json::to_writer(&mut stdout, event)?;
            writeln!(stdout)?;
            stdout.flush()?;
            return Ok(match event {
                AgentEvent::Final { end, .. } => Some(*end),
                _ => None,
            });
        }
        let indent = "  ".repeat(depth);
        match event {
            AgentEvent::TurnStarted { model, .. } => {
                if depth > 0 {
                    self.status(&format!("{indent}sub-agent started ({model})"));
                } else {
                    model.clone_into(&mut self.model);
                }
                self.working(&format!("asking {model}"));
            }
            AgentEvent::SkillInvoked { skill, .. } => {
                self.status(&format!("{indent}skill /{skill}"));
            }
            AgentEvent::TextDelta { text } => {
                if depth == 0 {
                    self.idle();
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(skillbox_core::printable::printable_block(text).as_bytes())?;
                    stdout.flush()?;
                    self.answer_open = true;
                }
            }
            AgentEvent::Retry {
                attempt,
                reason,
                delay_ms,
            } => self.status(&format!(
                "{indent}retry {attempt} in {:.1} s: {reason}",
                *delay_ms as f64 / 1000.0
            )),
            AgentEvent::ToolCallStarted {
                name, arguments, ..
            } => {
                self.close_answer()?;
                self.status(&format!("{indent}→ {name} {}", compact(arguments)));
                self.working(&format!("running {name}"));
            }
            AgentEvent::ApprovalDenied { name, reason, .. } => {
                self.status(&format!("{indent}✗ {name} not allowed: {reason}"));
            }
            AgentEvent::ToolCallFinished {
                name,
                result,
                is_error,
                duration_ms,
                ..
            } => {
                let mark = if *is_error { "✗" } else { "←" };
                self.status(&format!(
                    "{indent}{mark} {name} ({duration_ms} ms) {}",
                    shorten(result)
                ));
                let message = format!("asking {}", self.model);
                self.working(&message);
            }
            AgentEvent::ModelChanged { model, skill } => {
                if depth == 0 {
                    model.clone_into(&mut self.model);
                }
                self.status(&format!("{indent}model {model} (asked by skill `{skill}`)"));
            }
            AgentEvent::Usage { .. } => {}
            AgentEvent::Fork { event, .. } => {
                self.event(event, depth + 1)?;
            }
            AgentEvent::Error { message } => {
                if depth == 0 {
                    self.idle();
                    self.close_answer()?;
                }
                self.status(&format!("{indent}error: {message}"));
            }
            AgentEvent::Final {
                text,
                end,
                rounds,
                usage,
            } => {
                if depth > 0 {
                    self.status(&format!("{indent}sub-agent done ({rounds} rounds)"));
                    return Ok(None);
                }
                self.idle();
                self.close_answer()?;
                match end {
                    TurnEnd::MaxRounds => self.status(text),
                    TurnEnd::Cancelled => self.status("cancelled"),
                    TurnEnd::Answered | TurnEnd::Failed => {}
                }
                // A turn the model never answered (a server down, a key refused) ends with
                // its error line alone.
                if self.answered > 0 {
                    self.status(&format!(
                        "({rounds} rounds, {} tokens in, {} out)",
                        usage.input_tokens, usage.output_tokens
                    ));
                }
                return Ok(Some(*end));
            }
        }
        Ok(None)
    }
}

fn compact(value: &serde_json::Value) -> String {
    let text = match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    shorten(&text)
}

fn shorten(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > MAX_SHOWN_RESULT_CHARS {
        let mut cut: String = flat.chars().take(MAX_SHOWN_RESULT_CHARS).collect();
        cut.push('…');
        cut
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spinner_shows_hostile_names_escaped() {
        let mut printer = Printer::with_progress(
            false,
            Some(indicatif::MultiProgress::with_draw_target(
                indicatif::ProgressDrawTarget::hidden(),
            )),
        );
        let hostile = "\u{1b}]0;title\u{7}\u{1b}[2Jtool";
        let message = |printer: &Printer| printer.spinner.as_ref().expect("spinner").message();
        printer
            .event(
                &AgentEvent::ToolCallStarted {
                    id: "call_1".to_owned(),
                    name: hostile.to_owned(),
                    arguments: serde_json::json!({}),
                },
                0,
            )
            .expect("printed");
        assert!(
            !message(&printer).contains('\u{1b}'),
            "{:?}",
            message(&printer)
        );
        printer
            .event(
                &AgentEvent::TurnStarted {
                    conversation: "c".to_owned(),
                    model: hostile.to_owned(),
                },
                0,
            )
            .expect("printed");
        assert!(
            !message(&printer).contains('\u{1b}'),
            "{:?}",
            message(&printer)
        );
    }
}
