//! CGPredict's execution-time model: Hong & Kim's MWP/CWP model with access classes, an
//! L2/DRAM latency model and a shared-memory extension (Wang, Zhong and Mitra, ACM TECS
//! 16(5s), 2017; Wang et al. 2017).
//!
//! # What it estimates
//! The execution time of one kernel on the Jetson TK1's Kepler GPU (1 SMX, 852 MHz). Every
//! warp memory instruction is sorted into one of three access classes (coalesced,
//! uncoalesced, constant). Each class gets a latency and a departure delay from L2 and DRAM
//! transaction counts (eqs 1–8). MWP and CWP then pick one of two closed-form cases
//! (eqs 13–18). Kernels tiled into shared memory add bank-conflict and barrier costs
//! (eqs 19–23).
//!
//! # Inputs
//! Per-thread (= per-warp) dynamic counts: total instructions, memory instructions per
//! class, the average DRAM transactions per warp instruction of each class (from the L2
//! analyser, eqs 9–11, [`l2_tcs_analysis`]), shared-memory instructions per class,
//! cooperative shared-memory loads and barriers. Launch facts are the resident warps `N`
//! and blocks `B` per SM and the grid size. Platform constants are Table 3 of the paper
//! ([`Platform::jetson_tk1`]).
//!
//! # Two layers
//! - [`evaluate`] is the paper layer on [`CgInputs`]; it returns every intermediate
//!   ([`CgOutputs`]). The Table 4 reproductions (`tests/cgpredict_tables.rs`) call it with
//!   the paper's inputs.
//! - [`predict`] is the adapter from a static [`KernelProfile`] to a [`Prediction`].
//!
//! # Sources
//! Equation numbers are the paper's (Wang et al. 2017 §3.3–3.6). The reconstruction is
//! checked numerically against the paper's SYRK and GEMM results by our golden tests.
//!
//! # Assumptions and limits
//! - Eqs 1 and 2 switch literally at `no_dram_trans = 1`, so latency jumps by `mem_ld_dram`
//!   just above one DRAM transaction. This is kept as published.
//! - Eq 3 takes the max of the L2 and DRAM delays; eq 5 sums them. Both are kept as published.
//! - Eq 16 multiplies the whole bracket by `batch` (the only reading that reproduces the
//!   paper's SYRK and GEMM estimates, §4.1; `tests/cgpredict_tables.rs`). For eq 17 the
//!   whole bracket is also assumed to be multiplied; no number in the paper checks it.
//! - Unlike Hong & Kim: the compute term of eq 16 uses `× MWP` (not `MWP − 1`), and there is
//!   no "MWP = N = CWP" case and no bandwidth cap (compare Hong & Kim, ISCA 2009).
//! - On a GPU with several SMs, `batch = no_blocks / (B × #SM)` (eq 15 without the SM
//!   count, because the paper's GPU has only one SMX). Retargeting beyond Kepler is outside the paper's scope: the confidence
//!   is then low.

use std::collections::BTreeMap;

use kernel_profile::{AccessClass, KernelProfile, Space};

use crate::prediction::{Bound, Confidence, Prediction};

/// Platform parameters: Part 1 of the paper's Table 3, plus the facts the occupancy
/// calculation needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Platform {
    pub name: String,
    pub compute_capability: (u32, u32),
    pub n_sms: u32,
    /// GPU clock (MHz).
    pub freq_mhz: f64,
    /// Average cycles per instruction (`inst_cycle`).
    pub inst_cycle: f64,
    pub mem_ld_l2: f64,
    pub mem_ld_dram: f64,
    pub mem_ld_smem: f64,
    /// Latency of one cooperative load from main memory into shared memory.
    pub smem_load_const: f64,
    pub dd_l2: f64,
    pub dd_dram: f64,
    /// Bank-conflict degree per access class (`X_uncoal`, `X_coal`, `X_const`).
    pub x_uncoal: f64,
    pub x_coal: f64,
    pub x_const: f64,
    /// L2 transactions per warp memory instruction per class.
    pub no_uncoal_pw: f64,
    pub no_coal_pw: f64,
    pub no_const_pw: f64,
    /// Resident threads per SM (`thread_per_sm`).
    pub threads_per_sm: u32,
    /// L2 geometry for the TCS analyser: line bytes, total bytes, associativity.
    pub l2_line_bytes: u32,
    pub l2_bytes: u32,
    pub l2_assoc: u32,
}

