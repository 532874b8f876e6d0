//! Reading a child's output with a byte cap: the first `cap` bytes are kept (and, when asked,
//! the last few), the rest is read and thrown away (so the child never blocks on a full pipe)
//! and counted.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Marker appended to output cut at the cap.
pub const TRUNCATION_MARKER: &str = "[output truncated]";

/// Output kept from one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    /// The first bytes, up to the cap.
    pub bytes: Vec<u8>,
    /// The last bytes after those, when a tail was asked for.
    pub tail: Vec<u8>,
    /// Every byte the stream produced.
    pub total_bytes: u64,
}

impl CapturedOutput {
    /// Whether bytes were thrown away.
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.total_bytes > (self.bytes.len() + self.tail.len()) as u64
    }

    /// The kept bytes as text (invalid UTF-8 replaced), with the truncation marker when cut.
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.truncated() {
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            if self.tail.is_empty() {
                text.push_str(TRUNCATION_MARKER);
            } else {
                let omitted = self.total_bytes - (self.bytes.len() + self.tail.len()) as u64;
                text.push_str(&format!("[{omitted} bytes of output omitted]\n"));
            }
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }
}

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Where live output chunks go (for a person watching), besides the capped capture.
pub type OutputSender = tokio::sync::mpsc::UnboundedSender<(StreamKind, Vec<u8>)>;

/// Read a stream to its end, keeping its first `cap` bytes and its last `tail_cap` bytes after
/// those, and forwarding every chunk to `live`.
pub async fn capture<R: AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    tail_cap: usize,
    live: Option<(StreamKind, OutputSender)>,
) -> CapturedOutput {
    let mut captured = CapturedOutput {
        bytes: Vec::with_capacity(cap.min(64 * 1024)),
        tail: Vec::new(),
        total_bytes: 0,
    };
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => {
                if let Some((kind, sender)) = &live {
                    let _ = sender.send((*kind, buffer[..read].to_vec()));
                }
                captured.total_bytes += read as u64;
                let room = cap.saturating_sub(captured.bytes.len());
                let kept = read.min(room);
                captured.bytes.extend_from_slice(&buffer[..kept]);
                if tail_cap > 0 && kept < read {
                    let rest = &buffer[kept..read];
                    let rest = &rest[rest.len().saturating_sub(tail_cap)..];
                    tail.extend(rest);
                    let excess = tail.len().saturating_sub(tail_cap);
                    tail.drain(..excess);
                }
            }
        }
    }
    captured.tail = tail.into();
    captured
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_head_and_counts_the_rest() {
        let data = vec![b'x'; 100_000];
        let captured = capture(&data[..], 1000, 0, None).await;
        assert_eq!(captured.bytes.len(), 1000);
        assert_eq!(captured.total_bytes, 100_000);
        assert!(captured.text().ends_with("\n[output truncated]"));
    }

    #[tokio::test]
    async fn keeps_the_tail_when_asked() {
        let mut data = vec![b'a'; 10];
        data.extend(vec![b'b'; 1000]);
        data.extend(b"the end");
        let captured = capture(&data[..], 10, 7, None).await;
        assert_eq!(captured.bytes, b"aaaaaaaaaa");
        assert_eq!(captured.tail, b"the end");
        assert_eq!(
            captured.text(),
            "aaaaaaaaaa\n[1000 bytes of output omitted]\nthe end"
        );
        let short = capture(&b"short"[..], 3, 10, None).await;
        assert!(!short.truncated());
        assert_eq!(short.text(), "short");
    }

    #[tokio::test]
    async fn replaces_invalid_utf8() {
        let captured = capture(&b"ok \xff\xfe end"[..], 1000, 0, None).await;
        assert_eq!(captured.text(), "ok \u{fffd}\u{fffd} end");
    }
}
