//! `unknown-trip-count`: a loop whose trip count the analysis cannot read, so that every
//! prediction rests on an assumed count.
//!
//! ## What it does
//! Reports a loop whose count is neither a constant, nor a formula over the launch and
//! arguments it was given, nor what simulating the warps' control flow counts: a loop
//! that ends on data (an escape-time iteration, a convergence test, a CSR row whose
//! bounds are loaded), or whose formula needs an argument nobody supplied. The profile
//! then runs it the default number of times (16, `--default-trip-count`), or as many as a
//! counted exit beside the data-dependent one allows when that is fewer (the message
//! names that bound), and the time, the bound and the power of the kernel follow from
//! that guess. One finding per source
//! loop (nvcc's unrolled loop and its remainder loop are one).
//!
//! ## Why is this bad?
//! Nothing is wrong with the code: the finding says that the numbers shown for the kernel
//! are only as good as the assumed count. A loop that really runs 1000 times is 60 times
//! more work than the default says.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/spmv_csr.cu: the row's bounds come from row_ptr in memory.
//! for (int jj = row_start; jj < row_end; jj++)
//!     dot += values[jj] * x[col_idx[jj]];
//! ```
//!
//! ## Fix
//! State the count: a `// warpsight: trips=N` comment on the line above the loop (or at
//! the end of its line), N the iterations per entry, averaged over the threads where they
//! differ (`trips=37.5` for a matrix with 37.5 non-zeros per row). The quick fix inserts
//! the comment with the assumed count, to be edited. Where the count is a formula over
//! arguments, giving the arguments (`--arg`, a launch annotation) works too.

use super::{Ctx, Finding, FixKind, group_by_line};
use crate::Severity;
use crate::fixes::Fix;

pub const CODE: &str = "unknown-trip-count";
pub const SEVERITY: Severity = Severity::Information;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    let Some(t) = cx.primary() else { return };
    let unknown = t.profile.loops.iter().filter(|l| l.trip_count.is_none() && l.stated_at.is_none());
    for group in group_by_line(unknown, |l| (l.source_file.clone(), l.source_line, l.ptx_line)) {
        let Some(l) = group.first() else { continue };
        let why = match &l.trip_count_expr {
            Some(e) => format!("its count `{e}` depends on arguments not supplied"),
            None => {
                let note = cx.func.and_then(|f| f.loops.iter().find(|lp| lp.ptx_line == l.ptx_line)).and_then(|lp| lp.trip_note.clone());
                match note {
                    Some(n) => format!("its exit depends on data ({n})"),
                    None => "its exit depends on data".to_string(),
                }
            }
        };
        let why = match l.trip_bound {
            Some(b) => format!("{why}, and its counted exit ends it after at most {b} iterations"),
            None => why,
        };
        // nvcc's unrolled loop and its remainder share the source loop's assumed count.
        let assumed = if group.len() == 1 {
            format!("assume it runs {} times per entry", l.assumed_trip_count)
        } else {
            "assume it runs the default count, split between the loop nvcc unrolled and its remainder".to_string()
        };
        let message = format!(
            "loop trip count unknown: {why}; the predictions {assumed}. State the real count with a `// warpsight: trips=N` comment above the loop"
        );
        // On the header's first instruction (the loop's PTX line may be its label's).
        let at = cx
            .func
            .and_then(|func| {
                let lp = func.loops.iter().find(|lp| lp.ptx_line == l.ptx_line)?;
                let block = func.blocks.get(lp.header as usize)?;
                func.instrs.get(block.instrs.start as usize).map(|i| i.ptx_line)
            })
            .unwrap_or(l.ptx_line);
        let mut f = cx.on_line(CODE, SEVERITY, message, at, (l.source_file.clone(), l.source_line));
        // The quick fix edits the CUDA file the kernel is defined in (a loop from a header
        // has its lines in the header: no fix), or a PTX file at the loop's PTX line (no
        // CUDA source known: no source line to edit).
        let source_line = match (&cx.kernel.source, &l.source_file) {
            (Some((file, _)), Some(lf)) if file == lf => Some(l.source_line),
            (Some(_), _) => None,
            (None, _) => Some(None),
        };
        if let Some(source_line) = source_line {
            let trips = if group.len() == 1 { l.assumed_trip_count.round().max(0.0) as u64 } else { 16 };
            f.fixes.push(Fix {
                title: "State this loop's trip count in a `// warpsight: trips=N` comment".into(),
                kind: FixKind::StateTripCount { source_line, ptx_line: l.ptx_line, trips },
            });
        }
        acc.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, cu_line, findings};

    #[test]
    fn a_csr_row_loop_has_an_unknown_count_and_a_fix_that_states_it() {
        let (_, a) = analyze("spmv_csr", [1024, 1, 1], [256, 1, 1], &[("param_0", 262144)], &["a100-sxm4-80gb"]);
        let f = findings(&a, "spmv_csr_scalar", CODE);
        assert_eq!(f.len(), 1, "{:?}", a.kernels[0].findings);
        assert_eq!(f[0].source_line, Some(cu_line("spmv_csr", "for (int jj = row_start; jj < row_end; jj++)")));
        assert!(f[0].message.contains("its exit depends on data"), "{}", f[0].message);
        // nvcc unrolled the loop by 4: two PTX loops, one finding.
        assert!(f[0].message.contains("split between the loop nvcc unrolled and its remainder"), "{}", f[0].message);
        assert!(matches!(f[0].fixes[0].kind, FixKind::StateTripCount { trips: 16, .. }), "{:?}", f[0].fixes);
    }

    #[test]
    fn counted_loops_are_quiet() {
        let (_, a) = analyze("matmul_tiled", [64, 64, 1], [16, 16, 1], &[("param_3", 1024)], &["a100-sxm4-80gb"]);
        assert!(a.kernels.iter().all(|k| k.findings.iter().all(|f| f.code != CODE)), "{:?}", a.kernels[0].findings);
    }
}
