//! `docs/benchmarks.md` (issue 19 item 3): measured numbers may be typed from a program's
//! output, but each table must name the command that prints it, and every number computed
//! from measured ones (a unit conversion, a ratio, a per-byte count, a growth factor, a
//! rounded restatement of a generated block) must follow from the numbers it is computed
//! from. This test reads the page, never runs a benchmark.
//!
//! A computed number is accepted when some values inside the rounding intervals of its
//! inputs, as printed, give it after rounding to the digits shown (interval arithmetic on
//! the corners: every function here is monotonic in each input).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn page() -> String {
    read("docs/benchmarks.md")
}

/// The half-width of the rounding interval of a number as written (`5.52` → 0.005).
fn half_ulp(literal: &str) -> f64 {
    let digits = literal.split('.').nth(1).map_or(0, str::len) as i32;
    0.5 * 10f64.powi(-digits)
}

fn num(literal: &str) -> f64 {
    let clean: String = literal.chars().filter(|c| c.is_ascii_digit() || *c == '.').collect();
    clean.parse().unwrap_or_else(|_| panic!("not a number: {literal:?}"))
}

/// The first number in `cell` (`196 MiB/s (205 MB/s)` → `196`), as written.
fn first_number(cell: &str) -> String {
    numbers(cell).into_iter().next().unwrap_or_else(|| panic!("no number in {cell:?}"))
}

/// Every number in `text` as written (digits with at most one decimal point).
fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !cur.is_empty() && !cur.contains('.')) {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(cur.trim_end_matches('.').to_string());
            cur.clear();
        }
    }
    out
}

/// `true` when `shown` (as written) is `f` of `inputs` (as written) up to rounding.
fn consistent(shown: &str, inputs: &[&str], f: impl Fn(&[f64]) -> f64) -> bool {
    let n = inputs.len();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for corner in 0..(1u32 << n) {
        let xs: Vec<f64> = inputs
            .iter()
            .enumerate()
            .map(|(i, s)| num(s) + if corner & (1 << i) == 0 { -half_ulp(s) } else { half_ulp(s) })
            .collect();
        let y = f(&xs);
        lo = lo.min(y);
        hi = hi.max(y);
    }
    let (v, h) = (num(shown), half_ulp(shown));
    v - h <= hi && lo <= v + h
}

struct Checks(Vec<String>);

impl Checks {
    fn check(&mut self, what: &str, shown: &str, inputs: &[&str], f: impl Fn(&[f64]) -> f64) {
        if !consistent(shown, inputs, &f) {
            let exact = f(&inputs.iter().map(|s| num(s)).collect::<Vec<_>>());
            self.0.push(format!("{what}: the page says {shown}, its inputs {inputs:?} give {exact:.4}"));
        }
    }
}

/// The cells of the table row whose first cell is `label`.
fn row(doc: &str, label: &str) -> Vec<String> {
    let line = doc
        .lines()
        .find(|l| l.strip_prefix('|').is_some_and(|r| r.split('|').next().is_some_and(|c| c.trim() == label)))
        .unwrap_or_else(|| panic!("no table row {label:?}"));
    line.trim().trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()
}

/// The text from the first occurrence of `from` to the next heading.
fn section<'a>(doc: &'a str, from: &str) -> &'a str {
    let start = doc.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let rest = &doc[start + from.len()..];
    let end = rest.find("\n#").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The number written just before `unit` in `text` after `anchor` (`"p95", "ms"`...).
fn number_after(text: &str, anchor: &str) -> String {
    let at = text.find(anchor).unwrap_or_else(|| panic!("no {anchor:?}"));
    first_number(&text[at + anchor.len()..])
}

