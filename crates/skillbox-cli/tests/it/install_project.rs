//! The project the install tests work in: a project folder with its own home, config (trust
//! file) and cache (store), and a folder outside it for sources and for things an attack must
//! leave alone; and `skillbox` run in it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::support::{json_stdout, skill_md, write_tree};

/// A project and the folders around it.
pub struct Project {
    /// Holds `project/`, `home/`, `config/`, `cache/` and `outside/`.
    pub temp: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        let temp = tempfile::Builder::new()
            .prefix("skillbox-install")
            .tempdir()
            .unwrap();
        for folder in ["project", "home", "config", "cache", "outside"] {
            std::fs::create_dir_all(temp.path().join(folder)).unwrap();
        }
        Project { temp }
    }

    pub fn directory(&self) -> PathBuf {
        fs_err::canonicalize(self.temp.path().join("project")).unwrap()
    }

    /// A folder outside the project (sources, victims).
    pub fn outside(&self) -> PathBuf {
        fs_err::canonicalize(self.temp.path().join("outside")).unwrap()
    }

    pub fn trust_file(&self) -> PathBuf {
        self.temp.path().join("config/trust.json")
    }

    pub fn skillbox(&self) -> assert_cmd::Command {
        let mut command = assert_cmd::Command::from_std(self.std_command());
        command.timeout(Duration::from_secs(120));
        command
    }

    /// The same command as a plain process (to spawn and kill).
    pub fn std_command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillbox"));
        command
            .current_dir(self.directory())
            .env_remove("SKILLBOX_ROOTS")
            .env_remove("SKILLBOX_LOG")
            .env("HOME", self.temp.path().join("home"))
            .env("SKILLBOX_CONFIG_DIR", self.temp.path().join("config"))
            .env("SKILLBOX_CACHE_DIR", self.temp.path().join("cache"))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env_remove("SKILLBOX_FORGE")
            .env_remove("GITHUB_TOKEN")
            .env_remove("GH_TOKEN");
        command
    }

    /// Run; (exit code, stdout, stderr).
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        let output = self.skillbox().args(args).output().unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let (code, stdout, stderr) = self.run(args);
        assert_eq!(code, 0, "skillbox {args:?} failed:\n{stdout}\n{stderr}");
        stdout
    }

    /// Run expecting a refusal (exit 2); stderr.
    pub fn refused(&self, args: &[&str]) -> String {
        let (code, stdout, stderr) = self.run(args);
        assert_eq!(
            code, 2,
            "skillbox {args:?} was not refused:\n{stdout}\n{stderr}"
        );
        stderr
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let output = self.skillbox().args(args).arg("--json").output().unwrap();
        assert!(
            output.status.success(),
            "skillbox {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        json_stdout(&output)
    }

    pub fn lock(&self) -> Value {
        serde_json::from_slice(&fs_err::read(self.directory().join("skillbox.lock")).unwrap())
            .unwrap()
    }

    pub fn write_lock(&self, lock: &Value) {
        fs_err::write(
            self.directory().join("skillbox.lock"),
            serde_json::to_string_pretty(lock).unwrap(),
        )
        .unwrap();
    }

    pub fn installed(&self, name: &str) -> PathBuf {
        self.directory().join(".agents/skills").join(name)
    }

    /// Nothing of an install is visible: no manifest, lock or install folder entries.
    pub fn assert_untouched(&self) {
        for entry in ["skillbox.toml", "skillbox.lock"] {
            assert!(
                !self.directory().join(entry).exists(),
                "{entry} was written"
            );
        }
        let skills = self.directory().join(".agents/skills");
        if skills.exists() {
            assert_eq!(fs_err::read_dir(&skills).unwrap().count(), 0);
        }
    }

    /// A skill folder `name` outside the project, with a script.
    pub fn source_skill(&self, name: &str) -> PathBuf {
        let folder = self.outside().join("sources").join(name);
        write_tree(
            &folder,
            &[
                ("SKILL.md", &skill_md(name, "A skill. Use when testing.")),
                ("scripts/run.py", "print('original')\n"),
            ],
        );
        folder
    }
}

/// `sha256:<hex>` of bytes.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}
