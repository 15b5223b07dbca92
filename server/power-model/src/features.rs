//! The power model's input features, computed from warpsight's static `KernelProfile`.
//!
//! The model is trained on the published datasets of Alavani 2023 (Ch. 5; CSVs
//! from the `santonus/energymodel` repository), so every feature here is computed the way
//! *those datasets* computed it, not the way the thesis prints it, where the two differ
//! (the CSVs of the public `santonus/energymodel` repository against Alavani 2023 §5.4;
//! `docs/power.md` "Feature definitions" lists each one
//! and how it was checked against the CSVs by `gpu-data/power/train.py`).
//!
//! Terms used below, as in the datasets:
//! - `threads` = grid size × block size.
//! - `wtotal` = the datasets' wave count, `max(1, 1 + floor((threads + 19000) / 34900))`:
//!   an empirical fit that reproduces the `wtotal` column in 99.9% of the 3,185 rows of
//!   the three energymodel files (the thesis does not print its formula).
//! - `X_inst_sm` ("simulated" per-SM counts in the CSVs) = per-thread dynamic count of
//!   class X × `wtotal`. This reproduces loop-free kernels' rows (e.g. `div`, `vectorAdd`
//!   in the K20 file); the thesis's simulator multiplied loops by a per-run user input
//!   that the CSVs do not record, so for loops it is an approximation.
//! - Classes (Alavani 2023 §3.1.1 lists four: compute, global, shared, misc): compute =
//!   integer/fp32/fp64/fp16/SFU/tensor ALU plus `cvt`/`cvta` and `mov` (Table 3.1 lists
//!   `cvt` and `mov` among compute instructions); global = loads/stores/atomics in the
//!   global, generic, local and texture spaces (all reach device memory); shared =
//!   shared-space accesses; misc = everything else (branches, barriers, `ld.param`,
//!   `ld.const`, returns, ...).

use kernel_profile::{InstrClass, KernelProfile, Space};

/// Facts about the GPU a model was trained on that the feature definitions need.
///
/// Features must be computed with the constants of the *model's* GPU (its training data
/// used them), also when the prediction is transferred to another GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuFacts {
    pub name: &'static str,
    pub sm_count: u32,
    pub warp_schedulers_per_sm: u32,
    pub dispatch_units_per_sm: u32,
    pub l2_bytes: u64,
    /// Divisor of `threads × total_inst` in `inst_issue_cycles` (dataset convention).
    pub issue_divisor: f64,
    /// `true` when the dataset's `cache_penalty` multiplies by the *total* global
    /// latency (`glob_lat_sm`) instead of the average (V100 file).
    pub cache_penalty_total_latency: bool,
    pub latency: LatencyTable,
}

/// Alavani 2023 Table 3.2 latencies (cycles) for one GPU, plus the global and shared latency
/// conventions of its dataset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTable {
    pub addf: f64,
    pub adds: f64,
    pub mulf: f64,
    pub mul: f64,
    pub and: f64,
    pub fma: f64,
    pub mads: f64,
    pub divf: f64,
    pub divs: f64,
    pub cvt: f64,
    pub sqrt: f64,
    pub setp: f64,
    pub mov: f64,
    /// Global latency: `Some` constant (cycles), or `None` for the K20 Table 3.3
    /// piecewise regression in `threads`.
    pub global_const: Option<f64>,
}

/// Shared-memory latency used by all three datasets (`avg_shar_lat` is 36 in every row
/// with shared instructions in the K20, M60 and V100 files; the thesis's Table 3.2 says
/// 47/38/39, but the model was trained on 36).
pub const DATASET_SHARED_LATENCY: f64 = 36.0;
/// `avg_misc_lat` is 10 in every dataset row (`santonus/energymodel` CSVs).
pub const DATASET_MISC_LATENCY: f64 = 10.0;

