//! The clock a board lowers to hold its power limit, and the power demand that decides it.
//!
//! A board holds its power under its limit (the TDP in gpu-data) by lowering the SM clock,
//! and the voltage with it, while a kernel's demand exceeds it (NVML names the clock event
//! "SW power cap": "the clocks have been optimized to ensure not to exceed currently set
//! power limits", NVML API Reference, `nvmlClocksEventReasons`). The model lowers the clock
//! no further than the base clock (an estimate: datasheets list a base and a boost clock
//! without saying which clock a power-limited kernel holds). The demand is the
//! activity model's (`power_model::activity`, docs/power.md), whose constants live here so
//! that the time model and the power model share them:
//!
//! P(x) = P_idle + P_interface + (e_lane · lane instructions · x^(α−1) + e_dram · DRAM bytes) / T(x)
//!
//! with x the clock as a share of the boost clock and T(x) the bottleneck model's time at
//! that clock (the clock-bound terms stretch by 1/x, the DRAM term does not). The
//! instructions' energy falls with the voltage: CMOS dynamic power is C·V²·f (X. Mei, Q.
//! Wang and X. Chu, "A survey and measurement study of GPU DVFS on energy conservation",
//! Digital Communications and Networks 3(2), 2017, §2), so a clock-bound kernel draws
//! x·V(x)² of its dynamic power at boost. With V ∝ x^β that is x^α, α = 1 + 2β: α = 1 at a
//! fixed voltage, 3 with the voltage proportional to the clock. `CLOCK_POWER_EXPONENT` takes
//! α = 2 (an estimate: GPU voltage-frequency tables rise more slowly than the clock over
//! most of the boost range and reach a floor at its bottom). It was chosen against the two
//! boards whose power-limited times are measured (gpu-benches' gpu-roofline sweep on the
//! A40 and the L40, docs/heldout.md, twenty-eighth note, which lists α = 1, 2 and 3 side by
//! side), so those rows do not test it independently. The model solves P(x) = limit for x
//! by bisection, at least the base clock.

/// The constants of the activity model (`power_model::activity` documents the fit).
pub mod fitted {
    /// Energy per active lane of an issued instruction, in pJ (A100 40 GB fit).
    pub const LANE_INSTRUCTION_PJ: f64 = 9.7;
    /// Energy per DRAM byte on an HBM board, in pJ (A100 40 GB fit; the H200 held out).
    pub const HBM_BYTE_PJ: f64 = 117.0;
    /// Energy per DRAM byte on a GDDR board, in pJ (A40 fit, with the rows the model runs
    /// below the boost clock at their lowered energy per instruction; the L40 held out).
    pub const GDDR_BYTE_PJ: f64 = 53.7;
    /// The A40's GDDR interface draw while a kernel runs, in W (the fit of its rows, with
    /// [`GDDR_BYTE_PJ`]), from which the two constants below follow.
    pub const A40_GDDR_INTERFACE_W: f64 = 125.2;
    /// A GDDR interface's draw while a kernel runs, per bit of memory bus, in W: the A40's
    /// fitted 125.2 W over its 384-bit bus (the L40 held out, with the same bus).
    pub const GDDR_INTERFACE_W_PER_BUS_BIT: f64 = A40_GDDR_INTERFACE_W / 384.0;
    /// The most of a board's range above its idle draw that the GDDR interface takes: the
    /// A40's 125.2 W of its 300 − 45 W (gpu-data's limit and idle draw of the A40). Per bus
    /// bit alone, a low-power board with a wide bus would draw more than its limit for the
    /// interface (a Tesla T4: 83 W of a 70 W limit); no board's interface can take more of
    /// its range than the board the figure was measured on.
    pub const GDDR_INTERFACE_MAX_RANGE_SHARE: f64 = A40_GDDR_INTERFACE_W / (300.0 - 45.0);
}

/// α: a clock-bound kernel's dynamic power goes as the clock to this power (module
/// documentation). Estimate.
pub const CLOCK_POWER_EXPONENT: f64 = 2.0;

/// The least clock the model lowers to, as a share of the boost clock, where gpu-data gives
/// no base clock (estimate: about the lowest base clock of the database, 0.3 of the boost on
/// an L40 or a T400).
pub const DEFAULT_MIN_CLOCK_RATIO: f64 = 0.3;

/// The memory a board has, as far as its power goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// HBM2, HBM2e, HBM3, HBM3e.
    Hbm,
    /// GDDR3 to GDDR7.
    Gddr,
    /// LPDDR4, LPDDR5 and DDR3 (Jetson modules, a GT 630): GDDR's energy per byte, an
    /// estimate, and no interface draw of GDDR's size (a module's whole budget is 10-60 W).
    Lpddr,
}

