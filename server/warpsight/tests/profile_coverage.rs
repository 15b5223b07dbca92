//! The static profile's coverage over the fixture corpus (issue: at least 90 % of global
//! memory instructions with a definite class, and of loops with a known trip count, on
//! kernels whose accesses are affine). Runs the real CLI on every `.cu` fixture through
//! nvcc, so it needs the project's toolchain (`.cuda/`, installed by scripts/test-all.sh).
//!
//! The table in docs/profile.md between the `coverage` markers is generated here: the
//! test fails when it is stale; `UPDATE_DOCS=1` rewrites it.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// Kernels whose addressing is data-dependent by design, with the reason (excluded from
/// the "affine" figures, included in the "all kernels" ones).
const DATA_DEPENDENT: [(&str, &str); 4] = [
    ("spmv_csr_scalar", "gathers x[col_idx[j]] over rows bounded by row_ptr values"),
    ("spmv_csr_vector", "gathers x[col_idx[j]] over rows bounded by row_ptr values"),
    ("histogram_global", "increments bins[data[i]]"),
    ("collatz_steps", "loops until a data value reaches 1"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[derive(Default)]
struct Tally {
    global: usize,
    global_definite: usize,
    loops: usize,
    loops_known: usize,
}

impl Tally {
    fn pct(a: usize, b: usize) -> String {
        if b == 0 { "–".into() } else { format!("{:.1} %", 100.0 * a as f64 / b as f64) }
    }
    fn row(&self, label: &str) -> String {
        format!(
            "| {label} | {}/{} ({}) | {}/{} ({}) |",
            self.global_definite,
            self.global,
            Self::pct(self.global_definite, self.global),
            self.loops_known,
            self.loops,
            Self::pct(self.loops_known, self.loops)
        )
    }
}

#[test]
fn profile_coverage_over_the_corpus() {
    let nvcc = root().join(".cuda/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc");
    if !nvcc.exists() {
        assert!(std::env::var_os("WARPSIGHT_REQUIRE_CUDA").is_none(), "WARPSIGHT_REQUIRE_CUDA is set but {} is missing", nvcc.display());
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_warpsight"))
        .current_dir(root())
        .args(["analyze", "tests/fixtures/cu", "--format", "json", "--gpu", "a100", "--nvcc"])
        .arg(&nvcc)
        .output()
        .expect("run warpsight");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let (mut all, mut affine) = (Tally::default(), Tally::default());
    let mut rows = Vec::new();
    // The `.cu` files only: `matmul_tiled.ptx` beside its source is the recorded PTX for a
    // machine without a compiler (the README's example), not another kernel.
    for f in doc["files"].as_array().unwrap().iter().filter(|f| f["kind"] == "cu") {
        for k in f["kernels"].as_array().unwrap() {
            let accesses = k["memory_accesses"].as_array().cloned().unwrap_or_default();
            let global: Vec<&Value> = accesses.iter().filter(|a| matches!(a["space"].as_str(), Some("global" | "generic"))).collect();
            let definite = global.iter().filter(|a| a["class"] != "irregular").count();
            let loops = k["loops"].as_array().cloned().unwrap_or_default();
            let known = loops.iter().filter(|l| !l["trip_count"].is_null()).count();
            let name = k["demangled"].as_str().or(k["name"].as_str()).unwrap_or_default().to_string();
            let base = name.split('(').next().unwrap_or(&name).to_string();
            let excluded = DATA_DEPENDENT.iter().any(|(n, _)| *n == base);
            for t in if excluded { vec![&mut all] } else { vec![&mut all, &mut affine] } {
                t.global += global.len();
                t.global_definite += definite;
                t.loops += loops.len();
                t.loops_known += known;
            }
            if definite < global.len() || known < loops.len() {
                rows.push(format!("| `{base}` | {definite}/{} | {known}/{} | {} |", global.len(), loops.len(), if excluded { "data-dependent by design" } else { "" }));
            }
        }
    }
    let mut table = vec![
        "| kernels | global accesses with a definite class | loops with a known trip count |".to_string(),
        "|---|---|---|".to_string(),
        affine.row("affine addressing (all but the 4 below)"),
        all.row("all fixture kernels"),
        String::new(),
        "Kernels with anything left unclassified or uncounted:".to_string(),
        String::new(),
        "| kernel | definite / global | known / loops | note |".to_string(),
        "|---|---|---|---|".to_string(),
    ];
    table.extend(rows);
    table.push(String::new());
    table.push("Excluded as data-dependent by design:".into());
    for (n, why) in DATA_DEPENDENT {
        table.push(format!("- `{n}`: {why}"));
    }
    let generated = table.join("\n");

    let path = root().join("docs/profile.md");
    let text = std::fs::read_to_string(&path).expect("docs/profile.md");
    let (begin, end) = ("<!-- coverage:begin -->\n", "\n<!-- coverage:end -->");
    let (a, b) = (text.find(begin).expect("begin marker") + begin.len(), text.find(end).expect("end marker"));
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{}{}", &text[..a], generated, &text[b..])).expect("write docs");
    } else {
        assert_eq!(&text[a..b], generated, "docs/profile.md coverage table is stale: rerun with UPDATE_DOCS=1");
    }
    // The targets.
    assert!(affine.global_definite as f64 >= 0.9 * affine.global as f64, "{}", affine.row("affine"));
    assert!(affine.loops_known as f64 >= 0.9 * affine.loops as f64, "{}", affine.row("affine"));
}
