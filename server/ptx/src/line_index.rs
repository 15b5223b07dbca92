//! Conversion between byte offsets and line/column positions.
//!
//! Diagnostics carry byte [`Span`](crate::Span)s; editors and the CLI want lines and
//! columns. The index stores the offset of every line start once (one pass over the text,
//! `\n` line breaks; a `\r` before `\n` stays part of the previous line, which is what
//! LSP clients expect), so each conversion is a binary search. Columns are UTF-8 byte
//! offsets within the line, like rust-analyzer's `line-index` crate; [`LineIndex::to_utf16`]
//! converts for LSP clients that negotiate UTF-16 positions.

/// A 0-based line and 0-based UTF-8 byte column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// Line starts of one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = Vec::with_capacity(text.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex {
            line_starts,
            len: text.len() as u32,
        }
    }

    /// Number of lines (a text ending in `\n` has an empty last line).
    pub fn len_lines(&self) -> u32 {
        self.line_starts.len() as u32
    }

    /// The line and column of a byte offset; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = offset.min(self.len);
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        LineCol {
            line: line as u32,
            col: offset - self.line_starts[line],
        }
    }

    /// The 1-based line number of a byte offset (for messages like `file.ptx:12`).
    pub fn line_number(&self, offset: u32) -> u32 {
        self.line_col(offset).line + 1
    }

    /// The byte offset of a line/column, or `None` when the line does not exist or the
    /// column runs past the end of the line (its `\n` included).
    pub fn offset(&self, lc: LineCol) -> Option<u32> {
        let start = *self.line_starts.get(lc.line as usize)?;
        let next = self
            .line_starts
            .get(lc.line as usize + 1)
            .copied()
            .unwrap_or(self.len);
        let offset = start.checked_add(lc.col)?;
        (offset <= next).then_some(offset)
    }

    /// The byte range of a line, without its `\n`.
    pub fn line_range(&self, line: u32) -> Option<std::ops::Range<u32>> {
        let start = *self.line_starts.get(line as usize)?;
        let end = match self.line_starts.get(line as usize + 1) {
            Some(next) => next - 1,
            None => self.len,
        };
        Some(start..end)
    }

    /// Converts a UTF-8 column to a UTF-16 column on the same line of `text` (the text
    /// this index was built from). A column inside a character counts up to its start.
    pub fn to_utf16(&self, text: &str, lc: LineCol) -> LineCol {
        let Some(range) = self.line_range(lc.line) else {
            return lc;
        };
        let line = text
            .get(range.start as usize..range.end as usize)
            .unwrap_or("");
        let mut col16 = 0u32;
        for (i, ch) in line.char_indices() {
            if i as u32 + ch.len_utf8() as u32 > lc.col {
                break;
            }
            col16 += ch.len_utf16() as u32;
        }
        LineCol {
            line: lc.line,
            col: col16,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_offsets() {
        let text = "ab\ncde\n\nf";
        let idx = LineIndex::new(text);
        assert_eq!(idx.len_lines(), 4);
        let cases = [
            (0, 0, 0),
            (2, 0, 2),
            (3, 1, 0),
            (5, 1, 2),
            (7, 2, 0),
            (8, 3, 0),
            (9, 3, 1),
        ];
        for (off, line, col) in cases {
            assert_eq!(idx.line_col(off), LineCol { line, col }, "offset {off}");
            assert_eq!(idx.offset(LineCol { line, col }), Some(off));
        }
        assert_eq!(idx.line_number(3), 2);
        assert_eq!(idx.line_col(100), LineCol { line: 3, col: 1 });
        assert_eq!(idx.offset(LineCol { line: 4, col: 0 }), None);
        assert_eq!(idx.offset(LineCol { line: 0, col: 4 }), None);
        assert_eq!(idx.line_range(1), Some(3..6));
    }

    #[test]
    fn utf16_columns() {
        let text = "// é漢😀x\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap_or_default() as u32;
        let lc = idx.line_col(x);
        assert_eq!(lc, LineCol { line: 0, col: 12 });
        // "// " 3 + é 1 + 漢 1 + 😀 2 = 7 UTF-16 units.
        assert_eq!(idx.to_utf16(text, lc), LineCol { line: 0, col: 7 });
    }
}
