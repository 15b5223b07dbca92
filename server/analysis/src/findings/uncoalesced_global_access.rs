//! `uncoalesced-global-access`: a warp's global load or store touches many more 32-byte
//! sectors than its bytes need.
//!
//! ## What it does
//! Reports a global-memory access (load, store or atomic) whose sectors per warp request,
//! as the static profile computes them from the address's dependence on the thread index,
//! are at least [`UNCOALESCED_FACTOR`] (2×) the minimum: `ceil(lanes × bytes per thread /
//! 32)` sectors for the warp's active lanes. One finding per source line.
//!
//! Data-dependent (irregular) addresses are *not* reported: for them the profile only
//! assumes a worst case (`ProfileOptions::irregular_sectors`), and a warning needs
//! evidence. Their assumed cost still enters the predictions, and the profile's
//! assumptions list says so.
//!
//! ## Why is this bad?
//! Every extra sector is DRAM or L2 bandwidth spent on bytes nobody reads. CGPredict
//! (Wang, Zhong & Mitra 2017, §3.3.2 and §4.4.1, Table 6) classifies accesses as
//! coalesced (2 transactions per warp) or uncoalesced (32) and gets an 11× speed-up on
//! SYRK from making warps walk rows instead of columns; Dasgupta (2011, §3.2.1 and
//! §3.2.6, Tables 8–10) shows the transaction mix driving the departure delay and thus
//! MWP.
//!
//! ## Example
//! ```cuda
//! // tests/fixtures/cu/matmul_naive.cu: j follows threadIdx.x and selects a row, so
//! // consecutive threads read N floats apart (16 sectors instead of 4 per warp).
//! Pvalue += Md[j * N + k] * Nd[k * N + i];
//! ```
//!
//! ## Fix
//! Make `threadIdx.x` index the contiguous dimension (swap the index roles or transpose
//! the data, Wang, Zhong & Mitra 2017 §4.4.1), or stage the tile through shared memory. When the
//! pointer is only read, the fix `RestrictConst` marks the parameter `const __restrict__`
//! so that the compiler may use the read-only data cache (`ld.global.nc`), which softens
//! the cost of scattered reads (CUDA C++ Programming Guide, § "Read-Only Data Cache").

use kernel_profile::{AccessClass, AccessKind, MemoryAccess, Space};

use super::{Ctx, Finding, Fix, FixKind, folded, group_by_line, trace};
use crate::Severity;

pub const CODE: &str = "uncoalesced-global-access";
pub const SEVERITY: Severity = Severity::Warning;

/// An access is uncoalesced when it needs at least this many times the minimum sectors.
pub const UNCOALESCED_FACTOR: f64 = 2.0;

/// Bytes per sector (CUDA C++ Best Practices Guide, § "Coalesced Access to Global
/// Memory": compute capability 6.0 and later serve global requests in 32-byte sectors).
pub const SECTOR_BYTES: u64 = 32;

/// The fewest sectors `lanes` threads reading `bytes` each could touch.
pub fn minimum_sectors(lanes: u64, bytes: u32) -> u64 {
    (lanes * u64::from(bytes)).div_ceil(SECTOR_BYTES).max(1)
}

pub(crate) fn check(cx: &Ctx<'_>, acc: &mut Vec<Finding>) {
    let Some(t) = cx.primary() else { return };
    let lanes = cx.kernel.launch.threads_per_block().clamp(1, 32);
    let bad: Vec<(&MemoryAccess, f64)> = t
        .profile
        .memory_accesses
        .iter()
        .filter(|a| matches!(a.space, Space::Global | Space::Generic) && matches!(a.class, AccessClass::Coalesced | AccessClass::Strided))
        .filter_map(|a| {
            let ratio = a.transactions_per_request / minimum_sectors(lanes, a.bytes_per_thread) as f64;
            (ratio >= UNCOALESCED_FACTOR).then_some((a, ratio))
        })
        .collect();
    for group in group_by_line(bad, |(a, _)| (a.source_file.clone(), a.source_line, a.ptx_line)) {
        let Some(&(worst, ratio)) = group.iter().max_by(|x, y| x.1.total_cmp(&y.1)) else { continue };
        let kind = match worst.kind {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        };
        let how = match worst.stride_bytes {
            Some(s) => format!("stride {s} B between consecutive threads"),
            None => "no constant stride between consecutive threads".to_string(),
        };
        let message = format!(
            "uncoalesced global {kind}: {} sectors per warp request ({how}); {ratio:.0}× the minimum of {}{}",
            worst.transactions_per_request,
            minimum_sectors(lanes, worst.bytes_per_thread),
            folded(group.len())
        );
        let mut f = cx.on_line(CODE, SEVERITY, message, worst.ptx_line, (worst.source_file.clone(), worst.source_line));
        f.fixes.extend(restrict_fix(cx, &group));
        acc.push(f);
    }
}

