//! Importer for Kernel Tuner cache files (https://github.com/KernelTuner/kernel_tuner):
//! the JSON (optionally gzip-compressed) that Kernel Tuner writes while it benchmarks a
//! search space. Format (docs/validation.md § Kernel Tuner caches): top-level
//! `device_name`, `kernel_name`, `problem_size`, `tune_params_keys` and `cache`, a map
//! from the configuration key (parameter values joined by commas in `tune_params_keys`
//! order) to an entry with the parameters and `time`, the mean kernel time in ms, or a
//! string naming why the configuration failed ("CompilationFailedConfig", ...).
//!
//! Every configuration becomes a row the way Kernel Tuner launches it (its `tune_kernel`
//! documentation): the tunable parameters (plus `block_size_x/y/z` when not tuned,
//! `grid_size_x/y/z` and `kernel_tuner`) are `-D` definitions; the block is
//! `(block_size_x, block_size_y, block_size_z)` (defaults 256, 1, 1); the grid is
//! `ceil(problem_size[d] / Π grid_div_d)` per dimension, with `grid_div_x/y/z` defaulting
//! to the block size names. Where the space tunes the SM clock through NVML
//! (`nvml_gr_clock`, Kernel Tuner's NVML observer parameters) the row's clock is locked at
//! it, and an entry's `nvml_power` (the board power NVML read while it ran, W) is the row's
//! measured power.
//!
//! Also Kernel Tuner's T4 results files (`store_output_file`, the Open Autotuning Results
//! Schema 1.0.0 of `kernel_tuner/schema/T4/1.0.0/results-schema.json`): `results`, each
//! with its `configuration` (the tunable parameters), `invalidity` (`correct` for a
//! configuration that ran), `times.runtimes` (the runs, ms) and `measurements` (`time`, the
//! mean in ms, and the observers' values, `nvml_power` among them). They name neither the
//! kernel nor the problem size nor the device: the import gives the first two, and the GPU
//! is the import's `gpu` or the `product_name` that the T4 metadata file beside the results
//! (`store_metadata_file`: `nvidia-smi --query -x` under
//! `metadata.environment.device_query`) records, found by putting `metadata` for `results`
//! or `output` in the file name. A configuration's key is its values joined by commas in
//! parameter-name order.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::Value;

use super::rows::{Args, Defines, Row};

/// How to turn Kernel Tuner caches into rows (a `kind = "kernel-tuner"` import, or the
/// `--kernel-tuner` flags). Several files tuned with the same kernel are one import, so a
/// sample takes the same configurations on every GPU.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Import {
    /// The cache files (`.json` or `.json.gz`).
    pub files: Vec<PathBuf>,
    /// The kernel source (`.cu`), compiled with each configuration's definitions.
    pub source: PathBuf,
    /// The kernel; default: the cache's `kernel_name`.
    #[serde(default)]
    pub kernel: Option<String>,
    /// Default: the cache's `problem_size`.
    #[serde(default)]
    pub problem_size: Option<Vec<u64>>,
    #[serde(default)]
    pub grid_div_x: Option<Vec<String>>,
    #[serde(default)]
    pub grid_div_y: Option<Vec<String>>,
    #[serde(default)]
    pub grid_div_z: Option<Vec<String>>,
    /// More definitions for every configuration.
    #[serde(default)]
    pub defines: Option<Defines>,
    /// Kernel argument values for every configuration.
    #[serde(default)]
    pub args: Option<Args>,
    /// The GPU, when the cache's `device_name` is not to be used.
    #[serde(default)]
    pub gpu: Option<String>,
    /// Take this many configurations (plus each file's measured best): a seeded sample,
    /// stratified over the tuning parameters, of the configurations valid in every file.
    #[serde(default)]
    pub sample: Option<usize>,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Group name of the rows (default: the kernel name).
    #[serde(default)]
    pub group: Option<String>,
    /// Architecture to compile for (default: each GPU's).
    #[serde(default)]
    pub arch: Option<String>,
    /// The SM clock every configuration was timed at, in MHz, where it was locked and the
    /// file does not say so (a configuration's `nvml_gr_clock` takes precedence).
    #[serde(default)]
    pub clock_mhz: Option<f64>,
}

/// The seed used when none is given.
pub const DEFAULT_SEED: u64 = 13;

/// One parsed cache file.
#[derive(Debug, Clone)]
pub struct Cache {
    pub device_name: String,
    pub kernel_name: String,
    pub problem_size: Vec<u64>,
    pub keys: Vec<String>,
    /// Key → (parameter values as text, time in ms or the failure).
    pub entries: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub params: BTreeMap<String, String>,
    pub time: Result<f64, String>,
    /// The board power Kernel Tuner's NVML observer recorded (`nvml_power`, W), if any.
    pub power_w: Option<f64>,
    /// The time of each run Kernel Tuner averaged (`times`, ms), where the file keeps them.
    pub runs: Vec<f64>,
}

