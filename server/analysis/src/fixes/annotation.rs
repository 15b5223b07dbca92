//! `InsertAnnotation`: insert a `// warpsight: ...` line before the kernel's definition
//! (or its first declaration when the file has no definition), with the definition's
//! indentation. The CUDA front end attaches an annotation to the next kernel definition or
//! launch after it (`cuda_frontend::launch`), so the line goes right before the
//! declaration statement (before its `template <...>` too).

use super::TextEdit;
use super::scan::Source;

pub(super) fn edits(src: &Source<'_>, name: &str, text: &str) -> Vec<TextEdit> {
    let decls = src.kernel_decls(name);
    let Some(d) = decls.iter().find(|d| d.body.is_some()).or(decls.first()) else { return Vec::new() };
    let first = src.skip_ws(d.stmt_start);
    let line_start = src.text.as_bytes()[..first].iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
    let indent = &src.text[line_start..first];
    let line = text.lines().next().unwrap_or("").trim();
    if indent.bytes().all(|b| b == b' ' || b == b'\t') {
        vec![TextEdit { start: line_start, end: line_start, new_text: format!("{indent}{line}\n") }]
    } else {
        vec![TextEdit { start: first, end: first, new_text: format!("\n{line}\n") }]
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FixKind, apply, edits};

    #[test]
    fn the_annotation_goes_before_the_definition() {
        let f = FixKind::InsertAnnotation { text: "// warpsight: grid=1024 block=256".into() };
        let t = "#include <x.h>\n// Doc.\ntemplate <int N>\n__global__ void k(float *a) {}\n";
        assert_eq!(apply(t, &edits(&f, t, "k", None)), "#include <x.h>\n// Doc.\n// warpsight: grid=1024 block=256\ntemplate <int N>\n__global__ void k(float *a) {}\n");
        let t = "namespace n {\n  __global__ void k() {}\n}\n";
        assert_eq!(apply(t, &edits(&f, t, "n::k", None)), "namespace n {\n  // warpsight: grid=1024 block=256\n  __global__ void k() {}\n}\n");
        assert!(edits(&f, t, "missing", None).is_empty());
    }
}