#[test]
fn every_table_names_the_command_that_prints_it() {
    let doc = page();
    // Each section with a table, the command it names, and the file that command runs.
    let mut missing = Vec::new();
    let mut current = String::new();
    let mut named: Vec<String> = Vec::new();
    let mut tables_here = false;
    let commands = [
        ("cargo run --release -p cuda-frontend --example latency", "server/cuda-frontend/examples/latency.rs"),
        ("cargo run --release -p lsp --example cu_edit_latency", "server/lsp/examples/cu_edit_latency.rs"),
        ("cargo bench -p ptx --bench parse", "server/ptx/benches/parse.rs"),
        ("valgrind --tool=callgrind", ""),
        ("scripts/bench-lsp.sh", "scripts/bench-lsp.sh"),
        ("scripts/bench-scale.sh", "scripts/bench-scale.sh"),
    ];
    let flush = |heading: &str, named: &[String], tables: bool, missing: &mut Vec<String>| {
        if tables && named.is_empty() && !heading.contains("Against the targets") {
            missing.push(format!("section {heading:?} has a table but names no command that prints it"));
        }
    };
    for line in doc.lines() {
        if line.starts_with('#') {
            flush(&current, &named, tables_here, &mut missing);
            // A sub-section inherits the command of its section (`### Edit to hints` names
            // its own; `### Before and after` is the same benchmark on older code).
            if line.starts_with("## ") {
                named.clear();
            }
            current = line.to_string();
            tables_here = false;
        }
        if line.starts_with("|---") {
            tables_here = true;
        }
        for (cmd, _) in commands {
            if line.contains(cmd) && !named.iter().any(|n| n == cmd) {
                named.push(cmd.to_string());
            }
        }
    }
    flush(&current, &named, tables_here, &mut missing);
    for (cmd, file) in commands {
        if !file.is_empty() && doc.contains(cmd) && !root().join(file).is_file() {
            missing.push(format!("{cmd}: {file} does not exist"));
        }
    }
    // The generated blocks: the script writes the markers, and the program it runs prints
    // the table's header as the page has it.
    for (marker, script, program) in [
        ("lsp-bench", "scripts/bench-lsp.sh", "server/lsp/examples/lsp_bench.rs"),
        ("scale-bench", "scripts/bench-scale.sh", "server/lsp/examples/scale_bench.rs"),
    ] {
        let begin = format!("<!-- {marker}:begin (generated by {script}) -->");
        let Some(start) = doc.find(&begin) else {
            missing.push(format!("no block {begin}"));
            continue;
        };
        let block = &doc[start..doc[start..].find(&format!("<!-- {marker}:end -->")).map_or(doc.len(), |e| start + e)];
        // The script builds and runs the program, which writes the markers.
        let example = Path::new(program).file_stem().and_then(|n| n.to_str()).expect("example name");
        if !read(script).contains(&format!("--example {example}")) {
            missing.push(format!("{script} does not run {program}"));
        }
        let source = read(program);
        if !source.contains(&begin) || !source.contains(&format!("<!-- {marker}:end -->")) {
            missing.push(format!("{program} does not write the {marker} markers"));
        }
        for header in block.lines().filter(|l| l.starts_with("| ") && !l.contains("---")).take(1) {
            if !source.contains(header) {
                missing.push(format!("{program} does not print the header {header:?}"));
            }
        }
        if !(block.contains("Machine: ") && block.contains("Date: ")) {
            missing.push(format!("block {marker} says no machine and date"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn measured_rows_have_their_median_between_min_and_max() {
    let doc = page();
    let mut bad = Vec::new();
    for label in [
        "nvcc (`-ptx -lineinfo`) + `ptxas -v`",
        "nvcc (`-ptx -lineinfo`) only",
        "NVRTC (in process, device-only view) + `ptxas -v`",
        "NVRTC only",
        "NVRTC, edit inside 1 kernel (kernel-by-kernel) + `ptxas -v`",
        "NVRTC only, edit inside 1 kernel",
        "cache hit (same text, flags, architecture and compiler)",
    ] {
        let r = row(&doc, label);
        let (now, min, max) = (num(&first_number(&r[2])), num(&first_number(&r[3])), num(&first_number(&r[4])));
        if !(min <= now && now <= max) {
            bad.push(format!("{label}: {min} ≤ {now} ≤ {max} does not hold"));
        }
    }
    for label in [
        "nvcc, comment appended (whole file)",
        "NVRTC, comment appended (whole file)",
        "nvcc, edit inside one kernel",
        "**NVRTC, edit inside one kernel** (the language server's default)",
    ] {
        let r = row(&doc, label);
        let (now, front, min, max) = (num(&first_number(&r[1])), num(&first_number(&r[2])), num(&first_number(&r[3])), num(&first_number(&r[4])));
        if !(min <= now && now <= max && front <= now) {
            bad.push(format!("{label}: min {min} ≤ {now} ≤ max {max} and front end {front} ≤ {now} do not hold"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn numbers_computed_from_the_parse_measurements_follow_from_them() {
    let doc = page();
    let mut c = Checks(Vec::new());
    let mib_to_mb = |x: &[f64]| x[0] * 1.048_576;
    let ratio = |x: &[f64]| x[0] / x[1];
    // MiB/s → MB/s in every cell of the throughput table.
    for label in [
        "corpus, all 168 files",
        "corpus, 167 peer-accepted files",
        "large 54.0 MB, all files",
        "large 52.6 MB, peer-accepted files",
    ] {
        for cell in &row(&doc, label)[1..5] {
            let n = numbers(cell);
            if let [mib, mb] = &n[..] {
                c.check(&format!("{label}: {cell}"), mb, &[mib], mib_to_mb);
            }
        }
    }
    // The ratios against the peer: parse, and parse + lower against its parse alone.
    for label in ["corpus, 167 peer-accepted files", "large 52.6 MB, peer-accepted files"] {
        let r = row(&doc, label);
        let (parse, lower, peer) = (first_number(&r[1]), first_number(&r[2]), first_number(&r[4]));
        c.check(&format!("{label}: ratio, parse"), &first_number(&r[5]), &[&parse, &peer], ratio);
        c.check(&format!("{label}: ratio, parse + lower"), &first_number(&r[6]), &[&lower, &peer], ratio);
    }
    // The prose under the table: the previous run's ratios and the gain over them.
    let prose = section(&doc, "The peer only parses.");
    let then: Vec<String> = numbers(&prose[prose.find("(then").expect("(then")..]);
    // "(then 47 and 39 MiB/s with the peer at 3.67 and 3.27 MiB/s: 12.8× and 11.9× the peer,
    // now 15.8× and 19.6×)"
    let [a, b, pa, pb, ra, rb, now_a, now_b, ..] = &then[..] else { panic!("{then:?}") };
    c.check("previous corpus ratio", ra, &[a, pa], ratio);
    c.check("previous large ratio", rb, &[b, pb], ratio);
    let gains = numbers(&prose[prose.find("gained").expect("gained")..]);
    c.check("gain on the corpus", &gains[0], &[now_a, ra], ratio);
    c.check("gain on the large module", &gains[1], &[now_b, rb], ratio);
    // Instructions per byte of the 3.37 MB module (callgrind).
    let size = number_after(&doc, "not time) on a ");
    for label in ["`ptx::parse`", "parse, then `lower` (tree)", "`parse_and_lower`"] {
        let r = row(&doc, label);
        c.check(&format!("{label}: per byte"), &first_number(&r[3]), &[&first_number(&r[2]), &size], ratio);
    }
    assert!(c.0.is_empty(), "docs/benchmarks.md:\n{}", c.0.join("\n"));
}

#[test]
fn numbers_computed_from_the_scale_measurements_follow_from_them() {
    let doc = page();
    let mut c = Checks(Vec::new());
    let ratio = |x: &[f64]| x[0] / x[1];
    let time = |label: &str, format: &str, col: usize| {
        let line = doc
            .lines()
            .find(|l| {
                let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
                cells.len() == 6 && cells[0] == label && cells[1] == format
            })
            .unwrap_or_else(|| panic!("no before/after row {label} {format}"));
        first_number(line.trim_matches('|').split('|').nth(col).expect("cell"))
    };
    // "(14.1×)": peak RSS over the 100 MiB input, before and after.
    for format in ["table", "json"] {
        let line = doc
            .lines()
            .find(|l| l.starts_with("| 100 MiB module |") && l.contains(&format!("| {format} |")))
            .expect("100 MiB before/after row");
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        for cell in [cells[3], cells[5]] {
            let n = numbers(cell);
            c.check(&format!("100 MiB module, {format}: {cell}"), &n[1], &[&n[0], "100"], |x| x[0] / x[1]);
        }
    }
    // Growth per doubling, before → after (unrolled, table).
    let t = |k: &str, col| time(&format!("one kernel, {k}k instructions, unrolled"), "table", col);
    let growth = numbers(&doc[doc.find("Growth per doubling").expect("growth")..]);
    c.check("growth 42k → 84k, before", &growth[0], &[&t("84", 2), &t("42", 2)], ratio);
    c.check("growth 84k → 168k, before", &growth[1], &[&t("168", 2), &t("84", 2)], ratio);
    c.check("growth 42k → 84k, after", &growth[2], &[&t("84", 4), &t("42", 4)], ratio);
    c.check("growth 84k → 168k, after", &growth[3], &[&t("168", 4), &t("84", 4)], ratio);
    // "the issue measured 1.6, 5.8 and 24 s (3.6× and 4.1×)"
    let issue = numbers(&doc[doc.find("the issue measured").expect("issue")..]);
    c.check("issue growth 1", &issue[3], &[&issue[1], &issue[0]], ratio);
    c.check("issue growth 2", &issue[4], &[&issue[2], &issue[1]], ratio);
    assert!(c.0.is_empty(), "docs/benchmarks.md:\n{}", c.0.join("\n"));
}

#[test]
fn the_targets_restate_the_generated_lsp_block() {
    let doc = page();
    let start = doc.find("<!-- lsp-bench:begin").expect("lsp block");
    let block = &doc[start..doc.find("<!-- lsp-bench:end -->").expect("lsp block end")];
    let targets = section(&doc[start..], "### Against the targets");
    let mut c = Checks(Vec::new());
    let same = |x: &[f64]| x[0];
    let keystroke = row(block, "keystroke → publishDiagnostics (debounce 0)");
    let hover = row(block, "hover, all targets");
    let pending = row(block, "hover right after a keystroke (analysis pending)");
    // "(15 ms p95, 11 ms p50 in this run; ...)"
    c.check("keystroke p95", &number_after(targets, "met** ("), &[&keystroke[3]], same);
    c.check("keystroke p50", &number_after(targets, "ms p95, "), &[&keystroke[2]], same);
    c.check("hover p99", &number_after(targets, "on an analysed document ("), &[&hover[4]], same);
    c.check("hover right after a keystroke, p99", &number_after(targets, "Hover right after a keystroke: "), &[&pending[4]], same);
    // Memory per document and its ratio to the text.
    let kib = number_after(&block[block.find("Memory per open document").expect("memory")..], "PTX, ");
    let slope = number_after(block, "KiB of text): **");
    let mem = &targets[targets.find("**Memory per open document:**").expect("memory")..];
    let mem_numbers = numbers(mem);
    c.check("memory per document", &mem_numbers[0], &[&slope], same);
    c.check("memory per document over the text", &mem_numbers[2], &[&slope, &kib], |x| x[0] * 1024.0 / x[1]);
    // After closing the 100 MB document: 138 and 171 MiB, and the peak over the text.
    let cycles = &block[block.find("RSS over open/close cycles").expect("cycles")..];
    let cyc = numbers(cycles);
    let closed = &targets[targets.find("the RSS after `didClose` is now").expect("didClose")..];
    let cl = numbers(closed);
    c.check("closed after the first cycle", &cl[0], &[&cyc[2]], same);
    c.check("closed after the second cycle", &cl[1], &[&cyc[6]], same);
    // "(peak 2.3–2.5 GB while open, 23× the text)": VmHWM over the 100 MiB text.
    let peak = number_after(block, "peak (VmHWM) ");
    c.check("peak over the 100 MiB text", &number_after(targets, "while open, "), &[&peak, "100"], |x| x[0] / x[1]);
    // The 100 MB didOpen's decode, rope and snapshot, in seconds.
    let decode = number_after(block, "JSON decode of the didOpen ");
    let rope = number_after(block, "rope from text ");
    let snapshot = number_after(block, "`String` snapshot ");
    c.check("decode", &number_after(targets, "`didOpen` is decoded ("), &[&decode], |x| x[0] / 1000.0);
    c.check("rope", &number_after(targets, "turned into a rope ("), &[&rope], |x| x[0] / 1000.0);
    c.check("snapshot", &number_after(targets, "snapshotted ("), &[&snapshot], |x| x[0] / 1000.0);
    assert!(c.0.is_empty(), "docs/benchmarks.md:\n{}", c.0.join("\n"));
}

#[test]
fn the_interval_check_rejects_a_wrong_ratio() {
    // 200 / 5.52 = 36.2: 36 is right, 37 is not; 86.9 / 5.52 = 15.74..15.77: 15.8 is right.
    assert!(consistent("36", &["200", "5.52"], |x| x[0] / x[1]));
    assert!(!consistent("37", &["200", "5.52"], |x| x[0] / x[1]));
    assert!(consistent("15.8", &["86.9", "5.52"], |x| x[0] / x[1]));
    assert!(!consistent("15.9", &["86.9", "5.52"], |x| x[0] / x[1]));
    assert_eq!(numbers("196 MiB/s (205 MB/s), **36×**."), vec!["196", "205", "36"]);
}