/// Runs of one configuration that spread by more than this (the slowest over the fastest,
/// the first run left out as warm-up) were timed across a change of the SM clock: a GPU
/// that idled while the next configuration compiled ramps its clock up during the runs, or
/// throttles. In two Kernel Tuner caches of an A100 PCIe, 2 % and 13 % of the sampled
/// configurations step by 1.3-1.8× within their 32 runs, where the runs after the first
/// stay within 1.2× of each other on the RTX A4000 timed beside it (docs/validation.md,
/// "Clocks of imported measurements").
pub const CLOCK_CHANGE_SPREAD: f64 = 1.25;

/// The spread of a configuration's runs: the slowest over the fastest, the first run left
/// out; `None` with fewer than three runs.
pub fn run_spread(runs: &[f64]) -> Option<f64> {
    let rest = runs.get(1..).filter(|r| r.len() >= 2)?;
    let (lo, hi) = rest.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
    (lo > 0.0 && hi.is_finite()).then(|| hi / lo)
}

/// The tuning parameter through which Kernel Tuner locks the SM clock over NVML (its
/// `nvml_gr_clock`, in MHz): a row's locked clock.
pub const CLOCK_PARAM: &str = "nvml_gr_clock";

#[derive(Deserialize)]
struct RawCache {
    device_name: String,
    kernel_name: String,
    #[serde(default)]
    problem_size: Option<Value>,
    tune_params_keys: Vec<String>,
    cache: BTreeMap<String, BTreeMap<String, Value>>,
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(u8::from(*b).to_string()),
        _ => None,
    }
}

/// The runs of a configuration (ms) as a cache or a T4 results file lists them: the
/// positive finite numbers, anything else left out.
fn run_times(runs: &[Value]) -> Vec<f64> {
    runs.iter().filter_map(Value::as_f64).filter(|t| t.is_finite() && *t > 0.0).collect()
}

/// One result of a T4 results file.
#[derive(Deserialize)]
struct RawT4Result {
    configuration: BTreeMap<String, Value>,
    #[serde(default)]
    times: Option<RawT4Times>,
    #[serde(default)]
    invalidity: Option<String>,
    #[serde(default)]
    measurements: Vec<RawT4Measurement>,
}

