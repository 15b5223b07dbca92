//! `SetBlockSize`: change the block argument of a `kernel<<<grid, block, ...>>>` launch.
//!
//! When the block argument is a `dim3` variable declared in the same function (`dim3
//! block(32, 8);`, `dim3 block = dim3(256);`, `dim3 block{256};`, `dim3 block = 256;`),
//! its declaration is edited, so the launch keeps reading as written; otherwise the
//! argument itself is replaced by a literal (`256`, or `dim3(32, 8)`).

use super::scan::{Source, is_ident};
use super::{LaunchSiteRef, TextEdit, dim_args, dim_literal};

pub(super) fn edits(src: &Source<'_>, name: &str, site: Option<LaunchSiteRef>, block: [u32; 3]) -> Vec<TextEdit> {
    let Some((launch_pos, args)) = find_launch(src, name, site) else { return Vec::new() };
    let Some(&arg) = args.get(1) else { return Vec::new() };
    if arg.0 >= arg.1 {
        return Vec::new();
    }
    let arg_text = src.code_str(arg);
    let is_name = arg_text.as_bytes().first().is_some_and(|b| !b.is_ascii_digit()) && arg_text.bytes().all(is_ident);
    if is_name && let Some(e) = edit_dim3_decl(src, arg_text, launch_pos, block) {
        return vec![e];
    }
    vec![TextEdit { start: arg.0, end: arg.1, new_text: dim_literal(block) }]
}

/// The launch to edit: its `<<<` offset and the trimmed ranges of its configuration
/// arguments.
fn find_launch(src: &Source<'_>, name: &str, site: Option<LaunchSiteRef>) -> Option<(usize, Vec<(usize, usize)>)> {
    let candidates: Vec<usize> = match site {
        Some(s) => {
            let at = src.offset_of(s.line, s.column)?;
            // The name at the site, else the first occurrence from the start of its line.
            let line_start = src.offset_of(s.line, 1)?;
            let mut c = src.idents(name, (at, src.len()));
            c.retain(|p| *p == at);
            if c.is_empty() {
                c = src.idents(name, (line_start, src.len()));
            }
            c
        }
        None => src.idents(name, (0, src.len())),
    };
    for pos in candidates {
        let mut i = src.skip_ws(pos + name.len());
        // Template arguments: `k<float><<<...>>>`.
        if src.at(i) == b'<' && !src.code[i..].starts_with(b"<<<") {
            i = src.skip_ws(src.matching(i)? + 1);
        }
        if !src.code[i.min(src.len())..].starts_with(b"<<<") {
            continue;
        }
        let open = i + 3;
        let close = launch_close(src, open)?;
        return Some((i, src.split_commas((open, close))));
    }
    None
}

