//! Fixes of performance findings, as data ([`Fix`], [`FixKind`]) and as pure text edits
//! on a CUDA source file ([`edits`]).
//!
//! Why text edits here and not in the language server: building them needs no LSP type
//! (byte ranges into the `.cu` text), and any client of the analysis gets the same edits
//! and can test them without an editor. The language server converts them to
//! `WorkspaceEdit`s; the command line applies none (it has no `--fix`).
//!
//! The builders read the source with a small scanner ([`scan`]) that blanks comments,
//! string and character literals and preprocessor lines, so that a `__shared__` in a
//! comment or a `<<<` in a string is never edited. They never guess: when the construct
//! a fix needs is not found (a 1-D shared array for `PadSharedArray`, a typedef'd pointer
//! for `RestrictConst`), they return no edit and the client shows no action.
//!
//! Every builder is tested on copies of the fixture sources (`tests/fixtures/cu`), and the
//! edited files are compiled with nvcc where it is installed
//! (`server/analysis/tests/findings_fixes.rs`).

mod annotation;
mod block_size;
mod launch_bounds;
mod pad;
mod restrict;
pub(crate) mod scan;
mod trips;

pub use trips::comment_line as trips_comment_line;

/// A code action of a finding: a title for the menu and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    pub kind: FixKind,
}

/// What a fix changes, independent of the text it is applied to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixKind {
    /// Launch with this block size (the occupancy-optimal size of
    /// `gpu_spec::occupancy::max_potential_block_size` for the kernel's registers and
    /// shared memory); `reason` says why, with the numbers.
    SetBlockSize { block: [u32; 3], reason: String },
    /// Add or adjust `__launch_bounds__(max_threads, min_blocks)` (for example to cap
    /// registers, or to relax a cap that causes spills); `None` drops the minimum.
    LaunchBounds { max_threads: u32, min_blocks: Option<u32> },
    /// Widen the rows of a 2-D (or higher) shared array, e.g. `tile[32][32]` →
    /// `tile[32][33]`. `variable` is the source name.
    PadSharedArray { variable: String, from_row: u32, to_row: u32 },
    /// Add `__restrict__`, and `const` for a read-only pointee, to pointer parameter
    /// `param_index` (0-based, in source order).
    RestrictConst { param_index: u32 },
    /// Insert a `// warpsight: grid=... block=...` annotation before the kernel (where the
    /// launch configuration is unknown).
    InsertAnnotation { text: String },
    /// Insert a `// warpsight: trips=N` comment above the loop whose `.loc` is on
    /// `source_line` (the line of the `for`, `while` or `do` it belongs to), or, in a PTX
    /// file, above the loop's header on `ptx_line`.
    StateTripCount { source_line: Option<u32>, ptx_line: u32, trips: u64 },
}

/// The launch a [`FixKind::SetBlockSize`] edits: 1-based line and column of the kernel
/// name at a `kernel<<<...>>>` launch (as `cuda_frontend::LaunchSite` reports it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchSiteRef {
    pub line: u32,
    pub column: u32,
}

/// Replace bytes `start..end` of the source with `new_text` (an insertion when `start ==
/// end`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
}

/// The edits that apply `fix` to the CUDA source `cu_text`, for the kernel whose
/// unqualified name is `kernel_base_name` (`transpose_naive`; a qualified `ns::k` is
/// reduced to `k`). `site` locates the launch for `SetBlockSize`; without it the first
/// launch of the kernel in the text is edited. The edits do not overlap and are sorted
/// by position; an empty result means the fix does not apply to this text.
pub fn edits(fix: &FixKind, cu_text: &str, kernel_base_name: &str, site: Option<LaunchSiteRef>) -> Vec<TextEdit> {
    let name = kernel_base_name.rsplit("::").next().unwrap_or(kernel_base_name);
    let src = scan::Source::new(cu_text);
    let mut res = match fix {
        FixKind::SetBlockSize { block, .. } => block_size::edits(&src, name, site, *block),
        FixKind::LaunchBounds { max_threads, min_blocks } => launch_bounds::edits(&src, name, *max_threads, *min_blocks),
        FixKind::PadSharedArray { variable, from_row, to_row } => pad::edits(&src, name, variable, *from_row, *to_row),
        FixKind::RestrictConst { param_index } => restrict::edits(&src, name, *param_index),
        FixKind::InsertAnnotation { text } => annotation::edits(&src, name, text),
        FixKind::StateTripCount { source_line, trips, .. } => source_line.map_or_else(Vec::new, |l| trips::edits(&src, l, *trips)),
    };
    res.sort_by_key(|e| (e.start, e.end));
    res.dedup();
    res
}

/// Applies non-overlapping edits to a text (for tests and the CLI). Edits that overlap an
/// earlier one, or fall outside the text or inside a UTF-8 character, are skipped.
pub fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut sorted: Vec<&TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for e in sorted {
        if e.start < pos || e.end < e.start || e.end > text.len() || !text.is_char_boundary(e.start) || !text.is_char_boundary(e.end) {
            continue;
        }
        out.push_str(&text[pos..e.start]);
        out.push_str(&e.new_text);
        pos = e.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// `[256, 1, 1]` as `256`, `[32, 8, 1]` as `32, 8` (constructor arguments).
fn dim_args(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}, {y}"),
        [x, y, z] => format!("{x}, {y}, {z}"),
    }
}

/// A launch-argument literal: `256` for 1-D (an integer converts to `dim3`), else
/// `dim3(32, 8)`.
fn dim_literal(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        _ => format!("dim3({})", dim_args(d)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_replaces_in_order_and_skips_overlaps() {
        let t = "abcdef";
        let e = vec![
            TextEdit { start: 4, end: 5, new_text: "X".into() },
            TextEdit { start: 0, end: 0, new_text: ">".into() },
            TextEdit { start: 2, end: 4, new_text: "overlap".into() },
            TextEdit { start: 1, end: 3, new_text: "".into() },
        ];
        assert_eq!(apply(t, &e), ">adXf");
        assert_eq!(dim_literal([32, 8, 1]), "dim3(32, 8)");
        assert_eq!(dim_literal([128, 1, 1]), "128");
    }
}
