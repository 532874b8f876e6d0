//! Reading what `skillbox eval` wrote under the data folder's `evals/`: the run folders, each
//! run's `report.json` and its `transcripts/<id>.jsonl`.
//!
//! Names come from the request, so they are names, never paths: a run id is letters, digits,
//! `.`, `_` and `-` (no leading dot), a transcript id 32 hex digits, and anything else names
//! nothing. Every name is opened relative to the folder opened before it, with `O_NOFOLLOW`,
//! so no link anywhere under `evals/` is followed, whatever changes on the disk meanwhile; the
//! opened run folder's own path (its `/proc/self/fd` link) must lie inside the evals folder
//! too. Files are opened with `O_NONBLOCK` (a FIFO planted as a report must not hold the
//! reader) and must be regular files, and every read is bounded.

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde::Deserialize;
use skillbox_agent::transcript::TranscriptHeader;
use skillbox_agent::{Message, TurnEnd, Usage};
use skillbox_eval::EvalReport;

/// The folder of eval runs inside the data folder (where `skillbox eval` writes by default).
pub const EVALS_FOLDER: &str = "evals";
/// A run's report file.
pub const REPORT_FILE: &str = skillbox_eval::report::REPORT_FILE;
/// A run's transcripts folder.
pub const TRANSCRIPTS_FOLDER: &str = "transcripts";
/// Longest run id taken, in bytes (`skillbox eval` names its runs in 22).
pub const MAX_RUN_ID_BYTES: usize = 128;
/// Entries of the evals folder looked at for the list: past this the rest are not listed.
pub const MAX_SCANNED_EVAL_ENTRIES: usize = 10_000;
/// Largest `report.json` read, in bytes. Reports hold every query's and task's outcome (tool
/// results cut to 2,000 characters): a few hundred KiB for a large suite.
pub const MAX_REPORT_BYTES: u64 = 16 * 1024 * 1024;
/// Bytes of a transcript the transcript page reads; past this the rest is not shown.
pub const MAX_SHOWN_TRANSCRIPT_BYTES: u64 = 8 * 1024 * 1024;
/// Lines of a transcript that are not transcript lines named one by one; the rest are counted.
/// Each becomes a sentence on the page: four million two-byte lines had made gigabytes.
pub const MAX_NAMED_UNREADABLE_LINES: usize = 20;

/// Why something under the evals folder could not be read. Names are relative to the evals
/// folder (`RUN/report.json`), so messages never show where the data folder is.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EvalFileError {
    /// Nothing there.
    #[error("`{0}` does not exist")]
    Missing(String),
    /// A symbolic link where a folder or file should be.
    #[error(
        "`{0}` is a symbolic link; eval runs are read only from their own folders and files, never through a link"
    )]
    Link(String),
    /// A file where a folder should be, or a FIFO, socket or device where a file should be.
    #[error("`{name}` is not a {expected}")]
    WrongKind {
        /// What was opened.
        name: String,
        /// `folder` or `regular file`.
        expected: &'static str,
    },
    /// The opened folder resolves to somewhere outside the evals folder.
    #[error("`{0}` lies outside the evals folder")]
    Outside(String),
    /// Larger than the page reads.
    #[error("`{name}` holds {bytes} bytes, more than the {bound} this page reads")]
    TooLarge {
        /// The file.
        name: String,
        /// Its size.
        bytes: u64,
        /// The bound.
        bound: u64,
    },
    /// Read, but not an eval report (another version's, or damaged).
    #[error("`{name}` is not an eval report this server can read: {message}")]
    NotAReport {
        /// The file.
        name: String,
        /// What serde said.
        message: String,
    },
    /// Any other failure to open or read.
    #[error("`{name}` cannot be read: {message}")]
    Unreadable {
        /// The folder or file.
        name: String,
        /// The system's reason.
        message: String,
    },
}

impl EvalFileError {
    /// Whether the run (or transcript) is simply not there, as opposed to there but unreadable.
    pub(crate) fn is_missing(&self) -> bool {
        matches!(self, EvalFileError::Missing(_))
    }
}

/// Whether `text` is a run id as `skillbox eval` names its folders (`20250101-120000-abc123`),
/// or as a person named one with `--output`: letters, digits, `.`, `_`, `-`, no leading dot.
#[must_use]
pub fn is_run_id(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_RUN_ID_BYTES
        && !text.starts_with('.')
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}