impl Platform {
    /// The Jetson TK1 (Tegra K1, GK20A, compute capability 3.2) with the paper's constants.
    ///
    /// Sources: Wang et al. 2017 Table 3 (852 MHz, inst_cycle 0.5, latencies 164/332/67, 506 for a
    /// cooperative load, departure delays 2/10, X 16/1/1, transactions 32/2/1), Table 1
    /// (128 KB L2 with 64 B lines), §2.1 (1 SMX, 2048 resident threads). The L2
    /// associativity is not given by the paper; 16 ways is an assumption.
    pub fn jetson_tk1() -> Self {
        Platform {
            name: "Jetson TK1".into(),
            compute_capability: (3, 2),
            n_sms: 1,
            freq_mhz: 852.0,
            inst_cycle: 0.5,
            mem_ld_l2: 164.0,
            mem_ld_dram: 332.0,
            mem_ld_smem: 67.0,
            smem_load_const: 506.0,
            dd_l2: 2.0,
            dd_dram: 10.0,
            x_uncoal: 16.0,
            x_coal: 1.0,
            x_const: 1.0,
            no_uncoal_pw: 32.0,
            no_coal_pw: 2.0,
            no_const_pw: 1.0,
            threads_per_sm: 2048,
            l2_line_bytes: 64,
            l2_bytes: 128 * 1024,
            l2_assoc: 16,
        }
    }
}

impl Platform {
    /// The platform for a GPU of the database. A GPU whose data holds the paper's Table 3
    /// Part 1 (`model_params` `seed003.inst_cycle`, `seed003.mem_ld_{l2,dram,smem}_cycles`,
    /// `seed003.smem_load_const_cycles`, `seed003.dd_{l2,dram}_cycles`: the Jetson TK1's)
    /// gets those numbers, keyed on the data rather than on a spelled id. Any other GPU
    /// takes its clock, SM count, L2 size and latencies from the database:
    /// `mem_ld_dram` = DRAM latency − L2 latency, because eq 2 adds the two.
    /// Issue cost, bank-conflict degrees and transactions per class keep the TK1's values
    /// (estimates; the paper claims only Part 1 of Table 3 needs retargeting).
    pub fn from_gpu(gpu: &gpu_spec::Gpu) -> Self {
        let tk1 = Platform::jetson_tk1();
        let base = Platform {
            name: gpu.name.clone(),
            compute_capability: (gpu.cc.major, gpu.cc.minor),
            n_sms: gpu.sm_count,
            freq_mhz: gpu.boost_clock_mhz,
            mem_ld_l2: gpu.l2_latency_cycles,
            mem_ld_dram: (gpu.dram_latency_cycles - gpu.l2_latency_cycles).max(0.0),
            mem_ld_smem: gpu.shared_latency_cycles,
            smem_load_const: gpu.dram_latency_cycles + gpu.dram_departure_delay_cycles,
            dd_l2: gpu.l2_departure_delay_cycles,
            dd_dram: gpu.dram_departure_delay_cycles,
            threads_per_sm: gpu.max_warps_per_sm() * 32,
            l2_bytes: u32::try_from(gpu.l2_bytes).unwrap_or(u32::MAX),
            ..tk1
        };
        let mp = |key: &str| gpu.model_params.get(&format!("seed003.{key}")).copied();
        match (
            mp("inst_cycle"),
            mp("mem_ld_l2_cycles"),
            mp("mem_ld_dram_cycles"),
            mp("mem_ld_smem_cycles"),
            mp("smem_load_const_cycles"),
            mp("dd_l2_cycles"),
            mp("dd_dram_cycles"),
        ) {
            (Some(inst_cycle), Some(mem_ld_l2), Some(mem_ld_dram), Some(mem_ld_smem), Some(smem_load_const), Some(dd_l2), Some(dd_dram)) => {
                Platform { inst_cycle, mem_ld_l2, mem_ld_dram, mem_ld_smem, smem_load_const, dd_l2, dd_dram, ..base }
            }
            _ => base,
        }
    }
}

