//! The one grammar of a kernel launch configuration, and the one type it produces.
//!
//! A launch (grid, block, dynamic shared memory and kernel argument values) is stated in
//! five places: the CLI flags (`--grid 64x64 --block 16,16 --dyn-smem 1024 --arg n=1<<20`),
//! the editor settings (`"block": "16x16"`, `[16, 16]` or `256`), `// warpsight:` comments
//! in PTX and in `.cu` files (`grid=64x64 block=16,16 smem=1024 n=1048576`), and the CUDA
//! front end's launch sites, which fold to the same values. Each used to have its own
//! parser with its own spellings; they all go through this crate now, so a spelling
//! accepted in one place is accepted everywhere (docs/cuda.md § Stating a launch).
//!
//! The grammar:
//! - **dimensions**: `X`, `X,Y`, `X,Y,Z` (each part a value), or `XxY`, `XxYxZ` (parts
//!   that are plain integers, `x` or `X`); missing dimensions are 1; every dimension is a
//!   positive 32-bit integer. `0x40` is 0 by 40 (an error); hexadecimal is written in
//!   parentheses, `(0x40)`.
//! - **values**: C++ integer constant expressions: literals (decimal, `0x`, `0b`, octal,
//!   `'` or `_` separators, `u`/`l` suffixes, integral floating literals such as `1e6`),
//!   `+ - * / % << >> & | ^ ~ !`, comparisons, `? :` and parentheses. Names are known only
//!   where the caller supplies an evaluator that knows them (a `.cu` annotation folds
//!   `n=N` against the file's macros and constants); the default evaluator has none.
//! - **items** (annotations): whitespace-separated `key=value`; `grid` and `block` take
//!   dimensions; `smem` (also `dynamic_smem`, `dyn_smem`) takes bytes; `footprint` takes
//!   the bytes the kernel's data-dependent accesses range over (a gather's table, a
//!   pointer chase's buffer: addresses no analysis can follow); every other key is a
//!   kernel argument or source variable value. No spaces inside a value.
//! - **loop annotations**: `trips=N` alone, on or just before a loop, states the loop's
//!   trip count where no analysis can read it (a loop that ends on data: an escape-time
//!   iteration, a convergence test, a CSR row); a value from 0 to 10^9, an integer
//!   constant expression or a decimal (`37.5`, an average over the threads).
//! - **argument names** (`--arg NAME=VALUE`): an identifier, or `argv[K]` for the `K`-th
//!   command-line argument a host program converts with `atoi`/`strtol`/`std::stoi`.
//!
//! This crate is pure: no IO, no dependency beyond serde. Errors are sentences without a
//! final period, naming the item that could not be read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A partially known launch: what one source says (the settings, an annotation, a launch
/// site). Fields a source does not give are `None` (or absent from `args`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialLaunch {
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// Dynamic shared memory per block in bytes.
    pub dynamic_smem: Option<u32>,
    /// Kernel argument (or source variable) values by name.
    pub args: BTreeMap<String, i64>,
    /// Bytes the kernel's data-dependent accesses range over (`footprint=`), where the
    /// user knows it: the size of a gather's table or of a pointer chase's buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<u64>,
    /// Bytes allocated for pointer arguments, by parameter name, where the host code
    /// allocates them with a size the CUDA front end folds (`cudaMalloc(&d_x, n *
    /// sizeof(float))` before the launch): what a data-dependent access through that
    /// pointer ranges over.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub array_bytes: BTreeMap<String, u64>,
}

impl PartialLaunch {
    pub fn is_empty(&self) -> bool {
        self.grid.is_none()
            && self.block.is_none()
            && self.dynamic_smem.is_none()
            && self.args.is_empty()
            && self.footprint.is_none()
            && self.array_bytes.is_empty()
    }
}

/// An evaluator of value expressions: the default one ([`eval_const`]) knows no names;
/// the CUDA front end supplies one that folds a file's macros and constants.
pub type Eval<'e> = dyn FnMut(&str) -> Result<i64, String> + 'e;

/// Parses dimensions with the default evaluator: `256`, `16x16`, `16,16,1`, `8X8X4`.
pub fn parse_dims(s: &str) -> Result<[u32; 3], String> {
    parse_dims_with(s, &mut eval_const)
}

