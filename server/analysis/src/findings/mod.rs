//! Performance findings: diagnostics with stable kebab-case codes, computed from one
//! kernel's analysis (its profile, occupancy, waves and model report).
//!
//! Layout (after rust-analyzer's `ide-diagnostics` crate): one module
//! per code, named after the code with underscores. Each module starts with user-facing
//! documentation in ruff's fixed sections (`## What it does`, `## Why is this bad?`,
//! `## Example`, `## Fix`, as ruff's rule docs do), holds its thresholds as documented
//! constants, computes its findings and its fixes, and carries its own tests. The same
//! text, with real snippets from the fixture corpus, is the reference in
//! `docs/diagnostics.md`.
//!
//! Conventions shared by every check:
//! - **Deduplication.** One finding per (code, source line). The PTX of one source line
//!   often holds several instructions of the same kind (an unrolled loop body, a
//!   remainder loop); their count is folded into the message and the worst one gives the
//!   numbers. Without a `.loc` the PTX line is the key.
//! - **Per-GPU findings** (occupancy, tail wave, grid size, memory-bound, latency-bound,
//!   power-limited) are computed for
//!   the primary target (the first configured GPU) and reported with its id in
//!   [`Finding::gpu`]. A secondary target adds its own finding only when the primary one
//!   has none of that code, so that a finding that holds on every target is reported once
//!   and a GPU on which the verdict differs is still named. Profile findings (accesses,
//!   divergence, spills) read the primary target's profile: they do not depend on the GPU
//!   beyond its compute capability, and `gpu` is `None`.
//! - **Severities** are per code ([`default_severity`]) and can be overridden or turned off
//!   by the user ([`apply_severities`], `Settings::severities`).
//! - **Launch-dependent findings** (tail wave, grid size) are not produced when the launch
//!   configuration is the documented default (`LaunchSource::Default`): a verdict about a
//!   grid nobody wrote would be noise. The occupancy, memory-bound and latency-bound findings are still
//!   produced (they depend mostly on the block size) and then offer a fix that inserts a
//!   `// warpsight:` annotation so that the user states the real launch.

pub mod compiler_error;
pub mod divergent_branch_in_loop;
pub mod grid_too_small;
pub mod latency_bound;
pub mod memory_bound;
pub mod occupancy_limited_by_blocks;
pub mod occupancy_limited_by_registers;
pub mod occupancy_limited_by_shared_memory;
pub mod occupancy_limited_by_warps;
mod occupancy_common;
pub mod power_limited;
pub mod register_spills;
pub mod shared_bank_conflict;
pub mod tail_wave;
mod trace;
pub mod uncoalesced_global_access;
pub mod unknown_trip_count;

use std::collections::{BTreeMap, HashMap};

use kernel_profile::LaunchSource;
use ptx::Span;

pub use crate::fixes::{Fix, FixKind};
use crate::{KernelAnalysis, Severity, TargetAnalysis};

/// One performance finding: plain data for the CLI and the language server.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The stable code, e.g. `uncoalesced-global-access` (one of [`CODES`]).
    pub code: &'static str,
    /// The severity after the user's per-code override.
    pub severity: Severity,
    /// One sentence with the numbers.
    pub message: String,
    /// The GPU id it concerns, when the finding is GPU-specific.
    pub gpu: Option<String>,
    /// Where in the PTX: an instruction, or the kernel name.
    pub ptx_span: Span,
    /// 1-based PTX line of `ptx_span`.
    pub ptx_line: u32,
    /// The CUDA source position from `.loc`, when known.
    pub source_file: Option<String>,
    pub source_line: Option<u32>,
    /// Code actions, as data (see [`crate::fixes`] for the text edits).
    pub fixes: Vec<Fix>,
}

