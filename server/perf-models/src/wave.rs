//! `wave`: the residency-and-waves model of Hasan, Chatterjee, Radhakrishnan and Antonio
//! (NPC 2014, Hasan et al. 2014), read as a modern wave (tail-effect) model.
//!
//! **What it estimates.** Kernel time as a sum over *waves* (rounds of resident blocks on
//! the busiest SM) of the time of one wave, where a wave costs the "ideal" time τ of one
//! fully resident round, stretched when the round holds more warps than the SM can
//! overlap.
//!
//! **Inputs.** Grid size β, block size ϑ, the GPU's SM count and its residency limits (the
//! occupancy calculator: warps, registers, shared memory, blocks per SM), and τ. τ is a
//! measured input in the paper (14.5 ms for its benchmark on the K20); the adapter
//! [`predict`] estimates it from the static profile (see there).
//!
//! **Two layers.**
//! - [`paper`]: Eqs. 1–3 of the paper with its own symbols (ξ_rb, ξ_rw, κ), and the time
//!   they imply, τ/κ. The paper never states how Eqs. 1–3 combine into a time; τ/κ (=
//!   ξ_rb + ξ_rw beyond capacity, τ + ξ_rw below it) is the only reading in which κ is an
//!   efficiency "with respect to τ" (§2, Fig. 2b), so that is what [`paper::time`] returns.
//! - [`evaluate`]: the wave reading that Table 2 actually shows (our reading of the paper):
//!   `T = Σ_rounds τ · max(1, warps_in_round / W_sat)`, with rounds from the occupancy
//!   calculator (which also counts registers and shared memory, ignored by the paper) and
//!   `W_sat` the number of resident warps per SM beyond which the SM's issue throughput is
//!   saturated, so extra warps serialise instead of overlapping. `W_sat` is a calibration
//!   input like BSP's λ: [`fit_saturation_warps`] fits it from one measured cell.
//!
//! **Assumptions and limits.** Blocks are dealt round-robin to SMs (the busiest SM gets
//! ⌈β/ρ_sm⌉ blocks) and every block takes the same time; the model has no notion of
//! memory-boundness beyond what τ and `W_sat` absorb, which is why the paper restricts
//! itself to compute-intensive kernels. Table 2 reproduction: `docs/models/wave.md`.
//!
//! **Source.** Hasan, Chatterjee, Radhakrishnan & Antonio 2014 (NPC 2014), §2 Eqs. 1–3,
//! Table 1 (symbols), §3 Table 2 (K20 measurements).

use std::collections::BTreeMap;

use kernel_profile::{InstrClass, KernelProfile, Space};

use crate::gpu::GpuParams;
use crate::prediction::{Bound, Confidence, Prediction};