/// Parses dimensions, folding each part with `eval`.
pub fn parse_dims_with(s: &str, eval: &mut Eval<'_>) -> Result<[u32; 3], String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("expected X, XxY or XxYxZ (or X,Y,Z), got nothing".to_string());
    }
    let parts: Vec<&str> = if s.contains(',') {
        s.split(',').collect()
    } else {
        let by_x: Vec<&str> = s.split(['x', 'X']).collect();
        // `16x16` and also `0x40`: between plain integers an `x` separates dimensions
        // (so `0x40` is 0 by 40, an error, as it always was for `--grid`); hexadecimal
        // is written in parentheses, `(0x40)`.
        let plain = by_x.len() > 1
            && by_x
                .iter()
                .all(|p| !p.trim().is_empty() && p.trim().bytes().all(|b| b.is_ascii_digit()));
        if plain { by_x } else { vec![s] }
    };
    if parts.len() > 3 {
        return Err(format!("`{s}`: at most three dimensions (X, XxY or XxYxZ)"));
    }
    let mut values = Vec::with_capacity(parts.len());
    for p in &parts {
        let v = eval(p.trim()).map_err(|e| format!("`{s}`: {e}"))?;
        values.push(v);
    }
    dims_from_parts(&values).map_err(|e| format!("`{s}`: {e}"))
}

/// Dimensions as people read them, in hovers, tables and messages: `256`, `16×16`,
/// `8×8×4` (trailing 1s left out). The launch grammar's own spelling, for text that is
/// read back as code (annotations, flags), is [`dims_spec`].
pub fn display_dims(d: [u32; 3]) -> String {
    join_dims(d, "×")
}

/// Dimensions in the launch grammar, as [`parse_dims`] reads them back: `256`, `16x16`,
/// `8x8x4`.
pub fn dims_spec(d: [u32; 3]) -> String {
    join_dims(d, "x")
}

fn join_dims(d: [u32; 3], sep: &str) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}{sep}{y}"),
        [x, y, z] => format!("{x}{sep}{y}{sep}{z}"),
    }
}

/// Dimensions from one to three numbers (the editor's `[16, 16]` or `256`): each must be
/// a positive 32-bit integer; missing ones are 1.
pub fn dims_from_parts(parts: &[i64]) -> Result<[u32; 3], String> {
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!(
            "expected one to three dimensions, got {}",
            parts.len()
        ));
    }
    let mut d = [1u32; 3];
    for (i, v) in parts.iter().enumerate() {
        d[i] = u32::try_from(*v)
            .ok()
            .filter(|x| *x > 0)
            .ok_or_else(|| format!("dimension {v} is not a positive 32-bit integer"))?;
    }
    Ok(d)
}

/// `true` for a name `--arg` accepts: an identifier, or `NAME[K]` (`argv[1]`).
pub fn valid_arg_name(name: &str) -> bool {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if let Some((base, rest)) = name.split_once('[') {
        return ident(base)
            && rest
                .strip_suffix(']')
                .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
    }
    // A bare index (`--arg 0=5`, the PTX parameter position) is accepted too.
    ident(name) || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
}

/// The value of a floating-point literal with a fractional part (`0.01`, `-2.5f`, `1e-3`),
/// which no integer evaluator folds: a kernel's `float` or `double` parameter such as a
/// SAXPY's `a` or an N-body softening term. `None` for anything else (an integral float
/// such as `2.0` is an integer to [`parse_int`]).
///
/// Such a value is accepted and not used: the analysis folds integer arguments only (trip
/// counts, addresses, guards), and a floating-point argument steers none of them in the
/// kernels it models; a loop counted in floats (`for (t = 0; t < t_end; t += dt)`) stays
/// an unknown trip count.
pub fn float_literal(value: &str) -> Option<f64> {
    let v = value.trim();
    let body = v.strip_prefix(['-', '+']).unwrap_or(v);
    let body = body.strip_suffix(['f', 'F']).unwrap_or(body);
    let lower = body.to_ascii_lowercase();
    if lower.starts_with("0x") || !lower.contains(['.', 'e']) || !lower.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let f: f64 = v.trim_end_matches(['f', 'F']).parse().ok()?;
    (f.is_finite() && f.fract() != 0.0).then_some(f)
}

/// A kernel argument's value as written (`--arg`, an annotation, a validate row).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue {
    /// An integer or integer constant expression (`1<<20`), folded: what the analysis uses
    /// (trip counts, addresses, guards).
    Int(i64),
    /// A floating-point literal with a fractional part ([`float_literal`]): accepted and not
    /// used, since the analysis folds integer arguments only.
    Float(f64),
}

