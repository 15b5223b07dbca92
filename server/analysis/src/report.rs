//! The JSON form of an analysis: the documented output of `warpsight analyze --format
//! json` (docs/cli.md) and of the `warpsight/kernelReport` LSP request.
//!
//! Why JSON is built here, below the front ends: the CLI and the language server must
//! print the same report with the same keys, so there is one builder. Keys are stable;
//! additions are allowed, renames are not (docs/cli.md § Stability).

use serde_json::{Map, Value, json};

use crate::{FileAnalysis, KernelAnalysis, TargetAnalysis};

/// The per-file object of `analyze --format json`.
pub fn file_json(path: &str, kind: &str, text: &str, analysis: &FileAnalysis) -> Value {
    let mut file = file_header_json(path, kind, text, &analysis.syntax, analysis.target.as_deref(), analysis.version, &analysis.unknown_gpus);
    file.insert("kernels".into(), analysis.kernels.iter().map(kernel_json).collect::<Vec<_>>().into());
    Value::Object(file)
}

/// The per-file object without its `kernels` (for a writer that streams them, the CLI).
pub fn file_header_json(
    path: &str,
    kind: &str,
    text: &str,
    syntax: &[crate::SyntaxDiagnostic],
    target: Option<&str>,
    version: Option<(u32, u32)>,
    unknown_gpus: &[(String, Vec<String>)],
) -> Map<String, Value> {
    let index = ptx::LineIndex::new(text);
    let errors: Vec<Value> = syntax
        .iter()
        .map(|d| {
            let lc = index.line_col(d.span.start);
            json!({
                "line": lc.line + 1,
                "column": lc.col + 1,
                "severity": format!("{:?}", d.severity).to_lowercase(),
                "message": d.message,
            })
        })
        .collect();
    let mut file = Map::new();
    file.insert("path".into(), path.into());
    file.insert("kind".into(), kind.into());
    file.insert("target".into(), target.into());
    file.insert("ptx_version".into(), version.map(|(a, b)| format!("{a}.{b}")).into());
    file.insert("errors".into(), errors.into());
    file.insert("unknown_gpus".into(), unknown_gpus.iter().map(|(id, close)| json!({"id": id, "closest": close})).collect::<Vec<_>>().into());
    file
}

fn class_map<V: Into<Value> + Copy>(m: &std::collections::BTreeMap<ptx_ir::InstrClass, V>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.name(), (*v).into())).collect::<Map<String, Value>>())
}

/// The per-kernel object.
pub fn kernel_json(k: &KernelAnalysis) -> Value {
    Value::Object(kernel_json_map(k, true))
}

