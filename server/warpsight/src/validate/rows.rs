//! The measured-row format of `warpsight validate` (docs/validation.md § Row format):
//! CSV with a header row, a JSON array of objects, or JSON lines (one object per line).
//!
//! Every field is parsed by serde into a typed value, so a bad value is reported by the
//! CSV or JSON reader with its line: grid and block sizes, `NAME=VALUE` lists and the
//! measured time are validated while they are deserialised.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// One measured kernel launch, ready to analyse.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Where the row came from, for messages: `rows.csv:7`, `RTX_3090.json.gz [64,2,...]`.
    pub at: String,
    /// The `.cu` or `.ptx` file (relative paths already resolved against the rows file).
    pub source: PathBuf,
    /// The kernel: PTX name, demangled signature or base name (as `profile --kernel`).
    pub kernel: String,
    /// GPU id or alias, or a CUDA device name ("NVIDIA GeForce RTX 3090").
    pub gpu: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_smem: u32,
    /// Preprocessor definitions, `NAME` or `NAME=VALUE`, in the order given.
    pub defines: Vec<String>,
    /// Kernel argument values by parameter name.
    pub args: BTreeMap<String, i64>,
    /// The measured kernel time in milliseconds.
    pub time_ms: f64,
    /// The measured average board power while the kernel ran, in W.
    pub power_w: Option<f64>,
    pub label: Option<String>,
    pub group: Option<String>,
    pub source_of_measurement: Option<String>,
    /// Shared-memory carveout preference in percent (1 to 100).
    pub carveout: Option<u32>,
    /// Registers per thread as compiled (ptxas `-v`, Nsight Compute's
    /// `launch__registers_per_thread`); replaces the estimate.
    pub registers: Option<u32>,
    /// `.cu` only: the architecture to compile for (`sm_70`); default: the GPU's.
    pub arch: Option<String>,
    /// How the measured launches were made: `stream` (one by one into a stream, the
    /// default) or `graph` (captured in a CUDA graph: a smaller launch overhead).
    pub launch: LaunchMode,
    /// Bytes the kernel's data-dependent accesses range over (a pointer chase's buffer):
    /// the launch grammar's `footprint` (docs/cuda.md § Stating a launch).
    pub footprint: Option<u64>,
    /// The SM clock the kernel was timed at, where it was locked (`nvidia-smi
    /// --lock-gpu-clocks`, Kernel Tuner's `nvml_gr_clock`), in MHz: the models run at it
    /// (`gpu_spec::Gpu::with_locked_clock`).
    pub clock_mhz: Option<f64>,
}

/// How a row's kernel was launched when it was timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum LaunchMode {
    #[default]
    Stream,
    Graph,
}

impl TryFrom<String> for LaunchMode {
    type Error = String;
    fn try_from(v: String) -> Result<LaunchMode, String> {
        match v.trim().to_ascii_lowercase().as_str() {
            "stream" => Ok(LaunchMode::Stream),
            "graph" => Ok(LaunchMode::Graph),
            other => Err(format!("launch `{other}` is neither `stream` nor `graph`")),
        }
    }
}

/// Grid or block dimensions: `"64x256"`, `"128x2x1"`, `"64,256"`, `[64, 256]` or `64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims(pub [u32; 3]);

