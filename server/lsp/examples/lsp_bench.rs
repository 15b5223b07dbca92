//! The language server's latency and memory benchmark (issue 7): keystroke to
//! `publishDiagnostics` latency (p50/p95, debounce excluded), hover latency (p99), memory
//! per open document, and the behaviour on a 100 MB PTX file, measured against the real
//! release binary (`warpsight lsp`) over real pipes, as an editor sees it.
//!
//! Why a separate process and not the in-memory harness: the numbers must include the
//! transport (framing, JSON, the validating reader), the runtime's scheduling and the
//! allocator, and memory must be the server's own resident set (`/proc/<pid>/status`),
//! not a test process shared with the client. A second, in-process part times the
//! analysis stages on the same text (parse, lower + memo lookups, one kernel's profile and
//! models, rope and JSON work) to say where the time goes.
//!
//! Run it with `scripts/bench-lsp.sh` (it builds both in release). The document is made
//! from the `tests/fixtures/ptx/sm_80` kernels, repeated with renamed `.entry` names
//! until it has the requested number of lines: a realistic mix (GEMMs, reductions,
//! stencils, sorts, scans) rather than one kernel pasted 100 times.
//!
//! Printing is this program's purpose, so the workspace's print lints are allowed here.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

// --- Options ------------------------------------------------------------------------------

struct Options {
    server: PathBuf,
    lines: usize,
    edits: usize,
    hovers: usize,
    big_mb: usize,
    big_cycles: usize,
    copies: Vec<usize>,
    doc: Option<PathBuf>,
}

fn options() -> Result<Options> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut o = Options {
        server: std::env::var_os("WARPSIGHT_BIN").map(PathBuf::from).unwrap_or_else(|| manifest.join("../../target/release/warpsight")),
        lines: 10_000,
        edits: 200,
        hovers: 1000,
        big_mb: 100,
        big_cycles: 2,
        copies: vec![1, 5, 10],
        doc: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--server" => o.server = PathBuf::from(value()?),
            "--lines" => o.lines = value()?.parse()?,
            "--edits" => o.edits = value()?.parse()?,
            "--hovers" => o.hovers = value()?.parse()?,
            "--big-mb" => o.big_mb = value()?.parse()?,
            "--big-cycles" => o.big_cycles = value()?.parse()?,
            "--copies" => o.copies = value()?.split(',').map(str::parse).collect::<Result<_, _>>()?,
            "--doc" => o.doc = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                println!("lsp_bench [--server PATH] [--lines N] [--edits N] [--hovers N] [--big-mb MB (0: skip)] [--big-cycles N] [--copies 1,5,10] [--doc docs/benchmarks.md]");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other}"),
        }
    }
    if !o.server.is_file() {
        bail!("no server binary at {} (build it with `cargo build --release -p warpsight`, or pass --server / WARPSIGHT_BIN)", o.server.display());
    }
    Ok(o)
}

// --- The generated document ---------------------------------------------------------------

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/ptx/sm_80")
}

