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


use kernel_profile::{AccessClass, KernelProfile, Space};

use crate::prediction::{Bound, Confidence, Prediction};

/// Relative tolerance for the "MWP == N and CWP == N" test of case 1.
const CASE1_REL_TOL: f64 = 1e-9;

/// The device parameters of the model: the thesis's tuned set for one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// A name for messages, e.g. "Tesla C1060".
    pub name: String,
    /// Compute capability (major, minor); it selects the coalescing rule and the confidence.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub n_sms: u32,
    /// The clock that converts cycles to time and enters `BW_per_warp` (GHz).
    pub freq_ghz: f64,
    /// Peak DRAM bandwidth (GB/s).
    pub mem_bandwidth_gbs: f64,
    /// `Mem_LD` / `base_mem_latency`: DRAM round trip of one transaction (cycles).
    pub base_mem_latency: f64,
    /// Departure delay of 32-byte scalar transactions (cycles).
    pub dep_delay_32b: f64,
    /// Departure delay of 64-byte scalar transactions (cycles).
    pub dep_delay_64b: f64,
    /// Departure delay of 128-byte scalar transactions (cycles).
    pub dep_delay_128b: f64,
    /// Departure delay of transactions spawned by vector loads and stores (cycles).
    pub dep_delay_vector: f64,
    /// Hong & Kim's `Departure_del_coal` for the coalesced/uncoalesced form (cycles).
    pub departure_del_coal: f64,
    /// Hong & Kim's `Departure_del_uncoal` for the coalesced/uncoalesced form (cycles).
    pub departure_del_uncoal: f64,
    /// Cycles one ordinary warp instruction occupies the SM (`#Issue_cycles`).
    pub issue_cycles: f64,
    /// Latency charged for one `sqrt` (cycles).
    pub sqrt_cycles: f64,
    /// Latency charged for one floating-point division (cycles).
    pub div_cycles: f64,
    /// Latency charged for one `rsqrt` (cycles); also used for other SFU operations.
    pub rsqrt_cycles: f64,
    /// Resident warps per SM at full occupancy.
    pub max_warps_per_sm: u32,
    /// Whether the departure delays were tuned on this GPU by the thesis (only the C1060).
    pub tuned: bool,
}

impl Device {
    /// The Tesla C1060 (GT200, compute capability 1.3) with the thesis's tuned parameters.
    ///
    /// Sources: 1312 MHz tuned clock (thesis Table 6), base latency 450 (Table 7),
    /// departure delays 37/37/58 (Tables 8–10) and 57 for vector operations (Table 11),
    /// sqrt/fdiv/rsqrt 32/36/16 cycles and 4 issue cycles (thesis §3.2.3, §4.2.4). The SM
    /// count (30), the 102.4 GB/s bandwidth and the 32 warps per SM are NVIDIA's C1060
    /// datasheet values (NVIDIA Tesla C1060 board specification BD-04111-001; CUDA 2.3
    /// Programming Guide Appendix A); the thesis does not print them.
    /// Hong & Kim's coalesced/uncoalesced departure delays (4/40) are their GTX280 values
    /// (Hong & Kim 2009, Table 4); the thesis replaced that form by transactions.
    pub fn tesla_c1060() -> Self {
        Device {
            name: "Tesla C1060".into(),
            compute_capability: (1, 3),
            n_sms: 30,
            freq_ghz: 1.312,
            mem_bandwidth_gbs: 102.4,
            base_mem_latency: 450.0,
            dep_delay_32b: 37.0,
            dep_delay_64b: 37.0,
            dep_delay_128b: 58.0,
            dep_delay_vector: 57.0,
            departure_del_coal: 4.0,
            departure_del_uncoal: 40.0,
            issue_cycles: 4.0,
            sqrt_cycles: 32.0,
            div_cycles: 36.0,
            rsqrt_cycles: 16.0,
            max_warps_per_sm: 32,
            tuned: true,
        }
    }

    /// An untuned device built from datasheet facts only, for GPUs the thesis never measured.
    ///
    /// The departure delay of a transaction is estimated as the time the DRAM needs to
    /// deliver one transaction from every SM, `n_sms × freq × bytes / bandwidth` (cycles),
    /// raised by the C1060's ratio of tuned to bandwidth-derived delay (37 / 12.3 = 3.0 for
    /// 32 B; derived from Table 8 and the C1060 datasheet). This is an estimate: the thesis
    /// says every GPU needs its own tuning (§3.2.6). Issue cycles are 4 per warp
    /// instruction per scheduler, and special latencies keep the GT200 values. Both are
    /// assumptions that [`predict`] lists.
    pub fn untuned(
        name: &str,
        compute_capability: (u32, u32),
        n_sms: u32,
        freq_ghz: f64,
        mem_bandwidth_gbs: f64,
        dram_latency_cycles: f64,
        max_warps_per_sm: u32,
    ) -> Self {
        let c1060 = Device::tesla_c1060();
        let per_byte = if mem_bandwidth_gbs > 0.0 {
            f64::from(n_sms) * freq_ghz / mem_bandwidth_gbs
        } else {
            0.0
        };
        // Tuned 37 cycles against 30 × 1.312 × 32 / 102.4 = 12.3 bandwidth-derived cycles.
        let c1060_ratio = 37.0 / (30.0 * 1.312 * 32.0 / 102.4);
        let dep = |bytes: f64| (per_byte * bytes * c1060_ratio).max(1.0);
        Device {
            name: name.into(),
            compute_capability,
            n_sms,
            freq_ghz,
            mem_bandwidth_gbs,
            base_mem_latency: dram_latency_cycles,
            dep_delay_32b: dep(32.0),
            dep_delay_64b: dep(64.0),
            dep_delay_128b: dep(128.0),
            dep_delay_vector: dep(32.0) * 57.0 / 37.0,
            departure_del_coal: c1060.departure_del_coal,
            departure_del_uncoal: c1060.departure_del_uncoal,
            tuned: false,
            max_warps_per_sm,
            ..c1060
        }
    }
}