impl Memory {
    /// From gpu-data's `mem_type` ("HBM2e", "GDDR6X", "LPDDR5", ...); `None` when unknown.
    pub fn from_mem_type(mem_type: &str) -> Option<Memory> {
        let t = mem_type.to_ascii_uppercase();
        if t.starts_with("HBM") {
            Some(Memory::Hbm)
        } else if t.starts_with("GDDR") {
            Some(Memory::Gddr)
        } else if t.starts_with("LPDDR") || t.starts_with("DDR") {
            Some(Memory::Lpddr)
        } else {
            None
        }
    }

    /// Energy per DRAM byte, in pJ.
    pub fn byte_pj(self) -> f64 {
        match self {
            Memory::Hbm => fitted::HBM_BYTE_PJ,
            Memory::Gddr | Memory::Lpddr => fitted::GDDR_BYTE_PJ,
        }
    }

    /// The memory interface's draw while a kernel runs, in W: on GDDR the A40's per bus bit,
    /// at most the A40's share of the board's range above idle (`fitted`); none on HBM and
    /// LPDDR.
    pub fn interface_w(self, bus_width_bits: f64, tdp_w: f64, idle_w: f64) -> f64 {
        let ok = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        match self {
            Memory::Gddr => {
                let per_bit = ok(bus_width_bits) * fitted::GDDR_INTERFACE_W_PER_BUS_BIT;
                let range = ok(tdp_w - ok(idle_w));
                if range > 0.0 { per_bit.min(fitted::GDDR_INTERFACE_MAX_RANGE_SHARE * range) } else { per_bit }
            }
            Memory::Hbm | Memory::Lpddr => 0.0,
        }
    }
}

/// Issued instructions times their active lanes: each thread's dynamic count, as ptxas
/// issues them, times the threads (what the activity model's energy per lane instruction
/// multiplies).
pub fn lane_instructions(profile: &kernel_profile::KernelProfile) -> f64 {
    profile.counts.total_dynamic() * profile.launch.blocks() as f64 * profile.launch.threads_per_block() as f64
}

/// The share of an instruction's boost-clock energy it takes at clock share `x` of the rated
/// boost clock (the square of the voltage, x^(α−1)); 1 at the boost clock, above 1 at a clock
/// locked above it (`gpu_spec::Gpu::with_locked_clock`).
pub fn lane_energy_factor(clock_ratio: f64) -> f64 {
    if clock_ratio.is_finite() && clock_ratio > 0.0 { clock_ratio.powf(CLOCK_POWER_EXPONENT - 1.0) } else { 1.0 }
}

/// A board's power limit and what its demand is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    /// The board's power limit (gpu-data `tdp_w`), in W.
    pub limit_w: f64,
    /// What the board draws while any kernel runs: idle plus the memory interface, in W.
    pub fixed_w: f64,
    /// Energy per DRAM byte of the board's memory, in pJ.
    pub byte_pj: f64,
    /// The least clock share it lowers to: the base clock over the clock the model starts
    /// from (the boost clock, or a locked clock).
    pub min_clock_ratio: f64,
    /// The clock the model starts from as a share of the rated boost clock: 1, or a locked
    /// clock's share (`gpu_spec::Gpu::with_locked_clock`). An instruction's energy goes with
    /// the share of the rated boost clock ([`lane_energy_factor`]).
    pub clock_share: f64,
}

impl Budget {
    /// The budget of a database GPU; `None` where its memory type is unknown or its limit,
    /// less the fixed draw, leaves nothing to run on.
    pub fn of(gpu: &gpu_spec::Gpu) -> Option<Budget> {
        let memory = Memory::from_mem_type(&gpu.mem_type)?;
        let limit_w = gpu.tdp_w;
        let idle = if gpu.idle_power_w.is_finite() && gpu.idle_power_w > 0.0 { gpu.idle_power_w } else { 0.0 };
        let fixed_w = idle + memory.interface_w(f64::from(gpu.mem_bus_width_bits), limit_w, idle);
        if !(limit_w.is_finite() && limit_w > fixed_w) {
            return None;
        }
        let min_clock_ratio = if gpu.base_clock_mhz > 0.0 && gpu.boost_clock_mhz > 0.0 {
            (gpu.base_clock_mhz / gpu.boost_clock_mhz).clamp(0.05, 1.0)
        } else {
            DEFAULT_MIN_CLOCK_RATIO
        };
        Some(Budget { limit_w, fixed_w, byte_pj: memory.byte_pj(), min_clock_ratio, clock_share: gpu.clock_share() })
    }

    /// The board's power while a launch of `time_us` runs at clock share `clock_ratio` of the
    /// clock the model starts from, in W: the fixed draw plus the instructions' and the DRAM
    /// bytes' energy over the time.
    pub fn demand_w(&self, lane_instructions: f64, dram_bytes: f64, time_us: f64, clock_ratio: f64) -> f64 {
        let ok = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
        let t = time_us * 1e-6;
        if !(t.is_finite() && t > 0.0) {
            return self.fixed_w;
        }
        let joules = (ok(lane_instructions) * fitted::LANE_INSTRUCTION_PJ * lane_energy_factor(clock_ratio * self.clock_share) + ok(dram_bytes) * self.byte_pj) * 1e-12;
        self.fixed_w + joules / t
    }
}

