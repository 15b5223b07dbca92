//! Constant folding of C++ integer expressions over a lexed `.cu` file.
//!
//! Launch configurations are usually written with named constants, not literals:
//! `#define N (1<<20)`, `constexpr int kBlock = 256;`, `dim3 grid((n + b - 1) / b);`,
//! `const int n = 1 << 21;` in `main` passed on to a `launch(int n)` helper. This module
//! builds an environment of every such definition in a file (macros, also those of the
//! build's `-D` and of the included local headers; `const`/`constexpr` and plain variables
//! with their assignments in source order; enumerators; `dim3` variables with their
//! components; helper functions whose body is one `return expr;`) and folds expressions
//! against it.
//!
//! The model is straight-line code, made aware of control flow only where it matters: the
//! value of a variable at a point is its last assignment before that point in the same
//! function (or at namespace scope) that surely ran. Compound assignments and `++` fold on
//! the value before them. An assignment under an `if` counts when the condition folds to
//! true and is skipped when it folds to false; under a condition that does not fold, in a
//! `switch`, or in a loop the point is not in, it makes the variable unknown, with the
//! reason. A point inside a loop sees the loop's first iteration (the `for` increment has
//! not run). An assignment the folder cannot evaluate (`scanf("%d", &n)`) makes the
//! variable unknown from there on, so a stale constant is never used. A host function's
//! parameters (integers, `dim3`, template parameters) resolve through the calls of that
//! function in the same file when they all pass the same constant. Values the user
//! supplies (`--arg NAME=VALUE`, also `argv[K]` for `atoi(argv[K])`) win over everything.
//! Anything unresolved is reported by name, with a reason where one is known
//! ([`Trace`]), so the caller can ask the user for it.

use std::collections::HashMap;
use std::ops::Range;

use crate::lex::{Define, Lexed, Tok, TokKind};

/// Maximum recursion (macro expansion, variable chains, call-site propagation).
const MAX_DEPTH: u32 = 24;

/// What one evaluation could not fold, and which user values it read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// Names (or expressions such as `argv[1]`, `f(...)`) that stopped the folding; the
    /// user can supply a name with `--arg NAME=VALUE`.
    pub unresolved: Vec<String>,
    /// Why, in words, for the names that have a reason beyond "unknown": "`n` is assigned
    /// under the condition at line 12".
    pub reasons: Vec<String>,
    /// The user values (`--arg`) the folding read.
    pub used: Vec<String>,
}

impl Trace {
    fn push_unique(v: &mut Vec<String>, s: &str) {
        if !v.iter().any(|x| x == s) {
            v.push(s.to_string());
        }
    }
    /// Records a name that could not be folded.
    pub fn note(&mut self, name: &str) {
        Self::push_unique(&mut self.unresolved, name);
    }
    /// Records a reason sentence.
    pub fn reason(&mut self, why: &str) {
        Self::push_unique(&mut self.reasons, why);
    }
    /// Records a user value read.
    pub fn used(&mut self, name: &str) {
        Self::push_unique(&mut self.used, name);
    }
    /// Moves everything from `other` into `self`.
    pub fn absorb(&mut self, other: Trace) {
        for u in other.unresolved {
            self.note(&u);
        }
        for r in other.reasons {
            self.reason(&r);
        }
        for u in other.used {
            self.used(&u);
        }
    }
}

/// A control-flow construct around a statement: an assignment inside one that does not
/// also contain the point of evaluation may or may not have run.
#[derive(Debug, Clone)]
struct Construct {
    kind: ConstructKind,
    /// 1-based line of the keyword.
    line: u32,
    /// Token range of the body (the statement or `{...}` block it governs).
    body: Range<usize>,
    /// For a `for`: the token range of the increment clause, which runs after each
    /// iteration (so it is not "before" a point of the body in the first iteration).
    incr: Option<Range<usize>>,
}

