//! Client settings, from `initializationOptions` and `workspace/didChangeConfiguration`
//! (both accept the object itself or `{ "warpsight": { ... } }`). Documented in
//! `docs/lsp-extensions.md` § Configuration. A malformed value is ignored with a log line
//! and the previous value kept: a typo in settings never stops the server.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

pub use analysis::hover::InlayParts;

#[derive(Debug, Clone)]
pub struct Config {
    /// Delay between the last keystroke and the analysis.
    pub debounce: Duration,
    /// Analysis settings (target GPUs, launch, arguments, models).
    pub analysis: analysis::Settings,
    /// An explicit nvcc.
    pub nvcc: Option<PathBuf>,
    /// Compile timeout for `.cu` files.
    pub compile_timeout: Duration,
    /// Whether the workspace's `compile_commands.json` may be read (`trustCompileCommands`,
    /// default false): a database from a cloned repository is untrusted input
    /// (docs/security.md).
    pub trust_compile_commands: bool,
    pub inlay: InlayParts,
    /// The `gpuFiles` setting in force.
    pub gpu_files: Vec<String>,
    /// The workspace's own GPU files, `.warpsight/gpus/*.toml` under the workspace root
    /// ([`Config::set_workspace`]), loaded with `gpuFiles`.
    pub workspace_gpu_files: Vec<String>,
    /// `compiler`: `"nvrtc"` (default: NVRTC when found, device code only, kernel by
    /// kernel; else nvcc) or `"nvcc"` (nvcc when found, as the CLI).
    pub compiler: cuda_frontend::CompilerChoice,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            debounce: Duration::from_millis(150),
            analysis: analysis::Settings::default(),
            nvcc: None,
            compile_timeout: Duration::from_secs(20),
            trust_compile_commands: false,
            inlay: InlayParts::default(),
            gpu_files: Vec::new(),
            workspace_gpu_files: Vec::new(),
            compiler: cuda_frontend::CompilerChoice::PreferNvrtc,
        }
    }
}

/// Where a workspace keeps its own GPU files, relative to its root.
pub const WORKSPACE_GPU_DIR: &str = ".warpsight/gpus";

/// The `*.toml` files of a workspace's [`WORKSPACE_GPU_DIR`], sorted: none when the folder
/// does not exist; an error when it cannot be read or holds more than
/// [`limits::MAX_GPU_FILES`] of them. Only the folder's own entries are listed (no
/// recursion), and a file is data: read with the bounded reader, never run.
pub fn workspace_gpu_files(root: &std::path::Path) -> Result<Vec<String>, String> {
    let dir = root.join(WORKSPACE_GPU_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{} could not be read: {e}", dir.display())),
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "toml") && entry.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()) {
            files.push(path.display().to_string());
            if files.len() > limits::MAX_GPU_FILES {
                return Err(format!("{} holds more than {} GPU files", dir.display(), limits::MAX_GPU_FILES));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The GPUs of the user's GPU files (`gpuFiles`; the format of `gpu-data/gpus/*.toml`,
/// checked like the built-in data), read with the bounded reader of every file taken from
/// disk. A file is data, never run; an error names the file and the problem.
fn user_gpus(paths: &[&str]) -> Result<Vec<gpu_spec::Gpu>, String> {
    let mut texts = Vec::new();
    for p in paths {
        let text = cuda_frontend::files::read_text(std::path::Path::new(p), 16 << 20).map_err(|e| format!("could not be read: {p}: {e}"))?;
        texts.push((p.to_string(), text));
    }
    let files: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    gpu_spec::Database::user_gpus(&files).map_err(|errors| {
        let lines: Vec<String> = errors.iter().take(5).map(|e| format!("{}: {}", e.file, e.message)).collect();
        format!("is refused: {}", lines.join("; "))
    })
}

/// The settings object (docs/lsp-extensions.md § Configuration): the keys are the fields
/// of this type. Each value is kept as given (`null` included, which is not the same as
/// absent) so that a wrong one is refused on its own, quoted in the message, and the other
/// settings still apply; [`Config::update`] reads each into its type and checks its limits.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawSettings {
    #[serde(default, deserialize_with = "given")]
    debounce_ms: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) gpus: Option<Value>,
    #[serde(default, deserialize_with = "given_launch")]
    pub(crate) launch: Option<RawLaunch>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) args: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) default_trip_count: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) graph_launch: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) locked_clock_mhz: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    nvcc: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    compile_timeout_ms: Option<Value>,
    /// [`Compiler`].
    #[serde(default, deserialize_with = "given")]
    compiler: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    gpu_files: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    trust_compile_commands: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    severities: Option<Value>,
    /// [`RawInlayHints`].
    #[serde(default, deserialize_with = "given")]
    inlay_hints: Option<Value>,
}