impl Device {
    /// The device for a GPU of the database. A GPU whose data holds the thesis's tuned
    /// set (the Tesla C1060) gets it, with its tuned 1312 MHz clock, not the 1296 MHz
    /// datasheet clock. Other CC 1.x GPUs
    /// share GT200's memory system and keep its tuned transaction delays, untuned. Every
    /// other GPU gets [`Device::untuned`] from its datasheet facts, with Hong & Kim's
    /// departure delays, issue cycles and special latencies from the database where it
    /// has them.
    pub fn from_gpu(gpu: &gpu_spec::Gpu) -> Self {
        let c1060 = Device::tesla_c1060();
        let cc = (gpu.cc.major, gpu.cc.minor);
        // The thesis's tuned set, where the GPU's data holds it (`model_params`
        // `seed002.*`: the C1060's, Tables 6 to 11 and section 3.2.3), keyed on the data
        // rather than on a spelled id.
        let mp = |key: &str| gpu.model_params.get(&format!("seed002.{key}")).copied();
        if let (Some(freq_mhz), Some(base_mem_latency), Some(d32), Some(d64), Some(d128), Some(dvec), Some(issue)) = (
            mp("freq_tuned_mhz"),
            mp("base_mem_latency_cycles"),
            mp("dep_delay_32b_cycles"),
            mp("dep_delay_64b_cycles"),
            mp("dep_delay_128b_cycles"),
            mp("dep_delay_vector_32b_cycles"),
            mp("issue_cycles"),
        ) {
            return Device {
                name: gpu.name.clone(),
                compute_capability: cc,
                n_sms: gpu.sm_count,
                freq_ghz: freq_mhz / 1e3,
                mem_bandwidth_gbs: gpu.mem_bandwidth_gbs,
                base_mem_latency,
                dep_delay_32b: d32,
                dep_delay_64b: d64,
                dep_delay_128b: d128,
                dep_delay_vector: dvec,
                issue_cycles: issue,
                max_warps_per_sm: gpu.max_warps_per_sm(),
                tuned: true,
                ..c1060
            };
        }
        let mut d = if cc.0 == 1 {
            Device {
                name: gpu.name.clone(),
                compute_capability: cc,
                n_sms: gpu.sm_count,
                freq_ghz: gpu.boost_clock_mhz / 1e3,
                mem_bandwidth_gbs: gpu.mem_bandwidth_gbs,
                base_mem_latency: gpu.dram_latency_cycles,
                max_warps_per_sm: gpu.max_warps_per_sm(),
                tuned: false,
                ..c1060
            }
        } else {
            Device::untuned(
                &gpu.name,
                cc,
                gpu.sm_count,
                gpu.boost_clock_mhz / 1e3,
                gpu.mem_bandwidth_gbs,
                gpu.dram_latency_cycles,
                gpu.max_warps_per_sm(),
            )
        };
        d.departure_del_coal = gpu.departure_delay_coalesced_cycles;
        d.departure_del_uncoal = gpu.departure_delay_uncoalesced_cycles;
        d.issue_cycles = gpu.issue_cycles("fp32");
        let latency = |key: &str, default: f64| {
            gpu.instr_latency_cycles
                .get(key)
                .copied()
                .unwrap_or(default)
        };
        d.sqrt_cycles = latency("sqrt", d.sqrt_cycles);
        d.div_cycles = latency("divf", d.div_cycles);
        d.rsqrt_cycles = latency("rsqrt", d.rsqrt_cycles);
        d
    }
}

/// The adapter on a GPU of the database: the device from [`Device::from_gpu`] and the
/// resident blocks from NVIDIA's occupancy calculation. `None` when the launch cannot run.
pub fn predict_for_gpu(
    profile: &KernelProfile,
    gpu: &gpu_spec::Gpu,
    options: &AdapterOptions,
) -> Option<Prediction> {
    let resident = crate::gpu::resident_blocks(profile, gpu)?;
    predict(
        profile,
        &Device::from_gpu(gpu),
        resident,
        options,
    )
}

