//! Importer for Nsight Compute CSV exports of the raw page: `ncu --csv --page raw
//! --metrics gpu__time_duration.sum,... ./app` (or `ncu --import report.ncu-rep --csv
//! --page raw`).
//!
//! Layout, per NVIDIA's Nsight Compute CLI User Guide (docs.nvidia.com/nsight-compute,
//! "NsightComputeCli": "Output Pages" for the raw page, "Console Output" for `--csv`,
//! `--page` and `--print-units`), cross-checked against raw-page CSVs published in public
//! repositories: ncu's own log lines (`==PROF==`, `==WARNING==`, the application's
//! output) may come first; then a header row of quoted column names, the launch columns
//! `"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block
//! Size","Grid Size","Device","CC"` followed by one column per metric; then a row of
//! units (empty under the launch columns; `--csv` prints base units, e.g. `nsecond`,
//! unless `--print-units auto` scales them); then one row per profiled launch, with
//! block and grid written `(256, 1, 1)`. Numbers may carry thousands separators
//! (`1,234.5`). Older exports have no block and grid columns; their `launch__block_size`
//! and `launch__grid_size` metrics are used instead (as 1-D sizes).
//!
//! Used: `Kernel Name`, `Block Size`, `Grid Size`, `gpu__time_duration.sum` (required),
//! `device__attribute_display_name` (the GPU, unless the import names one),
//! `launch__registers_per_thread` and `launch__shared_mem_per_block_dynamic` when present.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;

use super::rows::{Args, Defines, Row};

/// A `kind = "ncu"` import, or the `--ncu` flags.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Import {
    pub files: Vec<PathBuf>,
    /// The source the profiled kernels come from (`.cu` or `.ptx`).
    pub source: PathBuf,
    /// Only rows of this kernel (matched like `--kernel`); default: every row.
    #[serde(default)]
    pub kernel: Option<String>,
    /// The GPU, when the export has no `device__attribute_display_name` column.
    #[serde(default)]
    pub gpu: Option<String>,
    #[serde(default)]
    pub defines: Option<Defines>,
    #[serde(default)]
    pub args: Option<Args>,
    /// Group name (default: the kernel name as ncu prints it).
    #[serde(default)]
    pub group: Option<String>,
    #[serde(default)]
    pub arch: Option<String>,
}

/// One profiled launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// The file line of the launch's row.
    pub line: u64,
    pub id: String,
    pub kernel: String,
    pub block: [u32; 3],
    pub grid: [u32; 3],
    pub device: Option<String>,
    pub time_ms: f64,
    pub registers: Option<u32>,
    pub dynamic_smem: Option<u32>,
}

