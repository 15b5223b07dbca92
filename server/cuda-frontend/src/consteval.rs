//! Constant folding of C++ integer expressions over a lexed `.cu` file.
//!
//! Launch configurations are usually written with named constants, not literals:
//! `#define N (1<<20)`, `constexpr int kBlock = 256;`, `dim3 grid((n + b - 1) / b);`,
//! `const int n = 1 << 21;` in `main` passed on to a `launch(int n)` helper. This module
//! builds an environment of every such definition in a file (macros, `const`/`constexpr`
//! and plain variables with their assignments in source order, enumerators, `dim3`
//! variables with their components) and folds expressions against it.
//!
//! The model is deliberately simple and flow-insensitive within a function body: the value
//! of a variable at a point is its last assignment before that point in the same function
//! (or at namespace scope); an assignment the folder cannot evaluate (`n = atoi(argv[1])`,
//! `n *= 2`, `scanf("%d", &n)`) makes the variable unknown from there on, so a stale
//! constant is never used. A host function's parameter is resolved through the call sites
//! of that function in the same file when they all pass the same constant. Values the user
//! supplies (`--arg NAME=VALUE`) win over everything. Anything unresolved is reported by
//! name so the caller can ask the user for it.

use std::collections::HashMap;
use std::ops::Range;

use crate::lex::{Define, Lexed, Tok, TokKind};

/// Maximum recursion (macro expansion, variable chains, call-site propagation).
const MAX_DEPTH: u32 = 24;

/// How a variable got its value at one point in the file.
#[derive(Debug, Clone)]
enum Rhs {
    /// `= expr` (token range of the expression).
    Expr(Range<usize>),
    /// `dim3 g(a, b, c)` / `dim3 g{a, b}`: token range of the argument list contents.
    Dim3Ctor(Range<usize>),
    /// `g.x = expr`: one component.
    Member(usize, Range<usize>),
    /// `dim3 g;` (defaults to 1, 1, 1).
    Dim3Default,
    /// Parameter `index` of host function `func` (resolved through its call sites).
    Param { func: String, index: usize },
    /// Assigned something the folder does not follow (`n++`, `&n` passed to a call).
    Unknown,
}

#[derive(Debug, Clone)]
struct Assignment {
    offset: usize,
    region: Option<usize>,
    rhs: Rhs,
}

/// A folded value: an integer or a `dim3` with possibly unknown components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Dim3([Option<i64>; 3]),
}

/// The constant environment of one file.
#[derive(Debug)]
pub struct Env<'a> {
    pub toks: Vec<Tok<'a>>,
    defines: HashMap<&'a str, Define<'a>>,
    vars: HashMap<&'a str, Vec<Assignment>>,
    /// For each token, the top-level function or class body it is in (the index of the
    /// opening brace), `None` at namespace scope.
    region: Vec<Option<usize>>,
    /// User-supplied values (`--arg NAME=VALUE`); they override the source.
    user: HashMap<String, i64>,
}

const KEYWORDS: &[&str] = &[
    "return",
    "if",
    "else",
    "while",
    "for",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "goto",
    "sizeof",
    "new",
    "delete",
    "throw",
    "try",
    "catch",
    "using",
    "typedef",
    "template",
    "typename",
    "operator",
    "this",
    "true",
    "false",
    "nullptr",
    "const",
    "constexpr",
    "static",
    "volatile",
    "auto",
    "struct",
    "class",
    "enum",
    "union",
    "namespace",
    "public",
    "private",
    "protected",
    "virtual",
    "inline",
    "extern",
];

/// Type words accepted in casts and recognised in declarations.
const TYPE_WORDS: &[&str] = &[
    "int",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "size_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "ptrdiff_t",
    "ssize_t",
    "const",
    "std",
    "::",
    "bool",
    "uint",
];

fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

/// Size in bytes of a type name in `sizeof(...)`, for the usual CUDA data types (the C++
/// sizes on the LP64 host ABI that nvcc matches on Linux; CUDA Programming Guide, "C++
/// Language Support": device types have the host's sizes).
fn sizeof_type(words: &[&str]) -> Option<i64> {
    if words.is_empty() {
        return None;
    }
    if words.contains(&"*") {
        return Some(8);
    }
    let words: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| {
            !matches!(
                *w,
                "const" | "volatile" | "std" | "::" | "unsigned" | "signed" | "struct"
            )
        })
        .collect();
    let mut joined = words.join(" ");
    if joined.is_empty() {
        // `sizeof(unsigned)`: a bare sign specifier means `int`.
        joined = "int".to_string();
    }
    Some(match joined.as_str() {
        "char" | "int8_t" | "uint8_t" | "bool" | "char1" | "uchar1" => 1,
        "short" | "int16_t" | "uint16_t" | "half" | "__half" | "__nv_bfloat16" | "short int" => 2,
        "int" | "float" | "int32_t" | "uint32_t" | "uint" | "__half2" | "__nv_bfloat162"
        | "char4" | "uchar4" => 4,
        "long" | "long long" | "long int" | "double" | "size_t" | "int64_t" | "uint64_t"
        | "ptrdiff_t" | "float2" | "int2" | "uint2" | "long long int" => 8,
        "float4" | "int4" | "uint4" | "double2" | "longlong2" => 16,
        "float3" | "int3" | "uint3" => 12,
        "double4" => 32,
        _ => return None,
    })
}