/// The clock share at which `demand(x)` meets `limit`, by bisection over
/// [`Budget::min_clock_ratio`, 1]: `None` when the demand at the boost clock is within the
/// limit; the floor when even it exceeds the limit. `demand` must not increase as the clock
/// falls (a lower clock stretches the time and lowers the energy per instruction).
pub fn clock_ratio(budget: &Budget, mut demand: impl FnMut(f64) -> Option<f64>) -> Option<f64> {
    let over = |d: Option<f64>| d.is_some_and(|w| w > budget.limit_w);
    if !over(demand(1.0)) {
        return None;
    }
    let (mut lo, mut hi) = (budget.min_clock_ratio.clamp(0.05, 1.0), 1.0);
    if over(demand(lo)) {
        return Some(lo);
    }
    // 0.1 % of the clock: finer than any clock step a board takes.
    while hi - lo > 1e-3 {
        let mid = 0.5 * (lo + hi);
        if over(demand(mid)) { hi = mid } else { lo = mid }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> Budget {
        Budget { limit_w: 300.0, fixed_w: 157.2, byte_pj: fitted::GDDR_BYTE_PJ, min_clock_ratio: 0.3, clock_share: 1.0 }
    }

    #[test]
    fn the_interface_takes_at_most_the_a40s_share_of_a_boards_range() {
        // The A40 itself: 384 bits, 300 W, 45 W idle: both rules give its fitted 125.2 W.
        assert!((Memory::Gddr.interface_w(384.0, 300.0, 45.0) - 125.2).abs() < 1e-9);
        // A 70 W board with a 256-bit bus: the share of its 60 W range, not 75 W.
        let t4 = Memory::Gddr.interface_w(256.0, 70.0, 10.0);
        assert!((t4 - 60.0 * 125.2 / 255.0).abs() < 1e-9, "{t4}");
        // A 450 W board with a 384-bit bus: the per-bit figure, below its share.
        assert!((Memory::Gddr.interface_w(384.0, 450.0, 20.0) - 125.2).abs() < 1e-9);
        assert_eq!(Memory::Hbm.interface_w(5120.0, 400.0, 50.0), 0.0);
    }

    #[test]
    fn an_instructions_energy_goes_with_the_square_of_the_voltage() {
        assert_eq!(lane_energy_factor(1.0), 1.0);
        assert!((lane_energy_factor(0.5) - 0.5f64.powf(CLOCK_POWER_EXPONENT - 1.0)).abs() < 1e-12);
        for bad in [0.0, -1.0, f64::NAN] {
            assert_eq!(lane_energy_factor(bad), 1.0);
        }
    }

    #[test]
    fn a_clock_bound_kernel_runs_at_the_clock_that_meets_the_limit() {
        // 322.8 W of instructions at the boost clock over 11.755 ms, 41 W of DRAM traffic:
        // the L40's N = 400 row of the gpu-roofline sweep. Clock-bound, T(x) = T(1)/x.
        let b = budget();
        let t1 = 11_755.0;
        let lanes = 322.8 * t1 * 1e-6 / (fitted::LANE_INSTRUCTION_PJ * 1e-12);
        let bytes = 41.0 * t1 * 1e-6 / (b.byte_pj * 1e-12);
        let x = clock_ratio(&b, |x| Some(b.demand_w(lanes, bytes, t1 / x, x))).expect("over the limit");
        // 157.2 + 322.8 x^2 + 41 x = 300.
        let want = (-41.0 + (41.0f64.powi(2) + 4.0 * 322.8 * 142.8).sqrt()) / (2.0 * 322.8);
        assert!((x - want).abs() < 2e-3, "{x} vs {want}");
        assert!(b.demand_w(lanes, bytes, t1 / x, x) <= b.limit_w);
    }

    #[test]
    fn demand_within_the_limit_keeps_the_boost_clock_and_the_floor_holds() {
        let b = budget();
        assert_eq!(clock_ratio(&b, |_| Some(250.0)), None);
        assert_eq!(clock_ratio(&b, |_| None), None);
        // A demand that the floor does not bring under the limit stops at the floor.
        assert_eq!(clock_ratio(&b, |_| Some(1000.0)), Some(0.3));
    }

    #[test]
    fn a_board_whose_fixed_draw_fills_its_limit_has_no_budget() {
        let mut gpu = gpu_spec::Database::builtin().gpu("a40").expect("a40").clone();
        let b = Budget::of(&gpu).expect("a40 budget");
        assert!((b.fixed_w - (gpu.idle_power_w + 125.2)).abs() < 1e-9, "{b:?}");
        assert!((b.min_clock_ratio - gpu.base_clock_mhz / gpu.boost_clock_mhz).abs() < 1e-12);
        gpu.tdp_w = gpu.idle_power_w;
        assert_eq!(Budget::of(&gpu), None);
        gpu.mem_type = "eDRAM".into();
        assert_eq!(Budget::of(&gpu), None);
    }
}