/// The adapter on a GPU of the database, with the resident blocks from NVIDIA's
/// occupancy calculation. `None` when the launch cannot run.
pub fn predict_for_gpu(
    profile: &KernelProfile,
    gpu: &gpu_spec::Gpu,
    options: &AdapterOptions,
) -> Option<Prediction> {
    let resident = crate::gpu::resident_blocks(profile, gpu)?;
    predict(
        profile,
        &Platform::from_gpu(gpu),
        resident,
        options,
    )
}

/// One number per access class.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClassCounts {
    pub uncoal: f64,
    pub coal: f64,
    pub const_: f64,
}

impl ClassCounts {
    pub fn total(&self) -> f64 {
        self.uncoal + self.coal + self.const_
    }
    fn all_finite_nonneg(&self) -> bool {
        [self.uncoal, self.coal, self.const_]
            .into_iter()
            .all(|v| v.is_finite() && v >= 0.0)
    }
}

/// The paper's kernel inputs (Part 2 of Table 3), per thread = per warp, dynamic.
#[derive(Debug, Clone, PartialEq)]
pub struct CgInputs {
    /// `no_total_insts`: memory and compute instructions.
    pub no_total_insts: f64,
    /// Global memory instructions per class (`no_{uncoal,coal,const}_insts`).
    pub mem_insts: ClassCounts,
    /// Average DRAM transactions per warp memory instruction of each class.
    pub no_dram_trans: ClassCounts,
    /// Shared-memory instructions per access pattern (eq 20).
    pub smem_insts: ClassCounts,
    /// Cooperative loads into shared memory (eq 19).
    pub no_smem_load_insts: f64,
    /// Barriers (eq 23).
    pub no_sync_insts: f64,
    /// `N`: resident warps per SM.
    pub active_warps: f64,
    /// `B`: resident blocks per SM.
    pub active_blocks: f64,
    pub no_blocks: f64,
}

/// Which execution-cycle equation applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgCase {
    /// No memory instruction: `comp_cycles × N × batch`.
    NoMemory,
    /// Eq 16, `CWP >= MWP`.
    MemoryBound,
    /// Eq 17, `CWP < MWP`.
    ComputeBound,
}

/// Latency and departure delay of one access class (eqs 1–5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassTiming {
    pub mem_l: f64,
    pub dep_del: f64,
}

/// Every intermediate of one evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct CgOutputs {
    pub uncoal: ClassTiming,
    pub coal: ClassTiming,
    pub const_: ClassTiming,
    /// Eq 6 plus eq 19's cooperative loads (eq 21).
    pub mem_cycles: f64,
    pub smem_load_cycles: f64,
    pub smem_cycles: f64,
    pub no_mem_insts: f64,
    /// Eq 7.
    pub mem_l: f64,
    /// Eq 8.
    pub departure_delay: f64,
    /// Eq 13 before the cap by `N`.
    pub mwp_full: f64,
    pub mwp: f64,
    /// Eq 12 plus eq 20's shared-memory cycles (eq 22).
    pub comp_cycles: f64,
    pub cwp_full: f64,
    pub cwp: f64,
    pub batch: f64,
    pub case: CgCase,
    pub exec_cycles_app: f64,
    /// Eq 23.
    pub sync_cost: f64,
    pub exec_cycles: f64,
    pub time_ms: f64,
}

/// Eqs 1–3 for the coalesced and uncoalesced classes.
fn class_timing(p: &Platform, no_pw: f64, dram: f64) -> ClassTiming {
    let mem_l = if dram <= 1.0 {
        p.mem_ld_l2 + (no_pw - 1.0).max(0.0) * p.dd_l2
    } else {
        p.mem_ld_l2 + p.mem_ld_dram + (dram - 1.0) * p.dd_dram
    };
    ClassTiming {
        mem_l,
        dep_del: (no_pw * p.dd_l2).max(dram * p.dd_dram),
    }
}

