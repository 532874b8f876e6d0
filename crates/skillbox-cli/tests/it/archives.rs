//! Archived skills (issue 15): read only as far as asked when listing, prompting and serving,
//! and run from one shared read-only copy per archive. Each runs the real binary.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::support::{memory_kib, private_runtime_folder, skill_md, skillbox};

/// Bytes each entry of [`expanding_archives`] expands to.
const ENTRY_BYTES: usize = 4 * 1024 * 1024;
/// Entries of each archive besides `SKILL.md`: 60 × 4 MiB = 240 MiB, under the 256 MiB an
/// archive may expand to.
const ENTRIES_PER_ARCHIVE: usize = 60;
/// Peak memory a `prompt` or `serve` over those archives stays under: a small fraction of what
/// one of them expands to.
const PEAK_MEMORY_LIMIT_BYTES: u64 = 160 * 1024 * 1024;

/// Three archives like the issue's: each about 2 MB on disk and expanding to about 240 MB, in
/// 60 entries compressed about 124 to 1 (under the zip-bomb ratio). The one entry is compressed
/// once and copied raw into every archive.
fn expanding_archives(folder: &Path) -> Vec<PathBuf> {
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut content = Vec::with_capacity(ENTRY_BYTES + 1024);
    let mut state: u32 = 1;
    while content.len() < ENTRY_BYTES {
        content.extend_from_slice(&[b'a'; 1024]);
        for _ in 0..4 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            content.push((state >> 24) as u8);
        }
    }
    let source_path = folder.join("source.zip");
    let mut source = zip::ZipWriter::new(std::fs::File::create(&source_path).unwrap());
    source.start_file("data.txt", options).unwrap();
    source.write_all(&content).unwrap();
    source.finish().unwrap();
    let mut source = zip::ZipArchive::new(fs_err::File::open(&source_path).unwrap()).unwrap();
    (0..3)
        .map(|number| {
            let name = format!("expands-{number}");
            let path = folder.join(format!("{name}.skill"));
            let mut writer = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
            writer
                .start_file(format!("{name}/SKILL.md"), options)
                .unwrap();
            writer
                .write_all(skill_md(&name, "Expands to far more than it weighs.").as_bytes())
                .unwrap();
            for entry in 0..ENTRIES_PER_ARCHIVE {
                let file = source.by_index_raw(0).unwrap();
                writer
                    .raw_copy_file_rename(file, format!("{name}/assets/data-{entry}.txt"))
                    .unwrap();
            }
            writer.finish().unwrap();
            path
        })
        .collect()
}

/// Run `skillbox ARGUMENTS…` to its end under a Python parent that reports the peak resident
/// memory of its only child (`RUSAGE_CHILDREN`, in KiB on Linux) on its last stderr line;
/// returns the child's stdout and that peak in bytes.
fn run_measuring_peak_memory(arguments: &[std::ffi::OsString]) -> (String, u64) {
    const MEASURE: &str = "import resource, subprocess, sys\n\
        done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n\
        sys.stdout.buffer.write(done.stdout)\n\
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n\
        print(f'{done.returncode} {peak}', file=sys.stderr)\n";
    let output = std::process::Command::new("python3")
        .current_dir(super::support::repo_root())
        .env_remove("SKILLBOX_ROOTS")
        .args(["-c", MEASURE])
        .arg(assert_cmd::cargo::cargo_bin("skillbox"))
        .args(arguments)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let last = stderr.lines().last().unwrap_or_default();
    let (code, peak_kib) = last.split_once(' ').unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(code, "0", "{stderr}");
    (
        String::from_utf8(output.stdout).unwrap(),
        peak_kib.parse::<u64>().unwrap() * 1024,
    )
}

#[test]
fn archives_are_read_only_as_far_as_asked_by_prompt_and_serve() {
    let temp = tempfile::tempdir().unwrap();
    let archives = expanding_archives(temp.path());
    let mut arguments: Vec<std::ffi::OsString> =
        vec!["prompt".into(), "--format".into(), "xml".into()];
    for archive in &archives {
        arguments.push("--root".into());
        arguments.push(archive.into());
    }
    let (prompt, peak) = run_measuring_peak_memory(&arguments);
    for number in 0..3 {
        assert!(prompt.contains(&format!("expands-{number}")), "{prompt}");
    }
    assert!(
        peak < PEAK_MEMORY_LIMIT_BYTES,
        "`skillbox prompt` peaked at {} MiB over three archives of {} MiB each",
        peak / (1024 * 1024),
        archives[0].metadata().unwrap().len().div_ceil(1024 * 1024)
    );

    let data = tempfile::tempdir().unwrap();
    let (mut child, _url) =
        super::serve::start_server_with(data.path(), &archives, &["--sandbox", "off"]);
    let (peak_kib, _) = memory_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert!(peak_kib > 0, "no VmHWM for the server");
    assert!(
        peak_kib * 1024 < PEAK_MEMORY_LIMIT_BYTES,
        "`skillbox serve` peaked at {} MiB while loading three archives",
        peak_kib / 1024
    );
}

/// An archive holding `greeter/SKILL.md` and `greeter/scripts/hello.py`.
fn greeter_archive(folder: &Path) -> PathBuf {
    let path = folder.join("greeter.skill");
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut writer = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    writer.start_file("greeter/SKILL.md", options).unwrap();
    writer
        .write_all(skill_md("greeter", "Greets from inside an archive.").as_bytes())
        .unwrap();
    writer
        .start_file("greeter/scripts/hello.py", options)
        .unwrap();
    writer
        .write_all(b"import sys\nprint('hello', *sys.argv[1:], 'from the archive')\n")
        .unwrap();
    writer.finish().unwrap();
    path
}

#[test]
fn archived_skills_run_from_one_shared_read_only_copy() {
    use std::os::unix::fs::PermissionsExt;
    let temp = tempfile::tempdir().unwrap();
    let archive = greeter_archive(temp.path());
    let runtime = private_runtime_folder(temp.path());
    for round in 0..3 {
        let output = skillbox()
            .env("SKILLBOX_RUNTIME_DIR", &runtime)
            .arg("--root")
            .arg(&archive)
            .args(["run", "greeter", "hello.py", "--", "world"])
            .output()
            .unwrap();
        assert_eq!(
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stdout).trim()
            ),
            (Some(0), "hello world from the archive"),
            "round {round}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let copies: Vec<PathBuf> = fs_err::read_dir(runtime.join("archives"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let [copy] = copies.as_slice() else {
        panic!("three runs of one archive left {copies:?}");
    };
    let name = copy.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.len() == 64 && name.bytes().all(|byte| byte.is_ascii_hexdigit()),
        "{name}"
    );
    for path in [
        copy.clone(),
        copy.join("scripts"),
        copy.join("scripts/hello.py"),
    ] {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o222, 0, "{} is writable: {mode:o}", path.display());
    }
}