/// Folds an argument's value with `eval`; a value `eval` cannot fold that is a
/// floating-point literal ([`float_literal`]) is [`ArgValue::Float`], anything else is
/// `eval`'s error.
pub fn parse_value_with(value: &str, eval: &mut Eval<'_>) -> Result<ArgValue, String> {
    let value = value.trim();
    match eval(value) {
        Ok(v) => Ok(ArgValue::Int(v)),
        Err(e) => float_literal(value).map(ArgValue::Float).ok_or(e),
    }
}

/// Parses `NAME=VALUE` (`--arg`) with the default evaluator.
pub fn parse_arg(s: &str) -> Result<(String, ArgValue), String> {
    parse_arg_with(s, &mut eval_const)
}

/// Parses `NAME=VALUE`, folding the value with `eval` ([`parse_value_with`]).
pub fn parse_arg_with(s: &str, eval: &mut Eval<'_>) -> Result<(String, ArgValue), String> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(format!("`{s}`: expected NAME=VALUE"));
    };
    let name = name.trim();
    if !valid_arg_name(name) {
        return Err(format!(
            "`{s}`: `{name}` is not a name (an identifier, or argv[K])"
        ));
    }
    let v = parse_value_with(value, eval).map_err(|e| format!("`{s}`: {e}"))?;
    Ok((name.to_string(), v))
}

