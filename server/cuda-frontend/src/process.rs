//! Running compiler processes with a timeout, cancellation and bounded output.
//!
//! An editor recompiles on every edit, so a compile in flight must stop as soon as a newer
//! edit arrives, and a hung compiler must not hold the server forever. Commands are always
//! built as an argument vector ([`std::process::Command`]), never through a shell, so file
//! names with spaces or quotes are safe. On Unix the child gets its own process group and
//! the whole group is killed: `nvcc` runs `cicc`, `ptxas` and the host compiler as
//! grandchildren, and killing only `nvcc` would leave them running (and holding the output
//! pipes open, which would block the readers).
//!
//! What a process writes is read to the end but only the last [`MAX_CAPTURE_BYTES`] of each
//! stream are kept (a compiler that floods its output cannot grow our memory; the tail is
//! where the fatal message is), and control characters are stripped from what is kept
//! ([`crate::safety::strip_controls`]): it may be shown on a terminal.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A shared flag that asks a compile to stop. Cloning shares the flag.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// How much of each output stream is kept: the last 1 MiB.
pub const MAX_CAPTURE_BYTES: usize = 1 << 20;

/// The captured result of a finished process.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// The last [`MAX_CAPTURE_BYTES`] of stdout (from a line start), control characters
    /// stripped.
    pub stdout: String,
    /// The same for stderr.
    pub stderr: String,
    /// Bytes of stdout read and discarded before what `stdout` holds.
    pub stdout_dropped: u64,
    /// Bytes of stderr read and discarded before what `stderr` holds.
    pub stderr_dropped: u64,
    pub elapsed: Duration,
}

impl RunOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
    /// A sentence on discarded output, when some was.
    pub fn truncation_note(&self, program: &str) -> Option<String> {
        let part = |what: &str, n: u64| (n > 0).then(|| format!("the first {} of its {what}", human_bytes(n)));
        let parts: Vec<String> = [part("stdout", self.stdout_dropped), part("stderr", self.stderr_dropped)].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| {
            format!(
                "{program} wrote more than {} per stream: its output was truncated ({} discarded; the last {} kept)",
                human_bytes(MAX_CAPTURE_BYTES as u64),
                parts.join(" and "),
                human_bytes(MAX_CAPTURE_BYTES as u64)
            )
        })
    }
}

fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20))
    } else if n >= 1 << 10 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

/// One time budget shared by every step of a compile (the toolchain probes, the compiler,
/// ptxas): each step gets what is left.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    start: Instant,
    budget: Duration,
}

impl Deadline {
    /// A budget starting now.
    pub fn after(budget: Duration) -> Deadline {
        Deadline { start: Instant::now(), budget }
    }
    /// The whole budget (for messages).
    pub fn budget(&self) -> Duration {
        self.budget
    }
    /// What is left (zero once spent).
    pub fn remaining(&self) -> Duration {
        self.budget.saturating_sub(self.start.elapsed())
    }
}

/// Why a process gave no result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("`{program}` did not finish within {} s and was stopped", timeout.as_secs_f64())]
    Timeout { program: String, timeout: Duration },
    #[error("cancelled by a newer edit")]
    Cancelled,
}

/// Runs `cmd` to completion, or until `timeout` passes or `cancel` is set (then the process
/// group is killed). A zero `timeout` (a spent budget) starts nothing.
pub fn run(
    mut cmd: Command,
    timeout: Duration,
    cancel: &CancelToken,
) -> Result<RunOutput, RunError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    if cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    if timeout.is_zero() {
        return Err(RunError::Timeout { program, timeout });
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    // Read both pipes on threads so a chatty compiler never blocks on a full pipe.
    let out_reader = child.stdout.take().map(spawn_reader);
    let err_reader = child.stderr.take().map(spawn_reader);
    let mut poll = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        let stop = if cancel.is_cancelled() {
            Some(RunError::Cancelled)
        } else if start.elapsed() >= timeout {
            Some(RunError::Timeout {
                program: program.clone(),
                timeout,
            })
        } else {
            None
        };
        if let Some(err) = stop {
            kill_group(&mut child);
            // The reader threads end when the last process holding the pipes is gone;
            // they are detached so a stray grandchild can never block us.
            drop(out_reader);
            drop(err_reader);
            return Err(err);
        }
        std::thread::sleep(poll);
        poll = (poll * 2).min(Duration::from_millis(20));
    };
    let (stdout, stdout_dropped) = out_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    let (stderr, stderr_dropped) = err_reader.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(RunOutput {
        code: status.and_then(|s| s.code()),
        stdout,
        stderr,
        stdout_dropped,
        stderr_dropped,
        elapsed: start.elapsed(),
    })
}

