//! Kernel declarations, launch sites, `__launch_bounds__` and `// warpsight:` annotations.
//!
//! The performance models need a launch configuration (grid, block, dynamic shared memory)
//! and often a trip count (`n`). In a `.cu` file these are in the host code:
//! `saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y)`. This module finds every launch with the
//! light tokenizer in [`crate::lex`], folds its configuration and arguments with
//! [`crate::consteval`] (with the build's defines and the included local headers,
//! [`ScanInput`]), and maps each call argument to the kernel's parameter name (from the
//! `__global__` declaration in the file or in a local header) so that a symbolic trip
//! count such as the kernel's `n` resolves to a number. A kernel launched from several
//! places gets one [`LaunchSite`] per launch, each with its line; what stops a fold is
//! named in the site ([`LaunchSite::unresolved_sentence`]).
//!
//! Annotation rule (docs/cuda.md): a comment `// warpsight: grid=4096 block=256 smem=0
//! n=1048576` (or the same inside `/* */`) attaches to the first kernel definition
//! (`__global__`) or launch (`<<<`) that starts after the comment; its items are those of
//! the one launch grammar ([`launch_spec`]). On a launch it overrides
//! what the source gives; on a kernel definition it yields its own [`LaunchSite`] (origin
//! [`SiteOrigin::Annotation`]) and fills the gaps of that kernel's launches.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

use launch_spec::PartialLaunch;
use serde::{Deserialize, Serialize};

use crate::consteval::{Env, Trace, param_name};
use crate::lex::{matching, split_commas};
use crate::lex::{Lexed, Tok, lex};

/// One kernel parameter from a `__global__` declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelParam {
    pub name: String,
    /// The declared type as written, e.g. `const float *__restrict__`.
    pub ty: String,
    /// `true` when the type is neither a pointer, reference, array nor floating point: the
    /// parameters that can be trip counts.
    pub integral: bool,
}

/// A `__global__` function found in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelDecl {
    /// The unqualified name (`saxpy`).
    pub name: String,
    /// Line and column (1-based) of the name.
    pub line: u32,
    pub column: u32,
    pub params: Vec<KernelParam>,
    /// `true` for a definition (with a body), `false` for a declaration.
    pub is_definition: bool,
    /// `true` when the kernel is a template.
    pub is_template: bool,
    /// The included local header that declares it; `None` for the file itself.
    #[serde(default)]
    pub file: Option<String>,
}

/// `__launch_bounds__(maxThreadsPerBlock, minBlocksPerMultiprocessor, maxBlocksPerCluster)`
/// (CUDA C++ Programming Guide, "Launch Bounds").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchBounds {
    pub kernel: String,
    pub line: u32,
    pub max_threads: Option<u32>,
    pub min_blocks: Option<u32>,
    pub max_blocks_per_cluster: Option<u32>,
    /// The argument text as written (values may be template parameters, left unfolded).
    pub text: String,
}

/// Where a [`LaunchSite`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SiteOrigin {
    /// A `kernel<<<...>>>(...)` launch in the source.
    Launch,
    /// A `// warpsight:` annotation on the kernel's definition.
    Annotation,
}

/// One launch of a kernel with everything that could be folded to constants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchSite {
    /// The unqualified kernel name (`saxpy` for `ns::saxpy<float><<<...>>>`).
    pub kernel: String,
    /// Line and column (1-based) of the kernel name at the launch (or of the kernel
    /// definition for an annotation site).
    pub line: u32,
    pub column: u32,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// Dynamic shared memory in bytes (`Some(0)` when the launch omits it).
    pub dynamic_smem: Option<u32>,
    /// `(parameter name, folded value, argument text)` per call argument.
    pub args: Vec<(String, Option<i64>, String)>,
    /// Names (or expressions) that could not be folded, e.g. `n` when it is read from
    /// `argv`; give them with `--arg NAME=VALUE` or an annotation.
    pub unresolved: Vec<String>,
    pub origin: SiteOrigin,
    /// The line of the annotation that applied to this site, if any.
    pub annotation_line: Option<u32>,
    /// Explicit template arguments at the launch (`k<256, float><<<...>>>` gives `256`,
    /// `float`), folded where they are integers.
    #[serde(default)]
    pub template_args: Vec<String>,
    /// Why the names in `unresolved` are unknown, in words ("`n` is assigned under the
    /// condition at line 12").
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The line of the innermost loop around the launch: a launch in a loop is folded for
    /// the loop's first iteration.
    #[serde(default)]
    pub loop_line: Option<u32>,
    /// `(parameter name, bytes)` for the pointer arguments the host code allocates before
    /// the launch with a size that folds (`cudaMalloc(&d_x, n * sizeof(float))`, also
    /// `cudaMallocManaged` and `cudaMallocAsync`; the nearest such call before the launch
    /// that takes the argument's address): what a data-dependent access through that
    /// pointer ranges over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<(String, u64)>,
}