/// Whether `text` is a transcript id as the agent names them: 32 lowercase hex digits.
#[must_use]
pub fn is_transcript_id(text: &str) -> bool {
    text.len() == 32
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// One entry of the evals folder that may be a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunEntry {
    /// The folder's name: the run id.
    pub(crate) id: String,
    /// Its modification time (when its last file was added), for the order.
    pub(crate) modified: std::time::SystemTime,
    /// Whether it is a symbolic link (listed, never read).
    pub(crate) link: bool,
}

/// The run folders of the evals folder.
#[derive(Debug, Default)]
pub(crate) struct RunListing {
    /// Newest first.
    pub(crate) runs: Vec<RunEntry>,
    /// Whether the folder held more than [`MAX_SCANNED_EVAL_ENTRIES`] entries.
    pub(crate) cut: bool,
}

/// The evals folder of a data folder: where runs are found and how they are opened.
#[derive(Debug, Clone)]
pub(crate) struct EvalsFolder {
    path: PathBuf,
}

/// Flags a folder under the evals folder is opened with.
fn folder_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Flags a file under the evals folder is opened with.
fn file_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC
}

impl EvalsFolder {
    /// The evals folder at `path` (`<data folder>/evals`).
    pub(crate) fn new(path: PathBuf) -> Self {
        EvalsFolder { path }
    }

    /// Where it is, for the list page's note.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The evals folder itself, opened; never through a link.
    fn open(&self) -> Result<OwnedFd, EvalFileError> {
        rustix::fs::open(&self.path, folder_flags(), Mode::empty()).map_err(|errno| {
            let is_link = fs_err::symlink_metadata(&self.path)
                .is_ok_and(|metadata| metadata.file_type().is_symlink());
            opening_error(errno, EVALS_FOLDER, "folder", is_link)
        })
    }

    /// The run folders, newest first (by modification time, then by name), at most
    /// [`MAX_SCANNED_EVAL_ENTRIES`] looked at. Entries that cannot be runs (files, names that
    /// are not run ids) are left out; links are listed, to be shown as refused. A missing
    /// evals folder lists nothing.
    pub(crate) fn list(&self) -> Result<RunListing, EvalFileError> {
        let folder = match self.open() {
            Ok(folder) => folder,
            Err(EvalFileError::Missing(_)) => return Ok(RunListing::default()),
            Err(error) => return Err(error),
        };
        let unreadable = |errno: Errno| EvalFileError::Unreadable {
            name: EVALS_FOLDER.to_owned(),
            message: std::io::Error::from(errno).to_string(),
        };
        let mut listing = Dir::read_from(&folder).map_err(unreadable)?;
        let mut runs = Vec::new();
        let mut scanned = 0_usize;
        let mut cut = false;
        while let Some(entry) = listing.read() {
            let entry = entry.map_err(unreadable)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            scanned += 1;
            if scanned > MAX_SCANNED_EVAL_ENTRIES {
                cut = true;
                break;
            }
            let Some(id) = std::str::from_utf8(name).ok().filter(|id| is_run_id(id)) else {
                continue;
            };
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(&folder, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                        .map_or(FileType::Unknown, |stat| {
                            FileType::from_raw_mode(stat.st_mode)
                        })
                }
                known => known,
            };
            let link = match kind {
                FileType::Directory => false,
                FileType::Symlink => true,
                _ => continue,
            };
            // `lstat`: a link's own time, never its target's.
            let modified = fs_err::symlink_metadata(self.path.join(id))
                .and_then(|metadata| metadata.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            runs.push(RunEntry {
                id: id.to_owned(),
                modified,
                link,
            });
        }
        runs.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| b.id.cmp(&a.id)));
        Ok(RunListing { runs, cut })
    }

    /// The run folder `run`, opened relative to the evals folder without following a link,
    /// and checked to resolve inside it. `run` must be a run id ([`is_run_id`]).
    fn open_run(&self, run: &str) -> Result<OwnedFd, EvalFileError> {
        if !is_run_id(run) {
            return Err(EvalFileError::Missing(run.to_owned()));
        }
        let evals = self.open()?;
        let folder = open_folder_at(&evals, run, run)?;
        // Belt and braces: where the opened folder is, as the kernel says.
        if let (Ok(outer), Ok(inner)) = (resolved_path(&evals), resolved_path(&folder))
            && (inner == outer || !inner.starts_with(&outer))
        {
            return Err(EvalFileError::Outside(run.to_owned()));
        }
        Ok(folder)
    }

    /// The run's report: its size first checked against `budget` (and [`MAX_REPORT_BYTES`]),
    /// then read and parsed. The bytes read are taken from `budget` whether or not they are a
    /// report, so a list of damaged reports reads no more than a list of good ones.
    pub(crate) fn read_report(
        &self,
        run: &str,
        budget: &mut u64,
    ) -> Result<EvalReport, EvalFileError> {
        let folder = self.open_run(run)?;
        let name = format!("{run}/{REPORT_FILE}");
        let (file, size) = open_file_at(&folder, REPORT_FILE, &name)?;
        let bound = (*budget).min(MAX_REPORT_BYTES);
        if size > bound {
            return Err(EvalFileError::TooLarge {
                name,
                bytes: size,
                bound,
            });
        }
        let bytes = read_at_most(file, bound, &name)?;
        *budget = budget.saturating_sub(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
        serde_json::from_slice(&bytes).map_err(|error| EvalFileError::NotAReport {
            name,
            message: error.to_string(),
        })
    }

    /// The transcript `id` of run `run`: its first [`MAX_SHOWN_TRANSCRIPT_BYTES`] read.
    pub(crate) fn read_transcript(
        &self,
        run: &str,
        id: &str,
    ) -> Result<TranscriptFile, EvalFileError> {
        if !is_transcript_id(id) {
            return Err(EvalFileError::Missing(id.to_owned()));
        }
        let folder = self.open_run(run)?;
        let transcripts_name = format!("{run}/{TRANSCRIPTS_FOLDER}");
        let transcripts = open_folder_at(&folder, TRANSCRIPTS_FOLDER, &transcripts_name)?;
        let file_name = format!("{id}.{}", skillbox_agent::transcript::TRANSCRIPT_EXTENSION);
        let name = format!("{transcripts_name}/{file_name}");
        let (file, size) = open_file_at(&transcripts, &file_name, &name)?;
        let bytes = read_at_most(file, MAX_SHOWN_TRANSCRIPT_BYTES, &name)?;
        Ok(TranscriptFile::parse(&bytes, size))
    }
}

