//! `skillbox add`, `install`, `update`, `remove`, `outdated` and `verify`: getting skills and
//! keeping them as locked. Each is one call into `skillbox-install`; the report is printed by
//! `output::install_report`.

use std::process::ExitCode;

use anyhow::Context;
use skillbox_install::operations::AddRequest;
use skillbox_install::{InstallLimits, InstallScope, Installer};

use crate::EXIT_PROBLEMS;
use crate::arguments::{
    AddArguments, InstallArguments, InstallScopeArguments, RemoveArguments, UpdateArguments,
};
use crate::output::install_report::{print_report, progress_bars};

/// The installer for the scope the arguments name.
fn installer(scope: &InstallScopeArguments) -> anyhow::Result<Installer> {
    let scope = if scope.global {
        InstallScope::global()?
    } else {
        let start = match &scope.project {
            Some(project) => project.clone(),
            None => std::env::current_dir().context("cannot read the working directory")?,
        };
        InstallScope::project(&start)
    };
    Ok(Installer::new(scope)?.with_progress(progress_bars()))
}

/// `skillbox add`.
pub fn add(arguments: &AddArguments) -> anyhow::Result<ExitCode> {
    let limits = InstallLimits {
        max_files_per_skill: arguments.max_files,
        max_bytes_per_skill: arguments.max_bytes,
        ..InstallLimits::default()
    };
    let installer = installer(&arguments.scope)?.with_limits(limits);
    let report = installer.add(&AddRequest {
        source: arguments.source.clone(),
        skills: arguments.skills.clone(),
        all: arguments.all,
        agents: arguments.agents.clone(),
        copy: arguments.copy,
    })?;
    print_report(&report, arguments.scope.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox install`.
pub fn install(arguments: &InstallArguments) -> anyhow::Result<ExitCode> {
    let report = installer(&arguments.scope)?.install(arguments.frozen)?;
    print_report(&report, arguments.scope.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox update`.
pub fn update(arguments: &UpdateArguments) -> anyhow::Result<ExitCode> {
    let report = installer(&arguments.scope)?.update(&arguments.names)?;
    print_report(&report, arguments.scope.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox remove`.
pub fn remove(arguments: &RemoveArguments) -> anyhow::Result<ExitCode> {
    let report = installer(&arguments.scope)?.remove(&arguments.names)?;
    print_report(&report, arguments.scope.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox outdated`: exit 1 when anything is outdated.
pub fn outdated(scope: &InstallScopeArguments) -> anyhow::Result<ExitCode> {
    let report = installer(scope)?.outdated()?;
    print_report(&report, scope.json)?;
    Ok(problems_exit(report.found_problems()))
}

/// `skillbox verify`: exit 1 when anything changed.
pub fn verify(scope: &InstallScopeArguments) -> anyhow::Result<ExitCode> {
    let report = installer(scope)?.verify()?;
    print_report(&report, scope.json)?;
    Ok(problems_exit(report.found_problems()))
}

fn problems_exit(found: bool) -> ExitCode {
    if found {
        ExitCode::from(EXIT_PROBLEMS)
    } else {
        ExitCode::SUCCESS
    }
}