impl<'de> Deserialize<'de> for Dims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dims, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dims;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("dimensions X, XxY or XxYxZ (positive integers), or a list of 1 to 3 of them")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dims, E> {
                analysis::launch::parse_dims(s.trim())
                    .map(Dims)
                    .map_err(|e| E::custom(format!("`{s}` is not X, XxY or XxYxZ with positive integers ({e})")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dims, E> {
                match u32::try_from(v) {
                    Ok(x) if x > 0 => Ok(Dims([x, 1, 1])),
                    _ => Err(E::custom(format!("dimension {v} is not a positive 32-bit integer"))),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dims, E> {
                u64::try_from(v).map_err(|_| E::custom(format!("dimension {v} is not positive"))).and_then(|v| self.visit_u64(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Dims, A::Error> {
                let mut d = [1u32; 3];
                let mut n = 0;
                while let Some(v) = seq.next_element::<u64>()? {
                    if n == 3 {
                        return Err(de::Error::custom("more than 3 dimensions"));
                    }
                    d[n] = u32::try_from(v).ok().filter(|x| *x > 0).ok_or_else(|| de::Error::custom(format!("dimension {v} is not a positive 32-bit integer")))?;
                    n += 1;
                }
                if n == 0 {
                    return Err(de::Error::custom("no dimensions"));
                }
                Ok(Dims(d))
            }
        }
        d.deserialize_any(V)
    }
}

/// A value of a `NAME=VALUE` list given as a JSON object.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => u8::from(*b).to_string(),
            Scalar::Text(t) => t.clone(),
        }
    }
}

fn valid_name(name: &str) -> bool {
    let mut c = name.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `NAME[=VALUE]` items: `"A=1;B=2"` (also comma-separated in JSON lists), a JSON object
/// `{"A": 1, "B": "x"}` or a JSON list `["A=1", "B"]`. Names are C identifiers.
fn parse_items(s: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    for item in s.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, value) = match item.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
            None => (item, None),
        };
        if !valid_name(name) {
            return Err(format!("`{item}`: `{name}` is not a C identifier"));
        }
        out.push((name.to_string(), value));
    }
    Ok(out)
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Vec<(String, Option<String>)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`NAME=VALUE;NAME=VALUE`, an object of NAME: VALUE or a list of `NAME=VALUE` strings")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        parse_items(s).map_err(E::custom)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Scalar>()? {
            if !valid_name(&k) {
                return Err(de::Error::custom(format!("`{k}` is not a C identifier")));
            }
            out.push((k, Some(v.text())));
        }
        Ok(out)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(s) = seq.next_element::<String>()? {
            out.extend(parse_items(&s).map_err(de::Error::custom)?);
        }
        Ok(out)
    }
}

/// Preprocessor definitions (`-D`): `NAME` or `NAME=VALUE`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defines(pub Vec<String>);

impl<'de> Deserialize<'de> for Defines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Defines, D::Error> {
        let items = d.deserialize_any(ItemsVisitor)?;
        Ok(Defines(items.into_iter().map(|(n, v)| v.map_or(n.clone(), |v| format!("{n}={v}"))).collect()))
    }
}

/// Kernel argument values: integers or constant expressions (`1<<20`), by name; a
/// floating-point value (`a=2.5`) is accepted and left out, as `--arg` does.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args(pub BTreeMap<String, i64>);

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Args, D::Error> {
        let items = d.deserialize_any(ItemsVisitor)?;
        let mut out = BTreeMap::new();
        for (name, value) in items {
            let Some(value) = value else {
                return Err(de::Error::custom(format!("argument `{name}` has no value (expected NAME=VALUE)")));
            };
            match cuda_frontend::compile::parse_arg(&format!("{name}={value}")) {
                Some((_, analysis::launch::ArgValue::Int(v))) => {
                    out.insert(name, v);
                }
                // A floating-point value (`a=2.5`) is accepted and not used: the analysis
                // folds integer arguments only.
                Some((_, analysis::launch::ArgValue::Float(_))) => {}
                None => return Err(de::Error::custom(format!("argument `{name}={value}`: not an integer, constant expression or floating-point value"))),
            }
        }
        Ok(Args(out))
    }
}

/// A measured time in ms: finite and positive.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct Millis(pub f64);

impl TryFrom<f64> for Millis {
    type Error = String;
    fn try_from(v: f64) -> Result<Millis, String> {
        if v.is_finite() && v > 0.0 { Ok(Millis(v)) } else { Err(format!("time_ms {v} is not a positive number of milliseconds")) }
    }
}