/// `1,234.5` → 1234.5.
fn number(s: &str) -> Option<f64> {
    let t: String = s.trim().chars().filter(|c| *c != ',').collect();
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Seconds per unit of a duration.
fn duration_unit(u: &str) -> Option<f64> {
    Some(match u.trim() {
        "nsecond" | "ns" => 1e-9,
        "usecond" | "us" | "µs" => 1e-6,
        "msecond" | "ms" => 1e-3,
        "second" | "s" => 1.0,
        _ => return None,
    })
}

/// Bytes per unit of a size (ncu's are SI: `Kbyte` is 1000 bytes).
fn bytes_unit(u: &str) -> Option<f64> {
    Some(match u.trim() {
        "" | "byte" | "B" => 1.0,
        "Kbyte" | "KB" => 1e3,
        "Mbyte" | "MB" => 1e6,
        "Gbyte" | "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        _ => return None,
    })
}

/// `(256, 1, 1)` → [256, 1, 1].
fn tuple(s: &str) -> Option<[u32; 3]> {
    let inner = s.trim().trim_start_matches('(').trim_end_matches(')');
    let mut d = [1u32; 3];
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    for (i, p) in parts.iter().enumerate() {
        d[i] = p.parse::<u32>().ok().filter(|v| *v > 0)?;
    }
    Some(d)
}

/// Parses the text of one export. `name` is used in messages.
pub fn parse(name: &str, text: &str) -> anyhow::Result<Vec<Launch>> {
    // Skip ncu's and the application's lines before the header.
    let mut offset = 0;
    let mut skipped_lines = 0u64;
    let mut found = false;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("\"ID\"") {
            found = true;
            break;
        }
        offset += line.len();
        skipped_lines += 1;
    }
    if !found {
        bail!("{name}: no Nsight Compute CSV header (a row starting with \"ID\"); export with `ncu --csv --page raw`");
    }
    let mut rd = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(&text.as_bytes()[offset..]);
    let headers = rd.headers().with_context(|| format!("{name}: unreadable header row"))?.clone();
    let col: HashMap<&str, usize> = headers.iter().enumerate().map(|(i, h)| (h.trim(), i)).collect();
    if col.contains_key("Metric Name") {
        bail!("{name}: this is the details page (one metric per row); export the raw page: `ncu --csv --page raw`");
    }
    let need = |c: &str| col.get(c).copied().with_context(|| format!("{name}: no `{c}` column (header: {})", headers.iter().collect::<Vec<_>>().join(", ")));
    let c_id = need("ID")?;
    let c_kernel = need("Kernel Name")?;
    let c_time = need("gpu__time_duration.sum")?;
    let c_block = col.get("Block Size").copied();
    let c_grid = col.get("Grid Size").copied();
    let c_block_1d = col.get("launch__block_size").copied();
    let c_grid_1d = col.get("launch__grid_size").copied();
    let c_device = col.get("device__attribute_display_name").copied();
    let c_regs = col.get("launch__registers_per_thread").copied();
    let c_dyn = col.get("launch__shared_mem_per_block_dynamic").copied();
    if c_block.is_none() && c_block_1d.is_none() {
        bail!("{name}: neither a `Block Size` column nor the `launch__block_size` metric");
    }
    if c_grid.is_none() && c_grid_1d.is_none() {
        bail!("{name}: neither a `Grid Size` column nor the `launch__grid_size` metric");
    }
    let mut units: Option<csv::StringRecord> = None;
    let mut out = Vec::new();
    for rec in rd.records() {
        let rec = rec.with_context(|| format!("{name}: unreadable CSV"))?;
        let line = skipped_lines + rec.position().map_or(0, |p| p.line());
        let get = |c: usize| rec.get(c).unwrap_or("").trim();
        if get(c_id).is_empty() {
            // The units row (no launch ID).
            if units.is_none() && out.is_empty() {
                units = Some(rec.clone());
                continue;
            }
            bail!("{name}:{line}: a row without a launch ID");
        }
        let unit = |c: usize| units.as_ref().and_then(|u| u.get(c)).unwrap_or("").trim().to_string();
        let at = |what: &str| format!("{name}:{line}: {what}");
        let time_unit = unit(c_time);
        let scale = if time_unit.is_empty() { 1e-9 } else { duration_unit(&time_unit).ok_or_else(|| anyhow::anyhow!(at(&format!("unknown duration unit `{time_unit}`"))))? };
        let t = number(get(c_time)).filter(|v| *v > 0.0).ok_or_else(|| anyhow::anyhow!(at(&format!("gpu__time_duration.sum `{}` is not a positive number", get(c_time)))))?;
        let dims = |tuple_col: Option<usize>, flat_col: Option<usize>, what: &str| -> anyhow::Result<[u32; 3]> {
            if let Some(c) = tuple_col {
                return tuple(get(c)).ok_or_else(|| anyhow::anyhow!(at(&format!("{what} `{}` is not (X, Y, Z)", get(c)))));
            }
            let c = flat_col.expect("checked above");
            number(get(c)).filter(|v| *v >= 1.0 && *v <= f64::from(u32::MAX) && v.fract() == 0.0).map(|v| [v as u32, 1, 1]).ok_or_else(|| anyhow::anyhow!(at(&format!("{what} `{}` is not a positive integer", get(c)))))
        };
        let block = dims(c_block, c_block_1d, "block size")?;
        let grid = dims(c_grid, c_grid_1d, "grid size")?;
        let registers = match c_regs {
            Some(c) if !get(c).is_empty() => Some(number(get(c)).filter(|v| *v >= 0.0 && v.fract() == 0.0).ok_or_else(|| anyhow::anyhow!(at("launch__registers_per_thread is not an integer")))? as u32),
            _ => None,
        };
        let dynamic_smem = match c_dyn {
            Some(c) if !get(c).is_empty() => {
                let u = unit(c);
                let f = bytes_unit(&u).ok_or_else(|| anyhow::anyhow!(at(&format!("unknown size unit `{u}`"))))?;
                let v = number(get(c)).filter(|v| *v >= 0.0).ok_or_else(|| anyhow::anyhow!(at("launch__shared_mem_per_block_dynamic is not a number")))?;
                Some((v * f).round() as u32)
            }
            _ => None,
        };
        out.push(Launch {
            line,
            id: get(c_id).to_string(),
            kernel: get(c_kernel).to_string(),
            block,
            grid,
            device: c_device.map(|c| get(c).to_string()).filter(|d| !d.is_empty()),
            time_ms: t * scale * 1e3,
            registers,
            dynamic_smem,
        });
    }
    Ok(out)
}