/// Every finding code, in documentation order.
pub const CODES: [&str; 15] = [
    memory_bound::CODE,
    latency_bound::CODE,
    power_limited::CODE,
    occupancy_limited_by_registers::CODE,
    occupancy_limited_by_shared_memory::CODE,
    occupancy_limited_by_blocks::CODE,
    occupancy_limited_by_warps::CODE,
    register_spills::CODE,
    uncoalesced_global_access::CODE,
    shared_bank_conflict::CODE,
    divergent_branch_in_loop::CODE,
    unknown_trip_count::CODE,
    tail_wave::CODE,
    grid_too_small::CODE,
    compiler_error::CODE,
];

/// The default severity of a code (`None` for an unknown code).
pub fn default_severity(code: &str) -> Option<Severity> {
    Some(match code {
        memory_bound::CODE => memory_bound::SEVERITY,
        latency_bound::CODE => latency_bound::SEVERITY,
        power_limited::CODE => power_limited::SEVERITY,
        occupancy_limited_by_registers::CODE => occupancy_limited_by_registers::SEVERITY,
        occupancy_limited_by_shared_memory::CODE => occupancy_limited_by_shared_memory::SEVERITY,
        occupancy_limited_by_blocks::CODE => occupancy_limited_by_blocks::SEVERITY,
        occupancy_limited_by_warps::CODE => occupancy_limited_by_warps::SEVERITY,
        register_spills::CODE => register_spills::SEVERITY,
        uncoalesced_global_access::CODE => uncoalesced_global_access::SEVERITY,
        shared_bank_conflict::CODE => shared_bank_conflict::SEVERITY,
        divergent_branch_in_loop::CODE => divergent_branch_in_loop::SEVERITY,
        unknown_trip_count::CODE => unknown_trip_count::SEVERITY,
        tail_wave::CODE => tail_wave::SEVERITY,
        grid_too_small::CODE => grid_too_small::SEVERITY,
        compiler_error::CODE => compiler_error::SEVERITY,
        _ => return None,
    })
}

/// Computes every finding of one kernel, with default severities, into `acc`.
pub fn check_kernel(kernel: &KernelAnalysis, module: &ptx_ir::Module, acc: &mut Vec<Finding>) {
    let cx = Ctx::new(kernel, module);
    memory_bound::check(&cx, acc);
    latency_bound::check(&cx, acc);
    power_limited::check(&cx, acc);
    occupancy_limited_by_registers::check(&cx, acc);
    occupancy_limited_by_shared_memory::check(&cx, acc);
    occupancy_limited_by_blocks::check(&cx, acc);
    occupancy_limited_by_warps::check(&cx, acc);
    register_spills::check(&cx, acc);
    uncoalesced_global_access::check(&cx, acc);
    shared_bank_conflict::check(&cx, acc);
    divergent_branch_in_loop::check(&cx, acc);
    unknown_trip_count::check(&cx, acc);
    tail_wave::check(&cx, acc);
    grid_too_small::check(&cx, acc);
}

/// Applies per-code overrides: `Some(severity)` replaces the default, `None` drops the
/// code's findings. Codes without an entry keep their default.
pub fn apply_severities(findings: &mut Vec<Finding>, overrides: &BTreeMap<String, Option<Severity>>) {
    if overrides.is_empty() {
        return;
    }
    findings.retain_mut(|f| match overrides.get(f.code) {
        None => true,
        Some(None) => false,
        Some(Some(s)) => {
            f.severity = *s;
            true
        }
    });
}

/// The findings of one kernel with the user's severities applied (what `analyze_kernel`
/// stores in [`KernelAnalysis::findings`]).
pub fn for_kernel(kernel: &KernelAnalysis, module: &ptx_ir::Module, overrides: &BTreeMap<String, Option<Severity>>) -> Vec<Finding> {
    let mut acc = Vec::new();
    check_kernel(kernel, module, &mut acc);
    apply_severities(&mut acc, overrides);
    acc
}

/// What every check reads: the kernel, its IR and a PTX-line index of its instructions.
pub(crate) struct Ctx<'a> {
    pub kernel: &'a KernelAnalysis,
    pub module: &'a ptx_ir::Module,
    pub func: Option<&'a ptx_ir::Function>,
    /// First instruction span on each PTX line of the kernel and the functions it calls.
    line_spans: HashMap<u32, Span>,
}