/// Evaluates the model on the paper's inputs. `None` when an input is negative, not
/// finite, or the launch has no resident warp.
pub fn evaluate(p: &Platform, x: &CgInputs) -> Option<CgOutputs> {
    let scalars = [
        x.no_total_insts,
        x.no_smem_load_insts,
        x.no_sync_insts,
        x.active_warps,
        x.active_blocks,
        x.no_blocks,
        p.freq_mhz,
    ];
    if !scalars.into_iter().all(|v| v.is_finite() && v >= 0.0)
        || !x.mem_insts.all_finite_nonneg()
        || !x.no_dram_trans.all_finite_nonneg()
        || !x.smem_insts.all_finite_nonneg()
        || x.active_warps <= 0.0
        || x.active_blocks <= 0.0
        || p.freq_mhz <= 0.0
        || p.n_sms == 0
    {
        return None;
    }
    let n = x.active_warps;
    let uncoal = class_timing(p, p.no_uncoal_pw, x.no_dram_trans.uncoal);
    let coal = class_timing(p, p.no_coal_pw, x.no_dram_trans.coal);
    // Eqs 4 and 5: one transaction, a DRAM miss adds latency and delay (sum, not max).
    let const_ = ClassTiming {
        mem_l: p.mem_ld_l2 + x.no_dram_trans.const_ * p.mem_ld_dram,
        dep_del: p.no_const_pw * p.dd_l2 + x.no_dram_trans.const_ * p.dd_dram,
    };
    let m = &x.mem_insts;
    let no_mem_insts = m.total();
    // Eq 6, then eqs 19 and 21.
    let smem_load_cycles = x.no_smem_load_insts * p.smem_load_const;
    let mem_cycles =
        uncoal.mem_l * m.uncoal + coal.mem_l * m.coal + const_.mem_l * m.const_ + smem_load_cycles;
    // Eqs 20, 12 and 22.
    let s = &x.smem_insts;
    let smem_cycles =
        p.mem_ld_smem * (p.x_uncoal * s.uncoal + p.x_coal * s.coal + p.x_const * s.const_);
    let comp_cycles = p.inst_cycle * x.no_total_insts + smem_cycles;
    let batch = x.no_blocks / (x.active_blocks * f64::from(p.n_sms));
    let to_ms = |cycles: f64| cycles / (p.freq_mhz * 1e3);

    if no_mem_insts <= 0.0 {
        let exec = comp_cycles * n * batch;
        return Some(CgOutputs {
            uncoal,
            coal,
            const_,
            mem_cycles,
            smem_load_cycles,
            smem_cycles,
            no_mem_insts,
            mem_l: 0.0,
            departure_delay: 0.0,
            mwp_full: n,
            mwp: n,
            comp_cycles,
            cwp_full: 1.0,
            cwp: 1.0_f64.min(n),
            batch,
            case: CgCase::NoMemory,
            exec_cycles_app: exec,
            sync_cost: 0.0,
            exec_cycles: exec,
            time_ms: to_ms(exec),
        });
    }
    // Eqs 7 and 8 (eq 7 averages the global-memory latency; the cooperative loads of eq 19
    // enter mem_cycles only, as in the paper's eq 21).
    let mem_l = (mem_cycles - smem_load_cycles) / no_mem_insts;
    let departure_delay =
        (uncoal.dep_del * m.uncoal + coal.dep_del * m.coal + const_.dep_del * m.const_)
            / no_mem_insts;
    // Eqs 13 and 14, both capped at N.
    let mwp_full = if departure_delay > 0.0 {
        mem_l / departure_delay
    } else {
        f64::INFINITY
    };
    let mwp = mwp_full.min(n);
    let cwp_full = if comp_cycles > 0.0 {
        (mem_cycles + comp_cycles) / comp_cycles
    } else {
        f64::INFINITY
    };
    let cwp = cwp_full.min(n);
    // Eqs 15–17.
    let (case, exec_cycles_app) = if cwp >= mwp {
        (
            CgCase::MemoryBound,
            (mem_cycles * n / mwp + comp_cycles / no_mem_insts * mwp) * batch,
        )
    } else {
        (CgCase::ComputeBound, (mem_l + comp_cycles * n) * batch)
    };
    // Eq 23.
    let sync_cost =
        departure_delay * (mwp - 1.0).max(0.0) * x.no_sync_insts * x.active_blocks * batch;
    let exec_cycles = exec_cycles_app + sync_cost;
    Some(CgOutputs {
        uncoal,
        coal,
        const_,
        mem_cycles,
        smem_load_cycles,
        smem_cycles,
        no_mem_insts,
        mem_l,
        departure_delay,
        mwp_full,
        mwp,
        comp_cycles,
        cwp_full,
        cwp,
        batch,
        case,
        exec_cycles_app,
        sync_cost,
        exec_cycles,
        time_ms: to_ms(exec_cycles),
    })
}