/// The paper's own equations, with its own symbols (Hasan et al. 2014 Table 1).
pub mod paper {
    /// The GPU as the paper describes it (Table 1).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct HasanGpu {
        /// ρ_sm: streaming multiprocessors.
        pub rho_sm: u32,
        /// ρ_w: maximum resident warps per SM.
        pub rho_w: u32,
        /// ρ_b: maximum resident blocks per SM.
        pub rho_b: u32,
        /// ρ_t: maximum resident threads per SM.
        pub rho_t: u32,
        /// σ_w: warp size.
        pub sigma_w: u32,
    }

    /// The Tesla K20 ("Kepler 20") of Table 2: 13 SMs, ρ_w = 64 and ρ_w·σ_w·ρ_sm = 26,624
    /// (§3), ρ_b = 16 (the jumps at β = 224, 432, 640 cross multiples of 16 × 13 = 208),
    /// ρ_t = 2048 (§3, footnote 1).
    pub const TESLA_K20: HasanGpu = HasanGpu {
        rho_sm: 13,
        rho_w: 64,
        rho_b: 16,
        rho_t: 2048,
        sigma_w: 32,
    };

    /// τ for the Sum of Binomial Series benchmark on the K20 (Fig. 1 caption, in ms).
    pub const TAU_K20_BINOMIAL_MS: f64 = 14.5;

    /// Eq. 1: ξ_rb, the block-residency term.
    pub fn xi_rb(g: &HasanGpu, beta: u64, tau: f64) -> f64 {
        let cap = u64::from(g.rho_b) * u64::from(g.rho_sm);
        if cap == 0 {
            return f64::NAN;
        }
        if beta <= cap {
            tau
        } else {
            (beta.div_ceil(cap).max(1)) as f64 * tau
        }
    }

    /// Eq. 2: ξ_rw, the warp-residency term.
    pub fn xi_rw(g: &HasanGpu, beta: u64, theta: u64, tau: f64) -> f64 {
        let cap = f64::from(g.rho_w) * f64::from(g.sigma_w) * f64::from(g.rho_sm);
        (beta as f64 * theta as f64) / cap * tau
    }

    /// Eq. 3: the efficiency κ.
    pub fn kappa(g: &HasanGpu, beta: u64, theta: u64, tau: f64) -> f64 {
        let cap = u64::from(g.rho_w) * u64::from(g.sigma_w) * u64::from(g.rho_sm);
        let xi_rw = xi_rw(g, beta, theta, tau);
        if beta * theta <= cap {
            tau / (tau + xi_rw)
        } else {
            tau / (xi_rb(g, beta, tau) + xi_rw)
        }
    }

    /// The execution time Eqs. 1–3 imply: τ / κ.
    pub fn time(g: &HasanGpu, beta: u64, theta: u64, tau: f64) -> f64 {
        tau / kappa(g, beta, theta, tau)
    }

    /// Table 2 of the paper: β (rows) × ϑ (columns) → measured time in ms on the K20,
    /// copied as printed.
    pub const TABLE2_THETA: [u64; 10] = [32, 64, 96, 128, 160, 192, 224, 256, 288, 320];
    /// Rows of Table 2: (β, times for each ϑ in [`TABLE2_THETA`]).
    pub const TABLE2: [(u64, [f64; 10]); 16] = [
        (
            16,
            [
                14.61, 14.61, 14.62, 14.63, 14.62, 14.62, 14.62, 14.62, 14.63, 14.64,
            ],
        ),
        (
            64,
            [
                14.61, 14.60, 14.63, 14.62, 15.42, 15.91, 16.90, 17.73, 21.34, 22.57,
            ],
        ),
        (
            112,
            [
                14.60, 14.53, 15.20, 16.69, 21.38, 24.35, 27.93, 42.31, 42.74, 41.72,
            ],
        ),
        (
            160,
            [
                14.54, 15.19, 17.84, 22.47, 40.29, 40.58, 44.35, 45.28, 52.16, 65.71,
            ],
        ),
        (
            208,
            [
                14.55, 15.83, 20.80, 27.64, 43.00, 45.12, 52.69, 55.23, 70.21, 77.90,
            ],
        ),
        (
            224,
            [
                29.02, 30.36, 35.30, 42.16, 42.97, 46.65, 56.08, 69.69, 75.50, 78.63,
            ],
        ),
        (
            272,
            [
                29.05, 30.37, 35.47, 43.40, 50.60, 66.41, 70.39, 79.28, 84.12, 95.45,
            ],
        ),
        (
            320,
            [
                29.07, 30.54, 36.56, 45.43, 67.23, 71.02, 80.39, 98.46, 102.9, 117.3,
            ],
        ),
        (
            368,
            [
                29.08, 31.60, 39.95, 51.77, 69.03, 78.60, 96.55, 103.4, 123.5, 127.1,
            ],
        ),
        (
            416,
            [
                29.02, 31.63, 41.58, 55.38, 75.08, 93.54, 102.2, 110.4, 129.7, 147.5,
            ],
        ),
        (
            432,
            [
                43.45, 46.13, 56.03, 69.73, 78.60, 94.69, 105.3, 124.9, 134.9, 147.9,
            ],
        ),
        (
            480,
            [
                43.50, 46.15, 56.19, 70.99, 93.14, 99.24, 124.6, 134.3, 153.7, 170.8,
            ],
        ),
        (
            528,
            [
                43.51, 46.32, 58.16, 74.42, 94.91, 117.8, 132.6, 152.3, 164.8, 178.4,
            ],
        ),
        (
            576,
            [
                43.50, 46.75, 60.69, 79.36, 101.6, 120.7, 139.1, 161.9, 181.4, 199.4,
            ],
        ),
        (
            624,
            [
                43.51, 47.41, 62.39, 83.10, 105.8, 130.2, 152.4, 165.5, 192.9, 209.2,
            ],
        ),
        (
            640,
            [
                57.87, 61.91, 76.75, 97.30, 118.9, 131.1, 156.4, 180.1, 203.4, 222.6,
            ],
        ),
    ];
}

/// Inputs of the wave reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaveInputs {
    pub sm_count: u32,
    /// Resident blocks per SM from the occupancy calculator.
    pub resident_blocks_per_sm: u32,
    pub warps_per_block: u32,
    /// Blocks in the grid (β).
    pub blocks: u64,
    /// Time of one round that does not saturate the SM (τ), in any unit; the output is in
    /// the same unit.
    pub tau: f64,
    /// Resident warps per SM at which issue saturates (`W_sat`); `None` = never (every
    /// round costs exactly τ, the pure wave model).
    pub saturation_warps: Option<f64>,
}

