//! Evaluation: folds one expression at one point of the file against the environment
//! ([`Cx`]), with the small token cursor its expression parser uses.

use std::collections::HashMap;

use super::*;
use crate::lex::{Tok, TokKind, call_open, matching, split_commas, template_close};

/// The conversion functions of `argv` strings to integers.
pub(super) const ARGV_CONVERSIONS: &[&str] = &[
    "atoi", "atol", "atoll", "strtol", "strtoul", "strtoll", "strtoull", "stoi", "stol", "stoll",
    "stoul", "stoull",
];

/// One evaluation: the environment, the point of view, and what could not be folded.
pub(super) struct Cx<'e, 'a, 'u> {
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
pub(super) enum Applies {
    Yes,
    /// It cannot have run before the point (a `for` increment in the first iteration,
    /// an `if` whose condition folds to false).
    No,
    /// It may or may not have run: the words say why.
    Maybe(String),
}

impl<'e, 'a, 'u> Cx<'e, 'a, 'u> {
    pub(super) fn new(
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
    pub(super) fn note(&mut self, name: &str) {
        self.trace.note(name);
    }

    pub(super) fn user_value(&mut self, name: &str) -> Option<i64> {
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

    pub(super) fn eval_tokens(&mut self, toks: &[Tok<'a>]) -> Option<i64> {
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

    pub(super) fn eval_dim3_tokens(&mut self, toks: &[Tok<'a>]) -> Option<[Option<i64>; 3]> {
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

    pub(super) fn dim3_components(&mut self, toks: &[Tok<'a>], from: usize, to: usize) -> [Option<i64>; 3] {
        let mut out = [Some(1), Some(1), Some(1)];
        for (k, r) in split_commas(toks, from, to).into_iter().take(3).enumerate() {
            out[k] = self.eval_tokens(&toks[r]);
        }
        out
    }

    /// Whether the assignment at token `a` has run when control reaches the point of
    /// evaluation, judged by the constructs around the two.
    pub(super) fn applies(&mut self, a: usize) -> Applies {
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
    pub(super) fn visible(&mut self, name: &str) -> Option<Vec<Assignment>> {
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

    pub(super) fn sub(&mut self, at_tok: usize) -> Cx<'_, 'a, '_> {
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

    pub(super) fn tok_index_of_offset(&self, offset: usize) -> usize {
        self.env.toks.partition_point(|t| t.offset < offset)
    }

    /// The value of an integer variable at the point of evaluation.
    pub(super) fn int_var(&mut self, name: &str) -> Option<i64> {
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

    pub(super) fn dim3_var(&mut self, name: &str) -> Option<[Option<i64>; 3]> {
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
    pub(super) fn param_value(&mut self, func: &str, index: usize, pname: &str) -> Option<i64> {
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
    pub(super) fn param_dim3(&mut self, func: &str, index: usize, pname: &str) -> Option<[Option<i64>; 3]> {
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
    pub(super) fn ceil_of_division(&mut self, arg: &[Tok<'a>]) -> Option<i64> {
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

    pub(super) fn ident_value(&mut self, name: &str) -> Option<i64> {
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
    pub(super) fn template_param_value(&mut self, name: &str) -> Option<i64> {
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
    pub(super) fn argc_from_user_argv(&mut self) -> Option<i64> {
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
    pub(super) fn global_set_elsewhere(&mut self, name: &str) -> Option<i64> {
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
    pub(super) fn visible_is_empty(&self, name: &str) -> bool {
        self.env.vars.get(name).is_none_or(|list| {
            !list.iter().any(|a| {
                a.offset < self.at_offset && (a.region.is_none() || a.region == self.region)
            })
        })
    }

    // Precedence climbing, C++ operator precedence (ISO C++ [expr]).
    pub(super) fn ternary(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
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

    pub(super) fn binary(&mut self, p: &mut Parser<'_, 'a>, min_prec: u8) -> Option<i64> {
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

    pub(super) fn unary(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
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

    pub(super) fn postfix(&mut self, p: &mut Parser<'_, 'a>) -> Option<i64> {
        let t = p.next()?;
        match t.kind {
            TokKind::Number => parse_int(t.text),
            TokKind::Char => parse_char(t.text),
            TokKind::Ident => self.ident_expr(t, p),
            _ => None,
        }
    }

    pub(super) fn ident_expr(&mut self, t: Tok<'a>, p: &mut Parser<'_, 'a>) -> Option<i64> {
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

    pub(super) fn call(&mut self, name: &str, args: &[Vec<Tok<'a>>]) -> Option<i64> {
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
pub(super) fn ternary_colon(toks: &[Tok<'_>], from: usize) -> Option<usize> {
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
pub(super) fn strip_float_cast<'t, 'a>(toks: &'t [Tok<'a>]) -> &'t [Tok<'a>] {
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


pub(super) fn paren_tok<'a>(at: Tok<'a>, text: &'a str) -> Tok<'a> {
    Tok {
        kind: TokKind::Punct,
        text,
        ..at
    }
}

pub(super) struct Parser<'t, 'a> {
    toks: &'t [Tok<'a>],
    pos: usize,
}

impl<'a> Parser<'_, 'a> {
    pub(super) fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }
    pub(super) fn next(&mut self) -> Option<Tok<'a>> {
        let t = self.peek()?;
        self.pos += 1;
        Some(t)
    }
    pub(super) fn eat(&mut self, s: &str) -> bool {
        if self.peek().is_some_and(|t| t.is(s)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub(super) fn matching(&self, open: usize) -> Option<usize> {
        matching(self.toks, open)
    }
}

/// Parses a C++ integer literal (decimal, hex, octal, binary, digit separators, suffixes);
/// a floating literal with an integral value (`1e6`) too. The one parser is
/// [`launch_spec::parse_int`].
pub fn parse_int(text: &str) -> Option<i64> {
    launch_spec::parse_int(text)
}

pub(super) fn parse_char(text: &str) -> Option<i64> {
    let inner = text.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let c = chars.next()?;
    if chars.next().is_none() {
        Some(i64::from(u32::from(c)))
    } else {
        None
    }
}