/// Hit and miss counts of the L2 analyser.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L2Stats {
    pub references: u64,
    pub hits: u64,
    pub misses: u64,
}

/// The paper's L2 analyser (Wang et al. 2017 §3.3.4, eqs 9–11): for each reference `m[j]` of a
/// block `m` in its set's subtrace, the temporal conflict set `TCS_m[j]` is the set of
/// distinct blocks referenced since `m[j−1]`. The reference hits when `j > 1` and
/// `|TCS_m[j]| < A`. The first reference of a block is a cold miss.
///
/// `trace` holds byte addresses in access order. `line_bytes` is the block size `B`, `sets`
/// the set count `K` and `assoc` the associativity `A`. The implementation keeps per set
/// the blocks in order of last use, truncated to `A`: a block found at depth `d` had `d`
/// distinct blocks since its last use, so `|TCS| = d`. This is exact, and it costs
/// O(len × A). A zero `line_bytes`, `sets` or `assoc` makes every reference a miss.
pub fn l2_tcs_analysis(trace: &[u64], line_bytes: u64, sets: u64, assoc: usize) -> Vec<bool> {
    if line_bytes == 0 || sets == 0 || assoc == 0 {
        return vec![false; trace.len()];
    }
    let mut stacks: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut hits = Vec::with_capacity(trace.len());
    for &addr in trace {
        let block = addr / line_bytes;
        let stack = stacks.entry(block % sets).or_default();
        match stack.iter().position(|&b| b == block) {
            Some(depth) => {
                stack.remove(depth);
                hits.push(depth < assoc);
            }
            None => hits.push(false),
        }
        stack.insert(0, block);
        // Deeper entries can never hit again before being referenced: drop them.
        stack.truncate(assoc);
    }
    hits
}

/// One warp memory instruction for [`dram_transactions_per_class`]: its class and its
/// lanes' byte addresses.
#[derive(Debug, Clone, PartialEq)]
pub struct WarpAccess {
    pub class: AccessClass3,
    pub addresses: Vec<u64>,
}

/// The paper's three access classes (Wang et al. 2017 §3.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessClass3 {
    Uncoalesced,
    Coalesced,
    Constant,
}

/// Classifies one warp instruction by its lanes' addresses (Wang et al. 2017 §3.3.2): max stride
/// 0 is constant, max stride of one element is coalesced, anything else uncoalesced.
pub fn classify(addresses: &[u64], element_bytes: u64) -> AccessClass3 {
    let max_stride = addresses
        .windows(2)
        .map(|w| w[0].abs_diff(w[1]))
        .max()
        .unwrap_or(0);
    if max_stride == 0 {
        AccessClass3::Constant
    } else if max_stride <= element_bytes {
        AccessClass3::Coalesced
    } else {
        AccessClass3::Uncoalesced
    }
}