#[derive(Debug, Clone)]
enum ConstructKind {
    /// `if (cond)` (`negate: false`) or its `else` (`negate: true`): the token range of
    /// the condition, folded when possible.
    If { cond: Range<usize>, negate: bool },
    /// `for`, `while`, `do`.
    Loop,
    /// `switch`.
    Switch,
}

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
    /// `n op= expr` (`op` is the binary operator, `+` for `n += e`); `n++` is `+= 1`.
    Compound(&'static str, Range<usize>),
    /// `n++`, `--n`: add this.
    Step(i64),
    /// Assigned something the folder does not follow (`&n` passed to a call, `cin >> n`):
    /// the words say what.
    Unknown(&'static str),
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
    /// Host functions whose body is one `return expr;` (`divUp`, `ceil_div<T>`): the
    /// parameter names and the token range of the expression.
    functions: HashMap<&'a str, (Vec<&'a str>, Range<usize>)>,
    /// Every `if`/`else`/`for`/`while`/`do`/`switch` body, in source order.
    constructs: Vec<Construct>,
    /// Namespace-scope constants of the included local headers (folded there).
    outer_consts: HashMap<String, i64>,
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
        let constructs = compute_constructs(&toks);
        let mut env = Env {
            toks,
            defines,
            vars: HashMap::new(),
            region,
            user: user.iter().cloned().collect(),
            functions: HashMap::new(),
            constructs,
            outer_consts: HashMap::new(),
        };
        env.collect_assignments();
        env.collect_functions();
        env
    }

    /// Adds `#define`s that the file sees from outside its text: those of the included
    /// local headers (`from_headers`), then the command line's `-D` (`from_command_line`).
    /// A definition in the file wins over a header's, and a `-D` wins over a definition
    /// that is guarded by `#ifndef NAME` (the usual "default unless the build sets it"),
    /// which is what the preprocessor does.
    pub fn add_defines(
        &mut self,
        from_headers: Vec<Define<'a>>,
        from_command_line: Vec<Define<'a>>,
    ) {
        for d in from_headers {
            if self.defines.get(d.name).is_none_or(|x| x.guarded) {
                self.defines.insert(d.name, d);
            }
        }
        // A later `-D` of the same name replaces an earlier one, as on the compiler's
        // command line.
        let mut from_cli: Vec<&str> = Vec::new();
        for d in from_command_line {
            if from_cli.contains(&d.name) || self.defines.get(d.name).is_none_or(|x| x.guarded) {
                from_cli.push(d.name);
                self.defines.insert(d.name, d);
            }
        }
    }

    /// Adds the namespace-scope constants of an included header (already folded there);
    /// the file's own names win.
    pub fn add_outer_consts(&mut self, consts: impl IntoIterator<Item = (String, i64)>) {
        for (k, v) in consts {
            self.outer_consts.entry(k).or_insert(v);
        }
    }

    /// The namespace-scope integer constants of this file that fold (for a header: what
    /// the including file sees).
    pub fn namespace_consts(&self) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        for (name, list) in &self.vars {
            if list.iter().any(|a| a.region.is_some()) || list.len() != 1 {
                continue;
            }
            let mut trace = Trace::default();
            let mut cx = Cx::new(self, usize::MAX, &NO_EXTRA, &mut trace);
            if let Some(v) = cx.int_var(name) {
                out.push((name.to_string(), v));
            }
        }
        out.sort();
        out
    }

    /// Records host functions whose body is a single `return expr;`.
    fn collect_functions(&mut self) {
        let n = self.toks.len();
        for brace in 0..n {
            if !(self.toks[brace].is("{") && self.region[brace] == Some(brace)) {
                continue;
            }
            let Some(close) = matching(&self.toks, brace) else {
                continue;
            };
            if !(self.toks.get(brace + 1).is_some_and(|t| t.is("return"))
                && close >= brace + 3
                && self.toks[close - 1].is(";"))
            {
                continue;
            }
            let expr = brace + 2..close - 1;
            if self.toks[expr.clone()].iter().any(|t| t.is(";")) {
                continue;
            }
            let Some((func, params)) = self.signature(brace) else {
                continue;
            };
            self.functions.insert(func, (params, expr));
        }
    }

    /// The name and parameter names of the function whose body opens at `brace`.
    fn signature(&self, brace: usize) -> Option<(&'a str, Vec<&'a str>)> {
        let mut j = brace;
        while j > 0 {
            j -= 1;
            let t = self.toks[j];
            if t.is(")") {
                break;
            }
            if !(t.is_ident() || t.is("&") || t.is("&&") || t.is("->") || t.is("::")) {
                return None;
            }
        }
        if !self.toks[j].is(")") {
            return None;
        }
        let open = matching_back(&self.toks, j)?;
        if open == 0 || !self.toks[open - 1].is_ident() {
            return None;
        }
        let func = self.toks[open - 1].text;
        if is_keyword(func) {
            return None;
        }
        let params = split_commas(&self.toks, open + 1, j)
            .into_iter()
            .filter_map(|r| param_name(&self.toks[r]))
            .collect();
        Some((func, params))
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
                    let compound = match next.text {
                        "+=" => Some("+"),
                        "-=" => Some("-"),
                        "*=" => Some("*"),
                        "/=" => Some("/"),
                        "%=" => Some("%"),
                        "<<=" => Some("<<"),
                        ">>=" => Some(">>"),
                        "&=" => Some("&"),
                        "|=" => Some("|"),
                        "^=" => Some("^"),
                        _ => None,
                    };
                    if let Some(op) = compound {
                        let end = expr_end(&self.toks, i + 2);
                        self.push(t.text, t.offset, region, Rhs::Compound(op, i + 2..end));
                        i = end;
                        continue;
                    }
                    if next.is("++") || prev.is_some_and(|p| p.is("++")) {
                        self.push(t.text, t.offset, region, Rhs::Step(1));
                    } else if next.is("--") || prev.is_some_and(|p| p.is("--")) {
                        self.push(t.text, t.offset, region, Rhs::Step(-1));
                    } else if prev.is_some_and(|p| p.is("&"))
                        && i >= 2
                        && (self.toks[i - 2].is("(") || self.toks[i - 2].is(","))
                    {
                        self.push(
                            t.text,
                            t.offset,
                            region,
                            Rhs::Unknown("its address is passed to a call"),
                        );
                    } else if prev.is_some_and(|p| p.is(">>"))
                        && self.statement_mentions(i, &["cin"])
                    {
                        self.push(
                            t.text,
                            t.offset,
                            region,
                            Rhs::Unknown("it is read from the input"),
                        );
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
                self.push(
                    t.text,
                    t.offset,
                    region,
                    Rhs::Unknown("an enumerator without a value"),
                );
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
        trace: &mut Trace,
    ) -> Option<i64> {
        let toks: Vec<Tok<'a>> = self.toks.get(range)?.to_vec();
        let mut cx = Cx::new(self, at, extra, trace);
        cx.eval_tokens(&toks)
    }

    /// Folds a launch-configuration argument: a `dim3(...)`, a `dim3` variable, or an
    /// integer (which becomes `(v, 1, 1)`).
    pub fn eval_dim3_range(
        &self,
        range: Range<usize>,
        at: usize,
        extra: &HashMap<String, i64>,
        trace: &mut Trace,
    ) -> Option<[u32; 3]> {
        let toks: Vec<Tok<'a>> = self.toks.get(range)?.to_vec();
        let mut cx = Cx::new(self, at, extra, trace);
        let v = cx.eval_dim3_tokens(&toks)?;
        let mut out = [1u32; 3];
        for (o, c) in out.iter_mut().zip(v) {
            *o = u32::try_from(c?).ok()?;
        }
        Some(out)
    }

    /// Folds a free-standing expression text (annotation values); names resolve at
    /// namespace scope.
    pub fn eval_text(&self, text: &str, trace: &mut Trace) -> Option<i64> {
        let lx = crate::lex::lex(text);
        let mut cx = Cx::new(self, usize::MAX, &NO_EXTRA, trace);
        cx.eval_tokens(&lx.tokens)
    }

    /// The innermost loop around token `at`: its line.
    pub fn loop_around(&self, at: usize) -> Option<u32> {
        self.constructs
            .iter()
            .filter(|c| matches!(c.kind, ConstructKind::Loop) && c.body.contains(&at))
            .max_by_key(|c| c.body.start)
            .map(|c| c.line)
    }
}

