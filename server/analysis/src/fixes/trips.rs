//! `StateTripCount`: insert a `// warpsight: trips=N` line above a loop, with the loop's
//! indentation. The CUDA front end gives such a comment to the loop whose keyword is the
//! next code after it (`cuda_frontend::launch::LoopAnnotation`), so the line goes right
//! before the loop's `for`, `while` or `do`.
//!
//! The loop is found from the line of its `.loc` (nvcc's back-edge branch): the keyword's
//! own line for most loops; the `} while (...)` line of a `do` loop, whose `do` is then
//! found through the braces; a line inside a `for (...)` head written over several lines,
//! whose keyword is a few lines above. A keyword that is not the first code on its line
//! (`if (c) for (...)`) gets no edit: the comment could not go right before it.

use super::TextEdit;
use super::scan::{Source, is_ident};

/// The loop keywords.
const KEYWORDS: [&str; 3] = ["for", "while", "do"];

/// How many lines above the `.loc` line a multi-line `for (...)` head may start.
const HEAD_LINES: u32 = 4;

pub(super) fn edits(src: &Source<'_>, line: u32, trips: u64) -> Vec<TextEdit> {
    let Some(at) = keyword_for(src, line) else { return Vec::new() };
    let line_start = src.text.as_bytes()[..at].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
    if src.skip_ws(line_start) != at {
        return Vec::new();
    }
    let indent = &src.text[line_start..at];
    vec![TextEdit { start: line_start, end: line_start, new_text: comment_line(indent, trips) }]
}

/// The line the fix inserts, in a `.cu` file and in PTX alike: the comment at the loop's
/// indentation, with its newline.
pub fn comment_line(indent: &str, trips: u64) -> String {
    format!("{indent}// warpsight: trips={trips}\n")
}

/// The offset of the keyword of the loop whose `.loc` is on `line`.
fn keyword_for(src: &Source<'_>, line: u32) -> Option<usize> {
    let (start, end) = line_range(src, line)?;
    if let Some((k, word)) = keywords_in(src, start, end).into_iter().next() {
        if word == "while" {
            // `} while (c);`: the loop is the `do { ... }` the brace closes.
            let before = src.skip_ws_back(k);
            if before > 0 && src.at(before - 1) == b'}' {
                let open = matching_back(src, before - 1)?;
                let d = src.skip_ws_back(open);
                return (d >= 2 && &src.code[d - 2..d] == b"do" && (d == 2 || !is_ident(src.at(d - 3)))).then_some(d - 2);
            }
        }
        return Some(k);
    }
    // A line inside a `for (...)` or `while (...)` head that starts a few lines above.
    for above in (line.saturating_sub(HEAD_LINES).max(1)..line).rev() {
        let (s, e) = line_range(src, above)?;
        for (k, word) in keywords_in(src, s, e).into_iter().rev() {
            if word == "do" {
                continue;
            }
            let open = src.skip_ws(k + word.len());
            if src.at(open) == b'(' && src.matching(open).is_some_and(|close| close >= start) {
                return Some(k);
            }
        }
    }
    None
}

/// The byte range of 1-based `line` (its newline excluded).
fn line_range(src: &Source<'_>, line: u32) -> Option<(usize, usize)> {
    let start = src.offset_of(line, 1)?;
    if start >= src.len() && line > 1 {
        return None;
    }
    let end = src.text.as_bytes()[start..].iter().position(|b| *b == b'\n').map_or(src.len(), |p| start + p);
    Some((start, end))
}

/// The loop keywords in `start..end` of the masked text, in order.
fn keywords_in(src: &Source<'_>, start: usize, end: usize) -> Vec<(usize, &'static str)> {
    let mut found: Vec<(usize, &'static str)> = KEYWORDS.iter().flat_map(|w| src.idents(w, (start, end)).into_iter().map(move |k| (k, *w))).collect();
    found.sort_unstable();
    found
}

/// The `{` that the `}` at `close` closes, scanning back.
fn matching_back(src: &Source<'_>, close: usize) -> Option<usize> {
    let mut depth = 0i64;
    for i in (0..=close).rev() {
        match src.at(i) {
            b'}' => depth += 1,
            b'{' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::{FixKind, apply, edits};

    fn fix(line: u32) -> FixKind {
        FixKind::StateTripCount { source_line: Some(line), ptx_line: 1, trips: 16 }
    }

    #[test]
    fn the_comment_goes_above_the_loop_keyword() {
        let t = "__global__ void k(int *a) {\n    while (a[0] > 0) // the test\n        a[0]--;\n}\n";
        assert_eq!(apply(t, &edits(&fix(2), t, "k", None)), "__global__ void k(int *a) {\n    // warpsight: trips=16\n    while (a[0] > 0) // the test\n        a[0]--;\n}\n");
        // A `for` head over three lines, its `.loc` on the condition's line.
        let t = "void k(int *a) {\n\tfor (int i = 0;\n\t     a[i] != 0;\n\t     ++i)\n\t\ta[i] = 1;\n}\n";
        assert_eq!(apply(t, &edits(&fix(3), t, "k", None)), "void k(int *a) {\n\t// warpsight: trips=16\n\tfor (int i = 0;\n\t     a[i] != 0;\n\t     ++i)\n\t\ta[i] = 1;\n}\n");
    }

    #[test]
    fn a_do_loop_gets_the_comment_above_its_do() {
        let t = "void k(int *a) {\n  do {\n    a[0]--;\n    { a[1]++; }\n  } while (a[0] > 0);\n}\n";
        assert_eq!(apply(t, &edits(&fix(5), t, "k", None)), "void k(int *a) {\n  // warpsight: trips=16\n  do {\n    a[0]--;\n    { a[1]++; }\n  } while (a[0] > 0);\n}\n");
    }

    #[test]
    fn no_edit_where_the_comment_could_not_name_the_loop() {
        // Not the first code on its line, no loop near, a loop keyword in a comment.
        for (t, line) in [
            ("void k(int *a) {\n  if (a[0]) for (;;) a[0]--;\n}\n", 2),
            ("void k(int *a) {\n  a[0] = 1;\n}\n", 2),
            ("void k(int *a) {\n  a[0] = 1; // for each\n}\n", 2),
            ("void k() {}\n", 9),
        ] {
            assert!(edits(&fix(line), t, "k", None).is_empty(), "{t}");
        }
        let ptx_only = FixKind::StateTripCount { source_line: None, ptx_line: 3, trips: 16 };
        assert!(edits(&ptx_only, "for (;;) {}\n", "k", None).is_empty());
    }
}