impl<'a> Ctx<'a> {
    pub fn new(kernel: &'a KernelAnalysis, module: &'a ptx_ir::Module) -> Ctx<'a> {
        let func = module.function(&kernel.name);
        let mut line_spans = HashMap::new();
        let mut funcs: Vec<&ptx_ir::Function> = func.into_iter().collect();
        if let Some(f) = func {
            funcs.extend(f.calls.iter().filter_map(|c| c.callee.as_deref().and_then(|n| module.function(n))));
        }
        for f in funcs {
            for i in &f.instrs {
                line_spans.entry(i.ptx_line).or_insert(i.span);
            }
        }
        Ctx { kernel, module, func, line_spans }
    }

    /// The primary target (first configured GPU that exists in the database).
    pub fn primary(&self) -> Option<&'a TargetAnalysis> {
        self.kernel.targets.first()
    }

    /// The span of the first instruction on a PTX line, or the kernel name.
    pub fn span_of_line(&self, ptx_line: u32) -> Span {
        self.line_spans.get(&ptx_line).copied().unwrap_or(self.kernel.name_span)
    }

    /// A finding on the kernel name (for kernel-wide findings).
    pub fn on_kernel(&self, code: &'static str, severity: Severity, message: String, gpu: Option<&str>) -> Finding {
        Finding {
            code,
            severity,
            message,
            gpu: gpu.map(str::to_string),
            ptx_span: self.kernel.name_span,
            ptx_line: self.kernel.ptx_line,
            source_file: None,
            source_line: None,
            fixes: Vec::new(),
        }
    }

    /// A finding on an instruction line.
    pub fn on_line(&self, code: &'static str, severity: Severity, message: String, ptx_line: u32, source: (Option<String>, Option<u32>)) -> Finding {
        Finding {
            code,
            severity,
            message,
            gpu: None,
            ptx_span: self.span_of_line(ptx_line),
            ptx_line,
            source_file: source.0,
            source_line: source.1,
            fixes: Vec::new(),
        }
    }

    /// `true` when the launch configuration is the documented default (nothing known).
    pub fn launch_is_default(&self) -> bool {
        self.kernel.launch.source == LaunchSource::Default
    }

    /// The fix that states the launch in a `// warpsight:` annotation, offered when the
    /// launch is the default.
    pub fn annotation_fix(&self) -> Option<Fix> {
        if !self.launch_is_default() {
            return None;
        }
        let l = &self.kernel.launch;
        let text = format!("// warpsight: grid={} block={}", launch_spec::dims_spec(l.grid), launch_spec::dims_spec(l.block));
        Some(Fix { title: "State the real launch configuration in a `// warpsight:` annotation".into(), kind: FixKind::InsertAnnotation { text } })
    }
}

/// Runs a per-GPU check on the primary target and on every other target whose verdict
/// differs (see the module documentation).
pub(crate) fn per_gpu(cx: &Ctx<'_>, acc: &mut Vec<Finding>, check: impl Fn(&Ctx<'_>, &TargetAnalysis) -> Option<Finding>) {
    let mut primary_fired = false;
    for (i, t) in cx.kernel.targets.iter().enumerate() {
        if i > 0 && primary_fired {
            break;
        }
        if let Some(f) = check(cx, t) {
            primary_fired |= i == 0;
            acc.push(f);
        }
    }
}

/// Groups items by source line (or PTX line without `.loc`), keeping the order of first
/// appearance: the key of the deduplication rule.
pub(crate) fn group_by_line<T>(items: impl IntoIterator<Item = T>, key: impl Fn(&T) -> (Option<String>, Option<u32>, u32)) -> Vec<Vec<T>> {
    let mut order: Vec<(Option<String>, Option<u32>, u32)> = Vec::new();
    let mut groups: Vec<Vec<T>> = Vec::new();
    for it in items {
        let (file, line, ptx_line) = key(&it);
        let k = if line.is_some() { (file, line, 0) } else { (file, None, ptx_line) };
        match order.iter().position(|o| *o == k) {
            Some(i) => groups[i].push(it),
            None => {
                order.push(k);
                groups.push(vec![it]);
            }
        }
    }
    groups
}