/// The folder `name` inside `parent`, never through a link.
fn open_folder_at(parent: &OwnedFd, name: &str, shown: &str) -> Result<OwnedFd, EvalFileError> {
    rustix::fs::openat(parent, name, folder_flags(), Mode::empty())
        .map_err(|errno| opening_error(errno, shown, "folder", is_link_at(parent, name)))
}

/// The regular file `name` inside `parent`, never through a link, and its size.
fn open_file_at(
    parent: &OwnedFd,
    name: &str,
    shown: &str,
) -> Result<(std::fs::File, u64), EvalFileError> {
    let descriptor = rustix::fs::openat(parent, name, file_flags(), Mode::empty())
        .map_err(|errno| opening_error(errno, shown, "regular file", is_link_at(parent, name)))?;
    let stat = rustix::fs::fstat(&descriptor).map_err(|errno| EvalFileError::Unreadable {
        name: shown.to_owned(),
        message: std::io::Error::from(errno).to_string(),
    })?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(EvalFileError::WrongKind {
            name: shown.to_owned(),
            expected: "regular file",
        });
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    Ok((std::fs::File::from(descriptor), size))
}

/// At most `bound` bytes of `file`.
fn read_at_most(file: std::fs::File, bound: u64, shown: &str) -> Result<Vec<u8>, EvalFileError> {
    let mut bytes = Vec::new();
    fs_err::File::from_parts(file, shown)
        .take(bound)
        .read_to_end(&mut bytes)
        .map_err(|error| EvalFileError::Unreadable {
            name: shown.to_owned(),
            message: error.to_string(),
        })?;
    Ok(bytes)
}

/// Whether `name` inside `parent` is a symbolic link (`lstat`).
fn is_link_at(parent: &OwnedFd, name: &str) -> bool {
    rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

/// What a failed open means, for `shown`: a link refused by `O_NOFOLLOW` gives `ELOOP` (or
/// `ENOTDIR` with `O_DIRECTORY`), told apart from a plain file by `is_link`.
fn opening_error(
    errno: Errno,
    shown: &str,
    expected: &'static str,
    is_link: bool,
) -> EvalFileError {
    match errno {
        Errno::NOENT => EvalFileError::Missing(shown.to_owned()),
        _ if is_link => EvalFileError::Link(shown.to_owned()),
        Errno::NOTDIR | Errno::LOOP => EvalFileError::WrongKind {
            name: shown.to_owned(),
            expected,
        },
        other => EvalFileError::Unreadable {
            name: shown.to_owned(),
            message: std::io::Error::from(other).to_string(),
        },
    }
}

/// Where an open folder is, as the kernel resolves it (`/proc/self/fd/N`).
fn resolved_path(folder: &OwnedFd) -> std::io::Result<PathBuf> {
    fs_err::read_link(format!("/proc/self/fd/{}", folder.as_fd().as_raw_fd()))
}

/// One line of a transcript file (the agent's format, `skillbox_agent::transcript`).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TranscriptLine {
    Header(TranscriptHeader),
    Message {
        message: Message,
    },
    Turn {
        end: TurnEnd,
        rounds: u32,
        usage: Usage,
    },
}