impl GpuFacts {
    /// Tesla K20 (GK110, CC 3.5): 13 SMs, 4 warp schedulers and 8 dispatch units per SM,
    /// 1,310,720 B of L2 (Alavani 2023 Table 4.6); Table 3.2 K20 column; global latency from Table
    /// 3.3. Issue divisor 65536 checked on the K20 CSV (99.9% of rows).
    pub const K20: GpuFacts = GpuFacts {
        name: "Tesla K20",
        sm_count: 13,
        warp_schedulers_per_sm: 4,
        dispatch_units_per_sm: 8,
        l2_bytes: 1_310_720,
        issue_divisor: 65536.0,
        cache_penalty_total_latency: false,
        latency: LatencyTable {
            addf: 9.0,
            adds: 9.0,
            mulf: 9.0,
            mul: 9.0,
            and: 9.0,
            fma: 10.0,
            mads: 20.0,
            divf: 894.5,
            divs: 424.0,
            cvt: 10.0,
            sqrt: 359.0,
            setp: 22.0,
            mov: 2.0,
            global_const: None,
        },
    };
    /// Tesla M60 (GM204, CC 5.2), one of its two GPUs: 16 SMs, 4 schedulers, 8 dispatch
    /// units (NVIDIA Maxwell GM204 whitepaper: 4 schedulers × 2 dispatch per SMM), 2 MiB
    /// L2 (the L2 size that reproduces the M60 CSV's `cache_penalty` in 100% of rows).
    /// Table 3.2 M60 column. Global latency: the thesis gives no model for the M60; we use
    /// the median `avg_glob_lat` of the M60 CSV, 425.7 cycles (an estimate).
    pub const M60: GpuFacts = GpuFacts {
        name: "Tesla M60",
        sm_count: 16,
        warp_schedulers_per_sm: 4,
        dispatch_units_per_sm: 8,
        l2_bytes: 2_097_152,
        issue_divisor: 65536.0,
        cache_penalty_total_latency: false,
        latency: LatencyTable {
            addf: 15.0,
            adds: 15.0,
            mulf: 15.0,
            mul: 86.0,
            and: 15.0,
            fma: 188.0,
            mads: 100.0,
            divf: 1278.0,
            divs: 1026.0,
            cvt: 195.0,
            sqrt: 550.0,
            setp: 30.0,
            mov: 51.0,
            global_const: Some(425.7),
        },
    };
    /// Tesla V100 (GV100, CC 7.0): 80 SMs, 4 schedulers with 1 dispatch unit each (NVIDIA
    /// Volta whitepaper), 6 MiB L2 (reproduces the V100 CSV's `cache_penalty`, which
    /// multiplies by the total global latency, in 90% of rows). Issue divisor 16384
    /// checked on the V100 CSV (100% of rows). Table 3.2 V100 column. Global latency: the
    /// median `avg_glob_lat` of the V100 CSV, 391.3 cycles (an estimate).
    pub const V100: GpuFacts = GpuFacts {
        name: "Tesla V100",
        sm_count: 80,
        warp_schedulers_per_sm: 4,
        dispatch_units_per_sm: 4,
        l2_bytes: 6_291_456,
        issue_divisor: 16384.0,
        cache_penalty_total_latency: true,
        latency: LatencyTable {
            addf: 15.0,
            adds: 15.0,
            mulf: 15.0,
            mul: 15.0,
            and: 15.0,
            fma: 232.0,
            mads: 30.0,
            divf: 977.0,
            divs: 815.0,
            cvt: 218.0,
            sqrt: 487.0,
            setp: 30.0,
            mov: 49.0,
            global_const: Some(391.3),
        },
    };
}

impl LatencyTable {
    /// Global load/store latency in cycles for `threads` threads.
    pub fn global(&self, threads: f64) -> f64 {
        match self.global_const {
            Some(c) => c,
            None => table_3_3(threads),
        }
    }