/// PTX ISA 9.x §4.4 "Identifiers": letters, digits, `_` and `$`.
fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The module-level names a fixture defines (`.entry`/`.func` names, module-scope
/// variables, `.debug_str` labels).
fn module_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        for kw in [".entry ", ".func "] {
            if let Some(i) = t.find(kw) {
                let mut rest = t[i + kw.len()..].trim_start();
                if rest.starts_with('(') {
                    rest = rest.split_once(')').map_or("", |(_, r)| r.trim_start());
                }
                let name: String = rest.bytes().take_while(|b| is_ident_byte(*b)).map(char::from).collect();
                if !name.is_empty() {
                    names.push(name);
                }
            }
        }
        if let Some(label) = t.strip_suffix(':').filter(|l| l.starts_with("$L__info_string")) {
            names.push(label.to_string());
        }
        if [".global", ".const", ".shared", ".extern"].iter().any(|kw| line.starts_with(kw)) {
            let decl = line.split('=').next().unwrap_or("").trim().trim_end_matches(';');
            let last = decl.split_whitespace().last().unwrap_or("");
            let name: String = last.bytes().take_while(|b| is_ident_byte(*b)).map(char::from).collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

/// `line` with each token that is one of `names` (or `NAME_param_N`) suffixed `_c{copy}`.
fn rename_tokens(line: &str, names: &[String], copy: usize) -> String {
    let bytes = line.as_bytes();
    let starts_token = |i: usize| is_ident_byte(bytes[i]) && (i == 0 || !is_ident_byte(bytes[i - 1]) && bytes[i - 1] != b'%');
    let mut out = String::with_capacity(line.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if starts_token(i) {
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            let token = &line[start..i];
            match names.iter().find(|n| token == n.as_str() || token.strip_prefix(n.as_str()).is_some_and(|r| r.starts_with("_param_"))) {
                Some(n) => out.push_str(&format!("{n}_c{copy}{}", &token[n.len()..])),
                None => out.push_str(token),
            }
        } else {
            i += 1;
            while i < bytes.len() && !starts_token(i) {
                i += 1;
            }
            out.push_str(&line[start..i]);
        }
    }
    out
}

/// One fixture as the `copy`-th member of a concatenated module: no header, renamed
/// module-level names, `.file` indices (and `.loc`/`inlined_at` uses) moved apart.
fn renamed_copy(text: &str, copy: usize) -> String {
    let names = module_names(text);
    let file_base = copy * 16;
    let mut out = String::with_capacity(text.len() + 256);
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with(".version") || t.starts_with(".target") || t.starts_with(".address_size") {
            continue;
        }
        let line = rename_tokens(line, &names, copy);
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(".file").or_else(|| t.strip_prefix(".loc")) {
            let directive = if t.starts_with(".file") { ".file" } else { ".loc" };
            let rest = rest.trim_start();
            let (index, tail) = rest.split_once(|c: char| c.is_whitespace()).unwrap_or((rest, ""));
            if let Ok(index) = index.parse::<usize>() {
                let tail = match tail.split_once("inlined_at ") {
                    Some((head, at)) => {
                        let (f, more) = at.split_once(' ').unwrap_or((at, ""));
                        match f.parse::<usize>() {
                            Ok(f) => format!("{head}inlined_at {} {more}", f + file_base),
                            Err(_) => tail.to_string(),
                        }
                    }
                    None => tail.to_string(),
                };
                out.push_str(&format!("\t{directive}\t{} {tail}\n", index + file_base));
                continue;
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// A valid PTX module with at least `min_lines` lines and `min_bytes` bytes.
fn generate(min_lines: usize, min_bytes: usize) -> Result<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())?.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    let texts: Vec<String> = files.iter().map(std::fs::read_to_string).collect::<Result<_, _>>()?;
    let mut out = String::from("//\n// Generated by warpsight's lsp_bench from tests/fixtures/ptx/sm_80.\n//\n\n.version 9.5\n.target sm_80\n.address_size 64\n\n");
    let mut copy = 0;
    let mut lines = out.lines().count();
    while lines < min_lines || out.len() < min_bytes {
        let c = renamed_copy(&texts[copy % texts.len()], copy);
        lines += c.lines().count();
        out.push_str(&c);
        copy += 1;
    }
    Ok(out)
}

// --- A client over real pipes -------------------------------------------------------------

struct Server {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    rx: Receiver<(Instant, Value)>,
    backlog: VecDeque<(Instant, Value)>,
    next_id: i64,
}

fn write_frame(w: &Mutex<ChildStdin>, msg: &Value) -> Result<()> {
    let body = serde_json::to_vec(msg)?;
    let mut w = w.lock().map_err(|_| anyhow::anyhow!("stdin lock poisoned"))?;
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()?;
    Ok(())
}

fn read_frame(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    Some(body)
}

const WAIT: Duration = Duration::from_secs(600);

impl Server {
    fn start(bin: &Path, options: Value) -> Result<Server> {
        let mut child = Command::new(bin).arg("lsp").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().with_context(|| format!("starting {}", bin.display()))?;
        let stdin = Arc::new(Mutex::new(child.stdin.take().context("stdin")?));
        let stdout = child.stdout.take().context("stdout")?;
        let (tx, rx) = channel();
        let replies = stdin.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::with_capacity(1 << 16, stdout);
            while let Some(body) = read_frame(&mut r) {
                // Stamped when the whole frame has arrived, before the client parses it.
                let at = Instant::now();
                let Ok(msg) = serde_json::from_slice::<Value>(&body) else { continue };
                if msg.get("method").is_some() && msg.get("id").is_some() {
                    // A request from the server (registerCapability, refreshes, progress):
                    // answer as an editor does.
                    let _ = write_frame(&replies, &json!({ "jsonrpc": "2.0", "id": msg["id"], "result": null }));
                }
                if tx.send((at, msg)).is_err() {
                    break;
                }
            }
        });
        let mut s = Server { child, stdin, rx, backlog: VecDeque::new(), next_id: 1 };
        let caps = json!({ "general": { "positionEncodings": ["utf-16"] }, "window": { "workDoneProgress": true } });
        s.request("initialize", json!({ "processId": std::process::id(), "rootUri": null, "capabilities": caps, "initializationOptions": options }))?;
        s.notify("initialized", json!({}))?;
        Ok(s)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&self, msg: &Value) -> Result<()> {
        write_frame(&self.stdin, msg)
    }

    fn notify(&self, method: &str, params: Value) -> Result<()> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// The first message matching `pred` (from the backlog, else the pipe), with its
    /// arrival time.
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Result<(Instant, Value)> {
        if let Some(i) = self.backlog.iter().position(|(_, m)| pred(m)) {
            return self.backlog.remove(i).context("backlog index");
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok((at, msg)) if pred(&msg) => return Ok((at, msg)),
                Ok(other) => {
                    self.backlog.push_back(other);
                    // Keep the backlog small: old notifications are not needed.
                    if self.backlog.len() > 10_000 {
                        self.backlog.pop_front();
                    }
                }
                Err(RecvTimeoutError::Timeout) => bail!("timed out waiting for {what}"),
                Err(RecvTimeoutError::Disconnected) => bail!("the server closed its output while waiting for {what}"),
            }
        }
    }

    /// Sends a request; returns its result and the round-trip time.
    fn request(&mut self, method: &str, params: Value) -> Result<(Value, Duration)> {
        let id = self.next_id;
        self.next_id += 1;
        let sent = Instant::now();
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        let (at, res) = self.wait_for(method, |m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())?;
        if let Some(e) = res.get("error") {
            bail!("{method} failed: {e}");
        }
        Ok((res.get("result").cloned().unwrap_or(Value::Null), at.duration_since(sent)))
    }

    fn diagnostics(&mut self, uri: &str, version: i64) -> Result<(Instant, Vec<Value>)> {
        let (at, msg) = self.wait_for("publishDiagnostics", |m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && m["params"]["version"] == version)?;
        Ok((at, msg["params"]["diagnostics"].as_array().cloned().unwrap_or_default()))
    }

    fn open(&self, uri: &str, text: &str) -> Result<()> {
        self.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": "ptx", "version": 1, "text": text } }))
    }

    /// `shutdown` + `exit`; returns how long the process took to end.
    fn stop(mut self) -> Result<Duration> {
        self.request("shutdown", Value::Null)?;
        let t = Instant::now();
        self.notify("exit", Value::Null)?;
        loop {
            if self.child.try_wait()?.is_some() {
                return Ok(t.elapsed());
            }
            if t.elapsed() > Duration::from_secs(10) {
                let _ = self.child.kill();
                bail!("the server did not exit within 10 s of `exit`");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok()).unwrap_or(0);
    (field("VmRSS:"), field("VmHWM:"))
}

// --- Statistics ---------------------------------------------------------------------------

struct Stats {
    n: usize,
    p50: f64,
    p95: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

/// Nearest-rank percentiles of durations, in milliseconds.
fn stats(samples: &[Duration]) -> Stats {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        if ms.is_empty() {
            return f64::NAN;
        }
        let rank = ((q * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
        ms[rank - 1]
    };
    let mean = if ms.is_empty() { f64::NAN } else { ms.iter().sum::<f64>() / ms.len() as f64 };
    Stats { n: ms.len(), p50: pick(0.50), p95: pick(0.95), p99: pick(0.99), max: pick(1.0), mean }
}

fn row(name: &str, s: &Stats) -> String {
    format!("| {name} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |", s.n, s.p50, s.p95, s.p99, s.max, s.mean)
}

/// The least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (sx, sy) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let num: f64 = points.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = points.iter().map(|(x, _)| (x - mx) * (x - mx)).sum();
    if den == 0.0 { f64::NAN } else { num / den }
}

/// A small deterministic generator (SplitMix64), so runs pick the same positions.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C31);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

// --- The machine --------------------------------------------------------------------------

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|c| c.lines().find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()))).unwrap_or_else(|| "unknown CPU".into())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