/// `launch`: each part unset when absent or `null`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RawLaunch {
    #[serde(default, deserialize_with = "given")]
    pub(crate) grid: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) block: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    pub(crate) dynamic_smem: Option<Value>,
}

impl RawSettings {
    /// The settings of a JSON object, `{ "warpsight": { ... } }` or the object itself;
    /// `None` for anything else (serde would read an array as the fields in order).
    pub(crate) fn read(json: &Value) -> Option<RawSettings> {
        let json = json.get("warpsight").unwrap_or(json);
        json.is_object().then(|| RawSettings::deserialize(json).ok()).flatten()
    }
}

/// `inlayHints`: the parts of the hint, each `true` or `false`.
#[derive(Debug, Default, Deserialize)]
struct RawInlayHints {
    #[serde(default, deserialize_with = "given")]
    occupancy: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    bound: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    time: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    power: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    loops: Option<Value>,
    #[serde(default, deserialize_with = "given")]
    memory: Option<Value>,
}

/// `compiler`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Compiler {
    /// NVRTC when found (device code only, kernel by kernel), else nvcc.
    Nvrtc,
    /// nvcc when found, as the CLI.
    Nvcc,
}

/// A `launch.grid`/`launch.block` setting: a string in the shared launch grammar
/// (`"16x16"`, `"16,16"`, `"256"`; `launch_spec`), a number, or a list of one to three
/// numbers.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Dims {
    Text(String),
    One(i64),
    List(Vec<i64>),
}

impl Dims {
    fn resolve(self) -> Option<[u32; 3]> {
        match self {
            Dims::Text(s) => analysis::launch::parse_dims(&s).ok(),
            Dims::One(n) => analysis::launch::dims_from_parts(&[n]).ok(),
            Dims::List(parts) => analysis::launch::dims_from_parts(&parts).ok(),
        }
    }
}

/// A setting that is present, `null` included (serde reads `null` as absent otherwise).
pub(crate) fn given<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// `launch`, when present: a value that is not an object unsets every part, as an empty
/// object does.
fn given_launch<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RawLaunch>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(Some(if v.is_object() { typed::<RawLaunch>(&v).unwrap_or_default() } else { RawLaunch::default() }))
}

/// A setting's value read into its type; `None` when it has another shape.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
    T::deserialize(v).ok()
}

/// Limits on the editor's settings and request parameters (docs/lsp-extensions.md § Configuration):
/// a value outside them is refused with a message, so that no setting can stall the
/// server (a debounce of 2^62 ms published no diagnostics ever again; 10,000 GPU ids
/// took 30 s and 624 MB).
pub mod limits {
    /// `debounceMs`: at most 10 s between the last edit and the analysis.
    pub const MAX_DEBOUNCE_MS: u64 = 10_000;
    /// `compileTimeoutMs`: from 1 s to 10 min.
    pub const COMPILE_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1_000..=600_000;
    /// The limits the CLI shares: GPU ids and the default trip count.
    pub use analysis::settings::limits::*;
    /// `args`: kernel argument values.
    pub const MAX_ARGS: usize = 256;
    /// `gpuFiles`: user GPU files.
    pub const MAX_GPU_FILES: usize = 16;
}

use analysis::settings::{check_default_trip_count, check_gpu_ids, parse_severity};

/// A JSON value shown in a message, shortened.
fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 40 {
        return s;
    }
    let cut = (0..=40).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
    format!("{}…", &s[..cut])
}

