//! `LaunchBounds`: add or adjust `__launch_bounds__(max_threads[, min_blocks])` on every
//! `__global__` declaration and definition of the kernel (a declaration and its
//! definition must agree).
//!
//! An existing `__launch_bounds__` keeps its first argument as written (often a macro
//! expression such as `WARPS_PER_BLOCK * 32`, which is what `max_threads` was read from
//! through the PTX `.maxntid`); only the minimum-blocks argument is set, replaced or
//! dropped.

use super::TextEdit;
use super::scan::Source;

pub(super) fn edits(src: &Source<'_>, name: &str, max_threads: u32, min_blocks: Option<u32>) -> Vec<TextEdit> {
    let args = match min_blocks {
        Some(b) => format!("{max_threads}, {b}"),
        None => max_threads.to_string(),
    };
    let mut res = Vec::new();
    for d in src.kernel_decls(name) {
        let existing = src.idents("__launch_bounds__", (d.stmt_start, d.name_pos)).into_iter().next();
        match existing {
            Some(p) => {
                let open = src.skip_ws(p + "__launch_bounds__".len());
                let Some(close) = (src.at(open) == b'(').then(|| src.matching(open)).flatten() else { continue };
                let parts = src.split_commas((open + 1, close));
                let first = parts.first().and_then(|r| src.text.get(r.0..r.1)).map(str::to_string).filter(|t| !t.is_empty()).unwrap_or_else(|| max_threads.to_string());
                let inner = match min_blocks {
                    Some(b) => format!("{first}, {b}"),
                    None => first,
                };
                res.push(TextEdit { start: open + 1, end: close, new_text: inner });
            }
            None => res.push(TextEdit { start: d.name_pos, end: d.name_pos, new_text: format!("__launch_bounds__({args}) ") }),
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::super::{FixKind, apply, edits};

    #[test]
    fn existing_bounds_are_adjusted_and_missing_ones_inserted() {
        let t = "__global__ void __launch_bounds__(256, 8)\n    k(float *a) {}\n";
        let f = FixKind::LaunchBounds { max_threads: 256, min_blocks: Some(4) };
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "__global__ void __launch_bounds__(256, 4)\n    k(float *a) {}\n");
        let f = FixKind::LaunchBounds { max_threads: 256, min_blocks: None };
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "__global__ void __launch_bounds__(256)\n    k(float *a) {}\n");
        let t = "__global__ void __launch_bounds__(W * 32, 4) k() {}";
        let f = FixKind::LaunchBounds { max_threads: 128, min_blocks: Some(9) };
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "__global__ void __launch_bounds__(W * 32, 9) k() {}");
        let t = "__global__ void k(float *a);\n// k(\n__global__ void k(float *a) { }\nvoid h() { k<<<1, 1>>>(0); }\n";
        let f = FixKind::LaunchBounds { max_threads: 128, min_blocks: Some(2) };
        let out = apply(t, &edits(&f, t, "k", None));
        assert_eq!(out.matches("__launch_bounds__(128, 2) k(float *a)").count(), 2, "{out}");
        assert!(out.contains("k<<<1, 1>>>"));
    }
}