/// Today's UTC date (days since the epoch to a civil date: H. Hinnant, "chrono-Compatible
/// Low-Level Date Algorithms", `civil_from_days`).
fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

// --- Positions in the document ------------------------------------------------------------

/// A zero-based (line, UTF-16 column) position; the generated text is ASCII.
type Pos = (usize, usize);

/// Hover targets: every kernel name and every instruction's opcode.
fn hover_targets(text: &str) -> (Vec<Pos>, Vec<Pos>) {
    let mut names = Vec::new();
    let mut instructions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find(".entry ") {
            names.push((i, at + ".entry ".len() + 2));
        } else if line.starts_with('\t') {
            let t = line.trim_start();
            let col = line.len() - t.len();
            let first = t.bytes().next().unwrap_or(b' ');
            if first.is_ascii_lowercase() || first == b'@' {
                instructions.push((i, col + 1));
            }
        }
    }
    (names, instructions)
}

/// The single-character edit site: the `s` of an `add.s32` in the kernel at the middle
/// of the document (toggled to `u` and back: both are valid PTX, so every version is
/// analysed in full).
fn edit_site(text: &str) -> Result<Pos> {
    let lines: Vec<&str> = text.lines().collect();
    let entries: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.contains(".entry ")).map(|(i, _)| i).collect();
    let start = *entries.get(entries.len() / 2).context("no kernels")?;
    for (i, l) in lines.iter().enumerate().skip(start) {
        if let Some(at) = l.find("add.s32") {
            return Ok((i, at + "add.".len()));
        }
    }
    bail!("no add.s32 after the middle kernel")
}