/// The keys of an annotation item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key<'t> {
    Grid,
    Block,
    Smem,
    /// `footprint`: bytes the data-dependent accesses range over.
    Footprint,
    /// `bytes.NAME`: bytes allocated for pointer argument NAME (what a data-dependent
    /// access through it ranges over).
    Bytes(&'t str),
    /// `trips`: a loop's trip count, on a loop annotation ([`parse_trips`]).
    Trips,
    /// A kernel argument or source variable.
    Value(&'t str),
}

impl<'t> Key<'t> {
    /// The key of an item: `grid`, `block`, `smem`/`dynamic_smem`/`dyn_smem`, `footprint`,
    /// `bytes.NAME`, or a name.
    pub fn of(key: &'t str) -> Key<'t> {
        match key {
            "grid" => Key::Grid,
            "block" => Key::Block,
            "smem" | "dynamic_smem" | "dyn_smem" => Key::Smem,
            "footprint" => Key::Footprint,
            "trips" => Key::Trips,
            _ => match key.strip_prefix("bytes.") {
                Some(name) => Key::Bytes(name),
                None => Key::Value(key),
            },
        }
    }
}

/// Parses the items of an annotation (`grid=64x64 block=16,16 smem=1024 n=1<<20`),
/// folding values with `eval`. Returns what was read and one error per item that could
/// not be.
pub fn parse_items(text: &str, eval: &mut Eval<'_>) -> (PartialLaunch, Vec<String>) {
    let mut launch = PartialLaunch::default();
    let mut errors = Vec::new();
    for item in text.split_whitespace() {
        let Some((key, value)) = item.split_once('=') else {
            errors.push(format!("`{item}` is not NAME=VALUE"));
            continue;
        };
        match Key::of(key) {
            Key::Grid | Key::Block => match parse_dims_with(value, eval) {
                Ok(d) if key == "grid" => launch.grid = Some(d),
                Ok(d) => launch.block = Some(d),
                Err(e) => errors.push(format!("{key} {e}")),
            },
            Key::Smem => match eval(value)
                .map_err(|e| format!("`{value}`: {e}"))
                .and_then(|v| {
                    u32::try_from(v)
                        .map_err(|_| format!("`{value}` is not a byte count (0 to 4294967295)"))
                }) {
                Ok(v) => launch.dynamic_smem = Some(v),
                Err(e) => errors.push(format!("{key} {e}")),
            },
            Key::Footprint => match parse_footprint_with(value, eval) {
                Ok(v) => launch.footprint = Some(v),
                Err(e) => errors.push(format!("{key} {e}")),
            },
            Key::Trips => errors.push(format!("`{item}` states a loop's trip count: write it alone in its own comment, on or just before the loop")),
            Key::Bytes(name) => {
                if !valid_arg_name(name) {
                    errors.push(format!("`{item}`: `{name}` is not a name"));
                    continue;
                }
                match parse_footprint_with(value, eval) {
                    Ok(v) => {
                        launch.array_bytes.insert(name.to_string(), v);
                    }
                    Err(e) => errors.push(format!("{key} {e}")),
                }
            }
            Key::Value(name) => {
                if !valid_arg_name(name) {
                    errors.push(format!("`{item}`: `{name}` is not a name"));
                    continue;
                }
                match parse_value_with(value, eval) {
                    Ok(ArgValue::Int(v)) => {
                        launch.args.insert(name.to_string(), v);
                    }
                    // Accepted and not used (see `ArgValue::Float`).
                    Ok(ArgValue::Float(_)) => {}
                    Err(e) => errors.push(format!("`{item}`: {e}")),
                }
            }
        }
    }
    (launch, errors)
}

/// The most a `trips` item may state: 10^9, the bound of `--default-trip-count` too
/// (`analysis::settings::limits::MAX_DEFAULT_TRIP_COUNT`).
pub const MAX_TRIPS: f64 = 1e9;

/// `true` when an annotation's items state a loop's trip count (a `trips=` item): the
/// annotation then belongs to the loop it stands on or before, read with [`parse_trips`],
/// not to a kernel or a launch.
pub fn is_loop_annotation(text: &str) -> bool {
    text.split_whitespace().any(|item| item.split_once('=').is_some_and(|(k, _)| Key::of(k) == Key::Trips))
}

/// Parses a loop annotation (`trips=1000`, `trips=37.5`, `trips=MAX_ITER / 4`), folding
/// the value with `eval`: the trip count (0 to [`MAX_TRIPS`]) and one error per item that
/// could not be read; any other item is an error (a launch is stated before the kernel).
pub fn parse_trips(text: &str, eval: &mut Eval<'_>) -> (Option<f64>, Vec<String>) {
    let mut trips = None;
    let mut errors = Vec::new();
    let mut others = Vec::new();
    for item in text.split_whitespace() {
        let Some((key, value)) = item.split_once('=').filter(|(k, _)| Key::of(k) == Key::Trips) else {
            others.push(item);
            continue;
        };
        let v = match parse_value_with(value, eval) {
            Ok(ArgValue::Int(v)) => v as f64,
            Ok(ArgValue::Float(f)) => f,
            Err(e) => {
                errors.push(format!("{key} `{value}`: {e}"));
                continue;
            }
        };
        if (0.0..=MAX_TRIPS).contains(&v) {
            trips = Some(v);
        } else {
            errors.push(format!("{key} `{value}` is not a trip count (0 to 10^9)"));
        }
    }
    if !others.is_empty() {
        errors.push(format!(
            "`{}`: a loop annotation states only `trips=N` (a launch is stated in a comment before the kernel or its launch)",
            others.join(" ")
        ));
    }
    (trips, errors)
}

/// The most bytes a `footprint` may state: 2^48 (256 TiB), beyond any GPU's memory.
pub const MAX_FOOTPRINT_BYTES: u64 = 1 << 48;

/// Parses a `footprint` value (bytes, a constant expression such as `4<<20`) with the
/// default evaluator.
pub fn parse_footprint(s: &str) -> Result<u64, String> {
    parse_footprint_with(s, &mut eval_const)
}

/// Parses a `footprint` value, folding it with `eval`: a byte count from 1 to 2^48.
pub fn parse_footprint_with(s: &str, eval: &mut Eval<'_>) -> Result<u64, String> {
    let v = eval(s.trim()).map_err(|e| format!("`{s}`: {e}"))?;
    u64::try_from(v)
        .ok()
        .filter(|b| (1..=MAX_FOOTPRINT_BYTES).contains(b))
        .ok_or_else(|| format!("`{s}` is not a byte count (1 to 2^48)"))
}

/// The text after `warpsight:` in a comment body (the text after `//`, or inside
/// `/* */`), trimmed; `None` when the comment is not an annotation.
pub fn annotation_body(comment: &str) -> Option<&str> {
    let t = comment.trim_start_matches(['/', '*', '!']).trim_start();
    let rest = t.strip_prefix("warpsight:")?;
    Some(rest.trim().trim_end_matches("*/").trim())
}

/// The default evaluator: integer constant expressions without names.
pub fn eval_const(s: &str) -> Result<i64, String> {
    let toks = tokenize(s)?;
    if toks.is_empty() {
        return Err("expected an integer, got nothing".to_string());
    }
    let mut p = Parser {
        toks: &toks,
        pos: 0,
    };
    let v = p.ternary(0)?;
    if p.pos != toks.len() {
        return Err(format!("`{s}` is not an integer constant expression"));
    }
    Ok(v)
}

#[derive(Debug, Clone, PartialEq)]
enum T<'s> {
    Num(i64),
    Name(&'s str),
    Op(&'s str),
}

const OPS: &[&str] = &[
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "&", "|", "^", "~",
    "!", "<", ">", "(", ")", "?", ":",
];

fn tokenize(s: &str) -> Result<Vec<T<'_>>, String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() {
                let d = b[i];
                let exp_sign = (d == b'+' || d == b'-')
                    && matches!(b[i - 1], b'e' | b'E')
                    && !s[start..i].starts_with("0x")
                    && !s[start..i].starts_with("0X");
                if d.is_ascii_alphanumeric() || d == b'\'' || d == b'_' || d == b'.' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            let lit = &s[start..i];
            out.push(T::Num(
                parse_int(lit).ok_or_else(|| format!("`{lit}` is not an integer"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(T::Name(&s[start..i]));
        } else {
            let rest = &s[i..];
            let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
                return Err(format!(
                    "unexpected `{}` in `{s}`",
                    rest.chars().next().unwrap_or(' ')
                ));
            };
            out.push(T::Op(op));
            i += op.len();
        }
    }
    Ok(out)
}

/// Parses a C++ integer literal: decimal, hex, octal, binary, `'` or `_` separators,
/// `u`/`l`/`z` suffixes; a floating literal with an integral value (`1e6`) too.
pub fn parse_int(text: &str) -> Option<i64> {
    let t: String = text.chars().filter(|c| *c != '\'' && *c != '_').collect();
    let lower = t.to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower.strip_prefix("0x") {
        (h.trim_end_matches(['u', 'l', 'z']), 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b.trim_end_matches(['u', 'l', 'z']), 2)
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
    if digits.is_empty() {
        return None;
    }
    i64::from_str_radix(digits, radix).ok()
}

struct Parser<'t, 's> {
    toks: &'t [T<'s>],
    pos: usize,
}

impl Parser<'_, '_> {
    fn peek_op(&self) -> Option<&str> {
        match self.toks.get(self.pos) {
            Some(T::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn ternary(&mut self, depth: u32) -> Result<i64, String> {
        if depth > 64 {
            return Err("expression nested too deeply".to_string());
        }
        let c = self.binary(0, depth)?;
        if self.peek_op() == Some("?") {
            self.pos += 1;
            let a = self.ternary(depth + 1)?;
            if self.peek_op() != Some(":") {
                return Err("`?` without `:`".to_string());
            }
            self.pos += 1;
            let b = self.ternary(depth + 1)?;
            return Ok(if c != 0 { a } else { b });
        }
        Ok(c)
    }

    fn binary(&mut self, min_prec: u8, depth: u32) -> Result<i64, String> {
        let mut lhs = self.unary(depth)?;
        while let Some(op) = self.peek_op() {
            let Some(prec) = binary_precedence(op) else { break };
            if prec < min_prec {
                break;
            }
            let op = op.to_string();
            self.pos += 1;
            let rhs = self.binary(prec + 1, depth)?;
            lhs = binary_op(&op, lhs, rhs)
                .ok_or_else(|| format!("{lhs} {op} {rhs} overflows or divides by zero"))?;
        }
        Ok(lhs)
    }

    fn unary(&mut self, depth: u32) -> Result<i64, String> {
        if depth > 64 {
            return Err("expression nested too deeply".to_string());
        }
        let t = self
            .toks
            .get(self.pos)
            .cloned()
            .ok_or_else(|| "expression ends early".to_string())?;
        self.pos += 1;
        match t {
            T::Num(v) => Ok(v),
            T::Name(n) => Err(format!(
                "`{n}` is not a number (names are known only in a `.cu` annotation)"
            )),
            T::Op("-") => self
                .unary(depth + 1)?
                .checked_neg()
                .ok_or_else(|| "overflow".to_string()),
            T::Op("+") => self.unary(depth + 1),
            T::Op("!") => Ok(i64::from(self.unary(depth + 1)? == 0)),
            T::Op("~") => Ok(!self.unary(depth + 1)?),
            T::Op("(") => {
                let v = self.ternary(depth + 1)?;
                if self.peek_op() != Some(")") {
                    return Err("unbalanced parentheses".to_string());
                }
                self.pos += 1;
                Ok(v)
            }
            T::Op(o) => Err(format!("unexpected `{o}`")),
        }
    }
}

/// The precedence of a C++ binary integer operator (higher binds tighter; C++ standard,
/// [expr]), `None` for anything else. Shared with the CUDA front end's constant folding.
pub fn binary_precedence(op: &str) -> Option<u8> {
    Some(match op {
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
        _ => return None,
    })
}

/// One C++ binary integer operator on 64-bit values; overflow, division by zero and
/// shifts out of range give `None`. Shared with the CUDA front end's constant folding.
pub fn binary_op(op: &str, lhs: i64, rhs: i64) -> Option<i64> {
    Some(match op {
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
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn dims_are_displayed_one_way_and_written_back_in_the_grammar() {
        assert_eq!(super::display_dims([256, 1, 1]), "256");
        assert_eq!(super::display_dims([16, 16, 1]), "16×16");
        assert_eq!(super::display_dims([8, 1, 4]), "8×1×4");
        for d in [[256, 1, 1], [32, 8, 1], [8, 8, 4]] {
            assert_eq!(super::parse_dims(&super::dims_spec(d)), Ok(d));
        }
        assert_eq!(super::dims_spec([32, 8, 1]), "32x8");
    }

    use super::*;

    #[test]
    fn floating_point_arguments_are_recognised_and_accepted_without_use() {
        for (v, f) in [("0.01", 0.01), ("-2.5f", -2.5), ("1e-3", 1e-3), (".5", 0.5), ("+1.5F", 1.5)] {
            assert_eq!(float_literal(v), Some(f), "{v}");
        }
        // Integers, integral floats (integers to `parse_int`), hex, names and junk are not.
        for v in ["3", "2.0", "1e6", "0x1p3", "n", "1<<20", "", "nan", "inf", "1.5.2"] {
            assert_eq!(float_literal(v), None, "{v}");
        }
        assert_eq!(parse_arg("eps=0.01"), Ok(("eps".to_string(), ArgValue::Float(0.01))));
        assert_eq!(parse_arg("eps=1"), Ok(("eps".to_string(), ArgValue::Int(1))));
        assert_eq!(parse_arg("eps=2.0"), Ok(("eps".to_string(), ArgValue::Int(2))));
        assert_eq!(parse_arg("eps=1e-3f"), Ok(("eps".to_string(), ArgValue::Float(1e-3))));
        assert!(parse_arg("1x=0.5").is_err());
        assert!(parse_arg("eps=0.5.5").is_err());
        let (l, errors) = parse_items("grid=64 eps2=0.01 n=1<<10 alpha=-0.5f", &mut eval_const);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(l.args, [("n".to_string(), 1024)].into());
        assert_eq!(l.grid, Some([64, 1, 1]));
    }

    #[test]
    fn every_dimension_spelling() {
        for (s, d) in [
            ("256", [256, 1, 1]),
            ("16x16", [16, 16, 1]),
            ("8X8X4", [8, 8, 4]),
            ("16,16", [16, 16, 1]),
            ("16, 16, 2", [16, 16, 2]),
            ("1<<10", [1024, 1, 1]),
            ("(0x40)", [64, 1, 1]),
            ("0x40,2", [64, 2, 1]),
            ("(1024+15)/16,4", [64, 4, 1]),
            ("16*16", [256, 1, 1]),
        ] {
            assert_eq!(parse_dims(s), Ok(d), "{s}");
        }
        for bad in [
            "",
            "0",
            "16x0",
            "1,2,3,4",
            "abc",
            "-4",
            "4294967296",
            "16x",
            "x16",
        ] {
            assert!(parse_dims(bad).is_err(), "{bad}");
        }
        assert_eq!(dims_from_parts(&[16, 16]), Ok([16, 16, 1]));
        assert!(dims_from_parts(&[]).is_err());
    }

    #[test]
    fn values_and_names() {
        assert_eq!(eval_const("1'000'000u / 3 % 7"), Ok(1_000_000 / 3 % 7));
        assert_eq!(eval_const("1_048_576"), Ok(1 << 20));
        assert_eq!(eval_const("0b101 + 017 + 0x1F"), Ok(5 + 15 + 31));
        assert_eq!(eval_const("1e6"), Ok(1_000_000));
        assert_eq!(eval_const("2 > 1 ? -3 : 4"), Ok(-3));
        assert!(eval_const("1/0").unwrap_err().contains("divides by zero"));
        assert!(eval_const("N").unwrap_err().contains("`N` is not a number"));
        assert!(eval_const("(1").is_err());
        assert!(eval_const("1 2").is_err());
        assert_eq!(parse_arg("n=1<<20"), Ok(("n".to_string(), ArgValue::Int(1 << 20))));
        assert_eq!(parse_arg("argv[1]=4096"), Ok(("argv[1]".to_string(), ArgValue::Int(4096))));
        assert_eq!(parse_arg("param_2 = 7"), Ok(("param_2".to_string(), ArgValue::Int(7))));
        assert!(parse_arg("n").is_err());
        assert!(parse_arg("a b=1").is_err());
        assert!(parse_arg("argv[x]=1").is_err());
    }

    #[test]
    fn annotation_items() {
        let (l, errors) = parse_items(
            "grid=64x64 block=16,16 smem=1024 N=1<<10 m=0x10",
            &mut eval_const,
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            l,
            PartialLaunch {
                grid: Some([64, 64, 1]),
                block: Some([16, 16, 1]),
                dynamic_smem: Some(1024),
                args: [("N".to_string(), 1024), ("m".to_string(), 16)].into(),
                footprint: None,
                array_bytes: Default::default(),
            }
        );
        let (l, errors) = parse_items("footprint=4<<20", &mut eval_const);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(l.footprint, Some(4 << 20));
        assert!(!l.is_empty());
        for bad in ["footprint=0", "footprint=-1", "footprint=x", "footprint=(1<<62)"] {
            let (l, errors) = parse_items(bad, &mut eval_const);
            assert_eq!((l.footprint, errors.len()), (None, 1), "{bad}: {errors:?}");
        }
        // `bytes.NAME`: a pointer argument's allocation, as a footprint is read.
        let (l, errors) = parse_items("bytes.x=16<<20 bytes.bins=1024", &mut eval_const);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(l.array_bytes, [("bins".to_string(), 1024), ("x".to_string(), 16 << 20)].into());
        assert!(!l.is_empty());
        for bad in ["bytes.x=0", "bytes.=4", "bytes.1x=4"] {
            let (l, errors) = parse_items(bad, &mut eval_const);
            assert_eq!((l.array_bytes.len(), errors.len()), (0, 1), "{bad}: {errors:?}");
        }
        let (l, _) = parse_items("dynamic_smem=8 dyn_smem=16", &mut eval_const);
        assert_eq!(l.dynamic_smem, Some(16));
        let (l, errors) = parse_items("grid=abc block=0 k smem=-1 x=y", &mut eval_const);
        assert!(l.is_empty());
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert_eq!(annotation_body("// warpsight: grid=4 */"), Some("grid=4"));
        assert_eq!(annotation_body(" plain comment"), None);
        assert_eq!(annotation_body(" warpsight: grid=4 */"), Some("grid=4"));
        assert_eq!(annotation_body("/ warpsight:block=2"), Some("block=2"));
    }

    #[test]
    fn loop_annotations() {
        assert!(is_loop_annotation("trips=256"));
        assert!(is_loop_annotation("n=4 trips=8"));
        assert!(!is_loop_annotation("grid=4 block=32 n=8"));
        assert_eq!(parse_trips("trips=1<<8", &mut eval_const), (Some(256.0), vec![]));
        assert_eq!(parse_trips("trips=37.5", &mut eval_const), (Some(37.5), vec![]));
        assert_eq!(parse_trips("trips=0", &mut eval_const), (Some(0.0), vec![]));
        for bad in ["trips=-1", "trips=2e9", "trips=x"] {
            let (t, errors) = parse_trips(bad, &mut eval_const);
            assert_eq!((t, errors.len()), (None, 1), "{bad}: {errors:?}");
        }
        // Launch items do not belong on a loop, and `trips` does not belong on a launch.
        let (t, errors) = parse_trips("trips=8 grid=4", &mut eval_const);
        assert_eq!((t, errors.len()), (Some(8.0), 1), "{errors:?}");
        let (l, errors) = parse_items("grid=4 trips=8", &mut eval_const);
        assert_eq!((l.grid, l.args.len(), errors.len()), (Some([4, 1, 1]), 0, 1), "{errors:?}");
    }
}
