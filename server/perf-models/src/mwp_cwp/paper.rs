//! The paper layer: the thesis's symbols in ([`MwpCwpInputs`], [`Device`]), every
//! intermediate out ([`MwpCwpOutputs`]); no knowledge of kernel profiles or of the GPU
//! database.

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

pub(super) fn finite_nonneg(x: f64) -> bool {
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
