//! The adapter: the paper's inputs derived from a static [`KernelProfile`] (the CC 1.2/1.3
//! coalescing protocol, the instruction mix), the device from the GPU database, and the
//! outputs as the common [`Prediction`].

use kernel_profile::{AccessClass, KernelProfile, Space};

use super::paper::finite_nonneg;
use super::*;
use crate::prediction::{Bound, Confidence, Prediction};

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
