//! Reading a child's output with a byte cap: the first `cap` bytes are kept, the rest is read
//! and thrown away (so the child never blocks on a full pipe) and counted.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Marker appended to output cut at the cap.
pub const TRUNCATION_MARKER: &str = "[output truncated]";

/// Output kept from one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    /// The first bytes, up to the cap.
    pub bytes: Vec<u8>,
    /// Every byte the stream produced.
    pub total_bytes: u64,
}

impl CapturedOutput {
    /// Whether bytes were thrown away.
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.total_bytes > self.bytes.len() as u64
    }

    /// The kept bytes as text (invalid UTF-8 replaced), with the truncation marker when cut.
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.truncated() {
            if !text.ends_with('\n') && !text.is_empty() {
                text.push('\n');
            }
            text.push_str(TRUNCATION_MARKER);
        }
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

/// Read a stream to its end, keeping at most `cap` bytes and forwarding every chunk to `live`.
pub async fn capture<R: AsyncRead + Unpin>(
    mut reader: R,
    cap: usize,
    live: Option<(StreamKind, OutputSender)>,
) -> CapturedOutput {
    let mut captured = CapturedOutput {
        bytes: Vec::with_capacity(cap.min(64 * 1024)),
        total_bytes: 0,
    };
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
                captured.bytes.extend_from_slice(&buffer[..read.min(room)]);
            }
        }
    }
    captured
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_head_and_counts_the_rest() {
        let data = vec![b'x'; 100_000];
        let captured = capture(&data[..], 1000, None).await;
        assert_eq!(captured.bytes.len(), 1000);
        assert_eq!(captured.total_bytes, 100_000);
        assert!(captured.text().ends_with("\n[output truncated]"));
    }

    #[tokio::test]
    async fn replaces_invalid_utf8() {
        let captured = capture(&b"ok \xff\xfe end"[..], 1000, None).await;
        assert_eq!(captured.text(), "ok \u{fffd}\u{fffd} end");
    }
}
