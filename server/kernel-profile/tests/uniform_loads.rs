//! Values loaded from one address per warp are the same in every lane: addresses built
//! on them plus the lane index are coalesced, not gathers.

use kernel_profile::AccessClass;

mod common;
use common::{line_of, profile};

#[test]
fn a_warp_per_row_spmv_reads_its_row_coalesced() {
    // spmv_csr_vector: warp w reads row_start = row_ptr[w] (one address per warp), then
    // values[row_start + lane + 32 k] and col_idx[...] (32 consecutive words per request: 4
    // sectors, 5 when the row starts off a sector boundary), while x[col_idx[...]] stays a
    // gather. nvcc splits the loop into a remainder loop and one unrolled by 4, both
    // stepping jj: the remainder loop's entry value is row_start + lane, not the unrolled
    // loop's later value, which cannot flow back to it.
    let p = profile("spmv_csr", "_Z15spmv_csr_vectoriPKiS0_PKfS2_Pf", [16384, 1, 1], [256, 1, 1], &[("num_rows", 1 << 19)]);
    let line = line_of("spmv_csr", "sum += values[jj] * x[col_idx[jj]]");
    let row: Vec<_> = p.memory_accesses.iter().filter(|a| a.source_line == Some(line)).collect();
    // Per copy of the body: col_idx[jj], then x[col], then values[jj]; one copy in the
    // remainder loop, four in the unrolled one.
    assert_eq!(row.len(), 15, "{row:#?}");
    let coalesced = row.iter().filter(|a| a.class == AccessClass::Coalesced).count();
    let gathers = row.iter().filter(|a| a.class == AccessClass::Irregular).count();
    assert_eq!((coalesced, gathers), (10, 5), "{row:#?}");
    for a in row.iter().filter(|a| a.class == AccessClass::Coalesced) {
        assert!(a.transactions_per_request <= 5.0, "{a:#?}");
    }
    // row_ptr[row] and row_ptr[row + 1]: one word per warp.
    let starts = line_of("spmv_csr", "int row_start = row_ptr[row];");
    assert!(p.memory_accesses.iter().filter(|a| a.source_line == Some(starts)).all(|a| a.class == AccessClass::Uniform));
}

#[test]
fn a_thread_per_row_spmv_still_gathers() {
    // spmv_csr_scalar: thread t reads row_ptr[t] (consecutive words), so row_start differs
    // between lanes: values[row_start + k] are data-dependent per lane, not coalesced.
    let p = profile("spmv_csr", "_Z15spmv_csr_scalariPKiS0_PKfS2_Pf", [4096, 1, 1], [128, 1, 1], &[("num_rows", 1 << 19)]);
    let line = line_of("spmv_csr", "dot += values[jj] * x[col_idx[jj]];");
    let row: Vec<_> = p.memory_accesses.iter().filter(|a| a.source_line == Some(line)).collect();
    assert!(!row.is_empty());
    assert!(row.iter().all(|a| a.class == AccessClass::Irregular), "{row:#?}");
}
