//! Navigating a lexed token stream without parsing it: matching brackets, the end of an
//! expression or a statement, comma- and semicolon-separated lists, and calls
//! (`f(`, `f<...>(`). Used by the constant folder, the launch finder and the device-code
//! view.

use std::ops::Range;

use super::Tok;

/// The deepest nesting of statements [`statement_end`] follows; deeper input ends at the
/// end of the tokens.
const MAX_NESTING: u32 = 24;

/// When token `k` names `func` in a call (`func(` or `func<...>(`), the index of the `(`.
pub(crate) fn call_open(toks: &[Tok<'_>], k: usize, func: &str) -> Option<usize> {
    if !toks[k].is(func) {
        return None;
    }
    match toks.get(k + 1)?.text {
        "(" => Some(k + 1),
        "<" => {
            let gt = template_close(toks, k + 1)?;
            toks.get(gt + 1)
                .is_some_and(|t| t.is("("))
                .then_some(gt + 1)
        }
        _ => None,
    }
}

/// The `>` closing the template argument list that opens at `open` (a `<`), when the
/// tokens between look like template arguments (no operators that would make it a
/// comparison).
pub(crate) fn template_close(toks: &[Tok<'_>], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            "(" | ")" | ";" | "{" | "}" | "&&" | "||" | "?" => return None,
            _ => {}
        }
    }
    None
}

/// Index of the bracket matching the opening one at `open` (`(`, `[`, `{`).
pub fn matching(toks: &[Tok<'_>], open: usize) -> Option<usize> {
    let (o, c) = match toks.get(open)?.text {
        "(" => ("(", ")"),
        "[" => ("[", "]"),
        "{" => ("{", "}"),
        _ => return None,
    };
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.is(o) {
            depth += 1;
        } else if t.is(c) {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Index of the `(` matching the `)` at `close`.
pub fn matching_back(toks: &[Tok<'_>], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = close + 1;
    while k > 0 {
        k -= 1;
        let t = toks[k];
        if t.is(")") {
            depth += 1;
        } else if t.is("(") {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// The end (exclusive) of an expression starting at `from`: the first `;`, or a `,` or
/// closing bracket at depth zero.
pub fn expr_end(toks: &[Tok<'_>], from: usize) -> usize {
    let mut depth = 0i32;
    let mut k = from;
    while k < toks.len() {
        let t = toks[k].text;
        match t {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                if depth == 0 {
                    return k;
                }
                depth -= 1;
            }
            ";" => return k,
            "," if depth == 0 => return k,
            _ => {}
        }
        k += 1;
    }
    k
}

/// Splits `toks[from..to]` at commas that are at bracket depth zero (counting `<>` too,
/// so `Foo<int, 3> x` stays one parameter).
pub fn split_commas(toks: &[Tok<'_>], from: usize, to: usize) -> Vec<Range<usize>> {
    // `<` is ambiguous (template or less-than): when the angles do not balance, the split
    // is redone treating `<` and `>` as operators.
    split_commas_with(toks, from, to, true)
        .unwrap_or_else(|| split_commas_with(toks, from, to, false).unwrap_or_default())
}

fn split_commas_with(
    toks: &[Tok<'_>],
    from: usize,
    to: usize,
    angles: bool,
) -> Option<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut angle = 0i32;
    let mut start = from;
    let to = to.min(toks.len());
    for (k, t) in toks.iter().enumerate().take(to).skip(from) {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "<" if angles => angle += 1,
            ">" if angles && angle > 0 => angle -= 1,
            ">>" if angles && angle > 0 => angle = (angle - 2).max(0),
            "," if depth == 0 && angle == 0 => {
                out.push(start..k);
                start = k + 1;
            }
            _ => {}
        }
    }
    if angle != 0 {
        return None;
    }
    if start < to || !out.is_empty() {
        out.push(start..to);
    }
    out.retain(|r| !r.is_empty());
    Some(out)
}

/// The end (exclusive) of the statement starting at `from`.
pub(crate) fn statement_end(toks: &[Tok<'_>], from: usize, depth: u32) -> usize {
    let n = toks.len();
    let Some(first) = toks.get(from) else {
        return n;
    };
    if depth > MAX_NESTING {
        return n;
    }
    if first.is("{") {
        return matching(toks, from).map_or(n, |c| c + 1);
    }
    if matches!(first.text, "if" | "for" | "while" | "switch")
        && toks.get(from + 1).is_some_and(|x| x.is("("))
    {
        let Some(close) = matching(toks, from + 1) else {
            return n;
        };
        let end = statement_end(toks, close + 1, depth + 1);
        if first.is("if") && toks.get(end).is_some_and(|x| x.is("else")) {
            return statement_end(toks, end + 1, depth + 1);
        }
        return end;
    }
    if first.is("do") {
        let body_end = statement_end(toks, from + 1, depth + 1);
        return statement_end(toks, body_end, depth + 1);
    }
    let mut k = from;
    while k < n {
        match toks[k].text {
            "(" | "[" | "{" => match matching(toks, k) {
                Some(c) => k = c,
                None => return n,
            },
            ";" => return k + 1,
            "}" => return k,
            _ => {}
        }
        k += 1;
    }
    n
}

/// Splits `toks[from..to]` at `;` at bracket depth zero (a `for` header's clauses).
pub(crate) fn split_at_semicolons(toks: &[Tok<'_>], from: usize, to: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = from;
    for (k, t) in toks.iter().enumerate().take(to).skip(from) {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            ";" if depth == 0 => {
                out.push(start..k);
                start = k + 1;
            }
            _ => {}
        }
    }
    out.push(start..to);
    out
}
