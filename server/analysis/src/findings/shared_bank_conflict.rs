//! `shared-bank-conflict`: a warp's shared-memory request is serialised over one bank.
//!
//! ## What it does
//! Reports a shared-memory access whose warp request the static profile computes to be
//! serialised at least [`MIN_WAYS`] (2) ways: several lanes address different 4-byte
//! words of the same bank (32 banks on CC ≥ 2.0). One finding per source line.
//!
//! ## Why is this bad?
//! An n-way conflict costs n shared-memory wavefronts instead of one (CUDA C++
//! Programming Guide, § "Shared Memory" of each compute capability). CGPredict (Wang,
//! Zhong & Mitra 2017, §4.3, Table 5) shows that tiling a column-wise pattern into shared
//! memory without care leaves SYRK 6.4× slower than GEMM because of X-way conflicts;
//! Dasgupta (2011, §3.1.2.2) accounts the conflicted latency in the compute cycles.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/transpose_naive.cu: a 32x32 tile read column-wise; the 32 lanes
//! // hit words 32 apart, all in one bank: a 32-way conflict.
//! __shared__ float tile[TILE_DIM][TILE_DIM];
//! out[y * height + x] = tile[threadIdx.x][threadIdx.y];
//! ```
//!
//! ## Fix
//! Pad the row by one element (`tile[32][33]`): rows then start one bank apart and a
//! column walk touches 32 different banks. The fix `PadSharedArray` is offered when the
//! address traces back to one static `.shared` array (not `extern __shared__`) and the
//! stride between lanes is a whole number of elements; the row length it pads is that
//! stride. The "+1" padding is our addition: CGPredict's bank-conflict discussion (Wang,
//! Zhong & Mitra 2017, §3.6 and §4.3) does not propose a fix.

use kernel_profile::{MemoryAccess, Space};

use super::{Ctx, Finding, Fix, FixKind, folded, group_by_line, trace};
use crate::Severity;

pub const CODE: &str = "shared-bank-conflict";
pub const SEVERITY: Severity = Severity::Warning;

/// Accesses serialised at least this many ways are reported.
pub const MIN_WAYS: u32 = 2;

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    let Some(t) = cx.primary() else { return };
    let bad: Vec<(&MemoryAccess, u32)> = t
        .profile
        .memory_accesses
        .iter()
        .filter(|a| a.space == Space::Shared)
        .filter_map(|a| a.bank_conflict_ways.filter(|w| *w >= MIN_WAYS).map(|w| (a, w)))
        .collect();
    for group in group_by_line(bad, |(a, _)| (a.source_file.clone(), a.source_line, a.ptx_line)) {
        let Some(&(worst, ways)) = group.iter().max_by_key(|(_, w)| *w) else { continue };
        let kind = match worst.kind {
            kernel_profile::AccessKind::Load => "load",
            kernel_profile::AccessKind::Store => "store",
            kernel_profile::AccessKind::Atomic => "atomic",
        };
        let stride = worst.stride_bytes.map(|s| format!(" (stride {s} B between consecutive threads)")).unwrap_or_default();
        let message = format!(
            "{ways}-way shared-memory bank conflict on a {kind}{stride}: the warp's request takes {ways} wavefronts instead of 1{}",
            folded(group.len())
        );
        let mut f = cx.on_line(CODE, SEVERITY, message, worst.ptx_line, (worst.source_file.clone(), worst.source_line));
        f.fixes.extend(pad_fix(cx, worst));
        acc.push(f);
    }
}

fn pad_fix(cx: &Ctx<'_>, a: &MemoryAccess) -> Option<Fix> {
    let func = cx.func?;
    let is_shared_access = |i: &ptx_ir::Instr| matches!(i.class, ptx_ir::InstrClass::Load(Space::Shared) | ptx_ir::InstrClass::Store(Space::Shared) | ptx_ir::InstrClass::Atomic(Space::Shared));
    let origins = trace::origins_at_line(cx.module, func, a.ptx_line, is_shared_access);
    let var_name = origins.shared_var()?;
    let var = func.variables.iter().chain(cx.module.variables.iter()).find(|v| v.name == var_name)?;
    if var.is_extern_array() {
        return None;
    }
    let elem = i64::from(a.bytes_per_thread / u32::from(a.vector_width.max(1))).max(1);
    let stride = a.stride_bytes?;
    if stride <= 0 || stride % elem != 0 {
        return None;
    }
    let row = u32::try_from(stride / elem).ok()?;
    let variable = trace::source_var_name(var_name);
    Some(Fix {
        title: format!("Pad `{variable}` rows from {row} to {} elements", row + 1),
        kind: FixKind::PadSharedArray { variable, from_row: row, to_row: row + 1 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, findings};

    #[test]
    fn naive_transpose_has_a_32_way_conflict_with_a_padding_fix() {
        let (_, a) = analyze("transpose_naive", [64, 64, 1], [32, 32, 1], &[], &["a100-sxm4-80gb"]);
        let f = findings(&a, "transpose_naive", CODE);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].message.starts_with("32-way shared-memory bank conflict on a load (stride 128 B"), "{}", f[0].message);
        assert_eq!(f[0].source_line, Some(27));
        assert_eq!(f[0].fixes[0].kind, FixKind::PadSharedArray { variable: "tile".into(), from_row: 32, to_row: 33 });
    }

    #[test]
    fn padded_transpose_and_tree_reduction_are_conflict_free() {
        let (_, a) = analyze("transpose_padded", [64, 64, 1], [32, 32, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "transpose_padded", CODE).is_empty(), "{:?}", a.kernels[0].findings);
        let (_, a) = analyze("reduce_tree", [256, 1, 1], [256, 1, 1], &[], &["a100-sxm4-80gb"]);
        assert!(findings(&a, "reduce_tree", CODE).is_empty(), "{:?}", a.kernels[0].findings);
    }
}