/// Turns the exports of one import into rows (relative paths against `base`).
pub fn import(imp: &Import, base: &Path) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for f in &imp.files {
        let path = super::resolve(base, f);
        let text = crate::input::read_text(&path)?;
        let name = path.display().to_string();
        for l in parse(&name, &text)? {
            if imp.kernel.as_deref().is_some_and(|k| !ptx::demangle::kernel_matches(&l.kernel, Some(&l.kernel), k)) {
                continue;
            }
            let Some(gpu) = imp.gpu.clone().or(l.device.clone()) else {
                bail!("{name}:{}: no device name in the export (no device__attribute_display_name column); give the GPU", l.line);
            };
            rows.push(Row {
                at: format!("{name}:{}", l.line),
                source: super::resolve(base, &imp.source),
                kernel: imp.kernel.clone().unwrap_or_else(|| l.kernel.clone()),
                gpu,
                grid: l.grid,
                block: l.block,
                dynamic_smem: l.dynamic_smem.unwrap_or(0),
                defines: imp.defines.clone().unwrap_or_default().0,
                args: imp.args.clone().unwrap_or_default().0,
                time_ms: l.time_ms,
                power_w: None,
                label: Some(format!("ID {}", l.id)),
                group: Some(imp.group.clone().unwrap_or_else(|| l.kernel.clone())),
                source_of_measurement: Some(format!("Nsight Compute gpu__time_duration.sum, {}", path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned()))),
                carveout: None,
                launch: super::rows::LaunchMode::Stream,
                footprint: None,
                clock_mhz: None,
                registers: l.registers,
                arch: imp.arch.clone(),
            });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw-page export as `ncu --csv --page raw --metrics gpu__time_duration.sum,
    /// launch__registers_per_thread,launch__shared_mem_per_block_dynamic,
    /// device__attribute_display_name` writes it (hand-made, numbers invented).
    const RAW: &str = "==PROF== Connected to process 4242 (/tmp/app)\n\
==PROF== Profiling \"vadd\" - 0: 0%....50%....100% - 1 pass\n\
result ok\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"device__attribute_display_name\",\"gpu__time_duration.sum\",\"launch__registers_per_thread\",\"launch__shared_mem_per_block_dynamic\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"register/thread\",\"byte\"\n\
\"0\",\"4242\",\"app\",\"127.0.0.1\",\"vadd(const float *, const float *, float *, int)\",\"1\",\"7\",\"(256, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"8.0\",\"NVIDIA A100-SXM4-80GB\",\"12,288\",\"16\",\"0\"\n\
\"1\",\"4242\",\"app\",\"127.0.0.1\",\"void scale<float>(float *, int)\",\"1\",\"7\",\"(128, 2, 1)\",\"(64, 8, 1)\",\"0\",\"8.0\",\"NVIDIA A100-SXM4-80GB\",\"3,500.5\",\"24\",\"1,024\"\n";

    #[test]
    fn raw_page_launches() {
        let l = parse("p.csv", RAW).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].kernel, "vadd(const float *, const float *, float *, int)");
        assert_eq!((l[0].block, l[0].grid), ([256, 1, 1], [4096, 1, 1]));
        assert!((l[0].time_ms - 0.012288).abs() < 1e-12);
        assert_eq!(l[0].device.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
        assert_eq!((l[0].registers, l[0].dynamic_smem), (Some(16), Some(0)));
        assert_eq!(l[0].line, 6);
        assert_eq!((l[1].block, l[1].grid, l[1].dynamic_smem), ([128, 2, 1], [64, 8, 1], Some(1024)));
        assert!((l[1].time_ms - 0.0035005).abs() < 1e-12);
    }

    #[test]
    fn scaled_units_and_old_exports() {
        // `--print-units auto`: a time in microseconds; no Block/Grid Size columns.
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"launch__block_size\",\"launch__grid_size\"\n\
                    \"\",\"\",\"usecond\",\"\",\"\"\n\
                    \"0\",\"k\",\"2.5\",\"256\",\"1,024\"\n";
        let l = parse("old.csv", text).unwrap();
        assert_eq!((l[0].block, l[0].grid), ([256, 1, 1], [1024, 1, 1]));
        assert!((l[0].time_ms - 0.0025).abs() < 1e-15);
    }

    #[test]
    fn clear_errors() {
        let e = parse("x.csv", "hello\n").unwrap_err().to_string();
        assert!(e.contains("no Nsight Compute CSV header"), "{e}");
        let details = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
        assert!(parse("d.csv", details).unwrap_err().to_string().contains("details page"));
        let no_time = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\"\n";
        assert!(parse("t.csv", no_time).unwrap_err().to_string().contains("gpu__time_duration.sum"));
        let bad = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n\"\",\"\",\"\",\"\",\"nsecond\"\n\"0\",\"k\",\"(256, 1, 1)\",\"(8, 1, 1)\",\"n/a\"\n";
        let e = parse("b.csv", bad).unwrap_err().to_string();
        assert!(e.starts_with("b.csv:3:") && e.contains("n/a"), "{e}");
        let unit = bad.replace("nsecond", "fortnight").replace("n/a", "5");
        assert!(parse("u.csv", &unit).unwrap_err().to_string().contains("fortnight"));
    }

    #[test]
    fn rows_take_the_device_and_filter_kernels() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.csv"), RAW).unwrap();
        let imp = Import { files: vec!["p.csv".into()], source: "app.cu".into(), kernel: Some("scale".into()), ..Import::default() };
        let rows = import(&imp, dir.path()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].gpu, "NVIDIA A100-SXM4-80GB");
        assert_eq!(rows[0].kernel, "scale");
        assert_eq!(rows[0].registers, Some(24));
        assert_eq!(rows[0].label.as_deref(), Some("ID 1"));
        let all = Import { kernel: None, ..imp };
        assert_eq!(import(&all, dir.path()).unwrap().len(), 2);
    }
}