#[derive(Deserialize)]
struct RawT4Times {
    #[serde(default)]
    runtimes: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct RawT4Measurement {
    name: String,
    value: Value,
    #[serde(default)]
    unit: Option<String>,
}

/// A time measurement in ms: Kernel Tuner writes `ms` for its times (`store_output_file`);
/// `s` and `us` are converted, any other unit is refused.
fn t4_time_ms(m: &RawT4Measurement) -> Result<f64, String> {
    let scale = match m.unit.as_deref().unwrap_or("ms") {
        "ms" | "" => 1.0,
        "s" => 1e3,
        "us" | "µs" => 1e-3,
        other => return Err(format!("time in unit `{other}`")),
    };
    match m.value.as_f64() {
        Some(t) if t.is_finite() && t > 0.0 => Ok(t * scale),
        _ => Err(format!("time {}", m.value)),
    }
}

/// Parses a T4 results file (module documentation) into a cache without a device, kernel
/// or problem size.
fn parse_t4(v: Value) -> anyhow::Result<Cache> {
    let results: Vec<RawT4Result> = serde_json::from_value(v.get("results").cloned().unwrap_or(Value::Null)).map_err(|e| anyhow::anyhow!("not a T4 results file: {e}"))?;
    let keys: Vec<String> = results.first().map(|r| r.configuration.keys().cloned().collect()).unwrap_or_default();
    let mut entries = BTreeMap::new();
    for (i, r) in results.into_iter().enumerate() {
        if r.configuration.keys().ne(keys.iter()) {
            bail!("result {i}: its configuration has the parameters {:?}, where the first result's are {keys:?}", r.configuration.keys().collect::<Vec<_>>());
        }
        let mut params = BTreeMap::new();
        for (k, v) in &r.configuration {
            params.insert(k.clone(), value_text(v).with_context(|| format!("result {i}: `{k}` is {v}, not a number or a string"))?);
        }
        let measured = |name: &str| r.measurements.iter().find(|m| m.name == name);
        let time = match r.invalidity.as_deref() {
            Some("correct") | None => measured("time").map_or_else(|| Err("no time".to_string()), t4_time_ms),
            Some(why) => Err(why.to_string()),
        };
        let power_w = measured("nvml_power").and_then(|m| m.value.as_f64()).filter(|w| w.is_finite() && *w > 0.0);
        let runs = run_times(&r.times.and_then(|t| t.runtimes).unwrap_or_default());
        let key = keys.iter().map(|k| params[k].as_str()).collect::<Vec<_>>().join(",");
        entries.insert(key, Entry { params, time, power_w, runs });
    }
    Ok(Cache { device_name: String::new(), kernel_name: String::new(), problem_size: Vec::new(), keys, entries })
}

/// The GPU a T4 metadata file records: the `product_name` of every GPU in its
/// `nvidia-smi --query -x` output (one GPU, or several of one product); an error says why
/// not.
pub fn t4_device(meta: &Value) -> Result<String, String> {
    let gpus = meta.pointer("/metadata/environment/device_query/nvidia-smi/nvidia_smi_log/gpu").ok_or("no nvidia-smi query in it")?;
    let list: Vec<&Value> = match gpus {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    let names: BTreeSet<&str> = list.iter().filter_map(|g| g.get("product_name").and_then(Value::as_str)).map(str::trim).collect();
    match names.len() {
        0 => Err("its nvidia-smi query names no GPU".into()),
        1 => Ok(names.into_iter().next().unwrap_or_default().to_string()),
        _ => Err(format!("its nvidia-smi query names several GPUs ({})", names.into_iter().collect::<Vec<_>>().join(", "))),
    }
}

/// Parses a cache file's JSON text (or a T4 results file's).
pub fn parse_cache(text: &str) -> anyhow::Result<Cache> {
    let v: Value = serde_json::from_str(text).map_err(|e| anyhow::anyhow!("not a Kernel Tuner cache (line {}: {e})", e.line()))?;
    if v.get("results").is_some_and(Value::is_array) && v.get("cache").is_none() {
        return parse_t4(v);
    }
    let raw: RawCache = serde_json::from_value(v).map_err(|e| anyhow::anyhow!("not a Kernel Tuner cache ({e})"))?;
    let problem_size = match &raw.problem_size {
        None => Vec::new(),
        Some(Value::Number(n)) => vec![n.as_u64().context("problem_size is not a positive integer")?],
        Some(Value::Array(a)) => a.iter().map(|v| v.as_u64().context("problem_size holds a value that is not a positive integer")).collect::<anyhow::Result<_>>()?,
        Some(other) => bail!("problem_size {other} is neither an integer nor a list"),
    };
    let mut entries = BTreeMap::new();
    for (key, e) in raw.cache {
        let mut params = BTreeMap::new();
        for k in &raw.tune_params_keys {
            let v = e.get(k).and_then(value_text).with_context(|| format!("cache entry `{key}` has no value for `{k}`"))?;
            params.insert(k.clone(), v);
        }
        let time = match e.get("time") {
            Some(Value::Number(n)) => match n.as_f64() {
                Some(t) if t.is_finite() && t > 0.0 => Ok(t),
                _ => Err(format!("time {n}")),
            },
            Some(Value::String(s)) => Err(s.clone()),
            Some(other) => Err(other.to_string()),
            None => Err("no time".to_string()),
        };
        let power_w = e.get("nvml_power").and_then(Value::as_f64).filter(|w| w.is_finite() && *w > 0.0);
        let runs = match e.get("times") {
            Some(Value::Array(a)) => run_times(a),
            _ => Vec::new(),
        };
        entries.insert(key, Entry { params, time, power_w, runs });
    }
    Ok(Cache { device_name: raw.device_name, kernel_name: raw.kernel_name, problem_size, keys: raw.tune_params_keys, entries })
}

/// Reads a cache file, gzip-compressed or not (told apart by the gzip magic bytes).
pub fn read_cache(path: &Path) -> anyhow::Result<Cache> {
    // Regular files only, bounded while reading (cuda_frontend::files: a FIFO or a device
    // given as a cache must not hang or exhaust memory).
    let bytes = cuda_frontend::files::read_bytes(path, crate::input::MAX_INPUT_BYTES)?;
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .take(crate::input::MAX_INPUT_BYTES)
            .read_to_string(&mut s)
            .with_context(|| format!("{}: not valid gzip-compressed UTF-8", path.display()))?;
        s
    } else {
        String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?
    };
    let mut cache = parse_cache(&text).with_context(|| path.display().to_string())?;
    if cache.device_name.is_empty() {
        // A T4 results file: the device from its metadata file, where there is one beside it.
        cache.device_name = t4_metadata_beside(path).unwrap_or_default();
    }
    Ok(cache)
}

/// The device of the T4 metadata file beside a results file (module documentation).
fn t4_metadata_beside(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let meta = ["results", "output"].iter().filter(|w| name.contains(*w)).map(|w| path.with_file_name(name.replacen(w, "metadata", 1))).find(|p| p.is_file())?;
    let bytes = cuda_frontend::files::read_bytes(&meta, crate::input::MAX_INPUT_BYTES).ok()?;
    let v: Value = serde_json::from_slice(&bytes).ok()?;
    t4_device(&v).ok()
}

/// A configuration's parameters as integers (for block and grid arithmetic).
fn int_param(params: &BTreeMap<String, String>, name: &str) -> Option<u64> {
    params.get(name).and_then(|v| v.parse::<f64>().ok()).filter(|v| v.fract() == 0.0 && *v > 0.0).map(|v| v as u64)
}

const BLOCK_NAMES: [&str; 3] = ["block_size_x", "block_size_y", "block_size_z"];
const BLOCK_DEFAULTS: [u64; 3] = [256, 1, 1];

/// Block and grid of one configuration, as Kernel Tuner derives them.
pub fn geometry(params: &BTreeMap<String, String>, problem_size: &[u64], grid_div: &[Vec<String>; 3]) -> anyhow::Result<([u32; 3], [u32; 3])> {
    let mut block = [1u32; 3];
    let mut grid = [1u32; 3];
    for d in 0..3 {
        let b = match params.get(BLOCK_NAMES[d]) {
            Some(_) => int_param(params, BLOCK_NAMES[d]).with_context(|| format!("{} is not a positive integer", BLOCK_NAMES[d]))?,
            None => BLOCK_DEFAULTS[d],
        };
        block[d] = u32::try_from(b).context("block size too large")?;
        let mut div = 1u64;
        for name in &grid_div[d] {
            let v = match params.get(name) {
                Some(_) => int_param(params, name).with_context(|| format!("grid divisor `{name}` is not a positive integer"))?,
                None => match BLOCK_NAMES.iter().position(|b| b == name) {
                    Some(i) => BLOCK_DEFAULTS[i],
                    None => bail!("grid divisor `{name}` is not a tuning parameter"),
                },
            };
            div = div.saturating_mul(v);
        }
        let size = problem_size.get(d).copied().unwrap_or(1);
        grid[d] = u32::try_from(size.div_ceil(div.max(1))).context("grid too large")?.max(1);
    }
    Ok((block, grid))
}

/// Numeric order of configuration keys ("64,2,15" before "128,1,15").
fn key_order(params: &BTreeMap<String, String>, keys: &[String]) -> Vec<(u8, f64, String)> {
    keys.iter()
        .map(|k| {
            let v = params.get(k).cloned().unwrap_or_default();
            match v.parse::<f64>() {
                Ok(x) => (0, x, String::new()),
                Err(_) => (1, 0.0, v),
            }
        })
        .collect()
}

/// Picks `n` configurations of `candidates` (each a parameter map), stratified over the
/// parameters: candidates are shuffled with a seeded PCG generator (oorandom), then
/// picked greedily, each time the one whose parameter values have been picked least so
/// far (the counts of its values summed, each weighted by the number of values its
/// parameter takes, so that every parameter's values come up about equally often);
/// ties go to the earlier candidate in the shuffled order. Returns indices.
pub fn stratified_sample(candidates: &[&BTreeMap<String, String>], n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    let mut rng = oorandom::Rand64::new(u128::from(seed));
    for i in (1..order.len()).rev() {
        let j = rng.rand_range(0..(i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for c in candidates {
        for (k, v) in c.iter() {
            values.entry(k).or_default().insert(v);
        }
    }
    let varying: Vec<(&str, f64)> = values.iter().filter(|(_, v)| v.len() > 1).map(|(k, v)| (*k, v.len() as f64)).collect();
    let mut counts: HashMap<(&str, &str), f64> = HashMap::new();
    let mut picked = Vec::new();
    let mut taken = vec![false; candidates.len()];
    while picked.len() < n.min(candidates.len()) {
        let mut best: Option<(f64, usize)> = None;
        for &i in &order {
            if taken[i] {
                continue;
            }
            let score: f64 = varying
                .iter()
                .map(|(k, w)| counts.get(&(*k, candidates[i].get(*k).map_or("", String::as_str))).copied().unwrap_or(0.0) * w)
                .sum();
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, i));
            }
        }
        let Some((_, i)) = best else { break };
        taken[i] = true;
        picked.push(i);
        for (k, _) in &varying {
            *counts.entry((*k, candidates[i].get(*k).map_or("", String::as_str))).or_insert(0.0) += 1.0;
        }
    }
    picked
}

/// What an import produced.
#[derive(Debug)]
pub struct Imported {
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

/// Turns the caches of one import into rows. Relative paths in `imp` are resolved
/// against `base`.
pub fn import(imp: &Import, base: &Path) -> anyhow::Result<Imported> {
    if imp.files.is_empty() {
        bail!("a Kernel Tuner import needs at least one cache file");
    }
    if imp.gpu.is_some() && imp.files.len() > 1 {
        bail!("`gpu` overrides the device of one cache file; give one import per file");
    }
    let mut caches = Vec::new();
    for f in &imp.files {
        let path = super::resolve(base, f);
        caches.push((path.clone(), read_cache(&path)?));
    }
    let grid_div: [Vec<String>; 3] = [
        imp.grid_div_x.clone().unwrap_or_else(|| vec![BLOCK_NAMES[0].into()]),
        imp.grid_div_y.clone().unwrap_or_else(|| vec![BLOCK_NAMES[1].into()]),
        imp.grid_div_z.clone().unwrap_or_else(|| vec![BLOCK_NAMES[2].into()]),
    ];
    let mut notes = Vec::new();
    // Which configurations: every valid one, or a sample of those valid everywhere plus
    // each file's measured best.
    let chosen: Option<BTreeSet<String>> = match imp.sample {
        None => None,
        Some(n) => {
            let first = &caches[0].1;
            let mut common: Vec<&String> =
                first.entries.iter().filter(|(k, e)| e.time.is_ok() && caches.iter().all(|(_, c)| c.entries.get(*k).is_some_and(|x| x.time.is_ok()))).map(|(k, _)| k).collect();
            common.sort_by(|a, b| {
                let (pa, pb) = (&first.entries[*a].params, &first.entries[*b].params);
                key_order(pa, &first.keys).partial_cmp(&key_order(pb, &first.keys)).unwrap_or(std::cmp::Ordering::Equal)
            });
            let params: Vec<&BTreeMap<String, String>> = common.iter().map(|k| &first.entries[*k].params).collect();
            let mut set: BTreeSet<String> = stratified_sample(&params, n, imp.seed.unwrap_or(DEFAULT_SEED)).into_iter().map(|i| common[i].clone()).collect();
            for (_, c) in &caches {
                if let Some((k, _)) = c.entries.iter().filter_map(|(k, e)| e.time.as_ref().ok().map(|t| (k, *t))).min_by(|a, b| a.1.total_cmp(&b.1)) {
                    set.insert(k.clone());
                }
            }
            notes.push(format!(
                "Kernel Tuner: {} configurations: a sample of {n} (seed {}) of the {} valid in every file, plus each file's fastest",
                set.len(),
                imp.seed.unwrap_or(DEFAULT_SEED),
                common.len()
            ));
            Some(set)
        }
    };
    let clock_mhz = imp.clock_mhz.map(super::rows::ClockMhz::try_from).transpose().map_err(anyhow::Error::msg)?.map(|c| c.0);
    let mut rows = Vec::new();
    for (path, cache) in &caches {
        let mut spreads = Vec::new();
        let problem_size = imp.problem_size.clone().unwrap_or_else(|| cache.problem_size.clone());
        if problem_size.is_empty() {
            bail!("{}: no problem_size in the file; give one", path.display());
        }
        let kernel = imp.kernel.clone().unwrap_or_else(|| cache.kernel_name.clone());
        if kernel.is_empty() {
            bail!("{}: the file does not name its kernel (a T4 results file); give one (--kernel, `kernel`)", path.display());
        }
        let gpu = imp.gpu.clone().unwrap_or_else(|| cache.device_name.clone());
        if gpu.is_empty() {
            bail!(
                "{}: the file does not name its GPU (a T4 results file without its metadata file beside it, NAME-metadata.json for NAME-results.json or NAME-output.json); give one (--gpu, `gpu`)",
                path.display()
            );
        }
        let file_name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let failed = cache.entries.values().filter(|e| e.time.is_err()).count();
        if failed > 0 {
            notes.push(format!("{file_name}: {failed} of {} configurations have no time (failed to compile or run); left out", cache.entries.len()));
        }
        for (key, e) in &cache.entries {
            let Ok(time) = e.time else { continue };
            if chosen.as_ref().is_some_and(|s| !s.contains(key)) {
                continue;
            }
            let (block, grid) = geometry(&e.params, &problem_size, &grid_div).with_context(|| format!("{file_name}: configuration {key}"))?;
            spreads.extend(run_spread(&e.runs));
            let mut defines: Vec<String> = cache.keys.iter().map(|k| format!("{k}={}", e.params[k])).collect();
            for (d, name) in BLOCK_NAMES.iter().enumerate() {
                if !e.params.contains_key(*name) {
                    defines.push(format!("{name}={}", block[d]));
                }
            }
            for (d, axis) in ["x", "y", "z"].iter().enumerate() {
                defines.push(format!("grid_size_{axis}={}", grid[d]));
            }
            defines.push("kernel_tuner=1".into());
            defines.extend(imp.defines.clone().unwrap_or_default().0);
            rows.push(Row {
                at: format!("{file_name} [{key}]"),
                source: super::resolve(base, &imp.source),
                kernel: kernel.clone(),
                gpu: gpu.clone(),
                grid,
                block,
                dynamic_smem: 0,
                defines,
                args: imp.args.clone().unwrap_or_default().0,
                time_ms: time,
                power_w: e.power_w,
                label: Some(key.clone()),
                group: Some(imp.group.clone().unwrap_or_else(|| kernel.clone())),
                source_of_measurement: Some(format!("Kernel Tuner cache {file_name} (device {})", cache.device_name)),
                carveout: None,
                launch: super::rows::LaunchMode::Stream,
                footprint: None,
                clock_mhz: e.params.get(CLOCK_PARAM).and_then(|v| v.parse::<f64>().ok()).and_then(|c| gpu_spec::gpu::check_locked_clock(c).ok()).or(clock_mhz),
                registers: None,
                arch: imp.arch.clone(),
            });
        }
        let changed: Vec<f64> = spreads.iter().copied().filter(|s| *s > CLOCK_CHANGE_SPREAD).collect();
        if !changed.is_empty() {
            notes.push(format!(
                "{file_name}: the runs of {} of the {} configurations whose runs it keeps spread by more than {CLOCK_CHANGE_SPREAD}× (up to {:.2}×; the first run left out): the SM clock changed while they were timed (ramping up after idling, or throttling), so their mean time mixes clocks; the models run at the boost clock, or at a clock the rows state (clock_mhz, docs/cli.md)",
                changed.len(),
                spreads.len(),
                changed.iter().fold(0.0f64, |m, s| m.max(*s)),
            ));
        }
    }
    Ok(Imported { rows, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CACHE: &str = r#"{
      "device_name": "NVIDIA GeForce RTX 3090", "kernel_name": "conv", "problem_size": [4096, 4096],
      "tune_params_keys": ["block_size_x", "block_size_y", "tile_size_x"],
      "tune_params": {"block_size_x": [32, 64], "block_size_y": [2, 4], "tile_size_x": [1, 2]},
      "objective": "time",
      "cache": {
        "32,2,1": {"block_size_x": 32, "block_size_y": 2, "tile_size_x": 1, "time": 2.0, "times": [2.0, 2.0]},
        "64,2,2": {"block_size_x": 64, "block_size_y": 2, "tile_size_x": 2, "time": 0.5},
        "64,4,1": {"block_size_x": 64, "block_size_y": 4, "tile_size_x": 1, "time": "CompilationFailedConfig"},
        "32,4,2": {"block_size_x": 32, "block_size_y": 4, "tile_size_x": 2, "time": 1.25}
      }
    }"#;

    #[test]
    fn parses_entries_and_failures() {
        let c = parse_cache(CACHE).unwrap();
        assert_eq!(c.device_name, "NVIDIA GeForce RTX 3090");
        assert_eq!(c.problem_size, [4096, 4096]);
        assert_eq!(c.entries.len(), 4);
        assert_eq!(c.entries["64,2,2"].time, Ok(0.5));
        assert_eq!(c.entries["64,4,1"].time, Err("CompilationFailedConfig".to_string()));
        assert_eq!(c.entries["32,4,2"].params["tile_size_x"], "2");
        assert!(parse_cache("{}").is_err());
        assert!(parse_cache("not json").unwrap_err().to_string().contains("not a Kernel Tuner cache"));
    }

    /// A space that tunes the SM clock over NVML (Kernel Tuner's energy module): each row is
    /// locked at its `nvml_gr_clock` and carries the `nvml_power` NVML read.
    #[test]
    fn nvml_clocks_lock_the_rows_and_nvml_power_is_their_power() {
        let text = r#"{"device_name": "NVIDIA RTX A4000", "kernel_name": "fp32_kernel", "problem_size": [48, 64],
          "tune_params_keys": ["block_size_x", "nvml_gr_clock"],
          "cache": {
            "1024,1530": {"block_size_x": 1024, "nvml_gr_clock": 1530, "time": 88.2, "nvml_power": 103.0},
            "1024,405": {"block_size_x": 1024, "nvml_gr_clock": 405, "time": 332.6}
          }}"#;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.json"), text).unwrap();
        let imp = Import { files: vec!["c.json".into()], source: "k.cu".into(), grid_div_x: Some(vec![]), grid_div_y: Some(vec![]), ..Import::default() };
        let out = import(&imp, dir.path()).unwrap();
        let row = |k: &str| out.rows.iter().find(|r| r.label.as_deref() == Some(k)).unwrap();
        assert_eq!((row("1024,1530").clock_mhz, row("1024,1530").power_w), (Some(1530.0), Some(103.0)));
        assert_eq!((row("1024,405").clock_mhz, row("1024,405").power_w), (Some(405.0), None));
        assert_eq!(row("1024,405").grid, [48, 64, 1]);
        // Without the parameter, no lock.
        let c = parse_cache(CACHE).unwrap();
        assert!(c.entries.values().all(|e| e.power_w.is_none() && !e.params.contains_key(CLOCK_PARAM)));
    }