// --- In-process breakdown -----------------------------------------------------------------

fn median_of(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[v.len() / 2]
}

/// Where one keystroke's analysis time goes, measured in this process on the same text.
fn breakdown(text: &str, site: Pos, diagnostics: &[Value]) -> Vec<(String, Duration)> {
    let settings = analysis::Settings::default();
    let cx = analysis::Context::default();
    let toggled = {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let l = &mut lines[site.0];
        l.replace_range(site.1..site.1 + 1, "u");
        lines.join("\n") + "\n"
    };
    let mut res = Vec::new();
    res.push(("`ptx::parse` (whole document)".into(), median_of(|| drop(ptx::parse(text)), 31)));
    let mut memo = analysis::Memo::default();
    let cold = {
        let t = Instant::now();
        let a = analysis::analyze_memo(text, &settings, &cx, Some(&mut memo));
        drop(a);
        t.elapsed()
    };
    res.push(("analysis, cold (every kernel profiled and modelled)".into(), cold));
    res.push(("analysis, same text, warm memo (parse + lower + memo keys)".into(), median_of(|| drop(analysis::analyze_memo(text, &settings, &cx, Some(&mut memo))), 31)));
    let mut flip = false;
    res.push((
        "analysis after a one-character edit (one kernel re-run)".into(),
        median_of(
            || {
                flip = !flip;
                let t = if flip { toggled.as_str() } else { text };
                drop(analysis::analyze_memo(t, &settings, &cx, Some(&mut memo)));
            },
            15,
        ),
    ));
    let doc = lsp::Document::new(text, 1, "ptx".into());
    res.push(("rope to `String` (the analysis snapshot)".into(), median_of(|| drop(doc.text.to_string()), 31)));
    let msg = json!({ "jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": { "uri": "file:///bench.ptx", "version": 2, "diagnostics": diagnostics } });
    res.push((format!("JSON of one publishDiagnostics ({} diagnostics)", diagnostics.len()), median_of(|| drop(serde_json::to_vec(&msg)), 31)));
    res
}

