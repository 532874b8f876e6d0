//! Transcripts: every conversation saved as JSONL (`<id>.jsonl`, one JSON value per line: a
//! header, then each message as it is added, and a line per finished turn), so a
//! conversation can be resumed and audited. Files are private to the user (0600 in a 0700
//! folder): conversations hold what people typed and what skills returned. A line holds at
//! most [`MAX_TRANSCRIPT_LINE_BYTES`] (a larger message is saved with its payloads cut), a file
//! at most [`MAX_TRANSCRIPT_BYTES`] (past it the conversation goes on unsaved), and a file
//! larger than that is not resumed.

use fs_err::os::unix::fs::OpenOptionsExt;
use std::io::{BufRead, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conversation::{Message, Usage};
use crate::events::TurnEnd;
use crate::history::{self, MAX_HISTORY_BYTES};
use crate::wire::WireFormat;

/// A transcript file's name ends so.
pub const TRANSCRIPT_EXTENSION: &str = "jsonl";
/// Bytes of one transcript line at most: a message the history bound keeps, with room for the
/// line's own fields. A larger message is saved with its payloads and texts cut.
pub const MAX_TRANSCRIPT_LINE_BYTES: usize = MAX_HISTORY_BYTES + 64 * 1024;
/// Bytes of one transcript file at most: eight histories at their bound. Past it nothing more
/// is saved (the conversation goes on, unsaved), and a larger file is not resumed.
pub const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;

/// The first line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptHeader {
    /// The conversation's id: 32 lowercase hex digits, ordered by time (UUID v7).
    pub id: String,
    /// When it began, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// The wire format spoken.
    pub format: WireFormat,
    /// The model asked.
    pub model: String,
    /// The endpoint's base URL.
    pub base_url: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
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

/// Why a transcript could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The id is not a transcript id (ids are hex digits: never paths).
    #[error(
        "`{id}` is not a conversation id (ids are hex digits; `skillbox chat --list` shows them)"
    )]
    BadId {
        /// The id given.
        id: String,
    },
    /// No transcript has that id.
    #[error("no conversation `{id}` in {directory}; `skillbox chat --list` shows them")]
    NotFound {
        /// The id given.
        id: String,
        /// Where transcripts are kept.
        directory: PathBuf,
    },
    /// More than one transcript starts with that prefix.
    #[error("`{id}` names more than one conversation ({matches}); give more digits")]
    Ambiguous {
        /// The prefix given.
        id: String,
        /// The ids it matches.
        matches: String,
    },
    /// A file larger than a transcript may be (skillbox writes none that large).
    #[error(
        "{path} holds {bytes} bytes, more than a transcript may ({bound} bytes); it is not resumed"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// [`MAX_TRANSCRIPT_BYTES`].
        bound: u64,
    },
    /// The transcript reached [`MAX_TRANSCRIPT_BYTES`]: nothing more is saved.
    #[error("{path} reached the bound of a transcript ({bound} bytes); the rest is not saved")]
    Full {
        /// The file.
        path: PathBuf,
        /// [`MAX_TRANSCRIPT_BYTES`].
        bound: u64,
    },
    /// A line is not a transcript line.
    #[error("{path}:{line}: not a transcript line: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// A conversation listed by [`TranscriptStore::list`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptSummary {
    /// The header.
    #[serde(flatten)]
    pub header: TranscriptHeader,
    /// Messages saved.
    pub messages: usize,
    /// The start of the first thing the person wrote.
    pub first_prompt: String,
}

/// The folder transcripts are kept in.
#[derive(Debug, Clone)]
pub struct TranscriptStore {
    directory: PathBuf,
}

/// One transcript open for appending.
#[derive(Debug)]
pub struct Transcript {
    header: TranscriptHeader,
    path: PathBuf,
    /// The file, once made: one begun with [`TranscriptStore::begin`] is made when the model
    /// first answers, and the lines before wait in `held`.
    file: Option<fs_err::File>,
    /// Lines waiting for the file.
    held: Vec<String>,
    /// Bytes in the file.
    written: u64,
    /// Bytes the file may hold ([`MAX_TRANSCRIPT_BYTES`]).
    limit: u64,
}

impl Transcript {
    /// The header.
    #[must_use]
    pub fn header(&self) -> &TranscriptHeader {
        &self.header
    }

    /// The file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file was made (a transcript begun with [`TranscriptStore::begin`] is made
    /// when the model first answers).
    #[must_use]
    pub fn is_written(&self) -> bool {
        self.file.is_some()
    }