/// One warp's global-memory traffic over the whole kernel.
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryTraffic {
    /// The thesis's transaction form (§3.2, eqs 16–26). `warp_mem` is the number of
    /// requests (global loads + stores); the transaction counts are by size, before the
    /// duplicate-load division.
    Transactions {
        warp_mem: f64,
        warp_memtran_32b: f64,
        warp_memtran_64b: f64,
        warp_memtran_128b: f64,
        /// Transactions spawned by vector operations (`ld.global.v4.f32`), any size; they use
        /// the vector departure delay, carry `vector_bytes_per_transaction` bytes and do not
        /// merge (thesis §3.2.5).
        vector_memtran: f64,
        vector_bytes_per_transaction: f64,
    },
    /// Hong & Kim's original form (thesis §2.2.3, eqs 1–10): coalesced and uncoalesced
    /// memory instructions.
    CoalUncoal {
        coal_mem_insts: f64,
        uncoal_mem_insts: f64,
        /// `#Uncoal_per_mw`: transactions per uncoalesced memory warp (32 on G80).
        uncoal_per_mw: f64,
        /// `Load_bytes_per_warp`: bytes one memory warp moves.
        load_bytes_per_warp: f64,
    },
}

/// The paper's inputs for one kernel launch (per warp = per thread; dynamic).
#[derive(Debug, Clone, PartialEq)]
pub struct MwpCwpInputs {
    /// `N`: resident warps per SM.
    pub active_warps_per_sm: f64,
    /// Resident blocks per SM.
    pub active_blocks_per_sm: f64,
    /// Blocks in the grid.
    pub n_blocks: f64,
    /// `#Active_SMs`.
    pub active_sms: f64,
    /// `#Total_insts`: all dynamic instructions of one warp, memory included.
    pub total_insts: f64,
    pub sqrt_insts: f64,
    pub div_insts: f64,
    pub rsqrt_insts: f64,
    /// Shared-memory instructions with bank conflicts and their average latency (cycles).
    pub conflicted_shmem_insts: f64,
    pub conflicted_shmem_latency: f64,
    pub memory: MemoryTraffic,
    /// `#Synch_insts`: barriers per warp.
    pub synch_insts: f64,
    /// Average independent loads per thread (eq 27), at least 1.
    pub independent_loads: f64,
    /// Average duplicate loads (eq 27 and §3.2.4.3), at least 1; 1 for vector kernels.
    pub duplicate_loads: f64,
}

impl MwpCwpInputs {
    /// Inputs with no special instructions, no bank conflicts, no barriers and no merging.
    pub fn simple(
        active_warps_per_sm: f64,
        active_blocks_per_sm: f64,
        n_blocks: f64,
        active_sms: f64,
        total_insts: f64,
        memory: MemoryTraffic,
    ) -> Self {
        MwpCwpInputs {
            active_warps_per_sm,
            active_blocks_per_sm,
            n_blocks,
            active_sms,
            total_insts,
            sqrt_insts: 0.0,
            div_insts: 0.0,
            rsqrt_insts: 0.0,
            conflicted_shmem_insts: 0.0,
            conflicted_shmem_latency: 0.0,
            memory,
            synch_insts: 0.0,
            independent_loads: 1.0,
            duplicate_loads: 1.0,
        }
    }
}

/// Which of Hong & Kim's execution-cycle formulas applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// No global memory request: `Comp_cycles × N × #Rep`.
    NoMemory,
    /// `MWP == N == CWP`: not enough warps to hide either latency.
    NotEnoughWarps,
    /// `CWP >= MWP` or `Comp_cycles > Mem_cycles`: memory periods serialise.
    MemoryBound,
    /// `MWP > CWP`: memory is hidden behind computation.
    ComputeBound,
}

impl Case {
    pub fn name(self) -> &'static str {
        match self {
            Case::NoMemory => "no memory",
            Case::NotEnoughWarps => "MWP = N = CWP",
            Case::MemoryBound => "CWP >= MWP",
            Case::ComputeBound => "MWP > CWP",
        }
    }
}

/// Every intermediate of one evaluation, named as in the thesis.
#[derive(Debug, Clone, PartialEq)]
pub struct MwpCwpOutputs {
    /// `N`.
    pub n: f64,
    /// `#Rep`: waves of blocks per SM (fractional).
    pub rep: f64,
    /// `num_trans_per_request` after the duplicate-load division and the clamp (eq 19).
    pub ntpr: f64,
    /// Whether `ntpr` was raised to one.
    pub ntpr_clamped: bool,
    /// `avg_dep_delay_per_tran` (eq 23), cycles.
    pub avg_dep_delay: f64,
    /// `Mem_L` / `mem_latency_final` (eq 24), cycles.
    pub mem_l: f64,
    /// `Departure_delay` / `dep_delay_per_request` (eq 25), cycles.
    pub departure_delay: f64,
    /// `Data_per_request` (eq 16) or `Load_bytes_per_warp`, bytes.
    pub bytes_per_request: f64,
    /// `bandwidth_requirements_per_warp` (eq 17), GB/s.
    pub bw_per_warp_gbs: f64,
    /// `MWP_without_BW` (eq 26).
    pub mwp_without_bw: f64,
    /// `MWP_peak_BW` (eq 18).
    pub mwp_peak_bw: f64,
    /// `Active_warps_for_MWP` (eq 27).
    pub active_warps_for_mwp: f64,
    /// `MWP` (eq 28).
    pub mwp: f64,
    pub comp_cycles: f64,
    pub mem_cycles: f64,
    /// `#Mem_insts` / `warp_mem`.
    pub mem_insts: f64,
    pub cwp_full: f64,
    pub cwp: f64,
    pub case: Case,
    pub exec_cycles_app: f64,
    pub synch_cost: f64,
    pub exec_cycles: f64,
    pub time_us: f64,
}

