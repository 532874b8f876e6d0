//! A temporary skill root, an executor using the built `skillbox-sandbox` helper, and checks
//! for leftover processes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use skillbox_core::{CatalogOptions, SkillCatalog, SkillRoot};
use skillbox_exec::executor::python_run::{PythonRun, PythonTarget};
use skillbox_exec::sandbox::HelperCommand;
use skillbox_exec::{
    Executor, ExecutorConfig, RunOptions, SandboxPolicy, ScriptResult, WorkerPoolConfig,
};

/// A skill tree in a temporary folder the sandbox user can read.
pub struct Fixture {
    pub root: tempfile::TempDir,
    pub workspaces: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        let root = tempfile::Builder::new()
            .prefix("skillbox-exec-skills")
            .tempdir()
            .unwrap();
        let workspaces = tempfile::Builder::new()
            .prefix("skillbox-exec-ws")
            .tempdir()
            .unwrap();
        for path in [root.path(), workspaces.path()] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Fixture { root, workspaces }
    }

    /// Add a file (parents created, world-readable; `.sh`/`.py`/`.js` executable).
    pub fn file(&self, relative: &str, contents: &str) -> PathBuf {
        let path = self.root.path().join(relative);
        let mut parent = path.parent().unwrap().to_path_buf();
        std::fs::create_dir_all(&parent).unwrap();
        while parent.starts_with(self.root.path()) && parent != self.root.path() {
            std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o755)).unwrap();
            parent = parent.parent().unwrap().to_path_buf();
        }
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Add a skill with a SKILL.md.
    pub fn skill(&self, name: &str) -> &Self {
        self.file(
            &format!("{name}/SKILL.md"),
            &format!("---\nname: {name}\ndescription: Test skill {name}.\n---\nBody.\n"),
        );
        self
    }

    pub fn catalog(&self) -> SkillCatalog {
        SkillCatalog::load(&CatalogOptions {
            roots: vec![SkillRoot::explicit(self.root.path())],
            ..CatalogOptions::default()
        })
        .unwrap()
    }

    pub fn config(&self) -> ExecutorConfig {
        ExecutorConfig {
            helper: Some(helper()),
            policy: SandboxPolicy::default(),
            timeout: Duration::from_secs(20),
            workspace_root: self.workspaces.path().join("runs"),
            workers: WorkerPoolConfig::default(),
            ..ExecutorConfig::default()
        }
    }

    pub fn executor(&self) -> Executor {
        Executor::new(self.config()).unwrap()
    }

    /// Add skill `skill` with `scripts/<file>` holding `code`, and run that script once with
    /// `args` on a fresh executor.
    pub fn run_script(
        &self,
        skill: &str,
        file: &str,
        code: &str,
        args: &[String],
        options: RunOptions,
    ) -> ScriptResult {
        self.skill(skill);
        self.file(&format!("{skill}/scripts/{file}"), code);
        let catalog = self.catalog();
        runtime().block_on(self.executor().run(&catalog, skill, file, args, options))
    }
}

/// An `execute_skill` run of `skill`'s export with `args`, no mounts or blobs.
pub fn export_run(skill: &skillbox_core::Skill, args: serde_json::Value) -> PythonRun<'_> {
    PythonRun {
        target: PythonTarget::Export(skill),
        args,
        mount_skills: Vec::new(),
        input_blobs: Vec::new(),
        timeout: Duration::from_secs(20),
        copy: skillbox_exec::SkillCopy::InEffect,
    }
}

/// A `run_code` run of `code`'s `main`, with no arguments, mounts or blobs.
pub fn code_run(code: &str) -> PythonRun<'static> {
    PythonRun {
        target: PythonTarget::Code {
            code: code.to_owned(),
            entrypoint: "main".to_owned(),
        },
        args: serde_json::json!({}),
        mount_skills: Vec::new(),
        input_blobs: Vec::new(),
        timeout: Duration::from_secs(20),
        copy: skillbox_exec::SkillCopy::InEffect,
    }
}

pub fn helper() -> HelperCommand {
    HelperCommand {
        program: PathBuf::from(env!("CARGO_BIN_EXE_skillbox-sandbox")),
        leading_args: Vec::new(),
    }
}

/// Whether every sandbox layer is available; when not, say loudly which is missing so the
/// skipped test is visible in the output.
pub fn full_sandbox_or_skip(test: &str) -> bool {
    let support = helper().probe().clone();
    let layers = skillbox_exec::sandbox::SandboxLayers::available(&support);
    let missing = layers.missing(&support);
    if missing.is_empty() {
        return true;
    }
    eprintln!(
        "SKIPPED {test}: this host lacks {} ({})",
        missing.join(", "),
        support.notes.join("; ")
    );
    false
}

/// Processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in fs_err::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = fs_err::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) && pid != std::process::id() {
            found.push(pid);
        }
    }
    found
}

/// A marker unlikely to appear in any other process's command line.
pub fn marker() -> String {
    format!("{}.{}", 1000 + std::process::id() % 1000, uuid_like())
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        % 1_000_000_007
}

pub use skillbox_testkit::runtime;

pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

impl Fixture {
    /// Write a `.zip`/`.skill` archive at `relative` under the root holding `entries`
    /// (paths inside the archive, and their text), built by the real Python `zipfile`.
    pub fn archive(&self, relative: &str, entries: &[(&str, &str)]) -> PathBuf {
        let path = self.root.path().join(relative);
        let listing = serde_json::to_string(entries).unwrap();
        let status = std::process::Command::new("python3")
            .args([
                "-c",
                "import json, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as archive:\n    for name, text in json.loads(sys.argv[2]):\n        archive.writestr(name, text)\n",
            ])
            .arg(&path)
            .arg(listing)
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        path
    }
}

/// Whether the tests run as root (needed for uid checks and chown); says so when a test skips.
pub fn running_as_root(test: &str) -> bool {
    skillbox_testkit::running_as_root(test, "uid checks and chown")
}