    /// Append a message; a message whose line would be longer than
    /// [`MAX_TRANSCRIPT_LINE_BYTES`] is saved with its payloads and texts cut.
    ///
    /// # Errors
    /// When the file cannot be made or written, or it is full ([`TranscriptError::Full`]).
    pub fn append(&mut self, message: &Message) -> Result<(), TranscriptError> {
        let mut line = Line::Message {
            message: message.clone(),
        };
        let mut text = line_text(&line)?;
        if text.len() > MAX_TRANSCRIPT_LINE_BYTES
            && let Line::Message { message } = &mut line
        {
            history::cut_all(message);
            text = line_text(&line)?;
        }
        if self.file.is_none() {
            if !matches!(message, Message::Assistant { .. }) {
                self.held.push(text);
                return Ok(());
            }
            self.open()?;
        }
        self.write_text(&text)
    }

    /// Record how a turn ended (not when nothing was saved: a turn that failed before the
    /// model answered leaves no file).
    ///
    /// # Errors
    /// When the file cannot be written, or it is full.
    pub fn record_turn(
        &mut self,
        end: TurnEnd,
        rounds: u32,
        usage: Usage,
    ) -> Result<(), TranscriptError> {
        if self.file.is_none() {
            return Ok(());
        }
        self.write_text(&line_text(&Line::Turn { end, rounds, usage })?)
    }

    /// Make the file: the header, then the lines held.
    fn open(&mut self) -> Result<(), TranscriptError> {
        let file = fs_err::OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)?;
        self.file = Some(file);
        let header = line_text(&Line::Header(self.header.clone()))?;
        self.write_text(&header)?;
        for text in std::mem::take(&mut self.held) {
            self.write_text(&text)?;
        }
        Ok(())
    }

    fn write_text(&mut self, text: &str) -> Result<(), TranscriptError> {
        let length = u64::try_from(text.len()).unwrap_or(u64::MAX);
        if self.written.saturating_add(length) > self.limit {
            return Err(TranscriptError::Full {
                path: self.path.clone(),
                bound: self.limit,
            });
        }
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        file.write_all(text.as_bytes())?;
        file.flush()?;
        self.written += length;
        Ok(())
    }
}