    /// Latency of one compute instruction from its full PTX opcode (`fma.rn.f32`).
    /// Opcodes the thesis did not measure take the nearest measured kind: other bitwise
    /// and integer ops take `and`, `min`/`max`/`abs`/`neg` take add, SFU transcendentals
    /// (`sin cos ex2 lg2 rsqrt rcp tanh`) take `sqrt`. These substitutions are our choice.
    pub fn compute(&self, opcode: &str) -> f64 {
        let mut parts = opcode.split('.');
        let op = parts.next().unwrap_or("");
        let float = opcode.contains(".f32")
            || opcode.contains(".f64")
            || opcode.contains(".f16")
            || opcode.contains(".bf16");
        match op {
            "add" | "sub" | "min" | "max" | "abs" | "neg" | "addc" | "subc" => {
                if float {
                    self.addf
                } else {
                    self.adds
                }
            }
            "mul" | "mul24" => {
                if float {
                    self.mulf
                } else {
                    self.mul
                }
            }
            "fma" => self.fma,
            "mad" | "mad24" | "madc" => {
                if float {
                    self.fma
                } else {
                    self.mads
                }
            }
            "div" | "rem" => {
                if float {
                    self.divf
                } else {
                    self.divs
                }
            }
            "sqrt" | "rsqrt" | "sin" | "cos" | "ex2" | "lg2" | "rcp" | "tanh" => self.sqrt,
            "setp" | "set" | "selp" | "slct" => self.setp,
            "cvt" | "cvta" => self.cvt,
            "mov" => self.mov,
            _ => self.and,
        }
    }

    /// Latency for a class when no opcode is known (profiles without `blocks`).
    fn class_default(&self, class: InstrClass) -> f64 {
        match class {
            InstrClass::Fp32 | InstrClass::Fp16 | InstrClass::Fp64 => self.fma,
            InstrClass::Sfu => self.sqrt,
            InstrClass::Conversion => self.cvt,
            InstrClass::Move => self.mov,
            _ => self.adds,
        }
    }
}

/// Alavani 2023 Table 3.3: K20 global load/store latency (cycles) as a piecewise linear
/// function of x = threads per block × blocks. The printed intervals are open at the
/// break points; we close them on the left. Beyond 2,203,648 the last piece is kept,
/// floored at 220 cycles (its value would otherwise fall with more threads).
pub fn table_3_3(x: f64) -> f64 {
    // The fit itself lives with the scheduling model, which reads the same table.
    perf_models::scheduling::tables::k20_global_latency(x).max(220.0)
}

/// The datasets' wave count (see the module documentation).
pub fn dataset_waves(threads: f64) -> f64 {
    (1.0 + ((threads + 19000.0).max(0.0) / 34900.0).floor()).max(1.0)
}

/// The shipped models' features, in the models' order. The first 15 are the thesis's
/// final features (Alavani 2023 Table 5.4); the rest are mixes and ratios added by warpsight
/// to generalise to unseen kernels (docs/power.md, experiments E3-E6).
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    pub values: [f64; Features::COUNT],
}

impl Features {
    pub const COUNT: usize = 24;
    pub const NAMES: [&'static str; Features::COUNT] = [
        "inst_issue_cycles",
        "avg_comp_lat",
        "avg_glob_lat",
        "avg_shar_lat",
        "branch",
        "comp_inst_kernel",
        "glob_inst_kernel",
        "glob_load_sm",
        "glob_store_sm",
        "misc_inst_kernel",
        "cache_penalty",
        "occupancy",
        "reg_thread",
        "shmem_block",
        "block_size",
        "log2_issue",
        "log2_threads",
        "frac_comp",
        "frac_glob",
        "frac_shar",
        "frac_branch",
        "frac_store",
        "mean_lat",
        "log2_cache_penalty",
    ];

