//! Board power from the work a kernel does per second: the idle draw, plus the energy of its
//! instructions and of its DRAM traffic over its time, plus, on GDDR boards, the memory
//! interface's draw while it runs; at most the board's power limit.
//!
//! P = P_idle + P_interface + (e_lane · lane instructions + e_dram · DRAM bytes) / T,
//! min(TDP)
//!
//! - `lane instructions`: the kernel's issued warp instructions times their active lanes
//!   (each thread's dynamic instruction count, as ptxas issues them, times the threads);
//!   one energy for every instruction, which covers its issue, its register reads and
//!   writes and its datapath.
//! - `DRAM bytes`: what the headline model moves to and from DRAM; the energy per byte
//!   covers the whole path (DRAM, interface, L2, crossbar).
//! - `P_interface`: GDDR's I/O draws power whenever the memory runs at speed, whatever the
//!   traffic; HBM's wide, slow interface does not (fitted: −10.7 W on the A100, so 0).
//! - `T`: the headline time; `P_idle` and the TDP come from gpu-data.
//!
//! This is the shape of the energy roofline (Choi, Bedard, Fowler and Vuduc, "A Roofline
//! Model of Energy", IPDPS 2013: constant power plus energy per flop and per byte over
//! time) with instructions in place of flops. The four constants (`fitted`) are fitted on
//! gpu-benches' gpu-roofline power tables (D. Ernst, github.com/te42kyfo/gpu-benches,
//! `gpu-roofline/` at commit e4e93a3: a sweep from streaming to FP32-bound, one table per
//! GPU): e_lane and e_dram for HBM on the A100 40 GB's 11 rows, P_interface and e_dram for
//! GDDR on the A40's 10 rows (e_lane held at the A100's), by least squares at the measured
//! times (`server/warpsight/tests/activity_power_fit.rs` redoes the fit and checks these
//! constants against it); held out, the H200 (HBM3e) and the L40
//! (GDDR6). docs/heldout.md's power table, generated from `warpsight validate` with the
//! predicted times, shows every row against its measurement. What it does not know: tensor-core multiply-adds
//! (a tensor instruction counts as one instruction per lane, so tensor-core kernels are
//! under-estimated), FP64 and SFU instructions' higher energy, L2 and shared-memory
//! traffic beyond what the instructions cost. Where the demand exceeds the board's limit,
//! the time model lowers the clock until it meets it (`perf_models::power_limit`); the
//! estimate then takes the clock it ran at (`Work::clock_ratio`).

use crate::{Confidence, PowerEstimate};

/// The constants and the memory kinds, shared with the time model's power limit
/// (`perf_models::power_limit`, which holds them).
pub use perf_models::power_limit::{Memory, fitted};

/// The board: its power range and its memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub name: String,
    pub tdp_w: f64,
    pub idle_w: f64,
    pub memory: Memory,
    pub bus_width_bits: f64,
}

/// What one launch does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    /// Issued instructions times their active lanes (per-thread dynamic count × threads).
    pub lane_instructions: f64,
    /// Bytes read from and written to DRAM.
    pub dram_bytes: f64,
    /// The SM clock as a share of the rated boost clock, where the time model lowered it to
    /// hold the board's limit (`perf_models::power_limit`) or the clock is locked
    /// (`gpu_spec::Gpu::with_locked_clock`): each instruction's energy is then
    /// `power_limit::lane_energy_factor` of its boost-clock figure. 1 at the boost clock.
    pub clock_ratio: f64,
    /// The time model lowered the clock to hold the board's power limit.
    pub power_limited: bool,
}

impl Default for Work {
    fn default() -> Work {
        Work { lane_instructions: 0.0, dram_bytes: 0.0, clock_ratio: 1.0, power_limited: false }
    }
}

/// Names of the contributions, as in [`PowerEstimate::contributions`].
pub const INSTRUCTIONS: &str = "instructions";
pub const DRAM_TRAFFIC: &str = "dram_traffic";
pub const MEMORY_INTERFACE: &str = "memory_interface";

/// The words for a contribution (the hover and the CLI print them).
pub fn label(name: &str) -> Option<&'static str> {
    Some(match name {
        INSTRUCTIONS => "the instructions executed (issue, registers, datapaths)",
        DRAM_TRAFFIC => "DRAM traffic (DRAM, L2 and the crossbar)",
        MEMORY_INTERFACE => "the GDDR interface running at speed",
        _ => return None,
    })
}