impl Config {
    /// Loads the workspace's GPU files (`.warpsight/gpus/*.toml` under `root`) together
    /// with the `gpuFiles` setting. Returns the problem, naming the file, when they are
    /// refused; the GPUs in force before stay in force.
    pub fn set_workspace(&mut self, root: &std::path::Path) -> Option<String> {
        let files = match workspace_gpu_files(root) {
            Ok(f) => f,
            Err(why) => return Some(format!("`{WORKSPACE_GPU_DIR}`: {why}")),
        };
        if files.is_empty() && self.workspace_gpu_files.is_empty() {
            return None;
        }
        let all: Vec<&str> = files.iter().chain(&self.gpu_files).map(String::as_str).collect();
        match user_gpus(&all) {
            Ok(gpus) => {
                self.analysis.user_gpus = gpus;
                self.workspace_gpu_files = files;
                None
            }
            // The message quotes the workspace's files: shown without control characters.
            Err(why) => Some(format!("`{WORKSPACE_GPU_DIR}` {}", cuda_frontend::safety::strip_controls(&why))),
        }
    }

    /// Applies the settings the JSON holds. Returns one message per value refused (out
    /// of range, wrong type); a refused value leaves the previous one in place (an
    /// argument of the wrong type is left out).
    pub fn update(&mut self, json: &Value) -> Vec<String> {
        match RawSettings::read(json) {
            Some(raw) => self.apply(&raw),
            None => Vec::new(),
        }
    }