impl<'a> Env<'a> {
    /// Builds the environment for a lexed file.
    pub fn new(lexed: &Lexed<'a>, user: &[(String, i64)]) -> Env<'a> {
        let toks = lexed.tokens.clone();
        let mut defines = HashMap::new();
        for d in &lexed.defines {
            defines.insert(d.name, d.clone());
        }
        let region = compute_regions(&toks);
        let mut env = Env {
            toks,
            defines,
            vars: HashMap::new(),
            region,
            user: user.iter().cloned().collect(),
        };
        env.collect_assignments();
        env
    }

    pub fn region_at(&self, tok_idx: usize) -> Option<usize> {
        self.region.get(tok_idx).copied().flatten()
    }

    fn push(&mut self, name: &'a str, offset: usize, region: Option<usize>, rhs: Rhs) {
        self.vars.entry(name).or_default().push(Assignment {
            offset,
            region,
            rhs,
        });
    }

    /// Scans every token for declarations and assignments.
    fn collect_assignments(&mut self) {
        let n = self.toks.len();
        let mut i = 0;
        while i < n {
            let t = self.toks[i];
            let region = self.region[i];
            // Function parameters: `) [qualifiers] {` opening a region.
            if t.is("{") && region == Some(i) {
                self.collect_params(i);
            }
            if t.is("enum") {
                i = self.collect_enum(i);
                continue;
            }
            if t.is("dim3") && i + 1 < n && self.toks[i + 1].is_ident() {
                // `dim3 a(...), b{...}, c = x, d;`
                let mut j = i + 1;
                while j < n && self.toks[j].is_ident() {
                    let name = self.toks[j].text;
                    let off = self.toks[j].offset;
                    let next = self.toks.get(j + 1).map(|t| t.text);
                    match next {
                        Some("(") | Some("{") => {
                            let close = matching(&self.toks, j + 1).unwrap_or(n);
                            self.push(
                                name,
                                off,
                                self.region[j],
                                Rhs::Dim3Ctor(j + 2..close.min(n)),
                            );
                            j = close + 1;
                        }
                        Some("=") => {
                            let end = expr_end(&self.toks, j + 2);
                            self.push(name, off, self.region[j], Rhs::Expr(j + 2..end));
                            j = end;
                        }
                        _ => {
                            self.push(name, off, self.region[j], Rhs::Dim3Default);
                            j += 1;
                        }
                    }
                    if j < n && self.toks[j].is(",") {
                        j += 1;
                    } else {
                        break;
                    }
                }
                i = j.max(i + 1);
                continue;
            }
            if t.kind == TokKind::Ident && !is_keyword(t.text) && i + 1 < n {
                let prev = if i > 0 { Some(self.toks[i - 1]) } else { None };
                let member = prev.is_some_and(|p| p.is(".") || p.is("->") || p.is("::"));
                let next = self.toks[i + 1];
                if !member {
                    if next.is("=") {
                        let end = expr_end(&self.toks, i + 2);
                        self.push(t.text, t.offset, region, Rhs::Expr(i + 2..end));
                        i = end;
                        continue;
                    }
                    if [
                        "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++", "--",
                    ]
                    .contains(&next.text)
                        || prev.is_some_and(|p| p.is("++") || p.is("--"))
                        || (prev.is_some_and(|p| p.is("&"))
                            && i >= 2
                            && (self.toks[i - 2].is("(") || self.toks[i - 2].is(",")))
                        || prev.is_some_and(|p| p.is(">>")) && self.statement_mentions(i, &["cin"])
                    {
                        self.push(t.text, t.offset, region, Rhs::Unknown);
                    }
                    // Member assignment `g.x = expr`.
                    if next.is(".")
                        && i + 3 < n
                        && matches!(self.toks[i + 2].text, "x" | "y" | "z")
                        && self.toks[i + 3].is("=")
                    {
                        let comp = match self.toks[i + 2].text {
                            "x" => 0,
                            "y" => 1,
                            _ => 2,
                        };
                        let end = expr_end(&self.toks, i + 4);
                        self.push(t.text, t.offset, region, Rhs::Member(comp, i + 4..end));
                        i = end;
                        continue;
                    }
                }
            }
            i += 1;
        }
        for list in self.vars.values_mut() {
            list.sort_by_key(|a| a.offset);
        }
    }

    fn statement_mentions(&self, i: usize, words: &[&str]) -> bool {
        let mut j = i;
        while j > 0 {
            j -= 1;
            let t = self.toks[j];
            if t.is(";") || t.is("{") || t.is("}") {
                return false;
            }
            if words.contains(&t.text) {
                return true;
            }
        }
        false
    }

    /// `enum [class] [Name] [: type] { A = 1, B, C }`: enumerators as constants.
    fn collect_enum(&mut self, at: usize) -> usize {
        let n = self.toks.len();
        let mut j = at + 1;
        while j < n && !self.toks[j].is("{") && !self.toks[j].is(";") {
            j += 1;
        }
        if j >= n || !self.toks[j].is("{") {
            return j.max(at + 1);
        }
        let close = matching(&self.toks, j).unwrap_or(n);
        let region = self.region[at];
        let mut k = j + 1;
        while k < close {
            let t = self.toks[k];
            if !t.is_ident() {
                k += 1;
                continue;
            }
            if self.toks.get(k + 1).is_some_and(|x| x.is("=")) {
                let end = expr_end(&self.toks, k + 2).min(close);
                self.push(t.text, t.offset, region, Rhs::Expr(k + 2..end));
                k = end;
            } else {
                // An implicit enumerator (previous + 1) is recorded as unknown: sizes are
                // nearly always given explicitly, and a wrong value is worse than none.
                self.push(t.text, t.offset, region, Rhs::Unknown);
                k += 1;
            }
            while k < close && !self.toks[k].is(",") {
                k += 1;
            }
            k += 1;
        }
        close + 1
    }

    /// Records the parameters of the function whose body opens at `brace` as unknown
    /// (or call-site-resolved) values at the start of that body.
    fn collect_params(&mut self, brace: usize) {
        let mut j = brace;
        // Skip trailing qualifiers between `)` and `{`.
        while j > 0 {
            j -= 1;
            let t = self.toks[j];
            if t.is(")") {
                break;
            }
            if !(t.is_ident() || t.is("&") || t.is("&&") || t.is("->") || t.is("::")) {
                return;
            }
        }
        if !self.toks[j].is(")") {
            return;
        }
        let Some(open) = matching_back(&self.toks, j) else {
            return;
        };
        if open == 0 || !self.toks[open - 1].is_ident() {
            return;
        }
        let func = self.toks[open - 1].text;
        if is_keyword(func) {
            return;
        }
        let offset = self.toks[brace].offset;
        for (index, range) in split_commas(&self.toks, open + 1, j)
            .into_iter()
            .enumerate()
        {
            if let Some(name) = param_name(&self.toks[range]) {
                self.push(
                    name,
                    offset,
                    Some(brace),
                    Rhs::Param {
                        func: func.to_string(),
                        index,
                    },
                );
            }
        }
    }

    /// Folds an integer expression (token range) as seen at token index `at`.
    pub fn eval_range(
        &self,
        range: Range<usize>,
        at: usize,
        extra: &HashMap<String, i64>,
        unresolved: &mut Vec<String>,
    ) -> Option<i64> {
        let toks: Vec<Tok<'a>> = self.toks.get(range)?.to_vec();
        let mut cx = Cx {
            env: self,
            at_offset: self.toks.get(at).map_or(usize::MAX, |t| t.offset),
            region: self.region_at(at),
            extra,
            depth: 0,
            unresolved,
        };
        cx.eval_tokens(&toks)
    }

    /// Folds a launch-configuration argument: a `dim3(...)`, a `dim3` variable, or an
    /// integer (which becomes `(v, 1, 1)`).
    pub fn eval_dim3_range(
        &self,
        range: Range<usize>,
        at: usize,
        extra: &HashMap<String, i64>,
        unresolved: &mut Vec<String>,
    ) -> Option<[u32; 3]> {
        let toks: Vec<Tok<'a>> = self.toks.get(range)?.to_vec();
        let mut cx = Cx {
            env: self,
            at_offset: self.toks.get(at).map_or(usize::MAX, |t| t.offset),
            region: self.region_at(at),
            extra,
            depth: 0,
            unresolved,
        };
        let v = cx.eval_dim3_tokens(&toks)?;
        let mut out = [1u32; 3];
        for (o, c) in out.iter_mut().zip(v) {
            *o = u32::try_from(c?).ok()?;
        }
        Some(out)
    }

    /// Folds a free-standing expression text (annotation values); names resolve at
    /// namespace scope.
    pub fn eval_text(&self, text: &str, unresolved: &mut Vec<String>) -> Option<i64> {
        let lx = crate::lex::lex(text);
        let extra = HashMap::new();
        let mut cx = Cx {
            env: self,
            at_offset: usize::MAX,
            region: None,
            extra: &extra,
            depth: 0,
            unresolved,
        };
        cx.eval_tokens(&lx.tokens)
    }
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

/// The declared name in one parameter declaration (`const float *__restrict__ x` gives
/// `x`, `int n = 4` gives `n`, `float a[]` gives `a`, `void` gives none).
pub fn param_name<'a>(toks: &[Tok<'a>]) -> Option<&'a str> {
    let end = toks.iter().position(|t| t.is("=")).unwrap_or(toks.len());
    let mut toks = &toks[..end];
    if let Some(b) = toks.iter().position(|t| t.is("[")) {
        toks = &toks[..b];
    }
    if toks.len() < 2 {
        return None;
    }
    let last = toks.last()?;
    if last.is_ident()
        && !is_keyword(last.text)
        && !TYPE_WORDS.contains(&last.text)
        && !matches!(last.text, "float" | "double" | "void")
    {
        Some(last.text)
    } else {
        None
    }
}