/// Runs the L2 analyser over a folded warp trace and returns the average DRAM
/// transactions per warp instruction of each class (the `no_dram_trans_*` inputs).
///
/// Each warp instruction references each distinct L2 line its lanes touch once, in lane
/// order; every miss is one DRAM transaction charged to the instruction's class (§3.3.4
/// averages misses per access type but leaves this choice open).
pub fn dram_transactions_per_class(p: &Platform, trace: &[WarpAccess]) -> ClassCounts {
    let line = u64::from(p.l2_line_bytes.max(1));
    let sets = u64::from(p.l2_bytes / (p.l2_line_bytes.max(1) * p.l2_assoc.max(1))).max(1);
    let mut lines = Vec::new();
    let mut owner = Vec::new();
    for (i, w) in trace.iter().enumerate() {
        let mut seen: Vec<u64> = Vec::new();
        for &a in &w.addresses {
            let l = a / line;
            if !seen.contains(&l) {
                seen.push(l);
                lines.push(l * line);
                owner.push(i);
            }
        }
    }
    let hits = l2_tcs_analysis(&lines, line, sets, p.l2_assoc as usize);
    let mut misses = ClassCounts::default();
    let mut insts = ClassCounts::default();
    for w in trace {
        *slot(&mut insts, w.class) += 1.0;
    }
    for (hit, &i) in hits.iter().zip(&owner) {
        if !hit {
            *slot(&mut misses, trace[i].class) += 1.0;
        }
    }
    let avg = |m: f64, n: f64| if n > 0.0 { m / n } else { 0.0 };
    ClassCounts {
        uncoal: avg(misses.uncoal, insts.uncoal),
        coal: avg(misses.coal, insts.coal),
        const_: avg(misses.const_, insts.const_),
    }
}

fn slot(c: &mut ClassCounts, class: AccessClass3) -> &mut f64 {
    match class {
        AccessClass3::Uncoalesced => &mut c.uncoal,
        AccessClass3::Coalesced => &mut c.coal,
        AccessClass3::Constant => &mut c.const_,
    }
}

/// Options of the adapter that a static profile cannot supply.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AdapterOptions {
    /// Average DRAM transactions per warp instruction per class; the paper measures them
    /// with its L2 analyser on a dynamic trace. Default: all L2 hits.
    pub no_dram_trans: ClassCounts,
}

/// The paper's class of a profiled access: uniform addresses are constant, a stride of at
/// most one element is coalesced, everything else uncoalesced (Wang et al. 2017 §3.3.2).
fn class_of(a: &kernel_profile::MemoryAccess) -> AccessClass3 {
    let element = i64::from(a.bytes_per_thread.max(1));
    match (a.class, a.stride_bytes) {
        (AccessClass::Uniform, _) => AccessClass3::Constant,
        (AccessClass::Coalesced, _) => AccessClass3::Coalesced,
        (AccessClass::Strided, Some(0)) => AccessClass3::Constant,
        (AccessClass::Strided, Some(s)) if s.abs() <= element => AccessClass3::Coalesced,
        _ => AccessClass3::Uncoalesced,
    }
}