/// The offset of the `>>>` closing a launch configuration that starts at `open`.
fn launch_close(src: &Source<'_>, open: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut i = open;
    while i < src.len() {
        match src.at(i) {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'>' if depth == 0 && src.code[i..].starts_with(b">>>") => return Some(i),
            b';' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Edits `dim3 var ...` declared before `launch_pos` in the same function.
fn edit_dim3_decl(src: &Source<'_>, var: &str, launch_pos: usize, block: [u32; 3]) -> Option<TextEdit> {
    let decl = src
        .idents(var, (0, launch_pos))
        .into_iter()
        .rfind(|p| {
            let before = src.skip_ws_back(*p);
            before >= 4 && &src.code[before - 4..before] == b"dim3" && (before == 4 || !is_ident(src.at(before - 5)))
        })?;
    // Same function: scanning from the declaration to the launch, the brace depth never
    // drops below where it started.
    let mut depth = 0i64;
    for i in decl..launch_pos {
        match src.at(i) {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    let mut i = src.skip_ws(decl + var.len());
    let args = dim_args(block);
    match src.at(i) {
        b'(' | b'{' => {
            let close = src.matching(i)?;
            return Some(TextEdit { start: i + 1, end: close, new_text: args });
        }
        b'=' => i = src.skip_ws(i + 1),
        _ => return None,
    }
    // `= dim3(...)`, `= {...}`, or `= expr`.
    if src.code[i..].starts_with(b"dim3") && !is_ident(src.at(i + 4)) {
        let open = src.skip_ws(i + 4);
        if matches!(src.at(open), b'(' | b'{') {
            let close = src.matching(open)?;
            return Some(TextEdit { start: open + 1, end: close, new_text: args });
        }
        return None;
    }
    if src.at(i) == b'{' {
        let close = src.matching(i)?;
        return Some(TextEdit { start: i + 1, end: close, new_text: args });
    }
    let end = src.split_commas((i, statement_end(src, i)?)).first().copied()?;
    Some(TextEdit { start: end.0, end: end.1, new_text: dim_literal(block) })
}

fn statement_end(src: &Source<'_>, from: usize) -> Option<usize> {
    (from..src.len()).find(|i| src.at(*i) == b';')
}

#[cfg(test)]
mod tests {
    use super::super::{FixKind, apply, edits};
    use super::*;

    fn fix(block: [u32; 3]) -> FixKind {
        FixKind::SetBlockSize { block, reason: String::new() }
    }

    #[test]
    fn literal_block_arguments_are_replaced() {
        let t = "void f() {\n  k<<<(n + 255) / 256, 256, 0>>>(a, n); // 256 stays\n}\n";
        let out = apply(t, &edits(&fix([512, 1, 1]), t, "k", None));
        assert_eq!(out, "void f() {\n  k<<<(n + 255) / 256, 512, 0>>>(a, n); // 256 stays\n}\n");
        let t = "void f() { k<float><<<g, dim3(16, 16)>>>(a); }";
        assert_eq!(apply(t, &edits(&fix([32, 8, 1]), t, "k", None)), "void f() { k<float><<<g, dim3(32, 8)>>>(a); }");
    }

    #[test]
    fn dim3_variables_in_the_same_function_are_edited_at_their_declaration() {
        for (decl, want) in [
            ("dim3 block(32, 32);", "dim3 block(32, 8);"),
            ("dim3 block = dim3(32, 32);", "dim3 block = dim3(32, 8);"),
            ("dim3 block{32, 32};", "dim3 block{32, 8};"),
            ("dim3 block = {32, 32};", "dim3 block = {32, 8};"),
        ] {
            let t = format!("void f() {{\n  {decl}\n  k<<<grid, block>>>(a);\n}}\n");
            let out = apply(&t, &edits(&fix([32, 8, 1]), &t, "k", None));
            assert_eq!(out, t.replace(decl, want));
        }
        let t = "void f() {\n  dim3 block = 256;\n  k<<<g, block>>>(a);\n}\n";
        assert_eq!(apply(t, &edits(&fix([128, 1, 1]), t, "k", None)), t.replace("= 256", "= 128"));
    }

    #[test]
    fn a_variable_from_another_function_gets_a_literal() {
        let t = "dim3 block(64);\nvoid g() { dim3 block(16); }\nvoid f(dim3 block) {\n  k<<<1, block>>>(a);\n}\n";
        let out = apply(t, &edits(&fix([128, 1, 1]), t, "k", None));
        assert!(out.contains("k<<<1, 128>>>"), "{out}");
        assert!(out.contains("dim3 block(16)"), "{out}");
    }

    #[test]
    fn the_site_picks_the_launch() {
        let t = "void f() {\n  k<<<1, 32>>>(a);\n  k<<<2, 64>>>(a);\n}\n";
        let out = apply(t, &edits(&fix([256, 1, 1]), t, "k", Some(LaunchSiteRef { line: 3, column: 3 })));
        assert_eq!(out, "void f() {\n  k<<<1, 32>>>(a);\n  k<<<2, 256>>>(a);\n}\n");
        assert!(edits(&fix([256, 1, 1]), t, "other", None).is_empty());
    }
}
