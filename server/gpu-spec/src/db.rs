//! The GPU database: typed loading and validation of the TOML files in `gpu-data/`.
//!
//! The files are embedded at compile time ([`Database::builtin`]) so the binary stands
//! alone. Every number in them is written as `{ v = NUMBER, src = "SOURCE" }`, so a value
//! without a source does not even deserialise; the loader further checks that each
//! source names a reference of `gpu-data/references.toml` or starts with `estimate:` or
//! `derived:`. The schema is documented in `gpu-data/README.md`.
//!
//! Loading never panics: problems come back as [`LoadError`]s next to whatever loaded.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::cc::{CcLimits, ComputeCapability};
use crate::gpu::{Gpu, SmUnits};
use crate::paper::{PaperFile, PaperGpu};
use crate::throughput::THROUGHPUT_KEYS;

/// The embedded data files, as (path relative to `gpu-data/`, contents).
pub const BUILTIN_FILES: &[(&str, &str)] = &[
    ("references.toml", include_str!("../../../gpu-data/references.toml")),
    ("compute-capabilities.toml", include_str!("../../../gpu-data/compute-capabilities.toml")),
    ("architectures.toml", include_str!("../../../gpu-data/architectures.toml")),
    ("paper-gpus.toml", include_str!("../../../gpu-data/paper-gpus.toml")),
    ("gpus/tesla.toml", include_str!("../../../gpu-data/gpus/tesla.toml")),
    ("gpus/fermi.toml", include_str!("../../../gpu-data/gpus/fermi.toml")),
    ("gpus/kepler.toml", include_str!("../../../gpu-data/gpus/kepler.toml")),
    ("gpus/maxwell.toml", include_str!("../../../gpu-data/gpus/maxwell.toml")),
    ("gpus/pascal.toml", include_str!("../../../gpu-data/gpus/pascal.toml")),
    ("gpus/volta-turing.toml", include_str!("../../../gpu-data/gpus/volta-turing.toml")),
    ("gpus/ampere.toml", include_str!("../../../gpu-data/gpus/ampere.toml")),
    ("gpus/ada.toml", include_str!("../../../gpu-data/gpus/ada.toml")),
    ("gpus/hopper.toml", include_str!("../../../gpu-data/gpus/hopper.toml")),
    ("gpus/blackwell.toml", include_str!("../../../gpu-data/gpus/blackwell.toml")),
];

/// A cited document.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// Full title, with edition or version.
    pub title: String,
    /// Where to find it, when public.
    #[serde(default)]
    pub url: Option<String>,
}

/// One problem found while loading the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file (relative to `gpu-data/`).
    pub file: String,
    /// What is wrong, naming the entry and field.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gpu-data/{}: {}", self.file, self.message)
    }
}

impl std::error::Error for LoadError {}

/// The answer of [`Database::gpu`] for an id that matches nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownGpu {
    pub query: String,
    /// The closest ids by edit distance, best first.
    pub suggestions: Vec<String>,
    /// The ids whose id, aliases or marketing name contain the query (compared as
    /// [`device_name_key`]s), at most [`MAX_CANDIDATES`]: two or more make the query
    /// ambiguous (`rtx-30` names six GPUs), one is the likely meaning.
    pub candidates: Vec<String>,
}

/// The most candidates an ambiguous name lists.
pub const MAX_CANDIDATES: usize = 12;

impl UnknownGpu {
    /// The query is part of several GPUs' names, so it names none of them.
    pub fn is_ambiguous(&self) -> bool {
        self.candidates.len() > 1
    }
}