// --- The benchmark ------------------------------------------------------------------------

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn run(o: &Options) -> Result<String> {
    let load_before = load_average();
    let text = generate(o.lines, 0)?;
    let n_lines = text.lines().count();
    let n_kernels = text.matches(".entry ").count();
    let (names, instructions) = hover_targets(&text);
    let site = edit_site(&text)?;
    let uri = "file:///bench/bench.ptx";
    let mut out = Vec::new();
    let mut say = |s: String| {
        eprintln!("{s}");
        out.push(s);
    };

    // 1. Keystroke latency and hovers.
    let mut s = Server::start(&o.server, json!({ "debounceMs": 0 }))?;
    let pid = s.pid();
    let (rss_empty, _) = memory_kib(pid);
    let t = Instant::now();
    s.open(uri, &text)?;
    let (at, first_diags) = s.diagnostics(uri, 1)?;
    let open_time = at.duration_since(t);
    let (rss_open, _) = memory_kib(pid);
    let mut latencies = Vec::new();
    let mut last_diags = first_diags.clone();
    let mut rss_during_edits = Vec::new();
    let warmup = 10;
    for i in 0..warmup + o.edits {
        let version = 2 + i as i64;
        let ch = if i.is_multiple_of(2) { "u" } else { "s" };
        let range = json!({ "start": { "line": site.0, "character": site.1 }, "end": { "line": site.0, "character": site.1 + 1 } });
        let sent = Instant::now();
        s.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": range, "text": ch }] }))?;
        let (at, d) = s.diagnostics(uri, version)?;
        if i >= warmup {
            latencies.push(at.duration_since(sent));
            let done = i + 1 - warmup;
            if done.is_multiple_of((o.edits / 4).max(1)) {
                rss_during_edits.push(format!("{done}: {}", mib(memory_kib(pid).0)));
            }
        }
        last_diags = d;
    }
    let mut rng = Rng(0x5EED_2025);
    let mut hovers = Vec::new();
    let mut hover_names = Vec::new();
    let mut answered = 0;
    for i in 0..o.hovers {
        let on_name = i % 2 == 0;
        let (line, col) = if on_name { names[rng.below(names.len())] } else { instructions[rng.below(instructions.len())] };
        let (res, took) = s.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": col } }))?;
        answered += usize::from(!res.is_null());
        if on_name {
            hover_names.push(took);
        }
        hovers.push(took);
    }
    let (rss_hovers, hwm) = memory_kib(pid);
    // Hovers sent right after a keystroke, before that version's diagnostics: what an
    // editor does when the mouse rests on the code while typing.
    let mut hovers_pending = Vec::new();
    let base_version = 2 + (warmup + o.edits) as i64;
    let pending_rounds = (o.edits / 4).max(1);
    for i in 0..pending_rounds {
        let version = base_version + i as i64;
        let ch = if (warmup + o.edits + i).is_multiple_of(2) { "u" } else { "s" };
        let range = json!({ "start": { "line": site.0, "character": site.1 }, "end": { "line": site.0, "character": site.1 + 1 } });
        s.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "range": range, "text": ch }] }))?;
        let (line, col) = instructions[rng.below(instructions.len())];
        let (_, took) = s.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": col } }))?;
        hovers_pending.push(took);
        s.diagnostics(uri, version)?;
    }
    let exit_time = s.stop()?;

    let key = stats(&latencies);
    let hov = stats(&hovers);
    let hov_names = stats(&hover_names);
    say("| measurement (ms) | n | p50 | p95 | p99 | max | mean |".into());
    say("|---|---:|---:|---:|---:|---:|---:|".into());
    say(row("keystroke → publishDiagnostics (debounce 0)", &key));
    say(row("hover, all targets", &hov));
    say(row("hover, kernel names only", &hov_names));
    say(row("hover right after a keystroke (analysis pending)", &stats(&hovers_pending)));
    say(String::new());
    say(format!(
        "Document: {n_lines} lines, {} KiB, {n_kernels} kernels; {} diagnostics per publish. Open to first diagnostics: {}. \
         {answered}/{} hovers returned content. Server RSS: {} idle, {} with the document, after N edits {}, {} after the hovers (peak {}). Exit after `exit`: {}.",
        text.len() / 1024,
        last_diags.len(),
        ms(open_time),
        o.hovers,
        mib(rss_empty),
        mib(rss_open),
        rss_during_edits.join(", "),
        mib(rss_hovers),
        mib(hwm),
        ms(exit_time)
    ));
    let pending = stats(&hovers_pending);
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    say(format!(
        "Targets (issue 7): keystroke p95 ≤ 30 ms: {}; hover p99 ≤ 5 ms on an analysed document: {}; right after a keystroke: {}.",
        verdict(key.p95 <= 30.0),
        verdict(hov.p99 <= 5.0),
        verdict(pending.p99 <= 5.0)
    ));

    // 2. Memory per open document: the slope of RSS over the number of open copies.
    let mut s = Server::start(&o.server, json!({ "debounceMs": 0 }))?;
    let pid = s.pid();
    let (base, _) = memory_kib(pid);
    let max_copies = o.copies.iter().copied().max().unwrap_or(0);
    let mut points = vec![(0.0, base as f64)];
    let mut rows = vec![format!("0: {}", mib(base))];
    for n in 1..=max_copies {
        let u = format!("file:///bench/copy{n}.ptx");
        s.open(&u, &text)?;
        s.diagnostics(&u, 1)?;
        if o.copies.contains(&n) {
            // Let the allocator settle (freed analysis temporaries).
            std::thread::sleep(Duration::from_millis(200));
            let (rss, _) = memory_kib(pid);
            points.push((n as f64, rss as f64));
            rows.push(format!("{n}: {}", mib(rss)));
        }
    }
    // The slope over the requested counts (N = 0 joins the fit only when fewer than two
    // counts were asked for: the first document also pays one-time costs).
    let per_doc = if points.len() > 2 { slope(&points[1..]) } else { slope(&points) };
    let (_, hwm) = memory_kib(pid);
    s.stop()?;
    say(String::new());
    say(format!(
        "Memory per open document ({n_lines}-line PTX, {} KiB of text): **{:.1} MiB** (least-squares slope of RSS over {} open copies: {}; peak {}).",
        text.len() / 1024,
        per_doc / 1024.0,
        o.copies.iter().map(ToString::to_string).collect::<Vec<_>>().join("/"),
        rows.join(", "),
        mib(hwm)
    ));

    // 3. A 100 MB document: time to diagnostics, hovers on a small document meanwhile,
    // peak memory, and a clean exit.
    if o.big_mb > 0 {
        let big = generate(0, o.big_mb << 20)?;
        let big_kernels = big.matches(".entry ").count();
        let small = std::fs::read_to_string(fixture_dir().join("vadd.ptx"))?;
        let small_uri = "file:///bench/small.ptx";
        let small_pos = {
            let line = small.lines().position(|l| l.contains(".entry ")).context("vadd entry")?;
            json!({ "line": line, "character": 20 })
        };
        let mut s = Server::start(&o.server, json!({ "debounceMs": 0 }))?;
        let pid = s.pid();
        s.open(small_uri, &small)?;
        s.diagnostics(small_uri, 1)?;
        let (rss_before, _) = memory_kib(pid);
        let big_uri = "file:///bench/big.ptx";
        let sent = Instant::now();
        s.open(big_uri, &big)?;
        let written = sent.elapsed();
        let mut during = Vec::new();
        let mut max_rss = 0;
        let big_done = loop {
            let (_, took) = s.request("textDocument/hover", json!({ "textDocument": { "uri": small_uri }, "position": small_pos }))?;
            during.push(took);
            max_rss = max_rss.max(memory_kib(pid).0);
            if let Some(i) = s.backlog.iter().position(|(_, m)| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == big_uri) {
                break s.backlog.remove(i).context("index")?;
            }
            match s.rx.recv_timeout(Duration::from_millis(20)) {
                Ok((at, m)) if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == big_uri => break (at, m),
                Ok(other) => s.backlog.push_back(other),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => bail!("the server died on the {} MB document", o.big_mb),
            }
            if sent.elapsed() > WAIT {
                bail!("no diagnostics for the {} MB document within {WAIT:?}", o.big_mb);
            }
        };
        let big_time = big_done.0.duration_since(sent);
        let big_diags = big_done.1["params"]["diagnostics"].as_array().map_or(0, Vec::len);
        let (rss_big, hwm_big) = memory_kib(pid);
        let last_entry = big.rfind(".visible .entry ").context("entry")? + ".visible .entry ".len();
        let pos = json!({ "line": big[..last_entry].matches('\n').count(), "character": last_entry - big[..last_entry].rfind('\n').map_or(0, |i| i + 1) + 2 });
        let (h, big_hover) = s.request("textDocument/hover", json!({ "textDocument": { "uri": big_uri }, "position": pos }))?;
        s.notify("textDocument/didClose", json!({ "textDocument": { "uri": big_uri } }))?;
        s.request("textDocument/hover", json!({ "textDocument": { "uri": small_uri }, "position": small_pos }))?;
        std::thread::sleep(Duration::from_millis(500));
        let (rss_closed, _) = memory_kib(pid);
        // A second open/close cycle: memory that the first cycle freed but the allocator
        // kept must be reused, not added to (bounded, not leaking).
        let mut cycles = vec![format!("1: {} open, {} closed, peak {}", mib(rss_big), mib(rss_closed), mib(hwm_big))];
        for cycle in 2..=o.big_cycles {
            let again_uri = format!("file:///bench/big-{cycle}.ptx");
            s.open(&again_uri, &big)?;
            s.diagnostics(&again_uri, 1)?;
            let (rss_again, _) = memory_kib(pid);
            s.notify("textDocument/didClose", json!({ "textDocument": { "uri": again_uri } }))?;
            s.request("textDocument/hover", json!({ "textDocument": { "uri": small_uri }, "position": small_pos }))?;
            std::thread::sleep(Duration::from_millis(500));
            let (rss_again_closed, hwm_again) = memory_kib(pid);
            cycles.push(format!("{cycle}: {} open, {} closed, peak {}", mib(rss_again), mib(rss_again_closed), mib(hwm_again)));
        }
        let exit_time = s.stop()?;
        // What blocks the server's message loop on a document this size, timed here on
        // the same text (single-threaded steps the server runs outside the analysis).
        let open_msg = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": big_uri, "languageId": "ptx", "version": 1, "text": big } } });
        let t = Instant::now();
        let bytes = serde_json::to_vec(&open_msg)?;
        let t_ser = t.elapsed();
        let t = Instant::now();
        let parsed: Value = serde_json::from_slice(&bytes)?;
        let t_de = t.elapsed();
        drop((parsed, bytes, open_msg));
        let t = Instant::now();
        let doc = lsp::Document::new(&big, 1, "ptx".into());
        let t_rope = t.elapsed();
        let t = Instant::now();
        let snapshot = doc.text.to_string();
        let t_snapshot = t.elapsed();
        drop((snapshot, doc));
        let d = stats(&during);
        say(String::new());
        say(format!(
            "{} MB document ({} MiB, {} lines, {big_kernels} kernels): written to the pipe in {}, diagnostics ({big_diags}) after {}. \
             {} hovers on a small document meanwhile: p50 {:.1} ms, max {:.1} ms. Hover on the last kernel afterwards: {} ({}). \
             RSS {} before, {} sampled max during, {} after, peak (VmHWM) {} = {:.1}x the text; {} after didClose. Exit after `exit`: {}.",
            o.big_mb,
            big.len() >> 20,
            big.lines().count(),
            ms(written),
            ms(big_time),
            d.n,
            d.p50,
            d.max,
            ms(big_hover),
            if h.is_null() { "empty" } else { "answered" },
            mib(rss_before),
            mib(max_rss),
            mib(rss_big),
            mib(hwm_big),
            hwm_big as f64 * 1024.0 / big.len() as f64,
            mib(rss_closed),
            ms(exit_time)
        ));
        say(format!(
            "RSS over open/close cycles of the same text (cycle: open, after didClose, peak): {}. \
             Single-threaded steps on this text, timed in process: JSON decode of the didOpen {} (encode {}), rope from text {}, rope to `String` snapshot {}.",
            cycles.join("; "),
            ms(t_de),
            ms(t_ser),
            ms(t_rope),
            ms(t_snapshot)
        ));
    }

    // 4. Where the time goes, in process.
    say(String::new());
    say("Where one keystroke's time goes (in-process, same document, median of 31; release):".into());
    say(String::new());
    say("| stage | time |".into());
    say("|---|---:|".into());
    for (name, d) in breakdown(&text, site, &last_diags) {
        say(format!("| {name} | {:.2} ms |", d.as_secs_f64() * 1e3));
    }
    say(String::new());
    say(format!("Machine: {}, {} cores available; load average {} before, {} after. Date: {}.", cpu_model(), std::thread::available_parallelism().map_or(0, |n| n.get()), load_before, load_average(), today()));
    Ok(out.join("\n"))
}