/// The average board power while one launch of `time_us` runs.
pub fn estimate(work: &Work, time_us: f64, board: &Board) -> PowerEstimate {
    let t = time_us * 1e-6;
    let mut notes = vec![format!(
        "activity model: the idle draw plus {} pJ per lane instruction and {} pJ per DRAM byte over the predicted time{}, fitted on gpu-benches' gpu-roofline power tables (docs/power.md)",
        fitted::LANE_INSTRUCTION_PJ,
        board.memory.byte_pj(),
        match board.memory {
            Memory::Gddr => format!(", plus {:.2} W per bit of GDDR bus while it runs", fitted::GDDR_INTERFACE_W_PER_BUS_BIT),
            Memory::Hbm | Memory::Lpddr => String::new(),
        }
    )];
    let usable = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
    let mut contributions = Vec::new();
    let lane_pj = fitted::LANE_INSTRUCTION_PJ * perf_models::power_limit::lane_energy_factor(work.clock_ratio);
    if t.is_finite() && t > 0.0 {
        contributions.push((INSTRUCTIONS.to_string(), usable(work.lane_instructions) * lane_pj * 1e-12 / t));
        contributions.push((DRAM_TRAFFIC.to_string(), usable(work.dram_bytes) * board.memory.byte_pj() * 1e-12 / t));
    } else {
        notes.push("no usable predicted time: only the idle draw".to_string());
    }
    if board.memory == Memory::Gddr {
        contributions.push((MEMORY_INTERFACE.to_string(), board.memory.interface_w(board.bus_width_bits, board.tdp_w, board.idle_w)));
    }
    let clock_ratio = work.clock_ratio;
    if clock_ratio.is_finite() && clock_ratio > 0.0 && (clock_ratio - 1.0).abs() > 1e-9 {
        notes.push(if work.power_limited {
            format!(
                "the {} board holds its {:.0} W limit at {:.0} % of its boost clock: the predicted time is at that clock, and each instruction costs {:.1} pJ there (perf_models::power_limit)",
                board.name,
                board.tdp_w,
                100.0 * clock_ratio,
                lane_pj
            )
        } else {
            format!(
                "the {} board runs at a locked clock, {:.0} % of its boost clock: each instruction costs {:.1} pJ there (perf_models::power_limit)",
                board.name,
                100.0 * clock_ratio,
                lane_pj
            )
        });
    }
    let base = usable(board.idle_w);
    let dynamic: f64 = contributions.iter().map(|(_, w)| w).sum();
    let limit = usable(board.tdp_w).max(base);
    if base + dynamic > limit && dynamic > 0.0 {
        let scale = (limit - base) / dynamic;
        for (_, w) in &mut contributions {
            *w *= scale;
        }
        notes.push(format!(
            "{:.0} W of demand exceeds the {} board's {:.0} W limit: the GPU lowers its clock to hold it (the predicted time assumes the clock the time model ran at), and the contributions are scaled to the limit",
            base + dynamic,
            board.name,
            limit
        ));
    }
    let watts = base + contributions.iter().map(|(_, w)| w).sum::<f64>();
    PowerEstimate { watts, base_watts: base, contributions, confidence: Confidence::Low, model_gpu: board.name.clone(), notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(memory: Memory) -> Board {
        Board { name: "test board".into(), tdp_w: 400.0, idle_w: 60.0, memory, bus_width_bits: 384.0 }
    }

    #[test]
    fn power_is_the_idle_draw_plus_energy_over_time() {
        // 1e12 lane instructions and 1e9 DRAM bytes in 1 s on HBM: 9.7 W and 0.117 W.
        let e = estimate(&Work { lane_instructions: 1e12, dram_bytes: 1e9, ..Work::default() }, 1e6, &board(Memory::Hbm));
        assert!((e.watts - (60.0 + 9.7 + 0.117)).abs() < 1e-9, "{}", e.watts);
        assert_eq!(e.base_watts, 60.0);
        let sum: f64 = e.contributions.iter().map(|(_, w)| w).sum();
        assert!((e.base_watts + sum - e.watts).abs() < 1e-9);
        assert_eq!(e.contributions.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), [INSTRUCTIONS, DRAM_TRAFFIC]);
        // Half the time, twice the dynamic power.
        let fast = estimate(&Work { lane_instructions: 1e12, dram_bytes: 1e9, ..Work::default() }, 5e5, &board(Memory::Hbm));
        assert!((fast.watts - 60.0 - 2.0 * (9.7 + 0.117)).abs() < 1e-9);
    }

    #[test]
    fn a_gddr_board_adds_its_interface_and_its_own_energy_per_byte() {
        let e = estimate(&Work { lane_instructions: 0.0, dram_bytes: 1e12, ..Work::default() }, 1e6, &board(Memory::Gddr));
        let interface = 384.0 * fitted::GDDR_INTERFACE_W_PER_BUS_BIT;
        assert!((interface - 125.2).abs() < 1e-9);
        // 1e12 bytes in 1 s at the GDDR energy per byte (53.7 pJ): 53.7 W.
        assert!((e.watts - (60.0 + 53.7 + interface)).abs() < 1e-9, "{}", e.watts);
    }

    #[test]
    fn an_lpddr_module_has_no_gddr_interface_draw() {
        let module = Board { name: "module".into(), tdp_w: 60.0, idle_w: 6.0, memory: Memory::Lpddr, bus_width_bits: 256.0 };
        let e = estimate(&Work { lane_instructions: 0.0, dram_bytes: 1e11, ..Work::default() }, 1e6, &module);
        // 1e11 bytes in 1 s at GDDR's 53.7 pJ per byte: 5.37 W.
        assert!((e.watts - (6.0 + 5.37)).abs() < 1e-9, "{}", e.watts);
        assert!(e.contributions.iter().all(|(n, _)| n != MEMORY_INTERFACE), "{:?}", e.contributions);
    }

    #[test]
    fn at_a_lowered_clock_each_instruction_costs_less() {
        // The time model ran the launch at 60 % of the boost clock: each lane instruction
        // takes lane_energy_factor(0.6) of its 9.7 pJ, and a note says so.
        let work = Work { lane_instructions: 1e12, dram_bytes: 0.0, clock_ratio: 0.6, power_limited: true };
        let e = estimate(&work, 1e6, &board(Memory::Hbm));
        let want = 9.7 * perf_models::power_limit::lane_energy_factor(0.6);
        assert!((e.watts - (60.0 + want)).abs() < 1e-9, "{}", e.watts);
        assert!(e.notes.iter().any(|n| n.contains("60 % of its boost clock")), "{:?}", e.notes);
        // At the boost clock, no such note.
        let e = estimate(&Work { clock_ratio: 1.0, ..work }, 1e6, &board(Memory::Hbm));
        assert!(e.notes.iter().all(|n| !n.contains("of its boost clock")), "{:?}", e.notes);
    }

    #[test]
    fn at_a_clock_locked_above_the_boost_clock_each_instruction_costs_more() {
        // A clock locked at 1.2 times the rated boost clock, within the limit: the voltage is
        // higher, so each lane instruction takes lane_energy_factor(1.2) > 1 of its 9.7 pJ.
        let work = Work { lane_instructions: 1e12, dram_bytes: 0.0, clock_ratio: 1.2, power_limited: false };
        let e = estimate(&work, 1e6, &board(Memory::Hbm));
        let factor = perf_models::power_limit::lane_energy_factor(1.2);
        assert!(factor > 1.0);
        assert!((e.watts - (60.0 + 9.7 * factor)).abs() < 1e-9, "{}", e.watts);
        assert!(e.notes.iter().any(|n| n.contains("locked clock, 120 % of its boost clock")), "{:?}", e.notes);
    }

    #[test]
    fn demand_above_the_limit_is_held_at_the_limit_and_says_so() {
        let e = estimate(&Work { lane_instructions: 1e14, dram_bytes: 0.0, ..Work::default() }, 1e6, &board(Memory::Hbm));
        assert!((e.watts - 400.0).abs() < 1e-9, "{}", e.watts);
        let sum: f64 = e.contributions.iter().map(|(_, w)| w).sum();
        assert!((e.base_watts + sum - 400.0).abs() < 1e-9);
        assert!(e.notes.iter().any(|n| n.contains("lowers its clock")), "{:?}", e.notes);
    }

    #[test]
    fn degenerate_inputs_give_the_idle_draw_and_never_nan() {
        for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = estimate(&Work { lane_instructions: f64::NAN, dram_bytes: -5.0, ..Work::default() }, t, &board(Memory::Gddr));
            assert!(e.watts.is_finite() && e.watts >= 60.0, "{t}: {}", e.watts);
        }
    }

    #[test]
    fn memory_kinds_come_from_the_database_names() {
        assert_eq!(Memory::from_mem_type("HBM2e"), Some(Memory::Hbm));
        assert_eq!(Memory::from_mem_type("HBM3"), Some(Memory::Hbm));
        assert_eq!(Memory::from_mem_type("GDDR6X"), Some(Memory::Gddr));
        assert_eq!(Memory::from_mem_type("LPDDR5"), Some(Memory::Lpddr));
        assert_eq!(Memory::from_mem_type("DDR3L"), Some(Memory::Lpddr));
        assert_eq!(Memory::from_mem_type("eDRAM"), None);
    }
}