/// What the memory sub-model yields, whatever its form.
struct MemoryTerms {
    mem_insts: f64,
    ntpr: f64,
    ntpr_clamped: bool,
    avg_dep_delay: f64,
    mem_l: f64,
    departure_delay: f64,
    bytes_per_request: f64,
    mem_cycles: f64,
}

fn finite_nonneg(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// The transaction form: thesis eqs 16 and 19–25 with merging and vector operations.
#[allow(clippy::too_many_arguments)]
fn transaction_terms(
    d: &Device,
    warp_mem: f64,
    t32: f64,
    t64: f64,
    t128: f64,
    tvec: f64,
    vec_bytes: f64,
    dup: f64,
) -> Option<MemoryTerms> {
    if ![warp_mem, t32, t64, t128, tvec, vec_bytes]
        .into_iter()
        .all(finite_nonneg)
    {
        return None;
    }
    // Merging divides scalar transactions only: vector operations do not merge (§3.2.5).
    let (t32, t64, t128) = (t32 / dup, t64 / dup, t128 / dup);
    let total = t32 + t64 + t128 + tvec;
    let raw_ntpr = total / warp_mem;
    let ntpr = raw_ntpr.max(1.0);
    let avg_dep_delay = if total > 0.0 {
        (d.dep_delay_32b * t32
            + d.dep_delay_64b * t64
            + d.dep_delay_128b * t128
            + d.dep_delay_vector * tvec)
            / total
    } else {
        d.dep_delay_32b
    };
    let mem_l = d.base_mem_latency + (ntpr - 1.0) * avg_dep_delay;
    let bytes = 32.0 * t32 + 64.0 * t64 + 128.0 * t128 + vec_bytes * tvec;
    Some(MemoryTerms {
        mem_insts: warp_mem,
        ntpr,
        ntpr_clamped: raw_ntpr < 1.0,
        avg_dep_delay,
        mem_l,
        departure_delay: ntpr * avg_dep_delay,
        bytes_per_request: bytes / warp_mem,
        mem_cycles: mem_l * warp_mem,
    })
}

/// Hong & Kim's coalesced/uncoalesced form (thesis eqs 1–3; Hong & Kim, ISCA 2009).
fn coal_uncoal_terms(
    d: &Device,
    coal: f64,
    uncoal: f64,
    uncoal_per_mw: f64,
    load_bytes: f64,
) -> Option<MemoryTerms> {
    if ![coal, uncoal, uncoal_per_mw, load_bytes]
        .into_iter()
        .all(finite_nonneg)
    {
        return None;
    }
    let insts = coal + uncoal;
    let w_uncoal = uncoal / insts;
    let w_coal = coal / insts;
    let mem_l_uncoal = d.base_mem_latency + (uncoal_per_mw - 1.0).max(0.0) * d.departure_del_uncoal;
    let mem_l_coal = d.base_mem_latency;
    let mem_l = mem_l_uncoal * w_uncoal + mem_l_coal * w_coal;
    let departure_delay =
        d.departure_del_uncoal * uncoal_per_mw * w_uncoal + d.departure_del_coal * w_coal;
    Some(MemoryTerms {
        mem_insts: insts,
        ntpr: uncoal_per_mw * w_uncoal + w_coal,
        ntpr_clamped: false,
        avg_dep_delay: departure_delay,
        mem_l,
        departure_delay,
        bytes_per_request: load_bytes,
        mem_cycles: mem_l_uncoal * uncoal + mem_l_coal * coal,
    })
}

/// The inputs of the execution-cycle stage: what the MWP/CWP stage hands over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExecTerms {
    pub n: f64,
    pub mwp: f64,
    pub cwp: f64,
    /// `Mem_L`, cycles.
    pub mem_l: f64,
    pub mem_cycles: f64,
    pub comp_cycles: f64,
    /// `#Mem_insts` (> 0).
    pub mem_insts: f64,
    pub rep: f64,
}