const BEGIN: &str = "<!-- lsp-bench:begin (generated by scripts/bench-lsp.sh) -->";
const END: &str = "<!-- lsp-bench:end -->";

/// Replaces the generated block of the "Language server latency" section of `doc` (or
/// appends the section when there is none), leaving every other section untouched.
fn write_doc(doc: &Path, table: &str) -> Result<()> {
    let cur = std::fs::read_to_string(doc).unwrap_or_default();
    let block = format!("{BEGIN}\n{table}\n{END}");
    let new = match (cur.find(BEGIN), cur.find(END)) {
        (Some(b), Some(e)) if b < e => format!("{}{block}{}", &cur[..b], &cur[e + END.len()..]),
        _ => {
            let sep = if cur.is_empty() || cur.ends_with("\n\n") { "" } else if cur.ends_with('\n') { "\n" } else { "\n\n" };
            format!("{cur}{sep}## Language server latency\n\n{block}\n")
        }
    };
    std::fs::write(doc, new)?;
    Ok(())
}

fn main() -> Result<()> {
    let o = options()?;
    let table = run(&o)?;
    println!("{table}");
    if let Some(doc) = &o.doc {
        write_doc(doc, &table)?;
        eprintln!("wrote {}", doc.display());
    }
    Ok(())
}