impl fmt::Display for UnknownGpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ambiguous() {
            return write!(f, "GPU `{}` is ambiguous; it is part of: {}", self.query, self.candidates.join(", "));
        }
        write!(f, "unknown GPU `{}`", self.query)?;
        if !self.suggestions.is_empty() {
            write!(f, "; closest: {}", self.suggestions.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownGpu {}

/// A number with its source, as written in the files.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Src<T> {
    pub(crate) v: T,
    pub(crate) src: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RefsFile {
    #[serde(rename = "ref")]
    refs: BTreeMap<String, Reference>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CcFile {
    cc: Vec<RawCc>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCc {
    cc: String,
    family: String,
    warp_size: Src<u32>,
    max_threads_per_block: Src<u32>,
    max_threads_per_sm: Src<u32>,
    max_warps_per_sm: Src<u32>,
    max_blocks_per_sm: Src<u32>,
    regs_per_sm: Src<u32>,
    max_regs_per_block: Src<u32>,
    max_regs_per_thread: Src<u32>,
    reg_alloc_unit: Src<u32>,
    #[serde(default)]
    reg_alloc_per_block: bool,
    warp_alloc_granularity: Src<u32>,
    sub_partitions: Src<u32>,
    smem_per_sm_bytes: Src<u32>,
    smem_per_block_bytes: Src<u32>,
    smem_per_block_optin_bytes: Src<u32>,
    smem_alloc_unit_bytes: Src<u32>,
    reserved_smem_per_block_bytes: Src<u32>,
    smem_carveouts_kib: Src<Vec<u32>>,
    max_barriers_per_block: Src<u32>,
    barrier_slots_per_block: Src<u32>,
    partitioned_gc: Src<bool>,
    virtual_resources_per_sm: Src<u32>,
    /// Results per clock per SM by instruction class (`[cc.throughput]`), optional.
    #[serde(default)]
    throughput: BTreeMap<String, Src<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArchFile {
    arch: Vec<RawModel>,
}

/// The SM-level fields shared by an architecture entry and a GPU's overrides.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    id: Option<String>,
    family: Option<String>,
    chip: Option<String>,
    fp32_per_sm: Option<Src<u32>>,
    fp64_per_sm: Option<Src<u32>>,
    int32_per_sm: Option<Src<u32>>,
    sfu_per_sm: Option<Src<u32>>,
    ldst_per_sm: Option<Src<u32>>,
    tensor_cores_per_sm: Option<Src<u32>>,
    warp_schedulers_per_sm: Option<Src<u32>>,
    dispatch_units_per_sm: Option<Src<u32>>,
    dram_latency_cycles: Option<Src<f64>>,
    l2_latency_cycles: Option<Src<f64>>,
    /// The SM clock of the card on which `dram_latency_cycles` and `l2_latency_cycles` were
    /// measured, where they are measurements: those latencies are a time spent outside the
    /// SM, so another card of the architecture sees the same nanoseconds at its own clock.
    latency_clock_mhz: Option<Src<f64>>,
    l1_latency_cycles: Option<Src<f64>>,
    shared_latency_cycles: Option<Src<f64>>,
    departure_delay_coalesced_cycles: Option<Src<f64>>,
    departure_delay_uncoalesced_cycles: Option<Src<f64>>,
    l2_departure_delay_cycles: Option<Src<f64>>,
    dram_departure_delay_cycles: Option<Src<f64>>,
    l1_bytes_per_clk_per_sm: Option<Src<f64>>,
    shared_bytes_per_clk_per_sm: Option<Src<f64>>,
    l2_bytes_per_clk_per_sm: Option<Src<f64>>,
    dram_efficiency: Option<Src<f64>>,
    launch_overhead_us: Option<Src<f64>>,
    #[serde(default)]
    issue_cycles: BTreeMap<String, Src<f64>>,
    #[serde(default)]
    instr_latency_cycles: BTreeMap<String, Src<f64>>,
    #[serde(default)]
    model_params: BTreeMap<String, Src<f64>>,
}

impl RawModel {
    /// `self` with every field `over` sets replaced; maps merge key by key.
    fn overlay(&self, over: &RawModel) -> RawModel {
        fn pick<T: Clone>(base: &Option<T>, over: &Option<T>) -> Option<T> {
            over.clone().or_else(|| base.clone())
        }
        let mut issue = self.issue_cycles.clone();
        issue.extend(over.issue_cycles.clone());
        let mut lat = self.instr_latency_cycles.clone();
        lat.extend(over.instr_latency_cycles.clone());
        let mut params = self.model_params.clone();
        params.extend(over.model_params.clone());
        RawModel {
            id: self.id.clone(),
            family: self.family.clone(),
            chip: self.chip.clone(),
            fp32_per_sm: pick(&self.fp32_per_sm, &over.fp32_per_sm),
            fp64_per_sm: pick(&self.fp64_per_sm, &over.fp64_per_sm),
            int32_per_sm: pick(&self.int32_per_sm, &over.int32_per_sm),
            sfu_per_sm: pick(&self.sfu_per_sm, &over.sfu_per_sm),
            ldst_per_sm: pick(&self.ldst_per_sm, &over.ldst_per_sm),
            tensor_cores_per_sm: pick(&self.tensor_cores_per_sm, &over.tensor_cores_per_sm),
            warp_schedulers_per_sm: pick(&self.warp_schedulers_per_sm, &over.warp_schedulers_per_sm),
            dispatch_units_per_sm: pick(&self.dispatch_units_per_sm, &over.dispatch_units_per_sm),
            dram_latency_cycles: pick(&self.dram_latency_cycles, &over.dram_latency_cycles),
            l2_latency_cycles: pick(&self.l2_latency_cycles, &over.l2_latency_cycles),
            latency_clock_mhz: pick(&self.latency_clock_mhz, &over.latency_clock_mhz),
            l1_latency_cycles: pick(&self.l1_latency_cycles, &over.l1_latency_cycles),
            shared_latency_cycles: pick(&self.shared_latency_cycles, &over.shared_latency_cycles),
            departure_delay_coalesced_cycles: pick(&self.departure_delay_coalesced_cycles, &over.departure_delay_coalesced_cycles),
            departure_delay_uncoalesced_cycles: pick(
                &self.departure_delay_uncoalesced_cycles,
                &over.departure_delay_uncoalesced_cycles,
            ),
            l2_departure_delay_cycles: pick(&self.l2_departure_delay_cycles, &over.l2_departure_delay_cycles),
            dram_departure_delay_cycles: pick(&self.dram_departure_delay_cycles, &over.dram_departure_delay_cycles),
            l1_bytes_per_clk_per_sm: pick(&self.l1_bytes_per_clk_per_sm, &over.l1_bytes_per_clk_per_sm),
            shared_bytes_per_clk_per_sm: pick(&self.shared_bytes_per_clk_per_sm, &over.shared_bytes_per_clk_per_sm),
            l2_bytes_per_clk_per_sm: pick(&self.l2_bytes_per_clk_per_sm, &over.l2_bytes_per_clk_per_sm),
            dram_efficiency: pick(&self.dram_efficiency, &over.dram_efficiency),
            launch_overhead_us: pick(&self.launch_overhead_us, &over.launch_overhead_us),
            issue_cycles: issue,
            instr_latency_cycles: lat,
            model_params: params,
        }
    }
}

/// An architecture entry is a [`RawModel`] whose `id`, `family` and `chip` are set
/// (`serde(flatten)` cannot be combined with `deny_unknown_fields`, hence one struct).
#[derive(Debug)]
struct RawArch {
    id: String,
    family: String,
    chip: String,
    model: RawModel,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuFile {
    gpu: Vec<RawGpu>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGpu {
    id: String,
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
    /// The `[[arch]]` id; when left out, the architecture every other GPU of the same
    /// compute capability has (an error when they do not agree).
    #[serde(default)]
    sm_arch: Option<String>,
    /// Chip when it differs from the architecture entry's (e.g. a cut-down die).
    #[serde(default)]
    chip: Option<String>,
    cc: String,
    segment: String,
    year: u32,
    mem_type: String,
    sm_count: Src<u32>,
    base_clock_mhz: Src<f64>,
    boost_clock_mhz: Src<f64>,
    mem_gib: Src<f64>,
    mem_bus_width_bits: Src<u32>,
    mem_data_rate_gbps: Src<f64>,
    mem_bandwidth_gbs: Src<f64>,
    l1_shared_kib_per_sm: Src<u32>,
    l2_kib: Src<u32>,
    tdp_w: Src<f64>,
    idle_power_w: Src<f64>,
    #[serde(default)]
    overrides: RawModel,
}

/// The typed database.
#[derive(Debug, Clone, Default)]
pub struct Database {
    references: BTreeMap<String, Reference>,
    ccs: Vec<CcLimits>,
    cc_sources: BTreeMap<ComputeCapability, BTreeMap<String, String>>,
    /// `[cc.throughput]` per compute capability: key -> (results per clock per SM, source).
    cc_throughput: BTreeMap<ComputeCapability, BTreeMap<String, (f64, String)>>,
    gpus: Vec<Gpu>,
    paper_gpus: Vec<PaperGpu>,
    errors: Vec<LoadError>,
}

static BUILTIN: OnceLock<Database> = OnceLock::new();

impl Database {
    /// The database compiled into the binary from `gpu-data/`. Loaded once; any problem
    /// in the embedded data is kept in [`Database::errors`] (the crate's tests require
    /// that list to be empty).
    pub fn builtin() -> &'static Database {
        BUILTIN.get_or_init(|| Database::from_files(BUILTIN_FILES))
    }

    /// Load a database from (file name, contents) pairs laid out as in `gpu-data/`:
    /// `references.toml`, `compute-capabilities.toml`, `architectures.toml`, and any
    /// number of GPU files (any other name). Errors are collected, not fatal.
    pub fn from_files(files: &[(&str, &str)]) -> Database {
        Database::load(files, &[])
    }

    /// The built-in database plus the user's GPU files (TOML in the format of
    /// `gpu-data/gpus/*.toml`, checked by the same rules: every number with a source). A user
    /// GPU whose id is a built-in id replaces that entry (a calibrated copy written by
    /// `warpsight calibrate`, for example); any other collision of ids or aliases is an
    /// error. Returns the problems found in the user files, each naming its file.
    pub fn with_user_files(user_files: &[(&str, &str)]) -> Result<Database, Vec<LoadError>> {
        let mut files: Vec<(&str, &str)> = BUILTIN_FILES.to_vec();
        for (name, _) in user_files {
            if BUILTIN_FILES.iter().any(|(b, _)| b == name) {
                return Err(vec![LoadError {
                    file: name.to_string(),
                    message: "a user GPU file may not have the name of a built-in data file".into(),
                }]);
            }
        }
        files.extend_from_slice(user_files);
        let user_names: Vec<&str> = user_files.iter().map(|(n, _)| *n).collect();
        let db = Database::load(&files, &user_names);
        let errors: Vec<LoadError> =
            db.errors.iter().filter(|e| user_names.contains(&e.file.as_str())).cloned().collect();
        if errors.is_empty() { Ok(db) } else { Err(errors) }
    }

    /// The GPUs the user's GPU files define or change: every GPU of
    /// [`Database::with_user_files`] that is not exactly a built-in entry. What the CLI's
    /// `--gpu-file` and the editor's `gpuFiles` setting hand to the analysis.
    pub fn user_gpus(user_files: &[(&str, &str)]) -> Result<Vec<Gpu>, Vec<LoadError>> {
        let db = Database::with_user_files(user_files)?;
        let builtin = Database::builtin();
        Ok(db.gpus.into_iter().filter(|g| builtin.gpus.iter().all(|b| b != g)).collect())
    }

    /// [`Database::from_files`], where the GPU entries of the files named in `user` replace
    /// entries of the other files that have the same id.
    fn load(files: &[(&str, &str)], user: &[&str]) -> Database {
        let mut db = Database::default();
        let mut errors = Vec::new();
        let find = |name: &str| files.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);

        match find("references.toml").map(toml::from_str::<RefsFile>) {
            Some(Ok(r)) => db.references = r.refs,
            Some(Err(e)) => push(&mut errors, "references.toml", e.to_string()),
            None => push(&mut errors, "references.toml", "missing".into()),
        }
        let refs = db.references.clone();
        let check_src = |file: &str, entry: &str, field: &str, src: &str, errors: &mut Vec<LoadError>| {
            if let Some(msg) = source_problem(src, &refs) {
                errors.push(LoadError { file: file.to_string(), message: format!("{entry}.{field}: {msg}") });
            }
        };

        let mut ccs = Vec::new();
        match find("compute-capabilities.toml").map(toml::from_str::<CcFile>) {
            Some(Ok(f)) => ccs = f.cc,
            Some(Err(e)) => push(&mut errors, "compute-capabilities.toml", e.to_string()),
            None => push(&mut errors, "compute-capabilities.toml", "missing".into()),
        }
        let mut archs = Vec::new();
        match find("architectures.toml").map(toml::from_str::<ArchFile>) {
            Some(Ok(f)) => archs = f.arch,
            Some(Err(e)) => push(&mut errors, "architectures.toml", e.to_string()),
            None => push(&mut errors, "architectures.toml", "missing".into()),
        }
        let mut raw_papers = Vec::new();
        match find(PAPER_FILE).map(toml::from_str::<PaperFile>) {
            Some(Ok(f)) => raw_papers = f.paper_gpu,
            Some(Err(e)) => push(&mut errors, PAPER_FILE, e.to_string()),
            // Optional: a database without the papers' GPUs is still a database.
            None => {}
        }
        let mut raw_gpus = Vec::new();
        for (name, text) in files {
            if matches!(*name, "references.toml" | "compute-capabilities.toml" | "architectures.toml" | PAPER_FILE) {
                continue;
            }
            match toml::from_str::<GpuFile>(text) {
                Ok(f) => raw_gpus.extend(f.gpu.into_iter().map(|g| (name.to_string(), g))),
                Err(e) => push(&mut errors, name, e.to_string()),
            }
        }

        for raw in ccs {
            let file = "compute-capabilities.toml";
            let entry = format!("cc {}", raw.cc);
            let (limits, sources) = match convert_cc(&raw) {
                Ok(x) => x,
                Err(msg) => {
                    push(&mut errors, file, format!("{entry}: {msg}"));
                    continue;
                }
            };
            for (field, src) in &sources {
                check_src(file, &entry, field, src, &mut errors);
            }
            if db.ccs.iter().any(|c| c.cc == limits.cc) {
                errors.push(LoadError { file: file.into(), message: format!("{entry}: duplicate") });
                continue;
            }
            let mut throughput = BTreeMap::new();
            for (key, s) in &raw.throughput {
                let field = format!("throughput.{key}");
                if !THROUGHPUT_KEYS.iter().any(|(k, _)| k == key) {
                    errors.push(LoadError { file: file.into(), message: format!("{entry}.{field}: unknown key (known: see gpu_spec::throughput::THROUGHPUT_KEYS)") });
                    continue;
                }
                if !(s.v > 0.0 && s.v <= 1024.0) {
                    errors.push(LoadError { file: file.into(), message: format!("{entry}.{field}: {} results per clock per SM is outside (0, 1024]", s.v) });
                    continue;
                }
                check_src(file, &entry, &field, &s.src, &mut errors);
                throughput.insert(key.clone(), (s.v, s.src.clone()));
            }
            db.cc_throughput.insert(limits.cc, throughput);
            db.cc_sources.insert(limits.cc, sources);
            db.ccs.push(limits);
        }
        db.ccs.sort_by_key(|c| c.cc);

        let mut arch_map = BTreeMap::new();
        for model in archs {
            let (Some(id), Some(family), Some(chip)) = (model.id.clone(), model.family.clone(), model.chip.clone()) else {
                errors.push(LoadError {
                    file: "architectures.toml".into(),
                    message: format!("arch {:?}: id, family and chip are required", model.id),
                });
                continue;
            };
            let a = RawArch { id, family, chip, model };
            for (field, src) in model_sources(&a.model) {
                check_src("architectures.toml", &format!("arch {}", a.id), &field, &src, &mut errors);
            }
            if arch_map.insert(a.id.clone(), a).is_some() {
                errors.push(LoadError { file: "architectures.toml".into(), message: "duplicate arch id".into() });
            }
        }

        let replaced: BTreeSet<String> = raw_gpus
            .iter()
            .filter(|(file, _)| user.contains(&file.as_str()))
            .map(|(_, raw)| raw.id.clone())
            .collect();
        raw_gpus.retain(|(file, raw)| user.contains(&file.as_str()) || !replaced.contains(&raw.id));
        // The architectures of each compute capability, for entries without `sm_arch`.
        let mut archs_of_cc: BTreeMap<ComputeCapability, BTreeSet<String>> = BTreeMap::new();
        for (_, raw) in &raw_gpus {
            if let (Some(arch), Ok(cc)) = (&raw.sm_arch, raw.cc.parse::<ComputeCapability>()) {
                archs_of_cc.entry(cc).or_default().insert(arch.clone());
            }
        }
        let mut taken: BTreeSet<String> = BTreeSet::new();
        for (file, raw) in raw_gpus {
            let entry = format!("gpu {}", raw.id);
            let Ok(cc) = raw.cc.parse::<ComputeCapability>() else {
                errors.push(LoadError { file, message: format!("{entry}: bad cc `{}`", raw.cc) });
                continue;
            };
            let sm_arch = match (&raw.sm_arch, archs_of_cc.get(&cc).map(|a| a.iter().collect::<Vec<_>>())) {
                (Some(a), _) => a.clone(),
                (None, Some(a)) if a.len() == 1 => a[0].clone(),
                (None, Some(a)) => {
                    let names: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
                    errors.push(LoadError { file, message: format!("{entry}: sm_arch is needed: the GPUs of CC {cc} have several ({})", names.join(", ")) });
                    continue;
                }
                (None, None) => {
                    errors.push(LoadError { file, message: format!("{entry}: sm_arch is needed: no other GPU has CC {cc}") });
                    continue;
                }
            };
            let Some(arch) = arch_map.get(&sm_arch) else {
                errors.push(LoadError { file, message: format!("{entry}: unknown sm_arch `{sm_arch}`") });
                continue;
            };
            let Some(limits) = db.ccs.iter().find(|c| c.cc == cc).cloned() else {
                errors.push(LoadError { file, message: format!("{entry}: no compute-capability entry for {cc}") });
                continue;
            };
            if raw.overrides.id.is_some() || raw.overrides.family.is_some() || raw.overrides.chip.is_some() {
                errors.push(LoadError { file: file.clone(), message: format!("{entry}: overrides may not set id, family or chip") });
            }
            for (field, src) in model_sources(&raw.overrides) {
                check_src(&file, &entry, &format!("overrides.{field}"), &src, &mut errors);
            }
            let throughput = db.cc_throughput.get(&cc).cloned().unwrap_or_default();
            match convert_gpu(&raw, arch, limits, &throughput) {
                Ok(gpu) => {
                    for (field, src) in &gpu.sources {
                        if field.starts_with("limits") {
                            continue;
                        }
                        check_src(&file, &entry, field, src, &mut errors);
                    }
                    for name in std::iter::once(&gpu.id).chain(&gpu.aliases) {
                        if !is_slug(name) {
                            errors.push(LoadError { file: file.clone(), message: format!("{entry}: `{name}` is not a lowercase slug") });
                        }
                        if !taken.insert(name.clone()) {
                            errors.push(LoadError { file: file.clone(), message: format!("{entry}: id or alias `{name}` used twice") });
                        }
                    }
                    db.gpus.push(gpu);
                }
                Err(msg) => errors.push(LoadError { file, message: format!("{entry}: {msg}") }),
            }
        }
        for raw in raw_papers {
            let entry = format!("paper_gpu {}", raw.id);
            match PaperGpu::from_raw(&raw) {
                Ok(paper) => {
                    for (field, src) in &paper.sources {
                        check_src(PAPER_FILE, &entry, field, src, &mut errors);
                    }
                    if db.paper_gpus.iter().any(|p| p.id == paper.id) {
                        errors.push(LoadError { file: PAPER_FILE.into(), message: format!("{entry}: duplicate id") });
                        continue;
                    }
                    db.paper_gpus.push(paper);
                }
                Err(msg) => errors.push(LoadError { file: PAPER_FILE.into(), message: format!("{entry}: {msg}") }),
            }
        }
        db.errors = errors;
        db
    }

    /// Problems found while loading (empty for the built-in data).
    pub fn errors(&self) -> &[LoadError] {
        &self.errors
    }

    /// Every GPU, in file order (oldest architectures first).
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Every compute capability, ascending.
    pub fn compute_capabilities(&self) -> &[CcLimits] {
        &self.ccs
    }

    /// The limits of a compute capability.
    pub fn cc(&self, cc: ComputeCapability) -> Option<&CcLimits> {
        self.ccs.iter().find(|c| c.cc == cc)
    }

    /// The source of each field of a compute capability's entry.
    pub fn cc_sources(&self, cc: ComputeCapability) -> Option<&BTreeMap<String, String>> {
        self.cc_sources.get(&cc)
    }

    /// Results per clock per SM by instruction class for a compute capability (the CUDA
    /// guide's arithmetic-instruction throughput table, `[cc.throughput]`); empty when the
    /// data has no table for it.
    pub fn cc_throughput(&self, cc: ComputeCapability) -> BTreeMap<String, f64> {
        self.cc_throughput.get(&cc).map(|t| t.iter().map(|(k, (v, _))| (k.clone(), *v)).collect()).unwrap_or_default()
    }

    /// The GPUs of the seed papers exactly as each paper describes them
    /// (`gpu-data/paper-gpus.toml`), for the papers' reproductions.
    pub fn paper_gpus(&self) -> &[PaperGpu] {
        &self.paper_gpus
    }

    /// The cited documents, keyed by the short ids used in `src` strings.
    pub fn references(&self) -> &BTreeMap<String, Reference> {
        &self.references
    }

    /// Look a GPU up by id or alias. Matching ignores case, and treats spaces and
    /// underscores as `-`; a leading `nvidia-` is ignored; the marketing name and the
    /// driver's device name ([`Database::find_by_device_name`]) match too. An unknown name
    /// gets the closest ids by edit distance, and a name that is part of several GPUs'
    /// names lists them ([`UnknownGpu::candidates`]): only an exact match resolves.
    pub fn gpu(&self, id_or_alias: &str) -> Result<&Gpu, UnknownGpu> {
        let q = normalize(id_or_alias);
        let q = q.strip_prefix("nvidia-").unwrap_or(&q).to_string();
        if let Some(g) = self.gpus.iter().find(|g| g.id == q || g.aliases.contains(&q)) {
            return Ok(g);
        }
        if let Some(g) = self.gpus.iter().find(|g| normalize(&g.name).trim_start_matches("nvidia-") == q) {
            return Ok(g);
        }
        // The driver's spelling, exactly ("rtx 3060 laptop", "Tesla V100-PCIE-16GB").
        if let Some(g) = self.find_by_device_name(id_or_alias) {
            return Ok(g);
        }
        let candidates = self.candidates(id_or_alias);
        let mut suggestions = self.closest(&q, 5);
        // A single GPU containing the query is the best guess, whatever the edit distance.
        if let [only] = candidates.as_slice() {
            suggestions.retain(|s| s != only);
            suggestions.insert(0, only.clone());
            suggestions.truncate(5);
        }
        Err(UnknownGpu { query: id_or_alias.to_string(), suggestions, candidates })
    }

    /// The ids of the GPUs whose id, an alias or the marketing name contains `query`,
    /// compared as [`device_name_key`]s (`rtx-30` → every RTX 30 GPU), in database order,
    /// at most [`MAX_CANDIDATES`]. A query of fewer than two key characters matches none.
    pub fn candidates(&self, query: &str) -> Vec<String> {
        let key = device_name_key(query);
        if key.len() < 2 {
            return Vec::new();
        }
        self.gpus
            .iter()
            .filter(|g| std::iter::once(&g.id).chain(&g.aliases).chain(std::iter::once(&g.name)).any(|n| device_name_key(n).contains(&key)))
            .map(|g| g.id.clone())
            .take(MAX_CANDIDATES)
            .collect()
    }

    /// Look a GPU up by the device name the CUDA driver reports (`cudaDeviceProp::name`,
    /// `nvidia-smi --query-gpu=name`, Nsight Compute's `device__attribute_display_name`,
    /// Kernel Tuner's `device_name`), e.g. "NVIDIA GeForce RTX 3090" or
    /// "Tesla V100-PCIE-16GB". Both sides are compared after [`device_name_key`]: case,
    /// spaces and punctuation are ignored, as are the vendor and brand words "NVIDIA",
    /// "GeForce" and "Tesla" and a trailing "GPU". A name is compared with every GPU's
    /// id, aliases and marketing name; only an exact match counts (no edit-distance
    /// guess: a wrong GPU is worse than none).
    pub fn find_by_device_name(&self, device_name: &str) -> Option<&Gpu> {
        let key = device_name_key(device_name);
        if key.is_empty() {
            return None;
        }
        self.gpus.iter().find(|g| {
            std::iter::once(&g.id).chain(&g.aliases).chain(std::iter::once(&g.name)).any(|n| device_name_key(n) == key)
        })
    }

    /// The database entry of a GPU the driver reports (NVML's device name and compute
    /// capability, `warpsight gpus --detect`): the entry of that device name
    /// ([`Database::find_by_device_name`]) when its compute capability agrees; otherwise
    /// what is wrong, with the closest ids to name instead.
    pub fn match_device(&self, device_name: &str, cc: ComputeCapability) -> DeviceMatch<'_> {
        match self.find_by_device_name(device_name) {
            Some(g) if g.cc == cc => DeviceMatch::Found(g),
            Some(g) => DeviceMatch::CcDiffers(g),
            None => {
                let candidates = self.candidates(device_name);
                let mut ids: Vec<String> = candidates.into_iter().filter(|id| self.gpu(id).is_ok_and(|g| g.cc == cc)).collect();
                if ids.is_empty() {
                    ids = self.closest(&device_name_key(device_name), 3);
                }
                DeviceMatch::NotFound { closest: ids }
            }
        }
    }

    /// The `n` ids (or aliases) closest to `query` by edit distance.
    pub fn closest(&self, query: &str, n: usize) -> Vec<String> {
        let q = normalize(query);
        let mut scored: Vec<(usize, String)> = Vec::new();
        for g in &self.gpus {
            let best = std::iter::once(&g.id)
                .chain(&g.aliases)
                .map(|name| {
                    let d = strsim::levenshtein(&q, name);
                    // A name containing the query (or the reverse) is a strong hint.
                    if name.contains(&q) || q.contains(name.as_str()) { d.min(1) } else { d }
                })
                .min()
                .unwrap_or(usize::MAX);
            scored.push((best, g.id.clone()));
        }
        scored.sort();
        scored.into_iter().take(n).map(|(_, id)| id).collect()
    }
}

/// What [`Database::match_device`] found for a device the driver reports.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceMatch<'a> {
    /// The entry of that device name, with the same compute capability.
    Found(&'a Gpu),
    /// An entry of that name whose compute capability is not the device's: the data or
    /// the name is wrong, so the entry is not used.
    CcDiffers(&'a Gpu),
    /// No entry has that name: the ids of the same compute capability whose names
    /// contain the device's, or else the closest ids by edit distance.
    NotFound { closest: Vec<String> },
}

/// The file of the seed papers' own GPU descriptions.
const PAPER_FILE: &str = "paper-gpus.toml";

fn push(errors: &mut Vec<LoadError>, file: &str, message: String) {
    errors.push(LoadError { file: file.to_string(), message });
}

fn normalize(s: &str) -> String {
    s.trim().to_lowercase().replace([' ', '_'], "-")
}

/// The comparison key of a device name for [`Database::find_by_device_name`]: lowercase
/// ASCII letters and digits only, without the words `nvidia`, `geforce` and `tesla` and
/// without a trailing `gpu` word ("NVIDIA GeForce RTX 3060 Laptop GPU" → `rtx3060laptop`,
/// "Tesla V100-PCIE-16GB" → `v100pcie16gb`, `a100-sxm4-80gb` → `a100sxm480gb`).
pub fn device_name_key(name: &str) -> String {
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut kept: Vec<&str> = words.into_iter().filter(|w| !matches!(*w, "nvidia" | "geforce" | "tesla")).collect();
    if kept.len() > 1 && kept.last() == Some(&"gpu") {
        kept.pop();
    }
    kept.concat()
}

fn is_slug(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// Why a source string is unacceptable, if it is.
fn source_problem(src: &str, refs: &BTreeMap<String, Reference>) -> Option<String> {
    let s = src.trim();
    for prefix in ["estimate:", "derived:"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return (rest.trim().len() < 8).then(|| format!("`{s}` must say how the number was obtained"));
        }
    }
    let first = s.split_whitespace().next().unwrap_or("").trim_end_matches([',', ':', ';']);
    if refs.contains_key(first) {
        None
    } else {
        Some(format!("source `{s}` must start with a reference id of references.toml, `estimate:` or `derived:`"))
    }
}

fn convert_cc(raw: &RawCc) -> Result<(CcLimits, BTreeMap<String, String>), String> {
    let cc: ComputeCapability = raw.cc.parse().map_err(|e: crate::cc::BadComputeCapability| e.to_string())?;
    let mut sources = BTreeMap::new();
    let mut take = |name: &str, s: &Src<u32>| {
        sources.insert(name.to_string(), s.src.clone());
        s.v
    };
    let limits = CcLimits {
        cc,
        family: raw.family.clone(),
        warp_size: take("warp_size", &raw.warp_size),
        max_threads_per_block: take("max_threads_per_block", &raw.max_threads_per_block),
        max_threads_per_sm: take("max_threads_per_sm", &raw.max_threads_per_sm),
        max_warps_per_sm: take("max_warps_per_sm", &raw.max_warps_per_sm),
        max_blocks_per_sm: take("max_blocks_per_sm", &raw.max_blocks_per_sm),
        regs_per_sm: take("regs_per_sm", &raw.regs_per_sm),
        max_regs_per_block: take("max_regs_per_block", &raw.max_regs_per_block),
        max_regs_per_thread: take("max_regs_per_thread", &raw.max_regs_per_thread),
        reg_alloc_unit: take("reg_alloc_unit", &raw.reg_alloc_unit),
        reg_alloc_per_block: raw.reg_alloc_per_block,
        warp_alloc_granularity: take("warp_alloc_granularity", &raw.warp_alloc_granularity),
        sub_partitions: take("sub_partitions", &raw.sub_partitions),
        smem_per_sm_bytes: take("smem_per_sm_bytes", &raw.smem_per_sm_bytes),
        smem_per_block_bytes: take("smem_per_block_bytes", &raw.smem_per_block_bytes),
        smem_per_block_optin_bytes: take("smem_per_block_optin_bytes", &raw.smem_per_block_optin_bytes),
        smem_alloc_unit_bytes: take("smem_alloc_unit_bytes", &raw.smem_alloc_unit_bytes),
        reserved_smem_per_block_bytes: take("reserved_smem_per_block_bytes", &raw.reserved_smem_per_block_bytes),
        smem_carveouts_kib: raw.smem_carveouts_kib.v.clone(),
        max_barriers_per_block: take("max_barriers_per_block", &raw.max_barriers_per_block),
        barrier_slots_per_block: take("barrier_slots_per_block", &raw.barrier_slots_per_block),
        partitioned_gc: raw.partitioned_gc.v,
        virtual_resources_per_sm: take("virtual_resources_per_sm", &raw.virtual_resources_per_sm),
    };
    sources.insert("smem_carveouts_kib".into(), raw.smem_carveouts_kib.src.clone());
    sources.insert("partitioned_gc".into(), raw.partitioned_gc.src.clone());
    if limits.max_warps_per_sm * limits.warp_size != limits.max_threads_per_sm {
        return Err("max_warps_per_sm x warp_size != max_threads_per_sm".into());
    }
    Ok((limits, sources))
}

/// (field name, source) of every value an architecture or override entry sets.
fn model_sources(m: &RawModel) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut u = |name: &str, s: &Option<Src<u32>>| {
        if let Some(s) = s {
            out.push((format!("units.{name}"), s.src.clone()));
        }
    };
    u("fp32_per_sm", &m.fp32_per_sm);
    u("fp64_per_sm", &m.fp64_per_sm);
    u("int32_per_sm", &m.int32_per_sm);
    u("sfu_per_sm", &m.sfu_per_sm);
    u("ldst_per_sm", &m.ldst_per_sm);
    u("tensor_cores_per_sm", &m.tensor_cores_per_sm);
    u("warp_schedulers_per_sm", &m.warp_schedulers_per_sm);
    u("dispatch_units_per_sm", &m.dispatch_units_per_sm);
    for (name, s) in [
        ("dram_latency_cycles", &m.dram_latency_cycles),
        ("l2_latency_cycles", &m.l2_latency_cycles),
        ("latency_clock_mhz", &m.latency_clock_mhz),
        ("l1_latency_cycles", &m.l1_latency_cycles),
        ("shared_latency_cycles", &m.shared_latency_cycles),
        ("departure_delay_coalesced_cycles", &m.departure_delay_coalesced_cycles),
        ("departure_delay_uncoalesced_cycles", &m.departure_delay_uncoalesced_cycles),
        ("l2_departure_delay_cycles", &m.l2_departure_delay_cycles),
        ("dram_departure_delay_cycles", &m.dram_departure_delay_cycles),
        ("l1_bytes_per_clk_per_sm", &m.l1_bytes_per_clk_per_sm),
        ("shared_bytes_per_clk_per_sm", &m.shared_bytes_per_clk_per_sm),
        ("l2_bytes_per_clk_per_sm", &m.l2_bytes_per_clk_per_sm),
        ("dram_efficiency", &m.dram_efficiency),
        ("launch_overhead_us", &m.launch_overhead_us),
    ] {
        if let Some(s) = s {
            out.push((name.to_string(), s.src.clone()));
        }
    }
    for (k, s) in &m.issue_cycles {
        out.push((format!("issue_cycles.{k}"), s.src.clone()));
    }
    for (k, s) in &m.instr_latency_cycles {
        out.push((format!("instr_latency_cycles.{k}"), s.src.clone()));
    }
    for (k, s) in &m.model_params {
        out.push((format!("model_params.{k}"), s.src.clone()));
    }
    out
}

/// The issue-cycle classes derived from unit counts when the data does not list them:
/// (class, unit field) — cycles per warp instruction per SM = warp size / units per SM.
const DERIVED_ISSUE: &[(&str, &str)] = &[
    ("fp32", "fp32_per_sm"),
    ("fp64", "fp64_per_sm"),
    ("int_alu", "int32_per_sm"),
    ("sfu", "sfu_per_sm"),
    ("load_global", "ldst_per_sm"),
    ("store_global", "ldst_per_sm"),
    ("load_shared", "ldst_per_sm"),
    ("store_shared", "ldst_per_sm"),
];

/// Plausible ranges of the memory-hierarchy and launch parameters: a value outside is a
/// typo or a wrong unit, and the entry is rejected with the field named.
const RANGES: &[(&str, f64, f64)] = &[
    ("l1_bytes_per_clk_per_sm", 16.0, 512.0),
    ("shared_bytes_per_clk_per_sm", 16.0, 512.0),
    ("l2_bytes_per_clk_per_sm", 1.0, 256.0),
    ("dram_efficiency", 0.3, 1.0),
    ("launch_overhead_us", 0.5, 50.0),
];

fn convert_gpu(
    raw: &RawGpu,
    arch: &RawArch,
    limits: CcLimits,
    throughput: &BTreeMap<String, (f64, String)>,
) -> Result<Gpu, String> {
    let m = arch.model.overlay(&raw.overrides);
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut missing = Vec::new();
    macro_rules! req {
        ($field:ident, $key:expr) => {
            match &m.$field {
                Some(s) => {
                    sources.insert($key.to_string(), s.src.clone());
                    s.v
                }
                None => {
                    missing.push($key.to_string());
                    Default::default()
                }
            }
        };
    }
    let units = SmUnits {
        fp32_per_sm: req!(fp32_per_sm, "units.fp32_per_sm"),
        fp64_per_sm: req!(fp64_per_sm, "units.fp64_per_sm"),
        int32_per_sm: req!(int32_per_sm, "units.int32_per_sm"),
        sfu_per_sm: req!(sfu_per_sm, "units.sfu_per_sm"),
        ldst_per_sm: req!(ldst_per_sm, "units.ldst_per_sm"),
        tensor_cores_per_sm: req!(tensor_cores_per_sm, "units.tensor_cores_per_sm"),
        warp_schedulers_per_sm: req!(warp_schedulers_per_sm, "units.warp_schedulers_per_sm"),
        dispatch_units_per_sm: req!(dispatch_units_per_sm, "units.dispatch_units_per_sm"),
    };
    let dram_latency_cycles = req!(dram_latency_cycles, "dram_latency_cycles");
    let l2_latency_cycles = req!(l2_latency_cycles, "l2_latency_cycles");
    // Off-SM latencies measured in cycles on one card, at another SM clock here: the same
    // time in this card's cycles (a GPU's own value in its overrides is kept as given).
    let mut at_own_clock = |key: &str, cycles: f64, own: bool| -> f64 {
        let Some(c) = m.latency_clock_mhz.as_ref().filter(|c| c.v > 0.0 && !own) else { return cycles };
        let boost = raw.boost_clock_mhz.v;
        if boost <= 0.0 || (boost - c.v).abs() < 0.5 {
            return cycles;
        }
        let scaled = cycles * boost / c.v;
        let src = sources.get(key).cloned().unwrap_or_default();
        sources.insert(
            key.to_string(),
            format!("derived: {cycles:.0} cycles at {:.0} MHz ({src}; that card's clock: {}) are {scaled:.0} cycles at this card's {boost:.0} MHz", c.v, c.src),
        );
        scaled
    };
    let dram_latency_cycles = at_own_clock("dram_latency_cycles", dram_latency_cycles, raw.overrides.dram_latency_cycles.is_some());
    let l2_latency_cycles = at_own_clock("l2_latency_cycles", l2_latency_cycles, raw.overrides.l2_latency_cycles.is_some());
    let l1_latency_cycles = req!(l1_latency_cycles, "l1_latency_cycles");
    let shared_latency_cycles = req!(shared_latency_cycles, "shared_latency_cycles");
    let departure_delay_coalesced_cycles = req!(departure_delay_coalesced_cycles, "departure_delay_coalesced_cycles");
    let departure_delay_uncoalesced_cycles = req!(departure_delay_uncoalesced_cycles, "departure_delay_uncoalesced_cycles");
    let l2_departure_delay_cycles = req!(l2_departure_delay_cycles, "l2_departure_delay_cycles");
    let dram_departure_delay_cycles = req!(dram_departure_delay_cycles, "dram_departure_delay_cycles");
    let l1_bytes_per_clk_per_sm = req!(l1_bytes_per_clk_per_sm, "l1_bytes_per_clk_per_sm");
    let shared_bytes_per_clk_per_sm = req!(shared_bytes_per_clk_per_sm, "shared_bytes_per_clk_per_sm");
    let l2_bytes_per_clk_per_sm = req!(l2_bytes_per_clk_per_sm, "l2_bytes_per_clk_per_sm");
    let dram_efficiency = req!(dram_efficiency, "dram_efficiency");
    let launch_overhead_us = req!(launch_overhead_us, "launch_overhead_us");
    if !missing.is_empty() {
        return Err(format!("sm_arch `{}` (with overrides) lacks {}", arch.id, missing.join(", ")));
    }
    for (field, v) in [
        ("l1_bytes_per_clk_per_sm", l1_bytes_per_clk_per_sm),
        ("shared_bytes_per_clk_per_sm", shared_bytes_per_clk_per_sm),
        ("l2_bytes_per_clk_per_sm", l2_bytes_per_clk_per_sm),
        ("dram_efficiency", dram_efficiency),
        ("launch_overhead_us", launch_overhead_us),
    ] {
        if let Some((_, lo, hi)) = RANGES.iter().find(|(f, _, _)| *f == field)
            && !(*lo..=*hi).contains(&v)
        {
            return Err(format!("{field} = {v} is outside the plausible range [{lo}, {hi}]"));
        }
    }
    let mut issue_cycles = BTreeMap::new();
    for (k, s) in &m.issue_cycles {
        issue_cycles.insert(k.clone(), s.v);
        sources.insert(format!("issue_cycles.{k}"), s.src.clone());
    }
    for (class, unit) in DERIVED_ISSUE {
        if issue_cycles.contains_key(*class) {
            continue;
        }
        let n = match *unit {
            "fp32_per_sm" => units.fp32_per_sm,
            "fp64_per_sm" => units.fp64_per_sm,
            "int32_per_sm" => units.int32_per_sm,
            "sfu_per_sm" => units.sfu_per_sm,
            _ => units.ldst_per_sm,
        };
        if n == 0 {
            continue;
        }
        issue_cycles.insert(class.to_string(), limits.warp_size as f64 / n as f64);
        sources.insert(
            format!("issue_cycles.{class}"),
            format!("derived: warp size {} / {n} {unit} (cycles per warp instruction per SM at full throughput)", limits.warp_size),
        );
    }
    let mut instr_latency_cycles = BTreeMap::new();
    for (k, s) in &m.instr_latency_cycles {
        instr_latency_cycles.insert(k.clone(), s.v);
        sources.insert(format!("instr_latency_cycles.{k}"), s.src.clone());
    }
    let mut gpu_throughput = BTreeMap::new();
    for (k, (v, src)) in throughput {
        gpu_throughput.insert(k.clone(), *v);
        sources.insert(format!("throughput.{k}"), src.clone());
    }
    let mut model_params = BTreeMap::new();
    for (k, s) in &m.model_params {
        model_params.insert(k.clone(), s.v);
        sources.insert(format!("model_params.{k}"), s.src.clone());
    }
    let mut put = |k: &str, s: &str| {
        sources.insert(k.to_string(), s.to_string());
    };
    put("sm_count", &raw.sm_count.src);
    put("base_clock_mhz", &raw.base_clock_mhz.src);
    put("boost_clock_mhz", &raw.boost_clock_mhz.src);
    put("mem_bytes", &raw.mem_gib.src);
    put("mem_bus_width_bits", &raw.mem_bus_width_bits.src);
    put("mem_data_rate_gbps", &raw.mem_data_rate_gbps.src);
    put("mem_bandwidth_gbs", &raw.mem_bandwidth_gbs.src);
    put("l1_shared_bytes_per_sm", &raw.l1_shared_kib_per_sm.src);
    put("l2_bytes", &raw.l2_kib.src);
    put("tdp_w", &raw.tdp_w.src);
    put("idle_power_w", &raw.idle_power_w.src);
    put("limits", &format!("compute-capabilities.toml, cc {}", limits.cc));
    let mut aliases = raw.aliases.clone();
    aliases.sort();
    aliases.dedup();
    Ok(Gpu {
        id: raw.id.clone(),
        name: raw.name.clone(),
        aliases,
        architecture: arch.family.clone(),
        chip: raw.chip.clone().unwrap_or_else(|| arch.chip.clone()),
        sm_arch: arch.id.clone(),
        segment: raw.segment.clone(),
        year: raw.year,
        cc: limits.cc,
        limits,
        sm_count: raw.sm_count.v,
        base_clock_mhz: raw.base_clock_mhz.v,
        boost_clock_mhz: raw.boost_clock_mhz.v,
        rated_boost_clock_mhz: None,
        mem_type: raw.mem_type.clone(),
        mem_bytes: (raw.mem_gib.v * 1024.0 * 1024.0 * 1024.0).round() as u64,
        mem_bus_width_bits: raw.mem_bus_width_bits.v,
        mem_data_rate_gbps: raw.mem_data_rate_gbps.v,
        mem_bandwidth_gbs: raw.mem_bandwidth_gbs.v,
        l1_shared_bytes_per_sm: raw.l1_shared_kib_per_sm.v * 1024,
        l2_bytes: raw.l2_kib.v as u64 * 1024,
        tdp_w: raw.tdp_w.v,
        idle_power_w: raw.idle_power_w.v,
        units,
        dram_latency_cycles,
        l2_latency_cycles,
        l1_latency_cycles,
        shared_latency_cycles,
        departure_delay_coalesced_cycles,
        departure_delay_uncoalesced_cycles,
        l2_departure_delay_cycles,
        dram_departure_delay_cycles,
        l1_bytes_per_clk_per_sm,
        shared_bytes_per_clk_per_sm,
        l2_bytes_per_clk_per_sm,
        dram_efficiency,
        launch_overhead_us,
        throughput: gpu_throughput,
        issue_cycles,
        instr_latency_cycles,
        model_params,
        sources,
    })
}