/// Hong & Kim's execution cycles without synchronisation (`Exec_cycles_app`), the three
/// cases tested in order (Hong & Kim, ISCA 2009; thesis eq 15 for the last case). Public because
/// the thesis's FMM tables print MWP and CWP but not their inputs, so their reproduction
/// starts here.
pub fn exec_cycles_app(t: &ExecTerms) -> (Case, f64) {
    let comp_p = t.comp_cycles / t.mem_insts;
    let close = |a: f64, b: f64| (a - b).abs() <= CASE1_REL_TOL * b.abs().max(1.0);
    if close(t.mwp, t.n) && close(t.cwp, t.n) {
        (
            Case::NotEnoughWarps,
            (t.mem_cycles + t.comp_cycles + comp_p * (t.mwp - 1.0)) * t.rep,
        )
    } else if t.cwp >= t.mwp || t.comp_cycles > t.mem_cycles {
        (
            Case::MemoryBound,
            (t.mem_cycles * t.n / t.mwp + comp_p * (t.mwp - 1.0)) * t.rep,
        )
    } else {
        (Case::ComputeBound, (t.mem_l + t.comp_cycles * t.n) * t.rep)
    }
}

/// Evaluates the model on the paper's own inputs. `None` when an input is negative, not
/// finite, or leaves the model undefined (no resident warp, no block, a zero clock).
pub fn evaluate(d: &Device, x: &MwpCwpInputs) -> Option<MwpCwpOutputs> {
    let n = x.active_warps_per_sm;
    let scalars = [
        n,
        x.active_blocks_per_sm,
        x.n_blocks,
        x.active_sms,
        x.total_insts,
        x.sqrt_insts,
        x.div_insts,
        x.rsqrt_insts,
        x.conflicted_shmem_insts,
        x.conflicted_shmem_latency,
        x.synch_insts,
        x.independent_loads,
        x.duplicate_loads,
        d.freq_ghz,
        d.mem_bandwidth_gbs,
        d.base_mem_latency,
        d.issue_cycles,
    ];
    if !scalars.into_iter().all(finite_nonneg)
        || n <= 0.0
        || x.active_blocks_per_sm <= 0.0
        || x.active_sms <= 0.0
        || d.freq_ghz <= 0.0
    {
        return None;
    }
    // Both factors are at least one by definition (eq 27, §3.2.4.3).
    let indep = x.independent_loads.max(1.0);
    let dup = x.duplicate_loads.max(1.0);

    // Compute cycles (§3.2.3): special instructions and conflicted shared-memory accesses
    // take their own latency *instead of* the 4 issue cycles ("take four cycles; except ...").
    let special = x.sqrt_insts + x.div_insts + x.rsqrt_insts + x.conflicted_shmem_insts;
    let ordinary = (x.total_insts - special).max(0.0);
    let comp_cycles = d.issue_cycles * ordinary
        + d.sqrt_cycles * x.sqrt_insts
        + d.div_cycles * x.div_insts
        + d.rsqrt_cycles * x.rsqrt_insts
        + x.conflicted_shmem_latency * x.conflicted_shmem_insts;

    let rep = x.n_blocks / (x.active_blocks_per_sm * x.active_sms);
    let time_us = |cycles: f64| cycles / (d.freq_ghz * 1e3);

    let mem = match &x.memory {
        MemoryTraffic::Transactions {
            warp_mem,
            warp_memtran_32b,
            warp_memtran_64b,
            warp_memtran_128b,
            vector_memtran,
            vector_bytes_per_transaction,
        } => {
            if *warp_mem > 0.0 {
                Some(transaction_terms(
                    d,
                    *warp_mem,
                    *warp_memtran_32b,
                    *warp_memtran_64b,
                    *warp_memtran_128b,
                    *vector_memtran,
                    *vector_bytes_per_transaction,
                    dup,
                )?)
            } else if finite_nonneg(*warp_mem) {
                None
            } else {
                return None;
            }
        }
        MemoryTraffic::CoalUncoal {
            coal_mem_insts,
            uncoal_mem_insts,
            uncoal_per_mw,
            load_bytes_per_warp,
        } => {
            let insts = coal_mem_insts + uncoal_mem_insts;
            if insts > 0.0 {
                Some(coal_uncoal_terms(
                    d,
                    *coal_mem_insts,
                    *uncoal_mem_insts,
                    *uncoal_per_mw,
                    *load_bytes_per_warp,
                )?)
            } else if finite_nonneg(insts) {
                None
            } else {
                return None;
            }
        }
    };

    let Some(m) = mem else {
        // No memory request: the SM just executes N warps' instructions.
        let exec = comp_cycles * n * rep;
        return Some(MwpCwpOutputs {
            n,
            rep,
            ntpr: 0.0,
            ntpr_clamped: false,
            avg_dep_delay: 0.0,
            mem_l: 0.0,
            departure_delay: 0.0,
            bytes_per_request: 0.0,
            bw_per_warp_gbs: 0.0,
            mwp_without_bw: n,
            mwp_peak_bw: f64::INFINITY,
            active_warps_for_mwp: n * indep / dup,
            mwp: n,
            comp_cycles,
            mem_cycles: 0.0,
            mem_insts: 0.0,
            cwp_full: 1.0,
            cwp: 1.0_f64.min(n),
            case: Case::NoMemory,
            exec_cycles_app: exec,
            synch_cost: 0.0,
            exec_cycles: exec,
            time_us: time_us(exec),
        });
    };

    // MWP (eqs 17, 18, 26, 27, 28).
    let mwp_without_bw = if m.departure_delay > 0.0 {
        m.mem_l / m.departure_delay
    } else {
        f64::INFINITY
    };
    let bw_per_warp_gbs = if m.mem_l > 0.0 {
        d.freq_ghz * m.bytes_per_request / m.mem_l
    } else {
        0.0
    };
    let mwp_peak_bw = if bw_per_warp_gbs > 0.0 {
        d.mem_bandwidth_gbs / (bw_per_warp_gbs * x.active_sms)
    } else {
        f64::INFINITY
    };
    let active_warps_for_mwp = n * indep / dup;
    let mwp = mwp_without_bw.min(mwp_peak_bw).min(active_warps_for_mwp);

    // CWP (eqs 29, 30).
    let cwp_full = if comp_cycles > 0.0 {
        (m.mem_cycles + comp_cycles) / comp_cycles
    } else {
        f64::INFINITY
    };
    let cwp = cwp_full.min(n);

    let (case, exec_cycles_app) = exec_cycles_app(&ExecTerms {
        n,
        mwp,
        cwp,
        mem_l: m.mem_l,
        mem_cycles: m.mem_cycles,
        comp_cycles,
        mem_insts: m.mem_insts,
        rep,
    });
    let synch_cost =
        m.departure_delay * (mwp - 1.0).max(0.0) * x.synch_insts * x.active_blocks_per_sm * rep;
    let exec_cycles = exec_cycles_app + synch_cost;
    Some(MwpCwpOutputs {
        n,
        rep,
        ntpr: m.ntpr,
        ntpr_clamped: m.ntpr_clamped,
        avg_dep_delay: m.avg_dep_delay,
        mem_l: m.mem_l,
        departure_delay: m.departure_delay,
        bytes_per_request: m.bytes_per_request,
        bw_per_warp_gbs,
        mwp_without_bw,
        mwp_peak_bw,
        active_warps_for_mwp,
        mwp,
        comp_cycles,
        mem_cycles: m.mem_cycles,
        mem_insts: m.mem_insts,
        cwp_full,
        cwp,
        case,
        exec_cycles_app,
        synch_cost,
        exec_cycles,
        time_us: time_us(exec_cycles),
    })
}

