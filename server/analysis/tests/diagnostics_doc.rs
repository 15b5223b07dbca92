//! The examples of `docs/diagnostics.md` are the analysis' own messages (issue 19 item 3:
//! no computed number in `docs/` typed by hand without a check). For every code the page
//! shows with a fixture, this test analyses that fixture (`tests/fixtures/ptx/sm_80`, with
//! the `ptxas -v` resources of `tests/fixtures/resources/sm_80.json` where the example
//! needs them) with the launch and GPU the example states, and requires the page's quote,
//! its `> ` lines joined, to be the finding's message; `...` in a quote stands for text
//! left out.


use analysis::{Context, PartialLaunch, Settings};

mod common;
use common::read;

/// One example of the page: its code, fixture, kernel, GPU, launch and resources.
struct Example {
    code: &'static str,
    /// The directory of the PTX file, from the repository root.
    dir: &'static str,
    file: &'static str,
    kernel: &'static str,
    gpu: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    dynamic_smem: u32,
    ptxas: bool,
    /// Kernel arguments by parameter (`param_3` is the fourth).
    args: &'static [(&'static str, i64)],
}

const A100: &str = "a100-sxm4-80gb";

fn ex(code: &'static str, file: &'static str, kernel: &'static str, grid: [u32; 3], block: [u32; 3]) -> Example {
    Example { code, dir: "tests/fixtures/ptx/sm_80", file, kernel, gpu: A100, grid, block, dynamic_smem: 0, ptxas: false, args: &[] }
}

/// The examples as the page states them.
fn examples() -> Vec<Example> {
    vec![
        // "(n = 2^24 floats per array, 65536 × 256 threads)"
        Example { args: &[("param_3", 1 << 24)], ..ex("memory-bound", "vadd", "vadd", [65536, 1, 1], [256, 1, 1]) },
        // "`examples/reduce.cu`'s `reduce_grid_stride` on 2^24 floats with one block per SM (108 × 256 threads)"
        Example { dir: "examples", args: &[("param_2", 1 << 24)], ..ex("latency-bound", "reduce", "reduce_grid_stride", [108, 1, 1], [256, 1, 1]) },
        // "65,536 bodies (256 blocks of 256 threads, 4 KB of dynamic shared memory) on an L40"
        Example { gpu: "l40", dynamic_smem: 4096, args: &[("param_3", 65536)], ..ex("power-limited", "nbody", "nbody_forces", [256, 1, 1], [256, 1, 1]) },
        // "launched as annotated with 128 threads per block"; ptxas's 80 registers.
        Example { ptxas: true, ..ex("occupancy-limited-by-registers", "layernorm", "layernorm", [1024, 1, 1], [128, 1, 1]) },
        // "launched with 96 threads and 48 KB of dynamic shared memory"
        Example { dynamic_smem: 48 * 1024, ..ex("occupancy-limited-by-shared-memory", "dyn_smem", "", [1024, 1, 1], [96, 1, 1]) },
        // "launched with `saxpy<<<n / 32, 32>>>`"
        ex("occupancy-limited-by-blocks", "saxpy", "saxpy", [4096, 1, 1], [32, 1, 1]),
        // "with 1024 threads per block on an RTX 3090"
        Example { gpu: "rtx-3090", ..ex("occupancy-limited-by-warps", "vadd", "vadd", [256, 1, 1], [1024, 1, 1]) },
        // ptxas's spills of `row_block_spill`.
        Example { ptxas: true, ..ex("register-spills", "spill", "row_block_spill", [512, 1, 1], [128, 1, 1]) },
        // "16 × 16 blocks", N = 1024 as annotated.
        Example { args: &[("param_3", 1024)], ..ex("uncoalesced-global-access", "matmul_naive", "matmul_naive", [64, 64, 1], [16, 16, 1]) },
        ex("shared-bank-conflict", "transpose_naive", "transpose_naive", [64, 64, 1], [32, 32, 1]),
        ex("divergent-branch-in-loop", "reduce_tree", "reduce_tree", [256, 1, 1], [256, 1, 1]),
        // "1024 blocks of 256 threads on an A100"
        Example { args: &[("param_0", 262144)], ..ex("unknown-trip-count", "spmv_csr", "spmv_csr_scalar", [1024, 1, 1], [256, 1, 1]) },
        // "with 1000 blocks of 256 threads on an A100"
        ex("tail-wave", "saxpy", "saxpy", [1000, 1, 1], [256, 1, 1]),
        // "second pass": reduce_tree<<<1, BLOCK_SIZE>>>.
        ex("grid-too-small", "reduce_tree", "reduce_tree", [1, 1, 1], [256, 1, 1]),
    ]
}

/// The first quote (`> ` lines, joined) of the page's section on `code`.
fn quote(doc: &str, code: &str) -> String {
    let heading = format!("## `{code}`");
    let start = doc.find(&heading).unwrap_or_else(|| panic!("no section {heading}"));
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let lines: Vec<&str> = section.lines().skip_while(|l| !l.starts_with("> ")).take_while(|l| l.starts_with("> ")).map(|l| &l[2..]).collect();
    assert!(!lines.is_empty(), "section {heading} has no quoted message");
    lines.join(" ")
}

/// `true` when the parts of `quote` between `...` appear in `message` in order, the first
/// at its start.
fn matches(quote: &str, message: &str) -> bool {
    let mut rest = message;
    for (i, part) in quote.split("...").map(str::trim).enumerate() {
        if part.is_empty() {
            continue;
        }
        let part = part.trim_end_matches(';').trim();
        match rest.find(part) {
            Some(at) if i > 0 || at == 0 => rest = &rest[at + part.len()..],
            _ => return false,
        }
    }
    true
}

#[test]
fn the_examples_of_the_diagnostics_page_are_the_analysis_messages() {
    let doc = read("docs/diagnostics.md");
    let mut stale = Vec::new();
    for e in examples() {
        let settings = Settings {
            gpus: vec![e.gpu.to_string()],
            launch: PartialLaunch {
                grid: Some(e.grid),
                block: Some(e.block),
                dynamic_smem: Some(e.dynamic_smem),
                args: e.args.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                footprint: None,
                array_bytes: Default::default(),
            },
            ..Settings::default()
        };
        let context = if e.ptxas { common::ptxas_context(e.file, e.kernel).2 } else { Context::default() };
        let a = analysis::analyze(&read(&format!("{}/{}.ptx", e.dir, e.file)), &settings, &context);
        let messages: Vec<&str> = a
            .kernels
            .iter()
            .filter(|k| k.name.contains(e.kernel))
            .flat_map(|k| k.findings.iter())
            .filter(|f| f.code == e.code)
            .map(|f| f.message.as_str())
            .collect();
        let want = quote(&doc, e.code);
        if !messages.iter().any(|m| matches(&want, m)) {
            stale.push(format!("`{}` ({} on {}): the page quotes\n  {want}\nthe analysis says\n  {}", e.code, e.file, e.gpu, messages.join("\n  ")));
        }
    }
    assert!(stale.is_empty(), "docs/diagnostics.md quotes messages the analysis no longer gives:\n{}", stale.join("\n"));
}

#[test]
fn a_quote_with_an_ellipsis_matches_the_parts_in_order() {
    assert!(matches("occupancy 14 % ... limited by shared memory: 3 block(s); ...", "occupancy 14 % on X limited by shared memory: 3 block(s); more"));
    assert!(!matches("limited by shared memory ... occupancy 14 %", "occupancy 14 % on X limited by shared memory"));
    assert!(!matches("occupancy 15 %", "occupancy 14 % on X"));
}
