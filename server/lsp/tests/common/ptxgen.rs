//! Building large PTX modules from the fixture corpus, shared by the robustness tests
//! (`tests/e2e/robustness.rs`) and the latency benchmark (`examples/lsp_bench.rs`): each
//! fixture becomes a renamed copy so that many copies form one valid module; and single
//! kernels of any length ([`big_kernel`]) for the scale benchmark (`examples/scale_bench.rs`).

// Each user (the e2e tests, the benchmarks) needs only some of these helpers.
#![allow(dead_code)]

/// PTX ISA 9.x §4.4 "Identifiers": letters, digits, `_` and `$`.
pub fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The module-level names a fixture defines (`.entry`/`.func` names, module-scope
/// variables, `.debug_str` labels).
pub fn module_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        for kw in [".entry ", ".func "] {
            if let Some(i) = t.find(kw) {
                let mut rest = t[i + kw.len()..].trim_start();
                if rest.starts_with('(') {
                    rest = rest.split_once(')').map_or("", |(_, r)| r.trim_start());
                }
                let name: String = rest.bytes().take_while(|b| is_ident_byte(*b)).map(char::from).collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        }
        if let Some(label) = t.strip_suffix(':').filter(|l| l.starts_with("$L__info_string")) {
            names.push(label.to_string());
        }
        if [".global", ".const", ".shared", ".extern"].iter().any(|kw| line.starts_with(kw)) {
            let decl = line.split('=').next().unwrap_or("").trim().trim_end_matches(';');
            let last = decl.split_whitespace().last().unwrap_or("");
            let name: String = last.bytes().take_while(|b| is_ident_byte(*b)).map(char::from).collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// `line` with each token that is one of `names` (or `NAME_param_N`) suffixed `_c{copy}`.
pub fn rename_tokens(line: &str, names: &[String], copy: usize) -> String {
    let bytes = line.as_bytes();
    let starts_token = |i: usize| is_ident_byte(bytes[i]) && (i == 0 || !is_ident_byte(bytes[i - 1]) && bytes[i - 1] != b'%');
    let mut out = String::with_capacity(line.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if starts_token(i) {
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            let token = &line[start..i];
            match names.iter().find(|n| token == n.as_str() || token.strip_prefix(n.as_str()).is_some_and(|r| r.starts_with("_param_"))) {
                Some(n) => out.push_str(&format!("{n}_c{copy}{}", &token[n.len()..])),
                None => out.push_str(token),
            }
        } else {
            i += 1;
            while i < bytes.len() && !starts_token(i) {
                i += 1;
            }
            out.push_str(&line[start..i]);
        }
    }
    out
}

/// One fixture as the `copy`-th member of a concatenated module: no header, renamed
/// module-level names, `.file` indices (and `.loc`/`inlined_at` uses) moved apart.
pub fn renamed_copy(text: &str, copy: usize) -> String {
    let names = module_names(text);
    let file_base = copy * 16;
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with(".version") || t.starts_with(".target") || t.starts_with(".address_size") {
            continue;
        }
        let line = rename_tokens(line, &names, copy);
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(".file").or_else(|| t.strip_prefix(".loc")) {
            let directive = if t.starts_with(".file") { ".file" } else { ".loc" };
            let rest = rest.trim_start();
            let (index, tail) = rest.split_once(|c: char| c.is_whitespace()).unwrap_or((rest, ""));
            if let Ok(index) = index.parse::<usize>() {
                let tail = match tail.split_once("inlined_at ") {
                    Some((head, at)) => {
                        let (f, more) = at.split_once(' ').unwrap_or((at, ""));
                        match f.parse::<usize>() {
                            Ok(f) => format!("{head}inlined_at {} {more}", f + file_base),
                            Err(_) => tail.to_string(),
                        }
                    }
                    None => tail.to_string(),
                };
                out.push_str(&format!("\t{directive}\t{} {tail}\n", index + file_base));
                continue;
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The shape of one large generated kernel ([`big_kernel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelShape {
    /// One basic block: a fully unrolled loop of load, arithmetic on an accumulator and
    /// store (what `#pragma unroll` over a large constant count produces).
    Unrolled,
    /// The unrolled body interleaved with counted loops, divergent `if`s and shared-memory
    /// exchanges behind barriers: many blocks and loops.
    Mixed,
}

/// A module with one kernel `big` of at least `instructions` instructions, in nvcc's style
/// (a fresh virtual register per value), written so that every analysis has work: global
/// accesses whose addresses follow from the thread index, loops with constant trip counts,
/// thread-dependent branches, shared memory and barriers.
pub fn big_kernel(instructions: usize, shape: KernelShape) -> String {
    use std::fmt::Write as _;
    let mut body = String::new();
    let (mut f, mut r, mut rd, mut p, mut acc, mut n) = (2usize, 10usize, 10usize, 1usize, 1usize, 0usize);
    let mut section = 0usize;
    while n < instructions {
        let kind = match shape {
            KernelShape::Unrolled => 0,
            KernelShape::Mixed => section % 4,
        };
        let off = 4 * (section % 256);
        match kind {
            0 => {
                let (a, b, c) = (f + 1, f + 2, f + 3);
                let _ = write!(
                    body,
                    "\tld.global.f32 \t%f{f}, [%rd6+{off}];\n\tfma.rn.f32 \t%f{a}, %f{f}, %f{f}, %f{acc};\n\
                     \tmul.f32 \t%f{b}, %f{a}, 0f3F000000;\n\tadd.f32 \t%f{c}, %f{b}, %f{f};\n\tst.global.f32 \t[%rd7+{off}], %f{c};\n"
                );
                n += 5;
                acc = c;
                f += 4;
            }
            1 => {
                let a = rd + 1;
                let _ = write!(
                    body,
                    "\tmov.u32 \t%r{r}, 0;\n$L__loop{section}:\n\tmul.wide.u32 \t%rd{rd}, %r{r}, 4;\n\
                     \tadd.s64 \t%rd{a}, %rd6, %rd{rd};\n\tld.global.f32 \t%f{f}, [%rd{a}];\n\tadd.f32 \t%f{acc}, %f{acc}, %f{f};\n\
                     \tadd.s32 \t%r{r}, %r{r}, 1;\n\tsetp.lt.u32 \t%p{p}, %r{r}, 16;\n\t@%p{p} bra \t$L__loop{section};\n"
                );
                n += 8;
                r += 1;
                rd += 2;
                f += 1;
                p += 1;
            }
            2 => {
                let bit = 1 << (section % 5);
                let _ = write!(
                    body,
                    "\tand.b32 \t%r{r}, %r4, {bit};\n\tsetp.eq.s32 \t%p{p}, %r{r}, 0;\n\t@%p{p} bra \t$L__skip{section};\n\
                     \tld.global.f32 \t%f{f}, [%rd7];\n\tadd.f32 \t%f{acc}, %f{acc}, %f{f};\n$L__skip{section}:\n"
                );
                n += 5;
                r += 1;
                p += 1;
                f += 1;
            }
            _ => {
                let (a, b) = (r + 1, r + 2);
                let _ = write!(
                    body,
                    "\tshl.b32 \t%r{r}, %r4, 2;\n\tmov.u32 \t%r{a}, smem;\n\tadd.s32 \t%r{b}, %r{a}, %r{r};\n\
                     \tst.shared.f32 \t[%r{b}], %f{acc};\n\tbar.sync \t0;\n\tld.shared.f32 \t%f{f}, [%r{b}+4];\n\
                     \tadd.f32 \t%f{acc}, %f{acc}, %f{f};\n"
                );
                n += 7;
                r += 3;
                f += 1;
            }
        }
        section += 1;
    }
    format!(
        "//\n// Generated by warpsight's ptxgen: one kernel of {n} instructions ({shape:?}).\n//\n\n\
         .version 8.0\n.target sm_80\n.address_size 64\n\n\
         .visible .entry big(\n\t.param .u64 big_param_0,\n\t.param .u64 big_param_1\n)\n{{\n\
         \t.reg .pred \t%p<{p}>;\n\t.reg .f32 \t%f<{f}>;\n\t.reg .b32 \t%r<{r}>;\n\t.reg .b64 \t%rd<{rd}>;\n\
         \t.shared .align 4 .b8 smem[4096];\n\n\
         \tld.param.u64 \t%rd1, [big_param_0];\n\tld.param.u64 \t%rd2, [big_param_1];\n\
         \tcvta.to.global.u64 \t%rd3, %rd1;\n\tcvta.to.global.u64 \t%rd4, %rd2;\n\
         \tmov.u32 \t%r2, %ctaid.x;\n\tmov.u32 \t%r3, %ntid.x;\n\tmov.u32 \t%r4, %tid.x;\n\
         \tmad.lo.s32 \t%r5, %r2, %r3, %r4;\n\tmul.wide.s32 \t%rd5, %r5, 4;\n\tadd.s64 \t%rd6, %rd3, %rd5;\n\
         \tadd.s64 \t%rd7, %rd4, %rd5;\n\tmov.f32 \t%f1, 0f00000000;\n{body}\
         \tst.global.f32 \t[%rd7], %f{acc};\n\tret;\n}}\n"
    )
}