/// Transactions of one warp request by size (32, 64, 128 bytes) under the compute-capability
/// 1.2/1.3 coalescing protocol (CUDA 2.3 Programming Guide §G.3.2.2, which the thesis
/// cites for it in §3.2.1): per half-warp, take the segment of the lowest pending lane (32 B for 1-byte words,
/// 64 B for 2-byte, 128 B for 4/8/16-byte words), serve every lane in it with one
/// transaction, halve the transaction while only one half is used (down to 32 B), repeat.
///
/// `lane_offset(lane)` is the byte offset of a lane's word from a 128-byte-aligned base.
pub fn cc13_transactions(word_bytes: u32, lane_offset: impl Fn(u32) -> i64) -> [u32; 3] {
    let word = i64::from(word_bytes.clamp(1, 16));
    let segment: i64 = match word {
        1 => 32,
        2 => 64,
        _ => 128,
    };
    let mut counts = [0u32; 3];
    for half in 0..2u32 {
        let mut pending: Vec<i64> = (0..16).map(|l| lane_offset(half * 16 + l)).collect();
        while let Some(&first) = pending.first() {
            let seg = first.div_euclid(segment);
            let (inside, rest): (Vec<i64>, Vec<i64>) =
                pending.iter().partition(|a| a.div_euclid(segment) == seg);
            pending = rest;
            let lo = inside.iter().copied().min().unwrap_or(first);
            let hi = inside
                .iter()
                .map(|a| a + word - 1)
                .max()
                .unwrap_or(first + word - 1);
            let (mut start, mut size) = (seg * segment, segment);
            while size > 32 {
                let half_size = size / 2;
                if hi < start + half_size {
                    size = half_size;
                } else if lo >= start + half_size {
                    start += half_size;
                    size = half_size;
                } else {
                    break;
                }
            }
            let idx = match size {
                32 => 0,
                64 => 1,
                _ => 2,
            };
            counts[idx] += 1;
        }
    }
    counts
}

/// Options of the adapter that the profile cannot supply.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterOptions {
    /// The eq 27 factors; the thesis obtained them by manual code analysis (Ch 6).
    pub independent_loads: f64,
    pub duplicate_loads: f64,
}

impl Default for AdapterOptions {
    fn default() -> Self {
        AdapterOptions {
            independent_loads: 1.0,
            duplicate_loads: 1.0,
        }
    }
}