/// Derives the paper's inputs from a static profile. The platform is returned too, because
/// the adapter adjusts per-class constants to the profile (coalesced transactions for
/// elements wider than 4 bytes, measured bank-conflict degrees).
pub fn inputs_from_profile(
    profile: &KernelProfile,
    p: &Platform,
    active_blocks_per_sm: u32,
    options: &AdapterOptions,
) -> Option<(CgInputs, Platform, Vec<String>)> {
    if active_blocks_per_sm == 0 || p.n_sms == 0 {
        return None;
    }
    let mut platform = p.clone();
    let mut assumptions = Vec::new();
    let warps_per_block = profile.launch.threads_per_block().div_ceil(32) as f64;
    let no_blocks = profile.launch.blocks() as f64;
    let active_sms = f64::from(p.n_sms).min(no_blocks);
    let blocks = f64::from(active_blocks_per_sm).min((no_blocks / active_sms).ceil());
    let mut mem = ClassCounts::default();
    let mut smem = ClassCounts::default();
    let (mut coal_lines, mut coal_n) = (0.0, 0.0);
    let mut ways = ClassCounts::default();
    let mut ways_n = ClassCounts::default();
    for a in &profile.memory_accesses {
        if !(a.executions.is_finite() && a.executions >= 0.0) {
            return None;
        }
        let class = class_of(a);
        match a.space {
            Space::Global | Space::Generic => {
                *slot(&mut mem, class) += a.executions;
                if class == AccessClass3::Coalesced {
                    let bytes = 32.0 * f64::from(a.bytes_per_thread.max(1));
                    coal_lines +=
                        a.executions * (bytes / f64::from(p.l2_line_bytes.max(1))).max(1.0);
                    coal_n += a.executions;
                }
            }
            Space::Shared => {
                *slot(&mut smem, class) += a.executions;
                if let Some(w) = a.bank_conflict_ways {
                    *slot(&mut ways, class) += a.executions * f64::from(w.max(1));
                    *slot(&mut ways_n, class) += a.executions;
                }
            }
            // Local memory is cached in L1 on Kepler (Wang et al. 2017 §3.3.1); constant, param and
            // texture spaces have their own caches. None of them enters the L2 model.
            _ => {}
        }
    }
    // A grid smaller than one wave occupies only some SMs; batch divides by those.
    platform.n_sms = active_sms as u32;
    if coal_n > 0.0 {
        platform.no_coal_pw = coal_lines / coal_n;
    }
    // Measured bank-conflict degrees replace Table 3's 16/1/1 where the profile has them.
    if ways_n.uncoal > 0.0 && ways_n.uncoal == smem.uncoal {
        platform.x_uncoal = ways.uncoal / ways_n.uncoal;
    }
    if ways_n.coal > 0.0 && ways_n.coal == smem.coal {
        platform.x_coal = ways.coal / ways_n.coal;
    }
    if ways_n.const_ > 0.0 && ways_n.const_ == smem.const_ {
        platform.x_const = ways.const_ / ways_n.const_;
    }
    if options.no_dram_trans == ClassCounts::default() {
        assumptions.push(
            "every global access assumed to hit in L2 (no address trace for the paper's L2 analyser)"
                .into(),
        );
    }
    assumptions.push(format!(
        "all instructions cost inst_cycle = {} cycles (Table 2/3 mapping)",
        p.inst_cycle
    ));
    let total = profile.counts.total_dynamic();
    if !(total.is_finite() && total >= 0.0) {
        return None;
    }
    let inputs = CgInputs {
        no_total_insts: total,
        mem_insts: mem,
        no_dram_trans: options.no_dram_trans,
        smem_insts: smem,
        no_smem_load_insts: 0.0,
        no_sync_insts: profile.counts.barriers.max(0.0),
        active_warps: blocks * warps_per_block,
        active_blocks: blocks,
        no_blocks,
    };
    Some((inputs, platform, assumptions))
}

/// How far the model can be trusted on this platform: it was built for the Kepler TK1.
pub fn confidence(p: &Platform) -> Confidence {
    match p.compute_capability {
        (3, 2) if p.n_sms == 1 => Confidence::High,
        (3, _) => Confidence::Medium,
        _ => Confidence::Low,
    }
}

/// The adapter: CGPredict's model for one profiled kernel.
pub fn predict(
    profile: &KernelProfile,
    p: &Platform,
    active_blocks_per_sm: u32,
    options: &AdapterOptions,
) -> Option<Prediction> {
    let (inputs, platform, mut assumptions) =
        inputs_from_profile(profile, p, active_blocks_per_sm, options)?;
    let out = evaluate(&platform, &inputs)?;
    assumptions.extend(profile.assumptions.iter().cloned());
    Some(to_prediction(&out, &platform, assumptions))
}