/// Computes, for every token, the top-level body it lies in. Namespace and `extern "C"`
/// blocks are transparent (their contents are at namespace scope).
fn compute_regions(toks: &[Tok<'_>]) -> Vec<Option<usize>> {
    let mut out = Vec::with_capacity(toks.len());
    // Stack of open braces: (index, transparent).
    let mut stack: Vec<(usize, bool)> = Vec::new();
    let mut current: Option<usize> = None;
    for (i, t) in toks.iter().enumerate() {
        if t.is("{") {
            let transparent = current.is_none() && {
                let p1 = if i >= 1 { toks[i - 1].text } else { "" };
                let p2 = if i >= 2 { toks[i - 2].text } else { "" };
                let p3 = if i >= 3 { toks[i - 3].text } else { "" };
                p1 == "namespace"
                    || p2 == "namespace"
                    || p3 == "namespace"
                    || (p2 == "extern" && toks[i - 1].kind == TokKind::Str)
            };
            if current.is_none() && !transparent {
                current = Some(i);
            }
            stack.push((i, transparent));
            out.push(current);
            continue;
        }
        out.push(current);
        if t.is("}")
            && let Some((open, _)) = stack.pop()
            && current == Some(open)
        {
            current = None;
        }
    }
    out
}

/// One evaluation: the environment, the point of view, and the names left unresolved.
struct Cx<'e, 'a, 'u> {
    env: &'e Env<'a>,
    at_offset: usize,
    region: Option<usize>,
    extra: &'e HashMap<String, i64>,
    depth: u32,
    unresolved: &'u mut Vec<String>,
}

