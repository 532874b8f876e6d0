//! Notes on the entries of a run's `out/` that were not collected, bounded in lines and in the
//! entries the walk looks at.

/// Most entries of a run's `out/` (files, folders, links alike) the output copy looks at. Empty
/// files and folders cost a run next to nothing of its size limit, so without this bound the
/// copy (as root) and the runtime would list, mirror and report any number of them.
pub const MAX_OUTPUT_ENTRIES: usize = 10_000;
/// Most lines of notes about `out/` entries that were not collected; the rest are counted.
pub const MAX_OUTPUT_NOTES: usize = 100;

/// Why `out/` entries were not collected: at most [`MAX_OUTPUT_NOTES`] lines, the rest counted,
/// and whether the walk stopped at [`MAX_OUTPUT_ENTRIES`].
#[derive(Debug, Default)]
pub struct OutputNotes {
    lines: Vec<String>,
    unlisted: usize,
    entries: usize,
    stopped: bool,
}

impl OutputNotes {
    /// Note one entry that was not collected.
    pub fn push(&mut self, line: String) {
        if self.lines.len() < MAX_OUTPUT_NOTES {
            self.lines.push(line);
        } else {
            self.unlisted += 1;
        }
    }

    /// Count one more entry looked at; `false` once [`MAX_OUTPUT_ENTRIES`] were (the walk then
    /// stops).
    pub fn look_at_one_more(&mut self) -> bool {
        if self.entries >= MAX_OUTPUT_ENTRIES {
            self.stopped = true;
            return false;
        }
        self.entries += 1;
        true
    }

    /// Whether the walk stopped at the entry limit.
    #[must_use]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The lines, with one line for the uncounted rest and one when the walk stopped.
    #[must_use]
    pub fn into_lines(self) -> Vec<String> {
        let mut lines = self.lines;
        if self.unlisted > 0 {
            lines.push(format!(
                "out/: {} more entries not collected (not listed one by one)",
                self.unlisted
            ));
        }
        if self.stopped {
            lines.push(format!(
                "out/: more than {MAX_OUTPUT_ENTRIES} entries; the rest were not looked at"
            ));
        }
        lines
    }
}