impl LaunchSite {
    /// The folded value of the argument passed for kernel parameter `param`.
    pub fn arg(&self, param: &str) -> Option<i64> {
        self.args
            .iter()
            .find(|(p, _, _)| p == param)
            .and_then(|(_, v, _)| *v)
    }
    /// Threads per block, when the block is known.
    pub fn threads_per_block(&self) -> Option<u64> {
        self.block
            .map(|b| b.iter().map(|x| u64::from(*x)).product())
    }
    /// Blocks in the grid, when the grid is known.
    pub fn blocks(&self) -> Option<u64> {
        self.grid.map(|g| g.iter().map(|x| u64::from(*x)).product())
    }
    /// What this site says, as the one launch type of every source.
    pub fn partial(&self) -> PartialLaunch {
        PartialLaunch {
            grid: self.grid,
            block: self.block,
            dynamic_smem: self.dynamic_smem,
            args: self
                .args
                .iter()
                .filter_map(|(n, v, _)| v.map(|v| (n.clone(), v)))
                .collect(),
            // A launch site does not say what its kernel's gathers range over as a whole;
            // the allocations of its pointer arguments, where the host code shows them.
            footprint: None,
            array_bytes: self.allocations.iter().cloned().collect(),
        }
    }
    /// Why this site is not fully folded, in one sentence (empty when it is): the names
    /// that stopped it and the reasons known.
    pub fn unresolved_sentence(&self) -> String {
        if self.unresolved.is_empty() {
            return String::new();
        }
        let names: Vec<String> = self.unresolved.iter().map(|u| format!("`{u}`")).collect();
        let mut s = format!("not folded: {} unknown", names.join(", "));
        if !self.reasons.is_empty() {
            s.push_str(&format!(" ({})", self.reasons.join("; ")));
        }
        s
    }
}

/// What an annotation is attached to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AnnotationTarget {
    /// The definition of this kernel (line of its name).
    Kernel { kernel: String, line: u32 },
    /// A launch of this kernel on this line.
    Launch { kernel: String, line: u32 },
    /// No kernel definition or launch follows the comment.
    Unattached,
}

/// A parsed `// warpsight: key=value ...` comment (the grammar of [`launch_spec`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    pub line: u32,
    pub target: AnnotationTarget,
    /// Grid, block, `smem` and every other `name=value` (in `args`).
    pub launch: PartialLaunch,
    /// Problems reading the comment (unknown syntax, values that do not fold).
    pub errors: Vec<String>,
}

/// A `// warpsight: trips=N` comment on or just before a loop: the loop's trip count, as
/// the user states it where no analysis can read it (docs/cuda.md § Stating a launch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopAnnotation {
    /// The comment's line.
    pub line: u32,
    /// The lines of the loop's head, first to last: the keyword to the `)` of a `for` or
    /// `while`; the whole of a `do { ... } while (...)`, whose test nvcc puts at its end.
    /// `None` when no loop starts there.
    pub lines: Option<(u32, u32)>,
    pub trips: Option<f64>,
    /// Problems reading the comment, or no loop after it.
    pub errors: Vec<String>,
}

/// Everything found in one `.cu` file's text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceScan {
    pub kernels: Vec<KernelDecl>,
    pub launch_sites: Vec<LaunchSite>,
    pub annotations: Vec<Annotation>,
    /// The `trips=` annotations, in text order.
    #[serde(default)]
    pub loop_annotations: Vec<LoopAnnotation>,
    pub launch_bounds: Vec<LaunchBounds>,
    /// The user values (`--arg NAME=VALUE`) that the folding read: they were used, even
    /// when no kernel has a parameter of that name.
    #[serde(default)]
    pub used_args: Vec<String>,
}

/// What a file's launch folding sees besides its text: the values the user gave, the
/// build's defines and the included local headers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanInput<'i> {
    /// `--arg NAME=VALUE`: they override the source for variable and parameter names.
    pub user_args: &'i [(String, i64)],
    /// `-D NAME[=VALUE]` of the build (`compile_commands.json`, then the user's), in order.
    pub defines: &'i [String],
    /// `-U NAME`: cancels an earlier `-D NAME`.
    pub undefines: &'i [String],
    /// The included local headers, `(path, text)` (see [`crate::files::local_headers`]).
    pub headers: &'i [(PathBuf, String)],
}