impl<'a> Cx<'_, 'a, '_> {
    fn note(&mut self, name: &str) {
        if !self.unresolved.iter().any(|u| u == name) {
            self.unresolved.push(name.to_string());
        }
    }

    fn eval_tokens(&mut self, toks: &[Tok<'a>]) -> Option<i64> {
        if toks.is_empty() || self.depth > MAX_DEPTH {
            return None;
        }
        let mut p = Parser { toks, pos: 0 };
        let v = self.ternary(&mut p)?;
        if p.pos != toks.len() {
            return None;
        }
        Some(v)
    }

    fn eval_dim3_tokens(&mut self, toks: &[Tok<'a>]) -> Option<[Option<i64>; 3]> {
        if toks.is_empty() || self.depth > MAX_DEPTH {
            return None;
        }
        // `dim3(a, b, c)` or `dim3{a, b}` or `{a, b}`.
        let (open, ok) = if toks[0].is("dim3") && toks.len() >= 3 {
            (1, true)
        } else {
            (0, toks[0].is("{"))
        };
        if ok && matching(toks, open) == Some(toks.len() - 1) {
            return Some(self.dim3_components(toks, open + 1, toks.len() - 1));
        }
        // A single identifier naming a dim3 variable.
        if toks.len() == 1 && toks[0].is_ident() {
            if let Some(v) = self
                .extra
                .get(toks[0].text)
                .or_else(|| self.env.user.get(toks[0].text))
            {
                return Some([Some(*v), Some(1), Some(1)]);
            }
            if let Some(d) = self.dim3_var(toks[0].text) {
                return Some(d);
            }
        }
        let v = self.eval_tokens(toks)?;
        Some([Some(v), Some(1), Some(1)])
    }

    fn dim3_components(&mut self, toks: &[Tok<'a>], from: usize, to: usize) -> [Option<i64>; 3] {
        let mut out = [Some(1), Some(1), Some(1)];
        for (k, r) in split_commas(toks, from, to).into_iter().take(3).enumerate() {
            out[k] = self.eval_tokens(&toks[r]);
        }
        out
    }

    /// The assignments of `name` visible from here, innermost scope first.
    fn visible(&self, name: &str) -> Option<(&'a str, Vec<Assignment>)> {
        let (key, list) = self.env.vars.get_key_value(name)?;
        let before: Vec<&Assignment> = list.iter().filter(|a| a.offset < self.at_offset).collect();
        let local: Vec<Assignment> = before
            .iter()
            .filter(|a| a.region.is_some() && a.region == self.region)
            .map(|a| (*a).clone())
            .collect();
        if !local.is_empty() {
            return Some((key, local));
        }
        let global: Vec<Assignment> = before
            .iter()
            .filter(|a| a.region.is_none())
            .map(|a| (*a).clone())
            .collect();
        if !global.is_empty() {
            return Some((key, global));
        }
        // Class-scope constants (`static constexpr int kBlock = 256;` in a struct), usable
        // only when there is exactly one definition.
        let class_scope: Vec<Assignment> = list
            .iter()
            .filter(|a| matches!(a.rhs, Rhs::Expr(_)))
            .cloned()
            .collect();
        if class_scope.len() == 1 && self.region.is_none_or(|r| class_scope[0].region != Some(r)) {
            return Some((key, class_scope));
        }
        None
    }

    fn sub(&mut self, at_tok: usize) -> Cx<'_, 'a, '_> {
        let at_offset = self
            .env
            .toks
            .get(at_tok)
            .map_or(self.at_offset, |t| t.offset);
        Cx {
            env: self.env,
            at_offset,
            region: self.env.region_at(at_tok),
            extra: self.extra,
            depth: self.depth + 1,
            unresolved: self.unresolved,
        }
    }

    fn tok_index_of_offset(&self, offset: usize) -> usize {
        self.env.toks.partition_point(|t| t.offset < offset)
    }

    fn int_var(&mut self, name: &str) -> Option<i64> {
        let (_, list) = self.visible(name)?;
        let last = list.last()?.clone();
        let at_tok = self.tok_index_of_offset(last.offset);
        match last.rhs {
            Rhs::Expr(r) => {
                let toks: Vec<Tok<'a>> = self.env.toks[r].to_vec();
                let mut sub = self.sub(at_tok);
                sub.eval_tokens(&toks)
            }
            Rhs::Param { func, index } => self.param_value(&func, index),
            Rhs::Dim3Ctor(_) | Rhs::Member(..) | Rhs::Dim3Default | Rhs::Unknown => None,
        }
    }

    fn dim3_var(&mut self, name: &str) -> Option<[Option<i64>; 3]> {
        let (_, list) = self.visible(name)?;
        // The last whole assignment, then member assignments after it.
        let base_idx = list
            .iter()
            .rposition(|a| !matches!(a.rhs, Rhs::Member(..)))?;
        let base = list[base_idx].clone();
        let at_tok = self.tok_index_of_offset(base.offset);
        let mut val = match base.rhs {
            Rhs::Dim3Ctor(r) => {
                let toks: Vec<Tok<'a>> = self.env.toks[r].to_vec();
                let mut sub = self.sub(at_tok);
                sub.dim3_components(&toks, 0, toks.len())
            }
            Rhs::Dim3Default => [Some(1), Some(1), Some(1)],
            Rhs::Expr(r) => {
                let toks: Vec<Tok<'a>> = self.env.toks[r].to_vec();
                let mut sub = self.sub(at_tok);
                sub.eval_dim3_tokens(&toks)?
            }
            Rhs::Param { .. } | Rhs::Unknown | Rhs::Member(..) => return None,
        };
        for m in &list[base_idx + 1..] {
            if let Rhs::Member(c, r) = &m.rhs {
                let toks: Vec<Tok<'a>> = self.env.toks[r.clone()].to_vec();
                let at = self.tok_index_of_offset(m.offset);
                let mut sub = self.sub(at);
                val[*c] = sub.eval_tokens(&toks);
            }
        }
        Some(val)
    }

    /// The value of parameter `index` of host function `func`, when every call of `func`
    /// in the file passes the same constant.
    fn param_value(&mut self, func: &str, index: usize) -> Option<i64> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        let toks = &self.env.toks;
        let mut value: Option<i64> = None;
        let mut calls = 0;
        for k in 0..toks.len().saturating_sub(1) {
            if !(toks[k].is(func) && toks[k + 1].is("(")) {
                continue;
            }
            // A call, not the definition or a declaration: the previous token is not a
            // type word and the call is inside a body.
            let prev = if k > 0 { toks[k - 1] } else { continue };
            if prev.is_ident() && !is_keyword(prev.text)
                || prev.is("*")
                || prev.is("&")
                || prev.is("::")
                || self.env.region_at(k).is_none()
            {
                continue;
            }
            let Some(close) = matching(toks, k + 1) else {
                continue;
            };
            let args = split_commas(toks, k + 2, close);
            let Some(r) = args.get(index) else { continue };
            calls += 1;
            let arg: Vec<Tok<'a>> = toks[r.clone()].to_vec();
            let mut sub = self.sub(k);
            let v = sub.eval_tokens(&arg)?;
            match value {
                Some(prev_v) if prev_v != v => return None,
                _ => value = Some(v),
            }
        }
        if calls == 0 { None } else { value }
    }

    fn ident_value(&mut self, name: &str) -> Option<i64> {
        if let Some(v) = self.extra.get(name).or_else(|| self.env.user.get(name)) {
            return Some(*v);
        }
        match name {
            "true" => return Some(1),
            "false" => return Some(0),
            _ => {}
        }
        if let Some(d) = self.env.defines.get(name)
            && d.params.is_none()
        {
            let body = d.body.clone();
            self.depth += 1;
            let v = self.eval_tokens(&body);
            self.depth -= 1;
            return v;
        }
        if self.env.vars.contains_key(name) {
            self.depth += 1;
            let v = self.int_var(name);
            self.depth -= 1;
            if v.is_none() {
                self.note(name);
            }
            return v;
        }
        self.note(name);
        None
    }

    // Precedence climbing, C++ operator precedence (ISO C++ [expr]).
    fn ternary(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
        let c = self.binary(p, 0)?;
        if p.eat("?") {
            let a = self.ternary(p)?;
            if !p.eat(":") {
                return None;
            }
            let b = self.ternary(p)?;
            return Some(if c != 0 { a } else { b });
        }
        Some(c)
    }

    fn binary(&mut self, p: &mut Parser<'_, 'a>, min_prec: u8) -> Option<i64> {
        let mut lhs = self.unary(p)?;
        while let Some(op) = p.peek().map(|t| t.text) {
            let prec = match op {
                "||" => 1,
                "&&" => 2,
                "|" => 3,
                "^" => 4,
                "&" => 5,
                "==" | "!=" => 6,
                "<" | ">" | "<=" | ">=" => 7,
                "<<" | ">>" => 8,
                "+" | "-" => 9,
                "*" | "/" | "%" => 10,
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            p.pos += 1;
            let rhs = self.binary(p, prec + 1)?;
            lhs = match op {
                "||" => i64::from(lhs != 0 || rhs != 0),
                "&&" => i64::from(lhs != 0 && rhs != 0),
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "==" => i64::from(lhs == rhs),
                "!=" => i64::from(lhs != rhs),
                "<" => i64::from(lhs < rhs),
                ">" => i64::from(lhs > rhs),
                "<=" => i64::from(lhs <= rhs),
                ">=" => i64::from(lhs >= rhs),
                "<<" => lhs.checked_shl(u32::try_from(rhs).ok()?)?,
                ">>" => lhs.checked_shr(u32::try_from(rhs).ok()?)?,
                "+" => lhs.checked_add(rhs)?,
                "-" => lhs.checked_sub(rhs)?,
                "*" => lhs.checked_mul(rhs)?,
                "/" => lhs.checked_div(rhs)?,
                "%" => lhs.checked_rem(rhs)?,
                _ => return None,
            };
        }
        Some(lhs)
    }

    fn unary(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
        let t = p.peek()?;
        match t.text {
            "-" => {
                p.pos += 1;
                self.unary(p)?.checked_neg()
            }
            "+" => {
                p.pos += 1;
                self.unary(p)
            }
            "!" => {
                p.pos += 1;
                Some(i64::from(self.unary(p)? == 0))
            }
            "~" => {
                p.pos += 1;
                Some(!self.unary(p)?)
            }
            "(" => {
                // A C-style cast `(int)x` or a parenthesised expression.
                let close = p.matching(p.pos)?;
                let inner = &p.toks[p.pos + 1..close];
                let is_cast = !inner.is_empty()
                    && inner
                        .iter()
                        .all(|t| TYPE_WORDS.contains(&t.text) || t.is("*"))
                    && p.toks.get(close + 1).is_some_and(|n| {
                        n.is_ident() || n.kind == TokKind::Number || n.is("(") || n.is("-")
                    });
                if is_cast {
                    p.pos = close + 1;
                    return self.unary(p);
                }
                let v = self.eval_tokens(inner)?;
                p.pos = close + 1;
                Some(v)
            }
            _ => self.postfix(p),
        }
    }

    fn postfix(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
        let t = p.next()?;
        match t.kind {
            TokKind::Number => parse_int(t.text),
            TokKind::Char => parse_char(t.text),
            TokKind::Ident => self.ident_expr(t, p),
            _ => None,
        }
    }

    fn ident_expr(&mut self, t: Tok<'a>, p: &mut Parser<'_, 'a>) -> Option<i64> {
        // Qualified names: `std::min`, `Cfg::kBlock`, `::max`: keep the last component.
        let mut name = t.text;
        while p.peek().is_some_and(|x| x.is("::"))
            && p.toks.get(p.pos + 1).is_some_and(|x| x.is_ident())
        {
            p.pos += 1;
            name = p.next()?.text;
        }
        if name == "sizeof" {
            let open = p.pos;
            if !p.peek()?.is("(") {
                return None;
            }
            let close = p.matching(open)?;
            let words: Vec<&str> = p.toks[open + 1..close].iter().map(|t| t.text).collect();
            p.pos = close + 1;
            let v = sizeof_type(&words);
            if v.is_none() {
                self.note(&format!("sizeof({})", words.join(" ")));
            }
            return v;
        }
        if matches!(
            name,
            "static_cast"
                | "int"
                | "unsigned"
                | "size_t"
                | "long"
                | "int64_t"
                | "uint32_t"
                | "uint64_t"
                | "int32_t"
        ) {
            // `static_cast<T>(e)` / `int(e)`.
            if name == "static_cast" && p.eat("<") {
                while p.peek().is_some_and(|x| !x.is(">")) {
                    p.pos += 1;
                }
                p.eat(">");
            }
            if p.peek().is_some_and(|x| x.is("(")) {
                let close = p.matching(p.pos)?;
                let inner = &p.toks[p.pos + 1..close];
                p.pos = close + 1;
                return self.eval_tokens(inner);
            }
            return None;
        }
        // A dim3 component `grid.x`.
        if p.peek().is_some_and(|x| x.is(".")) {
            let comp = p.toks.get(p.pos + 1).map(|x| x.text);
            let idx = match comp {
                Some("x") => 0,
                Some("y") => 1,
                Some("z") => 2,
                _ => return None,
            };
            p.pos += 2;
            self.depth += 1;
            let d = self.dim3_var(name);
            self.depth -= 1;
            let v = d.and_then(|d| d[idx]);
            if v.is_none() {
                self.note(&format!("{name}.{}", comp.unwrap_or("")));
            }
            return v;
        }
        if p.peek().is_some_and(|x| x.is("(")) {
            let open = p.pos;
            let close = p.matching(open)?;
            let args = split_commas(p.toks, open + 1, close);
            let arg_toks: Vec<Vec<Tok<'a>>> =
                args.iter().map(|r| p.toks[r.clone()].to_vec()).collect();
            p.pos = close + 1;
            return self.call(name, &arg_toks);
        }
        self.ident_value(name)
    }

    fn call(&mut self, name: &str, args: &[Vec<Tok<'a>>]) -> Option<i64> {
        // A function-like macro: substitute and evaluate.
        if let Some(d) = self.env.defines.get(name)
            && let Some(params) = &d.params
        {
            let mut out: Vec<Tok<'a>> = Vec::new();
            for bt in &d.body {
                if let Some(k) = params.iter().position(|pn| *pn == bt.text) {
                    out.push(paren_tok(*bt, "("));
                    out.extend(args.get(k)?.iter().copied());
                    out.push(paren_tok(*bt, ")"));
                } else {
                    out.push(*bt);
                }
            }
            self.depth += 1;
            let v = self.eval_tokens(&out);
            self.depth -= 1;
            return v;
        }
        let vals: Option<Vec<i64>> = args.iter().map(|a| self.eval_tokens(a)).collect();
        let vals = vals?;
        match (name, vals.as_slice()) {
            ("min" | "MIN" | "imin" | "umin", [a, b]) => Some(*a.min(b)),
            ("max" | "MAX" | "imax" | "umax", [a, b]) => Some(*a.max(b)),
            // Common user helpers for the ceiling division idiom.
            (
                "ceil_div" | "cdiv" | "div_up" | "divUp" | "iDivUp" | "DIV_UP" | "CEIL_DIV"
                | "ceildiv" | "div_ceil",
                [a, b],
            ) => {
                if *b == 0 {
                    None
                } else {
                    a.checked_add(b - 1)?.checked_div(*b)
                }
            }
            _ => {
                self.note(&format!("{name}(...)"));
                None
            }
        }
    }
}

fn paren_tok<'a>(at: Tok<'a>, text: &'a str) -> Tok<'a> {
    Tok {
        kind: TokKind::Punct,
        text,
        ..at
    }
}

struct Parser<'t, 'a> {
    toks: &'t [Tok<'a>],
    pos: usize,
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }
    fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.peek()?;
        self.pos += 1;
        Some(t)
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.peek().is_some_and(|t| t.is(s)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn matching(&self, open: usize) -> Option<usize> {
        matching(self.toks, open)
    }
}

/// Parses a C++ integer literal (decimal, hex, octal, binary, digit separators, suffixes).
/// A floating literal with an integral value (`1e6`) is accepted too.
pub fn parse_int(text: &str) -> Option<i64> {
    let t: String = text.chars().filter(|c| *c != '\'').collect();
    let lower = t.to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower.strip_prefix("0x") {
        (h.trim_end_matches(['u', 'l']), 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b.trim_end_matches(['u', 'l']), 2)
    } else {
        let d = lower.trim_end_matches(['u', 'l', 'z']);
        if d.contains(['.', 'e']) {
            let f: f64 = d.trim_end_matches('f').parse().ok()?;
            return if f.fract() == 0.0 && f.abs() < 9.0e18 {
                Some(f as i64)
            } else {
                None
            };
        }
        if d.len() > 1 && d.starts_with('0') {
            (&d[1..], 8)
        } else {
            (d, 10)
        }
    };
    i64::from_str_radix(digits, radix).ok()
}

fn parse_char(text: &str) -> Option<i64> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let c = chars.next()?;
    if chars.next().is_none() {
        Some(i64::from(u32::from(c)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    fn eval_at_end(src: &str, expr: &str) -> (Option<i64>, Vec<String>) {
        let full = format!("{src}\nint __probe = {expr};");
        let lx = lex(&full);
        let env = Env::new(&lx, &[]);
        let eq = env.toks.iter().rposition(|t| t.is("=")).unwrap_or(0);
        let end = expr_end(&env.toks, eq + 1);
        let mut unresolved = Vec::new();
        (
            env.eval_range(eq + 1..end, eq, &HashMap::new(), &mut unresolved),
            unresolved,
        )
    }

    #[test]
    fn literals_and_operators() {
        assert_eq!(
            eval_at_end("", "(1 << 20) + 0x10 - 07 * 2").0,
            Some((1 << 20) + 16 - 14)
        );
        assert_eq!(
            eval_at_end("", "1'000'000u / 3 % 7").0,
            Some(1_000_000 / 3 % 7)
        );
        assert_eq!(eval_at_end("", "(int)1e6 > 5 ? 3 : 4").0, Some(3));
        assert_eq!(eval_at_end("", "256 * sizeof(float)").0, Some(1024));
        assert_eq!(
            eval_at_end(
                "",
                "sizeof(unsigned) + sizeof(unsigned long long) + sizeof(float4*)"
            )
            .0,
            Some(4 + 8 + 8)
        );
        assert_eq!(eval_at_end("", "min(7, max(2, 3))").0, Some(3));
        assert_eq!(eval_at_end("", "std::min<int>(7, 9)").0, None);
        assert_eq!(eval_at_end("", "1 / 0").0, None);
    }

    #[test]
    fn macros_constants_and_idioms() {
        let src = "#define N (1<<20)\n#define B 256\n#define CDIV(a,b) (((a)+(b)-1)/(b))\nconstexpr int kT = 128;\nconst size_t M = N / 2;\nenum { TILE = 32 };";
        assert_eq!(eval_at_end(src, "(N + B - 1) / B").0, Some(4096));
        assert_eq!(eval_at_end(src, "CDIV(M, kT)").0, Some((1 << 19) / 128));
        assert_eq!(eval_at_end(src, "TILE * TILE").0, Some(1024));
        let (v, u) = eval_at_end(src, "n / B");
        assert_eq!(v, None);
        assert_eq!(u, ["n"]);
    }

    #[test]
    fn assignments_shadow_and_unknowns() {
        let src = "int main(int argc, char** argv) { int n = 1000; n = 2000; int m = atoi(argv[1]); int k = 5; k *= 2;";
        let full = format!("{src} int __probe = n + 1; int __p2 = m; int __p3 = k; }}");
        let lx = lex(&full);
        let env = Env::new(&lx, &[]);
        let probe = |name: &str| {
            let i = env.toks.iter().position(|t| t.is(name)).unwrap_or(0);
            let end = expr_end(&env.toks, i + 2);
            let mut u = Vec::new();
            (env.eval_range(i + 2..end, i, &HashMap::new(), &mut u), u)
        };
        assert_eq!(probe("__probe").0, Some(2001));
        assert_eq!(probe("__p2").0, None);
        assert_eq!(probe("__p3").0, None);
        // A user value overrides the unknown.
        let env2 = Env::new(&lx, &[("m".to_string(), 77)]);
        let i = env2.toks.iter().position(|t| t.is("__p2")).unwrap_or(0);
        let mut u = Vec::new();
        assert_eq!(
            env2.eval_range(i + 2..i + 3, i, &HashMap::new(), &mut u),
            Some(77)
        );
    }

    #[test]
    fn parameters_resolve_through_call_sites() {
        let src = "void launch(int n, float a) { int __probe = (n + 255) / 256; }\nint main() { const int n = 1 << 21; launch(n, 2.0f); }";
        let lx = lex(src);
        let env = Env::new(&lx, &[]);
        let i = env.toks.iter().position(|t| t.is("__probe")).unwrap_or(0);
        let end = expr_end(&env.toks, i + 2);
        let mut u = Vec::new();
        assert_eq!(
            env.eval_range(i + 2..end, i, &HashMap::new(), &mut u),
            Some(8192)
        );
    }

    #[test]
    fn dim3_values() {
        let src = "#define T 16\nvoid f(int w) { dim3 block(T, T); dim3 grid((1024 + T - 1) / T, 64 / T); dim3 one; grid.y = 3; auto g2 = dim3(w, 2);";
        let full = format!("{src} k<<<grid, block>>>(); k<<<one, g2>>>(); }}");
        let lx = lex(&full);
        let env = Env::new(&lx, &[]);
        let launches: Vec<usize> = env
            .toks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is("<<<"))
            .map(|(i, _)| i)
            .collect();
        let mut u = Vec::new();
        let l0 = launches[0];
        assert_eq!(
            env.eval_dim3_range(l0 + 1..l0 + 2, l0, &HashMap::new(), &mut u),
            Some([64, 3, 1])
        );
        assert_eq!(
            env.eval_dim3_range(l0 + 3..l0 + 4, l0, &HashMap::new(), &mut u),
            Some([16, 16, 1])
        );
        let l1 = launches[1];
        assert_eq!(
            env.eval_dim3_range(l1 + 1..l1 + 2, l1, &HashMap::new(), &mut u),
            Some([1, 1, 1])
        );
        assert_eq!(
            env.eval_dim3_range(l1 + 3..l1 + 4, l1, &HashMap::new(), &mut u),
            None
        );
        assert!(u.iter().any(|x| x == "w"), "{u:?}");
    }

    #[test]
    fn comma_splitting_with_templates_and_comparisons() {
        let lx = lex("f(Foo<int, 3> x, y) g(i < n ? a : b, c)");
        let t = &lx.tokens;
        let close_f = matching(t, 1).unwrap_or(0);
        assert_eq!(split_commas(t, 2, close_f).len(), 2);
        let open_g = t.iter().position(|x| x.is("g")).unwrap_or(0) + 1;
        let close_g = matching(t, open_g).unwrap_or(0);
        assert_eq!(split_commas(t, open_g + 1, close_g).len(), 2);
    }

    #[test]
    fn int_literal_forms() {
        assert_eq!(parse_int("0x1Fu"), Some(31));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("017"), Some(15));
        assert_eq!(parse_int("10ULL"), Some(10));
        assert_eq!(parse_int("2.5f"), None);
        assert_eq!(parse_int("0"), Some(0));
    }
}
