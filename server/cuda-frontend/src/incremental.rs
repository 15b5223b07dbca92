//! Kernel-by-kernel recompiles with NVRTC: after an edit inside one kernel, only that
//! kernel is compiled again, and its `.entry` replaces the old one in the last PTX.
//!
//! Why: NVRTC spends almost all of an edit's compile in code generation, one kernel after
//! another (`testdata/bench_300.cu`: 21 kernels, about 165 ms on an idle core; its headers
//! cost 3 ms, so a precompiled header cannot help: docs/benchmarks.md). A keystroke
//! changes one kernel, so compiling that one kernel is what an editor needs.
//!
//! How, and why it is safe:
//! - The device-only view is split into *chunks*, one per `__global__` definition (from
//!   the statement start, `template<...>` included, to its closing brace), and the *rest*:
//!   the text with every chunk blanked by spaces, newlines kept. Anything that is not a
//!   kernel (a `__device__` function, a macro, a type, an include) is in the rest.
//! - An incremental compile is tried only when the rest is byte-identical to the last
//!   compile's (so every chunk keeps its lines and every declaration is the same), the same
//!   chunks exist, and some but not all changed. NVRTC then compiles the rest plus the
//!   changed chunks only (the others blanked, lines kept: `.loc` lines stay exact).
//! - The splice is checked, not assumed: every module-level item of the partial PTX
//!   (`.global`, `.const`, `.func`, `.extern`, `$str`, `.file`, the header) must appear, byte
//!   for byte, in the last PTX; otherwise (a new device function or string constant, say)
//!   the file is compiled whole. Entries are associated with chunks by kernel name, and a
//!   name that two chunks define (overloads) disables the scheme for the file.
//! - ptxas runs on the partial module only; the other kernels keep their resources (an
//!   entry's registers and shared memory do not depend on other entries).
//!
//! `tests/with_cuda.rs` `an_incremental_nvrtc_compile_matches_a_full_one` checks that the
//! spliced PTX and resources equal a full compile's after edits.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

use crate::diagnostics::CompilerDiagnostic;
use crate::lex::lex;
use crate::mapping::base_name;
use crate::ptxas::KernelResources;

/// One `__global__` definition of the device-only text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Bytes of the definition, from its statement start to its closing brace.
    pub range: Range<usize>,
    /// The kernel's unqualified name (`saxpy`, `dyn` for `ops::dyn`).
    pub name: String,
    /// 1-based lines the chunk spans.
    pub lines: Range<u32>,
    /// A hash of its text and first line.
    pub key: String,
}

/// The device-only text split into kernels and the rest.
#[derive(Debug, Clone)]
pub(crate) struct Split {
    pub chunks: Vec<Chunk>,
    /// A hash of the text outside the chunks and of the lines each chunk spans.
    pub rest: String,
}

