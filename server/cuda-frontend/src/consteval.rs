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

use crate::lex::{Define, Lexed, Tok, TokKind, expr_end, matching, matching_back, split_at_semicolons, split_commas, statement_end};

mod eval;

pub use eval::parse_int;
use eval::*;

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
pub(crate) fn sizeof_type(words: &[&str]) -> Option<i64> {
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

    /// The name and the parameter list's `(` and `)` (token indices) of the function whose
    /// body opens at `brace`; `None` when the tokens before it are no function header.
    fn header(&self, brace: usize) -> Option<(&'a str, usize, usize)> {
        let mut j = brace;
        // Skip trailing qualifiers between `)` and `{`.
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
        Some((func, open, j))
    }

    /// The name and parameter names of the function whose body opens at `brace`.
    fn signature(&self, brace: usize) -> Option<(&'a str, Vec<&'a str>)> {
        let (func, open, close) = self.header(brace)?;
        let params = split_commas(&self.toks, open + 1, close)
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
        let Some((func, open, close)) = self.header(brace) else {
            return;
        };
        let offset = self.toks[brace].offset;
        for (index, range) in split_commas(&self.toks, open + 1, close)
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