/// A measured board power in W: finite and positive.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct Watts(pub f64);

impl TryFrom<f64> for Watts {
    type Error = String;
    fn try_from(v: f64) -> Result<Watts, String> {
        if v.is_finite() && v > 0.0 { Ok(Watts(v)) } else { Err(format!("power_w {v} is not a positive number of watts")) }
    }
}

/// A carveout percentage, 1 to 100.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "u32")]
pub struct Percent(pub u32);

impl TryFrom<u32> for Percent {
    type Error = String;
    fn try_from(v: u32) -> Result<Percent, String> {
        if (1..=100).contains(&v) { Ok(Percent(v)) } else { Err(format!("carveout {v} is not a percentage from 1 to 100")) }
    }
}

/// A locked SM clock in MHz ([`gpu_spec::gpu::check_locked_clock`]).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct ClockMhz(pub f64);

impl TryFrom<f64> for ClockMhz {
    type Error = String;
    fn try_from(v: f64) -> Result<ClockMhz, String> {
        gpu_spec::gpu::check_locked_clock(v).map(ClockMhz).map_err(|e| format!("clock_mhz {e}"))
    }
}

/// A `footprint` in bytes, 1 to 2^48.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "u64")]
pub struct FootprintBytes(pub u64);

impl TryFrom<u64> for FootprintBytes {
    type Error = String;
    fn try_from(v: u64) -> Result<FootprintBytes, String> {
        analysis::launch::parse_footprint(&v.to_string()).map(FootprintBytes).map_err(|e| format!("footprint {e}"))
    }
}

/// One row as written in a file (CSV column or JSON key names).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RowSpec {
    source: String,
    kernel: String,
    gpu: String,
    grid: Dims,
    block: Dims,
    #[serde(default)]
    dynamic_smem: Option<u32>,
    #[serde(default)]
    defines: Option<Defines>,
    #[serde(default)]
    args: Option<Args>,
    time_ms: Millis,
    #[serde(default)]
    power_w: Option<Watts>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    source_of_measurement: Option<String>,
    #[serde(default)]
    carveout: Option<Percent>,
    #[serde(default)]
    registers: Option<u32>,
    #[serde(default)]
    arch: Option<String>,
    #[serde(default)]
    launch: Option<LaunchMode>,
    #[serde(default)]
    footprint: Option<FootprintBytes>,
    #[serde(default)]
    clock_mhz: Option<ClockMhz>,
}

impl RowSpec {
    fn into_row(self, at: String, base: &Path) -> Row {
        let nonempty = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        Row {
            at,
            source: base.join(self.source.trim()),
            kernel: self.kernel.trim().to_string(),
            gpu: self.gpu.trim().to_string(),
            grid: self.grid.0,
            block: self.block.0,
            dynamic_smem: self.dynamic_smem.unwrap_or(0),
            defines: self.defines.unwrap_or_default().0,
            args: self.args.unwrap_or_default().0,
            time_ms: self.time_ms.0,
            power_w: self.power_w.map(|w| w.0),
            label: nonempty(self.label),
            group: nonempty(self.group),
            source_of_measurement: nonempty(self.source_of_measurement),
            carveout: self.carveout.map(|p| p.0),
            registers: self.registers,
            arch: nonempty(self.arch),
            launch: self.launch.unwrap_or_default(),
            footprint: self.footprint.map(|f| f.0),
            clock_mhz: self.clock_mhz.map(|c| c.0),
        }
    }
}

/// The format of a rows file, from its extension, else from its first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    JsonArray,
    JsonLines,
}

pub fn detect_format(path: &Path, text: &str) -> Format {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("csv") => Format::Csv,
        Some("jsonl" | "ndjson") => Format::JsonLines,
        _ => match text.trim_start().chars().next() {
            Some('[') => Format::JsonArray,
            Some('{') => Format::JsonLines,
            _ => Format::Csv,
        },
    }
}

