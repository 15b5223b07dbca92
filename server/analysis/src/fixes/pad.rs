//! `PadSharedArray`: widen the last dimension of a `__shared__ T name[R][C]` declaration,
//! inside the kernel's body first, else at file scope.
//!
//! A literal last dimension equal to `from_row` becomes `to_row`; an expression (`TILE_DIM`)
//! becomes `TILE_DIM + 1` (the difference); a literal that is not `from_row` means the
//! analysis and the source disagree, and nothing is edited. One-dimensional arrays are not
//! edited: padding them changes no bank mapping without changing the indexing too.

use super::TextEdit;
use super::scan::{Source, is_ident};

pub(super) fn edits(src: &Source<'_>, kernel: &str, variable: &str, from_row: u32, to_row: u32) -> Vec<TextEdit> {
    if to_row <= from_row {
        return Vec::new();
    }
    let bodies: Vec<(usize, usize)> = src.kernel_decls(kernel).into_iter().filter_map(|d| d.body).collect();
    let ranges = bodies.into_iter().chain(std::iter::once((0, src.len())));
    for range in ranges {
        for pos in src.idents(variable, range) {
            if let Some(e) = edit_at(src, pos, variable, from_row, to_row) {
                return vec![e];
            }
        }
    }
    Vec::new()
}

fn edit_at(src: &Source<'_>, pos: usize, variable: &str, from_row: u32, to_row: u32) -> Option<TextEdit> {
    let stmt = src.statement_start(pos);
    if src.idents("__shared__", (stmt, pos)).is_empty() || !src.idents("extern", (stmt, pos)).is_empty() {
        return None;
    }
    let mut dims = Vec::new();
    let mut i = src.skip_ws(pos + variable.len());
    while src.at(i) == b'[' {
        let close = src.matching(i)?;
        dims.push(src.trim((i + 1, close)));
        i = src.skip_ws(close + 1);
    }
    if dims.len() < 2 {
        return None;
    }
    let last = *dims.last()?;
    let text = src.code_str(last);
    if text.bytes().all(|b| b.is_ascii_digit()) {
        let n: u32 = text.parse().ok()?;
        return (n == from_row).then(|| TextEdit { start: last.0, end: last.1, new_text: to_row.to_string() });
    }
    let simple = text.bytes().all(is_ident);
    let expr = if simple { text.to_string() } else { format!("({text})") };
    Some(TextEdit { start: last.0, end: last.1, new_text: format!("{expr} + {}", to_row - from_row) })
}

#[cfg(test)]
mod tests {
    use super::super::{FixKind, apply, edits};

    fn pad(var: &str) -> FixKind {
        FixKind::PadSharedArray { variable: var.into(), from_row: 32, to_row: 33 }
    }

    #[test]
    fn literal_and_macro_rows_are_padded() {
        let t = "__global__ void k() {\n  __shared__ float tile[32][32];\n}\n";
        assert_eq!(apply(t, &edits(&pad("tile"), t, "k", None)), t.replace("[32][32]", "[32][33]"));
        let t = "#define T 32\n__global__ void k() {\n  __shared__ float tile[T][T];\n}\n";
        assert_eq!(apply(t, &edits(&pad("tile"), t, "k", None)), t.replace("[T][T]", "[T][T + 1]"));
        let t = "__global__ void k() { __shared__ float tile[T][2 * H]; }";
        assert_eq!(apply(t, &edits(&pad("tile"), t, "k", None)), t.replace("[2 * H]", "[(2 * H) + 1]"));
    }

    #[test]
    fn the_kernels_own_array_is_chosen_and_mismatches_are_left_alone() {
        let t = "__global__ void a() { __shared__ float tile[32][32]; }\n__global__ void k() { __shared__ float tile[32][32]; }\n";
        let e = edits(&pad("tile"), t, "k", None);
        assert_eq!(e.len(), 1);
        assert!(e[0].start > t.find("void k").unwrap_or(0));
        let t = "__global__ void k() { __shared__ float tile[32][64]; __shared__ float s[256]; }";
        assert!(edits(&pad("tile"), t, "k", None).is_empty());
        assert!(edits(&pad("s"), t, "k", None).is_empty());
        let t = "__global__ void k() { extern __shared__ float tile[][32]; /* tile[32][32] */ }";
        assert!(edits(&pad("tile"), t, "k", None).is_empty());
    }
}
