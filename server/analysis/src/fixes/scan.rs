//! A small scanner for CUDA C++ source, just enough for the fix builders: a masked copy
//! of the text in which comments, string and character literals and preprocessor lines
//! are blanked (byte for byte, newlines kept, so offsets are the original ones), and
//! helpers to find identifiers, matching brackets, statements and kernel declarations.
//!
//! Why not the CUDA front end's lexer: the analysis crate must not depend on the IO crate
//! (`cuda-frontend` runs compilers), and the fixes need only offsets, not tokens.

/// A source text and its masked copy.
pub(crate) struct Source<'a> {
    pub text: &'a str,
    /// Same length as `text`; blanked bytes are spaces, newlines are kept.
    pub code: Vec<u8>,
}

/// One `__global__` declaration or definition of a kernel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KernelDecl {
    /// Start of the declaration statement (after the previous `;`, `{` or `}`).
    pub stmt_start: usize,
    /// Offset of the kernel name.
    pub name_pos: usize,
    /// Offsets of the parameter list's `(` and `)`.
    pub params: (usize, usize),
    /// Offsets of the body's `{` and `}` for a definition.
    pub body: Option<(usize, usize)>,
}

pub(crate) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Source<'a> {
        Source { text, code: mask(text) }
    }

    pub fn len(&self) -> usize {
        self.code.len()
    }

    pub fn at(&self, i: usize) -> u8 {
        self.code.get(i).copied().unwrap_or(0)
    }

    /// The first non-whitespace offset at or after `i` (in the masked text, so comments
    /// are skipped too).
    pub fn skip_ws(&self, mut i: usize) -> usize {
        while i < self.len() && self.at(i).is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// The last non-whitespace offset before `i`, plus one.
    pub fn skip_ws_back(&self, mut i: usize) -> usize {
        while i > 0 && self.at(i - 1).is_ascii_whitespace() {
            i -= 1;
        }
        i
    }

    /// Offsets of the whole-word occurrences of identifier `name` in `range`.
    pub fn idents(&self, name: &str, range: (usize, usize)) -> Vec<usize> {
        let n = name.as_bytes();
        let (start, end) = (range.0.min(self.len()), range.1.min(self.len()));
        let mut res = Vec::new();
        if n.is_empty() || end < start + n.len() {
            return res;
        }
        let mut i = start;
        while i + n.len() <= end {
            if &self.code[i..i + n.len()] == n
                && (i == 0 || !is_ident(self.at(i - 1)))
                && !is_ident(self.at(i + n.len()))
            {
                res.push(i);
                i += n.len();
            } else {
                i += 1;
            }
        }
        res
    }

    /// The offset of the bracket matching the one at `open` (`(`, `[`, `{` or `<` for a
    /// template argument list), counting only brackets of the same kind.
    pub fn matching(&self, open: usize) -> Option<usize> {
        let (o, c) = match self.at(open) {
            b'(' => (b'(', b')'),
            b'[' => (b'[', b']'),
            b'{' => (b'{', b'}'),
            b'<' => (b'<', b'>'),
            _ => return None,
        };
        let mut depth = 0i64;
        for i in open..self.len() {
            let b = self.at(i);
            if b == o {
                depth += 1;
            } else if b == c {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
        None
    }

    /// The start of the statement containing `pos`: just after the previous `;`, `{` or
    /// `}` (blanked comments and preprocessor lines do not count).
    pub fn statement_start(&self, pos: usize) -> usize {
        let mut i = pos.min(self.len());
        while i > 0 {
            if matches!(self.at(i - 1), b';' | b'{' | b'}') {
                return i;
            }
            i -= 1;
        }
        0
    }

    /// Splits `range` at top-level commas (outside `()`, `[]`, `{}`), returning the
    /// trimmed ranges of the parts.
    pub fn split_commas(&self, range: (usize, usize)) -> Vec<(usize, usize)> {
        let mut parts = Vec::new();
        let mut depth = 0i64;
        let mut start = range.0;
        for i in range.0..range.1.min(self.len()) {
            match self.at(i) {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    parts.push(self.trim((start, i)));
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(self.trim((start, range.1.min(self.len()))));
        parts
    }

    /// `range` without leading and trailing whitespace.
    pub fn trim(&self, range: (usize, usize)) -> (usize, usize) {
        let s = self.skip_ws(range.0).min(range.1);
        let e = self.skip_ws_back(range.1).max(s);
        (s, e)
    }

    /// The masked text of a range (for tests of shape, not for output).
    pub fn code_str(&self, range: (usize, usize)) -> &str {
        std::str::from_utf8(self.code.get(range.0..range.1).unwrap_or(&[])).unwrap_or("")
    }

    /// The byte offset of 1-based `line`, `column` (columns in bytes).
    pub fn offset_of(&self, line: u32, column: u32) -> Option<usize> {
        let mut cur = 1u32;
        let mut start = 0usize;
        if line == 0 {
            return None;
        }
        while cur < line {
            let nl = self.text.as_bytes().get(start..)?.iter().position(|b| *b == b'\n')?;
            start += nl + 1;
            cur += 1;
        }
        Some((start + column.saturating_sub(1) as usize).min(self.len()))
    }

    /// Every `__global__` declaration and definition of kernel `name`, in text order.
    pub fn kernel_decls(&self, name: &str) -> Vec<KernelDecl> {
        let mut res = Vec::new();
        for name_pos in self.idents(name, (0, self.len())) {
            let open = self.skip_ws(name_pos + name.len());
            if self.at(open) != b'(' {
                continue;
            }
            let stmt_start = self.statement_start(name_pos);
            if self.idents("__global__", (stmt_start, name_pos)).is_empty() {
                continue;
            }
            let Some(close) = self.matching(open) else { continue };
            let after = self.skip_ws(close + 1);
            let body = (self.at(after) == b'{').then(|| self.matching(after).map(|c| (after, c))).flatten();
            res.push(KernelDecl { stmt_start, name_pos, params: (open, close), body });
        }
        res
    }
}

/// Blanks comments, string and character literals and preprocessor lines.
pub(crate) fn mask(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in out.iter_mut().take(to).skip(from) {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if line_start && c == b'#' {
            // A preprocessor line, with backslash continuations.
            let mut j = i;
            while j < b.len() {
                if b[j] == b'\n' && (j == 0 || b[j - 1] != b'\\') {
                    break;
                }
                j += 1;
            }
            blank(&mut out, i, j);
            i = j;
            continue;
        }
        if !c.is_ascii_whitespace() {
            line_start = false;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let j = b[i..].iter().position(|x| *x == b'\n').map_or(b.len(), |p| i + p);
            blank(&mut out, i, j);
            i = j;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let j = b[i + 2..].windows(2).position(|w| w == b"*/").map_or(b.len(), |p| i + 2 + p + 2);
            blank(&mut out, i, j);
            i = j;
        } else if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            while j < b.len() && b[j] != c && b[j] != b'\n' {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, i, end);
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_strings_and_directives_are_blanked_in_place() {
        let t = "#define A 1\nint a; // x<<<\n/* __shared__ */ char *s = \"<<<\"; char c = '\\'';\n";
        let m = mask(t);
        assert_eq!(m.len(), t.len());
        let s = String::from_utf8(m).expect("ascii");
        assert!(!s.contains("define") && !s.contains("<<<") && !s.contains("__shared__"), "{s}");
        assert!(s.contains("int a;") && s.contains("char *s =") && s.contains("char c ="), "{s}");
        assert_eq!(s.matches('\n').count(), 3);
    }

    #[test]
    fn a_string_literal_is_blanked_up_to_its_closing_quote() {
        // A launch written inside a string is text, not a launch: all of it is blanked,
        // not only the first characters after the quote (mutation survivors: the `<` of
        // the scanner's bound → `==`, `>`, `<=`).
        let literal = "\"launch k<<<1, 32>>> now\"";
        let t = format!("printf({literal}); k<<<1, 256>>>(a);");
        let s = String::from_utf8(mask(&t)).expect("ascii");
        assert_eq!(s, format!("printf({}); k<<<1, 256>>>(a);", " ".repeat(literal.len())));
        // A literal left open at the end of the text is blanked to the end.
        let t = "int a; char *s = \"abc";
        assert_eq!(mask(t), b"int a; char *s =     ".to_vec());
    }

    #[test]
    fn kernel_declarations_and_definitions_are_found() {
        let t = "__global__ void k(int *a);\nvoid host() { k<<<1, 2>>>(0); }\ntemplate <int N>\n__global__ void __launch_bounds__(128) k(int *a) { a[0] = N; }\n";
        let s = Source::new(t);
        let d = s.kernel_decls("k");
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].body.is_none());
        assert!(d[1].body.is_some());
        assert_eq!(s.code_str((d[1].stmt_start, d[1].name_pos)).trim(), "template <int N>\n__global__ void __launch_bounds__(128)");
        assert_eq!(s.offset_of(2, 15), t.find("k<<<"));
    }

    #[test]
    fn commas_split_at_the_top_level_only() {
        let t = "f(a, g(b, c), d[1, 2], {3, 4})";
        let s = Source::new(t);
        let parts = s.split_commas((2, t.len() - 1));
        let texts: Vec<&str> = parts.iter().map(|r| &t[r.0..r.1]).collect();
        assert_eq!(texts, vec!["a", "g(b, c)", "d[1, 2]", "{3, 4}"]);
    }
}