/// Parses rows from `text` (the contents of `path`); relative `source` paths are
/// resolved against `path`'s directory. Errors name the file and line.
pub fn parse(path: &Path, text: &str) -> anyhow::Result<Vec<Row>> {
    let base = path.parent().unwrap_or(Path::new("."));
    let name = path.display();
    let mut rows = Vec::new();
    match detect_format(path, text) {
        Format::Csv => {
            let mut rd = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
            let headers = rd.headers().with_context(|| format!("{name}: cannot read the CSV header row"))?.clone();
            if headers.iter().all(|h| h.is_empty()) {
                bail!("{name}: no header row (expected columns source, kernel, gpu, grid, block, time_ms, ...)");
            }
            for record in rd.records() {
                let record = record.map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
                let line = record.position().map_or(0, |p| p.line());
                let spec: RowSpec = record.deserialize(Some(&headers)).map_err(|e| anyhow::anyhow!("{name}:{line}: {}", csv_message(&e)))?;
                rows.push(spec.into_row(format!("{name}:{line}"), base));
            }
        }
        Format::JsonArray => {
            let specs: Vec<RowSpec> = serde_json::from_str(text).map_err(|e| anyhow::anyhow!("{name}:{}: {e}", e.line()))?;
            // serde_json knows no line per element; count objects in order.
            for (i, spec) in specs.into_iter().enumerate() {
                rows.push(spec.into_row(format!("{name} row {}", i + 1), base));
            }
        }
        Format::JsonLines => {
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let spec: RowSpec = serde_json::from_str(line).map_err(|e| anyhow::anyhow!("{name}:{}: {e}", i + 1))?;
                rows.push(spec.into_row(format!("{name}:{}", i + 1), base));
            }
        }
    }
    Ok(rows)
}

/// The csv crate's deserialisation message without its own position prefix.
fn csv_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(_) => err.kind().to_string(),
            None => err.to_string(),
        },
        _ => e.to_string(),
    }
}

/// Reads and parses one rows file.
pub fn load(path: &Path) -> anyhow::Result<Vec<Row>> {
    let text = crate::input::read_text(path).map_err(|e| {
        let binary = matches!(e.downcast_ref::<cuda_frontend::files::ReadError>(), Some(cuda_frontend::files::ReadError::Binary { .. }));
        let gz = path.extension().is_some_and(|x| x.eq_ignore_ascii_case("gz"));
        if binary && gz {
            anyhow::anyhow!(
                "{}: gzip-compressed data, not a rows file; a Kernel Tuner cache is imported with `--kernel-tuner FILE` (one flag per file) and `--source`",
                path.display()
            )
        } else {
            e
        }
    })?;
    if let Some(hint) = misplaced_import(&text) {
        bail!("{}: not a rows file: {hint}", path.display());
    }
    parse(path, &text)
}