/// Result of [`evaluate`].
#[derive(Debug, Clone, PartialEq)]
pub struct WaveOutput {
    /// Blocks on the busiest SM (⌈β/ρ_sm⌉).
    pub blocks_on_busiest_sm: u64,
    /// Rounds (waves) on the busiest SM = ⌈β / (resident × ρ_sm)⌉.
    pub waves: u64,
    /// Blocks in the last round on the busiest SM (equal to the resident count when the
    /// last round is full; smaller when there is a tail).
    pub last_wave_blocks: u64,
    /// Predicted time (unit of τ).
    pub time: f64,
    /// Whether any round exceeded the saturation point.
    pub saturated: bool,
}

/// The wave reading: Σ over rounds of τ · max(1, warps_in_round / W_sat).
pub fn evaluate(inp: &WaveInputs) -> Option<WaveOutput> {
    if inp.sm_count == 0
        || inp.resident_blocks_per_sm == 0
        || inp.blocks == 0
        || inp.tau.is_nan()
        || inp.tau < 0.0
    {
        return None;
    }
    let per_sm = inp.blocks.div_ceil(u64::from(inp.sm_count));
    let resident = u64::from(inp.resident_blocks_per_sm);
    let waves = per_sm.div_ceil(resident);
    let full = per_sm / resident;
    let tail = per_sm - full * resident;
    let round_time = |k: u64| -> (f64, bool) {
        match inp.saturation_warps {
            Some(w) if w > 0.0 => {
                let warps = (k * u64::from(inp.warps_per_block)) as f64;
                let s = warps / w;
                (inp.tau * s.max(1.0), s > 1.0)
            }
            _ => (inp.tau, false),
        }
    };
    let (t_full, s_full) = round_time(resident);
    let mut time = full as f64 * t_full;
    let mut saturated = full > 0 && s_full;
    if tail > 0 {
        let (t_tail, s_tail) = round_time(tail);
        time += t_tail;
        saturated |= s_tail;
    }
    Some(WaveOutput {
        blocks_on_busiest_sm: per_sm,
        waves,
        last_wave_blocks: if tail > 0 { tail } else { resident.min(per_sm) },
        time,
        saturated,
    })
}

/// Fits `W_sat` from one measured single-round launch holding `warps_in_round` warps on
/// the busiest SM: `measured = τ · warps / W_sat`. `None` when the measurement shows no
/// saturation (measured ≤ τ), where `W_sat` is unidentifiable.
pub fn fit_saturation_warps(measured: f64, tau: f64, warps_in_round: f64) -> Option<f64> {
    if measured > tau && tau > 0.0 && warps_in_round > 0.0 {
        Some(tau * warps_in_round / measured)
    } else {
        None
    }
}

/// Calibration of the adapter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaveConfig {
    /// A measured τ in µs (one unsaturated round), overriding the static estimate.
    pub tau_us: Option<f64>,
    /// A fitted `W_sat`, overriding the static estimate.
    pub saturation_warps: Option<f64>,
}

