//! Open documents: text in a rope, the client's version, and conversions between LSP
//! positions and byte offsets in the negotiated position encoding.
//!
//! LSP 3.17 §"Text Documents / Position": a position's `character` counts code units of the
//! negotiated `positionEncoding` (UTF-16 unless both sides agreed on UTF-8), and "if the
//! character value is greater than the line length it defaults back to the line length".
//! We clamp both the line and the character that way, so an out-of-range position from a
//! client never panics and never corrupts the text.

use ropey::Rope;

/// The encoding `Position.character` is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionEncoding {
    Utf8,
    Utf16,
}

/// A zero-based (line, character) pair in the negotiated encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub character: u32,
}

#[derive(Debug, Clone)]
pub struct Document {
    pub text: Rope,
    pub version: i32,
    pub language_id: String,
}

impl Document {
    pub fn new(text: &str, version: i32, language_id: String) -> Document {
        Document { text: Rope::from_str(text), version, language_id }
    }

    /// Applies one content change: the whole text when `range` is `None`, else the
    /// replacement of `range`. Changes of one `didChange` must be applied in order
    /// (LSP: "the changes describe single state changes to the document").
    pub fn apply_change(&mut self, range: Option<(LineCol, LineCol)>, new_text: &str, enc: PositionEncoding) {
        match range {
            None => self.text = Rope::from_str(new_text),
            Some((start, end)) => {
                let start = self.char_idx(start, enc);
                let end = self.char_idx(end, enc).max(start);
                self.text.remove(start..end);
                self.text.insert(start, new_text);
            }
        }
    }

    /// The char index (ropey's unit) of an LSP position, clamped to the document.
    pub fn char_idx(&self, pos: LineCol, enc: PositionEncoding) -> usize {
        let n_lines = self.text.len_lines();
        let line = pos.line as usize;
        if line >= n_lines {
            return self.text.len_chars();
        }
        let line_start = self.text.line_to_char(line);
        let line_slice = self.text.line(line);
        // The line's content without its terminator: a character past the end clamps to
        // the end of the line, not into the next one.
        let mut len = line_slice.len_chars();
        while len > 0 {
            let c = line_slice.char(len - 1);
            if c == '\n' || c == '\r' {
                len -= 1;
            } else {
                break;
            }
        }
        let mut units = 0usize;
        let target = pos.character as usize;
        for (i, c) in line_slice.chars().take(len).enumerate() {
            if units >= target {
                return line_start + i;
            }
            units += match enc {
                PositionEncoding::Utf8 => c.len_utf8(),
                PositionEncoding::Utf16 => c.len_utf16(),
            };
        }
        line_start + len
    }

    /// The byte offset of an LSP position, clamped to the document.
    pub fn offset(&self, pos: LineCol, enc: PositionEncoding) -> usize {
        self.text.char_to_byte(self.char_idx(pos, enc))
    }

    /// The LSP position of a byte offset (clamped to the document).
    pub fn position(&self, offset: usize, enc: PositionEncoding) -> LineCol {
        let offset = offset.min(self.text.len_bytes());
        let char_idx = self.text.byte_to_char(offset);
        let line = self.text.char_to_line(char_idx);
        let line_start = self.text.line_to_char(line);
        let character: usize = match enc {
            PositionEncoding::Utf8 => offset - self.text.char_to_byte(line_start),
            PositionEncoding::Utf16 => {
                self.text.slice(line_start..char_idx).chars().map(char::len_utf16).sum()
            }
        };
        LineCol { line: line as u32, character: character as u32 }
    }

    /// The position of the start of a zero-based line (clamped).
    pub fn line_start(&self, line: u32) -> LineCol {
        LineCol { line: line.min(self.text.len_lines().saturating_sub(1) as u32), character: 0 }
    }

    /// The end of a zero-based line's content (before its terminator).
    pub fn line_end(&self, line: u32, enc: PositionEncoding) -> LineCol {
        self.position(self.offset(LineCol { line, character: u32::MAX }, enc), enc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lc(line: u32, character: u32) -> LineCol {
        LineCol { line, character }
    }

    #[test]
    fn incremental_edits_apply_in_order() {
        let mut doc = Document::new("add.s32 %r1, %r2, %r3;\nret;\n", 1, "ptx".into());
        doc.apply_change(Some((lc(0, 0), lc(0, 3))), "sub", PositionEncoding::Utf16);
        doc.apply_change(Some((lc(1, 0), lc(1, 0))), "exit;\n", PositionEncoding::Utf16);
        assert_eq!(doc.text.to_string(), "sub.s32 %r1, %r2, %r3;\nexit;\nret;\n");
    }

    #[test]
    fn utf16_and_utf8_columns_differ_after_non_ascii() {
        // "é" is 2 UTF-8 bytes and 1 UTF-16 unit; "𝓕" is 4 bytes and 2 UTF-16 units.
        let doc = Document::new("// é𝓕x\n", 1, "ptx".into());
        let x = "// é𝓕".len();
        assert_eq!(doc.offset(lc(0, 6), PositionEncoding::Utf16), x);
        assert_eq!(doc.offset(lc(0, 9), PositionEncoding::Utf8), x);
        assert_eq!(doc.position(x, PositionEncoding::Utf16), lc(0, 6));
        assert_eq!(doc.position(x, PositionEncoding::Utf8), lc(0, 9));
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let mut doc = Document::new("ab\ncd", 1, "ptx".into());
        assert_eq!(doc.offset(lc(0, 99), PositionEncoding::Utf16), 2);
        assert_eq!(doc.offset(lc(99, 0), PositionEncoding::Utf16), 5);
        // A range running past the end deletes to the end, never panics.
        doc.apply_change(Some((lc(1, 1), lc(7, 7))), "X", PositionEncoding::Utf16);
        assert_eq!(doc.text.to_string(), "ab\ncX");
        // A reversed range is treated as empty.
        doc.apply_change(Some((lc(1, 1), lc(0, 0))), "Y", PositionEncoding::Utf16);
        assert_eq!(doc.text.to_string(), "ab\ncYX");
    }

    #[test]
    fn crlf_line_ends_are_not_columns() {
        let doc = Document::new("ab\r\ncd", 1, "ptx".into());
        assert_eq!(doc.offset(lc(0, 5), PositionEncoding::Utf16), 2);
        assert_eq!(doc.line_end(0, PositionEncoding::Utf16), lc(0, 2));
    }
}