    /// What a feature means, in words a CUDA programmer reads in a hover ("+18 W from
    /// global loads per SM"); `None` for a name that is not a feature. Definitions are in
    /// docs/power.md, "Feature definitions".
    pub fn label(name: &str) -> Option<&'static str> {
        Some(match name {
            "inst_issue_cycles" => "total work in issue cycles",
            "avg_comp_lat" => "compute latency",
            "avg_glob_lat" => "global-memory latency",
            "avg_shar_lat" => "shared-memory latency",
            "branch" => "branches per SM",
            "comp_inst_kernel" => "compute instructions in the code",
            "glob_inst_kernel" => "global-memory instructions in the code",
            "glob_load_sm" => "global loads per SM",
            "glob_store_sm" => "global stores per SM",
            "misc_inst_kernel" => "other instructions in the code",
            "cache_penalty" => "L2 cache pressure",
            "occupancy" => "occupancy",
            "reg_thread" => "registers per thread",
            "shmem_block" => "shared memory per block",
            "block_size" => "block size",
            "log2_issue" => "total work on a log scale",
            "log2_threads" => "threads launched",
            "frac_comp" => "compute share of instructions",
            "frac_glob" => "global-memory share of instructions",
            "frac_shar" => "shared-memory share of instructions",
            "frac_branch" => "branch share of instructions",
            "frac_store" => "store share of global accesses",
            "mean_lat" => "mean instruction latency",
            "log2_cache_penalty" => "L2 cache pressure on a log scale",
            _ => return None,
        })
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        Features::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| self.values[i])
    }

    /// Builds the features from the dataset-level quantities (the columns of the CSVs),
    /// deriving the mixes and ratios exactly as `train.py::add_ws_features` does.
    pub fn from_dataset_columns(c: &DatasetColumns) -> Features {
        let threads = c.grid_size * c.block_size;
        let tot = c.total_inst().max(1.0);
        let ls = (c.glob_load_sm + c.glob_store_sm).max(1.0);
        let mean_lat = (c.comp_inst_sm * c.avg_comp_lat
            + c.glob_inst_sm * c.avg_glob_lat
            + c.shar_inst_sm * c.avg_shar_lat
            + c.misc_inst_sm * DATASET_MISC_LATENCY)
            / tot;
        Features {
            values: [
                c.inst_issue_cycles,
                c.avg_comp_lat,
                c.avg_glob_lat,
                c.avg_shar_lat,
                c.branch,
                c.comp_inst_kernel,
                c.glob_inst_kernel,
                c.glob_load_sm,
                c.glob_store_sm,
                c.misc_inst_kernel,
                c.cache_penalty,
                c.occupancy,
                c.reg_thread,
                c.shmem_block,
                c.block_size,
                c.inst_issue_cycles.max(1.0).log2(),
                threads.max(1.0).log2(),
                c.comp_inst_sm / tot,
                c.glob_inst_sm / tot,
                c.shar_inst_sm / tot,
                c.branch / tot,
                c.glob_store_sm / ls,
                mean_lat,
                (1.0 + c.cache_penalty.max(0.0)).log2(),
            ],
        }
    }
}

/// The dataset columns (one CSV row) the features derive from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DatasetColumns {
    pub grid_size: f64,
    pub block_size: f64,
    pub reg_thread: f64,
    pub shmem_block: f64,
    pub occupancy: f64,
    pub comp_inst_kernel: f64,
    pub glob_inst_kernel: f64,
    pub misc_inst_kernel: f64,
    pub comp_inst_sm: f64,
    pub glob_inst_sm: f64,
    pub shar_inst_sm: f64,
    pub misc_inst_sm: f64,
    pub avg_comp_lat: f64,
    pub avg_glob_lat: f64,
    pub avg_shar_lat: f64,
    pub branch: f64,
    pub glob_load_sm: f64,
    pub glob_store_sm: f64,
    pub inst_issue_cycles: f64,
    pub cache_penalty: f64,
}

impl DatasetColumns {
    pub fn total_inst(&self) -> f64 {
        self.comp_inst_sm + self.glob_inst_sm + self.shar_inst_sm + self.misc_inst_sm
    }
}

/// Which of the four thesis classes an instruction class counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Comp,
    Glob,
    Shar,
    Misc,
}

fn device_memory(space: Space) -> bool {
    matches!(
        space,
        Space::Global | Space::Generic | Space::Local | Space::Texture
    )
}

fn kind(class: InstrClass) -> Kind {
    match class {
        InstrClass::IntAlu
        | InstrClass::Fp32
        | InstrClass::Fp64
        | InstrClass::Fp16
        | InstrClass::Sfu
        | InstrClass::Tensor
        | InstrClass::Conversion
        | InstrClass::Move => Kind::Comp,
        InstrClass::Load(s) | InstrClass::Store(s) | InstrClass::Atomic(s) => {
            if s == Space::Shared {
                Kind::Shar
            } else if device_memory(s) {
                Kind::Glob
            } else {
                Kind::Misc
            }
        }
        _ => Kind::Misc,
    }
}