impl SourceScan {
    /// The launch sites of one kernel (by unqualified name), in source order.
    pub fn sites_for<'s>(&'s self, kernel: &'s str) -> impl Iterator<Item = &'s LaunchSite> + 's {
        self.launch_sites.iter().filter(move |s| s.kernel == kernel)
    }
}

/// A kernel declaration with token positions (internal).
struct RawKernel {
    decl: KernelDecl,
    name_tok: usize,
}

/// A launch with token positions (internal).
struct RawLaunch {
    kernel: String,
    name_tok: usize,
    /// The explicit template arguments, one token range each.
    template_args: Vec<Range<usize>>,
    config: Vec<Range<usize>>,
    args: Vec<Range<usize>>,
}

/// Scans a `.cu` file's text. `user_args` are values given by the user (`--arg NAME=VALUE`);
/// they override the source for variable and parameter names.
pub fn scan_source(src: &str, user_args: &[(String, i64)]) -> SourceScan {
    scan_source_with(
        src,
        &ScanInput {
            user_args,
            ..ScanInput::default()
        },
    )
}

/// Parses `NAME=VALUE` for `--arg` with the shared grammar ([`launch_spec::parse_arg_with`]);
/// the value is a constant expression of the front end's folder (`1<<20`, `sizeof(float)`,
/// `min(a, b)`) or a floating-point literal ([`launch_spec::ArgValue`]), the name an
/// identifier or `argv[K]`.
pub fn parse_arg(s: &str) -> Result<(String, launch_spec::ArgValue), String> {
    let lx = lex("");
    let env = Env::new(&lx, &[]);
    let mut eval = |expr: &str| -> Result<i64, String> {
        let mut t = Trace::default();
        env.eval_text(expr, &mut t)
            .ok_or_else(|| format!("`{expr}` is not an integer constant expression"))
    };
    launch_spec::parse_arg_with(s, &mut eval)
}

/// The text of `#define` lines for the build's `-D NAME[=VALUE]` (a bare name is `1`, as
/// for the compiler), without those a later `-U NAME` cancels.
fn command_line_defines(defines: &[String], undefines: &[String]) -> String {
    let mut out = String::new();
    for d in defines {
        let (name, value) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        let name = name.trim();
        if name.is_empty() || undefines.iter().any(|u| u.trim() == name) {
            continue;
        }
        // One logical line per define: a newline in a value would start a new directive.
        let value = value.replace(['\n', '\r'], " ");
        out.push_str(&format!("#define {name} {value}\n"));
    }
    out
}