/// A transcript as read for showing: its header, its messages and turn ends in order, the
/// lines that could not be read, and whether the file was longer than was read.
#[derive(Debug, Default)]
pub(crate) struct TranscriptFile {
    pub(crate) header: Option<TranscriptHeader>,
    pub(crate) lines: Vec<TranscriptEntry>,
    /// The file's size, when more than [`MAX_SHOWN_TRANSCRIPT_BYTES`] were left unread.
    pub(crate) cut_at_bytes: Option<u64>,
    /// Lines that are not transcript lines past the first [`MAX_NAMED_UNREADABLE_LINES`].
    pub(crate) unnamed_unreadable_lines: usize,
}

/// One readable line of a transcript after its header.
#[derive(Debug)]
pub(crate) enum TranscriptEntry {
    /// A message.
    Message(Message),
    /// A turn ended.
    Turn {
        end: TurnEnd,
        rounds: u32,
        usage: Usage,
    },
    /// A line that is not a transcript line: its number (from 1) and why.
    Unreadable { line: usize, message: String },
}

impl TranscriptFile {
    /// The lines of `bytes`, the start of a file of `size` bytes. When the file was cut, its
    /// last line (likely cut too) is left out.
    fn parse(bytes: &[u8], size: u64) -> Self {
        let cut = u64::try_from(bytes.len()).unwrap_or(u64::MAX) < size;
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        if cut && let Some(end) = text.rfind('\n') {
            text.truncate(end);
        }
        let mut file = TranscriptFile {
            cut_at_bytes: cut.then_some(size),
            ..TranscriptFile::default()
        };
        let mut named = 0_usize;
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let problem = match serde_json::from_str::<TranscriptLine>(line) {
                Ok(TranscriptLine::Header(header)) if file.header.is_none() => {
                    file.header = Some(header);
                    continue;
                }
                Ok(TranscriptLine::Header(_)) => "a second header".to_owned(),
                Ok(TranscriptLine::Message { message }) => {
                    file.lines.push(TranscriptEntry::Message(message));
                    continue;
                }
                Ok(TranscriptLine::Turn { end, rounds, usage }) => {
                    file.lines
                        .push(TranscriptEntry::Turn { end, rounds, usage });
                    continue;
                }
                Err(error) => error.to_string(),
            };
            if named < MAX_NAMED_UNREADABLE_LINES {
                named += 1;
                file.lines.push(TranscriptEntry::Unreadable {
                    line: index + 1,
                    message: problem,
                });
            } else {
                file.unnamed_unreadable_lines += 1;
            }
        }
        file
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A budget of one whole report.
    fn whole() -> u64 {
        MAX_REPORT_BYTES
    }