/// Computes the dataset columns of one kernel launch from its static profile.
///
/// `occupancy` is the theoretical occupancy in [0, 1] (the thesis's users typed it from
/// the CUDA Occupancy Calculator; warpsight computes it). Non-finite inputs are treated
/// as 0 so the result is always finite.
pub fn dataset_columns(profile: &KernelProfile, gpu: &GpuFacts, occupancy: f64) -> DatasetColumns {
    let block = profile.launch.threads_per_block() as f64;
    let grid = profile.launch.blocks() as f64;
    let threads = grid * block;
    let waves = dataset_waves(threads);
    let lat = &gpu.latency;
    let finite = |v: f64| if v.is_finite() && v > 0.0 { v } else { 0.0 };

    // Per-thread dynamic counts by thesis class.
    let (mut comp, mut glob, mut shar, mut misc) = (0.0, 0.0, 0.0, 0.0);
    let (mut loads, mut stores, mut branches) = (0.0, 0.0, 0.0);
    for (&class, &n) in &profile.counts.dynamic {
        let n = finite(n);
        match kind(class) {
            Kind::Comp => comp += n,
            Kind::Glob => glob += n,
            Kind::Shar => shar += n,
            Kind::Misc => misc += n,
        }
        match class {
            InstrClass::Load(s) if device_memory(s) => loads += n,
            InstrClass::Store(s) | InstrClass::Atomic(s) if device_memory(s) => stores += n,
            InstrClass::Branch => branches += n,
            _ => {}
        }
    }
    // Static (kernel text) counts.
    let (mut comp_k, mut glob_k, mut misc_k) = (0.0, 0.0, 0.0);
    for (&class, &n) in &profile.counts.static_ {
        match kind(class) {
            Kind::Comp => comp_k += n as f64,
            Kind::Glob => glob_k += n as f64,
            Kind::Misc => misc_k += n as f64,
            Kind::Shar => {}
        }
    }

    // Average compute latency: Table 3.2 per opcode, weighted by executions, when the
    // profile carries its blocks; otherwise per class.
    let mut lat_sum = 0.0;
    let mut lat_n = 0.0;
    for b in &profile.blocks {
        let e = finite(b.executions);
        for ins in &b.instructions {
            if kind(ins.class) == Kind::Comp {
                lat_sum += e * lat.compute(&ins.opcode);
                lat_n += e;
            }
        }
    }
    if lat_n <= 0.0 {
        for (&class, &n) in &profile.counts.dynamic {
            if kind(class) == Kind::Comp {
                lat_sum += finite(n) * lat.class_default(class);
                lat_n += finite(n);
            }
        }
    }
    let avg_comp_lat = if lat_n > 0.0 { lat_sum / lat_n } else { 0.0 };
    let avg_glob_lat = if glob > 0.0 { lat.global(threads) } else { 0.0 };
    let avg_shar_lat = if shar > 0.0 {
        DATASET_SHARED_LATENCY
    } else {
        0.0
    };

    let comp_sm = comp * waves;
    let glob_sm = glob * waves;
    let shar_sm = shar * waves;
    let misc_sm = misc * waves;
    let total = comp_sm + glob_sm + shar_sm + misc_sm;
    // Dataset convention (`santonus/energymodel` CSVs): round(threads × total_inst / divisor); Eq. 5.1
    // as printed would divide by schedulers × 32 × dispatch units instead.
    let inst_issue_cycles = (threads * total / gpu.issue_divisor).round();
    // Eq. 5.2 with the datasets' constants: access size 4 B, "waves" = wtotal.
    let l_gm = if gpu.cache_penalty_total_latency {
        avg_glob_lat * glob_sm
    } else {
        avg_glob_lat
    };
    let cache_penalty = threads * glob_sm * l_gm / (waves * gpu.l2_bytes as f64 / 4.0);
    let smem =
        f64::from(profile.resources.static_smem_bytes) + f64::from(profile.launch.dynamic_smem);

    DatasetColumns {
        grid_size: grid,
        block_size: block,
        reg_thread: f64::from(profile.resources.registers_per_thread),
        shmem_block: smem,
        occupancy: if occupancy.is_finite() {
            occupancy.clamp(0.0, 1.0)
        } else {
            0.0
        },
        comp_inst_kernel: comp_k,
        glob_inst_kernel: glob_k,
        misc_inst_kernel: misc_k,
        comp_inst_sm: comp_sm,
        glob_inst_sm: glob_sm,
        shar_inst_sm: shar_sm,
        misc_inst_sm: misc_sm,
        avg_comp_lat,
        avg_glob_lat,
        avg_shar_lat,
        branch: branches * waves,
        glob_load_sm: loads * waves,
        glob_store_sm: stores * waves,
        inst_issue_cycles,
        cache_penalty: if cache_penalty.is_finite() {
            cache_penalty
        } else {
            0.0
        },
    }
}

