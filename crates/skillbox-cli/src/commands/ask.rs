//! `skillbox ask`: one turn of a model using the skills, through the agent loop of
//! skillbox-agent, printed as it goes.

use std::process::ExitCode;

use anyhow::Context;
use skillbox_agent::{Agent, Conversation, TurnEnd, TurnInput};

use crate::arguments::{AskArguments, GlobalOptions};
use crate::output::agent_events::Printer;
use crate::setup::{self, Setup};

/// Exit code when the model was still calling tools after `--max-rounds`.
const EXIT_MAX_ROUNDS: u8 = 3;
/// Exit code when the person cancelled the turn (Ctrl-C), as shells report SIGINT.
pub(crate) const EXIT_CANCELLED: u8 = 130;

/// Wait until `deadline`; without one, forever.
async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// Run one turn, printing as it goes (and, on a plain stderr, a line when the model is slow
/// to answer); Ctrl-C cancels it (a second one quits).
pub(crate) async fn drive_turn(
    agent: &Agent,
    conversation: Conversation,
    input: TurnInput,
    printer: &mut Printer,
) -> anyhow::Result<(Conversation, TurnEnd)> {
    let mut turn = agent.run(conversation, input);
    let cancel = turn.canceller();
    let mut end = TurnEnd::Failed;
    let mut interrupted = false;
    loop {
        let waiting = printer.waiting_deadline();
        tokio::select! {
            event = turn.next_event() => {
                let Some(event) = event else { break };
                if let Some(last) = printer.event(&event, 0)? {
                    end = last;
                }
            }
            () = until(waiting) => printer.still_waiting(),
            _ = tokio::signal::ctrl_c() => {
                if interrupted {
                    std::process::exit(i32::from(EXIT_CANCELLED));
                }
                interrupted = true;
                cancel.cancel();
            }
        }
    }
    let conversation = turn.finish().await.context("the turn failed")?;
    Ok((conversation, end))
}

fn exit_code(end: TurnEnd) -> ExitCode {
    match end {
        TurnEnd::Answered => ExitCode::SUCCESS,
        TurnEnd::MaxRounds => ExitCode::from(EXIT_MAX_ROUNDS),
        TurnEnd::Cancelled => ExitCode::from(EXIT_CANCELLED),
        TurnEnd::Failed => ExitCode::from(crate::EXIT_PROBLEMS),
    }
}

/// `skillbox ask`.
pub fn run(global: &GlobalOptions, arguments: &AskArguments) -> anyhow::Result<ExitCode> {
    let setup = setup::model::set_up(&Setup::new(global, &arguments.roots)?, &arguments.agent)?;
    let input = setup
        .agent
        .read_input(&arguments.prompt)
        .map_err(anyhow::Error::msg)?;
    let runtime = setup::runtime()?;
    runtime.block_on(async {
        let conversation = setup.conversation(arguments.agent.resume.as_deref())?;
        let mut printer = Printer::new(arguments.json);
        let agent = setup.agent_for(printer.progress.as_ref());
        let (conversation, end) = drive_turn(&agent, conversation, input, &mut printer).await?;
        if !arguments.json
            && let Some(note) = setup.saved_note(&conversation)
        {
            printer.status(&note);
        }
        Ok(exit_code(end))
    })
}