/// `" (3 PTX instructions)"` for a folded group, empty for one instruction.
pub(crate) fn folded(n: usize) -> String {
    if n > 1 { format!(" ({n} PTX instructions on this line)") } else { String::new() }
}

/// A percentage for messages (`37.5 %` → `38 %`).
pub(crate) fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Fixture loading for the unit tests of the finding modules.

    use crate::{Context, FileAnalysis, PartialLaunch, Settings};

    /// The 1-based line of the first line of `tests/fixtures/cu/{name}.cu` containing
    /// `needle` (the fixtures are regenerated from their sources, so tests look lines up
    /// instead of hard-coding them).
    pub fn cu_line(name: &str, needle: &str) -> u32 {
        let path = format!("{}/../../tests/fixtures/cu/{name}.cu", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let idx = text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle:?} not in {path}"));
        idx as u32 + 1
    }

    /// The sm_80 fixture PTX (compiled by nvcc from `tests/fixtures/cu`).
    pub fn fixture(name: &str) -> String {
        let path = format!("{}/../../tests/fixtures/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Analyses a fixture with an explicit launch on the given GPUs.
    pub fn analyze(name: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)], gpus: &[&str]) -> (String, FileAnalysis) {
        let text = fixture(name);
        let a = analyze_text(&text, grid, block, args, gpus);
        (text, a)
    }

    /// Analyses a PTX text with an explicit launch on the given GPUs.
    pub fn analyze_text(text: &str, grid: [u32; 3], block: [u32; 3], args: &[(&str, i64)], gpus: &[&str]) -> FileAnalysis {
        let settings = Settings {
            gpus: gpus.iter().map(|g| g.to_string()).collect(),
            launch: PartialLaunch { grid: Some(grid), block: Some(block), dynamic_smem: None, footprint: None, array_bytes: Default::default(), args: args.iter().map(|(k, v)| (k.to_string(), *v)).collect() },
            ..Settings::default()
        };
        crate::analyze(text, &settings, &Context::default())
    }

    /// The findings of a code in the first kernel whose name contains `kernel`.
    pub fn findings<'a>(a: &'a FileAnalysis, kernel: &str, code: &str) -> Vec<&'a super::Finding> {
        a.kernels
            .iter()
            .filter(|k| k.name.contains(kernel))
            .take(1)
            .flat_map(|k| k.findings.iter().filter(|f| f.code == code))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_default_severity_and_a_kebab_case_name() {
        for code in CODES {
            assert!(default_severity(code).is_some(), "{code}");
            assert!(code.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{code}");
        }
        assert_eq!(default_severity("no-such-code"), None);
    }

    #[test]
    fn overrides_change_or_drop_findings() {
        let f = |code| Finding {
            code,
            severity: Severity::Warning,
            message: String::new(),
            gpu: None,
            ptx_span: Span { start: 0, end: 0 },
            ptx_line: 1,
            source_file: None,
            source_line: None,
            fixes: Vec::new(),
        };
        let mut v = vec![f(tail_wave::CODE), f(grid_too_small::CODE), f(memory_bound::CODE)];
        let overrides: BTreeMap<String, Option<Severity>> =
            [(tail_wave::CODE.to_string(), None), (grid_too_small::CODE.to_string(), Some(Severity::Error))].into();
        apply_severities(&mut v, &overrides);
        assert_eq!(v.iter().map(|f| (f.code, f.severity)).collect::<Vec<_>>(), vec![(grid_too_small::CODE, Severity::Error), (memory_bound::CODE, Severity::Warning)]);
    }

    #[test]
    fn grouping_is_by_source_line_then_ptx_line() {
        let items = vec![(Some(5), 10), (Some(5), 11), (None, 12), (None, 13), (Some(6), 14)];
        let g = group_by_line(items, |(l, p)| (None, *l, *p));
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 1, 1, 1]);
    }
}