    /// A T4 results file (Kernel Tuner's `store_output_file`) with its metadata file
    /// (`store_metadata_file`) beside it: the configurations that ran become rows, the GPU is
    /// the metadata's `product_name`, the kernel and the problem size come from the import.
    #[test]
    fn t4_results_with_their_metadata() {
        let results = r#"{"schema_version": "1.0.0", "results": [
          {"timestamp": "2024-05-01 10:00:00", "configuration": {"block_size_x": 128, "tile_size_x": 2},
           "times": {"compilation": 310.0, "benchmark": 12.0, "framework": 1.0, "search_algorithm": 0.1, "validation": 0.0, "runtimes": [0.51, 0.50, 0.50]},
           "invalidity": "correct", "correctness": 1,
           "measurements": [{"name": "time", "value": 0.503, "unit": "ms"}, {"name": "nvml_power", "value": 212.5, "unit": ""}],
           "objectives": ["time"]},
          {"timestamp": "2024-05-01 10:00:01", "configuration": {"block_size_x": 1024, "tile_size_x": 8},
           "times": {"compilation": 290.0, "runtimes": []}, "invalidity": "compile", "correctness": 1,
           "measurements": [{"name": "time", "value": "CompilationFailedConfig", "unit": "ms"}], "objectives": ["time"]}
        ]}"#;
        let metadata = r#"{"schema_version": "1.0.0", "metadata": {"hardware": {"lshw": []},
          "environment": {"requirements": [], "device_query": {"nvidia-smi": {"nvidia_smi_log": {
            "driver_version": "550.54", "gpu": {"@id": "00000000:17:00.0", "product_name": "NVIDIA A100-PCIE-40GB"}}}}}}}"#;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("conv-results.json"), results).unwrap();
        std::fs::write(dir.path().join("conv-metadata.json"), metadata).unwrap();
        let imp = Import { files: vec!["conv-results.json".into()], source: "k.cu".into(), kernel: Some("conv".into()), problem_size: Some(vec![4096]), ..Import::default() };
        let out = import(&imp, dir.path()).unwrap();
        assert_eq!(out.rows.len(), 1, "{:?}", out.notes);
        let r = &out.rows[0];
        assert_eq!((r.gpu.as_str(), r.kernel.as_str(), r.label.as_deref()), ("NVIDIA A100-PCIE-40GB", "conv", Some("128,2")));
        assert_eq!((r.time_ms, r.power_w, r.block, r.grid), (0.503, Some(212.5), [128, 1, 1], [32, 1, 1]));
        assert!(r.defines.contains(&"tile_size_x=2".to_string()), "{:?}", r.defines);
        assert!(out.notes.iter().any(|n| n.contains("1 of 2 configurations have no time")), "{:?}", out.notes);
        let c = read_cache(&dir.path().join("conv-results.json")).unwrap();
        assert_eq!(c.entries["128,2"].runs, [0.51, 0.50, 0.50]);
        assert_eq!(c.entries["1024,8"].time, Err("compile".to_string()));

        // Without the kernel, or without the metadata and a GPU: said, with what to give.
        let e = import(&Import { kernel: None, ..imp.clone() }, dir.path()).unwrap_err().to_string();
        assert!(e.contains("does not name its kernel") && e.contains("--kernel"), "{e}");
        std::fs::remove_file(dir.path().join("conv-metadata.json")).unwrap();
        let e = import(&imp, dir.path()).unwrap_err().to_string();
        assert!(e.contains("does not name its GPU") && e.contains("--gpu"), "{e}");
        let out = import(&Import { gpu: Some("a100".into()), ..imp }, dir.path()).unwrap();
        assert_eq!(out.rows[0].gpu, "a100");

        // A metadata file of a machine with two different GPUs names neither.
        let two: Value = serde_json::from_str(r#"{"metadata": {"environment": {"device_query": {"nvidia-smi": {"nvidia_smi_log": {"gpu": [
            {"product_name": "NVIDIA A100-PCIE-40GB"}, {"product_name": "NVIDIA RTX A4000"}]}}}}}}"#).unwrap();
        assert!(t4_device(&two).unwrap_err().contains("several GPUs"));
        assert!(t4_device(&serde_json::json!({})).is_err());
    }

    #[test]
    fn geometry_follows_kernel_tuner() {
        let p: BTreeMap<String, String> = [("block_size_x", "48"), ("block_size_y", "8"), ("tile_size_x", "3"), ("tile_size_y", "6")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let div = [vec!["block_size_x".into(), "tile_size_x".into()], vec!["block_size_y".into(), "tile_size_y".into()], vec!["block_size_z".into()]];
        // ceil(4096 / 144) = 29, ceil(4096 / 48) = 86.
        assert_eq!(geometry(&p, &[4096, 4096], &div).unwrap(), ([48, 8, 1], [29, 86, 1]));
        // Defaults: block (256, 1, 1), grid divided by the block names.
        let none = BTreeMap::new();
        let d = [vec!["block_size_x".into()], vec!["block_size_y".into()], vec!["block_size_z".into()]];
        assert_eq!(geometry(&none, &[1000], &d).unwrap(), ([256, 1, 1], [4, 1, 1]));
        let bad = [vec!["nope".into()], vec![], vec![]];
        assert!(geometry(&none, &[1000], &bad).is_err());
    }

    #[test]
    fn rows_from_a_gzip_cache() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, CACHE.as_bytes()).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        let imp = Import {
            files: vec!["c.json.gz".into()],
            source: "conv.cu".into(),
            grid_div_x: Some(vec!["block_size_x".into(), "tile_size_x".into()]),
            defines: Some(Defines(vec!["filter=15".into()])),
            ..Import::default()
        };
        let out = import(&imp, dir.path()).unwrap();
        assert_eq!(out.rows.len(), 3, "the failed configuration is left out");
        let r = out.rows.iter().find(|r| r.label.as_deref() == Some("64,2,2")).unwrap();
        assert_eq!((r.block, r.grid), ([64, 2, 1], [32, 2048, 1]));
        assert_eq!(r.time_ms, 0.5);
        assert_eq!(r.gpu, "NVIDIA GeForce RTX 3090");
        assert_eq!(r.kernel, "conv");
        assert_eq!(r.group.as_deref(), Some("conv"));
        assert_eq!(
            r.defines,
            ["block_size_x=64", "block_size_y=2", "tile_size_x=2", "block_size_z=1", "grid_size_x=32", "grid_size_y=2048", "grid_size_z=1", "kernel_tuner=1", "filter=15"]
        );
        assert!(out.notes.iter().any(|n| n.contains("1 of 4")), "{:?}", out.notes);
    }

    #[test]
    fn samples_are_seeded_stratified_and_keep_the_best() {
        let mk = |a: &str, b: &str| -> BTreeMap<String, String> { [("a".to_string(), a.to_string()), ("b".to_string(), b.to_string())].into() };
        let all: Vec<BTreeMap<String, String>> = (0..4).flat_map(|a| (0..4).map(move |b| mk(&a.to_string(), &b.to_string()))).collect();
        let refs: Vec<&BTreeMap<String, String>> = all.iter().collect();
        let s = stratified_sample(&refs, 4, 7);
        assert_eq!(s, stratified_sample(&refs, 4, 7), "deterministic");
        // Four picks cover each value of each parameter exactly once.
        for p in ["a", "b"] {
            let vals: BTreeSet<&str> = s.iter().map(|&i| all[i][p].as_str()).collect();
            assert_eq!(vals.len(), 4, "{p}: {s:?}");
        }
        assert_eq!(stratified_sample(&refs, 100, 7).len(), 16);

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.json"), CACHE).unwrap();
        let imp = Import { files: vec!["c.json".into()], source: "conv.cu".into(), sample: Some(1), seed: Some(3), ..Import::default() };
        let out = import(&imp, dir.path()).unwrap();
        // One sampled configuration plus the fastest ("64,2,2"), unless the sample is it.
        assert!(out.rows.iter().any(|r| r.label.as_deref() == Some("64,2,2")));
        assert!((1..=2).contains(&out.rows.len()));
    }

    /// A configuration whose runs step from one clock to another (the A100 PCIe caches:
    /// 32 runs at 11.1 ms, then at 6.5 ms) is reported with the file; warm-up in the first
    /// run and noise are not. A lock stated for the import applies where a configuration
    /// names none.
    #[test]
    fn runs_timed_across_a_clock_change_are_reported_and_a_stated_lock_applies() {
        assert_eq!(run_spread(&[2.0, 1.0, 1.0, 1.7]), Some(1.7));
        assert_eq!(run_spread(&[9.0, 1.0]), None);
        assert_eq!(run_spread(&[]), None);
        let text = r#"{"device_name": "NVIDIA A100-PCIE-40GB", "kernel_name": "k", "problem_size": [64],
          "tune_params_keys": ["block_size_x"],
          "cache": {
            "32": {"block_size_x": 32, "time": 8.8, "times": [11.2, 11.1, 11.1, 6.5, 6.5]},
            "64": {"block_size_x": 64, "time": 1.1, "times": [1.5, 1.0, 1.05, 1.0]},
            "128": {"block_size_x": 128, "time": 1.0}
          }}"#;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.json"), text).unwrap();
        let imp = Import { files: vec!["c.json".into()], source: "k.cu".into(), clock_mhz: Some(765.0), ..Import::default() };
        let out = import(&imp, dir.path()).unwrap();
        let notes: Vec<&String> = out.notes.iter().filter(|n| n.contains("SM clock changed")).collect();
        assert_eq!(notes.len(), 1, "{:?}", out.notes);
        assert!(notes[0].contains("1 of the 2 configurations") && notes[0].contains("1.71×"), "{}", notes[0]);
        assert!(out.rows.iter().all(|r| r.clock_mhz == Some(765.0)));
        let steady = text.replace("6.5, 6.5", "11.1, 11.0");
        std::fs::write(dir.path().join("c.json"), steady).unwrap();
        let out = import(&Import { clock_mhz: None, ..imp.clone() }, dir.path()).unwrap();
        assert!(out.notes.iter().all(|n| !n.contains("SM clock changed")), "{:?}", out.notes);
        assert!(out.rows.iter().all(|r| r.clock_mhz.is_none()));
        let bad = import(&Import { clock_mhz: Some(0.0), ..imp }, dir.path()).expect_err("a clock of 0 MHz is refused").to_string();
        assert!(bad.contains("clock_mhz"), "{bad}");
    }
}