fn spawn_reader<R: Read + Send + 'static>(r: R) -> std::thread::JoinHandle<(String, u64)> {
    std::thread::spawn(move || read_tail(r, MAX_CAPTURE_BYTES))
}

/// Reads `r` to the end, keeping only the last `cap` bytes (from the first line start
/// inside them when earlier bytes were dropped), control characters stripped; also
/// returns how many bytes were discarded. Memory stays under about `2 * cap`.
fn read_tail<R: Read>(mut r: R, cap: usize) -> (String, u64) {
    let mut buf: Vec<u8> = Vec::new();
    let mut dropped: u64 = 0;
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > 2 * cap {
                    let cut = buf.len() - cap;
                    buf.drain(..cut);
                    dropped += cut as u64;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if buf.len() > cap {
        let cut = buf.len() - cap;
        buf.drain(..cut);
        dropped += cut as u64;
    }
    if dropped > 0 {
        // Start at a line: the partial first line is part of what was dropped.
        let start = buf.iter().position(|b| *b == b'\n').map_or(buf.len(), |i| i + 1);
        buf.drain(..start);
        dropped += start as u64;
    }
    let text = String::from_utf8_lossy(&buf);
    (crate::safety::strip_controls(&text).into_owned(), dropped)
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: `kill` has no memory-safety preconditions; a negative pid addresses
            // the process group created with `process_group(0)` above, which holds only
            // this child and its descendants.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_output_and_exit_code() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let out = run(cmd, Duration::from_secs(10), &CancelToken::new()).map_err(|e| e.to_string());
        let out = out
            .as_ref()
            .map(|o| (o.code, o.stdout.as_str(), o.stderr.as_str()));
        assert_eq!(out, Ok((Some(3), "out\n", "err\n")));
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        // `sh` starts `sleep` as a child that inherits the pipes: only a group kill lets
        // this return promptly.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30; echo never"]);
        let t = Instant::now();
        let res = run(cmd, Duration::from_millis(300), &CancelToken::new());
        assert!(matches!(res, Err(RunError::Timeout { .. })), "{res:?}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "took {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn cancellation_stops_the_process() {
        let cancel = CancelToken::new();
        let c2 = cancel.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            c2.cancel();
        });
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30"]);
        let t = Instant::now();
        let res = run(cmd, Duration::from_secs(60), &cancel);
        let _ = stopper.join();
        assert!(matches!(res, Err(RunError::Cancelled)), "{res:?}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_flood_is_read_to_the_end_but_only_its_tail_kept() {
        // 24 MiB of numbered lines on stdout, a little on stderr, then success.
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "seq 1 3000000 | sed 's/^/line /'; echo done >&2"]);
        let out = run(cmd, Duration::from_secs(60), &CancelToken::new());
        let out = out.unwrap_or_else(|e| panic!("{e}"));
        assert!(out.success());
        assert!(out.stdout.len() <= MAX_CAPTURE_BYTES, "{} bytes kept", out.stdout.len());
        assert!(out.stdout.starts_with("line ") && out.stdout.ends_with("line 3000000\n"), "{:?}", &out.stdout[..40]);
        let total = out.stdout_dropped + out.stdout.len() as u64;
        let expected: u64 = (1..=3_000_000u64).map(|n| 6 + n.to_string().len() as u64).sum();
        assert_eq!(total, expected, "every byte is read: kept + discarded = written");
        assert_eq!((out.stderr.as_str(), out.stderr_dropped), ("done\n", 0));
        let note = out.truncation_note("nvcc").unwrap_or_default();
        assert!(note.contains("truncated") && note.contains("stdout") && !note.contains("stderr"), "{note}");
    }

    #[test]
    fn kept_output_has_no_control_characters() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "printf 'a\\033[31mb\\007\\r\\n\\tc\\n'"]);
        let out = run(cmd, Duration::from_secs(10), &CancelToken::new()).map(|o| o.stdout);
        assert_eq!(out.ok().as_deref(), Some("a[31mb\n\tc\n"));
    }

    #[test]
    fn a_spent_budget_starts_nothing() {
        let t = Instant::now();
        let mut cmd = Command::new("sleep");
        cmd.arg("5");
        let res = run(cmd, Duration::ZERO, &CancelToken::new());
        assert!(matches!(res, Err(RunError::Timeout { .. })), "{res:?}");
        assert!(t.elapsed() < Duration::from_secs(1));
        let d = Deadline::after(Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(d.remaining(), Duration::ZERO);
        assert_eq!(d.budget(), Duration::from_millis(50));
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let res = run(
            Command::new("/nonexistent/warpsight-nvcc"),
            Duration::from_secs(1),
            &CancelToken::new(),
        );
        assert!(matches!(res, Err(RunError::Spawn { .. })));
    }
}