/// An empty map of extra values.
static NO_EXTRA: std::sync::LazyLock<HashMap<String, i64>> = std::sync::LazyLock::new(HashMap::new);

/// When token `k` names `func` in a call (`func(` or `func<...>(`), the index of the `(`.
fn call_open(toks: &[Tok<'_>], k: usize, func: &str) -> Option<usize> {
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
fn template_close(toks: &[Tok<'_>], open: usize) -> Option<usize> {
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

/// The control-flow constructs of a token stream: the body of every `if`, `else`, `for`,
/// `while`, `do` and `switch`, braced or a single statement.
fn compute_constructs(toks: &[Tok<'_>]) -> Vec<Construct> {
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let t = toks[i];
        match t.text {
            "if" | "for" | "while" | "switch" if toks.get(i + 1).is_some_and(|x| x.is("(")) => {
                let Some(close) = matching(toks, i + 1) else {
                    continue;
                };
                // `do { ... } while (c);`: the tail of a `do`, not a loop of its own.
                if t.is("while")
                    && toks.get(close + 1).is_some_and(|x| x.is(";"))
                    && i > 0
                    && toks[i - 1].is("}")
                {
                    continue;
                }
                let body = close + 1..statement_end(toks, close + 1, 0);
                let kind = match t.text {
                    "if" => ConstructKind::If {
                        cond: i + 2..close,
                        negate: false,
                    },
                    "switch" => ConstructKind::Switch,
                    _ => ConstructKind::Loop,
                };
                let incr = if t.is("for") {
                    let parts = split_at_semicolons(toks, i + 2, close);
                    parts.get(2).cloned()
                } else {
                    None
                };
                if t.is("if") && toks.get(body.end).is_some_and(|x| x.is("else")) {
                    let else_body = body.end + 1..statement_end(toks, body.end + 1, 0);
                    out.push(Construct {
                        kind: ConstructKind::If {
                            cond: i + 2..close,
                            negate: true,
                        },
                        line: toks[body.end].line,
                        body: else_body,
                        incr: None,
                    });
                }
                out.push(Construct {
                    kind,
                    line: t.line,
                    body,
                    incr,
                });
            }
            "do" => {
                let body = i + 1..statement_end(toks, i + 1, 0);
                out.push(Construct {
                    kind: ConstructKind::Loop,
                    line: t.line,
                    body,
                    incr: None,
                });
            }
            _ => {}
        }
    }
    out
}

/// The end (exclusive) of the statement starting at `from`.
fn statement_end(toks: &[Tok<'_>], from: usize, depth: u32) -> usize {
    let n = toks.len();
    let Some(first) = toks.get(from) else {
        return n;
    };
    if depth > MAX_DEPTH {
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
fn split_at_semicolons(toks: &[Tok<'_>], from: usize, to: usize) -> Vec<Range<usize>> {
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

/// The conversion functions of `argv` strings to integers.
const ARGV_CONVERSIONS: &[&str] = &[
    "atoi", "atol", "atoll", "strtol", "strtoul", "strtoll", "strtoull", "stoi", "stol", "stoll",
    "stoul", "stoull",
];

/// One evaluation: the environment, the point of view, and what could not be folded.
struct Cx<'e, 'a, 'u> {
    env: &'e Env<'a>,
    /// The token at which the expression is evaluated (`usize::MAX`: after the file, at
    /// namespace scope).
    at_tok: usize,
    at_offset: usize,
    region: Option<usize>,
    extra: &'e HashMap<String, i64>,
    /// Parameters bound while evaluating a helper function's `return` expression.
    locals: HashMap<&'a str, i64>,
    depth: u32,
    trace: &'u mut Trace,
}

/// Whether an assignment applies at the point of evaluation.
enum Applies {
    Yes,
    /// It cannot have run before the point (a `for` increment in the first iteration,
    /// an `if` whose condition folds to false).
    No,
    /// It may or may not have run: the words say why.
    Maybe(String),
}

impl<'e, 'a, 'u> Cx<'e, 'a, 'u> {
    fn new(
        env: &'e Env<'a>,
        at: usize,
        extra: &'e HashMap<String, i64>,
        trace: &'u mut Trace,
    ) -> Self {
        let at_offset = env.toks.get(at).map_or(usize::MAX, |t| t.offset);
        Cx {
            env,
            at_tok: at,
            at_offset,
            region: env.region_at(at),
            extra,
            locals: HashMap::new(),
            depth: 0,
            trace,
        }
    }
}

impl<'a> Cx<'_, 'a, '_> {
    fn note(&mut self, name: &str) {
        self.trace.note(name);
    }

    fn user_value(&mut self, name: &str) -> Option<i64> {
        if let Some(v) = self.locals.get(name) {
            return Some(*v);
        }
        if let Some(v) = self.extra.get(name) {
            return Some(*v);
        }
        let v = self.env.user.get(name).copied()?;
        self.trace.used(name);
        Some(v)
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
            if let Some(v) = self.user_value(toks[0].text) {
                return Some([Some(v), Some(1), Some(1)]);
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

    /// Whether the assignment at token `a` has run when control reaches the point of
    /// evaluation, judged by the constructs around the two.
    fn applies(&mut self, a: usize) -> Applies {
        let at = self.at_tok;
        let mut res = Applies::Yes;
        for c in &self.env.constructs {
            if c.incr.as_ref().is_some_and(|r| r.contains(&a)) {
                if c.body.contains(&at) {
                    // The increment of a loop around the point: the first iteration has not
                    // run it.
                    return Applies::No;
                }
                // After the loop: it ran as many times as the loop did.
                res = Applies::Maybe(format!("in the loop at line {}", c.line));
                continue;
            }
            if !c.body.contains(&a) || c.body.contains(&at) {
                continue;
            }
            match &c.kind {
                ConstructKind::If { cond, negate } => {
                    let toks: Vec<Tok<'a>> = self.env.toks[cond.clone()].to_vec();
                    let mut trace = Trace::default();
                    let v = {
                        let mut sub = Cx::new(self.env, cond.start, self.extra, &mut trace);
                        sub.depth = self.depth + 1;
                        sub.eval_tokens(&toks)
                    };
                    for u in &trace.used {
                        self.trace.used(u);
                    }
                    match v {
                        Some(v) if (v != 0) != *negate => {}
                        Some(_) => return Applies::No,
                        None => {
                            let what = if *negate {
                                "in the `else` of the condition"
                            } else {
                                "under the condition"
                            };
                            res = Applies::Maybe(format!("{what} at line {}", c.line));
                        }
                    }
                }
                ConstructKind::Loop => {
                    res = Applies::Maybe(format!("in the loop at line {}", c.line))
                }
                ConstructKind::Switch => {
                    res = Applies::Maybe(format!("in the `switch` at line {}", c.line))
                }
            }
        }
        res
    }

    /// The assignments of `name` visible from here, innermost scope first, with those that
    /// cannot have run dropped and those that may not have run turned unknown.
    fn visible(&mut self, name: &str) -> Option<Vec<Assignment>> {
        let list = self.env.vars.get(name)?;
        let before: Vec<Assignment> = list
            .iter()
            .filter(|a| a.offset < self.at_offset)
            .cloned()
            .collect();
        let local: Vec<Assignment> = before
            .iter()
            .filter(|a| a.region.is_some() && a.region == self.region)
            .cloned()
            .collect();
        if !local.is_empty() {
            let mut res = Vec::new();
            for mut a in local {
                let idx = self.tok_index_of_offset(a.offset);
                match self.applies(idx) {
                    Applies::Yes => {}
                    Applies::No => continue,
                    Applies::Maybe(why) => {
                        self.trace.reason(&format!("`{name}` is assigned {why}"));
                        // A `dim3` member assigned conditionally makes that component
                        // unknown, not the whole variable (a later assignment can fix it).
                        a.rhs = match a.rhs {
                            Rhs::Member(c, r) => Rhs::Member(c, r.start..r.start),
                            _ => Rhs::Unknown("assigned conditionally"),
                        };
                    }
                }
                res.push(a);
            }
            if !res.is_empty() {
                return Some(res);
            }
        }
        let global: Vec<Assignment> = before
            .iter()
            .filter(|a| a.region.is_none())
            .cloned()
            .collect();
        if !global.is_empty() {
            return Some(global);
        }
        // Class-scope constants (`static constexpr int kBlock = 256;` in a struct), usable
        // only when there is exactly one definition.
        let class_scope: Vec<Assignment> = list
            .iter()
            .filter(|a| matches!(a.rhs, Rhs::Expr(_)))
            .cloned()
            .collect();
        if class_scope.len() == 1 && self.region.is_none_or(|r| class_scope[0].region != Some(r)) {
            return Some(class_scope);
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
            at_tok,
            at_offset,
            region: self.env.region_at(at_tok),
            extra: self.extra,
            locals: HashMap::new(),
            depth: self.depth + 1,
            trace: self.trace,
        }
    }

    fn tok_index_of_offset(&self, offset: usize) -> usize {
        self.env.toks.partition_point(|t| t.offset < offset)
    }

    /// The value of an integer variable at the point of evaluation.
    fn int_var(&mut self, name: &str) -> Option<i64> {
        let list = self.visible(name)?;
        let last = list.last()?.clone();
        let at_tok = self.tok_index_of_offset(last.offset);
        match last.rhs {
            Rhs::Expr(r) => {
                let toks: Vec<Tok<'a>> = self.env.toks[r].to_vec();
                let mut sub = self.sub(at_tok);
                sub.eval_tokens(&toks)
            }
            Rhs::Param { func, index } => self.param_value(&func, index, name),
            Rhs::Compound(op, r) => {
                // The value before this assignment, then the operation.
                let toks: Vec<Tok<'a>> = self.env.toks[r].to_vec();
                let mut sub = self.sub(at_tok);
                let before = sub.int_var(name)?;
                let rhs = sub.eval_tokens(&toks)?;
                launch_spec::binary_op(op, before, rhs)
            }
            Rhs::Step(d) => {
                let mut sub = self.sub(at_tok);
                sub.int_var(name)?.checked_add(d)
            }
            Rhs::Unknown(why) => {
                if why != "assigned conditionally" {
                    self.trace.reason(&format!(
                        "`{name}` is unknown: {why} (line {})",
                        self.env.toks[at_tok.min(self.env.toks.len() - 1)].line
                    ));
                }
                None
            }
            Rhs::Dim3Ctor(_) | Rhs::Member(..) | Rhs::Dim3Default => None,
        }
    }

    fn dim3_var(&mut self, name: &str) -> Option<[Option<i64>; 3]> {
        let list = self.visible(name)?;
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
            Rhs::Param { func, index } => self.param_dim3(&func, index, name)?,
            Rhs::Unknown(_) | Rhs::Member(..) | Rhs::Compound(..) | Rhs::Step(_) => return None,
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
    fn param_value(&mut self, func: &str, index: usize, pname: &str) -> Option<i64> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        let toks = &self.env.toks;
        let mut value: Option<i64> = None;
        let mut lines = Vec::new();
        for k in 0..toks.len().saturating_sub(1) {
            let Some(open) = call_open(toks, k, func) else {
                continue;
            };
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
            let Some(close) = matching(toks, open) else {
                continue;
            };
            let args = split_commas(toks, open + 1, close);
            let Some(r) = args.get(index) else { continue };
            lines.push(toks[k].line);
            let arg: Vec<Tok<'a>> = toks[r.clone()].to_vec();
            let mut sub = self.sub(k);
            let v = sub.eval_tokens(&arg)?;
            match value {
                Some(prev_v) if prev_v != v => {
                    let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
                    self.trace.reason(&format!(
                        "`{pname}` is a parameter of `{func}`, whose calls pass different values (lines {}); give one with --arg {pname}=VALUE",
                        lines.join(", ")
                    ));
                    return None;
                }
                _ => value = Some(v),
            }
        }
        if lines.is_empty() {
            self.trace.reason(&format!(
                "`{pname}` is a parameter of `{func}`, which is not called in the file"
            ));
        }
        value
    }

    /// A `dim3` parameter of host function `func`, when every call passes the same value.
    fn param_dim3(&mut self, func: &str, index: usize, pname: &str) -> Option<[Option<i64>; 3]> {
        if self.depth > MAX_DEPTH {
            return None;
        }
        let toks = &self.env.toks;
        let mut value = None;
        for k in 0..toks.len().saturating_sub(1) {
            let Some(open) = call_open(toks, k, func) else {
                continue;
            };
            if k == 0 || self.env.region_at(k).is_none() {
                continue;
            }
            let prev = toks[k - 1];
            if prev.is_ident() && !is_keyword(prev.text)
                || prev.is("*")
                || prev.is("&")
                || prev.is("::")
            {
                continue;
            }
            let Some(close) = matching(toks, open) else {
                continue;
            };
            let Some(r) = split_commas(toks, open + 1, close).get(index).cloned() else {
                continue;
            };
            let arg: Vec<Tok<'a>> = toks[r].to_vec();
            let mut sub = self.sub(k);
            let v = sub.eval_dim3_tokens(&arg)?;
            if value.is_some_and(|p| p != v) {
                self.trace.reason(&format!(
                    "`{pname}` is a parameter of `{func}`, whose calls pass different values"
                ));
                return None;
            }
            value = Some(v);
        }
        value
    }

    /// `ceil(a / (double)b)`, `ceil(n / 256.0)`, `ceilf(float(a) / b)`: the ceiling of an
    /// integer division written in floating point, a common idiom for the grid size.
    fn ceil_of_division(&mut self, arg: &[Tok<'a>]) -> Option<i64> {
        let mut depth = 0i32;
        let mut slash = None;
        for (k, t) in arg.iter().enumerate() {
            match t.text {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                "/" if depth == 0 => {
                    if slash.is_some() {
                        return None;
                    }
                    slash = Some(k);
                }
                "+" | "-" | "*" | "%" | "<<" | ">>" if depth == 0 => return None,
                _ => {}
            }
        }
        let k = slash?;
        let a = self.eval_tokens(strip_float_cast(&arg[..k]))?;
        let b = self.eval_tokens(strip_float_cast(&arg[k + 1..]))?;
        if b == 0 {
            return None;
        }
        let q = a / b;
        Some(if a % b != 0 && (a < 0) == (b < 0) {
            q + 1
        } else {
            q
        })
    }

    fn ident_value(&mut self, name: &str) -> Option<i64> {
        if let Some(v) = self.user_value(name) {
            return Some(v);
        }
        if name == "argc"
            && let Some(v) = self.argc_from_user_argv()
        {
            return Some(v);
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
            if v.is_some() {
                return v;
            }
            if self.visible_is_empty(name) {
                if let Some(v) = self.env.outer_consts.get(name).copied() {
                    return Some(v);
                }
                if let Some(v) = self.global_set_elsewhere(name) {
                    return Some(v);
                }
            }
            self.note(name);
            return None;
        }
        if let Some(v) = self.env.outer_consts.get(name) {
            return Some(*v);
        }
        if let Some(v) = self.template_param_value(name) {
            return Some(v);
        }
        self.note(name);
        None
    }

    /// A template parameter of the host function the point is in (`template <int B> void
    /// run(...) { k<B><<<n / B, B>>>(...); }`), when every call names the same constant
    /// (`run<256>(...)`).
    fn template_param_value(&mut self, name: &str) -> Option<i64> {
        let region = self.region?;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let toks = &self.env.toks;
        let (func, _) = self.env.signature(region)?;
        // The declaration starts after the previous `;`, `}` or `{` before the body.
        let mut start = region;
        while start > 0 && !matches!(toks[start - 1].text, ";" | "}" | "{") {
            start -= 1;
        }
        let t = (start..region)
            .find(|&k| toks[k].is("template") && toks.get(k + 1).is_some_and(|x| x.is("<")))?;
        let close = template_close(toks, t + 1)?;
        let index = split_commas(toks, t + 2, close)
            .into_iter()
            .position(|r| param_name(&toks[r]) == Some(name))?;
        let mut value = None;
        for k in 0..toks.len().saturating_sub(1) {
            if !(toks[k].is(func) && toks[k + 1].is("<"))
                || self.env.region_at(k).is_none()
                || k == region
            {
                continue;
            }
            let Some(gt) = template_close(toks, k + 1) else {
                continue;
            };
            if !toks.get(gt + 1).is_some_and(|x| x.is("(")) {
                continue;
            }
            let Some(r) = split_commas(toks, k + 2, gt).get(index).cloned() else {
                continue;
            };
            let arg: Vec<Tok<'a>> = toks[r].to_vec();
            let mut sub = self.sub(k);
            let v = sub.eval_tokens(&arg)?;
            if value.is_some_and(|p| p != v) {
                self.trace.reason(&format!("`{name}` is a template parameter of `{func}`, whose calls name different values"));
                return None;
            }
            value = Some(v);
        }
        value
    }

    /// `argc` when the user gave `argv[K]` values and no `argc`: the program was run with
    /// the arguments up to the highest `K` given, so `argc` is that `K + 1`.
    fn argc_from_user_argv(&mut self) -> Option<i64> {
        let highest = self
            .env
            .user
            .keys()
            .filter_map(|k| {
                k.strip_prefix("argv[")?
                    .strip_suffix(']')?
                    .parse::<i64>()
                    .ok()
            })
            .max()?;
        let env = self.env;
        for k in env.user.keys().filter(|k| k.starts_with("argv[")) {
            self.trace.used(k);
        }
        Some(highest + 1)
    }

    /// A variable declared at namespace scope and assigned only inside one function (the
    /// Rodinia style: `int Size;` set in `main` or an `init(argc, argv)`, read by the host
    /// function that launches): its value at the end of that function.
    fn global_set_elsewhere(&mut self, name: &str) -> Option<i64> {
        let toks = &self.env.toks;
        let declared_globally = toks.iter().enumerate().any(|(k, t)| {
            t.is(name)
                && self.env.region_at(k).is_none()
                && k > 0
                && (toks[k - 1].is_ident() || toks[k - 1].is(","))
        });
        if !declared_globally || self.depth > MAX_DEPTH {
            return None;
        }
        let list = self.env.vars.get(name)?;
        let region = list.first()?.region?;
        if list.iter().any(|a| a.region != Some(region)) {
            return None;
        }
        let end = matching(toks, region)?;
        let func = self
            .env
            .signature(region)
            .map_or("another function", |(f, _)| f);
        self.trace.reason(&format!("`{name}` is a global variable set in `{func}`: its value at the end of `{func}` is used"));
        let mut sub = self.sub(end);
        sub.int_var(name)
    }

    /// `true` when no assignment of `name` in the file is visible here (a header's
    /// constant of the same name then applies).
    fn visible_is_empty(&self, name: &str) -> bool {
        self.env.vars.get(name).is_none_or(|list| {
            !list.iter().any(|a| {
                a.offset < self.at_offset && (a.region.is_none() || a.region == self.region)
            })
        })
    }

    // Precedence climbing, C++ operator precedence (ISO C++ [expr]).
    fn ternary(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
        let c = self.binary(p, 0)?;
        if p.eat("?") {
            // Only the branch taken is folded: `argc > 1 ? atoi(argv[1]) : 1024` is 1024
            // for a run without arguments, whatever `argv[1]` would be.
            let colon = ternary_colon(p.toks, p.pos)?;
            let (a, b) = (&p.toks[p.pos..colon], &p.toks[colon + 1..]);
            p.pos = p.toks.len();
            return if c != 0 {
                self.eval_tokens(a)
            } else {
                self.eval_tokens(b)
            };
        }
        Some(c)
    }

    fn binary(&mut self, p: &mut Parser<'_, 'a>, min_prec: u8) -> Option<i64> {
        let mut lhs = self.unary(p)?;
        while let Some(op) = p.peek().map(|t| t.text) {
            let Some(prec) = launch_spec::binary_precedence(op) else { break };
            if prec < min_prec {
                break;
            }
            p.pos += 1;
            let rhs = self.binary(p, prec + 1)?;
            lhs = launch_spec::binary_op(op, lhs, rhs)?;
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
                _ => {
                    // A struct member (`prop.multiProcessorCount`): not followed.
                    let member = format!("{name}.{}", comp.unwrap_or(""));
                    self.note(&member);
                    self.trace.reason(&format!(
                        "`{member}` is a struct member, which the folder does not follow"
                    ));
                    return None;
                }
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
        // Explicit template arguments of a call: `std::min<int>(a, b)`.
        if p.peek().is_some_and(|x| x.is("<"))
            && let Some(gt) = template_close(p.toks, p.pos)
            && p.toks.get(gt + 1).is_some_and(|x| x.is("("))
        {
            p.pos = gt + 1;
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
        // `atoi(argv[1])`, `strtol(argv[2], NULL, 10)`, `std::stoi(argv[1])`: the user names
        // the value `argv[1]` (or the variable it is stored in).
        if ARGV_CONVERSIONS.contains(&name)
            && let Some(a) = args.first()
            && a.len() == 4
            && a[0].is_ident()
            && a[1].is("[")
            && a[3].is("]")
        {
            let key = format!("{}[{}]", a[0].text, a[2].text);
            if let Some(v) = self.user_value(&key) {
                return Some(v);
            }
            self.note(&key);
            self.trace.reason(&format!("`{key}` is a command-line argument: give it with --arg {key}=VALUE (or name the variable it is stored in)"));
            return None;
        }
        // A helper defined in the file as `return expr;`: bind the parameters and fold.
        if let Some((params, body)) = self.env.functions.get(name).cloned()
            && params.len() == args.len()
            && self.depth <= MAX_DEPTH
        {
            let mut locals = HashMap::new();
            for (p, a) in params.iter().zip(args) {
                locals.insert(*p, self.eval_tokens(a)?);
            }
            let toks: Vec<Tok<'a>> = self.env.toks[body.clone()].to_vec();
            let mut sub = self.sub(body.start);
            sub.locals = locals;
            return sub.eval_tokens(&toks);
        }
        if matches!(name, "ceil" | "ceilf") && args.len() == 1 {
            let v = self.ceil_of_division(&args[0]);
            if v.is_none() {
                self.note("ceil(...)");
            }
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

/// The `:` of the conditional expression whose `?` is just before `from`, skipping nested
/// conditionals and brackets.
fn ternary_colon(toks: &[Tok<'_>], from: usize) -> Option<usize> {
    let mut nested = 0i32;
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(from) {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            "?" if depth == 0 => nested += 1,
            ":" if depth == 0 => {
                if nested == 0 {
                    return Some(k);
                }
                nested -= 1;
            }
            _ => {}
        }
    }
    None
}

/// The operand of a floating-point division without its cast: `(double)n`, `(float)(n)`,
/// `double(n)`, `static_cast<double>(n)` give `n`.
fn strip_float_cast<'t, 'a>(toks: &'t [Tok<'a>]) -> &'t [Tok<'a>] {
    let is_float = |t: &Tok<'_>| matches!(t.text, "double" | "float");
    if toks.len() > 3 && toks[0].is("(") && is_float(&toks[1]) && toks[2].is(")") {
        return &toks[3..];
    }
    if toks.len() > 3
        && is_float(&toks[0])
        && toks[1].is("(")
        && toks.last().is_some_and(|t| t.is(")"))
    {
        return &toks[2..toks.len() - 1];
    }
    if toks.len() > 6
        && toks[0].is("static_cast")
        && toks[1].is("<")
        && is_float(&toks[2])
        && toks[3].is(">")
        && toks[4].is("(")
        && toks.last().is_some_and(|t| t.is(")"))
    {
        return &toks[5..toks.len() - 1];
    }
    toks
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

/// Parses a C++ integer literal (decimal, hex, octal, binary, digit separators, suffixes);
/// a floating literal with an integral value (`1e6`) too. The one parser is
/// [`launch_spec::parse_int`].
pub fn parse_int(text: &str) -> Option<i64> {
    launch_spec::parse_int(text)
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
        let mut trace = Trace::default();
        (
            env.eval_range(eq + 1..end, eq, &HashMap::new(), &mut trace),
            trace.unresolved,
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
        assert_eq!(eval_at_end("", "std::min<int>(7, 9)").0, Some(7));
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
            let mut u = Trace::default();
            (env.eval_range(i + 2..end, i, &HashMap::new(), &mut u), u)
        };
        assert_eq!(probe("__probe").0, Some(2001));
        assert_eq!(probe("__p2").0, None);
        // Compound assignments fold in straight-line code.
        assert_eq!(probe("__p3").0, Some(10));
        // A user value overrides the unknown.
        let env2 = Env::new(&lx, &[("m".to_string(), 77)]);
        let i = env2.toks.iter().position(|t| t.is("__p2")).unwrap_or(0);
        let mut u = Trace::default();
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
        let mut u = Trace::default();
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
        let mut u = Trace::default();
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
        assert!(u.unresolved.iter().any(|x| x == "w"), "{u:?}");
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