fn sha(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Splits `src`; `None` when it cannot be split safely: no kernel, a kernel whose body
/// holds a preprocessor directive other than `#pragma` (blanking it could unbalance an
/// `#if` or drop a `#define`), or one whose name cannot be read.
pub(crate) fn split(src: &str) -> Option<Split> {
    let lx = lex(src);
    let toks = &lx.tokens;
    let mut chunks = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if !toks[i].is("__global__") {
            i += 1;
            continue;
        }
        // The statement start: just after the previous `;`, `{` or `}`.
        let mut s = i;
        while s > 0 && !matches!(toks[s - 1].text, ";" | "{" | "}") {
            s -= 1;
        }
        // The body: the first `{` at parenthesis depth 0; a `;` first is a declaration.
        let (mut j, mut parens) = (i + 1, 0i32);
        let mut name: Option<&str> = None;
        let mut open = None;
        while j < toks.len() {
            match toks[j].text {
                "(" => {
                    if parens == 0 && name.is_none() {
                        name = toks[..j].iter().rev().take(1).find(|t| t.is_ident() && t.text != "__launch_bounds__").map(|t| t.text);
                    }
                    parens += 1;
                }
                ")" => parens -= 1,
                ";" if parens == 0 => break,
                "{" if parens == 0 => {
                    open = Some(j);
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let Some(open) = open else {
            i = j + 1;
            continue;
        };
        let mut depth = 0i32;
        let mut close = None;
        for (k, t) in toks.iter().enumerate().skip(open) {
            match t.text {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close?;
        let name = name?.to_string();
        let range = toks[s].offset..toks[close].offset + 1;
        let body = &src[range.clone()];
        // A `#pragma` (`#pragma unroll`) stays with its kernel; any other directive
        // (a conditional, a `#define` later code may use) would change the rest.
        let directive = |l: &str| l.trim_start().strip_prefix('#').is_some_and(|d| !d.trim_start().starts_with("pragma"));
        if body.lines().any(directive) {
            return None;
        }
        let lines = toks[s].line..toks[close].line + 1;
        let key = sha(&[body.as_bytes(), &lines.start.to_le_bytes()]);
        chunks.push(Chunk { range, name, lines, key });
        i = close + 1;
    }
    if chunks.is_empty() {
        return None;
    }
    // The rest as it matters to the compiler: the text outside the chunks, and where each
    // chunk is by the lines it spans (not its length: typing in a kernel moves the bytes
    // after it, not the lines).
    let mut rest = String::with_capacity(src.len());
    let mut at = 0;
    for c in &chunks {
        rest.push_str(&src[at..c.range.start]);
        rest.push('\u{0}');
        rest.extend(std::iter::repeat_n('\n', src[c.range.clone()].matches('\n').count()));
        at = c.range.end;
    }
    rest.push_str(&src[at..]);
    Some(Split { rest: sha(&[rest.as_bytes()]), chunks })
}

/// Where one `__global__` definition is in a text, and a hash of its text: an editor can
/// tell which kernels an edit left untouched (and by how many lines they moved) before the
/// compile of the new text finishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSpan {
    /// The kernel's unqualified name.
    pub name: String,
    /// 1-based lines of the definition, `template<...>` included.
    pub lines: Range<u32>,
    /// A hash of the definition's text (not of its position).
    pub text_hash: String,
}

/// The `__global__` definitions of `text`, in order; empty when it cannot be split (see
/// [`split`]: a kernel holding a preprocessor conditional or `#define`).
pub fn kernel_spans(text: &str) -> Vec<KernelSpan> {
    let Some(s) = split(text) else { return Vec::new() };
    s.chunks
        .into_iter()
        .map(|c| KernelSpan { text_hash: sha(&[text[c.range.clone()].as_bytes()]), name: c.name, lines: c.lines })
        .collect()
}

/// `src` with every chunk but those in `keep` replaced by spaces (newlines kept).
pub(crate) fn blank_except(src: &str, chunks: &[Chunk], keep: &[usize]) -> String {
    let mut bytes = src.as_bytes().to_vec();
    for (ci, c) in chunks.iter().enumerate() {
        if keep.contains(&ci) {
            continue;
        }
        for b in &mut bytes[c.range.clone()] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces over whole chunks (which start and end
    // on token boundaries), so the text is still UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

/// A top-level item of a PTX module: an entry (with the comments just before it), or
/// anything else (a directive, a declaration, a `.func`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    entry: Option<String>,
    text: String,
}

/// The name in `.visible .entry NAME(`.
fn entry_name(line: &str) -> Option<String> {
    let rest = line.split(".entry").nth(1)?.trim_start();
    let name: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != '(').collect();
    (!name.is_empty()).then_some(name)
}

/// Splits a PTX module into its top-level items. An item ends at the end of a line where
/// no brace or parenthesis is open and: it ends with `;`, or it closed a brace block, or no
/// parenthesis or brace was ever opened in it (a directive such as `.version 9.5`).
fn items(ptx: &str) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut comments = String::new();
    let mut cur: Option<Item> = None;
    let (mut braces, mut parens) = (0i32, 0i32);
    let (mut had_paren, mut had_brace) = (false, false);
    for line in ptx.split_inclusive('\n') {
        let code = line.split("//").next().unwrap_or("");
        let t = line.trim();
        if cur.is_none() {
            if t.is_empty() || t.starts_with("//") {
                comments.push_str(line);
                continue;
            }
            let entry = if code.contains(".entry") { entry_name(code) } else { None };
            let mut text = std::mem::take(&mut comments);
            if entry.is_none() && !text.is_empty() {
                out.push(Item { entry: None, text });
                text = String::new();
            }
            cur = Some(Item { entry, text });
            (had_paren, had_brace) = (false, false);
        }
        let Some(item) = cur.as_mut() else { continue };
        item.text.push_str(line);
        for c in code.chars() {
            match c {
                '{' => {
                    braces += 1;
                    had_brace = true;
                }
                '}' => braces -= 1,
                '(' => {
                    parens += 1;
                    had_paren = true;
                }
                ')' => parens -= 1,
                _ => {}
            }
        }
        let code_t = code.trim_end();
        let closed = braces == 0 && parens == 0;
        if closed
            && (code_t.ends_with(';') || (had_brace && code_t.ends_with('}')) || (!had_paren && !had_brace))
            && let Some(done) = cur.take()
        {
            out.push(done);
        }
    }
    if let Some(done) = cur.take() {
        out.push(done);
    }
    if !comments.is_empty() {
        out.push(Item { entry: None, text: comments });
    }
    out
}

/// The base PTX with the entries named in `replace` taken out and the entries of `partial`
/// put where the first of them was; `None` when `partial` has a module-level item that the
/// base lacks (a new declaration: compile whole).
fn splice(base: &str, partial: &str, replace: &HashSet<String>) -> Option<String> {
    let base_items = items(base);
    let part_items = items(partial);
    let base_other: HashSet<&str> = base_items.iter().filter(|i| i.entry.is_none()).map(|i| i.text.trim()).collect();
    for it in part_items.iter().filter(|i| i.entry.is_none()) {
        let t = it.text.trim();
        if t.lines().all(|l| l.trim().is_empty() || l.trim().starts_with("//")) {
            continue;
        }
        if !base_other.contains(t) {
            return None;
        }
    }
    let new_entries: Vec<&Item> = part_items.iter().filter(|i| i.entry.is_some()).collect();
    let mut out = String::with_capacity(base.len());
    let mut placed = false;
    for it in &base_items {
        if it.entry.as_ref().is_some_and(|n| replace.contains(n)) {
            if !placed {
                for e in &new_entries {
                    out.push_str(&e.text);
                }
                placed = true;
            }
            continue;
        }
        out.push_str(&it.text);
    }
    placed.then_some(out)
}

/// The last complete compile of one file with one set of options.
#[derive(Debug, Clone)]
struct Base {
    rest: String,
    chunk_keys: Vec<String>,
    /// Entry names per chunk.
    chunk_entries: Vec<Vec<String>>,
    ptx: String,
    resources: Vec<KernelResources>,
    diagnostics: Vec<CompilerDiagnostic>,
}

/// Bases by file and options; at most [`MAX_BASES`] (cleared when full).
fn bases() -> &'static Mutex<HashMap<String, Base>> {
    static B: OnceLock<Mutex<HashMap<String, Base>>> = OnceLock::new();
    B.get_or_init(|| Mutex::new(HashMap::new()))
}
const MAX_BASES: usize = 64;

/// What an incremental compile should do.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The text to compile: the rest plus the changed chunks.
    pub source: String,
    /// Base entries to replace.
    replace: HashSet<String>,
    /// The changed chunks' indices and lines.
    changed: Vec<usize>,
    changed_lines: Vec<Range<u32>>,
    split: Split,
    base: Base,
}

/// The plan for `src` (the device-only text) under `key` (file and options), when the last
/// compile allows one.
pub(crate) fn plan(key: &str, src: &str) -> Option<Plan> {
    let split = split(src)?;
    let base = bases().lock().ok()?.get(key)?.clone();
    if base.rest != split.rest || base.chunk_keys.len() != split.chunks.len() {
        return None;
    }
    let changed: Vec<usize> = (0..split.chunks.len()).filter(|i| base.chunk_keys[*i] != split.chunks[*i].key).collect();
    if changed.is_empty() || changed.len() == split.chunks.len() {
        return None;
    }
    let replace: HashSet<String> = changed.iter().flat_map(|i| base.chunk_entries[*i].iter().cloned()).collect();
    if replace.is_empty() {
        return None;
    }
    let source = blank_except(src, &split.chunks, &changed);
    let changed_lines = changed.iter().map(|i| split.chunks[*i].lines.clone()).collect();
    Some(Plan { source, replace, changed, changed_lines, split, base })
}

/// The result of an incremental compile, merged with the base.
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    pub ptx: String,
    /// The base's resources of the kernels that were not compiled again.
    pub kept_resources: Vec<KernelResources>,
    /// The base's diagnostics outside the changed kernels.
    pub kept_diagnostics: Vec<CompilerDiagnostic>,
}

impl Plan {
    /// How many kernels are compiled again, of how many.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.changed.len(), self.split.chunks.len())
    }

    /// Splices the partial PTX into the base; `None`: compile the file whole.
    pub(crate) fn merge(&self, partial_ptx: &str) -> Option<Merged> {
        let ptx = splice(&self.base.ptx, partial_ptx, &self.replace)?;
        let kept_resources = self.base.resources.iter().filter(|r| !self.replace.contains(&r.name)).cloned().collect();
        let kept_diagnostics = self
            .base
            .diagnostics
            .iter()
            .filter(|d| d.line.is_none_or(|l| !self.changed_lines.iter().any(|r| r.contains(&l))))
            .cloned()
            .collect();
        Some(Merged { ptx, kept_resources, kept_diagnostics })
    }

    /// Records the merged result as the new base.
    pub(crate) fn commit(self, key: &str, ptx: &str, resources: &[KernelResources], diagnostics: &[CompilerDiagnostic], partial_ptx: &str) {
        let mut base = self.base;
        let new_entries: Vec<String> = items(partial_ptx).into_iter().filter_map(|i| i.entry).collect();
        for ci in &self.changed {
            let name = &self.split.chunks[*ci].name;
            base.chunk_entries[*ci] = new_entries.iter().filter(|e| base_name(e) == *name).cloned().collect();
        }
        base.chunk_keys = self.split.chunks.iter().map(|c| c.key.clone()).collect();
        base.ptx = ptx.to_string();
        base.resources = resources.to_vec();
        base.diagnostics = diagnostics.to_vec();
        store(key.to_string(), base);
    }
}