/// The model features of one kernel launch (see [`dataset_columns`]).
pub fn from_profile(profile: &KernelProfile, gpu: &GpuFacts, occupancy: f64) -> Features {
    Features::from_dataset_columns(&dataset_columns(profile, gpu, occupancy))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_feature_has_a_label() {
        for name in Features::NAMES {
            let label = Features::label(name).unwrap_or_else(|| panic!("no label for {name}"));
            // Labels are printed as "+5.6 W from LABEL (name)", joined by ", ".
            assert!(!label.is_empty() && !label.contains(['_', '(', ',']), "{name}: {label}");
        }
        assert_eq!(Features::label("no_such_feature"), None);
    }

    use super::*;
    use kernel_profile::{
        BlockProfile, InstrNode, InstructionCounts, LaunchConfig, LaunchSource,
        Resources,
    };

    fn profile() -> KernelProfile {
        let mut counts = InstructionCounts::default();
        // vectorAdd-like: per thread 2 loads, 1 store, 10 int, 1 fp32, 1 branch, 2 param.
        counts.dynamic.insert(InstrClass::Load(Space::Global), 2.0);
        counts.dynamic.insert(InstrClass::Store(Space::Global), 1.0);
        counts.dynamic.insert(InstrClass::IntAlu, 10.0);
        counts.dynamic.insert(InstrClass::Fp32, 1.0);
        counts.dynamic.insert(InstrClass::Branch, 1.0);
        counts.dynamic.insert(InstrClass::Load(Space::Param), 2.0);
        counts.static_.insert(InstrClass::Load(Space::Global), 2);
        counts.static_.insert(InstrClass::Store(Space::Global), 1);
        counts.static_.insert(InstrClass::IntAlu, 10);
        counts.static_.insert(InstrClass::Fp32, 1);
        counts.static_.insert(InstrClass::Branch, 1);
        counts.static_.insert(InstrClass::Load(Space::Param), 2);
        KernelProfile {
            kernel: "vectorAdd".into(),
            demangled: None,
            gpu: "k20".into(),
            launch: LaunchConfig {
                grid: [128, 1, 1],
                block: [256, 1, 1],
                dynamic_smem: 0,
                args: Default::default(),
                footprint_bytes: None, array_bytes: Default::default(), source: LaunchSource::Setting,
            },
            resources: Resources::given(12, 0),
            counts,
            memory_accesses: vec![],
            loops: vec![],
            divergent_branches: vec![],
            blocks: vec![],
            assumptions: vec![],
        }
    }

    #[test]
    fn waves_match_dataset_rows() {
        // (threads, wtotal) pairs from the energymodel CSVs.
        for (t, w) in [
            (2048.0, 1.0),
            (16384.0, 2.0),
            (65536.0, 3.0),
            (1_048_576.0, 31.0),
            (16_777_216.0, 482.0),
            (67_108_864.0, 1924.0),
        ] {
            assert_eq!(dataset_waves(t), w, "threads {t}");
        }
    }

    #[test]
    fn table_3_3_pieces() {
        assert!((table_3_3(2048.0) - 277.917_44).abs() < 1e-6);
        assert!((table_3_3(16384.0) - 330.015_52).abs() < 1e-6);
        assert!((table_3_3(32768.0) - 313.301_747_2).abs() < 1e-6);
        assert_eq!(table_3_3(1e9), 220.0);
    }

    #[test]
    fn columns_follow_dataset_conventions() {
        let c = dataset_columns(&profile(), &GpuFacts::K20, 1.0);
        let threads = 128.0 * 256.0;
        let waves = 2.0; // 32768 threads -> wtotal 2
        assert_eq!(c.comp_inst_sm, 11.0 * waves);
        assert_eq!(c.glob_inst_sm, 3.0 * waves);
        assert_eq!(c.misc_inst_sm, 3.0 * waves); // branch + 2 ld.param
        assert_eq!(c.glob_load_sm, 2.0 * waves);
        assert_eq!(c.glob_store_sm, 1.0 * waves);
        assert_eq!(c.branch, 1.0 * waves);
        assert_eq!(c.comp_inst_kernel, 11.0);
        assert_eq!(c.glob_inst_kernel, 3.0);
        assert_eq!(c.misc_inst_kernel, 3.0);
        assert_eq!(c.inst_issue_cycles, (threads * 34.0 / 65536.0_f64).round());
        let l = table_3_3(threads);
        assert_eq!(c.avg_glob_lat, l);
        assert!((c.cache_penalty - threads * 6.0 * l / (2.0 * 1_310_720.0 / 4.0)).abs() < 1e-9);
        // Class defaults: 10 int at 9 cycles, 1 fp32 at the fma latency 10.
        assert!((c.avg_comp_lat - (10.0 * 9.0 + 10.0) / 11.0).abs() < 1e-12);
        assert_eq!(c.avg_shar_lat, 0.0);
    }

    #[test]
    fn opcode_latencies_use_blocks_when_present() {
        let mut p = profile();
        p.blocks = vec![BlockProfile {
            id: 0,
            executions: 2.0,
            active_lane_fraction: None,
            busiest_warp_executions: None,
            ptxas_copies: None,
            instructions: vec![
                InstrNode {
                    class: InstrClass::Fp32,
                    opcode: "div.rn.f32".into(),
                    deps: vec![],
                    fused_from: None,
                    result_unused: false,
                    reads_three_registers: false,
                    access: None,
                },
                InstrNode {
                    class: InstrClass::IntAlu,
                    opcode: "mad.lo.s32".into(),
                    deps: vec![],
                    fused_from: None,
                    result_unused: false,
                    reads_three_registers: false,
                    access: None,
                },
                InstrNode {
                    class: InstrClass::Move,
                    opcode: "mov.u32".into(),
                    deps: vec![],
                    fused_from: None,
                    result_unused: false,
                    reads_three_registers: false,
                    access: None,
                },
            ],
            successors: vec![],
        }];
        let c = dataset_columns(&p, &GpuFacts::K20, 0.5);
        assert!((c.avg_comp_lat - (894.5 + 20.0 + 2.0) / 3.0).abs() < 1e-12);
        assert_eq!(c.occupancy, 0.5);
    }

    #[test]
    fn v100_cache_penalty_uses_total_latency() {
        let c = dataset_columns(&profile(), &GpuFacts::V100, 1.0);
        let threads = 32768.0;
        let expect = threads * 6.0 * (391.3 * 6.0) / (2.0 * 6_291_456.0 / 4.0);
        assert!((c.cache_penalty - expect).abs() < 1e-9);
        assert_eq!(c.inst_issue_cycles, (threads * 34.0 / 16384.0_f64).round());
    }

    #[test]
    fn derived_features_and_names() {
        let f = from_profile(&profile(), &GpuFacts::K20, 1.0);
        assert_eq!(f.get("log2_threads"), Some(15.0));
        assert_eq!(f.get("frac_glob"), Some(6.0 / 34.0));
        assert_eq!(f.get("frac_store"), Some(1.0 / 3.0));
        assert_eq!(f.get("block_size"), Some(256.0));
        assert_eq!(f.get("nope"), None);
        assert!(f.values.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn empty_profile_is_finite() {
        let mut p = profile();
        p.counts = InstructionCounts::default();
        p.launch.grid = [0, 0, 0];
        let f = from_profile(&p, &GpuFacts::M60, f64::NAN);
        assert!(f.values.iter().all(|v| v.is_finite()), "{f:?}");
    }
}