/// `const __restrict__` for the pointer parameter the loads read through, when every
/// access of the group is a load through the same parameter that the kernel never writes
/// and that is not already read through the read-only path (`ld.global.nc`).
fn restrict_fix(cx: &Ctx<'_>, group: &[(&MemoryAccess, f64)]) -> Option<Fix> {
    let func = cx.func?;
    let mut param = None;
    for (a, _) in group {
        if a.kind != AccessKind::Load {
            return None;
        }
        let is_plain_load = |i: &ptx_ir::Instr| i.base() == "ld" && i.has_modifier("global") && !i.has_modifier("nc");
        let p = trace::origins_at_line(cx.module, func, a.ptx_line, is_plain_load).pointer_param()?;
        if param.is_some_and(|q| q != p) {
            return None;
        }
        param = Some(p);
    }
    let p = param?;
    if trace::param_is_written(cx.module, func, p) {
        return None;
    }
    let name = func.params.get(p as usize).map(|it| ptx_ir::short_param_name(&it.name)).unwrap_or_default();
    Some(Fix {
        title: format!("Mark parameter {p} ({name}) `const __restrict__` so its loads may use the read-only cache"),
        kind: FixKind::RestrictConst { param_index: p },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::test_support::{analyze, cu_line, findings};

    #[test]
    fn naive_matmul_md_is_uncoalesced_at_its_source_line() {
        // Amarís et al. 2016 Fig. 3: Md[j*N + k] with j = threadIdx.x: 16 sectors vs 4 minimum.
        let (_, a) = analyze("matmul_naive", [64, 64, 1], [16, 16, 1], &[("param_3", 1024)], &["a100-sxm4-80gb"]);
        let f = findings(&a, "matmul_naive", CODE);
        let (load_line, store_line) = (cu_line("matmul_naive", "Pvalue += Md"), cu_line("matmul_naive", "Pd[j * N + i] ="));
        let load = f.iter().find(|f| f.source_line == Some(load_line)).expect("the Md load");
        assert!(load.message.starts_with("uncoalesced global load: 16 sectors per warp request (stride 4096 B between consecutive threads); 4× the minimum of 4"), "{}", load.message);
        assert!(load.message.contains("5 PTX instructions"), "{}", load.message);
        assert!(load.source_file.as_deref().is_some_and(|p| p.ends_with("matmul_naive.cu")), "{:?}", load.source_file);
        // Md (parameter 1) is only read: const __restrict__.
        assert_eq!(load.fixes.iter().map(|f| f.kind.clone()).collect::<Vec<_>>(), vec![FixKind::RestrictConst { param_index: 1 }]);
        // The store Pd[j*N + i] is uncoalesced as well, without a fix.
        let store = f.iter().find(|f| f.source_line == Some(store_line)).expect("the Pd store");
        assert!(store.message.starts_with("uncoalesced global store"), "{}", store.message);
        assert!(store.fixes.is_empty());
        assert_eq!(f.len(), 2, "{f:?}");
    }

    #[test]
    fn coalesced_kernels_are_quiet() {
        for (name, grid, block) in [("vadd", [4096, 1, 1], [256, 1, 1]), ("matmul_coalesced", [64, 64, 1], [16, 16, 1]), ("transpose_padded", [64, 64, 1], [32, 32, 1])] {
            let (_, a) = analyze(name, grid, block, &[("param_3", 1024)], &["a100-sxm4-80gb"]);
            assert!(findings(&a, "", CODE).is_empty(), "{name}: {:?}", a.kernels[0].findings);
        }
    }

    #[test]
    fn data_dependent_addresses_are_not_reported() {
        // spmv_csr: x[col[j]] is data-dependent; the profile assumes a worst case but the
        // finding needs evidence.
        let (_, a) = analyze("spmv_csr", [1024, 1, 1], [256, 1, 1], &[], &["a100-sxm4-80gb"]);
        for k in &a.kernels {
            let irregular: Vec<u32> = k.targets[0].profile.memory_accesses.iter().filter(|m| m.class == AccessClass::Irregular).map(|m| m.ptx_line).collect();
            assert!(!irregular.is_empty());
            assert!(k.findings.iter().filter(|f| f.code == CODE).all(|f| !irregular.contains(&f.ptx_line)), "{:?}", k.findings);
        }
    }

    #[test]
    fn minimum_sectors_follow_the_bytes_of_the_warp() {
        assert_eq!(minimum_sectors(32, 4), 4);
        assert_eq!(minimum_sectors(32, 16), 16);
        assert_eq!(minimum_sectors(8, 4), 1);
    }
}
