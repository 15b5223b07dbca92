//! The launch corpus (`tests/fixtures/launch/`, issue 14): small host programs in the
//! styles of Rodinia, the CUDA samples and textbook code, each with the launch it really
//! makes in `manifest.toml`. The folder must resolve at least [`TARGET_SHARE`] of the
//! launches, must never fold a launch to a wrong value, and must say why for each miss;
//! the table of every launch is printed (`cargo test -p cuda-frontend --test
//! launch_corpus -- --nocapture`).
//!
//! The folding needs no compiler. A second test compiles every program with the real nvcc
//! through [`cuda_frontend::prepare`] (so the corpus is real CUDA, and the front end's own
//! path, with the build's defines and the local headers, folds the same).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use cuda_frontend::launch::{LaunchSite, ScanInput, SiteOrigin, scan_source_with};
use serde::Deserialize;

/// The share of launches that must fold to their expected values.
const TARGET_SHARE: f64 = 0.90;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    program: Vec<Program>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Program {
    file: String,
    /// Where the style comes from (rodinia, cuda-samples, textbook, ...), for the table.
    style: String,
    /// `--arg` values: `argv[K]` or variable names.
    #[serde(default)]
    args: BTreeMap<String, i64>,
    /// The build's `-D` flags.
    #[serde(default)]
    defines: Vec<String>,
    launch: Vec<Expected>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    kernel: String,
    grid: Option<[u32; 3]>,
    block: Option<[u32; 3]>,
    #[serde(default)]
    smem: u32,
    /// Kernel argument values to check (by parameter name).
    #[serde(default)]
    args: BTreeMap<String, i64>,
    /// The explicit template arguments at the launch.
    template_args: Option<Vec<String>>,
    /// Set for a launch that cannot be known before the program runs: the folder must
    /// leave it unresolved and name this in its reason.
    unresolved: Option<String>,
}

fn corpus_dir() -> PathBuf {
    common::repo_root().join("tests/fixtures/launch")
}