/// Scans a `.cu` file's text with what the build adds to it (defines, headers).
pub fn scan_source_with(src: &str, input: &ScanInput<'_>) -> SourceScan {
    let cli_text = command_line_defines(input.defines, input.undefines);
    let cli = lex(&cli_text);
    let headers: Vec<Lexed<'_>> = input.headers.iter().map(|(_, t)| lex(t)).collect();
    let header_defines: Vec<_> = headers
        .iter()
        .flat_map(|h| h.defines.iter().cloned())
        .collect();
    let lexed = lex(src);
    let mut env = Env::new(&lexed, input.user_args);
    env.add_defines(header_defines.clone(), cli.defines.clone());
    // Headers: their constants and their kernels' declarations (parameter names).
    let mut header_kernels = Vec::new();
    for ((path, text), h) in input.headers.iter().zip(&headers) {
        let mut henv = Env::new(h, input.user_args);
        henv.add_defines(header_defines.clone(), cli.defines.clone());
        env.add_outer_consts(henv.namespace_consts());
        let (ks, _) = find_kernels(text, &henv);
        header_kernels.extend(ks.into_iter().map(|k| KernelDecl {
            file: Some(path.display().to_string()),
            ..k.decl
        }));
    }
    let toks = &env.toks;
    let user: HashMap<String, i64> = input.user_args.iter().cloned().collect();
    let mut used = Trace::default();

    let (kernels, launch_bounds) = find_kernels(src, &env);
    let launches = find_launches(toks);

    // Attach annotations to the next kernel definition or launch.
    let mut annotations = Vec::new();
    let mut launch_ann: HashMap<usize, usize> = HashMap::new();
    let mut kernel_ann: HashMap<String, usize> = HashMap::new();
    let mut loop_annotations = Vec::new();
    for c in &lexed.annotations {
        if launch_spec::is_loop_annotation(c.text) {
            loop_annotations.push(parse_loop_annotation(c.text, c.line, c.offset, toks, &env, &mut used));
            continue;
        }
        let next_kernel = kernels
            .iter()
            .filter(|k| toks[k.name_tok].offset > c.offset)
            .min_by_key(|k| toks[k.name_tok].offset);
        let next_launch = launches
            .iter()
            .enumerate()
            .filter(|(_, l)| toks[l.name_tok].offset > c.offset)
            .min_by_key(|(_, l)| toks[l.name_tok].offset);
        let kernel_first = match (next_kernel, next_launch) {
            (Some(k), Some((_, l))) => toks[k.name_tok].offset < toks[l.name_tok].offset,
            (Some(_), None) => true,
            _ => false,
        };
        let target = if kernel_first {
            let k = next_kernel.map(|k| &k.decl);
            k.map_or(AnnotationTarget::Unattached, |k| AnnotationTarget::Kernel {
                kernel: k.name.clone(),
                line: k.line,
            })
        } else if let Some((li, l)) = next_launch {
            launch_ann.insert(li, annotations.len());
            AnnotationTarget::Launch {
                kernel: l.kernel.clone(),
                line: toks[l.name_tok].line,
            }
        } else {
            AnnotationTarget::Unattached
        };
        if let AnnotationTarget::Kernel { kernel, .. } = &target {
            kernel_ann.insert(kernel.clone(), annotations.len());
        }
        annotations.push(parse_annotation(c.text, c.line, target, &env, &mut used));
    }

    let by_name = |name: &str| -> Option<&KernelDecl> {
        // Prefer the definition in the file; then a declaration in the file; then the
        // header's.
        kernels
            .iter()
            .map(|k| &k.decl)
            .filter(|k| k.name == name)
            .max_by_key(|k| k.is_definition)
            .or_else(|| {
                header_kernels
                    .iter()
                    .filter(|k| k.name == name)
                    .max_by_key(|k| k.is_definition)
            })
    };

    let alloc_calls = allocation_calls(toks);
    let mut sites = Vec::new();
    for (li, l) in launches.iter().enumerate() {
        let ann = launch_ann.get(&li).map(|i| &annotations[*i]);
        let kann = kernel_ann.get(&l.kernel).map(|i| &annotations[*i]);
        let mut extra: HashMap<String, i64> = HashMap::new();
        if let Some(a) = ann {
            extra.extend(a.launch.args.iter().map(|(k, v)| (k.clone(), *v)));
        }
        let at = l.name_tok;
        let mut unresolved = Vec::new();
        let mut reasons = Vec::new();
        let mut cfg = Trace::default();
        let grid = l
            .config
            .first()
            .and_then(|r| env.eval_dim3_range(r.clone(), at, &extra, &mut cfg));
        let block = l
            .config
            .get(1)
            .and_then(|r| env.eval_dim3_range(r.clone(), at, &extra, &mut cfg));
        let dynamic_smem = match l.config.get(2) {
            None => Some(0),
            Some(r) => env
                .eval_range(r.clone(), at, &extra, &mut cfg)
                .and_then(|v| u32::try_from(v).ok()),
        };
        for u in &cfg.used {
            used.used(u);
        }
        let decl = by_name(&l.kernel);
        let mut args = Vec::new();
        for (k, r) in l.args.iter().enumerate() {
            let param = decl.and_then(|d| d.params.get(k));
            let pname = param.map_or_else(|| format!("arg{k}"), |p| p.name.clone());
            let text = range_text(src, toks, r.clone());
            let mut arg_trace = Trace::default();
            let mut v = env.eval_range(r.clone(), at, &extra, &mut arg_trace);
            if let Some(over) = ann.and_then(|a| a.launch.args.get(&pname)).copied() {
                v = Some(over);
            } else if let Some(over) = user.get(&pname).copied() {
                used.used(&pname);
                v = Some(over);
            }
            if v.is_none()
                && let Some(kv) = kann.and_then(|a| a.launch.args.get(&pname)).copied()
            {
                v = Some(kv);
            }
            for u in &arg_trace.used {
                used.used(u);
            }
            if v.is_none() && param.is_none_or(|p| p.integral) && decl.is_some() {
                for u in arg_trace.unresolved {
                    push_unique(&mut unresolved, u);
                }
                for r in arg_trace.reasons {
                    push_unique(&mut reasons, r);
                }
            }
            args.push((pname, v, text));
        }
        let template_args = l
            .template_args
            .iter()
            .map(|r| {
                let mut t = Trace::default();
                env.eval_range(r.clone(), at, &extra, &mut t)
                    .map_or_else(|| range_text(src, toks, r.clone()), |v| v.to_string())
            })
            .collect();
        let mut site = LaunchSite {
            kernel: l.kernel.clone(),
            line: toks[at].line,
            column: toks[at].col,
            grid,
            block,
            dynamic_smem,
            args,
            unresolved: Vec::new(),
            origin: SiteOrigin::Launch,
            annotation_line: ann.map(|a| a.line),
            template_args,
            reasons: Vec::new(),
            loop_line: env.loop_around(at),
            allocations: decl.map_or_else(Vec::new, |d| allocations(&env, toks, &alloc_calls, at, &l.args, &d.params, &extra)),
        };
        for a in ann.into_iter().chain(kann) {
            // The launch's own annotation overrides; the kernel's only fills gaps.
            let is_launch_ann = ann.is_some_and(|x| std::ptr::eq(x, a));
            if a.launch.grid.is_some() && (is_launch_ann || site.grid.is_none()) {
                site.grid = a.launch.grid;
            }
            if a.launch.block.is_some() && (is_launch_ann || site.block.is_none()) {
                site.block = a.launch.block;
            }
            if a.launch.dynamic_smem.is_some() && (is_launch_ann || site.dynamic_smem.is_none()) {
                site.dynamic_smem = a.launch.dynamic_smem;
            }
            // `bytes.NAME`: the annotation's allocation of a parameter, over the host code's
            // for the launch's own annotation, where the host code has none for the kernel's.
            for (name, bytes) in &a.launch.array_bytes {
                match site.allocations.iter_mut().find(|(n, _)| n == name) {
                    Some(entry) if is_launch_ann => entry.1 = *bytes,
                    Some(_) => {}
                    None => site.allocations.push((name.clone(), *bytes)),
                }
            }
            if !is_launch_ann && site.annotation_line.is_none() {
                site.annotation_line = Some(a.line);
            }
        }
        // Only report configuration names that still matter; when nothing names the
        // cause (a call, a cast the folder does not know), report the argument text.
        let cfg_missing =
            site.grid.is_none() || site.block.is_none() || site.dynamic_smem.is_none();
        if cfg_missing && cfg.unresolved.is_empty() {
            for (k, (label, missing)) in [
                ("grid", site.grid.is_none()),
                ("block", site.block.is_none()),
                ("smem", site.dynamic_smem.is_none()),
            ]
            .into_iter()
            .enumerate()
            {
                if missing {
                    let text = l
                        .config
                        .get(k)
                        .map_or(String::new(), |r| range_text(src, toks, r.clone()));
                    unresolved.push(format!("{label} `{text}`"));
                }
            }
        } else if cfg_missing {
            for u in cfg.unresolved {
                push_unique(&mut unresolved, u);
            }
            for r in cfg.reasons {
                push_unique(&mut reasons, r);
            }
        }
        site.unresolved = unresolved;
        site.reasons = reasons;
        sites.push(site);
    }

    // Annotation sites on kernel definitions.
    for a in &annotations {
        let AnnotationTarget::Kernel { kernel, .. } = &a.target else {
            continue;
        };
        let Some(decl) = by_name(kernel) else {
            continue;
        };
        let mut unresolved = Vec::new();
        let args: Vec<(String, Option<i64>, String)> = decl
            .params
            .iter()
            .map(|p| {
                let v = a.launch.args.get(&p.name).copied().or_else(|| {
                    let v = user.get(&p.name).copied();
                    if v.is_some() {
                        used.used(&p.name);
                    }
                    v
                });
                if v.is_none() && p.integral {
                    unresolved.push(p.name.clone());
                }
                (p.name.clone(), v, String::new())
            })
            .collect();
        if a.launch.grid.is_none() {
            unresolved.push("grid".to_string());
        }
        if a.launch.block.is_none() {
            unresolved.push("block".to_string());
        }
        sites.push(LaunchSite {
            kernel: kernel.clone(),
            line: decl.line,
            column: decl.column,
            grid: a.launch.grid,
            block: a.launch.block,
            dynamic_smem: Some(a.launch.dynamic_smem.unwrap_or(0)),
            args,
            unresolved,
            origin: SiteOrigin::Annotation,
            annotation_line: Some(a.line),
            template_args: Vec::new(),
            reasons: Vec::new(),
            loop_line: None,
            allocations: a.launch.array_bytes.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        });
    }
    sites.sort_by_key(|s| (s.line, s.column));

    let mut kernels: Vec<KernelDecl> = kernels.into_iter().map(|k| k.decl).collect();
    kernels.extend(header_kernels);
    SourceScan {
        kernels,
        launch_sites: sites,
        annotations,
        loop_annotations,
        launch_bounds,
        used_args: used.used,
    }
}

