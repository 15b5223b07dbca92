//! The MWP/CWP execution-time model of Hong & Kim (ISCA 2009) with the GT200 extensions of
//! Dasgupta's thesis "CUDA Performance Analyzer" (Georgia Tech, 2011; Dasgupta 2011).
//!
//! # What it estimates
//! The execution time of one kernel launch, in core cycles and microseconds. The model asks
//! how many warps of one SM can have memory requests in flight together (MWP, "memory warp
//! parallelism"). It also asks how many warps can compute while one warp waits for memory
//! (CWP, "computation warp parallelism"). The smaller of the two names the bottleneck, and one
//! of three closed-form cases turns per-warp compute and memory cycles into kernel cycles.
//!
//! # Inputs
//! Everything is *per warp* (= per thread), dynamic, summed over the whole kernel, as in the
//! thesis (Dasgupta 2011 §3.2): instructions, special-latency instructions, global
//! memory requests, and the 32/64/128-byte transactions they spawn. Launch facts are the
//! resident warps `N`, the resident blocks per SM, the grid size and the active SMs. The device
//! facts are clock, DRAM bandwidth, base memory latency, departure delays and issue cycles.
//!
//! # Two layers
//! - [`evaluate`] is the paper layer: it takes the paper's own symbols ([`MwpCwpInputs`],
//!   [`Device`]) and returns every intermediate ([`MwpCwpOutputs`]). The reproductions of the
//!   thesis's tables feed published inputs into this function directly
//!   (`tests/mwp_cwp_tables.rs`).
//! - [`predict`] is the adapter: it derives the paper's inputs from a static
//!   [`KernelProfile`] and returns the common [`Prediction`].
//!
//! # Sources
//! Equation numbers are the thesis's (Dasgupta 2011):
//! - Hong & Kim base model (thesis §2.2.3, eqs 1–15; eqs 4–10 and 12–14 were lost from the
//!   thesis's published text and are taken from Hong & Kim, ISCA 2009).
//! - Transaction-based memory model (thesis §3.2.1, eqs 16–26; eqs 17, 25 and 26 are
//!   missing from the published text and are our reconstructions by analogy with eqs 16
//!   and 18–24; they reproduce Tables 8–10 to four digits).
//! - Duplicate and independent loads (eq 27), final MWP (eq 28), CWP (eqs 29–30).
//! - Compute cycles with high-latency instructions (thesis §3.2.3 and §4.2.4: sqrt 32, fdiv
//!   36, rsqrt 16, everything else 4 cycles).
//! - Merging (thesis §3.2.4.3: transactions divided by the duplicate-load factor), vector
//!   operations (thesis §3.2.5 and Table 11: departure delay 57 instead of 37, no merging).
//! - Synchronisation cost (Hong & Kim, ISCA 2009; the thesis lists synchronisation
//!   instructions as an input, §3.1, but does not restate the formula).
//! - Tuned GT200 parameters (thesis Tables 6–11): 1312 MHz, base latency 450 cycles,
//!   departure delays 37/37/58 cycles (32/64/128 B scalar) and 57 (vector).
//!
//! # Assumptions and limits
//! - The three cases are tested in Hong & Kim's order; "MWP == N == CWP" uses a relative
//!   tolerance of 1e-9 (MWP can exceed N by eq 27, so exact equality may never hold).
//! - `#Rep` is fractional (no ceiling): back-solving the thesis's FMM predictions
//!   (Tables 12–16) with base latency 450 gives latencies below 450 with a ceiling.
//! - Transactions per request below one (possible after the duplicate-load division) are
//!   clamped to one: a request costs at least one transaction. The thesis is silent;
//!   [`MwpCwpOutputs::ntpr_clamped`] reports when it happened.
//! - A kernel with no global memory request runs `Comp_cycles × N × #Rep` cycles (the
//!   thesis's "CWP undefined" for such kernels is no formula; back-solving its Table 6
//!   confirms this one).
//! - Not modelled, as in the thesis: SFU work overlapping SP work, overlap of independent
//!   compute with a pending load inside one warp (prefetching), caches (GT200 has none for
//!   global data). The model is tuned for the Tesla C1060 only; on any other GPU its
//!   departure delays are estimates and its confidence is low.

mod adapter;
mod paper;

pub use adapter::*;
pub use paper::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesced_floats_spawn_two_64_byte_transactions() {
        assert_eq!(cc13_transactions(4, |l| i64::from(l) * 4), [0, 2, 0]);
    }

    #[test]
    fn broadcast_spawns_two_32_byte_transactions() {
        assert_eq!(cc13_transactions(4, |_| 0), [2, 0, 0]);
    }

    #[test]
    fn thesis_micro_benchmark_patterns_match_their_stated_sizes() {
        // Table 17, 32 B scheme: lanes 0-7 and 8-15 read the same 8 floats.
        assert_eq!(
            cc13_transactions(4, |l| i64::from((l % 32) / 16 * 8 + l % 8) * 4),
            [2, 0, 0]
        );
        // Table 17, 128 B scheme: stride-2 floats.
        assert_eq!(cc13_transactions(4, |l| i64::from(l) * 8), [0, 0, 2]);
    }

    #[test]
    fn float4_coalesced_spawns_four_128_byte_transactions() {
        assert_eq!(cc13_transactions(16, |l| i64::from(l) * 16), [0, 0, 4]);
    }

    #[test]
    fn irregular_lanes_spawn_one_32_byte_transaction_each() {
        assert_eq!(cc13_transactions(4, |l| i64::from(l) * 4096), [32, 0, 0]);
    }

    #[test]
    fn no_memory_kernel_runs_compute_times_warps() {
        let d = Device::tesla_c1060();
        let x = MwpCwpInputs::simple(
            32.0,
            2.0,
            120.0,
            30.0,
            1000.0,
            MemoryTraffic::Transactions {
                warp_mem: 0.0,
                warp_memtran_32b: 0.0,
                warp_memtran_64b: 0.0,
                warp_memtran_128b: 0.0,
                vector_memtran: 0.0,
                vector_bytes_per_transaction: 0.0,
            },
        );
        let out = evaluate(&d, &x).unwrap();
        assert_eq!(out.case, Case::NoMemory);
        assert!((out.exec_cycles - 4.0 * 1000.0 * 32.0 * 2.0).abs() < 1e-6);
    }

    #[test]
    fn invalid_inputs_give_none() {
        let d = Device::tesla_c1060();
        let mut x = MwpCwpInputs::simple(
            0.0,
            1.0,
            1.0,
            1.0,
            10.0,
            MemoryTraffic::CoalUncoal {
                coal_mem_insts: 1.0,
                uncoal_mem_insts: 0.0,
                uncoal_per_mw: 32.0,
                load_bytes_per_warp: 128.0,
            },
        );
        assert!(evaluate(&d, &x).is_none());
        x.active_warps_per_sm = 4.0;
        x.total_insts = f64::NAN;
        assert!(evaluate(&d, &x).is_none());
        x.total_insts = 10.0;
        assert!(evaluate(&d, &x).is_some());
    }
}