/// Derives the paper's inputs from a static profile. Returns the inputs and the
/// assumptions made; `None` when the launch cannot run (no resident block) or the profile
/// holds non-finite counts.
pub fn inputs_from_profile(
    profile: &KernelProfile,
    d: &Device,
    active_blocks_per_sm: u32,
    options: &AdapterOptions,
) -> Option<(MwpCwpInputs, Vec<String>)> {
    let mut assumptions = Vec::new();
    if active_blocks_per_sm == 0 || d.n_sms == 0 {
        return None;
    }
    let threads_per_block = profile.launch.threads_per_block();
    let warps_per_block = threads_per_block.div_ceil(32) as f64;
    let n_blocks = profile.launch.blocks() as f64;
    // A grid smaller than one full wave occupies fewer SMs and fewer blocks per SM.
    let active_sms = f64::from(d.n_sms).min(n_blocks);
    let blocks_per_sm = f64::from(active_blocks_per_sm).min((n_blocks / active_sms).ceil());
    let n = blocks_per_sm * warps_per_block;

    let total_insts = profile.counts.total_dynamic();
    if !finite_nonneg(total_insts) {
        return None;
    }

    // Special-latency instructions (§3.2.3): from opcodes when the profile has basic blocks.
    let (mut sqrt, mut div, mut rsqrt) = (0.0, 0.0, 0.0);
    if profile.blocks.is_empty() {
        rsqrt = profile
            .counts
            .dynamic_of(|c| c == kernel_profile::InstrClass::Sfu);
        if rsqrt > 0.0 {
            assumptions.push(format!(
                "no basic blocks in the profile: all {rsqrt:.0} SFU instructions per thread charged \
                 the rsqrt latency ({} cycles)",
                d.rsqrt_cycles
            ));
        }
    } else {
        let mut other_sfu = 0.0;
        for block in &profile.blocks {
            for instr in &block.instructions {
                let op = instr.opcode.as_str();
                let is_float = op.contains(".f32") || op.contains(".f64");
                if op.starts_with("rsqrt") {
                    rsqrt += block.executions;
                } else if op.starts_with("sqrt") {
                    sqrt += block.executions;
                } else if op.starts_with("div") && is_float {
                    div += block.executions;
                } else if instr.class == kernel_profile::InstrClass::Sfu {
                    other_sfu += block.executions;
                }
            }
        }
        if other_sfu > 0.0 {
            rsqrt += other_sfu;
            assumptions.push(format!(
                "{other_sfu:.0} SFU instructions per thread other than sqrt/div/rsqrt charged the \
                 rsqrt latency ({} cycles); the thesis gives no value for them",
                d.rsqrt_cycles
            ));
        }
    }

    // Global-memory requests and their transactions.
    let cc1x = d.compute_capability.0 == 1;
    let (mut r, mut t32, mut t64, mut t128, mut tvec, mut vec_bytes_sum) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut conflicted, mut conflicted_lat) = (0.0, 0.0);
    for a in &profile.memory_accesses {
        if !finite_nonneg(a.executions) || !finite_nonneg(a.transactions_per_request) {
            return None;
        }
        match a.space {
            Space::Global | Space::Local | Space::Generic => {}
            Space::Shared => {
                if let Some(ways) = a.bank_conflict_ways.filter(|&w| w > 1) {
                    conflicted += a.executions;
                    conflicted_lat += a.executions * d.issue_cycles * f64::from(ways);
                }
                continue;
            }
            _ => continue,
        }
        r += a.executions;
        let vector = a.vector_width > 1;
        let per_request = if cc1x {
            let bytes = a.bytes_per_thread.max(1);
            let b = i64::from(bytes);
            let counts = match (a.class, a.stride_bytes) {
                (AccessClass::Uniform, _) => cc13_transactions(bytes, |_| 0),
                (AccessClass::Coalesced, _) => cc13_transactions(bytes, |l| i64::from(l) * b),
                (AccessClass::Strided, Some(s)) => cc13_transactions(bytes, |l| {
                    i64::from(l) * s + if s < 0 { -31 * s } else { 0 }
                }),
                (AccessClass::Strided, None) | (AccessClass::Irregular, _) => {
                    cc13_transactions(bytes, |l| i64::from(l) * 4096)
                }
            };
            [
                f64::from(counts[0]),
                f64::from(counts[1]),
                f64::from(counts[2]),
            ]
        } else {
            [a.transactions_per_request, 0.0, 0.0]
        };
        let total_per_request: f64 = per_request.iter().sum();
        if vector {
            tvec += a.executions * total_per_request;
            let bytes = 32.0 * per_request[0] + 64.0 * per_request[1] + 128.0 * per_request[2];
            vec_bytes_sum += a.executions * bytes;
        } else {
            t32 += a.executions * per_request[0];
            t64 += a.executions * per_request[1];
            t128 += a.executions * per_request[2];
        }
    }
    if cc1x {
        assumptions.push(
            "transactions from the compute-capability 1.2/1.3 half-warp coalescing rule, with \
             128-byte-aligned bases and irregular accesses taken as one 32 B transaction per lane"
                .into(),
        );
    } else {
        assumptions.push(
            "each 32-byte sector of the profile counted as one 32 B transaction with the thesis's \
             transaction model (built for GT200)"
                .into(),
        );
    }
    let conflicted_shmem_latency = if conflicted > 0.0 {
        conflicted_lat / conflicted
    } else {
        0.0
    };
    if conflicted > 0.0 {
        assumptions.push(
            "a k-way conflicted shared-memory access costs k × issue cycles (the thesis measured \
             this latency per kernel)"
                .into(),
        );
    }
    if options.independent_loads == 1.0 && options.duplicate_loads == 1.0 {
        assumptions.push(
            "independent and duplicate loads both 1 (eq 27): no merging, one load in flight per warp"
                .into(),
        );
    }
    if !d.tuned {
        assumptions.push(format!(
            "departure delays for {} estimated from bandwidth, not tuned (thesis §3.2.6 tunes per GPU)",
            d.name
        ));
    }
    assumptions.push("#Rep fractional: partial waves are averaged".into());
    let inputs = MwpCwpInputs {
        active_warps_per_sm: n,
        active_blocks_per_sm: blocks_per_sm,
        n_blocks,
        active_sms,
        total_insts,
        sqrt_insts: sqrt,
        div_insts: div,
        rsqrt_insts: rsqrt,
        conflicted_shmem_insts: conflicted,
        conflicted_shmem_latency,
        memory: MemoryTraffic::Transactions {
            warp_mem: r,
            warp_memtran_32b: t32,
            warp_memtran_64b: t64,
            warp_memtran_128b: t128,
            vector_memtran: tvec,
            vector_bytes_per_transaction: if tvec > 0.0 {
                vec_bytes_sum / tvec
            } else {
                0.0
            },
        },
        synch_insts: profile.counts.barriers.max(0.0),
        independent_loads: options.independent_loads,
        duplicate_loads: options.duplicate_loads,
    };
    Some((inputs, assumptions))
}