/// The lines of the head of the loop a loop annotation at byte `offset` (line `line`)
/// stands on or before: a trailing comment names the loop its line starts with, any other
/// the loop of the next code token. `Err` says what is there instead.
fn loop_head_lines(toks: &[Tok<'_>], line: u32, offset: usize) -> Result<(u32, u32), String> {
    // Tokens are in text order: binary searches, so that many annotations in a long file
    // cost no scan each.
    let first_on_line = Some(toks.partition_point(|t| t.line < line)).filter(|&k| toks.get(k).is_some_and(|t| t.line == line));
    let at = match first_on_line {
        Some(k) if toks[k].offset < offset => k,
        _ => Some(toks.partition_point(|t| t.offset <= offset)).filter(|&k| k < toks.len()).ok_or_else(|| "no loop follows it".to_string())?,
    };
    let kw = &toks[at];
    match kw.text {
        "for" | "while" => {
            let close = toks.get(at + 1).filter(|t| t.is("(")).and_then(|_| matching(toks, at + 1));
            let close = close.ok_or_else(|| format!("the `{}` at line {} has no `( ... )`", kw.text, kw.line))?;
            Ok((kw.line, toks[close].line))
        }
        "do" => {
            // `do { body } while (cond);`: nvcc tests at the `while`, so the loop's PTX
            // carries any line of the statement.
            let body_end = toks.get(at + 1).filter(|t| t.is("{")).and_then(|_| matching(toks, at + 1));
            let body_end = body_end.ok_or_else(|| format!("the `do` at line {} has no braced body", kw.line))?;
            let cond_end = toks
                .get(body_end + 1)
                .filter(|t| t.is("while"))
                .and_then(|_| toks.get(body_end + 2))
                .filter(|t| t.is("("))
                .and_then(|_| matching(toks, body_end + 2))
                .unwrap_or(body_end);
            Ok((kw.line, toks[cond_end].line))
        }
        _ => Err(format!("line {} starts with `{}`, not a `for`, `while` or `do` loop", kw.line, kw.text)),
    }
}

fn parse_loop_annotation(text: &str, line: u32, offset: usize, toks: &[Tok<'_>], env: &Env<'_>, used: &mut Trace) -> LoopAnnotation {
    let (trips, mut errors) = launch_spec::parse_trips(text, &mut annotation_eval(env, used));
    let lines = match loop_head_lines(toks, line, offset) {
        Ok(l) => Some(l),
        Err(e) => {
            errors.push(format!("a `trips=` annotation stands on or just before a loop: {e}"));
            None
        }
    };
    LoopAnnotation { line, lines, trips, errors }
}

/// The host's allocation calls whose size [`allocations`] folds: they take the address of
/// the pointer first and the bytes second (CUDA Runtime API, Memory Management).
const ALLOCATORS: [&str; 3] = ["cudaMalloc", "cudaMallocManaged", "cudaMallocAsync"];

/// One allocation of the host code: a call of [`ALLOCATORS`] (its token, the name whose
/// address its first argument takes, `&d_x` or `(void **)&d_x`, and its second argument,
/// the bytes), or a `thrust::device_vector<T> name(n)` (the count, and `sizeof(T)` as
/// `element`).
struct AllocationCall<'a> {
    at: usize,
    name: &'a str,
    size: Option<Range<usize>>,
    element: i64,
}

/// Every allocation of the file, in order (one pass over the tokens).
fn allocation_calls<'a>(toks: &[Tok<'a>]) -> Vec<AllocationCall<'a>> {
    let mut out = Vec::new();
    for j in 0..toks.len() {
        // `device_vector<T> name(n[, value])`: n elements of T.
        if toks[j].is("device_vector") && toks.get(j + 1).is_some_and(|t| t.is("<")) {
            let Some(close) = (j + 2..toks.len().min(j + 16)).find(|&k| toks[k].is(">")) else { continue };
            let ty: Vec<&str> = toks[j + 2..close].iter().map(|t| t.text).collect();
            let (Some(name), Some(open)) = (toks.get(close + 1), toks.get(close + 2)) else { continue };
            if !name.is_ident() || !open.is("(") {
                continue;
            }
            let Some(element) = crate::consteval::sizeof_type(&ty) else { continue };
            let Some(end) = matching(toks, close + 2) else { continue };
            let parts = split_commas(toks, close + 3, end);
            out.push(AllocationCall { at: j, name: name.text, size: parts.first().cloned(), element });
            continue;
        }
        if !ALLOCATORS.iter().any(|a| toks[j].is(a)) || !toks.get(j + 1).is_some_and(|t| t.is("(")) {
            continue;
        }
        let Some(end) = matching(toks, j + 1) else { continue };
        let parts = split_commas(toks, j + 2, end);
        let Some(first) = parts.first() else { continue };
        let name = toks[first.clone()].windows(2).find(|w| w[0].is("&") && w[1].is_ident()).map(|w| w[1].text);
        if let Some(name) = name {
            out.push(AllocationCall { at: j, name, size: parts.get(1).cloned(), element: 1 });
        }
    }
    out
}