/// A line of the file, newline included.
fn line_text(line: &Line) -> Result<String, TranscriptError> {
    let mut text = serde_json::to_string(line).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

fn is_id_text(id: &str) -> bool {
    !id.is_empty() && id.len() <= 32 && id.bytes().all(|byte| byte.is_ascii_hexdigit())
}

impl TranscriptStore {
    /// Transcripts kept in `directory` (made, private, when first written).
    #[must_use]
    pub fn new(directory: impl Into<PathBuf>) -> Self {
        TranscriptStore {
            directory: directory.into(),
        }
    }

    /// Where transcripts are kept.
    #[must_use]
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    fn ensure_directory(&self) -> Result<(), TranscriptError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.directory)
            .map_err(|error| {
                std::io::Error::new(
                    error.kind(),
                    format!("cannot make {}: {error}", self.directory.display()),
                )
            })?;
        // A folder made earlier, or by someone else, must be this user's alone: conversations
        // are private, and whoever can write the folder can swap files for links.
        let metadata = fs_err::symlink_metadata(&self.directory)?;
        if !metadata.is_dir() || metadata.uid() != rustix::process::geteuid().as_raw() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a folder of this user's; transcripts are kept only in the user's own folder (--data-dir)",
                    self.directory.display()
                ),
            )
            .into());
        }
        if metadata.mode() & 0o077 != 0 {
            fs_err::set_permissions(&self.directory, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }

    /// Begin a new transcript, its file made now.
    ///
    /// # Errors
    /// When the folder or the file cannot be made.
    pub fn create(
        &self,
        format: WireFormat,
        model: &str,
        base_url: &str,
    ) -> Result<Transcript, TranscriptError> {
        let mut transcript = self.begin(format, model, base_url)?;
        transcript.open()?;
        Ok(transcript)
    }

    /// Begin a new transcript whose file is made when the model first answers: a
    /// conversation in which nothing was exchanged (the server is down, the key refused)
    /// leaves no file behind.
    ///
    /// # Errors
    /// When the folder cannot be made or is not the user's.
    pub fn begin(
        &self,
        format: WireFormat,
        model: &str,
        base_url: &str,
    ) -> Result<Transcript, TranscriptError> {
        self.ensure_directory()?;
        let id = uuid::Uuid::now_v7().simple().to_string();
        let header = TranscriptHeader {
            created_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or_default(),
            id,
            format,
            model: model.to_owned(),
            base_url: base_url.to_owned(),
        };
        let path = self.path_of(&header.id);
        Ok(Transcript {
            header,
            path,
            file: None,
            held: Vec::new(),
            written: 0,
            limit: MAX_TRANSCRIPT_BYTES,
        })
    }

    fn path_of(&self, id: &str) -> PathBuf {
        self.directory.join(format!("{id}.{TRANSCRIPT_EXTENSION}"))
    }

    /// The full id `id` names: itself, or the one transcript whose id starts with it.
    ///
    /// # Errors
    /// [`TranscriptError::BadId`], [`TranscriptError::NotFound`] or
    /// [`TranscriptError::Ambiguous`].
    pub fn resolve(&self, id: &str) -> Result<String, TranscriptError> {
        let id = id.trim().to_ascii_lowercase();
        if !is_id_text(&id) {
            return Err(TranscriptError::BadId { id });
        }
        let not_found = || TranscriptError::NotFound {
            id: id.clone(),
            directory: self.directory.clone(),
        };
        let matches: Vec<String> = self
            .ids()
            .map_err(|_| not_found())?
            .into_iter()
            .filter(|candidate| candidate.starts_with(&id))
            .collect();
        match matches.as_slice() {
            [] => Err(not_found()),
            [one] => Ok(one.clone()),
            many if many.contains(&id) => Ok(id),
            many => Err(TranscriptError::Ambiguous {
                id: id.clone(),
                matches: many.join(", "),
            }),
        }
    }

    fn ids(&self) -> Result<Vec<String>, TranscriptError> {
        let mut ids = Vec::new();
        for entry in fs_err::read_dir(&self.directory)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|name| name.strip_suffix(&format!(".{TRANSCRIPT_EXTENSION}")))
            else {
                continue;
            };
            if is_id_text(id) && entry.file_type().is_ok_and(|kind| kind.is_file()) {
                ids.push(id.to_owned());
            }
        }
        ids.sort();
        Ok(ids)
    }

    fn read(&self, id: &str) -> Result<(TranscriptHeader, Vec<Message>), TranscriptError> {
        let path = self.path_of(id);
        // O_NOFOLLOW: a transcript replaced by a link is not read or written through it.
        let file = fs_err::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        let bytes = file.metadata()?.len();
        if bytes > MAX_TRANSCRIPT_BYTES {
            return Err(TranscriptError::TooLarge {
                path,
                bytes,
                bound: MAX_TRANSCRIPT_BYTES,
            });
        }
        let mut header = None;
        let mut messages = Vec::new();
        for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let corrupt = |message: String| TranscriptError::Corrupt {
                path: path.clone(),
                line: index + 1,
                message,
            };
            match serde_json::from_str::<Line>(&line).map_err(|error| corrupt(error.to_string()))? {
                Line::Header(found) if index == 0 => header = Some(found),
                Line::Header(_) => return Err(corrupt("a second header".to_owned())),
                Line::Message { message } => messages.push(message),
                Line::Turn { .. } => {}
            }
        }
        let header = header.ok_or_else(|| TranscriptError::Corrupt {
            path: path.clone(),
            line: 1,
            message: "the file does not begin with a header".to_owned(),
        })?;
        Ok((header, messages))
    }

    /// Open a transcript to continue it: its header, its messages, and the file for appending.
    ///
    /// # Errors
    /// When the id names no transcript or the file is not a transcript.
    pub fn resume(&self, id: &str) -> Result<(Transcript, Vec<Message>), TranscriptError> {
        let id = self.resolve(id)?;
        self.ensure_directory()?;
        let (header, messages) = self.read(&id)?;
        let path = self.path_of(&id);
        let file = fs_err::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        let written = file.metadata()?.len();
        Ok((
            Transcript {
                header,
                path,
                file: Some(file),
                held: Vec::new(),
                written,
                limit: MAX_TRANSCRIPT_BYTES,
            },
            messages,
        ))
    }

    /// Every conversation, oldest first. Files that are not transcripts are skipped.
    ///
    /// # Errors
    /// When the folder cannot be read (a missing folder is an empty list).
    pub fn list(&self) -> Result<Vec<TranscriptSummary>, TranscriptError> {
        if !self.directory.exists() {
            return Ok(Vec::new());
        }
        let mut summaries = Vec::new();
        for id in self.ids()? {
            let Ok((header, messages)) = self.read(&id) else {
                continue;
            };
            let first_prompt = messages
                .iter()
                .find_map(|message| match message {
                    Message::User { content } => Some(content.lines().next().unwrap_or_default()),
                    _ => None,
                })
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect();
            summaries.push(TranscriptSummary {
                header,
                messages: messages.len(),
                first_prompt,
            });
        }
        Ok(summaries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_is_written_and_resumed() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path().join("transcripts"));
        let mut transcript = store
            .create(WireFormat::Chat, "m", "http://127.0.0.1:1/v1")
            .expect("create");
        transcript.append(&Message::user("hello")).expect("append");
        transcript
            .append(&Message::assistant("hi"))
            .expect("append");
        transcript
            .record_turn(TurnEnd::Answered, 1, Usage::default())
            .expect("turn");
        let id = transcript.header().id.clone();
        let mode = std::fs::metadata(transcript.path())
            .map(|metadata| std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()))
            .expect("metadata");
        assert_eq!(mode & 0o777, 0o600);
        drop(transcript);
        let (resumed, messages) = store.resume(&id[..8]).expect("resume by prefix");
        assert_eq!(resumed.header().id, id);
        assert_eq!(
            messages,
            vec![Message::user("hello"), Message::assistant("hi")]
        );
        assert_eq!(store.list().expect("list")[0].first_prompt, "hello");
    }

    #[test]
    fn an_open_folder_is_made_private() {
        let folder = tempfile::tempdir().expect("temp");
        let transcripts = folder.path().join("transcripts");
        fs_err::create_dir(&transcripts).expect("folder");
        fs_err::set_permissions(&transcripts, std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        TranscriptStore::new(&transcripts)
            .create(WireFormat::Chat, "m", "u")
            .expect("create");
        let mode = fs_err::metadata(&transcripts).expect("metadata").mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn ids_are_never_paths() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path());
        for id in [
            "../etc/passwd",
            "/etc/passwd",
            "",
            "a/b",
            "0123456789abcdef0123456789abcdef0",
        ] {
            assert!(
                matches!(store.resume(id), Err(TranscriptError::BadId { .. })),
                "{id}"
            );
        }
    }

    #[test]
    fn a_corrupt_line_is_named() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path());
        let transcript = store.create(WireFormat::Chat, "m", "u").expect("create");
        let id = transcript.header().id.clone();
        drop(transcript);
        let path = folder.path().join(format!("{id}.jsonl"));
        let mut text = fs_err::read_to_string(&path).expect("read");
        text.push_str("{\"type\":\"message\",\"message\":{\"role\":\"robot\"}}\n");
        std::fs::write(&path, text).expect("write");
        let error = store.resume(&id).expect_err("corrupt");
        assert!(
            error.to_string().contains(":2: not a transcript line"),
            "{error}"
        );
    }

    #[test]
    fn a_begun_transcript_is_made_when_the_model_first_answers() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path().join("transcripts"));
        let mut transcript = store.begin(WireFormat::Chat, "m", "u").expect("begin");
        transcript.append(&Message::user("hello")).expect("held");
        transcript
            .record_turn(TurnEnd::Failed, 1, Usage::default())
            .expect("nothing to record");
        assert!(!transcript.is_written());
        assert!(!transcript.path().exists());
        assert_eq!(store.list().expect("list"), Vec::new());
        transcript
            .append(&Message::assistant("hi"))
            .expect("append");
        assert!(transcript.is_written());
        let (_, messages) = store.resume(&transcript.header().id).expect("resume");
        assert_eq!(
            messages,
            vec![Message::user("hello"), Message::assistant("hi")]
        );
    }

    #[test]
    fn a_line_too_long_is_saved_with_its_payloads_cut() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path());
        let mut transcript = store.create(WireFormat::Chat, "m", "u").expect("create");
        // Control characters take six bytes each as JSON.
        let text = "\u{1}".repeat(MAX_HISTORY_BYTES / 4);
        transcript.append(&Message::user(text)).expect("append");
        let saved = fs_err::read_to_string(transcript.path()).expect("read");
        let line = saved.lines().nth(1).expect("the message");
        assert!(line.len() <= MAX_TRANSCRIPT_LINE_BYTES, "{}", line.len());
        assert!(
            line.contains("[skillbox: 2.0 MiB of text cut to keep the conversation within its bound of 8.0 MiB]"),
            "{line}"
        );
    }

    #[test]
    fn a_full_transcript_takes_no_more_lines() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path());
        let mut transcript = store.create(WireFormat::Chat, "m", "u").expect("create");
        transcript.limit = transcript.written + 200;
        transcript
            .append(&Message::user("a".repeat(100)))
            .expect("fits");
        let error = transcript
            .append(&Message::user("b".repeat(100)))
            .expect_err("full");
        assert!(
            error
                .to_string()
                .contains("reached the bound of a transcript"),
            "{error}"
        );
        let saved = fs_err::metadata(transcript.path()).expect("metadata").len();
        assert!(saved <= transcript.limit, "{saved}");
    }

    #[test]
    fn a_file_larger_than_a_transcript_is_not_resumed() {
        let folder = tempfile::tempdir().expect("temp");
        let store = TranscriptStore::new(folder.path());
        let transcript = store.create(WireFormat::Chat, "m", "u").expect("create");
        let id = transcript.header().id.clone();
        let path = transcript.path().to_path_buf();
        drop(transcript);
        fs_err::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open")
            .set_len(MAX_TRANSCRIPT_BYTES + 1)
            .expect("grow");
        let error = store.resume(&id).expect_err("too large");
        assert_eq!(
            error.to_string(),
            format!(
                "{} holds 67108865 bytes, more than a transcript may (67108864 bytes); it is not resumed",
                path.display()
            )
        );
    }
}