/// How far the model can be trusted on this device: it was built and tuned on GT200.
pub fn confidence(d: &Device) -> Confidence {
    match (d.compute_capability.0, d.tuned) {
        (1, true) => Confidence::High,
        (1, false) | (2, _) => Confidence::Medium,
        _ => Confidence::Low,
    }
}

/// The adapter: the thesis's model for one profiled kernel on one device.
///
/// `active_blocks_per_sm` comes from the occupancy calculator. `None` when the launch
/// cannot run or the profile is not usable.
pub fn predict(
    profile: &KernelProfile,
    d: &Device,
    active_blocks_per_sm: u32,
    options: &AdapterOptions,
) -> Option<Prediction> {
    let (inputs, mut assumptions) = inputs_from_profile(profile, d, active_blocks_per_sm, options)?;
    let out = evaluate(d, &inputs)?;
    assumptions.extend(profile.assumptions.iter().cloned());
    Some(to_prediction(&out, d, assumptions))
}

/// Wraps an evaluation into the common [`Prediction`].
pub fn to_prediction(out: &MwpCwpOutputs, d: &Device, assumptions: Vec<String>) -> Prediction {
    let breakdown = crate::prediction::finite_breakdown([
        ("comp_cycles", out.comp_cycles),
        ("mem_cycles", out.mem_cycles),
        ("mem_latency_cycles", out.mem_l),
        ("departure_delay_cycles", out.departure_delay),
        ("exec_cycles_app", out.exec_cycles_app),
        ("synch_cycles", out.synch_cost),
        ("exec_cycles", out.exec_cycles),
        ("active_warps", out.n),
        ("rep", out.rep),
        ("mwp_without_bw", out.mwp_without_bw),
        ("mwp_peak_bw", out.mwp_peak_bw),
        ("transactions_per_request", out.ntpr),
    ]);
    let (bound, explanation) = match out.case {
        Case::NoMemory => (
            Bound::Compute,
            format!(
                "compute-bound: no global memory request, so the {:.0} resident warps just issue \
                 their instructions one after another",
                out.n
            ),
        ),
        Case::NotEnoughWarps => (
            Bound::Latency,
            format!(
                "latency-bound: MWP = CWP = N = {:.1}, too few warps to hide either memory or \
                 compute latency",
                out.n
            ),
        ),
        Case::MemoryBound if out.cwp >= out.mwp => (
            Bound::Memory,
            format!(
                "memory-bound: MWP {:.1} < CWP {:.1}, so only {:.1} of the {:.0} resident warps' \
                 memory requests overlap",
                out.mwp, out.cwp, out.mwp, out.n
            ),
        ),
        Case::MemoryBound => (
            Bound::Compute,
            format!(
                "compute-bound: compute cycles exceed memory cycles per warp although MWP {:.1} > \
                 CWP {:.1}",
                out.mwp, out.cwp
            ),
        ),
        Case::ComputeBound => (
            Bound::Compute,
            format!(
                "compute-bound: MWP {:.1} > CWP {:.1}, so memory waits hide behind the other \
                 warps' computation",
                out.mwp, out.cwp
            ),
        ),
    };
    Prediction {
        model: "mwp_cwp",
        time_us: out.time_us,
        breakdown,
        bound,
        confidence: confidence(d),
        assumptions,
        explanation,
        mwp: Some(out.mwp),
        cwp: Some(out.cwp),
    }
}

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