    /// Applies settings already read ([`Config::update`]).
    pub(crate) fn apply(&mut self, raw: &RawSettings) -> Vec<String> {
        let mut problems = Vec::new();
        let mut refuse = |key: &str, v: &Value, why: &str| problems.push(format!("`{key}`: {} {why}", show(v)));
        if let Some(v) = &raw.debounce_ms {
            match typed::<u64>(v).filter(|ms| *ms <= limits::MAX_DEBOUNCE_MS) {
                Some(ms) => self.debounce = Duration::from_millis(ms),
                None => refuse("debounceMs", v, &format!("is not a whole number of milliseconds from 0 to {}", limits::MAX_DEBOUNCE_MS)),
            }
        }
        if let Some(v) = &raw.gpus {
            match typed::<Vec<String>>(v).map(|ids| check_gpu_ids(ids.iter().map(String::as_str))) {
                None => refuse("gpus", v, "is not an array of GPU ids (strings)"),
                Some(Err(why)) => refuse("gpus", v, &format!("is refused: {why}")),
                Some(Ok(ids)) if ids.is_empty() => refuse("gpus", v, "is empty"),
                Some(Ok(ids)) => self.analysis.gpus = ids,
            }
        }
        if let Some(launch) = &raw.launch {
            let mut dim = |key: &str, v: &Option<Value>, cur: Option<[u32; 3]>| match v {
                None | Some(Value::Null) => None,
                Some(v) => match typed::<Dims>(v).and_then(Dims::resolve) {
                    Some(d) => Some(d),
                    None => {
                        refuse(&format!("launch.{key}"), v, "is not X, XxY or XxYxZ (positive 32-bit integers) or [x, y, z]");
                        cur
                    }
                },
            };
            self.analysis.launch.grid = dim("grid", &launch.grid, self.analysis.launch.grid);
            self.analysis.launch.block = dim("block", &launch.block, self.analysis.launch.block);
            self.analysis.launch.dynamic_smem = match &launch.dynamic_smem {
                None | Some(Value::Null) => None,
                Some(v) => match typed::<u32>(v) {
                    Some(b) => Some(b),
                    None => {
                        refuse("launch.dynamicSmem", v, "is not a byte count from 0 to 4294967295");
                        self.analysis.launch.dynamic_smem
                    }
                },
            };
        }
        if let Some(v) = &raw.args {
            match typed::<BTreeMap<String, Value>>(v).filter(|_| v.is_object()) {
                Some(args) if args.len() <= limits::MAX_ARGS => {
                    let mut kept = BTreeMap::new();
                    for (k, x) in args {
                        // An integer, or a JSON number with an integral value (`2.0`, `1e6`),
                        // which `--arg` and annotations fold to the integer too
                        // (launch_spec::parse_int).
                        let integral = typed::<i64>(&x).or_else(|| x.is_f64().then(|| analysis::launch::parse_int(&x.to_string())).flatten());
                        match integral {
                            Some(n) => {
                                kept.insert(k, n);
                            }
                            // A kernel's `float`/`double` argument, as `--arg eps=0.01` and
                            // annotations accept it (launch_spec::ArgValue::Float): said, not used.
                            None if x.is_f64() && analysis::launch::float_literal(&x.to_string()).is_some() => refuse(&format!("args.{k}"), &x, "is a floating-point value; the analysis folds integer arguments only (trip counts, addresses, guards), so it does not use it"),
                            None => refuse(&format!("args.{k}"), &x, "is not a 64-bit integer; this argument was left out"),
                        }
                    }
                    self.analysis.args = kept;
                }
                Some(args) => refuse("args", v, &format!("has {} entries, more than the limit of {}", args.len(), limits::MAX_ARGS)),
                None => refuse("args", v, "is not an object of integers"),
            }
        }
        if let Some(v) = &raw.default_trip_count {
            match typed::<f64>(v).ok_or_else(|| "is not a number".to_string()).and_then(|n| check_default_trip_count(n).map_err(|_| format!("is not a trip count from 0 to {:e}", limits::MAX_DEFAULT_TRIP_COUNT))) {
                Ok(n) => self.analysis.profile.default_trip_count = n,
                Err(why) => refuse("defaultTripCount", v, &why),
            }
        }
        if let Some(v) = &raw.graph_launch {
            match typed::<bool>(v) {
                Some(b) => self.analysis.graph_launch = b,
                None => refuse("graphLaunch", v, "is not true or false"),
            }
        }
        if let Some(v) = &raw.locked_clock_mhz {
            // `null` unlocks (the boost clock), as an absent `--locked-clock` does.
            match v {
                Value::Null => self.analysis.locked_clock_mhz = None,
                v => match typed::<f64>(v).map(gpu_spec::gpu::check_locked_clock) {
                    Some(Ok(mhz)) => self.analysis.locked_clock_mhz = Some(mhz),
                    Some(Err(_)) => refuse("lockedClockMhz", v, "is not a clock from 1 to 10000 MHz"),
                    None => refuse("lockedClockMhz", v, "is not a number of MHz (or null for the boost clock)"),
                },
            }
        }
        if let Some(v) = &raw.nvcc {
            match typed::<Option<String>>(v) {
                Some(path) => self.nvcc = path.filter(|s| !s.is_empty()).map(PathBuf::from),
                None => refuse("nvcc", v, "is not a path (a string)"),
            }
        }
        if let Some(v) = &raw.compile_timeout_ms {
            match typed::<u64>(v).filter(|ms| limits::COMPILE_TIMEOUT_MS.contains(ms)) {
                Some(ms) => self.compile_timeout = Duration::from_millis(ms),
                None => refuse(
                    "compileTimeoutMs",
                    v,
                    &format!("is not a whole number of milliseconds from {} to {}", limits::COMPILE_TIMEOUT_MS.start(), limits::COMPILE_TIMEOUT_MS.end()),
                ),
            }
        }
        if let Some(v) = &raw.compiler {
            match typed::<Compiler>(v) {
                Some(Compiler::Nvrtc) => self.compiler = cuda_frontend::CompilerChoice::PreferNvrtc,
                Some(Compiler::Nvcc) => self.compiler = cuda_frontend::CompilerChoice::Auto,
                None => refuse("compiler", v, "is not \"nvrtc\" or \"nvcc\""),
            }
        }
        if let Some(v) = &raw.gpu_files {
            match typed::<Vec<String>>(v) {
                None => refuse("gpuFiles", v, "is not an array of paths (strings)"),
                Some(p) if p.len() > limits::MAX_GPU_FILES => {
                    refuse("gpuFiles", v, &format!("has {} paths, more than the limit of {}", p.len(), limits::MAX_GPU_FILES))
                }
                Some(p) => {
                    let all: Vec<&str> = self.workspace_gpu_files.iter().chain(&p).map(String::as_str).collect();
                    match user_gpus(&all) {
                        Ok(gpus) => {
                            self.analysis.user_gpus = gpus;
                            self.gpu_files = p;
                        }
                        Err(why) => refuse("gpuFiles", v, &why),
                    }
                }
            }
        }
        if let Some(v) = &raw.trust_compile_commands {
            match typed::<bool>(v) {
                Some(b) => self.trust_compile_commands = b,
                None => refuse("trustCompileCommands", v, "is not true or false"),
            }
        }
        if let Some(v) = &raw.severities {
            match typed::<BTreeMap<String, Value>>(v).filter(|_| v.is_object()) {
                Some(sev) => {
                    for (code, v) in sev {
                        let known = code == "syntax" || analysis::findings::CODES.contains(&code.as_str());
                        match typed::<String>(&v).as_deref().and_then(parse_severity) {
                            Some(_) if !known => refuse(&format!("severities.{code}"), &v, "names no diagnostic code (docs/diagnostics.md)"),
                            Some(s) => {
                                self.analysis.severities.insert(code, s);
                            }
                            None => refuse(&format!("severities.{code}"), &v, "is not error, warning, information, hint or off"),
                        }
                    }
                }
                None => refuse("severities", v, "is not an object of code: level"),
            }
        }
        if let Some(v) = &raw.inlay_hints {
            match typed::<RawInlayHints>(v).filter(|_| v.is_object()) {
                Some(inlay) => {
                    let p = &mut self.inlay;
                    let mut flag = |k: &str, x: &Option<Value>, cur: bool| match x {
                        None => cur,
                        Some(Value::Bool(b)) => *b,
                        Some(x) => {
                            refuse(&format!("inlayHints.{k}"), x, "is not true or false");
                            cur
                        }
                    };
                    *p = InlayParts {
                        occupancy: flag("occupancy", &inlay.occupancy, p.occupancy),
                        bound: flag("bound", &inlay.bound, p.bound),
                        time: flag("time", &inlay.time, p.time),
                        power: flag("power", &inlay.power, p.power),
                        loops: flag("loops", &inlay.loops, p.loops),
                        memory: flag("memory", &inlay.memory, p.memory),
                    };
                }
                None => refuse("inlayHints", v, "is not an object of true/false flags"),
            }
        }
        for p in &problems {
            tracing::warn!("settings: {p}");
        }
        problems
    }