/// What an importer's file given as a rows file is, and the flag that reads it: a Kernel
/// Tuner cache (a JSON object with `tune_params_keys` and `cache`), a Kernel Tuner T4
/// results file (`results` of `configuration`s with their `invalidity`) or an Nsight Compute
/// raw-page export (a CSV header naming `Kernel Name` and `gpu__time_duration.sum`).
fn misplaced_import(text: &str) -> Option<&'static str> {
    let head = text.trim_start();
    if head.starts_with('{') && head.contains("\"tune_params_keys\"") && head.contains("\"cache\"") {
        return Some("it is a Kernel Tuner cache; import it with `--kernel-tuner FILE` (one flag per file) and `--source`");
    }
    if head.starts_with('{') && head.contains("\"results\"") && head.contains("\"configuration\"") && head.contains("\"invalidity\"") {
        return Some("it is a Kernel Tuner T4 results file; import it with `--kernel-tuner FILE`, `--source`, `--kernel` and `--problem-size`");
    }
    let header = text.lines().find(|l| l.contains("\"Kernel Name\""));
    if header.is_some_and(|l| l.contains("gpu__time_duration")) {
        return Some("it is an Nsight Compute export; import it with `--ncu FILE` and `--source`");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> anyhow::Result<Vec<Row>> {
        parse(Path::new("dir/rows.csv"), text)
    }

    #[test]
    fn csv_rows_with_every_field() {
        let rows = csv(
            "source,kernel,gpu,grid,block,dynamic_smem,defines,args,time_ms,label,group,source_of_measurement,carveout,registers,arch,launch\n\
             k.cu,scale,a100,64x256,128x2x1,1024,A=1;B,n=1<<20;m=3;a=2.5,0.5,cfg1,scale,ncu,9,32,sm_70,Graph\n\
             k.ptx,scale,NVIDIA A40,4096,256,,,,2,,,,,,,\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        let r = &rows[0];
        assert_eq!(r.at, "dir/rows.csv:2");
        assert_eq!(r.source, Path::new("dir/k.cu"));
        assert_eq!((r.grid, r.block, r.dynamic_smem), ([64, 256, 1], [128, 2, 1], 1024));
        assert_eq!(r.defines, ["A=1", "B"]);
        assert_eq!(r.args, [("m".to_string(), 3), ("n".to_string(), 1 << 20)].into(), "a=2.5 is accepted and left out");
        assert_eq!((r.time_ms, r.carveout, r.registers), (0.5, Some(9), Some(32)));
        assert_eq!((r.label.as_deref(), r.group.as_deref(), r.arch.as_deref()), (Some("cfg1"), Some("scale"), Some("sm_70")));
        assert_eq!(r.launch, LaunchMode::Graph);
        let r = &rows[1];
        assert_eq!(r.launch, LaunchMode::Stream);
        assert_eq!((r.grid, r.block, r.dynamic_smem), ([4096, 1, 1], [256, 1, 1], 0));
        assert!(r.defines.is_empty() && r.args.is_empty() && r.label.is_none() && r.carveout.is_none());
        assert_eq!(r.gpu, "NVIDIA A40");
    }

    #[test]
    fn json_array_and_json_lines() {
        let arr = r#"[
          {"source": "k.cu", "kernel": "scale", "gpu": "a100", "grid": [64, 256], "block": "128",
           "defines": {"A": 1, "T": "float"}, "args": {"n": "1<<10", "alpha": 0.5}, "time_ms": 0.25},
          {"source": "k.cu", "kernel": "scale", "gpu": "a100", "grid": 8, "block": [32, 4],
           "defines": ["X=2", "Y"], "time_ms": 1}
        ]"#;
        let rows = parse(Path::new("r.json"), arr).unwrap();
        assert_eq!(rows[0].grid, [64, 256, 1]);
        assert_eq!(rows[0].defines, ["A=1", "T=float"]);
        // A floating-point argument is accepted and left out (launch_spec::ArgValue::Float).
        assert_eq!(rows[0].args, [("n".to_string(), 1024)].into());
        assert_eq!((rows[1].grid, rows[1].block), ([8, 1, 1], [32, 4, 1]));
        assert_eq!(rows[1].defines, ["X=2", "Y"]);
        assert_eq!(rows[1].at, "r.json row 2");
        let lines = "{\"source\":\"k.ptx\",\"kernel\":\"k\",\"gpu\":\"a40\",\"grid\":\"2x2\",\"block\":\"32\",\"time_ms\":3}\n\n\
                     {\"source\":\"k.ptx\",\"kernel\":\"k\",\"gpu\":\"a40\",\"grid\":\"4\",\"block\":\"32\",\"time_ms\":4}\n";
        let rows = parse(Path::new("r.jsonl"), lines).unwrap();
        assert_eq!(rows.iter().map(|r| r.at.as_str()).collect::<Vec<_>>(), ["r.jsonl:1", "r.jsonl:3"]);
    }

    #[test]
    fn bad_rows_name_their_line() {
        let head = "source,kernel,gpu,grid,block,time_ms\n";
        let err = |body: &str| csv(&format!("{head}{body}")).unwrap_err().to_string();
        let e = err("k.cu,k,a100,64,256,1\nk.cu,k,a100,64y2,256,1\n");
        assert!(e.starts_with("dir/rows.csv:3:") && e.contains("64y2"), "{e}");
        let e = err("k.cu,k,a100,64,256,-1\n");
        assert!(e.starts_with("dir/rows.csv:2:") && e.contains("positive"), "{e}");
        let e = err("k.cu,k,a100,64,256,fast\n");
        assert!(e.starts_with("dir/rows.csv:2:"), "{e}");
        let e = err("k.cu,k,a100,0,256,1\n");
        assert!(e.contains("positive"), "{e}");
        let e = err("k.cu,k,a100,64,256\n");
        assert!(e.contains("rows.csv"), "{e}");
        // A misspelt column is an error, not a silently ignored field.
        let e = csv("source,kernel,gpu,grid,block,time_ms,dynamic_shmem\nk.cu,k,a100,1,1,1,0\n").unwrap_err().to_string();
        assert!(e.contains("dynamic_shmem"), "{e}");
        let e = csv("source,kernel,gpu,grid,block,time_ms,args\nk.cu,k,a100,1,1,1,n\n").unwrap_err().to_string();
        assert!(e.contains("rows.csv:2") && e.contains("no value"), "{e}");
        let e = csv("source,kernel,gpu,grid,block,time_ms,defines\nk.cu,k,a100,1,1,1,1A=2\n").unwrap_err().to_string();
        assert!(e.contains("C identifier"), "{e}");
        let e2 = csv("source,kernel,gpu,grid,block,time_ms,launch\nk.cu,k,a100,1,1,1,pipe\n").unwrap_err().to_string();
        assert!(e2.contains("neither `stream` nor `graph`"), "{e2}");
        let e = csv("source,kernel,gpu,grid,block,time_ms,carveout\nk.cu,k,a100,1,1,1,0\n").unwrap_err().to_string();
        assert!(e.contains("1 to 100"), "{e}");
        // A locked clock is optional, in MHz, from 1 to 10000.
        let r = csv("source,kernel,gpu,grid,block,time_ms,clock_mhz\nk.cu,k,a100,1,1,1,1410\nk.cu,k,a100,1,1,1,\n").unwrap();
        assert_eq!((r[0].clock_mhz, r[1].clock_mhz), (Some(1410.0), None));
        let e = csv("source,kernel,gpu,grid,block,time_ms,clock_mhz\nk.cu,k,a100,1,1,1,0\n").unwrap_err().to_string();
        assert!(e.contains("rows.csv:2") && e.contains("clock_mhz"), "{e}");
        // A measured power is optional, in watts, and positive.
        let r = csv("source,kernel,gpu,grid,block,time_ms,power_w\nk.cu,k,a100,1,1,1,250.5\nk.cu,k,a100,1,1,1,\n").unwrap();
        assert_eq!((r[0].power_w, r[1].power_w), (Some(250.5), None));
        let e = csv("source,kernel,gpu,grid,block,time_ms,power_w\nk.cu,k,a100,1,1,1,-3\n").unwrap_err().to_string();
        assert!(e.contains("rows.csv:2") && e.contains("watts"), "{e}");
        let e = parse(Path::new("r.json"), "[\n{\"source\":\"k\",\"kernel\":\"k\",\"gpu\":\"g\",\n\"grid\":\"1x\",\"block\":1,\"time_ms\":1}]").unwrap_err().to_string();
        assert!(e.starts_with("r.json:3:"), "{e}");
        let e = parse(Path::new("r.jsonl"), "{}\n").unwrap_err().to_string();
        assert!(e.starts_with("r.jsonl:1:") && e.contains("missing field"), "{e}");
        assert!(csv("").is_err());
    }
}