/// The variable a pointer argument names: a plain name (`d_x`), or the vector of
/// `thrust::raw_pointer_cast(v.data())`, `thrust::raw_pointer_cast(&v[0])` and
/// `v.data().get()`.
fn pointer_name<'a>(toks: &[Tok<'a>]) -> Option<&'a str> {
    match toks {
        [name] if name.is_ident() => Some(name.text),
        _ => {
            let through = toks.iter().any(|t| t.is("raw_pointer_cast")) || toks.windows(2).any(|w| w[0].is(".") && w[1].is("get"));
            through.then(|| toks.windows(2).find(|w| w[0].is_ident() && (w[1].is(".") || w[1].is("["))).map(|w| w[0].text)).flatten()
        }
    }
}

/// `(parameter name, bytes)` for each pointer argument of a launch at token `at` that names
/// a variable ([`pointer_name`]) allocated before it (by one of [`ALLOCATORS`], or as a
/// `thrust::device_vector`) with a size that folds where it is allocated: the nearest such
/// allocation before the launch. When the nearest one does not fold, none is taken (an
/// earlier allocation may have been freed and replaced).
fn allocations(env: &Env<'_>, toks: &[Tok<'_>], calls: &[AllocationCall<'_>], at: usize, args: &[Range<usize>], params: &[KernelParam], extra: &HashMap<String, i64>) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for (k, r) in args.iter().enumerate() {
        let Some(param) = params.get(k).filter(|p| !p.integral && p.ty.contains('*')) else { continue };
        let Some(name) = pointer_name(&toks[r.clone()]) else { continue };
        let Some(call) = calls.iter().take_while(|c| c.at < at).filter(|c| c.name == name).last() else { continue };
        let Some(size) = call.size.clone() else { continue };
        let mut trace = Trace::default();
        let folded = env.eval_range(size, call.at, extra, &mut trace).and_then(|v| v.checked_mul(call.element));
        if let Some(bytes) = folded.and_then(|v| u64::try_from(v).ok()).filter(|v| *v > 0) {
            out.push((param.name.clone(), bytes));
        }
    }
    out
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// The source text of a token range (from the first token's start to the last's end).
fn range_text(src: &str, toks: &[Tok<'_>], r: Range<usize>) -> String {
    if r.is_empty() || r.end > toks.len() {
        return String::new();
    }
    let start = toks[r.start].offset;
    let last = toks[r.end - 1];
    let end = last.offset + last.text.len();
    src.get(start..end).map_or_else(String::new, |s| {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    })
}

fn find_kernels(src: &str, env: &Env<'_>) -> (Vec<RawKernel>, Vec<LaunchBounds>) {
    let toks = &env.toks;
    let mut kernels = Vec::new();
    let mut bounds = Vec::new();
    let no_extra = HashMap::new();
    for g in 0..toks.len() {
        if !toks[g].is("__global__") {
            continue;
        }
        // The declaration starts after the previous `;`, `}` or `{`.
        let mut start = g;
        while start > 0 && !matches!(toks[start - 1].text, ";" | "}" | "{") {
            start -= 1;
        }
        let is_template = toks[start..g].iter().any(|t| t.is("template"));
        let mut lb: Option<Range<usize>> = None;
        let mut name_tok = None;
        let mut j = start;
        while j < toks.len() {
            let t = toks[j];
            if t.is(";") || t.is("{") {
                break;
            }
            if t.is("template") && toks.get(j + 1).is_some_and(|x| x.is("<")) {
                // Skip the template parameter list.
                let mut depth = 0i32;
                j += 1;
                while j < toks.len() {
                    match toks[j].text {
                        "<" => depth += 1,
                        ">" => depth -= 1,
                        ">>" => depth -= 2,
                        _ => {}
                    }
                    j += 1;
                    if depth <= 0 {
                        break;
                    }
                }
                continue;
            }
            if t.is("(") {
                let close = matching(toks, j).unwrap_or(toks.len() - 1);
                let prev = if j > 0 { toks[j - 1].text } else { "" };
                match prev {
                    "__launch_bounds__" => lb = Some(j + 1..close),
                    "__attribute__" | "__declspec" | "alignas" | "__align__" | "__maxnreg__"
                    | "__cluster_dims__" => {}
                    _ if j > 0 && toks[j - 1].is_ident() && j > g => {
                        name_tok = Some((j - 1, j, close));
                        break;
                    }
                    _ => {}
                }
                j = close + 1;
                continue;
            }
            j += 1;
        }
        let Some((nt, open, close)) = name_tok else {
            continue;
        };
        let name = toks[nt].text.to_string();
        let params: Vec<KernelParam> = split_commas(toks, open + 1, close)
            .into_iter()
            .filter_map(|r| {
                let ptoks = &toks[r.clone()];
                let pname = param_name(ptoks)?;
                let ty_end = ptoks
                    .iter()
                    .rposition(|t| t.text == pname)
                    .unwrap_or(ptoks.len());
                let ty = range_text(src, toks, r.start..r.start + ty_end);
                let integral = !ptoks.iter().any(|t| {
                    matches!(
                        t.text,
                        "*" | "&"
                            | "&&"
                            | "["
                            | "float"
                            | "double"
                            | "half"
                            | "__half"
                            | "__nv_bfloat16"
                            | "float2"
                            | "float4"
                            | "double2"
                    )
                });
                Some(KernelParam {
                    name: pname.to_string(),
                    ty,
                    integral,
                })
            })
            .collect();
        let is_definition = toks
            .get(close + 1..)
            .is_some_and(|rest| rest.iter().take_while(|t| !t.is(";")).any(|t| t.is("{")));
        if let Some(r) = lb {
            let parts = split_commas(toks, r.start, r.end);
            let fold = |k: usize| -> Option<u32> {
                let r = parts.get(k)?;
                let mut u = Trace::default();
                env.eval_range(r.clone(), nt, &no_extra, &mut u)
                    .and_then(|v| u32::try_from(v).ok())
            };
            bounds.push(LaunchBounds {
                kernel: name.clone(),
                line: toks[nt].line,
                max_threads: fold(0),
                min_blocks: fold(1),
                max_blocks_per_cluster: fold(2),
                text: range_text(src, toks, r),
            });
        }
        kernels.push(RawKernel {
            decl: KernelDecl {
                name,
                line: toks[nt].line,
                column: toks[nt].col,
                params,
                is_definition,
                is_template,
                file: None,
            },
            name_tok: nt,
        });
    }
    (kernels, bounds)
}

fn find_launches(toks: &[Tok<'_>]) -> Vec<RawLaunch> {
    let mut out = Vec::new();
    for l in 0..toks.len() {
        if !toks[l].is("<<<") || l == 0 {
            continue;
        }
        // The kernel name, skipping explicit template arguments `k<float, 4><<<`.
        let mut j = l - 1;
        if toks[j].is(">") || toks[j].is(">>") {
            let mut depth = 0i32;
            loop {
                match toks[j].text {
                    ">" => depth += 1,
                    ">>" => depth += 2,
                    "<" => depth -= 1,
                    _ => {}
                }
                if depth <= 0 || j == 0 {
                    break;
                }
                j -= 1;
            }
            if j == 0 {
                continue;
            }
            j -= 1;
        }
        if !toks[j].is_ident() {
            continue;
        }
        let name_tok = j;
        let template_args = if l > name_tok + 1 && toks[name_tok + 1].is("<") {
            split_commas(toks, name_tok + 2, l - 1)
        } else {
            Vec::new()
        };
        // The matching `>>>` at bracket depth zero.
        let mut depth = 0i32;
        let mut close = None;
        for (k, t) in toks.iter().enumerate().skip(l + 1) {
            match t.text {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth -= 1,
                ">>>" if depth == 0 => {
                    close = Some(k);
                    break;
                }
                ";" => break,
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let config = split_commas(toks, l + 1, close);
        let args = if toks.get(close + 1).is_some_and(|t| t.is("(")) {
            matching(toks, close + 1)
                .map_or_else(Vec::new, |end| split_commas(toks, close + 2, end))
        } else {
            Vec::new()
        };
        out.push(RawLaunch {
            kernel: toks[name_tok].text.to_string(),
            name_tok,
            template_args,
            config,
            args,
        });
    }
    out
}

/// The evaluator of an annotation's values: they fold against the file's macros and
/// constants (`n=N`, `block=TILE,TILE`, `trips=MAX_ITER/4`), and the names they read are
/// recorded in `used`.
fn annotation_eval<'e>(env: &'e Env<'_>, used: &'e mut Trace) -> impl FnMut(&str) -> Result<i64, String> + 'e {
    move |expr: &str| {
        let mut t = Trace::default();
        let v = env.eval_text(expr, &mut t);
        for u in &t.used {
            used.used(u);
        }
        v.ok_or_else(|| format!("`{expr}` is not a constant"))
    }
}

fn parse_annotation(
    text: &str,
    line: u32,
    target: AnnotationTarget,
    env: &Env<'_>,
    used: &mut Trace,
) -> Annotation {
    let (launch, errors) = launch_spec::parse_items(text, &mut annotation_eval(env, used));
    Annotation {
        line,
        target,
        launch,
        errors,
    }
}

#[cfg(test)]
mod tests;
