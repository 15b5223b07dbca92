//! `warpsight predict PROFILE.json --gpu ID [--model NAME] [--json]`: the execution-time
//! models on an explicit profile, so a paper's published inputs (or a profile edited by
//! hand) can be fed directly (docs/models.md).

use std::path::PathBuf;

use std::collections::BTreeMap;

use analysis::report::{HeadlineReport, PredictionReport};
use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};

use crate::cmd::Exit;

#[derive(clap::Args)]
pub struct Args {
    /// A profile in the JSON form of docs/profile.md (as `warpsight profile` prints it).
    pub profile: PathBuf,
    /// The GPU (default: the profile's own `gpu`).
    #[arg(long)]
    pub gpu: Option<String>,
    /// Only this model: mwp_cwp, wave, bsp, cgpredict, scheduling or roofline.
    #[arg(long)]
    pub model: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `predict --json`: the `predictions` and `headline` objects of the report's `TARGET`
/// (docs/cli.md), for one kernel's profile on one GPU.
#[derive(Serialize, Deserialize)]
struct PredictReport {
    kernel: String,
    gpu: String,
    predictions: BTreeMap<String, PredictionReport>,
    /// Model → why it did not apply (also in `headline`, as in the report).
    not_applicable: BTreeMap<String, String>,
    headline: HeadlineReport,
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let text = crate::input::read_text(&args.profile)?;
    let profile: kernel_profile::KernelProfile =
        serde_json::from_str(&text).with_context(|| format!("{} is not a valid profile (docs/profile.md)", args.profile.display()))?;
    let id = args.gpu.clone().unwrap_or_else(|| profile.gpu.clone());
    let db = gpu_spec::Database::builtin();
    let gpu = match db.gpu(&id) {
        Ok(g) => g,
        Err(e) => bail!("{e}"),
    };
    if let Some(m) = &args.model
        && !perf_models::consensus::MODELS.contains(&m.as_str()) {
            bail!("unknown model `{m}` (models: {})", perf_models::consensus::MODELS.join(", "));
        }
    let report = match perf_models::run_all_for_gpu(&profile, gpu, &perf_models::ModelConfig::uncalibrated()) {
        Ok(r) => r,
        Err(why) => bail!("{why}"),
    };
    let wanted = |name: &str| args.model.as_deref().is_none_or(|m| m == name);
    if args.json {
        let out = PredictReport {
            kernel: profile.kernel.clone(),
            gpu: gpu.id.clone(),
            predictions: PredictionReport::all(&report, wanted),
            not_applicable: report.not_applicable.iter().filter(|(m, _)| wanted(m)).map(|(m, why)| (m.to_string(), why.clone())).collect(),
            headline: HeadlineReport::new(&report, wanted),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(Exit::Success);
    }
    println!("{} on {} ({})", profile.demangled.as_deref().unwrap_or(&profile.kernel), gpu.name, gpu.id);
    println!("  {:<11} {:>12}  {:<9} {:<10} explanation", "model", "time", "bound", "confidence");
    for p in report.predictions.iter().filter(|p| wanted(p.model)) {
        let flag = if report.floor_violations.contains(&p.model) { " (below floor)" } else { "" };
        println!("  {:<11} {:>12}  {:<9} {:<10} {}{flag}", p.model, analysis::display::time_us(p.time_us), p.bound.name(), p.confidence.name(), p.explanation);
    }
    for (m, why) in report.not_applicable.iter().filter(|(m, _)| wanted(m)) {
        println!("  {m:<11} not applicable: {why}");
    }
    println!("  headline: {} ≈ {}, {}-bound ({})", report.headline.model, analysis::display::time_us(report.headline.time_us), report.headline.bound.name(), report.headline.rule);
    Ok(Exit::Success)
}