fn store(key: String, base: Base) {
    if let Ok(mut m) = bases().lock() {
        if m.len() >= MAX_BASES && !m.contains_key(&key) {
            m.clear();
        }
        m.insert(key, base);
    }
}

/// Records a complete compile of `src` as the base for `key`, when every entry of `ptx`
/// belongs to exactly one chunk by name; otherwise forgets the key (no incremental compile
/// for this file).
pub(crate) fn record(key: &str, src: &str, ptx: &str, resources: &[KernelResources], diagnostics: &[CompilerDiagnostic]) {
    let forget = || {
        if let Ok(mut m) = bases().lock() {
            m.remove(key);
        }
    };
    let Some(split) = split(src) else { return forget() };
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (ci, c) in split.chunks.iter().enumerate() {
        if names.insert(c.name.as_str(), ci).is_some() {
            return forget();
        }
    }
    let mut chunk_entries = vec![Vec::new(); split.chunks.len()];
    for it in items(ptx) {
        let Some(e) = it.entry else { continue };
        match names.get(base_name(&e).as_str()) {
            Some(ci) => chunk_entries[*ci].push(e),
            None => return forget(),
        }
    }
    let base = Base {
        rest: split.rest.clone(),
        chunk_keys: split.chunks.iter().map(|c| c.key.clone()).collect(),
        chunk_entries,
        ptx: ptx.to_string(),
        resources: resources.to_vec(),
        diagnostics: diagnostics.to_vec(),
    };
    store(key.to_string(), base);
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "#include <cuda_runtime.h>\n__device__ float sq(float x) { return x * x; }\n__global__ void a(float* p) { p[threadIdx.x] = sq(p[threadIdx.x]); }\n// between\ntemplate <int N>\n__global__ void __launch_bounds__(256) b(float* p) {\n  if (threadIdx.x < N) { p[0] = 1; }\n}\ntemplate __global__ void b<4>(float*);\nnamespace ops { __global__ void c(int* q) { q[0] = 2; } }\n";

    #[test]
    fn kernels_are_split_from_the_rest() {
        let s = split(SRC).unwrap_or_else(|| panic!("no split"));
        let names: Vec<&str> = s.chunks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert!(SRC[s.chunks[1].range.clone()].starts_with("template <int N>"));
        assert!(SRC[s.chunks[1].range.clone()].ends_with("}\n}") || SRC[s.chunks[1].range.clone()].ends_with('}'));
        assert_eq!(s.chunks[1].lines, 5..9);
        // Blanking keeps every newline and the rest's bytes.
        let blank = blank_except(SRC, &s.chunks, &[0]);
        assert_eq!(blank.lines().count(), SRC.lines().count());
        assert!(blank.contains("__device__ float sq") && blank.contains("__global__ void a") && !blank.contains("void __launch_bounds__"));
        assert!(blank.contains("template __global__ void b<4>(float*);"), "a declaration is not a chunk");
        // An edit inside a kernel changes its key only; one outside changes the rest.
        let edited = SRC.replacen("p[0] = 1", "p[0] = 7", 1);
        let e = split(&edited).unwrap_or_else(|| panic!("no split"));
        assert_eq!(e.rest, s.rest);
        assert_eq!((e.chunks[0].key == s.chunks[0].key, e.chunks[1].key == s.chunks[1].key), (true, false));
        let outside = SRC.replacen("x * x", "x * x * x", 1);
        assert_ne!(split(&outside).map(|x| x.rest), Some(s.rest));
        // A preprocessor line inside a kernel: not split.
        assert!(split("__global__ void k(int* p) {\n#if 1\n p[0] = 1;\n#endif\n}\n").is_none());
    }

    const PTX: &str = "//\n// Generated\n//\n\n.version 9.5\n.target sm_80\n.address_size 64\n\n.global .align 4 .b8 g[8] = {0, 0, 0, 0, 0, 0, 0, 0};\n.func  (.param .b32 func_retval0) _Z2sqf(\n\t.param .b32 _Z2sqf_param_0\n)\n{\n\tret;\n}\n\t// .globl\t_Z1aPf\n.visible .entry _Z1aPf(\n\t.param .u64 _Z1aPf_param_0\n)\n.maxntid 256, 1, 1\n{\n\tret;\n}\n\t// .globl\t_Z1bPf\n.visible .entry _Z1bPf(\n\t.param .u64 _Z1bPf_param_0\n)\n{\n\tmov.u32 %r1, 1;\n\tret;\n}\n\t.file\t1 \"source.cu\"\n";

    #[test]
    fn ptx_items_and_splices() {
        let it = items(PTX);
        let entries: Vec<&str> = it.iter().filter_map(|i| i.entry.as_deref()).collect();
        assert_eq!(entries, ["_Z1aPf", "_Z1bPf"]);
        assert_eq!(it.iter().map(|i| i.text.as_str()).collect::<String>(), PTX, "items cover the text");
        assert!(it.iter().any(|i| i.entry.is_none() && i.text.starts_with(".func")));
        // A partial module with a changed `b`: spliced in place of the old one.
        let partial = PTX.replace("mov.u32 %r1, 1;", "mov.u32 %r1, 2;").replace("\t// .globl\t_Z1aPf\n.visible .entry _Z1aPf(\n\t.param .u64 _Z1aPf_param_0\n)\n.maxntid 256, 1, 1\n{\n\tret;\n}\n", "");
        let replace: HashSet<String> = ["_Z1bPf".to_string()].into();
        let out = splice(PTX, &partial, &replace).unwrap_or_default();
        assert_eq!(out, PTX.replace("mov.u32 %r1, 1;", "mov.u32 %r1, 2;"));
        // A declaration the base lacks: no splice.
        let extra = partial.replace(".address_size 64\n", ".address_size 64\n.global .align 4 .u32 h;\n");
        assert_eq!(splice(PTX, &extra, &replace), None);
    }
}