/// Adapter: the wave model on a static profile.
///
/// τ (one round, unsaturated) is estimated as the latency-bound time of one warp: the sum
/// over its dynamic instructions of their dependent-issue latency (ALU latency for
/// compute, DRAM latency for global/local memory, shared latency for shared memory), i.e.
/// a fully serial chain; the per-warp throughput cost `c` is the sum over classes of
/// `count × 32 / units_of_class` cycles, or the warp's DRAM bytes at the SM's share of
/// bandwidth when that is larger; `W_sat = τ / c`. Both are estimates and say so.
pub fn predict(profile: &KernelProfile, gpu: &GpuParams, cfg: &WaveConfig) -> Option<Prediction> {
    let tpb = u32::try_from(profile.launch.threads_per_block()).ok()?;
    let smem = profile
        .resources
        .static_smem_bytes
        .saturating_add(profile.launch.dynamic_smem);
    let resident = gpu.resident_blocks_per_sm(tpb, profile.resources.registers_per_thread, smem);
    if resident == 0 {
        return None;
    }
    let counts = &profile.counts.dynamic;
    let mut latency_cycles = 0.0;
    let mut issue_cycles = 0.0;
    for (class, n) in counts {
        let (lat, units) = class_latency_and_units(*class, gpu);
        latency_cycles += n * lat;
        issue_cycles += n * 32.0 / units.max(1.0);
    }
    let dram_bytes_per_warp = crate::roofline::dram_bytes_per_warp(profile);
    let bytes_per_cycle_per_sm =
        gpu.mem_bandwidth_gbs * 1e9 / gpu.clock_hz() / f64::from(gpu.sm_count.max(1));
    let mem_cycles = if bytes_per_cycle_per_sm > 0.0 {
        dram_bytes_per_warp / bytes_per_cycle_per_sm
    } else {
        0.0
    };
    let per_warp_cost = issue_cycles.max(mem_cycles);
    if latency_cycles <= 0.0 {
        return None;
    }
    let mut assumptions = vec![];
    let tau_us = match cfg.tau_us {
        Some(t) => {
            assumptions.push(format!("τ = {t} µs as configured (measured)"));
            t
        }
        None => {
            assumptions.push(format!(
                "τ estimated as one warp's serial latency, {latency_cycles:.0} cycles (no overlap of its own instructions)"
            ));
            gpu.cycles_to_us(latency_cycles)
        }
    };
    let w_sat = match cfg.saturation_warps {
        Some(w) => {
            assumptions.push(format!("W_sat = {w} warps as configured (fitted)"));
            Some(w)
        }
        None if per_warp_cost > 0.0 => {
            let w = latency_cycles / per_warp_cost;
            assumptions.push(format!(
                "W_sat estimated as τ / per-warp throughput cost = {w:.1} warps ({} per warp)",
                if mem_cycles > issue_cycles {
                    "DRAM-bandwidth cost"
                } else {
                    "issue cost"
                }
            ));
            Some(w)
        }
        None => None,
    };
    let inp = WaveInputs {
        sm_count: gpu.sm_count,
        resident_blocks_per_sm: resident,
        warps_per_block: tpb.div_ceil(32),
        blocks: profile.launch.blocks(),
        tau: tau_us,
        saturation_warps: w_sat,
    };
    let out = evaluate(&inp)?;
    assumptions.push(format!(
        "{} SMs, {resident} resident blocks per SM (occupancy), blocks dealt round-robin",
        gpu.sm_count
    ));
    assumptions.extend(gpu.provenance.iter().cloned());
    let bound = if !out.saturated {
        Bound::Latency
    } else if mem_cycles > issue_cycles {
        Bound::Memory
    } else {
        Bound::Compute
    };
    let mut breakdown = BTreeMap::new();
    breakdown.insert("tau_us".to_string(), tau_us);
    breakdown.insert("waves".to_string(), out.waves as f64);
    breakdown.insert(
        "blocks_on_busiest_sm".to_string(),
        out.blocks_on_busiest_sm as f64,
    );
    breakdown.insert("resident_blocks_per_sm".to_string(), f64::from(resident));
    breakdown.insert("last_wave_blocks".to_string(), out.last_wave_blocks as f64);
    if let Some(w) = w_sat {
        breakdown.insert("saturation_warps".to_string(), w);
    }
    let explanation = format!(
        "{} wave{} of up to {resident} blocks per SM; each wave costs τ = {tau_us:.2} µs{}",
        out.waves,
        if out.waves == 1 { "" } else { "s" },
        if out.saturated {
            ", stretched because a full wave holds more warps than the SM overlaps"
        } else {
            ""
        }
    );
    Some(Prediction {
        model: "wave",
        time_us: out.time,
        breakdown,
        bound,
        confidence: if cfg.tau_us.is_some() {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        assumptions,
        explanation,
        mwp: None,
        cwp: None,
    })
}

/// Dependent-issue latency (cycles) and units per SM executing `class`.
pub(crate) fn class_latency_and_units(class: InstrClass, gpu: &GpuParams) -> (f64, f64) {
    let u = &gpu.units;
    let alu = gpu.alu_latency_cycles;
    // Estimate: FP64 and SFU operations are charged twice the ALU latency; no seed gives
    // their latencies for every GPU (Alavani 2023 Table 3.2 has none for FP64 or SFU ops).
    match class {
        InstrClass::Fp64 => (alu * 2.0, f64::from(u.fp64)),
        InstrClass::Sfu => (alu * 2.0, f64::from(u.sfu)),
        InstrClass::Load(Space::Global | Space::Local | Space::Generic | Space::Texture)
        | InstrClass::Store(Space::Global | Space::Local | Space::Generic)
        | InstrClass::Atomic(_) => (gpu.dram_latency_cycles, f64::from(u.ldst)),
        InstrClass::Load(Space::Shared) | InstrClass::Store(Space::Shared) => {
            (gpu.shared_latency_cycles, f64::from(u.ldst))
        }
        InstrClass::Load(_) | InstrClass::Store(_) => (alu, f64::from(u.ldst)),
        _ => (alu, f64::from(u.fp32)),
    }
}
