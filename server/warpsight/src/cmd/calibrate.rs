//! `warpsight calibrate FILE... --gpu ID`: fits the `bottleneck` model's calibratable
//! parameters for one GPU to the user's own measured kernel times and writes a GPU file
//! that `--gpu-file` (and the editor's `gpuFiles` setting) load (docs/cli.md § calibrate,
//! docs/models/bottleneck.md).
//!
//! The rows are read and analysed exactly as `warpsight validate` does (same formats,
//! importers and options). With `--hold-out-every K`, every K-th row of the GPU is kept out
//! of the fit and the error on those rows is reported before and after, so a user can see
//! whether the fit carries to kernels it has not seen.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use perf_models::bottleneck::{self, Params, calibrate};
use serde::Serialize;

use crate::cmd::Exit;
use crate::cmd::validate as v;
use crate::validate::run;

#[derive(clap::Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub rows: v::Args,
    /// Where to write the calibrated GPU file (default: `<gpu id>.calibrated.toml`).
    #[arg(long, short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Keep every K-th row of the GPU out of the fit and report the error on them.
    #[arg(long = "hold-out-every", value_name = "K")]
    pub hold_out_every: Option<usize>,
}

/// What the fit did, for the table and `--format json`.
#[derive(Debug, Serialize)]
pub struct CalibrationReport {
    pub gpu: String,
    pub fitted_rows: usize,
    pub held_out_rows: usize,
    pub parameters: Vec<ParamChange>,
    pub fit: ErrorPair,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_out: Option<ErrorPair>,
    pub output: String,
}

#[derive(Debug, Serialize)]
pub struct ParamChange {
    pub key: String,
    pub before: f64,
    pub after: f64,
}

/// Errors of the uncalibrated and the calibrated model on a set of rows.
#[derive(Debug, Serialize, Clone, Copy)]
pub struct ErrorPair {
    pub n: usize,
    pub mape_before: f64,
    pub mape_after: f64,
    pub median_ratio_before: f64,
    pub median_ratio_after: f64,
    /// The mean absolute log ratio `|ln(predicted / measured)|`, the error the fit minimises
    /// (`perf_models::bottleneck::calibrate`).
    pub log_error_before: f64,
    pub log_error_after: f64,
}