fn manifest() -> Manifest {
    let path = corpus_dir().join("manifest.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The source launches of one program, folded as the front end does without a compiler.
fn scan(p: &Program) -> Vec<LaunchSite> {
    let path = corpus_dir().join(&p.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let headers = cuda_frontend::files::local_headers(&text, &corpus_dir(), &[]);
    let user: Vec<(String, i64)> = p.args.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let scan = scan_source_with(
        &text,
        &ScanInput {
            user_args: &user,
            defines: &p.defines,
            headers: &headers,
            ..ScanInput::default()
        },
    );
    scan.launch_sites
        .into_iter()
        .filter(|s| s.origin == SiteOrigin::Launch)
        .collect()
}

/// How one launch compares with its expectation.
enum Outcome {
    Resolved,
    /// Not folded (the sentence says why).
    Missed(String),
    /// A wrong value, or a launch expected unresolved that folded, or a reason that does
    /// not name what it should.
    Wrong(String),
}

fn judge(site: &LaunchSite, want: &Expected) -> Outcome {
    if let Some(t) = &want.template_args
        && *t != site.template_args
    {
        return Outcome::Wrong(format!(
            "template arguments {:?}, expected {t:?}",
            site.template_args
        ));
    }
    if let Some(name) = &want.unresolved {
        if site.grid.is_some() && site.block.is_some() && site.dynamic_smem.is_some() {
            return Outcome::Wrong(format!(
                "folded to grid {:?} block {:?}, but it depends on `{name}`",
                site.grid, site.block
            ));
        }
        let why = format!("{} {}", site.unresolved.join(" "), site.reasons.join(" "));
        if !why.contains(name.as_str()) {
            return Outcome::Wrong(format!(
                "unresolved, but the reason does not name `{name}`: {}",
                site.unresolved_sentence()
            ));
        }
        return Outcome::Missed(site.unresolved_sentence());
    }
    let mut missing = Vec::new();
    let mut check = |what: &str, got: Option<String>, want: String| -> Option<Outcome> {
        match got {
            Some(g) if g != want => Some(Outcome::Wrong(format!("{what} {g}, expected {want}"))),
            Some(_) => None,
            None => {
                missing.push(what.to_string());
                None
            }
        }
    };
    let fmt = |d: Option<[u32; 3]>| d.map(|d| format!("{d:?}"));
    let expect_dims = |d: Option<[u32; 3]>| format!("{:?}", d.unwrap_or([0, 0, 0]));
    let mut checks = vec![
        ("grid".to_string(), fmt(site.grid), expect_dims(want.grid)),
        (
            "block".to_string(),
            fmt(site.block),
            expect_dims(want.block),
        ),
        (
            "smem".to_string(),
            site.dynamic_smem.map(|v| v.to_string()),
            want.smem.to_string(),
        ),
    ];
    for (name, v) in &want.args {
        if !site.args.iter().any(|(p, _, _)| p == name) {
            return Outcome::Wrong(format!(
                "no argument for parameter `{name}`: {:?}",
                site.args
            ));
        }
        checks.push((
            format!("argument `{name}`"),
            site.arg(name).map(|x| x.to_string()),
            v.to_string(),
        ));
    }
    for (what, got, w) in checks {
        if let Some(wrong) = check(&what, got, w) {
            return wrong;
        }
    }
    if missing.is_empty() {
        Outcome::Resolved
    } else {
        Outcome::Missed(format!(
            "{} unknown; {}",
            missing.join(", "),
            site.unresolved_sentence()
        ))
    }
}

#[test]
#[allow(clippy::print_stdout)]
fn the_corpus_resolves_at_least_ninety_percent_and_nothing_wrong() {
    let m = manifest();
    assert!(
        m.program.len() >= 25,
        "the corpus has {} programs; at least 25 are wanted",
        m.program.len()
    );
    let (mut total, mut resolved) = (0usize, 0usize);
    let mut wrong = Vec::new();
    let mut misses = Vec::new();
    let mut styles: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for p in &m.program {
        let sites = scan(p);
        let found: Vec<&str> = sites.iter().map(|s| s.kernel.as_str()).collect();
        let listed: Vec<&str> = p.launch.iter().map(|l| l.kernel.as_str()).collect();
        assert_eq!(
            found, listed,
            "{}: the launches in the file and in the manifest differ",
            p.file
        );
        for (site, want) in sites.iter().zip(&p.launch) {
            total += 1;
            let tally = styles.entry(p.style.as_str()).or_default();
            tally.0 += 1;
            let place = format!("{}:{} {}", p.file, site.line, site.kernel);
            match judge(site, want) {
                Outcome::Resolved => {
                    resolved += 1;
                    tally.1 += 1;
                    println!(
                        "ok    {place}: grid {:?} block {:?} smem {:?}",
                        site.grid, site.block, site.dynamic_smem
                    );
                }
                Outcome::Missed(why) => {
                    println!("miss  {place}: {why}");
                    misses.push(format!("{place}: {why}"));
                }
                Outcome::Wrong(why) => {
                    println!("WRONG {place}: {why}");
                    wrong.push(format!("{place}: {why}"));
                }
            }
        }
    }
    let share = resolved as f64 / total as f64;
    println!(
        "\nresolved {resolved} of {total} launches ({:.1} %) in {} programs",
        100.0 * share,
        m.program.len()
    );
    for (style, (n, ok)) in &styles {
        println!("  {style:<14} {ok}/{n}");
    }
    for miss in &misses {
        println!("  miss: {miss}");
    }
    assert!(wrong.is_empty(), "wrong launches:\n{}", wrong.join("\n"));
    assert!(
        share >= TARGET_SHARE,
        "resolved {:.1} % < {:.0} %; misses:\n{}",
        100.0 * share,
        100.0 * TARGET_SHARE,
        misses.join("\n")
    );
}

#[test]
fn every_program_compiles_with_nvcc_and_the_front_end_folds_the_same() {
    let Some(root) = common::cuda_root("launch corpus") else {
        return;
    };
    let cache_tmp = common::scratch("launch-corpus-cache");
    let cache = cache_tmp.path();
    let m = manifest();
    for p in &m.program {
        let path = corpus_dir().join(&p.file);
        let opts = cuda_frontend::Options {
            defines: p.defines.clone(),
            args: p.args.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            run_ptxas: false,
            use_cache: false,
            compile_commands: cuda_frontend::CompileCommands::Ignore,
            ..common::nvcc_options(&root, cache)
        };
        let prepared = cuda_frontend::prepare(&path, &opts);
        let errors: Vec<String> = prepared
            .diagnostics
            .iter()
            .filter(|d| d.severity == cuda_frontend::Severity::Error)
            .map(|d| format!("{:?}:{:?}: {}", d.file, d.line, d.message))
            .collect();
        assert!(
            errors.is_empty() && !prepared.ptx.is_empty(),
            "{}: {errors:#?}",
            p.file
        );
        for want in &p.launch {
            assert!(
                prepared.kernels.iter().any(|k| k.base_name == want.kernel),
                "{}: no PTX kernel for `{}`",
                p.file,
                want.kernel
            );
        }
        let through_prepare: Vec<LaunchSite> = prepared
            .launch_sites
            .into_iter()
            .filter(|s| s.origin == SiteOrigin::Launch)
            .collect();
        assert_eq!(
            through_prepare,
            scan(p),
            "{}: prepare() folds differently",
            p.file
        );
    }
}