    #[test]
    fn names_are_names_never_paths() {
        for good in ["20250101-120000-abc123", "my.run_2", "A-b"] {
            assert!(is_run_id(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            ".hidden",
            "a/b",
            "a\\b",
            "%2e%2e",
            "a b",
            "é",
            "a\0",
            &"x".repeat(MAX_RUN_ID_BYTES + 1),
        ] {
            assert!(!is_run_id(bad), "{bad:?}");
        }
        assert!(is_transcript_id("0123456789abcdef0123456789abcdef"));
        for bad in [
            "0123456789ABCDEF0123456789ABCDEF",
            "0123",
            "../0123456789abcdef0123456789abc",
            "0123456789abcdef0123456789abcdeg",
        ] {
            assert!(!is_transcript_id(bad), "{bad}");
        }
    }

    #[test]
    fn links_are_never_followed_and_files_are_not_folders() {
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs_err::write(outside.path().join(REPORT_FILE), "{}").unwrap();
        let evals = data.path().join(EVALS_FOLDER);
        fs_err::create_dir_all(evals.join("real")).unwrap();
        symlink(outside.path(), evals.join("linked")).unwrap();
        symlink(
            outside.path().join(REPORT_FILE),
            evals.join("real").join(REPORT_FILE),
        )
        .unwrap();
        fs_err::write(evals.join("plain"), "x").unwrap();
        let folder = EvalsFolder::new(evals.clone());

        let listing = folder.list().unwrap();
        let mut listed: Vec<(String, bool)> = listing
            .runs
            .iter()
            .map(|run| (run.id.clone(), run.link))
            .collect();
        listed.sort();
        assert_eq!(
            listed,
            [("linked".to_owned(), true), ("real".to_owned(), false)]
        );
        assert!(matches!(
            folder.read_report("linked", &mut whole()),
            Err(EvalFileError::Link(name)) if name == "linked"
        ));
        assert!(matches!(
            folder.read_report("real", &mut whole()),
            Err(EvalFileError::Link(name)) if name == "real/report.json"
        ));
        assert!(matches!(
            folder.read_report("plain", &mut whole()),
            Err(EvalFileError::WrongKind {
                expected: "folder",
                ..
            })
        ));
        assert!(
            folder
                .read_report("..", &mut whole())
                .unwrap_err()
                .is_missing()
        );
        assert!(
            folder
                .read_report("gone", &mut whole())
                .unwrap_err()
                .is_missing()
        );

        // The evals folder itself as a link is refused too.
        let other = tempfile::tempdir().unwrap();
        let linked_evals = other.path().join(EVALS_FOLDER);
        symlink(&evals, &linked_evals).unwrap();
        assert!(matches!(
            EvalsFolder::new(linked_evals).list(),
            Err(EvalFileError::Link(_))
        ));
    }

    #[test]
    fn a_fifo_is_not_a_report_and_large_files_are_refused_unread() {
        let data = tempfile::tempdir().unwrap();
        let evals = data.path().join(EVALS_FOLDER);
        fs_err::create_dir_all(evals.join("fifo")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            evals.join("fifo").join(REPORT_FILE),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        fs_err::create_dir_all(evals.join("large")).unwrap();
        fs_err::write(evals.join("large").join(REPORT_FILE), vec![b' '; 2048]).unwrap();
        let folder = EvalsFolder::new(evals);
        assert!(matches!(
            folder.read_report("fifo", &mut whole()),
            Err(EvalFileError::WrongKind {
                expected: "regular file",
                ..
            })
        ));
        assert!(matches!(
            folder.read_report("large", &mut 1024),
            Err(EvalFileError::TooLarge {
                bytes: 2048,
                bound: 1024,
                ..
            })
        ));
        assert!(matches!(
            folder.read_report("large", &mut whole()),
            Err(EvalFileError::NotAReport { .. })
        ));
    }

    #[test]
    fn transcripts_written_by_the_agent_are_read_back() {
        use skillbox_agent::{TranscriptStore, WireFormat};
        let data = tempfile::tempdir().unwrap();
        let evals = data.path().join(EVALS_FOLDER);
        let store = TranscriptStore::new(evals.join("run-1").join(TRANSCRIPTS_FOLDER));
        let mut transcript = store
            .create(WireFormat::Chat, "model-x", "http://127.0.0.1:1/v1")
            .unwrap();
        transcript.append(&Message::user("hello")).unwrap();
        transcript.append(&Message::assistant("hi")).unwrap();
        transcript
            .record_turn(TurnEnd::Answered, 1, Usage::default())
            .unwrap();
        let id = transcript.header().id.clone();
        drop(transcript);
        let read = EvalsFolder::new(evals)
            .read_transcript("run-1", &id)
            .unwrap();
        assert_eq!(read.header.unwrap().model, "model-x");
        assert!(read.cut_at_bytes.is_none());
        assert!(matches!(
            read.lines.as_slice(),
            [
                TranscriptEntry::Message(Message::User { .. }),
                TranscriptEntry::Message(Message::Assistant { .. }),
                TranscriptEntry::Turn {
                    end: TurnEnd::Answered,
                    rounds: 1,
                    ..
                }
            ]
        ));
    }

    #[test]
    fn a_cut_transcript_drops_its_partial_last_line_and_bad_lines_are_named() {
        let text = "{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\"}}\nnot json\n{\"type\":\"message\",\"mess";
        let file = TranscriptFile::parse(text.as_bytes(), 10_000);
        assert_eq!(file.cut_at_bytes, Some(10_000));
        assert!(matches!(
            file.lines.as_slice(),
            [
                TranscriptEntry::Message(_),
                TranscriptEntry::Unreadable { line: 2, .. }
            ]
        ));
    }
}