fn errors(samples: &[calibrate::Sample<'_>], before: &Params, after: &Params) -> ErrorPair {
    let ratios = |p: &Params| -> Vec<f64> {
        samples
            .iter()
            .filter_map(|s| bottleneck::estimate(s.profile, p, s.resident_blocks_per_sm, &s.caches).map(|e| e.time_us / s.measured_us))
            .filter(|r| r.is_finite())
            .collect()
    };
    let mape = |r: &[f64]| if r.is_empty() { f64::NAN } else { r.iter().map(|x| (x - 1.0).abs()).sum::<f64>() / r.len() as f64 };
    let median = |r: &[f64]| analysis::validation::median(r).unwrap_or(f64::NAN);
    let (rb, ra) = (ratios(before), ratios(after));
    ErrorPair {
        n: ra.len(),
        mape_before: mape(&rb),
        mape_after: mape(&ra),
        median_ratio_before: median(&rb),
        median_ratio_after: median(&ra),
        log_error_before: calibrate::mean_abs_log_error(samples, before),
        log_error_after: calibrate::mean_abs_log_error(samples, after),
    }
}

/// The text of one GPU's entry in the built-in data (`[[gpu]]` up to the next entry).
fn builtin_entry(id: &str) -> Option<String> {
    // Only the GPU files hold `[[gpu]]` entries; `paper-gpus.toml` names some of the same ids
    // for the papers' GPUs.
    for (_, text) in gpu_spec::db::BUILTIN_FILES.iter().filter(|(name, _)| name.starts_with("gpus/")) {
        let needle = format!("\nid = \"{id}\"\n");
        let Some(at) = text.find(&needle) else { continue };
        let Some(start) = text[..at].rfind("[[gpu]]") else { continue };
        let rest = &text[at..];
        let end = rest.find("[[gpu]]").map_or(text.len(), |e| at + e);
        return Some(text[start..end].trim_end().to_string());
    }
    None
}

/// The calibrated GPU file: the built-in entry with the fitted model parameters and launch
/// overhead as overrides, each with its provenance.
fn gpu_file(gpu: &gpu_spec::Gpu, fit: &calibrate::Fit, from: &str) -> anyhow::Result<String> {
    let entry = builtin_entry(&gpu.id).with_context(|| format!("no built-in entry for `{}` to calibrate", gpu.id))?;
    let src = format!(
        "derived: fitted by warpsight calibrate on {} measurements ({from}); mean |ln(predicted/measured)| {:.3} -> {:.3}",
        fit.used, fit.mean_abs_log_error_before, fit.mean_abs_log_error_after
    )
    .replace('"', "'");
    let line = |(k, val): (&str, f64)| format!("\"{k}\" = {{ v = {val}, src = \"{src}\" }}");
    let lines: Vec<String> = calibrate::model_params(fit).into_iter().map(line).collect();
    let fields: Vec<String> = calibrate::gpu_overrides(fit).into_iter().map(line).collect();
    // The fitted fields go into the entry's `[gpu.overrides]` (none of the built-in entries
    // overrides them), the model parameters into `[gpu.overrides.model_params]`; a table
    // the entry lacks is added at its end (TOML lets a table follow its sub-table).
    let insert = |entry: String, header: &str, lines: &[String]| -> String {
        let at = entry.match_indices(header).map(|(at, _)| at + header.len()).find(|after| entry[*after..].starts_with('\n') || *after == entry.len());
        match at {
            Some(after) => format!("{}\n{}{}", &entry[..after], lines.join("\n"), &entry[after..]),
            None => format!("{entry}\n\n{header}\n{}", lines.join("\n")),
        }
    };
    let body = insert(entry, "[gpu.overrides.model_params]", &lines);
    let body = insert(body, "[gpu.overrides]", &fields);
    Ok(format!(
        "# A calibrated copy of the built-in entry `{}` (warpsight calibrate). Load it with\n# `warpsight analyze --gpu-file FILE --gpu {}` or the editor's `gpuFiles` setting.\n\n{body}\n",
        gpu.id, gpu.id
    ))
}

pub fn run(args: CalibrateArgs) -> anyhow::Result<Exit> {
    let Some(gpu_name) = args.rows.gpu.clone() else {
        bail!("calibrate needs the GPU to calibrate: --gpu ID");
    };
    let gpu = run::resolve_gpu(&gpu_name).map_err(|e| anyhow::anyhow!(e))?;
    if args.hold_out_every == Some(0) || args.hold_out_every == Some(1) {
        bail!("--hold-out-every must be at least 2");
    }
    let (results, _notes) = v::load_and_analyse_where(&args.rows, |row| run::resolve_gpu(&row.gpu).is_ok_and(|g| g.id == gpu.id))?;
    // The rows of this GPU that were analysed, with what the model needs.
    let mut fit_samples = Vec::new();
    let mut held_samples = Vec::new();
    let mut k = 0usize;
    for r in &results {
        let run::Outcome::Analysed(a) = &r.outcome else { continue };
        if a.target.gpu.id != gpu.id {
            continue;
        }
        let Ok(occ) = &a.target.occupancy else { continue };
        let sample = calibrate::Sample {
            profile: &a.target.profile,
            resident_blocks_per_sm: occ.blocks_per_sm,
            caches: bottleneck::cache_config(&a.target.gpu, &a.target.profile, occ.blocks_per_sm),
            measured_us: r.row.time_ms * 1000.0,
        };
        k += 1;
        match args.hold_out_every {
            Some(every) if k.is_multiple_of(every) => held_samples.push(sample),
            _ => fit_samples.push(sample),
        }
    }
    if fit_samples.len() < 3 {
        bail!("{} analysed rows on {} to fit: at least 3 are needed", fit_samples.len(), gpu.id);
    }
    let base = Params::from_gpu(gpu);
    let fit = calibrate::fit(&fit_samples, &base);
    let from: Vec<String> = args.rows.files.iter().map(|p| p.display().to_string()).collect();
    let text = gpu_file(gpu, &fit, &from.join(", "))?;
    // The file must load, with the same checks as any GPU file.
    gpu_spec::Database::with_user_files(&[("calibrated.toml", &text)]).map_err(|e| {
        anyhow::anyhow!("the calibrated file does not load (a bug): {}", e.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("; "))
    })?;
    let output = args.output.clone().unwrap_or_else(|| PathBuf::from(format!("{}.calibrated.toml", gpu.id)));
    std::fs::write(&output, &text).with_context(|| format!("writing {}", output.display()))?;

    let parameters = calibrate::calibratable(&base)
        .into_iter()
        .zip(calibrate::calibratable(&fit.params))
        .map(|((key, before), (_, after))| ParamChange { key: key.into(), before, after })
        .collect();
    let report = CalibrationReport {
        gpu: gpu.id.clone(),
        fitted_rows: fit_samples.len(),
        held_out_rows: held_samples.len(),
        parameters,
        fit: errors(&fit_samples, &base, &fit.params),
        held_out: (!held_samples.is_empty()).then(|| errors(&held_samples, &base, &fit.params)),
        output: output.display().to_string(),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.rows.format {
        v::Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        v::Format::Table => {
            writeln!(out, "calibrated {} on {} measured rows", report.gpu, report.fitted_rows)?;
            writeln!(out, "  {:<34} {:>12} {:>12}", "parameter", "before", "after")?;
            for p in &report.parameters {
                writeln!(out, "  {:<34} {:>12.4} {:>12.4}", p.key, p.before, p.after)?;
            }
            let row = |out: &mut dyn Write, what: &str, e: &ErrorPair| {
                writeln!(
                    out,
                    "  {what:<10} n={:<5} MAPE {:>6.1} % -> {:>6.1} %   median predicted/measured {:.2} -> {:.2}   mean |ln ratio| {:.3} -> {:.3}",
                    e.n,
                    e.mape_before * 100.0,
                    e.mape_after * 100.0,
                    e.median_ratio_before,
                    e.median_ratio_after,
                    e.log_error_before,
                    e.log_error_after
                )
            };
            row(&mut out, "fitted", &report.fit)?;
            if let Some(h) = &report.held_out {
                row(&mut out, "held out", h)?;
            }
            writeln!(out, "  wrote {} (load it with --gpu-file)", report.output)?;
        }
    }
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::builtin_entry;

    /// The entry is the GPU's own `[[gpu]]` table, even where `paper-gpus.toml` names the
    /// same id first (the A100 80 GB), and only that one.
    #[test]
    fn the_builtin_entry_is_the_gpus_own_table() {
        for id in ["a100-sxm4-80gb", "a40", "rtx-2080-ti"] {
            let e = builtin_entry(id).unwrap_or_else(|| panic!("{id}: no entry"));
            assert!(e.starts_with("[[gpu]]"), "{id}: {e}");
            assert!(e.contains(&format!("\nid = \"{id}\"\n")), "{id}: {e}");
            assert_eq!(e.matches("[[gpu]]").count(), 1, "{id}: {e}");
        }
        assert!(builtin_entry("a100").is_none(), "an alias is not an id");
    }
}