    /// The effective severity of a code (`None`: the code is off). Performance findings
    /// have theirs applied by the analysis; this serves `syntax` and `compiler-error`.
    pub fn severity(&self, code: &str, default: analysis::Severity) -> Option<analysis::Severity> {
        match self.analysis.severities.get(code) {
            Some(s) => *s,
            None => Some(default),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn settings_apply_and_bad_values_are_ignored() {
        let mut c = Config::default();
        c.update(&json!({ "warpsight": {
            "gpus": ["h100", "tesla-k20"],
            "launch": { "grid": "64x64", "block": [16, 16] },
            "args": { "n": 1024, "bad": "x" },
            "severities": { "tail-wave": "off", "memory-bound": "error", "x": "loud" },
            "inlayHints": { "power": false },
            "debounceMs": 0
        }}));
        assert_eq!(c.analysis.gpus, vec!["h100", "tesla-k20"]);
        assert_eq!(c.analysis.launch.grid, Some([64, 64, 1]));
        assert_eq!(c.analysis.launch.block, Some([16, 16, 1]));
        assert_eq!(c.analysis.args.get("n"), Some(&1024));
        assert!(!c.analysis.args.contains_key("bad"));
        assert_eq!(c.severity("tail-wave", analysis::Severity::Hint), None);
        assert_eq!(c.severity("memory-bound", analysis::Severity::Hint), Some(analysis::Severity::Error));
        assert_eq!(c.severity("other", analysis::Severity::Hint), Some(analysis::Severity::Hint));
        assert!(!c.analysis.severities.contains_key("x"));
        assert!(!c.inlay.power && c.inlay.time);
        assert_eq!(c.debounce, Duration::ZERO);
        // A workspace's compile database is untrusted until the user says otherwise.
        assert!(!c.trust_compile_commands);
        c.update(&json!({ "trustCompileCommands": "yes" }));
        assert!(!c.trust_compile_commands);
        c.update(&json!({ "trustCompileCommands": true }));
        assert!(c.trust_compile_commands);
        // Stream launches unless the user says the kernels run from a CUDA graph.
        assert!(!c.analysis.graph_launch);
        c.update(&json!({ "graphLaunch": true }));
        assert!(c.analysis.graph_launch);
        // The boost clock unless the user locks one (`nvidia-smi --lock-gpu-clocks`); `null`
        // unlocks it again.
        assert_eq!(c.analysis.locked_clock_mhz, None);
        c.update(&json!({ "lockedClockMhz": 1200 }));
        assert_eq!(c.analysis.locked_clock_mhz, Some(1200.0));
        c.update(&json!({ "lockedClockMhz": null }));
        assert_eq!(c.analysis.locked_clock_mhz, None);
        // Not an object: ignored.
        c.update(&json!(42));
        assert_eq!(c.analysis.gpus, vec!["h100", "tesla-k20"]);
    }

    /// Every setting refuses a value of the wrong shape with its own message, quoting the
    /// value, and leaves the others applied; `null` is not the same as absent.
    #[test]
    fn each_setting_is_refused_on_its_own_with_its_message() {
        let mut c = Config::default();
        c.update(&json!({ "nvcc": "/opt/nvcc", "launch": { "grid": 8, "dynamicSmem": 64 }, "compiler": "nvcc" }));
        assert_eq!((c.nvcc.clone(), c.analysis.launch.grid, c.analysis.launch.dynamic_smem), (Some(PathBuf::from("/opt/nvcc")), Some([8, 1, 1]), Some(64)));
        assert_eq!(c.compiler, cuda_frontend::CompilerChoice::Auto);
        let problems = c.update(&json!({
            "debounceMs": 1.5,
            "gpus": ["a100", 7],
            "launch": { "grid": "8x", "block": [32, 2], "dynamicSmem": -1 },
            "args": { "n": 2.5, "m": 3, "k": 2.0 },
            "defaultTripCount": "many",
            "graphLaunch": "yes",
            "lockedClockMhz": 20000,
            "nvcc": 3,
            "compileTimeoutMs": 10,
            "compiler": "gcc",
            "gpuFiles": "a.toml",
            "trustCompileCommands": 1,
            "severities": { "memory-bound": 2 },
            "inlayHints": { "time": "no", "loops": false },
            "unknownKey": true
        }));
        assert_eq!(
            problems,
            [
                "`debounceMs`: 1.5 is not a whole number of milliseconds from 0 to 10000",
                "`gpus`: [\"a100\",7] is not an array of GPU ids (strings)",
                "`launch.grid`: \"8x\" is not X, XxY or XxYxZ (positive 32-bit integers) or [x, y, z]",
                "`launch.dynamicSmem`: -1 is not a byte count from 0 to 4294967295",
                "`args.n`: 2.5 is a floating-point value; the analysis folds integer arguments only (trip counts, addresses, guards), so it does not use it",
                "`defaultTripCount`: \"many\" is not a number",
                "`graphLaunch`: \"yes\" is not true or false",
                "`lockedClockMhz`: 20000 is not a clock from 1 to 10000 MHz",
                "`nvcc`: 3 is not a path (a string)",
                "`compileTimeoutMs`: 10 is not a whole number of milliseconds from 1000 to 600000",
                "`compiler`: \"gcc\" is not \"nvrtc\" or \"nvcc\"",
                "`gpuFiles`: \"a.toml\" is not an array of paths (strings)",
                "`trustCompileCommands`: 1 is not true or false",
                "`severities.memory-bound`: 2 is not error, warning, information, hint or off",
                "`inlayHints.time`: \"no\" is not true or false",
            ]
        );
        // The refused values kept the previous ones; the good ones applied.
        assert_eq!((c.analysis.launch.grid, c.analysis.launch.block, c.analysis.launch.dynamic_smem), (Some([8, 1, 1]), Some([32, 2, 1]), Some(64)));
        assert_eq!(c.analysis.args, [("k".to_string(), 2), ("m".to_string(), 3)].into(), "2.0 folds to 2, as with --arg");
        assert_eq!(c.nvcc, Some(PathBuf::from("/opt/nvcc")));
        assert!(!c.inlay.loops && c.inlay.time);
        // `null` resets what may be unset; absent keeps it.
        assert!(c.update(&json!({ "launch": { "block": null } })).is_empty());
        assert_eq!((c.analysis.launch.grid, c.analysis.launch.block), (None, None), "an absent part of `launch` is unset");
        assert!(c.update(&json!({ "launch": { "grid": 4 } })).is_empty());
        assert!(c.update(&json!({ "nvcc": null })).is_empty());
        assert_eq!(c.nvcc, None);
        // Wrong shapes of whole objects.
        let problems = c.update(&json!({ "args": [1], "severities": "off", "inlayHints": [true] }));
        assert_eq!(
            problems,
            ["`args`: [1] is not an object of integers", "`severities`: \"off\" is not an object of code: level", "`inlayHints`: [true] is not an object of true/false flags"]
        );
        // An array is not a settings object (serde would read it as the fields in order).
        assert!(c.update(&json!([0, ["h100"]])).is_empty());
        assert_eq!(c.debounce, Duration::from_millis(150));
        // A `launch` that is not an object unsets every part, as an empty one.
        assert!(c.update(&json!({ "launch": 5 })).is_empty());
        assert_eq!(c.analysis.launch.grid, None);
    }

    /// `gpuFiles` loads the user's GPU files (the file `warpsight calibrate` writes, here a
    /// copy of the built-in A100 entry with one fitted parameter); a bad file is refused
    /// with its name and the previous GPUs stay.
    #[test]
    fn gpu_files_load_user_gpus_and_bad_ones_are_refused() {
        let ampere = include_str!("../../../gpu-data/gpus/ampere.toml");
        let start = ampere.find("id = \"a100-sxm4-80gb\"").expect("entry");
        let rest = &ampere[start..];
        let entry = &rest[..rest.find("[[gpu]]").unwrap_or(rest.len())];
        let dir = tempfile::tempdir().expect("tempdir");
        let good = dir.path().join("a100.toml");
        std::fs::write(
            &good,
            format!("[[gpu]]\n{entry}\n[gpu.overrides.model_params]\n\"bottleneck.dram_efficiency\" = {{ v = 0.8, src = \"derived: fitted by warpsight calibrate on 12 measurements (a test file)\" }}\n"),
        )
        .expect("write");
        let mut c = Config::default();
        let problems = c.update(&json!({ "gpuFiles": [good.to_str().unwrap()] }));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.analysis.user_gpus.len(), 1);
        assert_eq!(c.analysis.resolve_gpu("a100").unwrap().model_params.get("bottleneck.dram_efficiency"), Some(&0.8));

        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[[gpu]]\nid = \"x\"\n").expect("write");
        let problems = c.update(&json!({ "gpuFiles": [bad.to_str().unwrap()] }));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("gpuFiles") && problems[0].contains("bad.toml"), "{problems:?}");
        assert_eq!(c.analysis.user_gpus.len(), 1, "the previous files stay in force");
        let problems = c.update(&json!({ "gpuFiles": ["/nonexistent/gpu.toml"] }));
        assert!(problems[0].contains("could not be read"), "{problems:?}");
    }

    /// `.warpsight/gpus/`: no folder is no files; only `*.toml` entries count, sorted; more
    /// than the limit is refused with the folder's name.
    #[test]
    fn workspace_gpu_files_are_listed_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(workspace_gpu_files(dir.path()), Ok(Vec::new()));
        let gpus = dir.path().join(WORKSPACE_GPU_DIR);
        std::fs::create_dir_all(gpus.join("nested.toml")).unwrap();
        for name in ["b.toml", "a.toml", "readme.md"] {
            std::fs::write(gpus.join(name), "").unwrap();
        }
        let files = workspace_gpu_files(dir.path()).unwrap();
        let names: Vec<String> = files.iter().map(|f| f.rsplit('/').next().unwrap().to_string()).collect();
        assert_eq!(names, ["a.toml", "b.toml"]);
        for i in 0..limits::MAX_GPU_FILES {
            std::fs::write(gpus.join(format!("g{i}.toml")), "").unwrap();
        }
        let e = workspace_gpu_files(dir.path()).unwrap_err();
        assert!(e.contains(".warpsight/gpus") && e.contains("more than 16"), "{e}");
    }
}
