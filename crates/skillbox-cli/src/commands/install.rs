//! `skillbox add`, `install`, `update`, `remove`, `outdated` and `verify`: getting skills and
//! keeping them as locked. Each is one call into `skillbox-install`; the report is printed by
//! `output::install_report`.

use std::process::ExitCode;

use anyhow::Context;
use skillbox_install::fetch::origin::AllowedHosts;
use skillbox_install::operations::AddRequest;
use skillbox_install::{InstallLimits, InstallScope, Installer};

use crate::EXIT_PROBLEMS;
use crate::arguments::{
    AddArguments, FetchArguments, GlobalOptions, InstallArguments, InstallScopeArguments,
    OutdatedArguments, PrepareArguments, RemoveArguments, UpdateArguments,
};
use crate::output::install_report::{print_report, progress_bars};

/// The installer for the scope the arguments name, reaching the network as `fetch` says.
fn fetching_installer(
    scope: &InstallScopeArguments,
    fetch: &FetchArguments,
    limits: InstallLimits,
) -> anyhow::Result<Installer> {
    let limits = InstallLimits {
        network_timeout: std::time::Duration::from_secs(fetch.network_timeout),
        ..limits
    };
    Ok(installer(scope)?
        .with_limits(limits)
        .with_allowed_hosts(AllowedHosts::new(fetch.allow_hosts.clone())))
}

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
    let installer = fetching_installer(&arguments.scope, &arguments.fetch, limits)?;
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
    let report = fetching_installer(&arguments.scope, &arguments.fetch, InstallLimits::default())?
        .install(arguments.frozen)?;
    print_report(&report, arguments.scope.json)?;
    Ok(ExitCode::SUCCESS)
}

/// `skillbox update`.
pub fn update(arguments: &UpdateArguments) -> anyhow::Result<ExitCode> {
    let report = fetching_installer(&arguments.scope, &arguments.fetch, InstallLimits::default())?
        .update(&arguments.names)?;
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
pub fn outdated(arguments: &OutdatedArguments) -> anyhow::Result<ExitCode> {
    let report = fetching_installer(&arguments.scope, &arguments.fetch, InstallLimits::default())?
        .outdated()?;
    print_report(&report, arguments.scope.json)?;
    Ok(problems_exit(report.found_problems()))
}

/// `skillbox verify`: exit 1 when anything changed.
pub fn verify(scope: &InstallScopeArguments) -> anyhow::Result<ExitCode> {
    let report = installer(scope)?.verify()?;
    print_report(&report, scope.json)?;
    Ok(problems_exit(report.found_problems()))
}

/// `skillbox prepare`: the package servers of the skills whose code may run here (the
/// trust gate's verdict), installed ahead and recorded for their folders.
pub fn prepare(global: &GlobalOptions, arguments: &PrepareArguments) -> anyhow::Result<ExitCode> {
    let setup = crate::setup::Setup::new(global, &arguments.roots)?;
    let catalog = setup.catalog()?;
    let gate = crate::setup::trust_gate(&setup.roots);
    let mut chosen = Vec::new();
    let mut refused = Vec::new();
    for skill in catalog.skills() {
        let has_package = skill
            .properties
            .mcp_servers
            .iter()
            .any(|server| server.package().is_some());
        if !has_package
            || !matches!(
                skill.source,
                skillbox_core::source::SkillSource::Directory(_)
            )
        {
            continue;
        }
        match gate.verdict(skill) {
            skillbox_trust::TrustVerdict::Trusted => {
                chosen.push((skill.name().to_owned(), skill.directory.clone()));
            }
            skillbox_trust::TrustVerdict::Untrusted(why) => {
                refused.push(format!("`{}` is not prepared: {why}", skill.name()));
            }
        }
    }
    let working_directory = std::env::current_dir().context("cannot read the working directory")?;
    let installer =
        Installer::new(InstallScope::project(&working_directory))?.with_progress(progress_bars());
    let mut report = installer.prepare(&chosen, arguments.refresh)?;
    report.notes.extend(refused);
    if chosen.is_empty() && report.notes.is_empty() {
        report
            .notes
            .push("no skill here declares an npm or PyPI server (`npx`, `uvx`)".to_owned());
    }
    print_report(&report, arguments.json)?;
    Ok(ExitCode::SUCCESS)
}

fn problems_exit(found: bool) -> ExitCode {
    if found {
        ExitCode::from(EXIT_PROBLEMS)
    } else {
        ExitCode::SUCCESS
    }
}