/// Wraps an evaluation into the common [`Prediction`].
pub fn to_prediction(out: &CgOutputs, p: &Platform, assumptions: Vec<String>) -> Prediction {
    let breakdown = crate::prediction::finite_breakdown([
        ("comp_cycles", out.comp_cycles),
        ("mem_cycles", out.mem_cycles),
        ("smem_cycles", out.smem_cycles),
        ("mem_latency_cycles", out.mem_l),
        ("departure_delay_cycles", out.departure_delay),
        ("exec_cycles_app", out.exec_cycles_app),
        ("sync_cycles", out.sync_cost),
        ("exec_cycles", out.exec_cycles),
        ("batch", out.batch),
    ]);
    let (bound, explanation) = match out.case {
        CgCase::NoMemory => (
            Bound::Compute,
            "compute-bound: no global memory instruction".to_string(),
        ),
        CgCase::MemoryBound => (
            Bound::Memory,
            format!(
                "memory-bound: MWP {:.1} <= CWP {:.1}, so only {:.1} warps' memory requests \
                 overlap (average latency {:.0} cycles, departure delay {:.1})",
                out.mwp, out.cwp, out.mwp, out.mem_l, out.departure_delay
            ),
        ),
        CgCase::ComputeBound => (
            Bound::Compute,
            format!(
                "compute-bound: MWP {:.1} > CWP {:.1}, so memory latency hides behind computation",
                out.mwp, out.cwp
            ),
        ),
    };
    Prediction {
        model: "cgpredict",
        time_us: out.time_ms * 1e3,
        breakdown,
        bound,
        confidence: confidence(p),
        assumptions,
        explanation,
        mwp: Some(out.mwp),
        cwp: Some(out.cwp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal TCS definition, for checking the LRU-stack implementation.
    fn tcs_brute(trace: &[u64], line: u64, sets: u64, assoc: usize) -> Vec<bool> {
        let blocks: Vec<u64> = trace.iter().map(|a| a / line).collect();
        (0..blocks.len())
            .map(|j| {
                let m = blocks[j];
                let Some(prev) = (0..j).rev().find(|&i| blocks[i] == m) else {
                    return false;
                };
                let mut tcs: Vec<u64> = blocks[prev + 1..j]
                    .iter()
                    .copied()
                    .filter(|b| b % sets == m % sets)
                    .collect();
                tcs.sort_unstable();
                tcs.dedup();
                tcs.len() < assoc
            })
            .collect()
    }

    #[test]
    fn lru_stack_equals_the_literal_tcs_rule() {
        // A deterministic pseudo-random trace over a small address range.
        let mut x: u64 = 12345;
        let trace: Vec<u64> = (0..2000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) % 4096
            })
            .collect();
        for (sets, assoc) in [(1, 4), (4, 2), (8, 8)] {
            assert_eq!(
                l2_tcs_analysis(&trace, 64, sets, assoc),
                tcs_brute(&trace, 64, sets, assoc)
            );
        }
    }

    #[test]
    fn classification_follows_the_stride_rule() {
        let same: Vec<u64> = vec![64; 32];
        let unit: Vec<u64> = (0..32).map(|l| 4 * l).collect();
        let column: Vec<u64> = (0..32).map(|l| 4096 * l).collect();
        assert_eq!(classify(&same, 4), AccessClass3::Constant);
        assert_eq!(classify(&unit, 4), AccessClass3::Coalesced);
        assert_eq!(classify(&column, 4), AccessClass3::Uncoalesced);
    }

    #[test]
    fn worked_class_timings_match_spec() {
        // Eqs 1–5 (§3.3.3) with Table 3's constants, worked by hand: coalesced
        // 164 + 1 × 2, uncoalesced 164 + 31 × 2, and a DRAM miss on every lane
        // 164 + 332 + 31 × 10 with departure delay max(64, 320).
        let p = Platform::jetson_tk1();
        assert_eq!(
            class_timing(&p, 2.0, 0.0),
            ClassTiming {
                mem_l: 166.0,
                dep_del: 4.0
            }
        );
        assert_eq!(
            class_timing(&p, 32.0, 0.0),
            ClassTiming {
                mem_l: 226.0,
                dep_del: 64.0
            }
        );
        assert_eq!(
            class_timing(&p, 32.0, 32.0),
            ClassTiming {
                mem_l: 806.0,
                dep_del: 320.0
            }
        );
    }
}