/// [`kernel_json`] as its map; without `with_accesses`, `memory_accesses` is `null`, for a
/// writer that streams that list one access at a time (it is most of the object for a
/// long kernel: one entry per memory instruction).
pub fn kernel_json_map(k: &KernelAnalysis, with_accesses: bool) -> Map<String, Value> {
    // Launch-dependent, GPU-independent facts come from the primary target's profile.
    let primary = k.targets.first();
    let profile = primary.map(|t| &t.profile);
    let dynamic = profile.map(|p| class_map(&p.counts.dynamic)).unwrap_or(Value::Null);
    let mut gpus = Map::new();
    for t in &k.targets {
        gpus.insert(t.gpu.id.clone(), target_json(k, t));
    }
    let object = json!({
        "name": k.name,
        "demangled": k.demangled,
        "ptx_line": k.ptx_line,
        "registers": {
            "declared": k.declared_registers,
            "per_thread": profile.map(|p| p.resources.registers_per_thread),
            "source": profile.map(|p| serde_json::to_value(p.resources.source).unwrap_or(Value::Null)),
            "spill_store_bytes": profile.map(|p| p.resources.spill_store_bytes),
            "spill_load_bytes": profile.map(|p| p.resources.spill_load_bytes),
        },
        "shared_memory": {
            "static_bytes": profile.map(|p| u64::from(p.resources.static_smem_bytes)).unwrap_or(k.static_smem_bytes),
            "dynamic_bytes": k.launch.dynamic_smem,
        },
        "local_bytes": k.local_bytes,
        "instruction_mix": {
            "static": class_map(&k.static_mix),
            "dynamic_per_thread": dynamic,
            "static_total": k.static_mix.values().sum::<u64>(),
            "dynamic_total_per_thread": profile.map(|p| p.counts.total_dynamic()),
        },
        "loops": profile.map(|p| serde_json::to_value(&p.loops).unwrap_or(Value::Null)),
        "launch": {
            "grid": k.launch.grid,
            "block": k.launch.block,
            "dynamic_smem": k.launch.dynamic_smem,
            "source": serde_json::to_value(k.launch.source).unwrap_or(Value::Null),
            "args": k.launch.args,
        },
        "memory_accesses": profile.filter(|_| with_accesses).map(|p| serde_json::to_value(&p.memory_accesses).unwrap_or(Value::Null)),
        "divergent_branches": profile.map(|p| serde_json::to_value(&p.divergent_branches).unwrap_or(Value::Null)),
        "assumptions": profile.map(|p| p.assumptions.clone()).unwrap_or_default(),
        "findings": k.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "gpus": gpus,
    });
    match object {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn finding_json(f: &crate::findings::Finding) -> Value {
    json!({
        "code": f.code,
        "severity": format!("{:?}", f.severity).to_lowercase(),
        "message": f.message,
        "gpu": f.gpu,
        "ptx_line": f.ptx_line,
        "source_file": f.source_file,
        "source_line": f.source_line,
        "fixes": f.fixes.iter().map(|x| x.title.clone()).collect::<Vec<_>>(),
    })
}

fn target_json(_k: &KernelAnalysis, t: &TargetAnalysis) -> Value {
    let occupancy = match &t.occupancy {
        Ok(o) => json!({
            "blocks_per_sm": o.blocks_per_sm,
            "warps_per_sm": o.warps_per_sm,
            "max_warps_per_sm": o.max_warps_per_sm,
            "occupancy": o.occupancy,
            "limiters": o.limiters.names(),
            "reason": o.reason,
        }),
        Err(e) => json!({ "error": e }),
    };
    let (predictions, headline) = match &t.models {
        Ok(r) => {
            let mut preds = Map::new();
            for p in &r.predictions {
                preds.insert(p.model.to_string(), prediction_json(p, r.floor_violations.contains(&p.model)));
            }
            let not_applicable: Map<String, Value> = r.not_applicable.iter().map(|(m, why)| (m.to_string(), json!(why))).collect();
            (
                json!(preds),
                json!({
                    "model": r.headline.model,
                    "time_us": r.headline.time_us,
                    "time_text": crate::display::time_us(r.headline.time_us),
                    "bound": r.headline.bound.name(),
                    "rule": r.headline.rule,
                    "not_applicable": not_applicable,
                }),
            )
        }
        Err(_) => (json!({}), Value::Null),
    };
    json!({
        "gpu": t.gpu.id,
        "name": t.gpu.name,
        "compute_capability": format!("{}.{}", t.gpu.cc.major, t.gpu.cc.minor),
        "occupancy": occupancy,
        "waves": t.waves.as_ref().map(|w| json!({
            "waves": w.waves,
            "blocks_per_wave": w.blocks_per_wave,
            "last_wave_blocks": w.last_wave_blocks,
            "last_wave_fill": w.last_wave_fill,
        })),
        "predictions": predictions,
        "headline": headline,
        "cannot_predict": t.models.as_ref().err(),
        "power": t.power.as_ref().map(|p| json!({
            "watts": p.watts,
            "base_watts": p.base_watts,
            "contributions": p.contributions.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<Map<String, Value>>(),
            "confidence": p.confidence,
            "model_gpu": p.model_gpu,
            "notes": p.notes,
        })),
        "energy_uj": t.energy_uj,
        "energy_text": t.energy_uj.map(crate::display::energy_uj),
        "charts": serde_json::to_value(crate::charts::target_charts(t)).unwrap_or(Value::Null),
    })
}

fn prediction_json(p: &perf_models::Prediction, below_floor: bool) -> Value {
    let mut v = json!({
        "time_us": p.time_us,
        "time_text": crate::display::time_us(p.time_us),
        "bound": p.bound.name(),
        "confidence": p.confidence.name(),
        "explanation": p.explanation,
        "breakdown": p.breakdown,
        "assumptions": p.assumptions,
        "below_roofline_floor": below_floor,
    });
    if let (Some(obj), Some(mwp), Some(cwp)) = (v.as_object_mut(), p.mwp, p.cwp) {
        obj.insert("mwp".into(), json!(mwp));
        obj.insert("cwp".into(), json!(cwp));
    }
    v
}
